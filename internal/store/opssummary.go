package store

// The job, batch and webhook parts of the operations summary; the request
// part is requeststats.go's. Everything here is read-only. The summary
// counts ranges of indexes that lead with the account and the status, so
// it reads only the window's entries (docs/performance.md, "A large
// database").

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Failure kinds of the operations summary.
const (
	FailureReportJob       = "report_job"
	FailureWebhookDelivery = "webhook_delivery"
)

// CodeWebhookDeliveryFailed is the Failure code of a delivery that ran out
// of attempts; its message is the last error recorded.
const CodeWebhookDeliveryFailed = "webhook_delivery_failed"

// OpsSummary computes the job, batch and webhook parts of the operations
// summary for accountID over [from, to), with at most failureLimit recent
// failures.
func (s *Store) OpsSummary(ctx context.Context, accountID string, from, to time.Time, failureLimit int) (OpsSummary, error) {
	var o OpsSummary
	fromS, toS := FormatTime(from), FormatTime(to)
	// The parts are independent reads, each a range of its own index, so
	// they run at once on connections of the pool: the summary takes as
	// long as its longest part (the completion times) rather than the
	// sum, which at millions of jobs is what keeps it within budget
	// (docs/performance.md, "A large database"). Like the parts run
	// one after another, they do not share one snapshot.
	parts := []func() error{
		func() error { return eventCounts(ctx, s.db, accountID, from, to, &o) },
		func() error { return jobCounts(ctx, s.db, accountID, fromS, toS, &o.Jobs) },
		func() error { return completionTimes(ctx, s.db, accountID, fromS, toS, &o.Jobs) },
		func() error {
			if err := s.db.GetContext(ctx, &o.Batches, batchOpsCounts, accountID, fromS, toS); err != nil {
				return fmt.Errorf("batches: %w", err)
			}
			return nil
		},
		func() error {
			var w struct {
				Failed  int `db:"failed"`
				Pending int `db:"pending"`
			}
			if err := s.db.GetContext(ctx, &w, webhookOpsCounts, accountID, fromS, toS); err != nil {
				return fmt.Errorf("webhooks: %w", err)
			}
			o.Webhooks.Failed, o.Webhooks.Pending = w.Failed, w.Pending
			return nil
		},
		func() (err error) {
			o.RecentFailures, err = recentFailures(ctx, s.db, accountID, fromS, toS, failureLimit)
			return err
		},
	}
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Go(func() { errs[i] = part() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return OpsSummary{}, fmt.Errorf("operations summary of %s: %w", accountID, err)
	}
	return o, nil
}

// eventCounts sets the counts of o that usage_hourly and ops_hourly keep
// (migration 010): jobs created, deliveries created and deliveries
// succeeded in [from, to). The whole UTC hours inside the window are
// summed from them; the
// part hours at its two ends (together an hour for a window of whole
// hours) are counted from the indexes, as the whole window was before.
func eventCounts(ctx context.Context, q queryer, accountID string, from, to time.Time, o *OpsSummary) error {
	var c, edge eventCountsRow
	add := func(query string, from, to string) error {
		if from >= to {
			return nil
		}
		if err := q.GetContext(ctx, &edge, query, accountID, from, to); err != nil {
			return fmt.Errorf("event counts: %w", err)
		}
		c.Jobs, c.Deliveries, c.Succeeded = c.Jobs+edge.Jobs, c.Deliveries+edge.Deliveries, c.Succeeded+edge.Succeeded
		return nil
	}
	lo, hi := from.UTC().Truncate(time.Hour), to.UTC().Truncate(time.Hour)
	if lo.Before(from) {
		lo = lo.Add(time.Hour)
	}
	var err error
	if lo.Before(hi) {
		err = errors.Join(add(opsHourlyCounts, lo.Format(hourLayout), hi.Format(hourLayout)),
			add(opsEventCounts, FormatTime(from), FormatTime(lo)), add(opsEventCounts, FormatTime(hi), FormatTime(to)))
	} else {
		err = add(opsEventCounts, FormatTime(from), FormatTime(to))
	}
	if err != nil {
		return err
	}
	o.Jobs.Created, o.Webhooks.Deliveries, o.Webhooks.Succeeded = c.Jobs, c.Deliveries, c.Succeeded
	return nil
}

// eventCountsRow is a row of opsHourlyCounts or opsEventCounts.
type eventCountsRow struct {
	Jobs       int `db:"jobs_created"`
	Deliveries int `db:"deliveries_created"`
	Succeeded  int `db:"deliveries_succeeded"`
}

// jobCounts sets the job counts of j but the created (eventCounts) and the
// completed (completionTimes).
func jobCounts(ctx context.Context, q queryer, accountID, fromS, toS string, j *JobOps) error {
	var c struct {
		Failed     int `db:"failed"`
		Queued     int `db:"queued"`
		Processing int `db:"processing"`
	}
	if err := q.GetContext(ctx, &c, jobOpsCounts, accountID, fromS, toS); err != nil {
		return fmt.Errorf("job counts: %w", err)
	}
	j.Failed, j.Queued, j.Processing = c.Failed, c.Queued, c.Processing
	return nil
}

// completionTimes sets j's completed count and completion percentiles.
//
// The percentiles are exact: every completion time of the window, read
// from report_jobs_ended, where it is computed once when the job ends (a
// covering index range: no table row, no time parsing), sorted here. They
// come back as one comma-separated text rather than one row each: at tens
// of thousands of jobs in a window, a row per value cost most of the
// summary's time (docs/performance.md, "A large database").
func completionTimes(ctx context.Context, q queryer, accountID, fromS, toS string, j *JobOps) error {
	var list string
	if err := q.GetContext(ctx, &list, jobOpsCompletionTimes, accountID, fromS, toS); err != nil {
		return fmt.Errorf("job completion times: %w", err)
	}
	var ds []time.Duration
	if list != "" {
		parts := strings.Split(list, ",")
		ds = make([]time.Duration, len(parts))
		for i, p := range parts {
			ms, err := strconv.ParseInt(p, 10, 64)
			if err != nil {
				return fmt.Errorf("job completion time %q: %w", p, err)
			}
			ds[i] = time.Duration(ms) * time.Millisecond
		}
	}
	j.Completed = len(ds)
	j.CompletionP50 = nearestRank(ds, 0.50)
	j.CompletionP95 = nearestRank(ds, 0.95)
	return nil
}

// completionMs is a job's completion time (completed_utc - created_utc)
// in whole milliseconds, as both are stored, and never negative: the last
// column of the index report_jobs_ended (migration 010), written the same
// way so that SQLite reads it from the index instead of computing it.
const completionMs = `MAX(0, CAST(round((julianday(completed_utc) - julianday(created_utc)) * 86400000) AS INTEGER))`

// The operations summary's queries, one constant each so that
// TestOpsSummaryQueryPlans checks the very text OpsSummary runs. Every
// parameter is numbered: ?1 the account, ?2 and ?3 the window [from, to).
const (
	// opsHourlyCounts: the events of whole hours [?2, ?3) (hourLayout)
	// from the primary keys of usage_hourly and ops_hourly.
	opsHourlyCounts = `SELECT
		(SELECT COALESCE(SUM(open + completed + failed), 0) FROM usage_hourly
			WHERE account_id = ?1 AND hour >= ?2 AND hour < ?3) AS jobs_created,
		COALESCE(SUM(deliveries_created), 0) AS deliveries_created,
		COALESCE(SUM(deliveries_succeeded), 0) AS deliveries_succeeded
		FROM ops_hourly WHERE account_id = ?1 AND hour >= ?2 AND hour < ?3`
	// opsEventCounts: the same events counted from the rows, for the part
	// hours at the window's ends: jobs by report_jobs_by_account,
	// deliveries by webhook_deliveries_by_account and, succeeded, by
	// webhook_deliveries_by_status.
	opsEventCounts = `SELECT
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = ?1 AND created_utc >= ?2 AND created_utc < ?3) AS jobs_created,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = ?1 AND created_utc >= ?2 AND created_utc < ?3) AS deliveries_created,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = ?1 AND status = 'succeeded' AND delivered_utc >= ?2 AND delivered_utc < ?3) AS deliveries_succeeded`
	// jobOpsCounts: failed by report_jobs_ended; queued and processing
	// now by report_jobs_by_status.
	jobOpsCounts = `SELECT
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = ?1 AND status = 'failed' AND completed_utc IS NOT NULL AND completed_utc >= ?2 AND completed_utc < ?3) AS failed,
		(SELECT COUNT(*) FROM report_jobs WHERE status = 'queued' AND account_id = ?1) AS queued,
		(SELECT COUNT(*) FROM report_jobs WHERE status = 'processing' AND account_id = ?1) AS processing`
	// jobOpsCompletionTimes: the completion time of each job completed
	// in the window, from report_jobs_ended (completionMs), as decimal
	// integers separated by commas; "" for none.
	jobOpsCompletionTimes = `SELECT COALESCE(group_concat(` + completionMs + `, ','), '') FROM report_jobs
		WHERE account_id = ?1 AND status = 'completed' AND completed_utc IS NOT NULL AND completed_utc >= ?2 AND completed_utc < ?3`
	// batchOpsCounts: created by batches_by_account; processing and
	// completed by batches_by_status.
	batchOpsCounts = `SELECT
		(SELECT COUNT(*) FROM batches WHERE account_id = ?1 AND created_utc >= ?2 AND created_utc < ?3) AS created,
		(SELECT COUNT(*) FROM batches WHERE account_id = ?1 AND status = 'processing') AS processing,
		(SELECT COUNT(*) FROM batches WHERE account_id = ?1 AND status = 'completed' AND completed_utc >= ?2 AND completed_utc < ?3) AS completed`
	// webhookOpsCounts: failed by webhook_deliveries_failed; pending by
	// webhook_deliveries_by_status. (Created and succeeded: eventCounts.)
	webhookOpsCounts = `SELECT
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = ?1 AND status = 'failed' AND COALESCE(last_attempt_utc, created_utc) >= ?2 AND COALESCE(last_attempt_utc, created_utc) < ?3) AS failed,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = ?1 AND status = 'pending') AS pending`
	// recentFailuresQuery: each side newest first along its index
	// (report_jobs_ended, webhook_deliveries_failed), limited on its own
	// (?4), then merged; ids break ties so the order is stable. ?5 is
	// CodeWebhookDeliveryFailed.
	recentFailuresQuery = `SELECT * FROM (
		SELECT 'report_job' AS kind, id, COALESCE(error_code, '') AS code, COALESCE(error_message, '') AS message, completed_utc AS occurred
		FROM report_jobs WHERE account_id = ?1 AND status = 'failed' AND completed_utc IS NOT NULL AND completed_utc >= ?2 AND completed_utc < ?3
		ORDER BY completed_utc DESC, id DESC LIMIT ?4)
	UNION ALL SELECT * FROM (
		SELECT 'webhook_delivery' AS kind, id, ?5 AS code,
			COALESCE(NULLIF(error, ''), CASE WHEN response_status IS NOT NULL THEN 'the endpoint answered HTTP ' || response_status ELSE 'delivery failed' END) AS message,
			COALESCE(last_attempt_utc, created_utc) AS occurred
		FROM webhook_deliveries WHERE account_id = ?1 AND status = 'failed'
		  AND COALESCE(last_attempt_utc, created_utc) >= ?2 AND COALESCE(last_attempt_utc, created_utc) < ?3
		ORDER BY occurred DESC, id DESC LIMIT ?4)`
)

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
	err := q.SelectContext(ctx, &rows, recentFailuresQuery, accountID, fromS, toS, limit, CodeWebhookDeliveryFailed)
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
