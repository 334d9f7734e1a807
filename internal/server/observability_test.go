package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/sqlite"
	"github.com/locrisk/locrisk/internal/view"
)

func TestLatencyBucket(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int
	}{
		{0, 0}, {500 * time.Microsecond, 0}, {501 * time.Microsecond, 1}, {time.Millisecond, 1},
		{3 * time.Millisecond, 3}, {10 * time.Second, 13}, {10*time.Second + 1, 14}, {time.Hour, 14},
	}
	for _, tc := range tests {
		if got := latencyBucket(tc.d); got != tc.want {
			t.Errorf("latencyBucket(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
	if histogramLen != 15 {
		t.Errorf("histogramLen = %d: the stored histograms depend on it", histogramLen)
	}
}

func TestHistogramPercentile(t *testing.T) {
	h := func(pairs ...int) []int64 { // bucket, count, bucket, count...
		out := make([]int64, histogramLen)
		for i := 0; i < len(pairs); i += 2 {
			out[pairs[i]] = int64(pairs[i+1])
		}
		return out
	}
	tests := []struct {
		name string
		h    []int64
		p    float64
		want float64
		ok   bool
	}{
		{"empty", h(), 0.5, 0, false},
		{"nil", nil, 0.5, 0, false},
		// 9 requests in (2, 5] ms and 1 in (500, 1000] ms.
		{"p50 inside a bucket", h(3, 9, 10, 1), 0.5, 2 + 3*5.0/9, true},
		{"p95 in the slow bucket", h(3, 9, 10, 1), 0.95, 750, true},
		{"first bucket starts at 0", h(0, 4), 0.5, 0.25, true},
		{"whole bucket", h(1, 2, 2, 2), 0.5, 1, true},
		{"overflow gives the last bound", h(14, 3), 0.95, 10000, true},
	}
	for _, tc := range tests {
		got, ok := histogramPercentile(tc.h, tc.p)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: got %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// opsSummary reads GET /observability/current and checks its exact shape.
func getOpsSummary(e *env, key, query string) view.OpsSummary {
	e.t.Helper()
	rec := e.do("GET", opsPath+query, key, "")
	if rec.Code != http.StatusOK {
		e.t.Fatalf("GET %s: status %d %s", opsPath+query, rec.Code, rec.Body)
	}
	var raw map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		e.t.Fatal(err)
	}
	shape := map[string][]string{
		"":           {"apiVersion", "batches", "generatedUtc", "hours", "recentFailures", "reportJobs", "requests", "webhooks", "windowEndUtc", "windowStartUtc"},
		"requests":   {"clientErrors", "p50LatencyMs", "p95LatencyMs", "rateLimited", "serverErrors", "succeeded", "total"},
		"reportJobs": {"completed", "created", "failed", "p50CompletionMs", "p95CompletionMs", "processing", "queued"},
		"batches":    {"completed", "created", "processing"},
		"webhooks":   {"deliveries", "failed", "pending", "succeeded"},
	}
	for k, want := range shape {
		m := raw
		if k != "" {
			m, _ = raw[k].(map[string]any)
		}
		if got := keysOf(m); !slices.Equal(got, want) {
			e.t.Errorf("keys of %q = %v, want %v", k, got, want)
		}
	}
	if _, ok := raw["recentFailures"].([]any); !ok {
		e.t.Errorf("recentFailures is not an array: %v", raw["recentFailures"])
	}
	return decode[view.OpsSummary](e.t, rec)
}

// fmtMs shows a percentile of the summary: "null" for none.
func fmtMs(v *int64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(*v)
}

// TestOpsSummaryNumbers makes known activity and checks every number.
func TestOpsSummaryNumbers(t *testing.T) {
	e := newEnv(t) // 2026-11-22T12:00:10Z
	acct := e.account(1000, 5)
	key := e.allScopesKey(acct)
	other := e.allScopesKey(e.account(1000, 1000))
	readOnly, _ := e.key(acct, locrisk.NewKey{Scopes: []string{"reports:read"}})

	// Minute 1 (rate limit 5): 2 creates (202), a 404, a 400, a 403, then a
	// 429 rate_limit_exceeded. Unauthenticated requests are not counted.
	j1 := e.createJob(key, 40, -100)
	j2 := e.createJob(key, 41, -100)
	e.do("GET", jobsPath+"/job_aaaaaaaaaaaaaaaaaaaaaaaa", key, "")
	e.do("POST", jobsPath, key, `{"latitude": "x"}`)
	e.do("POST", jobsPath, readOnly, `{"latitude": 1, "longitude": 1}`)
	wantError(t, e.do("GET", jobsPath, key, ""), 429, "rate_limit_exceeded")
	e.do("GET", jobsPath, "", "")
	e.do("GET", "/api/v1/nowhere", key, "")
	e.do("GET", jobsPath, other, "")

	// Jobs with known completion times: j1 takes 2 s, j2 fails after 3 s;
	// j3 takes 10 s; j4 stays queued.
	e.clock.Advance(2 * time.Second)
	e.complete(j1.JobID)
	e.clock.Advance(time.Second)
	e.fail(j2.JobID, false)
	e.clock.Advance(time.Minute) // a new rate window
	j3 := e.createJob(key, 42, -100)
	e.clock.Advance(10 * time.Second)
	e.complete(j3.JobID)
	e.createJob(key, 43, -100)
	// Requests so far for acct: 6 + 2 creates = 8 (2 + 1 + 1 client errors
	// before; the 429 is both a client error and rate limited).

	s := getOpsSummary(e, key, "?hours=1")
	now := e.clock.Now()
	if s.APIVersion != "v1" || s.GeneratedUTC != view.Time(now) {
		t.Errorf("apiVersion %q generatedUtc %q, want v1 and %s", s.APIVersion, s.GeneratedUTC, view.Time(now))
	}
	if s.WindowEndUTC != view.Time(now) || s.WindowStartUTC != view.Time(now.Add(-time.Hour)) || s.Hours != 1 {
		t.Errorf("window %s .. %s (hours %d), now %s", s.WindowStartUTC, s.WindowEndUTC, s.Hours, view.Time(now))
	}
	r := s.Requests
	if r.Total != 8 || r.Succeeded != 4 || r.ClientErrors != 4 || r.ServerErrors != 0 || r.RateLimited != 1 {
		t.Errorf("requests = %+v, want total 8, succeeded 4, clientErrors 4, serverErrors 0, rateLimited 1", r)
	}
	if r.P50LatencyMs == nil || r.P95LatencyMs == nil || *r.P50LatencyMs <= 0 || *r.P95LatencyMs < *r.P50LatencyMs {
		t.Errorf("latency p50 %v p95 %v", r.P50LatencyMs, r.P95LatencyMs)
	}
	j := s.ReportJobs
	wantJobs := view.OpsReportJobs{Created: 4, Completed: 2, Failed: 1, Queued: 1, Processing: 0}
	// Completion times are reported within 5% of the exact nearest-rank
	// values (docs/api.md, Operations summary).
	within5 := func(got *int64, want int64) bool { return got != nil && 20*max(*got-want, want-*got) <= want }
	if !within5(j.P50CompletionMs, 2000) || !within5(j.P95CompletionMs, 10000) {
		t.Errorf("completion p50 %s p95 %s, want within 5%% of 2000 and 10000", fmtMs(j.P50CompletionMs), fmtMs(j.P95CompletionMs))
	}
	j.P50CompletionMs, j.P95CompletionMs = nil, nil
	if j != wantJobs {
		t.Errorf("reportJobs = %+v, want %+v", j, wantJobs)
	}
	if s.Batches != (view.OpsBatches{}) || s.Webhooks != (view.OpsWebhooks{}) {
		t.Errorf("batches %+v webhooks %+v, want zeros", s.Batches, s.Webhooks)
	}
	if len(s.RecentFailures) != 1 {
		t.Fatalf("recentFailures = %+v", s.RecentFailures)
	}
	if f := s.RecentFailures[0]; f.Kind != "report_job" || f.ID != j2.JobID || f.Code != "report_generation_failed" ||
		f.Message != "the engine failed" || f.OccurredUTC != "2026-11-22T12:00:13Z" {
		t.Errorf("failure = %+v", f)
	}

	// The summary request itself is counted once it has been answered.
	if s := getOpsSummary(e, key, "?hours=1"); s.Requests.Total != 9 || s.Requests.Succeeded != 5 {
		t.Errorf("after one summary: %+v", s.Requests)
	}

	// Two hours later, hours=1 no longer covers any of it; hours=3 does
	// (requests by whole hour: the 12:00 hour overlaps 11:01:23 .. 14:01:23).
	e.clock.Advance(2 * time.Hour)
	s = getOpsSummary(e, key, "?hours=1")
	if s.Requests.Total != 0 || s.Requests.P50LatencyMs != nil || s.ReportJobs.Created != 0 || s.ReportJobs.Completed != 0 ||
		s.ReportJobs.Queued != 1 || s.ReportJobs.P50CompletionMs != nil || len(s.RecentFailures) != 0 {
		t.Errorf("hours=1 two hours later: %+v", s)
	}
	if s := getOpsSummary(e, key, "?hours=3"); s.Requests.Total != 11 || s.ReportJobs.Created != 4 || len(s.RecentFailures) != 1 {
		t.Errorf("hours=3: requests %+v jobs %+v", s.Requests, s.ReportJobs)
	}
	// The default window is 24 hours.
	if s := getOpsSummary(e, key, ""); s.Hours != 24 || s.WindowStartUTC != view.Time(e.clock.Now().Add(-24*time.Hour)) || s.Requests.Total != 12 {
		t.Errorf("default: hours %d start %s requests %d", s.Hours, s.WindowStartUTC, s.Requests.Total)
	}
	// The other account saw only its own request.
	if s := getOpsSummary(e, other, ""); s.Requests.Total != 1 || s.ReportJobs.Created != 0 {
		t.Errorf("other account: %+v %+v", s.Requests, s.ReportJobs)
	}
}

// TestOpsServerErrorsAndLatency feeds observeRequest known outcomes and
// latencies and checks the counts and interpolated percentiles.
func TestOpsServerErrorsAndLatency(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 1000)
	key := e.allScopesKey(acct)
	ctx := context.Background()
	info := &reqInfo{accountID: acct.ID}
	for range 9 {
		e.srv.observeRequest(ctx, info, 200, 3*time.Millisecond)
	}
	e.srv.observeRequest(ctx, info, 503, 700*time.Millisecond)
	e.srv.observeRequest(ctx, &reqInfo{}, 401, time.Millisecond) // no account: not counted
	e.srv.observeRequest(ctx, nil, 404, time.Millisecond)

	r := getOpsSummary(e, key, "").Requests
	want := view.OpsRequests{Total: 10, Succeeded: 9, ServerErrors: 1}
	p50, p95 := *r.P50LatencyMs, *r.P95LatencyMs
	r.P50LatencyMs, r.P95LatencyMs = nil, nil
	if r != want {
		t.Errorf("requests = %+v, want %+v", r, want)
	}
	// p50: rank 5 of 10 in the (2, 5] bucket of 9: 2 + 3*5/9 = 3.67 -> 3.7.
	// p95: rank 9.5 in the (500, 1000] bucket of 1: 750.
	if p50 != 3.7 || p95 != 750 {
		t.Errorf("p50 %v p95 %v, want 3.7 and 750", p50, p95)
	}

	// A real panic is a counted 500.
	e.do("POST", jobsPath, key, fmt.Sprintf(`{"latitude": %v, "longitude": -100}`, latPanics))
	if r := getOpsSummary(e, key, "").Requests; r.ServerErrors != 2 || r.Total != 12 {
		t.Errorf("after a panic: %+v", r)
	}
}

// TestOpsRecentFailuresCap: at most 20, newest first.
func TestOpsRecentFailuresCap(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 100000)
	key := e.allScopesKey(acct)
	var ids []string
	for i := range 23 {
		j := e.createJob(key, 40+float64(i)/10, -100)
		e.clock.Advance(time.Second)
		e.fail(j.JobID, i%2 == 0)
		ids = append(ids, j.JobID)
	}
	s := getOpsSummary(e, key, "")
	if len(s.RecentFailures) != 20 {
		t.Fatalf("%d recent failures, want 20", len(s.RecentFailures))
	}
	for i, f := range s.RecentFailures {
		wantID := ids[22-i]
		wantAt := view.Time(t0.Add(time.Duration(23-i) * time.Second))
		if f.ID != wantID || f.OccurredUTC != wantAt || f.Kind != "report_job" {
			t.Errorf("failure %d = %+v, want %s at %s", i, f, wantID, wantAt)
		}
	}
	if s.ReportJobs.Failed != 23 {
		t.Errorf("failed = %d, want 23", s.ReportJobs.Failed)
	}
}

// TestOpsBatchesCounted: batches created through the API appear; the
// all-rejected batch is completed at once.
func TestOpsBatchesCounted(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 100000)
	key := e.allScopesKey(acct)
	for _, body := range []string{
		`{"items": [{"latitude": 40, "longitude": -100}, {"latitude": 41, "longitude": -100}]}`,
		`{"items": [{"latitude": 95, "longitude": -100}]}`,
	} {
		if rec := e.do("POST", "/api/v1/location-risk/batches", key, body); rec.Code != http.StatusAccepted {
			t.Fatalf("create batch: %d %s", rec.Code, rec.Body)
		}
	}
	s := getOpsSummary(e, key, "")
	if want := (view.OpsBatches{Created: 2, Processing: 1, Completed: 1}); s.Batches != want {
		t.Errorf("batches = %+v, want %+v", s.Batches, want)
	}
	if s.ReportJobs.Created != 2 || s.ReportJobs.Queued != 2 {
		t.Errorf("jobs = %+v", s.ReportJobs)
	}
}

