package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/locrisk/locrisk"
)

// The migration files on disk and in the binary are well formed, numbered
// 001.. without gaps, and end at SchemaVersion. Reading the directory (not
// only the embedded *.sql) also catches a stray file such as 004_x.SQL that
// the embed pattern would silently leave out.
func TestMigrationFiles(t *testing.T) {
	onDisk, err := loadMigrations(os.DirFS("migrations"))
	if err != nil {
		t.Fatalf("migrations/: %v", err)
	}
	embedded, err := embeddedMigrations()
	if err != nil {
		t.Fatalf("embedded migrations: %v", err)
	}
	if len(onDisk) != len(embedded) {
		t.Fatalf("%d migration files on disk, %d embedded", len(onDisk), len(embedded))
	}
	for i, m := range embedded {
		if m.version != i+1 || m.name != onDisk[i].name || m.sql != onDisk[i].sql {
			t.Errorf("embedded migration %d is %s (version %d), on disk %s", i, m.name, m.version, onDisk[i].name)
		}
	}
	if last := embedded[len(embedded)-1].version; last != SchemaVersion {
		t.Errorf("last migration %d, SchemaVersion %d", last, SchemaVersion)
	}
}

func TestLoadMigrations(t *testing.T) {
	file := func(sql string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(sql)} }
	ok := file("CREATE TABLE t (x);")
	tests := []struct {
		name  string
		files fstest.MapFS
		want  []string // file names in order; nil: an error containing errPart
		err   string
	}{
		{"in order", fstest.MapFS{"002_b.sql": ok, "001_a.sql": ok, "003_c.sql": ok}, []string{"001_a.sql", "002_b.sql", "003_c.sql"}, ""},
		{"four digits", fstest.MapFS{"0001_a.sql": ok, "002_b.sql": ok}, []string{"0001_a.sql", "002_b.sql"}, ""},
		{"gap", fstest.MapFS{"001_a.sql": ok, "003_c.sql": ok}, nil, "expected number 002"},
		{"duplicate", fstest.MapFS{"001_a.sql": ok, "002_b.sql": ok, "002_c.sql": ok}, nil, "same number"},
		{"not from 001", fstest.MapFS{"002_b.sql": ok}, nil, "expected number 001"},
		{"zero", fstest.MapFS{"000_a.sql": ok, "001_b.sql": ok}, nil, "bad number"},
		{"short number", fstest.MapFS{"001_a.sql": ok, "2_b.sql": ok}, nil, "NNN_description.sql"},
		{"dash", fstest.MapFS{"001-a.sql": ok}, nil, "NNN_description.sql"},
		{"other file", fstest.MapFS{"001_a.sql": ok, "README.md": file("x")}, nil, "NNN_description.sql"},
		{"directory", fstest.MapFS{"001_a.sql": ok, "002_b.sql/x": ok}, nil, "NNN_description.sql"},
		{"empty file", fstest.MapFS{"001_a.sql": ok, "002_b.sql": file(" \n")}, nil, "empty"},
		{"none", fstest.MapFS{}, nil, "no migrations"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := loadMigrations(tc.files)
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for i, m := range ms {
				names = append(names, m.name)
				if m.version != i+1 {
					t.Errorf("%s: version %d, want %d", m.name, m.version, i+1)
				}
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("order %v, want %v", names, tc.want)
			}
		})
	}
}

// userVersion reads the file's PRAGMA user_version.
func userVersion(t testing.TB, db *sqlx.DB) int {
	t.Helper()
	var v int
	if err := db.Get(&v, "PRAGMA user_version"); err != nil {
		t.Fatal(err)
	}
	return v
}

// schemaOf is the database's schema in a normalised form: one line per
// table, index, view or trigger with its SQL, ordered by type and name (the
// order of creation differs between files with different histories).
func schemaOf(t testing.TB, db *sqlx.DB) string {
	t.Helper()
	var rows []struct {
		Type, Name, TblName string
		SQL                 string
	}
	if err := db.Select(&rows, `SELECT type, name, tbl_name AS tblname, sql FROM sqlite_master
		WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type, name`); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s %s on %s: %s\n", r.Type, r.Name, r.TblName, r.SQL)
	}
	return b.String()
}

// freshSchema is the normalised schema of a newly created database.
func freshSchema(t testing.TB) string {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "fresh.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return schemaOf(t, s.db)
}

// A new file runs every migration and ends at the latest version with the
// tables of each (002's quota_usage and 003's reference_cache included).
func TestFreshDatabaseReachesLatest(t *testing.T) {
	s := newStore(t, Options{})
	if v := userVersion(t, s.db); v != SchemaVersion {
		t.Fatalf("user_version %d, want %d", v, SchemaVersion)
	}
	for _, table := range []string{"accounts", "report_jobs", "webhook_deliveries", "quota_usage", "reference_cache"} {
		var n int
		if err := s.db.Get(&n, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table); err != nil || n != 1 {
			t.Errorf("table %s: %d (err %v), want it present", table, n, err)
		}
	}
}

