// Package store keeps locrisk's state in one SQLite file: accounts, API keys,
// report jobs and their reports, idempotency keys, quota counters, batches,
// request statistics, the webhook endpoints and outbox, and the risk
// engine's reference cache.
//
// The store owns the schema. It is the numbered SQL files in migrations/
// (001_initial.sql, 002_quota_usage.sql, ...), embedded in the binary; the
// file's PRAGMA user_version is the number of the last one applied. Open
// applies the missing ones in order, each in its own immediate transaction
// that also sets user_version, so two processes starting together never
// both apply one, and refuses a file whose version is above SchemaVersion
// (written by a newer binary). To change the schema, add the next numbered
// file and raise SchemaVersion; never edit a migration that has shipped,
// because databases in the field have already run it. Migrations run inside
// a transaction with foreign keys enforced (PRAGMA foreign_keys cannot be
// changed there), which matters for a table rebuild, the SQLite way to make
// the changes ALTER TABLE cannot. schema.sql beside this package is
// generated from a freshly migrated database, for reading with sqlite3;
// after adding a migration, regenerate it with
//
//	go test ./internal/store -run TestSchemaFile -update
//
// (TestSchemaFile fails while it is out of date).
//
// The file is opened in WAL mode, so any number of readers run beside one
// writer, and every write transaction starts with BEGIN IMMEDIATE (the DSN's
// _txlock=immediate), so a transaction that reads before it writes (the
// idempotency and quota checks of CreateJob) holds the write lock from its
// first statement and concurrent requests are serialised rather than failing
// with SQLITE_BUSY half way. Other processes (the command line while the
// server runs) share the file through SQLite's locking and busy timeout.
//
// Inside one process, writers also queue on a channel semaphore before they
// ask SQLite for the lock: SQLite's busy handler polls with sleeps of up to
// 100 ms, which would add tens of milliseconds to a write that merely waited
// for another goroutine, whereas the semaphore hands over in microseconds.
// A write that waits for the semaphore waits for one of two things, which
// the request paths answer differently (WithBusyWait, writeSlot): this
// process's own writers (load: wait longer, ErrWriteQueue at last) or a
// writer ahead stuck on another process's lock (ErrBusy after the busy
// wait).
//
// Write transactions commit in groups (group.go): those that arrive while
// one commits wait and then share the next transaction and its fsync, each
// in a savepoint of its own, so the durable commit (SQLite's default
// synchronous=FULL) is paid once for many requests.
//
// Times are stored as fixed-width UTC text (TimeLayout), which sorts
// correctly as text, and are parsed back into time.Time on the way out.
//
// Limits: one database file, one writer at a time; that is the design, and
// is ample for the job rates a single instance serves.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite" // also the "sqlite" database/sql driver, pure Go

	"github.com/locrisk/locrisk/internal/secretbox"
	"github.com/locrisk/locrisk/internal/stmtcache"
)

// TimeLayout is the database's time format: UTC, millisecond precision,
// fixed width so text order is time order.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// DefaultBusyWait is how long a write waits for another process's write
// lock (SQLite's busy timeout) before it fails with ErrBusy, unless the
// store was derived with WithBusyWait.
const DefaultBusyWait = 5 * time.Second

// DefaultQueueWait bounds how long a write of a view with a busy wait
// (WithBusyWait) queues behind this process's own writers before it fails
// with ErrWriteQueue. Each writer ahead holds the slot for milliseconds, so
// this is reached only under a flood of writes far beyond the load check
// of docs/operations.md (Limits and defaults), whose slowest job creation waits
// about a second. A writer held up by another process's lock is told
// apart and answered after the busy wait instead (see writeSlot).
const DefaultQueueWait = 15 * time.Second

// foreignAfter is how long the slot's holder must have waited for SQLite's
// write lock before the writers queued behind it take it to be held up by
// another process. Inside the process the slot already serialises
// writers, so SQLite makes the holder wait only for another process's
// lock; the margin covers a holder that is merely slow (a single-statement
// write counts whole, see withWriteLock, and a loaded machine stretches
// everything).
const foreignAfter = 250 * time.Millisecond

