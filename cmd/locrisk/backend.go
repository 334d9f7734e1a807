package main

// Which store a command runs on: --db names a SQLite file (the default) or,
// as a postgres:// URL, a PostgreSQL database (docs/postgres.md). Commands
// that only use the domain's operations take either; the SQLite-only ones
// (db vacuum) say so.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/filelock"
	"github.com/locrisk/locrisk/internal/outbox"
	"github.com/locrisk/locrisk/internal/pgstore"
	"github.com/locrisk/locrisk/internal/secretbox"
	"github.com/locrisk/locrisk/internal/server"
	"github.com/locrisk/locrisk/internal/sharedrate"
	"github.com/locrisk/locrisk/internal/sqlite"
)

// isPostgres says whether db is a PostgreSQL connection URL rather than a
// SQLite file path.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// redactDB is db fit for a log line: a URL without its password.
func redactDB(db string) string {
	if !isPostgres(db) {
		return db
	}
	scheme, rest, _ := strings.Cut(db, "://")
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if user, _, hasPass := strings.Cut(rest[:at], ":"); hasPass {
			rest = user + ":xxxxx" + rest[at:]
		}
	}
	return scheme + "://" + rest
}

// dbFlagUsage is the help of every command's --db flag.
const dbFlagUsage = "database: a SQLite `file`, or a postgres:// URL (docs/postgres.md)"

// quietLog logs warnings and errors only, on standard error: for commands
// whose standard output is their result.
func (c *cli) quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// storeUse is what a command needs of the store it opens.
type storeUse struct {
	mustExist bool   // a SQLite file must already be there (only serve and accounts create make one)
	sealed    bool   // the secret key file is needed (signing keys, webhook secrets)
	keyFile   string // --secret-key-file; for SQLite the default is beside the file
	wake      func() // wakes this process's webhook worker after a job's final transition
}

// openDomainStore opens the store --db names for a command that uses only
// the domain's operations.
func (c *cli) openDomainStore(db string, use storeUse, log *slog.Logger) (locrisk.Store, error) {
	if log == nil {
		log = c.quietLog()
	}
	if !isPostgres(db) {
		if use.mustExist {
			if err := checkDatabaseExists(db); err != nil {
				return nil, err
			}
		}
		if use.sealed {
			return c.openSealedWith(db, use.keyFile, sqlite.Options{OnJobFinal: []locrisk.JobFinalHook{outbox.Hook(use.wake)}}, log)
		}
		return c.openStoreNotify(db, use.wake)
	}
	opt := pgstore.Options{OnJobFinal: []locrisk.JobFinalHook{outbox.Hook(use.wake)}}
	if use.sealed || use.keyFile != "" {
		box, err := postgresSecrets(use.keyFile)
		if err != nil {
			return nil, err
		}
		opt.Secrets = box
	}
	st, err := pgstore.Open(c.ctx, db, opt)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", redactDB(db), err)
	}
	return st, nil
}

// postgresSecrets is the box of the secret key file every node on a
// PostgreSQL database shares: it must be given, since there is no file
// beside a database URL to keep it in.
func postgresSecrets(keyFile string) (*secretbox.Box, error) {
	if keyFile == "" {
		return nil, usagef("a PostgreSQL database needs --secret-key-file (or LOCRISK_SECRET_KEY_FILE): the key, shared by every node, " +
			"that seals webhook signing secrets and the report signing key; make one with: head -c 32 /dev/urandom | base64 > locrisk.key")
	}
	key, err := secretbox.LoadKeyFile(keyFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w; make a key with: head -c 32 /dev/urandom | base64 > %s && chmod 600 %s", err, keyFile, keyFile)
	}
	if err != nil {
		return nil, err
	}
	return secretbox.New(key)
}

// migrateOnly opens the store --db names, which applies its migrations,
// and closes it (locrisk db migrate).
func (c *cli) migrateOnly(ctx context.Context, db string) (version int, err error) {
	if isPostgres(db) {
		st, err := pgstore.Open(ctx, db, pgstore.Options{})
		if err != nil {
			return 0, fmt.Errorf("database %s: %w", redactDB(db), err)
		}
		return pgstore.SchemaVersion(), st.Close()
	}
	st, err := c.openStore(db)
	if err != nil {
		return 0, err
	}
	return sqlite.SchemaVersion, st.Close()
}

// serveBackend is the store serve runs on, and what only one kind of
// store has.
type serveBackend struct {
	store locrisk.Store
	api   server.Store       // the requests' view of it
	probe server.WriteProber // GET /readyz's view of it
	// sqlite is the SQLite store (nil on PostgreSQL): its leases left by
	// a killed server, its vacuum after a purge, its file statistics.
	sqlite *sqlite.Store
	lock   *filelock.Lock // SQLite's serve lock, released after the store is closed
	// rate is the rate limiter several nodes share (PostgreSQL), whose
	// exchanges stopRate ends; nil on SQLite, where one server counts.
	rate     *sharedrate.Limiter
	stopRate func()
}

// rateLimiter is the API's rate limiter: nil (one server's, in memory)
// unless the nodes share one.
func (b *serveBackend) rateLimiter() server.RateLimiter {
	if b.rate == nil {
		return nil
	}
	return b.rate
}

// Close stops the shared rate counts, closes the store, then releases
// the serve lock.
func (b *serveBackend) Close() error {
	if b.stopRate != nil {
		b.stopRate()
	}
	err := b.store.Close()
	return errors.Join(err, b.lock.Unlock())
}

// openPostgres opens the PostgreSQL database serve runs on, with the
// webhook outbox registered and the shared secret key file.
func openPostgres(ctx context.Context, db, keyFile string, wake func()) (*pgstore.Store, error) {
	box, err := postgresSecrets(keyFile)
	if err != nil {
		return nil, err
	}
	st, err := pgstore.Open(ctx, db, pgstore.Options{OnJobFinal: []locrisk.JobFinalHook{outbox.Hook(wake)}, Secrets: box})
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", redactDB(db), err)
	}
	return st, nil
}
