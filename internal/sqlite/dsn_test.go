package sqlite

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
)

// A connection the pool opens while another one holds the write lock
// serves reads at once: opening a connection needs no write lock.
func TestNewConnectionReadsBesideWriter(t *testing.T) {
	s := newStore(t, Options{MaxOpenConns: 8})
	ctx := context.Background()
	tx, err := s.db.BeginTxx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET name = name`); err != nil {
		t.Fatal(err)
	}
	var released atomic.Bool
	time.AfterFunc(time.Second, func() { released.Store(true); tx.Rollback() })
	before := s.db.Stats().OpenConnections
	// Hold seven connections at once (more than the idle ones), so most
	// of them must be opened now, while the writer holds its lock.
	conns := make([]*sqlx.Conn, 0, 7)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 7 {
		c, err := s.db.Connx(ctx)
		if err != nil {
			t.Fatalf("open a connection beside a writer: %v", err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		var n int
		if err := c.GetContext(ctx, &n, `SELECT COUNT(*) FROM api_keys`); err != nil {
			t.Errorf("read beside a writer: %v", err)
		}
	}
	if released.Load() {
		t.Error("opening or reading on a new connection waited for the writer")
	}
	if after := s.db.Stats().OpenConnections; after <= before {
		t.Errorf("no new connection was opened (%d, then %d)", before, after)
	}
}

// A new file is created with incremental auto-vacuum, also when Open
// checks its integrity first.
func TestNewFileIsIncremental(t *testing.T) {
	for _, check := range []bool{false, true} {
		s, err := OpenWith(context.Background(), t.TempDir()+"/new.db", Options{IntegrityCheck: check})
		if err != nil {
			t.Fatal(err)
		}
		f, err := s.FileStats(context.Background())
		s.Close()
		if err != nil || !f.IncrementalOK {
			t.Errorf("integrity check %v: %+v %v, want an incremental file", check, f, err)
		}
	}
}
