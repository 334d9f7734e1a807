package main

// The SQLite backend: one database file, served by one server at a time
// (the serve lock), with the chores only a file has: the leases a killed
// server left, the incremental vacuum after a purge, the file's
// statistics, the busy waits of the requests and of the readiness probe,
// and the secret key file kept beside it.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/locrisk/locrisk/internal/filelock"
	"github.com/locrisk/locrisk/internal/retention"
	"github.com/locrisk/locrisk/internal/secretbox"
	"github.com/locrisk/locrisk/internal/server"
	"github.com/locrisk/locrisk/internal/sqlite"
)

// sqliteBackend is a database file.
type sqliteBackend struct{ path string }

func (b sqliteBackend) String() string { return b.path }

func (b sqliteBackend) open(ctx context.Context, use storeUse, log *slog.Logger) (store, error) {
	if use.mustExist {
		if err := checkDatabaseExists(b.path); err != nil {
			return nil, err
		}
	}
	var st *sqlite.Store
	var err error
	if use.sealed {
		st, err = b.openSealed(ctx, use.keyFile, nil, sqlite.Options{}, log)
	} else {
		st, err = b.openWith(ctx, nil, sqlite.Options{})
	}
	if err != nil {
		return nil, err
	}
	return sqliteStore{st}, nil
}

// openServe takes the serve lock, then opens the file as serve needs it:
// checked whole for damage (PRAGMA quick_check, which reads the whole
// file and so is left out of the short commands), its webhook signing
// secrets sealed, its writers watched by the metrics if there are any.
func (b sqliteBackend) openServe(ctx context.Context, opt serveOptions) (serveStore, error) {
	// One server per database file (docs/operations.md, Limits and
	// defaults): the rate limits live in each server's memory, so a
	// second server would double them. db vacuum takes the same lock;
	// the other commands do not.
	lock, err := lockServe(b.path)
	if err != nil {
		return nil, err
	}
	o := sqlite.Options{IntegrityCheck: true}
	if opt.metrics != nil {
		// Only with metrics: a nil *metrics.Metrics in the interface would
		// not be nil, and the store would call it.
		o.Observer = opt.metrics
	}
	st, err := b.openSealed(ctx, opt.keyFile, opt.wake, o, opt.log)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	return newSQLiteServe(b.path, st, lock), nil
}

func (b sqliteBackend) migrate(ctx context.Context) (int, error) {
	st, err := b.openWith(ctx, nil, sqlite.Options{})
	if err != nil {
		return 0, err
	}
	return sqlite.SchemaVersion, st.Close()
}

func (b sqliteBackend) vacuum(ctx context.Context) (before, after int64, err error) {
	if err := checkDatabaseExists(b.path); err != nil {
		return 0, 0, err
	}
	// The serve lock (lockServe's) keeps a server off the file during the
	// rewrite and refuses the vacuum while one runs. It is released after
	// the store is closed (deferred first, so it runs last): releasing it
	// closes a descriptor of the file, which drops SQLite's locks.
	lock, err := filelock.Acquire(b.path)
	if errors.Is(err, filelock.ErrLocked) {
		return 0, 0, fmt.Errorf("a locrisk serve is using the database %s (%w); stop the server first: "+
			"the vacuum locks out its writers for the whole rewrite", b.path, err)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("database %s: %w", b.path, err)
	}
	defer lock.Unlock()
	st, err := b.openWith(ctx, nil, sqlite.Options{})
	if err != nil {
		return 0, 0, err
	}
	defer st.Close()
	was, err := st.FileStats(ctx)
	if err != nil {
		return 0, 0, err
	}
	if err := st.Vacuum(ctx); err != nil {
		return 0, 0, err
	}
	is, err := st.FileStats(ctx)
	if err != nil {
		return 0, 0, err
	}
	return was.Bytes(), is.Bytes(), nil
}

// checkDatabaseExists refuses a --db that names no file.
func checkDatabaseExists(path string) error {
	if path == "" {
		return usagef("--db is empty")
	}
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("there is no database file %s; check --db (or LOCRISK_DB). "+
			"'locrisk accounts create' or 'locrisk serve' creates a new one", path)
	}
	if err != nil {
		return fmt.Errorf("database %s: %w", path, err)
	}
	return nil
}