// rawOpen opens path without migrating, as an older binary or sqlite3 would.
func rawOpen(t testing.TB, path string) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// Files written by older binaries (the idempotent schema.sql of versions 1,
// 2 and 3, kept in testdata) are brought to the latest version with their
// rows kept, and end with exactly the schema of a new file: the numbered
// migrations reproduce the history of that one file.
func TestMigrateFilesFromOlderBinaries(t *testing.T) {
	ctx := context.Background()
	want := freshSchema(t)
	// Version 3 was the last one shipped as that file; later versions
	// exist only as numbered migrations.
	const lastSchemaFile = 3
	for v := 1; v <= lastSchemaFile; v++ {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			sql, err := os.ReadFile(fmt.Sprintf("testdata/schema_v%d.sql", v))
			if err != nil {
				t.Fatal(err)
			}
			db := rawOpen(t, path)
			for _, q := range []string{
				string(sql),
				fmt.Sprintf("PRAGMA user_version = %d", v),
				`INSERT INTO accounts VALUES ('acct_old', 'old', 10, 60, '2026-10-01T00:00:00.000Z')`,
				`INSERT INTO report_jobs (id, account_id, bucket, latitude, longitude, status, run_after_utc, created_utc, updated_utc)
				 VALUES ('job_1', 'acct_old', 'api', 1, 2, 'queued', '2026-10-05T00:00:00.000Z', '2026-10-05T00:00:00.000Z', '2026-10-05T00:00:00.000Z'),
				        ('job_2', 'acct_old', 'api', 1, 2, 'queued', '2026-10-06T00:00:00.000Z', '2026-10-06T00:00:00.000Z', '2026-10-06T00:00:00.000Z')`,
			} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatalf("build version %d file: %v", v, err)
				}
			}
			if v >= 2 {
				// The counter an older binary kept; a later migration must
				// not recount it.
				if _, err := db.ExecContext(ctx, `INSERT INTO quota_usage VALUES ('acct_old', '2026-10-01T00:00:00.000Z', 5)`); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()

			s, err := Open(ctx, path)
			if err != nil {
				t.Fatalf("open version %d file: %v", v, err)
			}
			defer s.Close()
			if got := userVersion(t, s.db); got != SchemaVersion {
				t.Errorf("user_version %d, want %d", got, SchemaVersion)
			}
			if a, err := s.GetAccount(ctx, "acct_old"); err != nil || a.Name != "old" {
				t.Errorf("account after upgrade: %+v, err %v", a, err)
			}
			var jobs int
			if err := s.db.Get(&jobs, `SELECT COUNT(*) FROM report_jobs`); err != nil || jobs != 2 {
				t.Errorf("%d jobs after upgrade (err %v), want 2", jobs, err)
			}
			var used int
			if err := s.db.Get(&used, `SELECT report_jobs FROM quota_usage WHERE account_id = 'acct_old'`); err != nil {
				t.Fatal(err)
			}
			wantUsed := 5
			if v == 1 {
				wantUsed = 2 // backfilled from the jobs by migration 002
			}
			if used != wantUsed {
				t.Errorf("quota_usage %d, want %d", used, wantUsed)
			}
			if err := s.SaveReference(ctx, "k", []byte("b")); err != nil {
				t.Errorf("reference cache after upgrade: %v", err)
			}
			if got := schemaOf(t, s.db); got != want {
				t.Errorf("schema after upgrade differs from a new file's:\n got: %s\nwant: %s", got, want)
			}
			// Migration 004 put the queued jobs' account in the turns:
			// they are claimed, oldest first.
			for _, id := range []string{"job_1", "job_2"} {
				j, ok, err := s.ClaimJob(ctx, "w", time.Minute, time.Date(2026, 10, 7, 0, 0, 0, 0, time.UTC))
				if err != nil || !ok || j.ID != id {
					t.Errorf("claim after upgrade: %s %v %v, want %s", j.ID, ok, err, id)
				}
			}
		})
	}
}