// queuePoll is how often a writer that has waited its busy wait checks
// whether the holder of the slot is held up by another process.
const queuePoll = 20 * time.Millisecond

// Options tune Open. The zero value is the production default.
type Options struct {
	// Now is the clock for operations whose API takes no explicit time
	// (creating accounts and keys, revoking). Default time.Now.
	Now func() time.Time
	// MaxOpenConns bounds the connection pool. Default 8: WAL readers run in
	// parallel, writers queue on the write semaphore, so a few connections
	// beyond the number of cores only cost memory.
	MaxOpenConns int
	// OnJobFinal hooks run, in order, inside the final transition of every
	// job (CompleteJob, FailJob). Register them here, before the store is
	// shared; the slice is copied and not changed afterwards.
	OnJobFinal []JobFinalHook
	// IntegrityCheck runs SQLite's PRAGMA quick_check before anything
	// else and refuses a damaged file with ErrCorrupt. It reads the whole
	// file (0.4 s for 225 MB from the page cache; docs/operations.md, Limits and
	// defaults), so serve asks for it at
	// start-up and the short commands do not.
	IntegrityCheck bool
	// Secrets seals the webhook signing secrets at rest (webhooks.go).
	// With it, Open seals the rows still in clear and refuses a database
	// whose sealed secrets it cannot open (ErrSecretKey). Without it the
	// store cannot create webhook endpoints (ErrNoSecretKey) nor hand out
	// deliveries of sealed endpoints; the commands, which do neither, open
	// the store without it.
	Secrets *secretbox.Box
	// Observer, if set, is told how long writers waited for the
	// in-process write slot and which writes failed with ErrBusy (serve's
	// metrics listener, docs/operations.md, Metrics). Nil costs nothing.
	Observer Observer
	// ReportScores reads the scores a batch item shows out of a stored
	// report body (BatchItems). The body is the risk engine's JSON, whose
	// shape is the engine's, so the store is handed the engine's reader
	// (risk.ReadScores, set where the service is assembled,
	// cmd/locrisk/db.go) rather than importing the engine and its hazard
	// packages. Without it BatchItems fails with ErrNoReportScores, before
	// it calls its function, rather than show completed items without
	// their scores; nothing else needs it.
	ReportScores ScoreReader
}

// ScoreReader reads a stored report body's overall score, risk level and
// module scores by module key, a nil score where no data covers the
// module (Options.ReportScores).
type ScoreReader func(body []byte) (overall int, level string, modules map[string]*int, err error)

// Observer watches the store's writers; see Options.Observer. Its methods
// are called on the write path, so they must be quick and safe for
// concurrent use.
type Observer interface {
	// WriteWait is the time a write waited for the in-process write slot,
	// whether it got the slot or gave up.
	WriteWait(d time.Duration)
	// WriteBusy is called once for each write that failed with ErrBusy.
	WriteBusy()
	// GroupCommit is called once per group (group.go) whose commit
	// succeeded, with the number of write transactions that shared it.
	GroupCommit(size int)
}

// Store is the database handle. It is safe for concurrent use.
type Store struct {
	db      *sqlx.DB
	now     func() time.Time
	slot    *writeSlot // one in-process writer at a time; see the package comment
	group   *committer // write transactions waiting to commit together (group.go)
	onFinal []JobFinalHook
	secrets *secretbox.Box
	obs     Observer    // nil: nothing is measured
	scores  ScoreReader // Options.ReportScores; nil: BatchItems fails
	// busyWait bounds how long a write waits for another process's
	// write lock, both in SQLite and queued behind a writer held up by
	// it; 0 means DefaultBusyWait, which every connection has as its busy
	// timeout, and no bound on the queue (see WithBusyWait).
	busyWait time.Duration
	// queueWait bounds the wait for the write slot behind this process's
	// own writers when busyWait is set; 0 means DefaultQueueWait.
	queueWait time.Duration
}

