package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/locrisk/locrisk"
)

// damagedCopy makes a database with some rows, closes it, and returns the
// path of a copy that damage has changed.
func damagedCopy(t *testing.T, damage func([]byte) []byte) string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	s, err := Open(ctx, good)
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		if _, err := s.CreateAccount(ctx, "an account with a name long enough to fill pages", 10, 60); err != nil {
			t.Fatal(err)
		}
	}
	// A checkpoint moves everything from the WAL into the file.
	if _, err := s.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.db")
	if err := os.WriteFile(bad, damage(b), 0o600); err != nil {
		t.Fatal(err)
	}
	return bad
}

// TestIntegrityCheckRefusesDamage: a file that is not a database, or whose
// pages were overwritten, is refused with ErrCorrupt when IntegrityCheck is
// asked for; an intact one opens.
func TestIntegrityCheckRefusesDamage(t *testing.T) {
	const pageSize = 4096
	tests := []struct {
		name    string
		damage  func([]byte) []byte
		corrupt bool
	}{
		{"intact", func(b []byte) []byte { return b }, false},
		{"garbage", func(b []byte) []byte {
			for i := range b {
				b[i] = byte(i*7 + 3)
			}
			return b
		}, true},
		{"pages overwritten", func(b []byte) []byte {
			// Every page after the first keeps its place but loses its
			// contents: the schema still reads, the b-trees do not.
			for i := pageSize; i < len(b); i++ {
				b[i] = 0xA5
			}
			return b
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := damagedCopy(t, tt.damage)
			s, err := OpenWith(context.Background(), path, Options{IntegrityCheck: true})
			if s != nil {
				s.Close()
			}
			if got := errors.Is(err, ErrCorrupt); got != tt.corrupt {
				t.Fatalf("OpenWith: %v; ErrCorrupt = %v, want %v", err, got, tt.corrupt)
			}
		})
	}
}

// TestBusyWaitAnswersErrBusy: while another connection holds the write lock
// (BEGIN IMMEDIATE, as a sqlite3 shell would), a write through a view with
// a short busy wait fails with ErrBusy after about that wait, not after
// DefaultBusyWait, and the view's connection gets the default back.
func TestBusyWaitAnswersErrBusy(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "busy.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	release := foreignLock(t, s)

	v := s.WithBusyWait(100 * time.Millisecond)
	start := time.Now()
	_, _, err = v.CreateKey(ctx, locrisk.NewKey{AccountID: "acc_none", Scopes: locrisk.AllScopes()})
	took := time.Since(start)
	if !errors.Is(err, locrisk.ErrBusy) {
		t.Fatalf("CreateKey while locked: %v, want ErrBusy", err)
	}
	// Well below DefaultBusyWait; generous for a loaded machine.
	if took >= DefaultBusyWait {
		t.Errorf("CreateKey took %s, want less than %s", took, DefaultBusyWait)
	}

	release()
	if _, err := v.CreateAccount(ctx, "after", 1, 1); err != nil {
		t.Fatalf("write after the lock is gone: %v", err)
	}
	var ms int
	if err := s.db.GetContext(ctx, &ms, "PRAGMA busy_timeout"); err != nil {
		t.Fatal(err)
	}
	if ms != int(DefaultBusyWait.Milliseconds()) {
		t.Errorf("pool busy_timeout = %d ms after the view's transaction, want %d", ms, DefaultBusyWait.Milliseconds())
	}
}

