package e2e

import (
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// metricsAddr waits for the server's "metrics listening" line and returns
// its address.
func (s *server) metricsAddr(tb testing.TB) string {
	tb.Helper()
	var addr string
	waitUntil(tb, startTimeout, "the metrics listening line", func() bool {
		for _, rec := range s.log.records() {
			if rec["msg"] == "metrics listening" {
				addr = str(rec["addr"])
			}
		}
		return addr != ""
	})
	return addr
}

// scrapeMetrics GETs /metrics at addr and returns the body.
func scrapeMetrics(tb testing.TB, addr string) string {
	tb.Helper()
	res, err := httpClient.Get("http://" + addr + "/metrics")
	if err != nil {
		tb.Fatalf("scrape: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		tb.Fatalf("scrape: %d %v", res.StatusCode, err)
	}
	return string(b)
}

// metricValue is the value of the series written exactly as series, or -1.
func metricValue(body, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// TestMetricsListener runs the binary with --metrics-addr: a backlog shows
// in the queue gauges while one slow worker holds a job, the jobs' outcomes
// and the requests show under their route patterns once they are done, the
// API listener has no /metrics, and the metrics listener closes with the
// service on SIGTERM.
func TestMetricsListener(t *testing.T) {
	needSignals(t)
	t.Parallel()
	db := filepath.Join(t.TempDir(), "metrics.db")
	_, key := newAccountKey(t, db, "reports:create,reports:read")
	srv := startServer(t, nil, serveArgs(db, "--workers", "1", "--metrics-addr", "127.0.0.1:0",
		"--faults", "report.generate=delay:ms=500")...)
	addr := srv.metricsAddr(t)
	if addr == srv.addr {
		t.Fatalf("metrics on the API's address %s", addr)
	}

	var ids []string
	for _, p := range fixturePoints[:3] {
		ids = append(ids, srv.createJob(t, key, p))
	}
	// One worker, half a second per job: while the first is in hand the
	// other two wait.
	body := scrapeMetrics(t, addr)
	queued := metricValue(body, `locrisk_job_queue_depth{status="queued"}`)
	processing := metricValue(body, `locrisk_job_queue_depth{status="processing"}`)
	if queued+processing != 3 || queued < 2 {
		t.Errorf("backlog of 3 on one worker reads queued %v, processing %v", queued, processing)
	}
	if age := metricValue(body, `locrisk_job_queue_oldest_age_seconds`); age < 0 || age > 30 {
		t.Errorf("oldest queued age %v", age)
	}

	for _, id := range ids {
		if j := srv.waitJob(t, key, id, 20*time.Second); j.Status != "completed" {
			t.Fatalf("job %s ended %s", id, j.Status)
		}
	}
	if r := srv.do(t, "", http.MethodGet, "/metrics", nil); r.status != http.StatusNotFound || strings.Contains(string(r.body), "locrisk_") {
		t.Errorf("GET /metrics on the API listener: %d %s", r.status, r.body)
	}

	var missing []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		body = scrapeMetrics(t, addr)
		missing = missing[:0]
		for series, want := range map[string]float64{
			`locrisk_http_requests_total{code="202",method="POST",route="/api/v1/location-risk/report-jobs"}`: 3,
			`locrisk_http_requests_total{code="404",method="GET",route="unmatched"}`:                          1,
			`locrisk_job_attempts_total`:                                                                           3,
			`locrisk_job_outcomes_total{outcome="completed"}`:                                                      3,
			`locrisk_job_duration_seconds_count{outcome="completed"}`:                                              3,
			`locrisk_job_queue_depth{status="queued"}`:                                                             0,
			`locrisk_job_queue_depth{status="processing"}`:                                                         0,
			`locrisk_http_request_duration_seconds_count{method="POST",route="/api/v1/location-risk/report-jobs"}`: 3,
		} {
			if metricValue(body, series) != want {
				missing = append(missing, series+" "+strconv.FormatFloat(want, 'g', -1, 64))
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s the scrape still lacks:\n%s\n%s", strings.Join(missing, "\n"), body)
		}
	}
	// Each job took the injected half second at least.
	if sum := metricValue(body, `locrisk_job_duration_seconds_sum{outcome="completed"}`); sum < 1.5 {
		t.Errorf("three half-second jobs sum to %vs", sum)
	}
	if n := metricValue(body, `locrisk_http_requests_total{code="200",method="GET",route="/api/v1/location-risk/report-jobs/{jobId}"}`); n < 3 {
		t.Errorf("job reads counted %v, want at least 3", n)
	}

	if code, _ := srv.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("exit %d after SIGTERM", code)
	}
	if _, err := httpClient.Get("http://" + addr + "/metrics"); err == nil {
		t.Error("the metrics listener answers after the server exited")
	}
}

// TestProfilesOnMetricsListener: with --pprof the metrics listener also
// serves the runtime's profiles (a CPU profile of the running binary
// included), the metrics still answer, and the API listener serves neither;
// without --metrics-addr the flag is refused.
func TestProfilesOnMetricsListener(t *testing.T) {
	db := filepath.Join(t.TempDir(), "pprof.db")
	srv := startServer(t, nil, serveArgs(db, "--metrics-addr", "127.0.0.1:0", "--pprof")...)
	addr := srv.metricsAddr(t)
	get := func(url string) (int, []byte) {
		t.Helper()
		res, err := httpClient.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	if code, body := get("http://" + addr + "/debug/pprof/"); code != http.StatusOK || !strings.Contains(string(body), "goroutine") {
		t.Errorf("/debug/pprof/: %d %.200s", code, body)
	}
	if code, body := get("http://" + addr + "/debug/pprof/profile?seconds=1"); code != http.StatusOK || len(body) == 0 {
		t.Errorf("a one-second CPU profile: %d, %d bytes", code, len(body))
	}
	if !strings.Contains(scrapeMetrics(t, addr), "go_goroutines") {
		t.Error("the metrics are gone with --pprof")
	}
	if code, _ := get(srv.base + "/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("the API listener answers /debug/pprof/ with %d, want 404", code)
	}
	r := runCLI(t, map[string]string{"LOCRISK_DB": db + "2"}, "serve", "--addr", "127.0.0.1:0", "--pprof")
	if r.code != 2 || !strings.Contains(r.stderr, "--pprof needs --metrics-addr") {
		t.Errorf("--pprof without --metrics-addr: %s", r)
	}
}
