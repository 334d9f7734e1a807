package view

import (
	"math"
	"time"

	"github.com/locrisk/locrisk"
)

// latencyRound is how finely request latencies are shown: to 0.1 ms
// (docs/api.md, Operations summary). The histogram they come from is far
// coarser, so more digits would only suggest a precision there is not.
const latencyRound = 10

// OpsSummary is the response of GET /observability/current (docs/api.md,
// Operations summary).
type OpsSummary struct {
	APIVersion     string             `json:"apiVersion"`
	GeneratedUTC   string             `json:"generatedUtc"`
	WindowStartUTC string             `json:"windowStartUtc"`
	WindowEndUTC   string             `json:"windowEndUtc"`
	Hours          int                `json:"hours"`
	Requests       OpsRequests        `json:"requests"`
	ReportJobs     OpsReportJobs      `json:"reportJobs"`
	Batches        OpsBatches         `json:"batches"`
	Webhooks       OpsWebhooks        `json:"webhooks"`
	RecentFailures []OpsRecentFailure `json:"recentFailures"`
}

// OpsRequests counts the account's authenticated requests. Latencies are
// estimated from the histogram; null when there were no requests.
type OpsRequests struct {
	Total        int64    `json:"total"`
	Succeeded    int64    `json:"succeeded"`
	ClientErrors int64    `json:"clientErrors"`
	ServerErrors int64    `json:"serverErrors"`
	RateLimited  int64    `json:"rateLimited"`
	P50LatencyMs *float64 `json:"p50LatencyMs"`
	P95LatencyMs *float64 `json:"p95LatencyMs"`
}

// OpsReportJobs counts report jobs; completion times (created to completed)
// are null when no job completed in the window.
type OpsReportJobs struct {
	Created         int    `json:"created"`
	Completed       int    `json:"completed"`
	Failed          int    `json:"failed"`
	Queued          int    `json:"queued"`
	Processing      int    `json:"processing"`
	P50CompletionMs *int64 `json:"p50CompletionMs"`
	P95CompletionMs *int64 `json:"p95CompletionMs"`
}

// OpsBatches counts batches.
type OpsBatches struct {
	Created    int `json:"created"`
	Processing int `json:"processing"`
	Completed  int `json:"completed"`
}

// OpsWebhooks counts webhook deliveries.
type OpsWebhooks struct {
	Deliveries int `json:"deliveries"`
	Succeeded  int `json:"succeeded"`
	Failed     int `json:"failed"`
	Pending    int `json:"pending"`
}

// OpsRecentFailure is a job that failed for good or a webhook delivery that
// ran out of attempts.
type OpsRecentFailure struct {
	Kind        string `json:"kind"`
	ID          string `json:"id"`
	Code        string `json:"code"`
	Message     string `json:"message"`
	OccurredUTC string `json:"occurredUtc"`
}

// LatencyPercentile estimates the p-th percentile (0 < p <= 1), in
// milliseconds, of a latency histogram as locrisk.RequestCounts holds it;
// ok is false for an empty histogram. The bucket bounds belong to the
// server, which fills the histograms, so the server supplies this.
type LatencyPercentile func(latency []int64, p float64) (ms float64, ok bool)

// NewOpsSummary renders the summary of the window from..now, hours long:
// ops as the store counted it over that window, and requests over the
// whole hours that overlap it, whose latency percentiles percentile
// estimates. Every list is an array, empty rather than null.
func NewOpsSummary(from, now time.Time, hours int, ops locrisk.OpsSummary, requests locrisk.RequestCounts, percentile LatencyPercentile) OpsSummary {
	v := OpsSummary{
		APIVersion:     APIVersion,
		GeneratedUTC:   Time(now),
		WindowStartUTC: Time(from),
		WindowEndUTC:   Time(now),
		Hours:          hours,
		Requests: OpsRequests{
			Total: requests.Total, Succeeded: requests.Succeeded, ClientErrors: requests.ClientErrors,
			ServerErrors: requests.ServerErrors, RateLimited: requests.RateLimited,
			P50LatencyMs: latencyMs(percentile, requests.Latency, 0.50),
			P95LatencyMs: latencyMs(percentile, requests.Latency, 0.95),
		},
		ReportJobs: OpsReportJobs{
			Created: ops.Jobs.Created, Completed: ops.Jobs.Completed, Failed: ops.Jobs.Failed,
			Queued: ops.Jobs.Queued, Processing: ops.Jobs.Processing,
			P50CompletionMs: durationMs(ops.Jobs.CompletionP50),
			P95CompletionMs: durationMs(ops.Jobs.CompletionP95),
		},
		Batches:        OpsBatches(ops.Batches),
		Webhooks:       OpsWebhooks(ops.Webhooks),
		RecentFailures: make([]OpsRecentFailure, 0, len(ops.RecentFailures)),
	}
	for _, f := range ops.RecentFailures {
		v.RecentFailures = append(v.RecentFailures, OpsRecentFailure{Kind: f.Kind, ID: f.ID, Code: f.Code, Message: f.Message, OccurredUTC: Time(f.OccurredUTC)})
	}
	return v
}

// latencyMs is the p-th percentile of histogram h, rounded to latencyRound;
// nil (null) when h is empty.
func latencyMs(percentile LatencyPercentile, h []int64, p float64) *float64 {
	ms, ok := percentile(h, p)
	if !ok {
		return nil
	}
	ms = math.Round(ms*latencyRound) / latencyRound
	return &ms
}

// durationMs is d in whole milliseconds (docs/api.md: completion times are
// exact, in whole milliseconds); nil stays nil (null).
func durationMs(d *time.Duration) *int64 {
	if d == nil {
		return nil
	}
	ms := d.Milliseconds()
	return &ms
}