// writeSlot is the in-process write slot, shared by a store and its views.
// Waiting for it has two causes that callers must tell apart: this
// process's own writers, each holding it for milliseconds (server load),
// and a holder stuck waiting for another process's lock (the database is
// busy). The holder records when it started waiting for SQLite's lock, so
// that the writers queued behind it can tell which it is.
type writeSlot struct {
	ch chan struct{}
	// lockWaitSince is the time (UnixNano) at which the holder asked
	// SQLite for the write lock and has not had its answer yet; 0 when
	// it is not asking.
	lockWaitSince atomic.Int64
}

// heldUp reports whether the slot's holder has been waiting for SQLite's
// write lock for at least after, at now.
func (w *writeSlot) heldUp(now time.Time, after time.Duration) bool {
	since := w.lockWaitSince.Load()
	return since != 0 && now.Sub(time.Unix(0, since)) >= after
}

// askLock brackets the holder's request for SQLite's write lock: call it
// before, and the function it returns after.
func (w *writeSlot) askLock() (done func()) {
	w.lockWaitSince.Store(time.Now().UnixNano())
	return func() { w.lockWaitSince.Store(0) }
}

// stmtCacheSize bounds the prepared statements each connection keeps.
// The store runs about a hundred distinct texts (some, such as the purge's
// IN lists, vary in length); a statement costs a few kilobytes.
const stmtCacheSize = 256

// Open opens (creating if needed) the SQLite file at path and migrates it to
// SchemaVersion by applying the embedded migrations it has not had yet. A
// file from a newer binary (a higher version) is refused with an error.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, opt Options) (*Store, error) {
	ms, err := embeddedMigrations()
	if err != nil {
		return nil, fmt.Errorf("store: embedded migrations: %w", err)
	}
	return openMigrated(ctx, path, opt, ms)
}

// openMigrated is OpenWith with the migrations given (tests pass their own).
func openMigrated(ctx context.Context, path string, opt Options, ms []migration) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("store: empty database path")
	}
	if err := createPrivate(path); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := initFile(ctx, path); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	base, err := sqlite.NewConnector(dsn(path))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// Each connection keeps the statements it has run prepared (package
	// stmtcache): the store's statements are a fixed set, run over and
	// over, and parsing them cost more than running them.
	db := sqlx.NewDb(sql.OpenDB(stmtcache.New(base, stmtCacheSize)), "sqlite")
	n := opt.MaxOpenConns
	if n <= 0 {
		n = 8
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	// Connections live as long as the process: each one carries its pragmas
	// and prepared statement cache, and reopening costs more than keeping.
	db.SetConnMaxLifetime(0)

	s := &Store{
		db:      db,
		now:     opt.Now,
		slot:    &writeSlot{ch: make(chan struct{}, 1)},
		group:   &committer{keepConn: n > 1},
		onFinal: append([]JobFinalHook(nil), opt.OnJobFinal...),
		secrets: opt.Secrets,
		obs:     opt.Observer,
		scores:  opt.ReportScores,
	}
	if s.now == nil {
		s.now = time.Now
	}
	if opt.IntegrityCheck {
		if err := s.quickCheck(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("store: %s: %w", path, err)
		}
	}
	if err := s.migrate(ctx, ms); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %s: %w", path, corrupt(err))
	}
	if s.secrets != nil {
		if err := s.sealSecrets(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("store: %s: %w", path, err)
		}
	}
	return s, nil
}

// createPrivate creates the database file, empty, with mode 0600 if it
// does not exist yet, so that SQLite (which would create it 0644) opens
// it as it is; SQLite gives the -wal and -shm files it makes beside it the
// same mode. The file holds API key hashes, webhook URLs and reports, for
// this user only. An existing file keeps its mode.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return f.Close()
}

// quickCheck runs PRAGMA quick_check (SQLite's integrity check without
// the index contents), which answers one row "ok" or up to maxProblems
// rows naming what is wrong.
func (s *Store) quickCheck(ctx context.Context) error {
	const maxProblems = 5
	var rows []string
	if err := s.db.SelectContext(ctx, &rows, fmt.Sprintf("PRAGMA quick_check(%d)", maxProblems)); err != nil {
		return fmt.Errorf("integrity check: %w", corrupt(err))
	}
	if len(rows) == 1 && rows[0] == "ok" {
		return nil
	}
	return fmt.Errorf("%w: integrity check found: %s", ErrCorrupt, strings.Join(rows, "; "))
}

