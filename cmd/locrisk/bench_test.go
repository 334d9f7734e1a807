package main

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/loadgen"
	"github.com/locrisk/locrisk/internal/server"
)

// The benchmarks below drive a real loopback listener with loadgen.Clients
// concurrent clients, each on its own kept-alive connection writing raw
// HTTP/1.1 (package loadgen), and are meant to be read side by side
// (docs/performance.md, Job creation):
//
//   - BenchmarkBaselineInsert/NORMAL and /FULL: the floor, a bare handler
//     doing one SQLite INSERT per request on a WAL file with
//     synchronous=NORMAL (a commit may be lost in a power cut) and
//     synchronous=FULL (locrisk's setting, docs/performance.md);
//   - BenchmarkCreateJobSideBySide: the two baselines and POST
//     /location-risk/report-jobs through the API as serve assembles it
//     (newAPI) over the real store, with key authentication, the rate
//     limiter, the quota and the durable job insert, without and with an
//     Idempotency-Key, for the same window each in one run, printing
//     locrisk's rate as a percentage of each baseline and its p50 and p99
//     latency.
//
// They are here, with the assembly, because the baseline is SQLite itself;
// the API's own benchmark, BenchmarkCreateJob, is internal/server's.
//
//	go test -run '^$' -bench 'CreateJobSideBySide|BaselineInsert' ./cmd/locrisk

// createJobServer is the API as serve assembles it over the store on a
// fresh file (synchronous FULL, as serve opens it) with one account whose
// quota and rate limit are out of reach, and a key for it.
func createJobServer(tb testing.TB) (ts *httptest.Server, key string) {
	tb.Helper()
	a := newAPIEnv(tb, server.Config{Logger: slog.New(slog.DiscardHandler)})
	// The store sets no synchronous pragma, so its connections have
	// SQLite's default, FULL, which a plain connection to the file shows.
	db, err := sql.Open("sqlite", "file:"+a.path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var sync int
	if err := db.QueryRowContext(context.Background(), `PRAGMA synchronous`).Scan(&sync); err != nil {
		tb.Fatal(err)
	} else if sync != 2 {
		tb.Fatalf("store PRAGMA synchronous = %d, want 2 (FULL)", sync)
	}
	ts = httptest.NewServer(a.api.Handler())
	tb.Cleanup(ts.Close)
	return ts, a.key
}

func BenchmarkBaselineInsert(b *testing.B) {
	for _, sync := range []string{"NORMAL", "FULL"} {
		b.Run(sync, func(b *testing.B) {
			ts := baselineServer(b, sync)
			runParallel(b, ts.Listener.Addr().String(), loadgen.Posts("/"))
		})
	}
}

// baselineServer is a bare HTTP handler answering 202 after one INSERT per
// request into a WAL file opened with the given synchronous setting
// (NORMAL or FULL) and the store's other settings that matter to a write:
// busy timeout and BEGIN IMMEDIATE. It is the floor job creation is
// compared with; e2e's whole-path test opens the same one (its
// baseline_test.go), as each test package has its own. It takes
// loadgen.Posts("/").
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

// runParallel runs b.N requests of send against the listener at addr from
// about loadgen.Clients goroutines, each on its own connection, and
// reports req/s, p50-ms and p99-ms: the *testing.B side of
// loadgen.Parallel, as internal/server's benchmarks have it.
func runParallel(b *testing.B, addr string, send loadgen.Sender) {
	p := loadgen.NewParallel(addr, send)
	b.SetParallelism(loadgen.Parallelism())
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		if err := p.Client(pb.Next); err != nil {
			b.Error(err)
		}
	})
	p.Result(b.Elapsed()).Report(b.ReportMetric)
}