// A file built by migrations 001 and 002 alone (a version 2 file of this
// scheme) gets 003 and keeps its rows.
func TestMigrateVersion2FromNumberedMigrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v2.db")
	all, err := embeddedMigrations()
	if err != nil {
		t.Fatal(err)
	}
	s, err := openMigrated(ctx, path, Options{}, all[:2])
	if err != nil {
		t.Fatal(err)
	}
	if v := userVersion(t, s.db); v != 2 {
		t.Fatalf("after 001 and 002: user_version %d, want 2", v)
	}
	var n int
	if err := s.db.Get(&n, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'reference_cache'`); err != nil || n != 0 {
		t.Fatalf("reference_cache before 003: %d (err %v)", n, err)
	}
	a := newAccount(t, s, 10)
	if _, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: a.ID, Bucket: locrisk.BucketAPI, Latitude: 1, Longitude: 2}, t0); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("open version 2 file: %v", err)
	}
	defer s.Close()
	if v := userVersion(t, s.db); v != SchemaVersion {
		t.Errorf("user_version %d, want %d", v, SchemaVersion)
	}
	if _, used, err := quotaUsage(ctx, s.db, a.ID, t0); err != nil || used != 1 {
		t.Errorf("quota used %d (err %v) after upgrade, want 1", used, err)
	}
	if err := s.SaveReference(ctx, "k", []byte("b")); err != nil {
		t.Errorf("save reference after upgrade: %v", err)
	}
}

// A file from a newer binary is refused, with both versions in the error,
// and left as it was.
func TestNewerVersionRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(ctx, path)
	wantMsg := fmt.Sprintf("database schema version %d is newer than this binary supports (%d)", SchemaVersion+1, SchemaVersion)
	if err == nil || !strings.Contains(err.Error(), wantMsg) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want one naming the file and containing %q", err, wantMsg)
	}
	db := rawOpen(t, path)
	defer db.Close()
	if v := userVersion(t, db); v != SchemaVersion+1 {
		t.Errorf("refused file now at version %d", v)
	}
}

// Each migration commits on its own with its version: when one fails, the
// ones before it stay applied and the file names the last that succeeded;
// the next start carries on from there.
func TestFailedMigrationKeepsEarlierOnes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "f.db")
	good := []migration{
		{1, "001_a.sql", "CREATE TABLE a (x INTEGER);"},
		{2, "002_b.sql", "CREATE TABLE b (x INTEGER); INSERT INTO a VALUES (1);"},
	}
	bad := append(slices.Clone(good[:1]), migration{2, "002_b.sql", "CREATE TABLE b (x INTEGER); INSERT INTO nowhere VALUES (1);"})
	_, err := openMigrated(ctx, path, Options{}, bad)
	if err == nil || !strings.Contains(err.Error(), "002_b.sql") {
		t.Fatalf("err = %v, want the failing migration named", err)
	}
	db := rawOpen(t, path)
	if v := userVersion(t, db); v != 1 {
		t.Errorf("after a failed 002: user_version %d, want 1", v)
	}
	var n int
	if err := db.Get(&n, `SELECT COUNT(*) FROM sqlite_master WHERE name IN ('a', 'b')`); err != nil || n != 1 {
		t.Errorf("after a failed 002: %d of tables a, b (err %v), want a only", n, err)
	}
	db.Close()

	s, err := openMigrated(ctx, path, Options{}, good)
	if err != nil {
		t.Fatalf("retry with a good 002: %v", err)
	}
	defer s.Close()
	if v := userVersion(t, s.db); v != 2 {
		t.Errorf("user_version %d, want 2", v)
	}
	if err := s.db.Get(&n, `SELECT COUNT(*) FROM a`); err != nil || n != 1 {
		t.Errorf("002 ran %d times (err %v), want once", n, err)
	}
}

// Stores opening one new file at the same moment (as two processes starting
// together would; each Store has its own connections and write queue) all
// succeed, and each migration runs once.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	ms := []migration{
		{1, "001_a.sql", "CREATE TABLE a (x INTEGER);"},
		// Not idempotent: running it twice fails (and would double the row).
		{2, "002_b.sql", "CREATE TABLE b (x INTEGER); INSERT INTO b VALUES (1);"},
		{3, "003_c.sql", "ALTER TABLE b ADD COLUMN y INTEGER;"},
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			s, err := openMigrated(ctx, path, Options{}, ms)
			if err == nil {
				s.Close()
			}
			errs <- err
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent open: %v", err)
		}
	}
	db := rawOpen(t, path)
	defer db.Close()
	if v := userVersion(t, db); v != 3 {
		t.Errorf("user_version %d, want 3", v)
	}
	var rows int
	if err := db.Get(&rows, `SELECT COUNT(*) FROM b`); err != nil || rows != 1 {
		t.Errorf("%d rows in b (err %v), want 1", rows, err)
	}

	// And the real migrations, on a fresh file.
	path = filepath.Join(t.TempDir(), "real.db")
	errs = make(chan error, n)
	for range n {
		wg.Go(func() {
			s, err := Open(ctx, path)
			if err == nil {
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent open: %v", err)
		}
	}
}
