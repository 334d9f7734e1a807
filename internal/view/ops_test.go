package view

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

// fakePercentile stands in for the server's histogram estimate: nothing for
// an empty histogram, else a value per percentile with more digits than the
// API shows.
func fakePercentile(h []int64, p float64) (float64, bool) {
	var n int64
	for _, c := range h {
		n += c
	}
	if n == 0 {
		return 0, false
	}
	if p == 0.50 {
		return 7.349, true
	}
	return 20.0, true
}

// The operations summary byte for byte (docs/api.md, Operations summary):
// percentiles null when there is nothing to measure, latencies to 0.1 ms,
// completion times in whole milliseconds, recentFailures an array.
func TestNewOpsSummary(t *testing.T) {
	from := t0.Add(-24 * time.Hour)
	p50, p95 := 1500*time.Millisecond+999*time.Microsecond, 3*time.Second
	tests := []struct {
		name     string
		ops      locrisk.OpsSummary
		requests locrisk.RequestCounts
		want     string
	}{
		{"empty", locrisk.OpsSummary{}, locrisk.RequestCounts{Latency: make([]int64, 15)},
			`{"apiVersion":"v1","generatedUtc":"2026-03-01T12:00:00Z","windowStartUtc":"2026-02-28T12:00:00Z","windowEndUtc":"2026-03-01T12:00:00Z","hours":24,` +
				`"requests":{"total":0,"succeeded":0,"clientErrors":0,"serverErrors":0,"rateLimited":0,"p50LatencyMs":null,"p95LatencyMs":null},` +
				`"reportJobs":{"created":0,"completed":0,"failed":0,"queued":0,"processing":0,"p50CompletionMs":null,"p95CompletionMs":null},` +
				`"batches":{"created":0,"processing":0,"completed":0},"webhooks":{"deliveries":0,"succeeded":0,"failed":0,"pending":0},"recentFailures":[]}`},
		{"populated", locrisk.OpsSummary{
			Jobs:     locrisk.JobOps{Created: 4, Completed: 2, Failed: 1, Queued: 1, CompletionP50: &p50, CompletionP95: &p95},
			Batches:  locrisk.BatchOps{Created: 2, Processing: 1, Completed: 1},
			Webhooks: locrisk.WebhookOps{Deliveries: 3, Succeeded: 1, Failed: 1, Pending: 1},
			RecentFailures: []locrisk.Failure{
				{Kind: "webhook_delivery", ID: "wd_1", Code: "webhook_delivery_failed", Message: "HTTP 500", OccurredUTC: t0.Add(-time.Minute)},
				{Kind: "report_job", ID: "job_1", Code: "internal_error", Message: "boom", OccurredUTC: from.Add(time.Hour)},
			}},
			locrisk.RequestCounts{Total: 10, Succeeded: 8, ClientErrors: 1, ServerErrors: 1, RateLimited: 1, Latency: []int64{0, 0, 0, 9, 0, 1}},
			`{"apiVersion":"v1","generatedUtc":"2026-03-01T12:00:00Z","windowStartUtc":"2026-02-28T12:00:00Z","windowEndUtc":"2026-03-01T12:00:00Z","hours":24,` +
				`"requests":{"total":10,"succeeded":8,"clientErrors":1,"serverErrors":1,"rateLimited":1,"p50LatencyMs":7.3,"p95LatencyMs":20},` +
				`"reportJobs":{"created":4,"completed":2,"failed":1,"queued":1,"processing":0,"p50CompletionMs":1500,"p95CompletionMs":3000},` +
				`"batches":{"created":2,"processing":1,"completed":1},"webhooks":{"deliveries":3,"succeeded":1,"failed":1,"pending":1},"recentFailures":[` +
				`{"kind":"webhook_delivery","id":"wd_1","code":"webhook_delivery_failed","message":"HTTP 500","occurredUtc":"2026-03-01T11:59:00Z"},` +
				`{"kind":"report_job","id":"job_1","code":"internal_error","message":"boom","occurredUtc":"2026-02-28T13:00:00Z"}]}`},
	}
	for _, tc := range tests {
		b, err := json.Marshal(NewOpsSummary(from, t0, 24, tc.ops, tc.requests, fakePercentile))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, b, tc.want)
		}
	}
}
