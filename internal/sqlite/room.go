package sqlite

// Room to write. A full disk (or a user's quota, or the database's page
// limit) makes SQLite refuse writes with SQLITE_FULL, which the store
// answers as ErrStorageFull (errors.go, full). Reads go on. The readiness
// check (GET /readyz, ProbeWrite) must then say that the database takes
// no write, but taking the write lock and rolling back writes not a byte,
// which a full disk does not refuse; nor does a write that SQLite fits
// into free pages, or one that changes nothing. So readiness is proven,
// not assumed: from the store's opening, and again from any write refused
// for want of room, the store is unproven, and ProbeWrite writes and syncs
// a small file beside the database (real room on the file system) before
// it says ready. Every probe also asks the file system how much room is
// left (statfs, room_unix.go), which costs nothing, so a disk filled by
// another program is seen before a write fails (docs/api.md, Health and
// version; docs/operations.md, The database file). A server no client
// writes to, because it reports not ready, still finds out when space
// returns.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"

	"github.com/jmoiron/sqlx"
	"github.com/locrisk/locrisk"
)

// room is what the store knows of its room to write.
type room struct {
	// proven: since the store opened, and since the last write refused
	// for want of room, a probe has written and synced real bytes.
	proven atomic.Bool
	// need is the room the store must see free on its file system to
	// be ready, when more than probeRoom: what the engine's reference
	// needed and did not find on a first start (SaveReference).
	need atomic.Uint64
}

// isFull reports whether the store's room is unproven: a write was
// refused for want of room, or none has been proven since it opened.
func (r *room) isFull() bool { return !r.proven.Load() }

// noteWrite records the outcome of a write: failed with err, or
// committed. A committed write proves nothing (SQLite may have reused
// free pages, or changed nothing); a refused one unproves the room.
func (r *room) noteWrite(_ bool, err error) {
	if errors.Is(err, locrisk.ErrStorageFull) {
		r.proven.Store(false)
	}
}

// noteGroup records the outcome of a group commit (group.go): err is the
// group's own (nil when it committed), and each write has its own error.
// A group in which any write was refused for want of room leaves the
// store full, even when the others committed: the next write may need the
// room that one did.
func (r *room) noteGroup(err error, group []*groupWrite) {
	for _, w := range group {
		if errors.Is(w.err, locrisk.ErrStorageFull) {
			r.proven.Store(false)
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

// ProbeWrite checks that a write can happen now. It takes the database's
// write lock (BEGIN IMMEDIATE), checks that the database can take
// probeRoom more bytes of pages (PRAGMA max_page_count, counting free
// pages) and that the file system has that much room left (statfs), and
// gives the lock back with a rollback, so nothing is written to the
// database. While the store's room is unproven (since it opened, or since
// a write was refused for want of room; see room) it also writes and
// syncs a file of probeRoom bytes beside the database and removes it: only
// a write that succeeds proves room. It fails with ErrStorageFull while
// there is none. On a view from WithBusyWait it waits at most that long
// for a lock another process holds, then fails with ErrBusy. The
// readiness check (GET /readyz) uses it.
func (s *Store) ProbeWrite(ctx context.Context) error {
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if err := pageRoom(ctx, tx); err != nil {
			return err
		}
		return errProbeDone
	})
	if errors.Is(err, errProbeDone) {
		err = nil
	}
	if err == nil {
		err = diskRoom(s.path, s.room.need.Load())
	}
	if err == nil && s.room.isFull() {
		if err = fileRoom(s.path); err == nil {
			s.room.proven.Store(true)
		}
	}
	if errors.Is(err, locrisk.ErrStorageFull) {
		s.room.proven.Store(false)
	}
	if err != nil {
		return fmt.Errorf("write probe: %w", marked(err))
	}
	return nil
}

// diskRoom fails with ErrStorageFull when the file system that holds the
// database has less than probeRoom bytes left for this process, or less
// than need (the room a first start needed for the engine's reference and
// did not find); a file system that does not say is no evidence.
func diskRoom(path string, need uint64) error {
	free, ok := freeBytes(path)
	switch {
	case !ok:
		return nil
	case free < probeRoom:
		return fmt.Errorf("%w: %d bytes left on the file system of %s", locrisk.ErrStorageFull, free, filepath.Dir(path))
	case free < need:
		return fmt.Errorf("%w: %d MB left on the file system of %s, and the engine's reference needs %d MB to be saved",
			locrisk.ErrStorageFull, free>>20, filepath.Dir(path), need>>20)
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
		return fmt.Errorf("%w: the database is at its page limit (%d pages, %d free, limit %d)", locrisk.ErrStorageFull, pages, free, limit)
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
		return fmt.Errorf("%w: %w", locrisk.ErrStorageFull, err)
	}
	return err
}

// SetMaxPages sets SQLite's page limit (PRAGMA max_page_count) on every
// connection of the store; n <= 0 restores SQLite's own limit. A write
// that needs a page beyond it fails with SQLITE_FULL, as on a full disk
// (the limit cannot go below the pages the file has: set to fewer, it is
// the file's size). It exists for tests, which cannot fill a disk, to
// make the store full and give room back (internal/sqlite, cmd/locrisk);
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
