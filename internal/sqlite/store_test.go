package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/secretbox"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// newStore opens a fresh database in a temporary directory.
func newStore(t testing.TB, opt Options) *Store {
	t.Helper()
	return openStore(t, filepath.Join(t.TempDir(), "test.db"), opt)
}

// openStore opens the database at path, closed with the test (again, if
// the test closed it: Close may be called twice).
func openStore(t testing.TB, path string, opt Options) *Store {
	t.Helper()
	if opt.Now == nil {
		opt.Now = func() time.Time { return t0 }
	}
	if opt.Secrets == nil {
		opt.Secrets = testSecrets(t, 7)
	}
	s, err := OpenWith(context.Background(), path, opt)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// storePath is the file of s's database.
func storePath(t testing.TB, s *Store) string {
	t.Helper()
	var path string
	if err := s.db.Get(&path, `SELECT file FROM pragma_database_list WHERE name = 'main'`); err != nil {
		t.Fatal(err)
	}
	return path
}

// foreignLock holds SQLite's write lock from a database handle of its own
// (as another process, a sqlite3 shell inside BEGIN IMMEDIATE, would) until
// release is called, which rolls it back; the handle closes with the test.
func foreignLock(t *testing.T, s *Store) (release func()) {
	t.Helper()
	ctx := context.Background()
	other, err := sqlx.Open("sqlite", "file:"+storePath(t, s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	conn, err := other.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
				t.Errorf("release the foreign lock: %v", err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

func newAccount(t testing.TB, s *Store, quota int) locrisk.Account {
	t.Helper()
	a, err := s.CreateAccount(context.Background(), "Test account", quota, 600)
	if err != nil {
		t.Fatalf("create account: %v", err)
	}
	return a
}

func TestOpenMigratesOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	for i := range 2 {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("open #%d: %v", i+1, err)
		}
		var v int
		if err := s.db.GetContext(ctx, &v, "PRAGMA user_version"); err != nil {
			t.Fatal(err)
		}
		if v != SchemaVersion {
			t.Errorf("open #%d: user_version = %d, want %d", i+1, v, SchemaVersion)
		}
		var mode string
		if err := s.db.GetContext(ctx, &mode, "PRAGMA journal_mode"); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" {
			t.Errorf("journal_mode = %q, want wal", mode)
		}
		var fk int
		if err := s.db.GetContext(ctx, &fk, "PRAGMA foreign_keys"); err != nil {
			t.Fatal(err)
		}
		if fk != 1 {
			t.Errorf("foreign_keys = %d, want 1", fk)
		}
		var tables int
		if err := s.db.GetContext(ctx, &tables, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'`); err != nil {
			t.Fatal(err)
		}
		if tables != 23 {
			t.Errorf("open #%d: %d tables, want 23", i+1, tables)
		}
		if i == 0 {
			if _, err := s.CreateAccount(ctx, "kept", 5, 5); err != nil {
				t.Fatal(err)
			}
		} else {
			var n int
			if err := s.db.GetContext(ctx, &n, `SELECT COUNT(*) FROM accounts`); err != nil || n != 1 {
				t.Errorf("second open: %d accounts (err %v), want the 1 from the first", n, err)
			}
		}
		s.Close()
	}

	// A file from a newer binary is refused rather than written to.
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(ctx, path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("open of a version %d file: err = %v, want a 'newer' error", SchemaVersion+1, err)
	}
	// No schema (no migrations) on a new file is an error, not an empty
	// database. (An empty migration file is refused when the files are
	// read: TestLoadMigrations.)
	if _, err := openMigrated(ctx, filepath.Join(t.TempDir(), "e.db"), Options{}, nil); err == nil {
		t.Error("open with an empty schema succeeded")
	}
}

// A version 1 file (before quota_usage) is upgraded in place, and its
// quota counters are rebuilt from the jobs it holds.
func TestMigrateV1BackfillsQuotaUsage(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	a := newAccount(t, s, 10)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for range 3 {
		if _, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: a.ID, Bucket: locrisk.BucketAPI, Latitude: 1, Longitude: 2}, now); err != nil {
			t.Fatal(err)
		}
	}
	// Make it look like a version 1 file.
	undoMigration7(t, s)
	if _, err := s.db.ExecContext(ctx, `DROP TABLE quota_usage`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("open v1 file: %v", err)
	}
	defer s.Close()
	limit, used, err := quotaUsage(ctx, s.db, a.ID, now)
	if err != nil || limit != 10 || used != 3 {
		t.Fatalf("after upgrade: limit %d used %d err %v; want 10, 3", limit, used, err)
	}
	if _, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: a.ID, Bucket: locrisk.BucketAPI, Latitude: 1, Longitude: 2}, now); err != nil {
		t.Fatal(err)
	}
	if _, used, _ := quotaUsage(ctx, s.db, a.ID, now); used != 4 {
		t.Fatalf("used %d after one more job, want 4", used)
	}
}