// corrupt marks SQLite's "not a database" (SQLITE_NOTADB) and "malformed"
// (SQLITE_CORRUPT) results with ErrCorrupt.
func corrupt(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && !errors.Is(err, ErrCorrupt) {
		switch se.Code() & 0xff {
		case sqliteCorrupt, sqliteNotADB:
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
	}
	return err
}

// SQLite primary result codes (sqlite3.h) the store gives a meaning to.
const (
	sqliteBusy    = 5
	sqliteLocked  = 6
	sqliteCorrupt = 11
	sqliteNotADB  = 26
)

// busy marks SQLite's SQLITE_BUSY and SQLITE_LOCKED results with ErrBusy.
func busy(err error) error {
	if isBusy(err) && !errors.Is(err, ErrBusy) {
		return fmt.Errorf("%w: %w", ErrBusy, err)
	}
	return err
}

// WithBusyWait returns a view of the store whose transactions (WithTx)
// wait at most d for another process's lock before failing with ErrBusy;
// single-statement writes keep DefaultBusyWait for the lock. The wait
// counts in SQLite and, for a write queued for the in-process write slot,
// behind a holder that is itself held up by another process's lock. Behind
// this process's own writers the view waits longer, up to its queue wait
// (DefaultQueueWait, or WithQueueWait), then fails with ErrWriteQueue. The
// server's request handlers use one so that a client hears 503 promptly
// rather than after DefaultBusyWait (docs/api.md, database_busy and
// server_busy). The view shares the database, the write slot and the
// hooks with s; closing either closes both.
func (s *Store) WithBusyWait(d time.Duration) *Store {
	v := *s
	v.busyWait = d
	return &v
}

// WithQueueWait returns a view of the store whose writes, when it has a
// busy wait (WithBusyWait), queue at most d behind this process's own
// writers; see WithBusyWait. A d below the busy wait counts as the busy
// wait.
func (s *Store) WithQueueWait(d time.Duration) *Store {
	v := *s
	v.queueWait = d
	return &v
}

// dsn builds the driver's data source name. The file name is a SQLite URI,
// so the characters that would end or escape it are percent-encoded.
//
// Every connection the pool opens runs these pragmas, so none of them may
// need the write lock: a connection opened while another holds it (any
// writer, in this process or another) would fail at once with SQLITE_BUSY,
// before its busy timeout is set. PRAGMA auto_vacuum does need it, even
// when it changes nothing, so it is not here but in initFile.
func dsn(path string) string {
	return initDSN(path) + "&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=temp_store(MEMORY)&_txlock=immediate"
}

// initDSN is the data source name of initFile's connection: the busy
// timeout only, so that nothing is written before auto_vacuum is set.
func initDSN(path string) string {
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + p + fmt.Sprintf("?_pragma=busy_timeout(%d)", DefaultBusyWait.Milliseconds())
}

// initFile gives a new, empty database file its lasting setting before
// anything is written to it: auto_vacuum INCREMENTAL, which takes effect
// only on a file that has no table yet (the purge can then give freed
// pages back, IncrementalVacuum; an older file changes nothing until a
// VACUUM, Vacuum). It runs on a connection of its own, outside the pool
// (see dsn). A file that is not empty is left alone, and so is one that
// another opener initialised meanwhile (two processes starting together).
func initFile(ctx context.Context, path string) error {
	empty := func() (bool, error) {
		fi, err := os.Stat(path)
		if err != nil {
			return false, fmt.Errorf("stat %s: %w", path, err)
		}
		return fi.Size() == 0, nil
	}
	if ok, err := empty(); !ok || err != nil {
		return err
	}
	db, err := sqlx.Open("sqlite", initDSN(path))
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, fmt.Sprintf("PRAGMA auto_vacuum = %d", autoVacuumIncremental))
	if err != nil {
		if ok, serr := empty(); serr == nil && !ok {
			return nil // initialised by another opener, with the same setting
		}
		return fmt.Errorf("set auto_vacuum: %w", busy(err))
	}
	return nil
}

