package main

// Which database a command runs on, chosen once: --db names a SQLite file
// (the default) or, as a postgres:// URL, a PostgreSQL database
// (docs/postgres.md). backendFor makes that choice and nothing else does;
// from then on a command asks its backend what to open, what the service
// needs on that kind of database and what it refuses, never which kind it
// holds. The SQLite backend is backend_sqlite.go, PostgreSQL's
// backend_postgres.go.

import (
	"context"
	"log/slog"
	"strings"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/metrics"
	"github.com/locrisk/locrisk/internal/outbox"
	"github.com/locrisk/locrisk/internal/retention"
	"github.com/locrisk/locrisk/internal/server"
)

// backend is the database a --db value names.
type backend interface {
	// String names the database in messages and logs: the file, or the
	// URL without its password.
	String() string
	// open opens the store for a command other than serve; log takes the
	// warnings about the secret key file.
	open(ctx context.Context, use storeUse, log *slog.Logger) (store, error)
	// openServe opens the store serve runs on, with what the backend adds
	// to the service.
	openServe(ctx context.Context, opt serveOptions) (serveStore, error)
	// migrate opens the store, which applies its migrations, closes it
	// again and returns the schema version (db migrate).
	migrate(ctx context.Context) (version int, err error)
	// vacuum rewrites the database so that it gives space back after a
	// purge, and returns its size before and after (db vacuum). A
	// database that reclaims space by itself refuses with a usage error.
	vacuum(ctx context.Context) (before, after int64, err error)
}

// backendFor is the backend of the --db value db: the one place that
// tells a PostgreSQL URL from a SQLite file path.
func backendFor(db string) backend {
	if strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") {
		return postgresBackend{url: db}
	}
	return sqliteBackend{path: db}
}

// dbFlagUsage is the help of every command's --db flag.
const dbFlagUsage = "database: a SQLite `file`, or a postgres:// URL (docs/postgres.md)"

// storeUse is what a command needs of the store it opens.
type storeUse struct {
	// mustExist refuses a database that is not there yet rather than
	// create an empty one, so that a mistyped --db says so instead of
	// reporting on nothing. Only serve and accounts create, the
	// documented first step, leave it off. (A PostgreSQL database is
	// never created by locrisk, only its tables.)
	mustExist bool
	sealed    bool   // the secret key file is needed (signing keys, webhook secrets)
	keyFile   string // --secret-key-file; for SQLite the default is beside the file
}

// serveOptions is what serve opens its store with.
type serveOptions struct {
	keyFile string // --secret-key-file
	// wake rouses the delivery worker once a job's final transaction has
	// recorded its webhook events.
	wake func()
	// metrics, nil without --metrics-addr, is told what the backend can
	// measure of its store.
	metrics *metrics.Metrics
	log     *slog.Logger
}

// store is an open database as the commands use it: the domain's
// operations, and the retention purge on them.
type store interface {
	locrisk.Store
	// purger is the retention purge of cfg on the store, giving the space
	// it frees back to the system the backend's way.
	purger(cfg retention.Config) *retention.Purger
}

// serveStore is the store serve runs on, and what its backend adds to the
// service. Close also ends the backend's own chores and locks.
type serveStore interface {
	store
	// api is the store as the requests use it.
	api() server.Store
	// probe is GET /readyz's check that the store can write.
	probe() server.WriteProber
	// rateLimiter is the API's rate limiter: nil for the server's own
	// counts in memory.
	rateLimiter() server.RateLimiter
	// releaseLeftLeases runs before the workers start: the jobs and
	// deliveries a server before this one left leased are taken over at
	// once where the backend can tell they are abandoned.
	releaseLeftLeases(ctx context.Context, log *slog.Logger)
	// adviseVacuum warns when the database cannot give back the space
	// the hourly purge frees, and says what to do.
	adviseVacuum(ctx context.Context, log *slog.Logger)
}

// onJobFinal is the hook every store is opened with, so that any process
// that can finish a job (serve, and report with its own worker) records
// the job's webhook events in the job's final transaction. wake rouses
// this process's delivery worker; without one (nil), a running server's
// worker finds the events at its next poll.
func onJobFinal(wake func()) []locrisk.JobFinalHook {
	return []locrisk.JobFinalHook{outbox.Hook(wake)}
}

// openStore opens the store --db names for a command other than serve.
func (c *cli) openStore(db string, use storeUse) (store, error) {
	return backendFor(db).open(c.ctx, use, c.quietLog())
}

// quietLog logs warnings and errors only, on standard error: for commands
// whose standard output is their result.
func (c *cli) quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
