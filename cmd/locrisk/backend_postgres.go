package main

// The PostgreSQL backend: a database several serve nodes share
// (docs/postgres.md). The nodes share the secret key file, which must be
// given, and their rate limit counts; there is no serve lock, and the
// server reclaims space and keeps its files itself.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"

	"github.com/locrisk/locrisk/internal/pgstore"
	"github.com/locrisk/locrisk/internal/retention"
	"github.com/locrisk/locrisk/internal/secretbox"
	"github.com/locrisk/locrisk/internal/server"
	"github.com/locrisk/locrisk/internal/sharedrate"
)

// postgresBackend is a PostgreSQL database, named by its URL.
type postgresBackend struct{ url string }

// String is the URL without its password, fit for a log line.
func (b postgresBackend) String() string {
	scheme, rest, _ := strings.Cut(b.url, "://")
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if user, _, hasPass := strings.Cut(rest[:at], ":"); hasPass {
			rest = user + ":xxxxx" + rest[at:]
		}
	}
	return scheme + "://" + rest
}

// open opens the database for a command. use.mustExist asks nothing more
// here: a database that is not there fails to open.
func (b postgresBackend) open(ctx context.Context, use storeUse, _ *slog.Logger) (store, error) {
	var box *secretbox.Box
	if use.sealed || use.keyFile != "" {
		var err error
		if box, err = postgresSecrets(use.keyFile); err != nil {
			return nil, err
		}
	}
	st, err := b.openWith(ctx, nil, box)
	if err != nil {
		return nil, err
	}
	return postgresStore{st}, nil
}

// openServe opens the database for a serve node, with the shared secret
// key file, and starts the exchange of the rate limit counts with the
// other nodes, which runs until the store is closed. opt.metrics is not
// given to the store: what it observes of a store (the wait for the write
// slot, group commits) is SQLite's alone.
func (b postgresBackend) openServe(ctx context.Context, opt serveOptions) (serveStore, error) {
	box, err := postgresSecrets(opt.keyFile)
	if err != nil {
		return nil, err
	}
	st, err := b.openWith(ctx, opt.wake, box)
	if err != nil {
		return nil, err
	}
	// The rate limits count every node's requests (package sharedrate).
	rate := sharedrate.New(st, opt.log, nil)
	rateCtx, stopRate := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { rate.Run(rateCtx); close(done) }()
	return &postgresServe{postgresStore: postgresStore{st}, rate: rate, stopRate: func() { stopRate(); <-done }}, nil
}

func (b postgresBackend) migrate(ctx context.Context) (int, error) {
	st, err := b.openWith(ctx, nil, nil)
	if err != nil {
		return 0, err
	}
	return pgstore.SchemaVersion(), st.Close()
}

// vacuum is SQLite's alone.
func (b postgresBackend) vacuum(context.Context) (before, after int64, err error) {
	return 0, 0, usagef("db vacuum switches a SQLite file to incremental vacuum; PostgreSQL reclaims space with its own autovacuum")
}

// openWith opens the database with the webhook outbox, whose events wake
// (nil for none) announces, and box, which seals the secrets (nil for a
// command that needs none). The store applies its own migrations, under
// a lock (internal/pgstore/migrations/).
func (b postgresBackend) openWith(ctx context.Context, wake func(), box *secretbox.Box) (*pgstore.Store, error) {
	st, err := pgstore.Open(ctx, b.url, pgstore.Options{OnJobFinal: onJobFinal(wake), Secrets: box})
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", b, err)
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

// postgresStore is a PostgreSQL store as the commands use it.
type postgresStore struct{ *pgstore.Store }

// purger leaves the space a purge frees to PostgreSQL's autovacuum.
func (s postgresStore) purger(cfg retention.Config) *retention.Purger {
	return retention.New(s.Store, cfg)
}

// postgresServe is the store a serve node runs on.
type postgresServe struct {
	postgresStore
	rate     *sharedrate.Limiter
	stopRate func() // ends the exchange of the rate counts and waits for it
}

// api and probe are the store itself: the shorter busy waits of a
// database file have no counterpart here, and the probe proves room by
// writing (docs/postgres.md, Several nodes).
func (s *postgresServe) api() server.Store               { return s.Store }
func (s *postgresServe) probe() server.WriteProber       { return s.Store }
func (s *postgresServe) rateLimiter() server.RateLimiter { return s.rate }

// releaseLeftLeases does nothing: a node cannot tell a dead node's leases
// from a live one's, so they expire (--job-lease).
func (s *postgresServe) releaseLeftLeases(context.Context, *slog.Logger) {}

// adviseVacuum does nothing: PostgreSQL's autovacuum gives space back.
func (s *postgresServe) adviseVacuum(context.Context, *slog.Logger) {}

// Close stops the exchange of the rate counts, which reads the store,
// then closes the store.
func (s *postgresServe) Close() error {
	s.stopRate()
	return s.Store.Close()
}
