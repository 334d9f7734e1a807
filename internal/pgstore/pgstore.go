// Package pgstore is the PostgreSQL store (docs/postgres.md): the domain's
// operations (service.go at the root) on a PostgreSQL database that several
// locrisk processes may share, for deployments that run more than one
// node. It is the second store beside the SQLite one (internal/sqlite) and
// passes the same behaviour suite (internal/storetest), every group of it.
// Like the SQLite store it holds only SQL and the mapping of rows: argument
// checks, the page cursor, the sequence of a job's final transition and of
// the webhook operations, and the forms values are stored in are the
// domain's (the root package), so a cursor or an error means the same in
// either store.
//
// How the concurrency invariants hold across processes, not only across
// goroutines, in PostgreSQL's default READ COMMITTED isolation:
//   - Quotas: a creation adds to its account's month row with INSERT ... ON
//     CONFLICT DO UPDATE ... RETURNING, which locks that row until the
//     transaction ends, so concurrent creations count one after the other,
//     and one that would pass the quota rolls back.
//   - Idempotency: the key's primary key. A second insert of a key waits
//     for the first transaction and then finds the row (ON CONFLICT DO
//     NOTHING, then a read, which sees the committed row).
//   - Claims: the chosen row is locked with FOR UPDATE SKIP LOCKED, so two
//     claimers never take one job and neither waits for the other; the
//     turns between accounts come from one sequence (job_claims).
//   - Completion: an UPDATE conditioned on the status and the lease owner
//     inside the completing transaction, with the report's unique job_id.
//
// Why row locks in READ COMMITTED rather than SERIALIZABLE: each
// invariant comes down to one row (the account's month of quota, the
// idempotency key, the job) that the statement locks anyway, so
// concurrent requests wait for each other only where they conflict, and
// the store's answers (ErrQuotaExceeded, a replay, ErrLeaseLost) are the
// ones the SQLite store gives rather than serialization failures to
// retry; under SERIALIZABLE every concurrent creation on one account
// would fail and retry, and a retry budget would then decide whether a
// request within quota succeeds. The invariants are checked across four
// connection pools (TestInvariantsAcrossNodes, TestTwoNodesRace).
//
// Claims are fair per account, not strictly: claimers on several nodes at
// the same moment each take the account whose turn it is, skipping the
// jobs the others locked, so an account may get as many jobs in a row as
// there are simultaneous claimers before its stamp moves it back.
//
// Migrations (Migrate) each run under pg_advisory_xact_lock, so nodes
// starting together apply each once. Deadlocks and serialization failures
// (SQLSTATE 40P01, 40001), possible where a transaction touches several
// counter rows (a purge against completions updating the completion
// histograms of migration 5 or the usage counters of migration 8), are
// retried a few times, the whole transaction again.
//
// Usage, queue depth, batch counts and the operations summary's counts
// are read from counters that triggers keep in the transaction of every
// write (migration 8), as the SQLite store's are, so their cost does not
// grow with the jobs held; no claim writes one.
package pgstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/reportcodec"
	"github.com/locrisk/locrisk/internal/secretbox"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options are the store's settings; zero fields take the defaults.
type Options struct {
	// Now is the clock of the operations that take no time argument.
	Now func() time.Time
	// OnJobFinal hooks run inside every job's final transition.
	OnJobFinal []locrisk.JobFinalHook
	// Secrets seals the report signing keys at rest (package secretbox).
	Secrets *secretbox.Box
}

// Store implements every service interface of the domain.
var _ locrisk.Store = (*Store)(nil)

// Store is the PostgreSQL store. It is safe for concurrent use.
type Store struct {
	db      *sqlx.DB
	now     func() time.Time
	hooks   []locrisk.JobFinalHook
	secrets *secretbox.Box
	codec   *reportcodec.Codec
	dsn     string // the connection string Open was given

	creations *creator // gathers job creations into shared transactions

	// room is whether a write has proven room since the store opened
	// and since the last full disk (classify.go, ProbeWrite).
	room *room

	// refLock is the connection holding the advisory lock of the
	// reference this node builds (LoadReference), nil when none.
	refMu   sync.Mutex
	refLock *sqlx.Conn
}