// Close closes the database once the writes already begun have their
// outcome: those queued for a group commit (group.go) and a
// single-statement write holding the write slot (withWriteLock). A write
// begun after fails with ErrClosed, so none commits after Close returns.
func (s *Store) Close() error {
	s.group.close()
	// The group writer is done; wait for a single-statement write still
	// in the slot. Those that take it after see the store closed.
	s.slot.ch <- struct{}{}
	defer s.unlockWrite()
	return s.db.Close()
}

// lockWrite waits for the in-process write slot, or for ctx. On a view
// with a busy wait it gives up, once it has waited that long, as soon as
// the holder of the slot is held up by another process's lock (ErrBusy:
// the holder, and everyone behind it, would wait the lock out), and
// otherwise after the queue wait (ErrWriteQueue: this process's own
// writers are too many).
func (s *Store) lockWrite(ctx context.Context) error {
	start := time.Now()
	if s.obs != nil {
		defer func() { s.obs.WriteWait(time.Since(start)) }()
	}
	return s.lockWriteSince(ctx, start)
}

// lockWriteSince is lockWrite for a write that began waiting at start
// (queued for a group commit), which counts towards its waits.
func (s *Store) lockWriteSince(ctx context.Context, start time.Time) error {
	if s.busyWait <= 0 {
		select {
		case s.slot.ch <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	t := time.NewTimer(s.firstWaitCheck(start))
	defer t.Stop()
	for {
		select {
		case s.slot.ch <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case now := <-t.C:
			next, err := s.waitedTooLong(now, start)
			if err != nil {
				return err
			}
			t.Reset(next)
		}
	}
}

// firstWaitCheck is how long after start a write on a view with a busy
// wait first checks whether to give up waiting (waitedTooLong): not before
// the busy wait is over, since a writer held up by another process may
// get the lock within it, as a write outside the queue would.
func (s *Store) firstWaitCheck(start time.Time) time.Duration {
	return max(s.busyWait-time.Since(start), 0)
}

// waitedTooLong decides, at now, for a write on a view with a busy wait
// that began waiting at start and has waited its busy wait: ErrBusy when
// the slot's holder has been held up by another process's lock, which
// everyone behind it would wait out too; ErrWriteQueue past the queue
// wait (this process's own writers are too many); otherwise nil and when
// to check again.
func (s *Store) waitedTooLong(now, start time.Time) (next time.Duration, err error) {
	queueWait := s.queueWait
	if queueWait <= 0 {
		queueWait = DefaultQueueWait
	}
	queueWait = max(queueWait, s.busyWait)
	// A holder that is a view like this one gives up on the lock after
	// its busy wait, so with a busy wait shorter than foreignAfter (tests)
	// it must still be seen held up.
	heldUpAfter := min(foreignAfter, s.busyWait/2)
	if s.slot.heldUp(now, heldUpAfter) {
		return 0, fmt.Errorf("%w: the writer ahead has waited for another process's lock for %s or more, and this write waited %s",
			ErrBusy, heldUpAfter, now.Sub(start).Round(time.Millisecond))
	}
	if now.Sub(start) >= queueWait {
		return 0, fmt.Errorf("%w: no write slot within %s", ErrWriteQueue, queueWait)
	}
	return min(queuePoll, queueWait-now.Sub(start)), nil
}

func (s *Store) unlockWrite() { <-s.slot.ch }

// tryLockWrite takes the write slot if it is free, without waiting.
func (s *Store) tryLockWrite() bool {
	select {
	case s.slot.ch <- struct{}{}:
		return true
	default:
		return false
	}
}

// withWriteLock runs a single-statement write (an autocommit UPDATE or
// INSERT) in the write slot. The whole statement counts as asking SQLite
// for the lock (writeSlot), since it waits for the lock inside; such
// writes are short, and foreignAfter leaves them room.
func (s *Store) withWriteLock(ctx context.Context, fn func() error) (err error) {
	defer s.observeBusy(&err)
	if err := s.lockWrite(ctx); err != nil {
		return err
	}
	defer s.unlockWrite()
	if s.group.isClosed() {
		return ErrClosed
	}
	done := s.slot.askLock()
	defer done()
	return busy(fn())
}

// observeWait tells the observer how long w waited in the group queue,
// when it was taken into a group or gave up.
func (s *Store) observeWait(w *groupWrite) {
	if s.obs != nil {
		s.obs.WriteWait(time.Since(w.queued))
	}
}

// observeBusy tells the observer of a write that ended with *err marked
// ErrBusy; deferred by the writers.
func (s *Store) observeBusy(err *error) {
	if s.obs != nil && *err != nil && errors.Is(*err, ErrBusy) {
		s.obs.WriteBusy()
	}
}

// WithTx runs fn in one write transaction (BEGIN IMMEDIATE) and returns
// fn's error unchanged (so sentinel errors survive) once that transaction
// has committed, or rolled back fn's writes if it failed. The transaction
// is shared with the functions of concurrent callers, which commit
// together (group.go); fn's writes are its own all the same: they commit
// only if fn returns nil, and another function's failure does not undo
// them.
//
// fn runs on the group's writer goroutine (group.go), after the functions
// queued before it. Its ctx is the caller's context without the cancellation: use
// it, not the caller's, for the statements, because SQLite answers a write
// statement interrupted inside a transaction by rolling back the whole
// transaction, the other callers' writes with it. A caller that gives up
// before its turn is not run at all. fn must do nothing but database work
// on tx, and leave anything that must follow the commit (notifying
// workers, answering) to after WithTx returns.
func (s *Store) WithTx(ctx context.Context, fn func(ctx context.Context, tx *sqlx.Tx) error) error {
	return s.withTx(ctx, nil, fn)
}

// withTx is WithTx for a function that creates job (nil: any other
// write), which the group may make together with the jobs created beside
// it instead of calling fn (group.go, runJobsTogether).
func (s *Store) withTx(ctx context.Context, job *jobCreation, fn func(ctx context.Context, tx *sqlx.Tx) error) (err error) {
	defer s.observeBusy(&err)
	return s.groupTx(ctx, job, fn)
}

// writeConn is the connection the writer goroutine runs its groups on
// (group.go), kept from one group to the next while the writer runs, with
// the busy timeout it has now. SQLite's busy timeout belongs to the
// connection and a group waits for the lock by its first caller's view, so
// the timeout is set only when that view's wait differs from the last
// group's: under a steady load of requests, whose views share one wait,
// hardly ever. The connection is not kept when the pool has only one
// (keep false): readers need it between groups.
type writeConn struct {
	keep bool
	conn *sqlx.Conn
	busy time.Duration // the busy timeout conn has
}

// runTx runs fn in one transaction on the write connection, while the
// caller holds the write slot, with s's busy wait as its busy timeout.
// When the transaction itself fails (its BEGIN or COMMIT, not fn), the
// connection goes back to the pool (release), so that one in a bad state
// is not kept.
func (wc *writeConn) runTx(ctx context.Context, s *Store, fn func(tx *sqlx.Tx) error) error {
	if wc.conn == nil {
		conn, err := s.db.Connx(ctx)
		if err != nil {
			return fmt.Errorf("begin transaction: %w", err)
		}
		wc.conn, wc.busy = conn, DefaultBusyWait
	}
	want := DefaultBusyWait
	if s.busyWait > 0 {
		want = s.busyWait
	}
	if want != wc.busy {
		if err := setBusyTimeout(ctx, wc.conn, want); err != nil {
			wc.release()
			return err
		}
		wc.busy = want
	}
	fnFailed := false
	err := inTx(ctx, s.slot, wc.conn, func(tx *sqlx.Tx) error {
		err := fn(tx)
		fnFailed = err != nil
		return err
	})
	if err != nil && !fnFailed {
		wc.release()
	}
	return err
}

// release puts the default busy timeout back and returns the connection
// to the pool, for anyone else to use.
func (wc *writeConn) release() {
	if wc.conn == nil {
		return
	}
	if wc.busy != DefaultBusyWait {
		_ = setBusyTimeout(context.Background(), wc.conn, DefaultBusyWait)
	}
	_ = wc.conn.Close()
	wc.conn = nil
}

// setBusyTimeout sets SQLite's busy timeout of one connection.
func setBusyTimeout(ctx context.Context, conn *sqlx.Conn, d time.Duration) error {
	// PRAGMA takes no bind parameters; the value is a number.
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", d.Milliseconds())); err != nil {
		return fmt.Errorf("set busy timeout: %w", err)
	}
	return nil
}

// inTx is WithTx after the write slot: begin on db (the pool or one
// connection), run fn, commit or roll back. SQLITE_BUSY and SQLITE_LOCKED
// come back marked with ErrBusy. The BEGIN (IMMEDIATE, so it takes the
// write lock) is bracketed in slot for the writers queued behind
// (writeSlot).
func inTx(ctx context.Context, slot *writeSlot, db interface {
	BeginTxx(context.Context, *sql.TxOptions) (*sqlx.Tx, error)
}, fn func(tx *sqlx.Tx) error) error {
	done := slot.askLock()
	tx, err := db.BeginTxx(ctx, nil)
	done()
	if err != nil {
		return fmt.Errorf("begin transaction: %w", busy(err))
	}
	// Rolls back if fn never returns (runtime.Goexit); after the commit or
	// the rollback below it does nothing.
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return busy(err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", busy(err))
	}
	return nil
}

// FormatTime renders t in the database's time format (UTC, milliseconds).
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime parses a database time.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(TimeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad stored time %q: %w", s, err)
	}
	return t, nil
}