func TestOpenPathWithURICharacters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a?b#c%d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "x.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not created at the literal path: %v", err)
	}
}

func TestTimeHelpers(t *testing.T) {
	tests := []struct {
		in                time.Time
		text              string
		monthStart, reset time.Time
	}{
		{t0, "2026-11-22T10:00:00.000Z", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 12, 31, 23, 59, 59, 999_999_999, time.UTC), "2026-12-31T23:59:59.999Z",
			time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		// A non-UTC input is converted: 01:30 at +02:00 is 23:30 UTC the month before.
		{time.Date(2027, 3, 1, 1, 30, 0, 0, time.FixedZone("x", 2*3600)), "2027-02-28T23:30:00.000Z",
			time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		if got := FormatTime(tt.in); got != tt.text {
			t.Errorf("FormatTime(%v) = %q, want %q", tt.in, got, tt.text)
		}
		back, err := ParseTime(tt.text)
		if err != nil || !back.Equal(tt.in.Truncate(time.Millisecond)) {
			t.Errorf("ParseTime(%q) = %v, %v", tt.text, back, err)
		}
		if got := locrisk.MonthStart(tt.in); !got.Equal(tt.monthStart) {
			t.Errorf("MonthStart(%v) = %v, want %v", tt.in, got, tt.monthStart)
		}
		if got := locrisk.NextMonthStart(tt.in); !got.Equal(tt.reset) {
			t.Errorf("NextMonthStart(%v) = %v, want %v", tt.in, got, tt.reset)
		}
	}
	if _, err := ParseTime("2026-11-22 10:00:00"); err == nil {
		t.Error("ParseTime accepted a malformed time")
	}
}

func TestAccounts(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	tests := []struct {
		name         string
		quota, limit int
		wantErr      bool
	}{
		{"Acme", 1000, 600, false},
		{"Zero quota", 0, 1, false},
		{"", 10, 10, true},
		{"   ", 10, 10, true},
		{"Negative", -1, 10, true},
		{"No rate", 10, 0, true},
	}
	for _, tt := range tests {
		a, err := s.CreateAccount(ctx, tt.name, tt.quota, tt.limit)
		if tt.wantErr {
			if !errors.Is(err, locrisk.ErrInvalid) {
				t.Errorf("CreateAccount(%q, %d, %d) err = %v, want ErrInvalid", tt.name, tt.quota, tt.limit, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("CreateAccount(%q): %v", tt.name, err)
		}
		if !strings.HasPrefix(a.ID, "acct_") || !a.CreatedUTC.Equal(t0) {
			t.Errorf("account = %+v", a)
		}
		got, err := s.GetAccount(ctx, a.ID)
		if err != nil || got != a {
			t.Errorf("GetAccount = %+v, %v; want %+v", got, err, a)
		}
	}
	if _, err := s.GetAccount(ctx, "acct_missing"); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("GetAccount(unknown) err = %v, want ErrNotFound", err)
	}
}

// The whole-transaction helper must hand back the callback's error intact.
func TestWithTxRollsBack(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	boom := errors.New("boom")
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, name, monthly_quota, rate_limit_per_minute, created_utc)
			VALUES ('acct_x', 'x', 1, 1, '2026-01-01T00:00:00.000Z')`); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if _, err := s.GetAccount(ctx, "acct_x"); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("row from a rolled back transaction is visible: %v", err)
	}
}

// Many goroutines writing at once must all succeed (no SQLITE_BUSY leaks
// through the write queue and busy timeout).
func TestConcurrentWritersNoBusy(t *testing.T) {
	s := newStore(t, Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.CreateAccount(context.Background(), "c", 1, 1)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent CreateAccount: %v", err)
		}
	}
}

// testSecrets is a box whose key is KeySize bytes of fill.
func testSecrets(t testing.TB, fill byte) *secretbox.Box {
	t.Helper()
	b, err := secretbox.New(bytes.Repeat([]byte{fill}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
