package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite"
)

// The two benchmarks below drive a real listener with concurrent clients
// and are meant to be read side by side (go test -bench . -run '^$'
// ./server): BenchmarkCreateJob is POST /location-risk/report-jobs with key
// authentication, the rate limiter, an Idempotency-Key and the durable job
// insert; BenchmarkBaselineInsert is the floor: the same HTTP round trip
// with a bare SQLite INSERT per request on a file with the same settings.

func benchClient(b *testing.B, ts *httptest.Server) *http.Client {
	c := ts.Client()
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	return c
}

func BenchmarkCreateJob(b *testing.B) {
	e := newEnv(b)
	key := e.allScopesKey(e.account(1<<30, 1<<30))
	ts := httptest.NewServer(e.h)
	defer ts.Close()
	client := benchClient(b, ts)
	var n atomic.Int64
	body := []byte(`{"latitude": 40.7128, "longitude": -74.006}`)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("POST", ts.URL+jobsPath, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Idempotency-Key", fmt.Sprint("bench-", n.Add(1)))
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func BenchmarkBaselineInsert(b *testing.B) {
	path := filepath.Join(b.TempDir(), "baseline.db")
	db, err := sqlx.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(8)
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, lat REAL, lon REAL)`); err != nil {
		b.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if _, err := db.ExecContext(r.Context(), `INSERT INTO t (lat, lon) VALUES (?, ?)`, 40.7128, -74.006); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	ts := httptest.NewServer(h)
	defer ts.Close()
	client := benchClient(b, ts)
	body := []byte(`{"latitude": 40.7128, "longitude": -74.006}`)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Post(ts.URL, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
