package loadgen

import (
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // the driver the store uses
)

// BaselineServer is a bare HTTP handler answering 202 after one INSERT per
// request into a WAL file opened with the given synchronous setting (NORMAL
// or FULL) and the store's other settings that matter to a write: busy
// timeout and BEGIN IMMEDIATE. It is the floor the job creation
// benchmarks and the whole-path test compare against
// (docs/performance.md).
func BaselineServer(tb testing.TB, synchronous string) *httptest.Server {
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
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if _, err := db.ExecContext(r.Context(), `INSERT INTO t (lat, lon) VALUES (?, ?)`, 40.7128, -74.006); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	ts := httptest.NewServer(h)
	tb.Cleanup(ts.Close)
	return ts
}

// BaselineSender sends what BaselineServer takes: a POST of Body.
func BaselineSender() Sender {
	return func(buf []byte, _ int64) []byte { return Post(buf, "/") }
}