// BenchmarkCreateJobSideBySide runs, in each iteration, the NORMAL
// baseline, the FULL baseline and locrisk's job creation, without and
// with an Idempotency-Key, for the same window each (LOCRISK_BENCH_WINDOW,
// default 3s), one after the other on fresh files. It reports the rates,
// locrisk's as a percentage of each baseline (the target: at least 100%
// of NORMAL for a POST of one coordinate without a key: the checked,
// durable creation at least as fast as a bare insert whose commit a power
// cut may lose), and locrisk's p50 and p99 latency (target: p99 at
// most 15 ms). The keyed creation, one key per request as a careful integrator
// sends them, also writes and indexes the key: it is reported beside,
// with the "key-" metrics. -benchtime 3x interleaves three rounds, so a
// burst of load elsewhere on the machine falls on all of them.
//
//	go test -run '^$' -bench CreateJobSideBySide -benchtime 3x ./cmd/locrisk
func BenchmarkCreateJobSideBySide(b *testing.B) {
	window := 3 * time.Second
	if v := os.Getenv("LOCRISK_BENCH_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("LOCRISK_BENCH_WINDOW=%q: want a duration", v)
		}
		window = d
	}
	r := sideBySide(b, b.Loop, window)
	b.ReportMetric(r.normal.Rate(), "normal-req/s")
	b.ReportMetric(r.full.Rate(), "full-req/s")
	for _, l := range []struct {
		prefix string
		r      loadgen.Result
	}{{"", r.locrisk}, {"key-", r.keyed}} {
		b.ReportMetric(l.r.Rate(), l.prefix+"locrisk-req/s")
		b.ReportMetric(100*l.r.Rate()/r.normal.Rate(), l.prefix+"%-of-normal")
		b.ReportMetric(100*l.r.Rate()/r.full.Rate(), l.prefix+"%-of-full")
		b.ReportMetric(l.r.PctMS(50), l.prefix+"p50-ms")
		b.ReportMetric(l.r.PctMS(99), l.prefix+"p99-ms")
	}
}

// sideBySideResult is what each server measured in sideBySide: the two
// baselines, locrisk's job creation without Idempotency-Key and with one
// per request.
type sideBySideResult struct {
	normal, full, locrisk, keyed loadgen.Result
}

// sideBySide runs the four servers for window each while more() says so
// and adds up what each measured.
func sideBySide(tb testing.TB, more func() bool, window time.Duration) (r sideBySideResult) {
	for more() {
		for _, run := range []struct {
			into *loadgen.Result
			ts   func() (*httptest.Server, loadgen.Sender)
		}{
			{&r.normal, func() (*httptest.Server, loadgen.Sender) {
				return baselineServer(tb, "NORMAL"), loadgen.Posts("/")
			}},
			{&r.full, func() (*httptest.Server, loadgen.Sender) {
				return baselineServer(tb, "FULL"), loadgen.Posts("/")
			}},
			{&r.locrisk, func() (*httptest.Server, loadgen.Sender) {
				ts, key := createJobServer(tb)
				return ts, loadgen.CreateJobsNoKey(key)
			}},
			{&r.keyed, func() (*httptest.Server, loadgen.Sender) {
				ts, key := createJobServer(tb)
				return ts, loadgen.CreateJobs(key)
			}},
		} {
			ts, send := run.ts()
			res, err := loadgen.Run(ts.Listener.Addr().String(), loadgen.Clients, window, send)
			ts.Close()
			if err != nil {
				tb.Fatal(err)
			}
			run.into.Add(res)
		}
	}
	return r
}

// TestSideBySideLoad keeps BenchmarkCreateJobSideBySide's machinery
// working in the normal suite: a short window each, every request
// answered 202. It asserts no rates (the machine is shared).
func TestSideBySideLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("in -short mode")
	}
	once := true
	r := sideBySide(t, func() bool { r := once; once = false; return r }, 100*time.Millisecond)
	for name, r := range map[string]loadgen.Result{"NORMAL": r.normal, "FULL": r.full, "locrisk": r.locrisk, "locrisk with keys": r.keyed} {
		if len(r.Lat) == 0 {
			t.Errorf("%s: no request answered", name)
		}
		t.Logf("%s: %.0f req/s, p50 %.2f ms, p99 %.2f ms", name, r.Rate(), r.PctMS(50), r.PctMS(99))
	}
}
