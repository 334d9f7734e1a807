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
// the changes ALTER TABLE cannot. schema.sql at the repository root is
// generated from a freshly migrated database, for reading with sqlite3;
// after adding a migration, regenerate it with
//
//	go test ./store -run TestSchemaFile -update
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
	"time"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite" // also the "sqlite" database/sql driver, pure Go

	"locrisk/secretbox"
)

// TimeLayout is the database's time format: UTC, millisecond precision,
// fixed width so text order is time order.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Sentinel errors; callers test them with errors.Is.
var (
	ErrNotFound            = errors.New("not found")
	ErrIdempotencyConflict = errors.New("idempotency key reused with a different request")
	ErrQuotaExceeded       = errors.New("monthly report job quota exceeded")
	ErrNotRetryable        = errors.New("job is not retryable")
	ErrLeaseLost           = errors.New("job lease lost")
	ErrBadCursor           = errors.New("malformed cursor")
	ErrInvalid             = errors.New("invalid argument")
	// ErrBusy wraps SQLite's SQLITE_BUSY and SQLITE_LOCKED: another
	// process (a sqlite3 shell in a transaction, a long command) held the
	// write lock for longer than the store's busy wait. Nothing was
	// written; the same call may succeed later.
	ErrBusy = errors.New("database is locked by another process")
	// ErrCorrupt is returned by Open when the file is not a SQLite
	// database or fails its integrity check (Options.IntegrityCheck).
	ErrCorrupt = errors.New("database file is damaged")
	// ErrNoSecretKey: the store was opened without Options.Secrets and
	// was asked to seal or open a webhook signing secret.
	ErrNoSecretKey = errors.New("no secret key to seal webhook signing secrets with")
	// ErrSecretKey: the key given does not open the webhook signing
	// secrets already in the database.
	ErrSecretKey = errors.New("the secret key does not open the webhook signing secrets in this database")
)

// DefaultBusyWait is how long a write waits for another process's write
// lock (SQLite's busy timeout) before it fails with ErrBusy, unless the
// store was derived with WithBusyWait.
const DefaultBusyWait = 5 * time.Second

// QuotaError is returned (wrapping ErrQuotaExceeded) when an account has no
// report jobs left in the current billing period.
type QuotaError struct {
	Limit    int       // the account's monthly quota
	Used     int       // jobs created this period
	ResetsAt time.Time // first instant of the next period (UTC)
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("%v: %d of %d used, resets at %s", ErrQuotaExceeded, e.Used, e.Limit, e.ResetsAt.Format(time.RFC3339))
}

// Unwrap makes errors.Is(err, ErrQuotaExceeded) hold.
func (e *QuotaError) Unwrap() error { return ErrQuotaExceeded }

// JobFinalHook runs inside the transaction that moves a job to a final state
// (completed or failed), after the job row is updated; job is the row as it
// now stands. Returning an error rolls the whole transition back, so a hook
// must only fail for real database errors. This is where the webhook outbox
// (an event per subscribed endpoint) and batch completion attach, so their
// rows commit atomically with the job's final state.
type JobFinalHook func(ctx context.Context, tx Tx, job Job) error

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
	// file (0.4 s for 225 MB from the page cache; README.md, Limits and
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
}

// Store is the database handle. It is safe for concurrent use.
type Store struct {
	db      *sqlx.DB
	now     func() time.Time
	writeMu chan struct{} // one in-process writer at a time; see the package comment
	onFinal []JobFinalHook
	secrets *secretbox.Box
	// busyWait bounds how long a write waits for the in-process write
	// slot, and then for SQLite's lock; 0 means DefaultBusyWait, which
	// every connection has as its busy timeout (see WithBusyWait).
	busyWait time.Duration
}

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
	db, err := sqlx.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
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
		writeMu: make(chan struct{}, 1),
		onFinal: append([]JobFinalHook(nil), opt.OnJobFinal...),
		secrets: opt.Secrets,
	}
	if s.now == nil {
		s.now = time.Now
	}
	// Before anything else connects: the pool's connections put the file
	// in WAL mode, after which auto_vacuum can no longer be chosen.
	if err := setAutoVacuum(ctx, path); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %s: %w", path, corrupt(err))
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
// wait at most d for the in-process write slot and at most d for another
// process's lock before failing with ErrBusy; single-statement writes
// keep DefaultBusyWait for the lock. The server's request handlers use one so
// that a client hears 503 promptly rather than after DefaultBusyWait
// (docs/api.md, database_busy). The view shares the database, the write
// slot and the hooks with s; closing either closes both.
func (s *Store) WithBusyWait(d time.Duration) *Store {
	v := *s
	v.busyWait = d
	return &v
}

