package stmtcache

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"modernc.org/sqlite"
)

// countingConnector counts the statements the driver prepares.
type countingConnector struct {
	driver.Connector
	prepares *atomic.Int64
}

func (c countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return countingConn{dc.(innerConn), c.prepares}, nil
}

type countingConn struct {
	innerConn
	prepares *atomic.Int64
}

func (c countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.prepares.Add(1)
	return c.innerConn.PrepareContext(ctx, query)
}

// open returns a one-connection database over a cache of size statements
// and the count of statements prepared.
func open(t *testing.T, size int) (*sql.DB, *atomic.Int64) {
	t.Helper()
	base, err := sqlite.NewConnector("file:" + filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	n := &atomic.Int64{}
	db := sql.OpenDB(New(countingConnector{base, n}, size))
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db, n
}

func TestStatementsArePreparedOnce(t *testing.T) {
	db, prepares := open(t, 8)
	before := prepares.Load()
	for i := range 50 {
		if _, err := db.Exec(`INSERT INTO t (k, v) VALUES (?, ?)`, i, "x"); err != nil {
			t.Fatal(err)
		}
		var v string
		if err := db.QueryRow(`SELECT v FROM t WHERE k = ?`, i).Scan(&v); err != nil || v != "x" {
			t.Fatalf("row %d: %q, %v", i, v, err)
		}
	}
	if got := prepares.Load() - before; got != 2 {
		t.Errorf("%d prepares for 100 calls of two statements, want 2", got)
	}
	// Inside a transaction too, and a rollback undoes the cached
	// statement's work.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO t (k, v) VALUES (?, ?)`, 100, "x"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM t`).Scan(&n); err != nil || n != 50 {
		t.Errorf("%d rows after the rollback, %v; want 50", n, err)
	}
	if got := prepares.Load() - before; got != 3 {
		t.Errorf("%d prepares, want 3 (the count is new)", got)
	}
}

// TestOpenRowsKeepTheirStatement: the same text run again while its rows
// are still open gets a statement of its own, and both read correctly.
func TestOpenRowsKeepTheirStatement(t *testing.T) {
	db, prepares := open(t, 8)
	for i := range 3 {
		if _, err := db.Exec(`INSERT INTO t (k, v) VALUES (?, ?)`, i, string(rune('a'+i))); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin() // one connection for both queries
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const q = `SELECT v FROM t WHERE k >= ? ORDER BY k`
	outer, err := tx.Query(q, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var v string
		if err := outer.Scan(&v); err != nil {
			t.Fatal(err)
		}
		var inner string
		if err := tx.QueryRow(q, 2).Scan(&inner); err != nil || inner != "c" {
			t.Fatalf("inner query: %q, %v", inner, err)
		}
		got = append(got, v+inner)
	}
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	if want := "ac bc cc"; strings.Join(got, " ") != want {
		t.Errorf("read %q, want %q", strings.Join(got, " "), want)
	}
	before := prepares.Load()
	var v string
	if err := tx.QueryRow(q, 1).Scan(&v); err != nil || v != "b" {
		t.Fatalf("after: %q, %v", v, err)
	}
	if got := prepares.Load() - before; got != 0 {
		t.Errorf("the statement was prepared again (%d) once its rows closed", got)
	}
}

// TestEvictionAndErrors: beyond its size the cache forgets the least
// recently used statement, and a statement whose run failed is prepared
// afresh next time.
func TestEvictionAndErrors(t *testing.T) {
	db, prepares := open(t, 2)
	run := func(q string, args ...any) error {
		_, err := db.Exec(q, args...)
		return err
	}
	a := `INSERT INTO t (k, v) VALUES (?, 'a')`
	b := `UPDATE t SET v = 'b' WHERE k = ?`
	c := `DELETE FROM t WHERE k = ?`
	for _, step := range []struct {
		q         string
		arg       int
		wantErr   bool
		prepared  int64 // new prepares by this step
		explained string
	}{
		{a, 1, false, 1, "first a"},
		{b, 1, false, 1, "first b"},
		{a, 2, false, 0, "a cached"},
		{c, 9, false, 1, "c evicts b, the least recently used"},
		{a, 3, false, 0, "a still cached"},
		{b, 1, false, 1, "b prepared again"},
		{a, 3, true, 0, "duplicate key: fails, dropped"},
		{a, 4, false, 1, "a prepared again after its failure"},
	} {
		before := prepares.Load()
		err := run(step.q, step.arg)
		if (err != nil) != step.wantErr {
			t.Fatalf("%s: %v", step.explained, err)
		}
		if got := prepares.Load() - before; got != step.prepared {
			t.Errorf("%s: %d prepares, want %d", step.explained, got, step.prepared)
		}
	}
}