// openWith opens the file with opt and the webhook outbox, whose events
// wake (nil for none) announces. The store applies its own migrations
// (internal/sqlite/migrations/). A damaged file is refused with a message
// that names it and says what to do.
func (b sqliteBackend) openWith(ctx context.Context, wake func(), opt sqlite.Options) (*sqlite.Store, error) {
	if b.path == "" {
		return nil, usagef("--db is empty")
	}
	opt.OnJobFinal = onJobFinal(wake)
	st, err := sqlite.OpenWith(ctx, b.path, opt)
	if errors.Is(err, sqlite.ErrCorrupt) {
		return nil, fmt.Errorf("refusing to use the damaged database file %s: %w; "+
			"stop every process using it, keep a copy, and restore the file from a backup "+
			"(sqlite3's .recover command may salvage rows into a new file; see docs/operations.md, The database file)", b.path, err)
	}
	return st, err
}

// openSealed is openWith with the box of the secret key file (keyFile,
// else beside the database, created the first time: serveSecrets), as
// serve opens the file and the commands that sign or seal (report,
// signing-keys rotate).
func (b sqliteBackend) openSealed(ctx context.Context, keyFile string, wake func(), opt sqlite.Options, log *slog.Logger) (*sqlite.Store, error) {
	keyPath := keyFileOrDefault(b.path, keyFile)
	box, created, err := serveSecrets(b.path, keyFile)
	if err != nil {
		return nil, err
	}
	opt.Secrets = box
	st, err := b.openWith(ctx, wake, opt)
	switch {
	case err != nil && created:
		// Nothing was sealed with the new key (sealing is Open's last
		// step, in one transaction), so it goes again rather than stand
		// beside a database it does not belong to.
		_ = os.Remove(keyPath)
		if errors.Is(err, sqlite.ErrSecretKey) {
			// The database holds secrets sealed with a key that is not
			// here: typically a file restored from a backup without its
			// key. A new key can never open them, so serve refuses.
			return nil, fmt.Errorf("%w. There was no key file %s, so a new key was generated, and a new key cannot "+
				"open secrets sealed with another one (was the database restored without its key file?); "+
				"the new key was removed again. Restore the original key file to %s, or pass it with --secret-key-file", err, keyPath, keyPath)
		}
	case created:
		log.Warn("created a secret key for the webhook signing secrets beside the database; "+
			"keep it apart from the database's backups and pass it with --secret-key-file", "key_file", keyPath)
	case err == nil:
		// A warning, not a refusal: container secrets are often mounted
		// readable by all, inside a container of one user.
		if fi, serr := os.Stat(keyPath); serr == nil && fi.Mode().Perm()&0o077 != 0 {
			log.Warn("the secret key file can be read by other users; chmod 600 it",
				"key_file", keyPath, "mode", fi.Mode().Perm().String())
		}
	}
	if errors.Is(err, sqlite.ErrSecretKey) {
		return nil, fmt.Errorf("%w; the key was read from %s. Without the right key the endpoints' "+
			"signing secrets are lost: then delete the endpoints and create them again", err, keyPath)
	}
	return st, err
}

// keyFileOrDefault is the secret key file of a database file: the one
// given, or the database's name with ".key" added.
func keyFileOrDefault(db, keyFile string) string {
	if keyFile != "" {
		return keyFile
	}
	return db + ".key"
}

// serveSecrets is the box that seals the webhook signing secrets at rest
// (docs/operations.md, Limits and defaults). The key comes from keyFile
// (--secret-key-file); without one, from db + ".key", which is created
// with a new random key (mode 0600) the first time. A key file given but
// absent, or not a key, is an error: a new key would not open the secrets
// sealed with the old one. created tells that the key file was made now.
func serveSecrets(db, keyFile string) (box *secretbox.Box, created bool, err error) {
	path := keyFileOrDefault(db, keyFile)
	key, err := secretbox.LoadKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) && keyFile == "" {
		key, err = secretbox.CreateKeyFile(path)
		created = err == nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("%w; make a key with: head -c 32 /dev/urandom | base64 > %s && chmod 600 %s", err, path, path)
	}
	if err != nil {
		return nil, false, err
	}
	box, err = secretbox.New(key)
	return box, created, err
}