// dsn builds the driver's data source name. The file name is a SQLite URI,
// so the characters that would end or escape it are percent-encoded.
//
// auto_vacuum is not among the pragmas: setting it opens a write
// transaction, so every connection the pool opened needed the write lock
// and a read on a new connection could fail with SQLITE_BUSY behind busy
// writers. setAutoVacuum sets it once per open instead.
func dsn(path string) string {
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + p + fmt.Sprintf("?_pragma=busy_timeout(%d)", DefaultBusyWait.Milliseconds()) + "&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate"
}

// setAutoVacuum asks for auto_vacuum=INCREMENTAL once per open, on a
// connection of its own whose pragmas run in the order the pool's did
// before (auto_vacuum before journal_mode): it takes effect only on a file
// that has no table yet and is not yet in WAL mode, so a new file is
// created in that mode (the purge can then give freed pages back,
// IncrementalVacuum), while on an older file it changes nothing until a
// VACUUM (Vacuum).
func setAutoVacuum(ctx context.Context, path string) error {
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	db, err := sqlx.Open("sqlite", "file:"+p+fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=auto_vacuum(%d)&_pragma=journal_mode(WAL)",
		DefaultBusyWait.Milliseconds(), autoVacuumIncremental))
	if err != nil {
		return fmt.Errorf("set auto_vacuum: %w", err)
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("set auto_vacuum: %w", err)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// lockWrite waits for the in-process write slot, or for ctx, or (on a
// view with a busy wait) until the wait is over: a writer ahead of us may
// itself be waiting out another process's lock.
func (s *Store) lockWrite(ctx context.Context) error {
	var expired <-chan time.Time
	if s.busyWait > 0 {
		t := time.NewTimer(s.busyWait)
		defer t.Stop()
		expired = t.C
	}
	select {
	case s.writeMu <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-expired:
		return fmt.Errorf("%w: no write slot within %s", ErrBusy, s.busyWait)
	}
}

func (s *Store) unlockWrite() { <-s.writeMu }

// withWriteLock runs a single-statement write (an autocommit UPDATE or
// INSERT) in the write slot.
func (s *Store) withWriteLock(ctx context.Context, fn func() error) error {
	if err := s.lockWrite(ctx); err != nil {
		return err
	}
	defer s.unlockWrite()
	return busy(fn())
}

// WithTx runs fn in one write transaction (BEGIN IMMEDIATE) and commits if
// fn returns nil, else rolls back and returns fn's error unchanged (so
// sentinel errors survive).
func (s *Store) WithTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	if err := s.lockWrite(ctx); err != nil {
		return err
	}
	defer s.unlockWrite()
	if s.busyWait > 0 && s.busyWait != DefaultBusyWait {
		// SQLite's busy timeout belongs to the connection: take one, give
		// it this view's wait for the transaction, and put the default
		// back before the pool hands it to anyone else.
		conn, err := s.db.Connx(ctx)
		if err != nil {
			return fmt.Errorf("begin transaction: %w", err)
		}
		defer conn.Close()
		if err := setBusyTimeout(ctx, conn, s.busyWait); err != nil {
			return err
		}
		defer func() { _ = setBusyTimeout(context.WithoutCancel(ctx), conn, DefaultBusyWait) }()
		return inTx(ctx, conn, fn)
	}
	return inTx(ctx, s.db, fn)
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
// come back marked with ErrBusy.
func inTx(ctx context.Context, db interface {
	BeginTxx(context.Context, *sql.TxOptions) (*sqlx.Tx, error)
}, fn func(tx *sqlx.Tx) error) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", busy(err))
	}
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

// MonthStart returns the first instant of t's calendar month in UTC.
func MonthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// NextMonthStart returns the first instant of the calendar month after t's (UTC).
func NextMonthStart(t time.Time) time.Time { return MonthStart(t).AddDate(0, 1, 0) }

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