// TestConnectionsOpenWhileLocked: while a connection holds the write lock
// (a writer of this process, or another process), the pool still opens new
// connections and reads on them, and a view's write fails with ErrBusy,
// not with an unmarked SQLITE_BUSY from opening its connection (which the
// server answered 500). A connection's opening pragmas must not need the
// write lock (dsn); a new file is still created with incremental vacuum.
func TestConnectionsOpenWhileLocked(t *testing.T) {
	ctx := context.Background()
	s, err := OpenWith(ctx, filepath.Join(t.TempDir(), "open.db"), Options{MaxOpenConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if f, err := s.FileStats(ctx); err != nil || !f.IncrementalOK {
		t.Fatalf("a new file: %+v, %v; want incremental vacuum", f, err)
	}
	locker, err := s.db.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	if _, err := locker.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer locker.ExecContext(ctx, "ROLLBACK")

	// Take every other connection the pool allows, so that some are new.
	var conns []*sqlx.Conn
	for range 7 {
		c, err := s.db.Connx(ctx)
		if err != nil {
			t.Fatalf("opening a connection while the write lock is held: %v", err)
		}
		conns = append(conns, c)
		var n int
		if err := c.GetContext(ctx, &n, "SELECT count(*) FROM accounts"); err != nil {
			t.Fatalf("reading on it: %v", err)
		}
	}
	for _, c := range conns {
		c.Close()
	}
	// Make the pool open a new connection for the view's transaction.
	s.db.SetMaxIdleConns(0)
	s.db.SetMaxIdleConns(8)
	err = s.WithBusyWait(50*time.Millisecond).WithTx(ctx, func(context.Context, *sqlx.Tx) error { return nil })
	if !errors.Is(err, locrisk.ErrBusy) {
		t.Fatalf("a view's write under the lock: %v, want ErrBusy", err)
	}
}

// TestWriteQueueIsNotBusy: waiting for the write slot behind this
// process's own writers is not a busy database. Many writes at once
// through a view with a short busy wait all succeed, however long the
// queue (before, every write queued longer than the busy wait failed with
// ErrBusy); past the queue wait a write fails with ErrWriteQueue, not
// ErrBusy; while another connection holds SQLite's lock, the writes queued
// behind the stuck holder fail with ErrBusy long before the queue wait.
func TestWriteQueueIsNotBusy(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	const hold = 2 * time.Millisecond // each write, a slow-ish store

	t.Run("own load", func(t *testing.T) {
		const writers = 120
		v := s.WithBusyWait(20 * time.Millisecond)
		errs := make(chan error, writers)
		for i := range writers {
			go func() {
				errs <- v.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
					time.Sleep(hold)
					_, err := tx.ExecContext(ctx, "INSERT INTO accounts (id, name, monthly_quota, rate_limit_per_minute, created_utc) VALUES (?, 'q', 1, 1, ?)",
						fmt.Sprintf("acct_q%d", i), FormatTime(time.Now()))
					return err
				})
			}()
		}
		var failed []error
		for range writers {
			if err := <-errs; err != nil {
				failed = append(failed, err)
			}
		}
		if len(failed) > 0 {
			t.Errorf("%d of %d queued writes failed, first: %v", len(failed), writers, failed[0])
		}
	})

	t.Run("queue wait", func(t *testing.T) {
		held := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- s.WithTx(ctx, func(context.Context, *sqlx.Tx) error { close(held); time.Sleep(300 * time.Millisecond); return nil })
		}()
		<-held
		err := s.WithBusyWait(10*time.Millisecond).WithQueueWait(60*time.Millisecond).WithTx(ctx, func(context.Context, *sqlx.Tx) error { return nil })
		if !errors.Is(err, locrisk.ErrWriteQueue) || errors.Is(err, locrisk.ErrBusy) {
			t.Errorf("write queued past the queue wait: %v, want ErrWriteQueue", err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("another process's lock", func(t *testing.T) {
		conn, err := s.db.Connx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
		const writers = 20
		v := s.WithBusyWait(100 * time.Millisecond).WithQueueWait(time.Minute)
		errs := make(chan error, writers)
		start := time.Now()
		for range writers {
			go func() { errs <- v.WithTx(ctx, func(context.Context, *sqlx.Tx) error { return nil }) }()
		}
		for range writers {
			if err := <-errs; !errors.Is(err, locrisk.ErrBusy) {
				t.Errorf("write under another connection's lock: %v, want ErrBusy", err)
			}
		}
		// Nowhere near the minute of queue wait: the queue saw the holder
		// held up (the bound is loose for a loaded machine).
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("the queued writes took %s to fail", took)
		}
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
	})
}
