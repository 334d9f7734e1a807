package metrics_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/jobs"
	"github.com/locrisk/locrisk/internal/metrics"
	"github.com/locrisk/locrisk/internal/server"
	"github.com/locrisk/locrisk/internal/sqlite"
	"github.com/locrisk/locrisk/internal/webhookworker"
)

// The observer interfaces the measured packages declare.
var (
	_ server.RequestObserver = (*metrics.Metrics)(nil)
	_ jobs.Observer          = (*metrics.Metrics)(nil)
	_ webhookworker.Observer = (*metrics.Metrics)(nil)
	_ sqlite.Observer        = (*metrics.Metrics)(nil)
)

// fakeQueue answers QueueDepth with d or err, and remembers whether the
// read had a deadline.
type fakeQueue struct {
	d           locrisk.QueueDepth
	err         error
	hadDeadline bool
}

func (q *fakeQueue) QueueDepth(ctx context.Context) (locrisk.QueueDepth, error) {
	_, q.hadDeadline = ctx.Deadline()
	return q.d, q.err
}

// scrape serves m's handler and GETs path, returning status and body.
func scrape(t *testing.T, m *metrics.Metrics, method, path string) (int, string) {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestScrape: what the observers are told shows in the scrape as the
// documented series (docs/operations.md, Metrics), under bounded labels.
func TestScrape(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	m := metrics.New(metrics.Config{Now: func() time.Time { return now }, Logger: quiet()})
	q := &fakeQueue{d: locrisk.QueueDepth{JobsQueued: 3, JobsProcessing: 1, OldestRunnable: now.Add(-90 * time.Second), DeliveriesQueued: 2}}
	m.WatchQueue(q)

	m.ObserveRequest("/api/v1/location-risk/report-jobs", "POST", 202, 3*time.Millisecond)
	m.ObserveRequest("/api/v1/location-risk/report-jobs/{jobId}", "GET", 404, time.Millisecond)
	m.ObserveRequest("/api/v1/location-risk/report-jobs/{jobId}", "GET", 404, time.Millisecond)
	m.ObserveRequest("", "GET", 404, time.Millisecond)
	m.ObserveRequest("", "BREW", 405, time.Millisecond)
	m.JobStarted(false)
	m.JobStarted(true)
	m.JobFinished(jobs.OutcomeRetried, 2*time.Millisecond)
	m.JobFinished(jobs.OutcomeCompleted, 40*time.Millisecond)
	m.DeliveryAttempt(webhookworker.OutcomeFailedAttempt, 15*time.Millisecond)
	m.DeliveryAttempt(webhookworker.OutcomeSucceeded, 15*time.Millisecond)
	m.WriteWait(3 * time.Millisecond)
	m.WriteBusy()
	m.GroupCommit(12)

	code, body := scrape(t, m, "GET", metrics.Path)
	if code != http.StatusOK {
		t.Fatalf("scrape: %d\n%s", code, body)
	}
	for _, want := range []string{
		`locrisk_http_requests_total{code="202",method="POST",route="/api/v1/location-risk/report-jobs"} 1`,
		`locrisk_http_requests_total{code="404",method="GET",route="/api/v1/location-risk/report-jobs/{jobId}"} 2`,
		`locrisk_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`locrisk_http_requests_total{code="405",method="other",route="unmatched"} 1`,
		`locrisk_http_request_duration_seconds_bucket{method="POST",route="/api/v1/location-risk/report-jobs",le="0.002"} 0`,
		`locrisk_http_request_duration_seconds_bucket{method="POST",route="/api/v1/location-risk/report-jobs",le="0.005"} 1`,
		`locrisk_http_request_duration_seconds_count{method="GET",route="/api/v1/location-risk/report-jobs/{jobId}"} 2`,
		`locrisk_job_attempts_total 2`,
		`locrisk_job_outcomes_total{outcome="completed"} 1`,
		`locrisk_job_outcomes_total{outcome="retried"} 1`,
		`locrisk_job_outcomes_total{outcome="reclaimed"} 1`,
		`locrisk_job_outcomes_total{outcome="failed"} 0`,
		`locrisk_job_outcomes_total{outcome="released"} 0`,
		`locrisk_job_duration_seconds_count{outcome="completed"} 1`,
		`locrisk_job_duration_seconds_sum{outcome="completed"} 0.04`,
		`locrisk_job_queue_depth{status="queued"} 3`,
		`locrisk_job_queue_depth{status="processing"} 1`,
		`locrisk_job_queue_oldest_age_seconds 90`,
		`locrisk_webhook_deliveries_pending 2`,
		`locrisk_webhook_deliveries_total{outcome="succeeded"} 1`,
		`locrisk_webhook_deliveries_total{outcome="failed_attempt"} 1`,
		`locrisk_webhook_deliveries_total{outcome="failed_final"} 0`,
		`locrisk_webhook_attempt_duration_seconds_count{outcome="succeeded"} 1`,
		`locrisk_db_write_wait_seconds_bucket{le="0.005"} 1`,
		`locrisk_db_write_wait_seconds_count 1`,
		`locrisk_db_busy_errors_total 1`,
		`locrisk_db_commit_group_size_bucket{le="16"} 1`,
		`locrisk_db_commit_group_size_count 1`,
		`go_goroutines `,
	} {
		if !strings.Contains(body, "\n"+want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(body, "BREW") {
		t.Error("a client's method token became a label value")
	}
	if !q.hadDeadline {
		t.Error("the queue read had no timeout")
	}

	// Only GET /metrics.
	for _, tt := range []struct {
		method, path string
		code         int
	}{
		{"POST", metrics.Path, http.StatusMethodNotAllowed},
		{"GET", "/api/v1/location-risk/report-jobs", http.StatusNotFound},
		{"GET", "/", http.StatusNotFound},
	} {
		if code, _ := scrape(t, m, tt.method, tt.path); code != tt.code {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, code, tt.code)
		}
	}
}

// TestQueueOldestAge: no queued job, or only jobs whose backoff has not
// passed, reads as age 0.
func TestQueueOldestAge(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name   string
		oldest time.Time
	}{
		{"empty", time.Time{}},
		{"in a backoff", now.Add(time.Second)},
	} {
		m := metrics.New(metrics.Config{Now: func() time.Time { return now }, Logger: quiet()})
		m.WatchQueue(&fakeQueue{d: locrisk.QueueDepth{OldestRunnable: tt.oldest}})
		_, body := scrape(t, m, "GET", metrics.Path)
		if !strings.Contains(body, "\nlocrisk_job_queue_oldest_age_seconds 0\n") {
			t.Errorf("%s: oldest age is not 0", tt.name)
		}
	}
}

// TestQueueErrorServesTheRest: when the queue cannot be read the scrape
// still answers, with everything but the queue gauges.
func TestQueueErrorServesTheRest(t *testing.T) {
	m := metrics.New(metrics.Config{Logger: quiet()})
	m.WatchQueue(&fakeQueue{err: errors.New("database is locked")})
	m.ObserveRequest("", "GET", 404, time.Millisecond)
	code, body := scrape(t, m, "GET", metrics.Path)
	if code != http.StatusOK || !strings.Contains(body, "locrisk_http_requests_total") {
		t.Fatalf("scrape: %d\n%s", code, body)
	}
	if strings.Contains(body, "locrisk_job_queue_depth{") {
		t.Error("queue gauges served without a queue read")
	}
}

// TestRegistriesApart: two Metrics share no series (no global registry).
func TestRegistriesApart(t *testing.T) {
	a := metrics.New(metrics.Config{Logger: quiet()})
	b := metrics.New(metrics.Config{Logger: quiet()})
	a.WriteBusy()
	_, body := scrape(t, b, "GET", metrics.Path)
	if !strings.Contains(body, "\nlocrisk_db_busy_errors_total 0\n") {
		t.Error("one Metrics' counter shows in another's scrape")
	}
}
