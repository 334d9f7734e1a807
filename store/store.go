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
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
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
)

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
}

// Store is the database handle. It is safe for concurrent use.
type Store struct {
	db      *sqlx.DB
	now     func() time.Time
	writeMu chan struct{} // one in-process writer at a time; see the package comment
	onFinal []JobFinalHook
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
	}
	if s.now == nil {
		s.now = time.Now
	}
	if err := s.migrate(ctx, ms); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	return s, nil
}

// dsn builds the driver's data source name. The file name is a SQLite URI,
// so the characters that would end or escape it are percent-encoded.
//
// auto_vacuum=INCREMENTAL comes first: it takes effect only on a file
// that has no table yet, so a new file is created in that mode (the purge
// can then give freed pages back, IncrementalVacuum), while on an older
// file it changes nothing until a VACUUM (Vacuum).
func dsn(path string) string {
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + p + "?_pragma=auto_vacuum(2)&_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate"
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// lockWrite waits for the in-process write slot, or for ctx.
func (s *Store) lockWrite(ctx context.Context) error {
	select {
	case s.writeMu <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
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
	return fn()
}

// WithTx runs fn in one write transaction (BEGIN IMMEDIATE) and commits if
// fn returns nil, else rolls back and returns fn's error unchanged (so
// sentinel errors survive).
func (s *Store) WithTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	if err := s.lockWrite(ctx); err != nil {
		return err
	}
	defer s.unlockWrite()
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
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
