package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/locrisk/locrisk"
)

// TestStorageFull fills the database to its page limit (SetMaxPages, as a
// full disk would refuse the file's growth): writes then fail with
// ErrStorageFull, single statements and group commits alike, while reads
// go on; the write probe of GET /readyz fails too, though it writes
// nothing (before, it took the lock, rolled back and passed); once room
// returns, the probe passes and writes succeed again, and every write that
// was acknowledged is in the file after a restart, none of those refused.
func TestStorageFull(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "full.db")
	s := openStore(t, path, Options{})
	acct, err := s.CreateAccount(ctx, "full", 1<<30, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ProbeWrite(ctx); err != nil {
		t.Fatalf("probe with room: %v", err)
	}
	if err := s.SetMaxPages(ctx, 1); err != nil { // no page beyond the file's
		t.Fatal(err)
	}

	// Job creations from 16 goroutines (so they share group commits)
	// until each has been refused many times in a row.
	var mu sync.Mutex
	accepted := map[string]bool{}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			inARow := 0
			for i := 0; i < 20000 && inARow < 50; i++ {
				j, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: acct.ID, Latitude: float64(g), Longitude: float64(i)}, t0)
				switch {
				case err == nil:
					mu.Lock()
					accepted[j.ID] = true
					mu.Unlock()
					inARow = 0
				case errors.Is(err, locrisk.ErrStorageFull):
					inARow++
				default:
					t.Errorf("job creation on a full database: %v, want ErrStorageFull", err)
					return
				}
			}
			if inARow < 50 {
				t.Errorf("goroutine %d: job creations kept succeeding at the page limit", g)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// A single-statement write (withWriteLock) is refused the same way.
	refused := false
	for i := 0; i < 5000 && !refused; i++ {
		_, err := s.CreateAccount(ctx, fmt.Sprint("more ", i), 1, 1)
		if err != nil && !errors.Is(err, locrisk.ErrStorageFull) {
			t.Fatalf("account creation on a full database: %v", err)
		}
		refused = err != nil
	}
	if !refused {
		t.Error("account creations kept succeeding at the page limit")
	}
	if err := s.ProbeWrite(ctx); !errors.Is(err, locrisk.ErrStorageFull) {
		t.Errorf("probe on a full database: %v, want ErrStorageFull", err)
	}
	if _, err := s.GetAccount(ctx, acct.ID); err != nil {
		t.Errorf("read on a full database: %v", err)
	}

	// Room returns.
	if err := s.SetMaxPages(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.ProbeWrite(ctx); err != nil {
		t.Errorf("probe once room returned: %v", err)
	}
	j, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: acct.ID, Latitude: 1, Longitude: 1}, t0)
	if err != nil {
		t.Fatalf("job creation once room returned: %v", err)
	}
	accepted[j.ID] = true

	s.Close()
	s = openStore(t, path, Options{})
	var ids []string
	if err := s.db.Select(&ids, `SELECT id FROM report_jobs`); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if !accepted[id] {
			t.Errorf("job %s is in the file, but its creation was refused", id)
		}
		delete(accepted, id)
	}
	for id := range accepted {
		t.Errorf("job %s was acknowledged, but is not in the file", id)
	}
	t.Logf("%d jobs acknowledged at the page limit, all kept", len(ids))
}

// TestProbeFindsRoomAlone: a store full for want of room, to which
// nothing else writes, becomes writable by its readiness probe alone once
// room returns; the probe does not clear the state while there is none.
func TestProbeFindsRoomAlone(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	s.room.proven.Store(false) // a write was refused
	if err := s.SetMaxPages(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := s.ProbeWrite(ctx); !errors.Is(err, locrisk.ErrStorageFull) {
			t.Fatalf("probe at the page limit: %v, want ErrStorageFull", err)
		}
	}
	if err := s.SetMaxPages(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.ProbeWrite(ctx); err != nil {
		t.Fatalf("probe once room returned: %v", err)
	}
	if s.room.isFull() {
		t.Error("the store is still full after a probe found room")
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(storePath(t, s)), "*.room-*"))
	if len(matches) > 0 {
		t.Errorf("the probe left %v behind", matches)
	}
}

// TestRoomIsProvenNotAssumed: a store just opened is unproven until its
// probe has written real bytes; a write that commits does not prove room
// (SQLite may fit it into free pages, or it may change nothing), so after
// a refused write only the probe makes the store ready again.
func TestRoomIsProvenNotAssumed(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	if !s.room.isFull() {
		t.Fatal("a store just opened counts its room as proven")
	}
	if err := s.ProbeWrite(ctx); err != nil || s.room.isFull() {
		t.Fatalf("first probe: %v, full %v", err, s.room.isFull())
	}
	s.room.noteWrite(false, fmt.Errorf("insert: %w", locrisk.ErrStorageFull))
	if !s.room.isFull() {
		t.Fatal("a refused write left the room proven")
	}
	s.room.noteWrite(true, nil)
	if !s.room.isFull() {
		t.Error("a committed write proved room")
	}
	if err := s.ProbeWrite(ctx); err != nil || s.room.isFull() {
		t.Errorf("probe with room: %v, full %v", err, s.room.isFull())
	}
}