// reopen flushes and closes the server and store of e, then opens new ones
// on the same file, as a restart would.
func restartEnv(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	if err := e.srv.Close(ctx); err != nil {
		t.Fatalf("close server: %v", err)
	}
	if err := e.st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.OpenWith(ctx, e.path, sqlite.Options{Now: e.clock.Now, Secrets: testSecrets(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e.st = st
	e.srv = New(Config{Logger: slog.New(slog.NewJSONHandler(e.logs, nil)), Now: e.clock.Now}, st, fakeLocator{}, nil)
	t.Cleanup(func() { e.srv.Close(context.Background()) })
	e.h = e.srv.Handler()
}

// TestOpsSurvivesRestart: after a graceful stop the numbers are the same.
func TestOpsSurvivesRestart(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 3)
	key := e.allScopesKey(acct)
	j := e.createJob(key, 40, -100)
	e.do("GET", jobsPath+"/job_aaaaaaaaaaaaaaaaaaaaaaaa", key, "")
	e.do("GET", jobsPath, key, "")
	e.do("GET", jobsPath, key, "") // 429
	e.clock.Advance(5 * time.Second)
	e.fail(j.JobID, true)
	e.clock.Advance(time.Minute)

	before := getOpsSummary(e, key, "")
	restartEnv(t, e)
	// What the stop saved, before the new server answers anything: the
	// five requests so far, the first summary's included, all in the
	// clock's hour, nothing lost or counted twice.
	if got := e.savedRequests(acct.ID, e.clock.Now()); got.Total != 5 || got.RateLimited != 1 {
		t.Errorf("saved request statistics %+v, want 5 requests, 1 rate limited, in the hour", got)
	}
	if all := e.savedRequests(acct.ID, time.Time{}); all.Total != 5 {
		t.Errorf("%d requests saved in all, want the hour's 5", all.Total)
	}
	after := getOpsSummary(e, key, "")
	// The first summary request is the only difference: one more success.
	before.Requests.Total++
	before.Requests.Succeeded++
	if before.Requests.P50LatencyMs == nil || after.Requests.P50LatencyMs == nil {
		t.Fatalf("latency missing: before %v after %v", before.Requests.P50LatencyMs, after.Requests.P50LatencyMs)
	}
	// Latency percentiles move with the extra request; the rest is equal.
	before.Requests.P50LatencyMs, before.Requests.P95LatencyMs = nil, nil
	after.Requests.P50LatencyMs, after.Requests.P95LatencyMs = nil, nil
	b, _ := json.Marshal(before)
	a, _ := json.Marshal(after)
	if string(a) != string(b) {
		t.Errorf("after restart:\n%s\nbefore (plus the summary request):\n%s", a, b)
	}
	if after.Requests.Total != 5 || after.Requests.RateLimited != 1 || after.ReportJobs.Failed != 1 || len(after.RecentFailures) != 1 {
		t.Errorf("after restart: %s", a)
	}
}

// savedRequests is the request statistics the store holds for the
// account: those of hour's hour, or of every hour when hour is zero.
func (e *env) savedRequests(accountID string, hour time.Time) locrisk.RequestCounts {
	e.t.Helper()
	from, to := hour.Truncate(time.Hour), hour.Truncate(time.Hour).Add(time.Hour)
	if hour.IsZero() {
		from, to = time.Unix(0, 0).UTC(), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	c, err := e.st.RequestStats(context.Background(), accountID, from, to)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// TestStatsFlushInBackground: without any Close, aggregates reach the
// store within about a second, and the flusher stops when idle.
func TestStatsFlushInBackground(t *testing.T) {
	e := newEnv(t)
	t.Cleanup(func() { e.srv.Close(context.Background()) })
	acct := e.account(1000, 1000)
	key := e.allScopesKey(acct)
	e.do("GET", jobsPath, key, "")
	e.do("GET", jobsPath, key, "")
	deadline := time.Now().Add(5 * time.Second)
	var total int64
	for time.Now().Before(deadline) {
		if total = e.savedRequests(acct.ID, time.Time{}).Total; total == 2 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if total != 2 {
		t.Fatalf("saved request total = %d after 5 s, want 2", total)
	}
	deadline = time.Now().Add(5 * time.Second)
	for {
		e.srv.stats.mu.Lock()
		running := e.srv.stats.running
		e.srv.stats.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the flusher is still running with nothing to flush")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A later request starts it again.
	e.do("GET", jobsPath, key, "")
	if err := e.srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if total = e.savedRequests(acct.ID, time.Time{}).Total; total != 3 {
		t.Errorf("after Close: total %d, want 3", total)
	}
}

// TestFlushFailureKeepsData: a flush that cannot write keeps its
// aggregates for the next one, merged with what arrived meanwhile.
func TestFlushFailureKeepsData(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 1000)
	key := e.allScopesKey(acct)
	srv := New(Config{Now: e.clock.Now, StatsFlushInterval: -1}, e.st, fakeLocator{}, nil)
	ctx := context.Background()
	info := &reqInfo{accountID: acct.ID}
	srv.observeRequest(ctx, info, 200, time.Millisecond)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	// A cancelled context makes the write fail: the store does not begin
	// a write for a caller that has given up (internal/sqlite, WithTx).
	if err := srv.FlushStats(cancelled); err == nil {
		t.Fatal("flush with a cancelled context succeeded")
	}
	srv.observeRequest(ctx, info, 500, time.Millisecond)
	if err := srv.FlushStats(ctx); err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	e.h = srv.Handler()
	if r := getOpsSummary(e, key, "").Requests; r.Total != 2 || r.Succeeded != 1 || r.ServerErrors != 1 {
		t.Errorf("after a failed and a good flush: %+v", r)
	}
	srv.stats.mu.Lock()
	running := srv.stats.running
	srv.stats.mu.Unlock()
	if running {
		t.Error("a flusher started although StatsFlushInterval < 0")
	}
}

// TestStatsConcurrent records, flushes and reads at once (run with -race):
// the totals come out exact, never counted twice or lost.
func TestStatsConcurrent(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 1000)
	key := e.allScopesKey(acct)
	srv := New(Config{Now: e.clock.Now, StatsFlushInterval: -1}, e.st, fakeLocator{}, nil)
	ctx := context.Background()
	info := &reqInfo{accountID: acct.ID}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := srv.FlushStats(ctx); err != nil {
				t.Error(err)
				return
			}
		}
	})
	readers.Go(func() {
		var last int64
		for {
			select {
			case <-stop:
				return
			default:
			}
			from := t0.Truncate(time.Hour)
			c, err := srv.requestCounts(ctx, acct.ID, from, from.Add(time.Hour))
			if err != nil {
				t.Error(err)
				return
			}
			if c.Total < last {
				t.Errorf("total went down from %d to %d", last, c.Total)
				return
			}
			last = c.Total
		}
	})
	var writers sync.WaitGroup
	for range 8 {
		writers.Go(func() {
			for range 200 {
				srv.observeRequest(ctx, info, 200, time.Millisecond)
			}
		})
	}
	writers.Wait()
	close(stop)
	readers.Wait()
	e.srv = srv
	e.h = srv.Handler()
	if r := getOpsSummary(e, key, "").Requests; r.Total != 1600 || r.Succeeded != 1600 {
		t.Errorf("after concurrent recording: %+v", r)
	}
}

// BenchmarkObserveRequest is the per-request cost of recording, with
// parallel callers on one account (the worst case for the one mutex); set
// it beside BenchmarkCreateJob's time per request.
func BenchmarkObserveRequest(b *testing.B) {
	e := newEnv(b)
	acct := e.account(1, 1)
	srv := New(Config{Now: e.clock.Now, StatsFlushInterval: -1}, e.st, fakeLocator{}, nil)
	info := &reqInfo{accountID: acct.ID}
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			srv.observeRequest(ctx, info, 200, 800*time.Microsecond)
		}
	})
}

// TestCloseFlushesAfterDeadline: a shutdown whose deadline has passed
// still saves the statistics.
func TestCloseFlushesAfterDeadline(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 1000)
	key := e.allScopesKey(acct)
	e.do("GET", jobsPath, key, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.srv.Close(ctx); err != nil {
		t.Fatalf("Close with an expired context: %v", err)
	}
	if total := e.savedRequests(acct.ID, time.Time{}).Total; total != 1 {
		t.Errorf("saved total %d, want 1", total)
	}
	if err := e.srv.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
