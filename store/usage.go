package store

// Usage and operations queries: the current billing period, the daily
// history by bucket, and the job, batch and webhook parts of the operations
// summary. Everything here is read-only and computed from the job, batch and
// delivery tables themselves (GROUP BY over indexed ranges), so it can never
// disagree with them and needs no bookkeeping of its own.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// Buckets lists the usage buckets in the order the history shows them.
func Buckets() []string { return []string{BucketAPI, BucketBulk, BucketManual} }

// ValidBucket reports whether b is a usage bucket.
func ValidBucket(b string) bool { return slices.Contains(Buckets(), b) }

// PeriodUsage is an account's report jobs in one billing period (calendar
// month, UTC): how many were created, and how many of those are now in each
// status. Every bucket counts, as it does for the quota.
type PeriodUsage struct {
	Limit      int       // the account's monthly quota
	Start, End time.Time // the period is [Start, End)
	Created    int       // quota used
	Queued     int
	Processing int
	Completed  int
	Failed     int
}

// Remaining is what is left of the quota (never negative).
func (u PeriodUsage) Remaining() int { return max(u.Limit-u.Created, 0) }

// PeriodUsage returns the account's usage in now's billing period.
// ErrNotFound for an unknown account.
func (s *Store) PeriodUsage(ctx context.Context, accountID string, now time.Time) (PeriodUsage, error) {
	a, err := getAccount(ctx, s.db, accountID)
	if err != nil {
		return PeriodUsage{}, err
	}
	u := PeriodUsage{Limit: a.MonthlyQuota, Start: MonthStart(now), End: NextMonthStart(now)}
	var rows []struct {
		Status string `db:"status"`
		N      int    `db:"n"`
	}
	err = s.db.SelectContext(ctx, &rows, `SELECT status, COUNT(*) AS n FROM report_jobs
		WHERE account_id = ? AND created_utc >= ? AND created_utc < ? GROUP BY status`,
		accountID, FormatTime(u.Start), FormatTime(u.End))
	if err != nil {
		return PeriodUsage{}, fmt.Errorf("period usage of %s: %w", accountID, err)
	}
	for _, r := range rows {
		u.Created += r.N
		switch r.Status {
		case StatusQueued:
			u.Queued = r.N
		case StatusProcessing:
			u.Processing = r.N
		case StatusCompleted:
			u.Completed = r.N
		case StatusFailed:
			u.Failed = r.N
		}
	}
	return u, nil
}

// DailyUsage is one day and bucket of the usage history. ReportJobs counts
// the jobs created that day; Completed and Failed count the jobs whose
// current state is completed or failed and that reached it that day (by
// completed_utc), whenever they were created. A failed job that is retried
// leaves the Failed count of its day, and is counted again on the day it
// finally ends.
type DailyUsage struct {
	Day        time.Time // 00:00 UTC of the day
	Bucket     string
	ReportJobs int
	Completed  int
	Failed     int
}

// dayLayout is the prefix of TimeLayout that names the day.
const dayLayout = "2006-01-02"

