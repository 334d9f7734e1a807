package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/locrisk/locrisk/internal/loadgen"
)

// BenchmarkCreateJob is POST /location-risk/report-jobs through the real
// handler and store over a real loopback listener, with key
// authentication, the rate limiter, the quota, an Idempotency-Key and the
// durable job insert, from loadgen.Clients concurrent clients: what each
// change to job creation is measured with on its own (docs/performance.md,
// Job creation). Its comparison with a bare SQLite insert per request,
// BenchmarkCreateJobSideBySide, is the assembly's (cmd/locrisk), which may
// know the database.
//
//	go test -run '^$' -bench CreateJob ./internal/server
func BenchmarkCreateJob(b *testing.B) {
	ts, key := createJobServer(b)
	runParallel(b, ts.Listener.Addr().String(), loadgen.CreateJobs(key))
}

// runParallel runs b.N requests of send against the listener at addr from
// about loadgen.Clients goroutines, each on its own connection, and
// reports req/s, p50-ms and p99-ms. It is the *testing.B side of
// loadgen.Parallel, which imports no testing; cmd/locrisk's benchmarks
// have the same few lines.
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

// createJobServer is the real handler over the real store with one
// account whose quota and rate limit are out of reach, and a key for it.
func createJobServer(tb testing.TB) (ts *httptest.Server, key string) {
	tb.Helper()
	e := newEnv(tb)
	key = e.allScopesKey(e.account(1<<30, 1<<30))
	ts = httptest.NewServer(e.h)
	tb.Cleanup(ts.Close)
	return ts, key
}

// benchClient is an http.Client for ts with room for every load client's
// connection.
func benchClient(ts *httptest.Server) *http.Client {
	c := ts.Client()
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = 2 * loadgen.Clients
	return c
}
