// Package sqlite keeps locrisk's state in one SQLite file: accounts, API keys,
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
//	go test ./internal/sqlite -run TestSchemaFile -update
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
// What is not a query is the domain's (the root package), shared with the
// PostgreSQL store so that the two cannot drift: argument checks, the page
// cursor, the sequence of a job's final transition and of the webhook
// operations, the forms values are stored in. This package holds the SQL
// and the mapping of rows.
//
// Limits: one database file, one writer at a time; that is the design, and
// is ample for the job rates a single instance serves.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite" // also the "sqlite" database/sql driver, pure Go

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/reportcodec"
	"github.com/locrisk/locrisk/internal/secretbox"
	"github.com/locrisk/locrisk/internal/stmtcache"
)

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
	OnJobFinal []locrisk.JobFinalHook
	// IntegrityCheck runs SQLite's PRAGMA quick_check before anything
	// else and refuses a damaged file with ErrCorrupt. It reads the whole
	// file (0.4 s for 225 MB from the page cache; docs/operations.md, Limits and
	// defaults), so serve asks for it at
	// start-up and the short commands do not.
	IntegrityCheck bool
	// Secrets seals the webhook signing secrets at rest (secrets.go).
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
}

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
	onFinal []locrisk.JobFinalHook
	secrets *secretbox.Box
	obs     Observer           // nil: nothing is measured
	codec   *reportcodec.Codec // how report bodies are stored (reports.go)
	// busyWait bounds how long a write waits for another process's
	// write lock, both in SQLite and queued behind a writer held up by
	// it; 0 means DefaultBusyWait, which every connection has as its busy
	// timeout, and no bound on the queue (see WithBusyWait).
	busyWait time.Duration
	// queueWait bounds the wait for the write slot behind this process's
	// own writers when busyWait is set; 0 means DefaultQueueWait.
	queueWait time.Duration
	// room is whether the last writes found room (room.go), shared by
	// the store and its views; path is the database file, for the
	// readiness probe's test of the file system (ProbeWrite).
	room *room
	path string
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
		onFinal: append([]locrisk.JobFinalHook(nil), opt.OnJobFinal...),
		secrets: opt.Secrets,
		obs:     opt.Observer,
		room:    &room{},
		path:    path,
	}
	if s.codec, err = reportcodec.New(); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %w", err)
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