// parseNullTime parses an optional database time.
func parseNullTime(ns sql.NullString) (*time.Time, error) {
	if !ns.Valid {
		return nil, nil
	}
	t, err := ParseTime(ns.String)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// truncMs drops what the database cannot hold, so values returned by a
// create equal the same values read back later.
func truncMs(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func nullString(p *string) sql.NullString {
	if p == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: *p, Valid: true}
}

func strPtr(ns sql.NullString) *string {
	if !ns.Valid {
		return nil
	}
	s := ns.String
	return &s
}

// errProbeDone ends ProbeWrite's transaction with a rollback.
var errProbeDone = errors.New("probe done")

// ProbeWrite checks that a write can happen now: it takes the database's
// write lock (BEGIN IMMEDIATE) and gives it back with a rollback, so
// nothing is written and the file does not grow. On a view from
// WithBusyWait it waits at most that long for a lock another process holds,
// then fails with ErrBusy. The readiness check (GET /readyz) uses it.
func (s *Store) ProbeWrite(ctx context.Context) error {
	err := s.WithTx(ctx, func(context.Context, *sqlx.Tx) error { return errProbeDone })
	if errors.Is(err, errProbeDone) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("write probe: %w", busy(err))
	}
	return nil
}

// Errors of the SQLite store only; the domain errors are in the root
// package (errors.go).
var (
	// ErrCorrupt is returned by Open when the file is not a SQLite
	// database or fails its integrity check (Options.IntegrityCheck).
	ErrCorrupt = errors.New("database file is damaged")
	// ErrNoSecretKey: the store was opened without Options.Secrets and
	// was asked to seal or open a webhook signing secret.
	ErrNoSecretKey = errors.New("no secret key to seal webhook signing secrets with")
	// ErrSecretKey: the key given does not open the webhook signing
	// secrets already in the database.
	ErrSecretKey = errors.New("the secret key does not open the webhook signing secrets in this database")
	// ErrNoReportScores: the store was opened without
	// Options.ReportScores and was asked for batch items, whose scores it
	// cannot read without it.
	ErrNoReportScores = errors.New("no reader of report scores (store.Options.ReportScores) to list batch items with")
)