// Open connects to the database named by dsn (a postgres:// URL or a
// key=value string), applies the migrations it lacks and returns the store.
func Open(ctx context.Context, dsn string, opt Options) (*Store, error) {
	// Every error of every statement passes through classify
	// (classify.go): a full disk is ErrStorageFull, a server away or
	// restarting ErrUnavailable.
	rm := &room{}
	connector, err := stdlib.GetDefaultDriver().(driver.DriverContext).OpenConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	db := sqlx.NewDb(sql.OpenDB(classifyingConnector{Connector: connector, room: rm}), "pgx")
	// Keep the connections: database/sql keeps only 2 idle by default, and
	// opening a PostgreSQL connection starts a server process, which under
	// a load of requests and workers costs more than the queries. The cap
	// leaves room for a second node under PostgreSQL's default of 100.
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	codec, err := reportcodec.New()
	if err != nil {
		db.Close()
		return nil, err
	}
	s := &Store{db: db, now: opt.Now, hooks: opt.OnJobFinal, secrets: opt.Secrets, codec: codec, dsn: dsn, room: rm}
	if s.now == nil {
		s.now = time.Now
	}
	s.creations = newCreator(s)
	if err := s.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the store once the creations queued have their outcome; a
// creation begun after fails with ErrClosed.
func (s *Store) Close() error {
	s.creations.close()
	s.releaseReferenceLock()
	return s.db.Close()
}

// maxConns bounds one node's connections to the database.
const maxConns = 40

// migrationLock is the advisory lock key Migrate holds: any fixed number
// that other programs sharing the database do not use.
const migrationLock = 0x6c6f6372 // "locr"

// Migrate applies the numbered migrations the database lacks, in order,
// and is safe to run from several processes at once. Each migration runs
// in a transaction of its own that first takes the advisory lock
// migrationLock with pg_advisory_xact_lock and then reads which
// migrations are applied: a second process waits for the first's
// transaction and then sees its migration recorded, so each is applied
// once. A transaction-scoped lock rather than a session one because it
// goes with the transaction, whatever happens: a session lock left held
// on a pooled connection (a failed unlock) would block every other node's
// migration until that connection closed. A database that has a migration
// this binary does not carry was written by a newer locrisk and is
// refused, as the SQLite store refuses a newer file.
func (s *Store) Migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	slices.Sort(names)
	for i, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		version, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil || version != i+1 {
			return fmt.Errorf("migrate: %s is not migration %d", base, i+1)
		}
	}
	// One more round than there are migrations: the last only checks,
	// under the lock, that the database is not newer than the binary.
	for i := 0; i <= len(names); i++ {
		done := false
		err := s.withTx(ctx, func(tx *sqlx.Tx) error {
			var err error
			done, err = migrateStep(ctx, tx, names)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if done {
			return nil
		}
	}
	return fmt.Errorf("migrate: %d migrations applied and still not done", len(names))
}

// migrateStep applies, in tx and under the migration lock, the first of
// names (sorted, numbered from 1) the database lacks; done when it lacks
// none.
func migrateStep(ctx context.Context, tx *sqlx.Tx, names []string) (done bool, err error) {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return false, fmt.Errorf("take the migration lock: %w", err)
	}
	// Under the lock, so that two first starts do not race to create it
	// (CREATE TABLE IF NOT EXISTS is not safe against a concurrent one).
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_utc timestamptz NOT NULL DEFAULT now())`); err != nil {
		return false, err
	}
	var latest int
	if err := tx.GetContext(ctx, &latest, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`); err != nil {
		return false, err
	}
	if latest > len(names) {
		return false, fmt.Errorf("database schema version %d is newer than this binary supports (%d): "+
			"the database was migrated by a newer locrisk; use that version", latest, len(names))
	}
	if latest == len(names) {
		return true, nil
	}
	// Migrations are applied in order, one per transaction, so the
	// versions recorded are always 1..latest.
	name := names[latest]
	base := strings.TrimPrefix(name, "migrations/")
	body, err := migrations.ReadFile(name)
	if err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return false, fmt.Errorf("%s: %w", base, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, latest+1, base); err != nil {
		return false, fmt.Errorf("%s: record it: %w", base, err)
	}
	return latest+1 == len(names), nil
}

// SchemaVersion is the number of the last migration this binary carries.
func SchemaVersion() int {
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	return len(names)
}

// withTx runs fn in one transaction, committed if fn returns nil, and
// runs it again (a few times) when PostgreSQL aborts it for a
// serialization failure or a deadlock.
func (s *Store) withTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := s.tryTx(ctx, fn)
		if err == nil || !retryable(err) || attempt == 5 {
			return err
		}
		// A short, growing pause so that the transactions that collided
		// do not collide again at once; cut short if ctx ends.
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (retry abandoned: %w)", err, ctx.Err())
		case <-time.After(time.Duration(attempt) * 5 * time.Millisecond):
		}
	}
}

func (s *Store) tryTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// txOps are the store's steps inside an open transaction that the domain
// sequences itself (locrisk.TxOps): a job's final transition, through
// which locrisk.FinishJob runs the JobFinalHooks, a retry and the webhook
// operations. Each method is one step's SQL.
type txOps struct{ tx *sqlx.Tx }

// transactor runs the domain's operations of several steps in one
// transaction each (locrisk.Transactor), retried whole like any other.
type transactor struct{ s *Store }

func (t transactor) InTx(ctx context.Context, fn func(ctx context.Context, ops locrisk.TxOps) error) error {
	return t.s.withTx(ctx, func(tx *sqlx.Tx) error { return fn(ctx, txOps{tx}) })
}

// retryable says whether PostgreSQL aborted the transaction for a
// serialization failure or a deadlock, after which it may simply run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// ms is t in UTC at the millisecond precision every stored time has.
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// present turns the error of a one-row read into whether the row exists:
// no row is not an error.
func present(err error) (bool, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// utc turns a scanned time into UTC (pgx gives the session's zone).
func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

// queryer is a *sqlx.DB or a *sqlx.Tx.
type queryer interface {
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}
