package store

import (
	"errors"
	"fmt"

	"modernc.org/sqlite"
)

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
)

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

// busy marks SQLite's SQLITE_BUSY and SQLITE_LOCKED results with ErrBusy.
func busy(err error) error {
	if isBusy(err) && !errors.Is(err, ErrBusy) {
		return fmt.Errorf("%w: %w", ErrBusy, err)
	}
	return err
}

// isBusy reports whether err is SQLite's "database is locked" (primary
// result code SQLITE_BUSY, or SQLITE_LOCKED, in any of their extended
// forms).
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqliteBusy || c == sqliteLocked
}

// SQLite primary result codes (sqlite3.h) the store gives a meaning to.
const (
	sqliteBusy    = 5
	sqliteLocked  = 6
	sqliteCorrupt = 11
	sqliteNotADB  = 26
)
