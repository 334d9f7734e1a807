// Package filelock takes an exclusive, advisory lock on a file for the life
// of a process. locrisk serve (and db vacuum) hold one on the database file
// itself so that a second server on the same file is refused (docs/operations.md,
// Limits and defaults): two servers would each apply the per-account rate
// limit, which lives in memory, and so double it, and a vacuum under a
// running server would lock out its writers for the whole rewrite.
//
// The lock is the operating system's (flock(2) on Unix), not a marker file:
// it ends with the process however the process ends, so a server killed
// with SIGKILL leaves no stale lock behind. It belongs to the file, not to
// its name, so every name of the file (a symbolic link, a hard link, a
// relative path) finds the same lock.
//
// Locking the database file beside SQLite is safe because flock locks and
// the POSIX (fcntl) record locks SQLite takes are separate on Linux, macOS
// and the BSDs. One rule must be kept: closing any descriptor of a file
// drops every POSIX lock the process holds on it, SQLite's included. So a
// Lock's descriptor stays open until Unlock, and Unlock must come only
// after the process's database handles on the file are closed. Nothing is
// ever written to the file.
package filelock

import (
	"errors"
	"fmt"
	"os"
)

// ErrLocked is returned by Acquire when another process holds the lock.
var ErrLocked = errors.New("locked by another process")

// Lock is a held lock. Release it with Unlock, or let the process end.
type Lock struct {
	f *os.File
}

// Acquire takes the lock on the file at path, creating it empty with mode
// 0600 if it is absent, without waiting: if another process (or another
// Acquire in this one) holds it, the error wraps ErrLocked. The file is
// opened read-only and never written.
func Acquire(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s to lock it: %w", path, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, ErrLocked) {
			return nil, fmt.Errorf("%s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock and closes the descriptor, which also drops the
// process's POSIX locks on the file (see the package comment): call it
// only after the database on the file is closed.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unlockFile(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