// lockServe takes the serve lock of the database file db: an exclusive
// flock on the file itself (package filelock), so that every name of the
// file, a hard link included, finds the same lock. db vacuum takes it too.
// The lock must stay held until the store on the file is closed: releasing
// it closes a descriptor of the database file, which drops SQLite's own
// locks in this process (see package filelock).
func lockServe(db string) (*filelock.Lock, error) {
	l, err := filelock.Acquire(db)
	if errors.Is(err, filelock.ErrLocked) {
		return nil, fmt.Errorf("another locrisk serve (or db vacuum) is already using the database %s (%w); "+
			"stop it first: two servers on one file would each apply the per-account rate limits and so double them "+
			"(accounts, keys, report and data commands may run beside the server)", db, err)
	}
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", db, err)
	}
	return l, nil
}

// sqliteStore is a database file's store as the commands use it.
type sqliteStore struct{ *sqlite.Store }

// purger gives the space a purge frees back to the file system by the
// file's incremental vacuum.
func (s sqliteStore) purger(cfg retention.Config) *retention.Purger {
	cfg.Reclaim = func(ctx context.Context) (int64, error) { return s.IncrementalVacuum(ctx, retention.VacuumStep) }
	return retention.New(s.Store, cfg)
}

// sqliteServe is the store serve runs on a database file.
type sqliteServe struct {
	sqliteStore
	path string
	// The views the requests and the readiness probe use: the same store
	// with shorter waits for another process's write lock.
	apiView   *sqlite.Store
	probeView *sqlite.Store
	lock      *filelock.Lock // the serve lock, released after the store is closed; nil if not held
}

// newSQLiteServe is st, the store on the file path, as serve runs on it.
// A request's write waits at most server.DefaultDBBusyWait for another
// process's lock before it is answered 503 database_busy, and GET
// /readyz's probe at most server.ReadyDBWait (docs/operations.md, Limits
// and defaults), while the workers keep the store's own, longer wait.
func newSQLiteServe(path string, st *sqlite.Store, lock *filelock.Lock) *sqliteServe {
	return &sqliteServe{sqliteStore: sqliteStore{st}, path: path, lock: lock,
		apiView: st.WithBusyWait(server.DefaultDBBusyWait), probeView: st.WithBusyWait(server.ReadyDBWait)}
}

func (s *sqliteServe) api() server.Store         { return s.apiView }
func (s *sqliteServe) probe() server.WriteProber { return s.probeView }

// rateLimiter is nil: the one server on the file counts in memory.
func (s *sqliteServe) rateLimiter() server.RateLimiter { return nil }

// releaseLeftLeases hands back the leases the server before this one left
// in the database (killed, or its machine lost), before the workers start:
// its webhook deliveries are due again at once and its jobs are taken over
// at once, instead of each waiting out its lease (30 s by default), during
// which the deliveries would also count against their endpoint's and
// account's attempts in flight and so hold up that endpoint's and that
// account's other deliveries after a restart. serve may: it holds the
// file's exclusive lock (lockServe), so no other server uses these leases
// (store.ReleaseLeftLeases; docs/operations.md, Webhook delivery). Leases
// of servers of earlier versions, whose job workers had no prefix of
// their own, still expire as before. A failure is only logged: the leases
// then expire as they always did.
func (s *sqliteServe) releaseLeftLeases(ctx context.Context, log *slog.Logger) {
	left, err := s.ReleaseLeftLeases(ctx, serveJobOwner, time.Now())
	switch {
	case err != nil:
		log.Warn("could not release the leases a previous server left; they expire as usual", "err", err)
	case left.Jobs > 0 || left.Deliveries > 0:
		log.Info("released the leases a previous server left", "jobs", left.Jobs, "webhook_deliveries", left.Deliveries)
	}
}

// adviseVacuum: a file created before incremental vacuum was the default
// keeps the pages a purge frees for reuse instead of returning them
// (docs/operations.md, "Limits and defaults").
func (s *sqliteServe) adviseVacuum(ctx context.Context, log *slog.Logger) {
	if f, err := s.FileStats(ctx); err == nil && !f.IncrementalOK {
		log.Warn("the database file does not give space back after purges; run 'locrisk db vacuum' once with the server stopped",
			"db", s.path, "auto_vacuum", f.AutoVacuum)
	}
}

// Close closes the store, then releases the serve lock.
func (s *sqliteServe) Close() error {
	err := s.Store.Close()
	return errors.Join(err, s.lock.Unlock())
}