// UsageHistory returns one entry per day and bucket for the days days
// starting at firstDay's UTC day, zeros included, oldest first and, within
// a day, in the order of buckets (each must be a usage bucket; none means
// all, in Buckets order).
func (s *Store) UsageHistory(ctx context.Context, accountID string, firstDay time.Time, days int, buckets []string) ([]DailyUsage, error) {
	if days < 1 {
		return nil, fmt.Errorf("%w: usage history needs at least one day, got %d", ErrInvalid, days)
	}
	if len(buckets) == 0 {
		buckets = Buckets()
	}
	for _, b := range buckets {
		if !ValidBucket(b) {
			return nil, fmt.Errorf("%w: unknown bucket %q", ErrInvalid, b)
		}
	}
	f := firstDay.UTC()
	from := time.Date(f.Year(), f.Month(), f.Day(), 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 0, days)
	type key struct{ day, bucket string }
	type counts struct{ created, completed, failed int }
	got := map[key]*counts{}
	at := func(k key) *counts {
		c := got[k]
		if c == nil {
			c = &counts{}
			got[k] = c
		}
		return c
	}

	// Two range scans, one per index: creations by created_utc
	// (report_jobs_by_account) and final states by completed_utc
	// (report_jobs_by_completion). The day is the date prefix of the
	// fixed-width UTC text.
	var created []struct {
		Day    string `db:"day"`
		Bucket string `db:"bucket"`
		N      int    `db:"n"`
	}
	err := s.db.SelectContext(ctx, &created, `SELECT substr(created_utc, 1, 10) AS day, bucket, COUNT(*) AS n
		FROM report_jobs WHERE account_id = ? AND created_utc >= ? AND created_utc < ?
		GROUP BY day, bucket`, accountID, FormatTime(from), FormatTime(to))
	if err != nil {
		return nil, fmt.Errorf("usage history of %s: jobs created: %w", accountID, err)
	}
	for _, r := range created {
		at(key{r.Day, r.Bucket}).created = r.N
	}
	var ended []struct {
		Day    string `db:"day"`
		Bucket string `db:"bucket"`
		Status string `db:"status"`
		N      int    `db:"n"`
	}
	err = s.db.SelectContext(ctx, &ended, `SELECT substr(completed_utc, 1, 10) AS day, bucket, status, COUNT(*) AS n
		FROM report_jobs WHERE account_id = ? AND completed_utc IS NOT NULL AND completed_utc >= ? AND completed_utc < ?
		  AND status IN ('completed', 'failed')
		GROUP BY day, bucket, status`, accountID, FormatTime(from), FormatTime(to))
	if err != nil {
		return nil, fmt.Errorf("usage history of %s: jobs ended: %w", accountID, err)
	}
	for _, r := range ended {
		c := at(key{r.Day, r.Bucket})
		if r.Status == StatusCompleted {
			c.completed = r.N
		} else {
			c.failed = r.N
		}
	}

	out := make([]DailyUsage, 0, days*len(buckets))
	for d := range days {
		day := from.AddDate(0, 0, d)
		ds := day.Format(dayLayout)
		for _, b := range buckets {
			u := DailyUsage{Day: day, Bucket: b}
			if c := got[key{ds, b}]; c != nil {
				u.ReportJobs, u.Completed, u.Failed = c.created, c.completed, c.failed
			}
			out = append(out, u)
		}
	}
	return out, nil
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
	// Completion time (completed_utc - created_utc) of the jobs completed in
	// the window, nearest-rank percentiles; nil when none completed.
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

// Failure kinds of the operations summary.
const (
	FailureReportJob       = "report_job"
	FailureWebhookDelivery = "webhook_delivery"
)

// Failure is a recent failure: a job that failed for good, or a webhook
// delivery that ran out of attempts.
type Failure struct {
	Kind        string
	ID          string
	Code        string
	Message     string
	OccurredUTC time.Time
}

// CodeWebhookDeliveryFailed is the Failure code of a delivery that ran out
// of attempts; its message is the last error recorded.
const CodeWebhookDeliveryFailed = "webhook_delivery_failed"

// OpsSummary computes the job, batch and webhook parts of the operations
// summary for accountID over [from, to), with at most failureLimit recent
// failures.
func (s *Store) OpsSummary(ctx context.Context, accountID string, from, to time.Time, failureLimit int) (OpsSummary, error) {
	var o OpsSummary
	var err error
	fromS, toS := FormatTime(from), FormatTime(to)
	if o.Jobs, err = jobOps(ctx, s.db, accountID, fromS, toS); err != nil {
		return OpsSummary{}, fmt.Errorf("operations summary of %s: %w", accountID, err)
	}
	err = s.db.GetContext(ctx, &o.Batches, `SELECT
		(SELECT COUNT(*) FROM batches WHERE account_id = ? AND created_utc >= ? AND created_utc < ?) AS created,
		(SELECT COUNT(*) FROM batches WHERE account_id = ? AND status = 'processing') AS processing,
		(SELECT COUNT(*) FROM batches WHERE account_id = ? AND status = 'completed' AND completed_utc >= ? AND completed_utc < ?) AS completed`,
		accountID, fromS, toS, accountID, accountID, fromS, toS)
	if err != nil {
		return OpsSummary{}, fmt.Errorf("operations summary of %s: batches: %w", accountID, err)
	}
	err = s.db.GetContext(ctx, &o.Webhooks, `SELECT
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = ? AND created_utc >= ? AND created_utc < ?) AS deliveries,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = ? AND status = 'succeeded' AND delivered_utc >= ? AND delivered_utc < ?) AS succeeded,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = ? AND status = 'failed' AND COALESCE(last_attempt_utc, created_utc) >= ? AND COALESCE(last_attempt_utc, created_utc) < ?) AS failed,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = ? AND status = 'pending') AS pending`,
		accountID, fromS, toS, accountID, fromS, toS, accountID, fromS, toS, accountID)
	if err != nil {
		return OpsSummary{}, fmt.Errorf("operations summary of %s: webhooks: %w", accountID, err)
	}
	if o.RecentFailures, err = recentFailures(ctx, s.db, accountID, fromS, toS, failureLimit); err != nil {
		return OpsSummary{}, fmt.Errorf("operations summary of %s: %w", accountID, err)
	}
	return o, nil
}

func jobOps(ctx context.Context, q queryer, accountID, fromS, toS string) (JobOps, error) {
	var j JobOps
	var c struct {
		Created    int `db:"created"`
		Completed  int `db:"completed"`
		Failed     int `db:"failed"`
		Queued     int `db:"queued"`
		Processing int `db:"processing"`
	}
	err := q.GetContext(ctx, &c, `SELECT
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = ? AND created_utc >= ? AND created_utc < ?) AS created,
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = ? AND completed_utc IS NOT NULL AND completed_utc >= ? AND completed_utc < ? AND status = 'completed') AS completed,
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = ? AND completed_utc IS NOT NULL AND completed_utc >= ? AND completed_utc < ? AND status = 'failed') AS failed,
		(SELECT COUNT(*) FROM report_jobs WHERE status = 'queued' AND account_id = ?) AS queued,
		(SELECT COUNT(*) FROM report_jobs WHERE status = 'processing' AND account_id = ?) AS processing`,
		accountID, fromS, toS, accountID, fromS, toS, accountID, fromS, toS, accountID, accountID)
	if err != nil {
		return JobOps{}, fmt.Errorf("job counts: %w", err)
	}
	j.Created, j.Completed, j.Failed, j.Queued, j.Processing = c.Created, c.Completed, c.Failed, c.Queued, c.Processing

	// Completion times are computed here from the rows: a window holds at
	// most a few hundred thousand jobs, and exact percentiles beat a
	// histogram's interpolation.
	var rows []struct {
		Created   string `db:"created_utc"`
		Completed string `db:"completed_utc"`
	}
	err = q.SelectContext(ctx, &rows, `SELECT created_utc, completed_utc FROM report_jobs
		WHERE account_id = ? AND completed_utc IS NOT NULL AND completed_utc >= ? AND completed_utc < ? AND status = 'completed'`,
		accountID, fromS, toS)
	if err != nil {
		return JobOps{}, fmt.Errorf("job completion times: %w", err)
	}
	ds := make([]time.Duration, 0, len(rows))
	for _, r := range rows {
		c, err := ParseTime(r.Created)
		if err != nil {
			return JobOps{}, err
		}
		d, err := ParseTime(r.Completed)
		if err != nil {
			return JobOps{}, err
		}
		ds = append(ds, max(d.Sub(c), 0))
	}
	j.CompletionP50 = nearestRank(ds, 0.50)
	j.CompletionP95 = nearestRank(ds, 0.95)
	return j, nil
}

// nearestRank is the p-th percentile (0 < p <= 1) of ds by the nearest-rank
// method: the smallest value with at least p of the values at or below it,
// always one of the values. It sorts ds. nil for no values.
func nearestRank(ds []time.Duration, p float64) *time.Duration {
	if len(ds) == 0 {
		return nil
	}
	slices.Sort(ds)
	// p*n computed in float can land a hair above an integer (0.95*20);
	// the epsilon keeps an exact rank exact.
	rank := int(math.Ceil(p*float64(len(ds)) - 1e-9))
	rank = min(max(rank, 1), len(ds))
	v := ds[rank-1]
	return &v
}

func recentFailures(ctx context.Context, q queryer, accountID, fromS, toS string, limit int) ([]Failure, error) {
	if limit <= 0 {
		return []Failure{}, nil
	}
	var rows []struct {
		Kind     string `db:"kind"`
		ID       string `db:"id"`
		Code     string `db:"code"`
		Message  string `db:"message"`
		Occurred string `db:"occurred"`
	}
	// Each side is limited on its own (index order), then the union is
	// merged; ids break ties so the order is stable.
	err := q.SelectContext(ctx, &rows, `SELECT * FROM (
		SELECT 'report_job' AS kind, id, COALESCE(error_code, '') AS code, COALESCE(error_message, '') AS message, completed_utc AS occurred
		FROM report_jobs WHERE account_id = ? AND completed_utc IS NOT NULL AND completed_utc >= ? AND completed_utc < ? AND status = 'failed'
		ORDER BY completed_utc DESC, id DESC LIMIT ?)
	UNION ALL SELECT * FROM (
		SELECT 'webhook_delivery' AS kind, id, ? AS code,
			COALESCE(NULLIF(error, ''), CASE WHEN response_status IS NOT NULL THEN 'the endpoint answered HTTP ' || response_status ELSE 'delivery failed' END) AS message,
			COALESCE(last_attempt_utc, created_utc) AS occurred
		FROM webhook_deliveries WHERE account_id = ? AND status = 'failed'
		  AND COALESCE(last_attempt_utc, created_utc) >= ? AND COALESCE(last_attempt_utc, created_utc) < ?
		ORDER BY occurred DESC, id DESC LIMIT ?)`,
		accountID, fromS, toS, limit, CodeWebhookDeliveryFailed, accountID, fromS, toS, limit)
	if err != nil {
		return nil, fmt.Errorf("recent failures: %w", err)
	}
	out := make([]Failure, 0, len(rows))
	for _, r := range rows {
		t, err := ParseTime(r.Occurred)
		if err != nil {
			return nil, fmt.Errorf("failure %s: %w", r.ID, err)
		}
		out = append(out, Failure{Kind: r.Kind, ID: r.ID, Code: r.Code, Message: r.Message, OccurredUTC: t})
	}
	sort.Slice(out, func(i, k int) bool {
		if !out[i].OccurredUTC.Equal(out[k].OccurredUTC) {
			return out[i].OccurredUTC.After(out[k].OccurredUTC)
		}
		return out[i].ID > out[k].ID
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
