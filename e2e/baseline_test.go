package e2e

import (
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/loadgen"
)

// baselineServer is a bare HTTP handler answering 202 after one INSERT per
// request into a WAL file opened with the given synchronous setting
// (NORMAL or FULL) and the store's other settings that matter to a write:
// busy timeout and BEGIN IMMEDIATE. It is the floor of job creation the
// whole path is compared with, the same as cmd/locrisk's job creation
// benchmarks open in their own package (bench_test.go there): a test
// helper each, so that no package the binary could link opens SQLite
// beside the store. It takes loadgen.Posts("/").
func baselineServer(tb testing.TB, synchronous string) *httptest.Server {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "baseline.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous("+synchronous+")&_txlock=immediate")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(8)
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, lat REAL, lon REAL)`); err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if _, err := db.ExecContext(r.Context(), `INSERT INTO t (lat, lon) VALUES (?, ?)`, 40.7128, -74.006); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	tb.Cleanup(ts.Close)
	return ts
}

// runLoad is loadgen.Run that stops the test on a failed request, for
// the test's own goroutine.
func runLoad(tb testing.TB, addr string, clients int, d time.Duration, send loadgen.Sender) loadgen.Result {
	tb.Helper()
	r, err := loadgen.Run(addr, clients, d, send)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}
