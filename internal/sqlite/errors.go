package sqlite

import (
	"errors"
	"fmt"

	"github.com/locrisk/locrisk"
	"modernc.org/sqlite"
)

// Errors of the SQLite store only; the domain errors are in the root
// package (errors.go).
var (
	// ErrCorrupt is returned by Open when the file is not a SQLite
	// database or fails its integrity check (Options.IntegrityCheck).
	ErrCorrupt = errors.New("database file is damaged")
	// ErrNoSecretKey: the store was opened without Options.Secrets and
	// was asked to seal or open a webhook signing secret or a report
	// signing key.
	ErrNoSecretKey = errors.New("no secret key to seal webhook signing secrets and report signing keys with")
	// ErrSecretKey: the key given does not open the webhook signing
	// secrets or report signing keys already in the database.
	ErrSecretKey = errors.New("the secret key does not open the webhook signing secrets or report signing keys in this database")
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

// marked gives the SQLite results that the domain has words for their
// domain error: busy, then full. Every write's error passes through it
// (inTx, runGroup, withWriteLock).
func marked(err error) error { return full(busy(err)) }

// full marks SQLite's "database or disk is full" (SQLITE_FULL, in any of
// its extended forms) with ErrStorageFull. SQLite answers it when the file
// system refuses to grow a file (ENOSPC, a quota) and when the database
// reaches its page limit (PRAGMA max_page_count). modernc.org/sqlite
// reports it as a *sqlite.Error whose Code() is 13.
func full(err error) error {
	if isFull(err) && !errors.Is(err, locrisk.ErrStorageFull) {
		return fmt.Errorf("%w: %w", locrisk.ErrStorageFull, err)
	}
	return err
}

// isFull reports whether err is SQLite's SQLITE_FULL.
func isFull(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqliteFull
}

// busy marks SQLite's SQLITE_BUSY and SQLITE_LOCKED results with ErrBusy.
func busy(err error) error {
	if isBusy(err) && !errors.Is(err, locrisk.ErrBusy) {
		return fmt.Errorf("%w: %w", locrisk.ErrBusy, err)
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
	sqliteFull    = 13
	sqliteNotADB  = 26
)
