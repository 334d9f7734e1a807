package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// logAddrs reads the addresses of the "listening" and "metrics listening"
// lines of a JSON log.
func logAddrs(log string) (api, metrics string) {
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var line struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch line.Msg {
		case "listening":
			api = line.Addr
		case "metrics listening":
			metrics = line.Addr
		}
	}
	return api, metrics
}

// call sends one API request and returns its status and body.
func call(t *testing.T, method, url, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeMetrics runs serve with --metrics-addr: requests, a job and its
// webhook delivery show on the metrics listener under their route
// patterns and outcomes, and the API listener has no /metrics.
func TestServeMetrics(t *testing.T) {
	var delivered atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		delivered.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	db := filepath.Join(t.TempDir(), "metrics.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	env := map[string]string{"LOCRISK_DATA_DIR": fixtureData, "LOCRISK_DB": db, "LOCRISK_LOG_FORMAT": "json",
		"LOCRISK_METRICS_ADDR": "127.0.0.1:0"}
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--workers", "1", "--webhook-allow-private"},
			func(k string) (string, bool) { v, ok := env[k]; return v, ok }, strings.NewReader(""), &bytes.Buffer{}, &stderr)
	}()
	var apiAddr, metricsAddr string
	for deadline := time.Now().Add(30 * time.Second); apiAddr == "" || metricsAddr == ""; {
		select {
		case code := <-done:
			t.Fatalf("serve exited %d early:\n%s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listening lines after 30s:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
		apiAddr, metricsAddr = logAddrs(stderr.String())
	}
	api, met := "http://"+apiAddr, "http://"+metricsAddr
	if apiAddr == metricsAddr {
		t.Fatalf("metrics on the API's address %s", apiAddr)
	}

	acct := strings.TrimSpace(cmd(t, env, "accounts", "create", "--name", "Metrics test").stdout)
	key := strings.TrimSpace(cmd(t, env, "keys", "create", "--account", acct, "--scopes", "reports:create,reports:read,webhooks:write").stdout)
	if code, body := call(t, "POST", api+"/api/v1/webhooks", key,
		`{"name": "metrics", "url": "`+receiver.URL+`", "events": ["report.job.completed"]}`); code != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", code, body)
	}
	code, body := call(t, "POST", api+"/api/v1/location-risk/report-jobs", key, `{"latitude": 41.8781, "longitude": -87.6298}`)
	if code != http.StatusAccepted {
		t.Fatalf("create job: %d %s", code, body)
	}
	if code, _ := call(t, "GET", api+"/api/v1/location-risk/report-jobs/job_doesnotexist", key, ""); code != http.StatusNotFound {
		t.Errorf("unknown job: %d", code)
	}
	// The API listener does not serve metrics: /metrics is an unknown path.
	if code, body := call(t, "GET", api+"/metrics", "", ""); code != http.StatusNotFound || strings.Contains(body, "locrisk_") {
		t.Errorf("GET /metrics on the API listener: %d %s", code, body)
	}

	// The job completes and its event is delivered; then the counters
	// show both.
	wants := []string{
		`locrisk_http_requests_total{code="202",method="POST",route="/api/v1/location-risk/report-jobs"} 1`,
		`locrisk_http_requests_total{code="201",method="POST",route="/api/v1/webhooks"} 1`,
		`locrisk_http_requests_total{code="404",method="GET",route="/api/v1/location-risk/report-jobs/{jobId}"} 1`,
		`locrisk_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`locrisk_http_request_duration_seconds_count{method="POST",route="/api/v1/location-risk/report-jobs"} 1`,
		`locrisk_job_attempts_total 1`,
		`locrisk_job_outcomes_total{outcome="completed"} 1`,
		`locrisk_job_duration_seconds_count{outcome="completed"} 1`,
		`locrisk_job_queue_depth{status="queued"} 0`,
		`locrisk_job_queue_depth{status="processing"} 0`,
		`locrisk_job_queue_oldest_age_seconds 0`,
		`locrisk_webhook_deliveries_total{outcome="succeeded"} 1`,
		`locrisk_webhook_attempt_duration_seconds_count{outcome="succeeded"} 1`,
		`locrisk_webhook_deliveries_pending 0`,
		`locrisk_db_busy_errors_total 0`,
	}
	var scraped string
	var missing []string
	for deadline := time.Now().Add(10 * time.Second); ; {
		code, scraped = call(t, "GET", met+"/metrics", "", "")
		missing = missing[:0]
		for _, w := range wants {
			if !strings.Contains(scraped, "\n"+w+"\n") {
				missing = append(missing, w)
			}
		}
		if code == http.StatusOK && len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code != http.StatusOK || len(missing) > 0 {
		t.Errorf("scrape %d lacks:\n%s", code, strings.Join(missing, "\n"))
	}
	// Every write waited for the write slot, if only for nanoseconds.
	if strings.Contains(scraped, "\nlocrisk_db_write_wait_seconds_count 0\n") || !strings.Contains(scraped, "\nlocrisk_db_write_wait_seconds_count ") {
		t.Error("no write wait observed")
	}
	if delivered.Load() != 1 {
		t.Errorf("receiver got %d deliveries, want 1", delivered.Load())
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve exited %d after the stop signal", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	// The metrics listener closed with the service.
	if _, err := http.Get(met + "/metrics"); err == nil {
		t.Error("the metrics listener still answers after the stop")
	}
	if t.Failed() {
		t.Log(stderr.String())
	}
}

// TestMetricsAddrChecks: --metrics-addr (or LOCRISK_METRICS_ADDR) must be
// a host:port other than --addr; a bad one is a usage error before
// anything is opened.
func TestMetricsAddrChecks(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "never.db")
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		mention string
	}{
		{"no port", nil, []string{"--metrics-addr", "localhost"}, "--metrics-addr must be host:port"},
		{"empty port", nil, []string{"--metrics-addr", "127.0.0.1:"}, "--metrics-addr needs a port"},
		{"the API's address", nil, []string{"--addr", "127.0.0.1:18080", "--metrics-addr", "127.0.0.1:18080"}, "must differ from --addr"},
		{"from the environment", map[string]string{"LOCRISK_METRICS_ADDR": "nonsense"}, nil, "--metrics-addr must be host:port"},
	}
	for _, tt := range tests {
		args := append([]string{"serve", "--db", db, "--data-dir", fixtureData}, tt.args...)
		r := cmd(t, tt.env, args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.mention) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 mentioning %q", tt.name, r.code, r.stderr, tt.mention)
		}
	}
	if r := cmd(t, nil, "serve", "-h"); !strings.Contains(r.stdout, "--metrics-addr") || !strings.Contains(r.stdout, "$LOCRISK_METRICS_ADDR") {
		t.Errorf("serve -h does not list --metrics-addr:\n%s", r.stdout)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused start created the database file (stat: %v)", err)
	}
}
