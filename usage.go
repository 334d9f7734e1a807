package locrisk

import (
	"slices"
	"time"
)

// Buckets lists the usage buckets in the order the history shows them.
func Buckets() []string { return []string{BucketAPI, BucketBulk, BucketManual} }

// ValidBucket reports whether b is a usage bucket.
func ValidBucket(b string) bool { return slices.Contains(Buckets(), b) }

// PeriodUsage is an account's report jobs in one billing period (calendar
// month, UTC): how many were created, and how many of those are now in each
// status. Every bucket counts, as it does for the quota. The counts by
// status carry the column names a store's count query gives them.
type PeriodUsage struct {
	Limit      int       `db:"-"` // the account's monthly quota
	Start, End time.Time `db:"-"` // the period is [Start, End)
	Created    int       `db:"-"` // jobs created, watch item re-scores included
	Charged    int       `db:"-"` // quota used: the jobs charged, re-scores not
	Queued     int       `db:"queued"`
	Processing int       `db:"processing"`
	Completed  int       `db:"completed"`
	Failed     int       `db:"failed"`
}

// Remaining is what is left of the quota (never negative).
func (u PeriodUsage) Remaining() int { return max(u.Limit-u.Charged, 0) }

// DailyUsage is one day and bucket of the usage history. ReportJobs counts
// the jobs created that day; Completed and Failed count the jobs whose
// current state is completed or failed and that reached it that day (by
// completed_utc), whenever they were created. A failed job that is retried
// leaves the Failed count of its day, and is counted again on the day it
// finally ends. The column names are those a store's query gives them.
type DailyUsage struct {
	Day        time.Time `db:"day"` // 00:00 UTC of the day
	Bucket     string    `db:"bucket"`
	ReportJobs int       `db:"report_jobs"`
	Completed  int       `db:"completed"`
	Failed     int       `db:"failed"`
}

// OpsSummary is the stored part of the operations summary for one account
// and window [From, To). Counts of things that happen (created, completed,
// failed, delivered) are events inside the window; counts of states that
// last (queued, processing, pending) are a snapshot of now.
type OpsSummary struct {
	Jobs           JobOps
	Batches        BatchOps
	Webhooks       WebhookOps
	RecentFailures []Failure // newest first, at most the limit asked for
}

// JobOps summarises report jobs.
type JobOps struct {
	Created    int // created in the window
	Completed  int // completed in the window
	Failed     int // failed (finally) in the window
	Queued     int // queued now
	Processing int // processing now
	// Nearest-rank percentiles of the completion time (completed_utc -
	// created_utc, whole milliseconds, negative counted as 0) of the jobs
	// completed in the UTC hours that overlap the window, each such hour
	// counted in full (so also jobs completed in the part of its first
	// and last hour outside the window, which Completed leaves out); nil
	// when none completed in those hours. Each is within 5% of the exact
	// nearest-rank value, in whole milliseconds (a store may keep
	// histograms rather than every time: docs/api.md, Operations summary).
	CompletionP50, CompletionP95 *time.Duration
}

// BatchOps summarises batches.
type BatchOps struct {
	Created    int `db:"created"`    // created in the window
	Processing int `db:"processing"` // processing now
	Completed  int `db:"completed"`  // completed in the window
}

// WebhookOps summarises webhook deliveries (one event to one endpoint). A
// failed delivery is placed in time by its last attempt, or by its creation
// when it never had one (its endpoint was disabled first): the table keeps
// no separate time of giving up.
type WebhookOps struct {
	Deliveries int `db:"deliveries"` // created in the window
	Succeeded  int `db:"succeeded"`  // succeeded in the window (delivered_utc)
	Failed     int `db:"failed"`     // given up in the window (see below)
	Pending    int `db:"pending"`    // still to be delivered now
}

// Failure is a recent failure: a job that failed for good, or a webhook
// delivery that ran out of attempts.
type Failure struct {
	Kind        string
	ID          string
	Code        string
	Message     string
	OccurredUTC time.Time
}
