package main

// How the commands open the database: the store applies its own migrations;
// every process that can finish a job registers the webhook outbox; the
// engine gives the store its reader of stored reports.

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/outbox"
	"github.com/locrisk/locrisk/internal/secretbox"
	"github.com/locrisk/locrisk/internal/sqlite"
)

// openStore is openStoreNotify without a wake-up: a running server's
// delivery worker finds the events at its next poll.
func (c *cli) openStore(path string) (*sqlite.Store, error) { return c.openStoreNotify(path, nil) }

// openExistingStore is openStore for the commands that only read or change
// a database that must already be there (db purge, db vacuum, keys,
// report): a missing file is refused rather than created empty, so that a
// mistyped --db says so instead of reporting on an empty database. Only
// serve and accounts create, the documented first step, create the file.
func (c *cli) openExistingStore(path string) (*sqlite.Store, error) {
	if err := checkDatabaseExists(path); err != nil {
		return nil, err
	}
	return c.openStore(path)
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

// openStoreNotify opens the database with the webhook outbox registered, so
// that every process that can finish a job (serve, and report with its own
// worker) records the job's webhook events. wake rouses this process's
// delivery worker; without one (nil), a running server's worker finds the
// events at its next poll.
func (c *cli) openStoreNotify(path string, wake func()) (*sqlite.Store, error) {
	return c.openStoreWith(path, sqlite.Options{OnJobFinal: []locrisk.JobFinalHook{outbox.Hook(wake)}})
}

// openStoreWith opens the database with opt. A damaged file is refused with a message that names it and says what to
// do.
func (c *cli) openStoreWith(path string, opt sqlite.Options) (*sqlite.Store, error) {
	if path == "" {
		return nil, usagef("--db is empty")
	}
	st, err := sqlite.OpenWith(c.ctx, path, opt)
	if errors.Is(err, sqlite.ErrCorrupt) {
		return nil, fmt.Errorf("refusing to use the damaged database file %s: %w; "+
			"stop every process using it, keep a copy, and restore the file from a backup "+
			"(sqlite3's .recover command may salvage rows into a new file; see docs/operations.md, The database file)", path, err)
	}
	return st, err
}

// openServeStore is openStoreNotify for serve: it also checks the file's
// integrity (PRAGMA quick_check) before serving from it, which reads the
// whole file and so is left out of the short commands, and it seals the
// webhook signing secrets with the key of keyFile (serveSecrets). obs,
// if not nil, watches the store's writers (serve's metrics).
func (c *cli) openServeStore(path, keyFile string, wake func(), obs sqlite.Observer, log *slog.Logger) (*sqlite.Store, error) {
	return c.openSealedWith(path, keyFile, sqlite.Options{
		OnJobFinal:     []locrisk.JobFinalHook{outbox.Hook(wake)},
		IntegrityCheck: true,
		Observer:       obs,
	}, log)
}

// openSealedWith opens the database with opt and the box of the secret key
// file (serveSecrets: keyFile, else beside the database, created the first
// time), as serve does and `locrisk report`, which signs what it prints.
func (c *cli) openSealedWith(path, keyFile string, opt sqlite.Options, log *slog.Logger) (*sqlite.Store, error) {
	keyPath := keyFileOrDefault(path, keyFile)
	box, created, err := serveSecrets(path, keyFile)
	if err != nil {
		return nil, err
	}
	opt.Secrets = box
	st, err := c.openStoreWith(path, opt)
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

// keyFileOrDefault is the secret key file serve uses: the one given, or
// the database's name with ".key" added.
func keyFileOrDefault(db, keyFile string) string {
	if keyFile != "" {
		return keyFile
	}
	return db + ".key"
}

// loadSecrets is the box of an existing key file: keyFile, or db + ".key".
func loadSecrets(db, keyFile string) (*secretbox.Box, error) {
	path := keyFileOrDefault(db, keyFile)
	key, err := secretbox.LoadKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: the secret key file that seals the database's secrets is needed; "+
			"give the one serve uses with --secret-key-file", err)
	}
	if err != nil {
		return nil, err
	}
	return secretbox.New(key)
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
