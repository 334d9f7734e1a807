package store

// Room to write. A full disk (or a user's quota, or the database's page
// limit) makes SQLite refuse writes with SQLITE_FULL, which the store
// answers as ErrStorageFull (errors.go, full). Reads go on. The readiness
// check (GET /readyz, ProbeWrite) must then say that the database takes
// no write, but its usual probe takes the write lock and rolls back
// without writing a byte, which a full disk does not refuse. So the store
// remembers the outcome of its writes: from a write refused for want of
// room until a write commits without one, it is full, and ProbeWrite,
// instead of answering from the lock alone, looks for room itself
// (docs/api.md, Health and version; docs/operations.md, The database
// file). That way a server no client writes to, because it reports not
// ready, still finds out when space returns.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"

	"github.com/jmoiron/sqlx"
)

// room is what the store's last writes said of its room to write.
type room struct {
	full atomic.Bool
}

// isFull reports whether a write was refused for want of room and none
// has committed since.
func (r *room) isFull() bool { return r.full.Load() }

// noteWrite records the outcome of a single-statement write:
// committed, or failed with err.
func (r *room) noteWrite(committed bool, err error) {
	switch {
	case errors.Is(err, ErrStorageFull):
		r.full.Store(true)
	case committed:
		r.full.Store(false)
	}
}

// noteGroup records the outcome of a group commit (group.go): err is the
// group's own (nil when it committed), and each write has its own error.
// A group in which any write was refused for want of room leaves the
// store full, even when the others committed: the next write may need the
// room that one did.
func (r *room) noteGroup(err error, group []*groupWrite) {
	for _, w := range group {
		if errors.Is(w.err, ErrStorageFull) {
			r.full.Store(true)
			return
		}
	}
	r.noteWrite(err == nil, err)
}

// probeRoom is the room ProbeWrite asks for while the store is full: in
// the database (pages below its limit, or free in the file), and on the
// file system beside it. It is about what a group commit of a few dozen
// jobs appends to the write-ahead log.
const probeRoom = 64 << 10

// errProbeDone ends ProbeWrite's transaction with a rollback.
var errProbeDone = errors.New("probe done")

// ProbeWrite checks that a write can happen now. Normally it takes the
// database's write lock (BEGIN IMMEDIATE) and gives it back with a
// rollback, so nothing is written and the file does not grow. While the
// store is full (a write was refused for want of room and none has
// committed since, see room) that proves nothing, so it also looks for
// probeRoom bytes of room: below the database's page limit (PRAGMA
// max_page_count, counting free pages) and on the file system, by writing
// and syncing a file of that size beside the database and removing it. It
// fails with ErrStorageFull while there is none; once there is, the store
// is no longer full. On a view from WithBusyWait it waits at most that
// long for a lock another process holds, then fails with ErrBusy. The
// readiness check (GET /readyz) uses it.
func (s *Store) ProbeWrite(ctx context.Context) error {
	wasFull := s.room.isFull()
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if wasFull {
			if err := pageRoom(ctx, tx); err != nil {
				return err
			}
		}
		return errProbeDone
	})
	if errors.Is(err, errProbeDone) {
		err = nil
	}
	if err == nil && wasFull {
		if err = fileRoom(s.path); err == nil {
			s.room.full.Store(false)
		}
	}
	if err != nil {
		return fmt.Errorf("write probe: %w", marked(err))
	}
	return nil
}

// pageRoom fails with ErrStorageFull when the database cannot take
// probeRoom more bytes of pages: its page limit, less the pages it has,
// plus the free ones it would reuse.
func pageRoom(ctx context.Context, tx *sqlx.Tx) error {
	var limit, pages, free, size int64
	for _, p := range []struct {
		pragma string
		dst    *int64
	}{{"max_page_count", &limit}, {"page_count", &pages}, {"freelist_count", &free}, {"page_size", &size}} {
		if err := tx.GetContext(ctx, p.dst, "PRAGMA "+p.pragma); err != nil {
			return fmt.Errorf("read %s: %w", p.pragma, err)
		}
	}
	if room := (limit - pages + free) * size; room < probeRoom {
		return fmt.Errorf("%w: the database is at its page limit (%d pages, %d free, limit %d)", ErrStorageFull, pages, free, limit)
	}
	return nil
}

// fileRoom writes probeRoom bytes to a new file in the database's
// directory, syncs and removes it: the file system has room for the
// write-ahead log to grow. No space (or no quota) left is ErrStorageFull.
func fileRoom(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".room-*")
	if err != nil {
		return noSpace(err)
	}
	_, err = f.Write(make([]byte, probeRoom))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if rerr := os.Remove(f.Name()); err == nil {
		err = rerr
	}
	return noSpace(err)
}

// noSpace marks the file system's "no space left" and "quota exceeded"
// with ErrStorageFull.
func noSpace(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", ErrStorageFull, err)
	}
	return err
}

// SetMaxPages sets SQLite's page limit (PRAGMA max_page_count) on every
// connection of the store; n <= 0 restores SQLite's own limit. A write
// that needs a page beyond it fails with SQLITE_FULL, as on a full disk
// (the limit cannot go below the pages the file has: set to fewer, it is
// the file's size). It exists for tests, which cannot fill a disk, to
// make the store full and give room back (internal/store, cmd/locrisk);
// serve never calls it. The limit belongs to each connection, so it takes
// every connection of the pool at once: call it with no write in hand.
func (s *Store) SetMaxPages(ctx context.Context, n int64) error {
	if n <= 0 {
		n = sqliteMaxPages
	}
	conns := make([]*sqlx.Conn, 0, s.db.Stats().MaxOpenConnections)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range cap(conns) {
		c, err := s.db.Connx(ctx)
		if err != nil {
			return fmt.Errorf("set max pages: %w", err)
		}
		conns = append(conns, c)
		if _, err := c.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", n)); err != nil {
			return fmt.Errorf("set max pages: %w", err)
		}
	}
	return nil
}

// sqliteMaxPages is SQLite's own page limit (SQLITE_MAX_PAGE_COUNT).
const sqliteMaxPages = 0xfffffffe
