// Package filelock takes an exclusive, advisory lock on a file for the life
// of a process. locrisk serve holds one beside its database so that a
// second server on the same file is refused (README.md, Limits and
// defaults): two servers would each apply the per-account rate limit,
// which lives in memory, and so double it.
//
// The lock is the operating system's (flock(2) on Unix), not a marker file:
// it ends with the process however the process ends, so a server killed
// with SIGKILL leaves no stale lock behind. The lock file itself is left in
// place; removing it while another process waits on it would let two
// processes hold locks on two different files of the same name.
package filelock

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrLocked is returned by Acquire when another process holds the lock.
var ErrLocked = errors.New("locked by another process")

// Lock is a held lock. Release it with Unlock, or let the process end.
type Lock struct {
	f *os.File
}

// Acquire takes the lock on path, creating the file with mode 0600 if it is
// absent, without waiting: if another process holds it, the error wraps
// ErrLocked and, when that process wrote it, names its process id. The
// holder's process id is written into the file for that message.
func Acquire(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, ErrLocked) {
			if pid := holder(path); pid > 0 {
				return nil, fmt.Errorf("%s: %w (process %d)", path, ErrLocked, pid)
			}
			return nil, fmt.Errorf("%s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The process id is a courtesy for the message above; the lock does
	// not depend on it, so failing to write it is not an error.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// holder is the process id written in the lock file, 0 if there is none.
func holder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Unlock releases the lock. The file stays (see the package comment).
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
