package sqlite

// The job, batch and webhook parts of the operations summary; the request
// part is requeststats.go's. Everything here is read-only. The summary
// counts ranges of indexes that lead with the account and the status, so
// it reads only the window's entries, takes the events of whole hours
// from hourly counters (migration 010) and the completion percentiles
// from histograms (migration 012), so that neither grows with the jobs of
// the window (docs/performance.md, "A large database").

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/locrisk/locrisk"
)

// OpsSummary computes the job, batch and webhook parts of the operations
// summary for accountID over [from, to), with at most failureLimit recent
// failures.
func (s *Store) OpsSummary(ctx context.Context, accountID string, from, to time.Time, failureLimit int) (locrisk.OpsSummary, error) {
	var o locrisk.OpsSummary
	fromS, toS := FormatTime(from), FormatTime(to)
	// The parts are independent reads, each a range of its own index, so
	// they run at once on connections of the pool: the summary takes as
	// long as its longest part rather than the sum (docs/performance.md,
	// "A large database"). Like the parts run one after another, they do
	// not share one snapshot.
	parts := []func() error{
		func() error { return eventCounts(ctx, s.db, accountID, from, to, s.now(), &o) },
		func() error { return jobCounts(ctx, s.db, accountID, fromS, toS, &o.Jobs) },
		func() error { return completionPercentiles(ctx, s.db, accountID, from, to, &o.Jobs) },
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
		return locrisk.OpsSummary{}, fmt.Errorf("operations summary of %s: %w", accountID, err)
	}
	return o, nil
}

// eventCounts sets the counts of o that usage_hourly and ops_hourly keep
// (migration 010): jobs created, jobs completed, deliveries created and
// deliveries succeeded in [from, to). The whole UTC hours inside the
// window are summed from them; each part hour at its ends is counted from
// the indexes, either the part itself or, when that is shorter, the rest
// of its hour, subtracted from the hour's counters. The rest of the last
// hour lies after now when the window ends now, as the server's do, so
// it holds no rows: the summary then counts rows of at most the first
// half hour, not the two part hours it counted before (together an hour
// of rows; docs/performance.md, "A large database"). now only chooses
// what is counted; every choice gives the same counts.
func eventCounts(ctx context.Context, q queryer, accountID string, from, to, now time.Time, o *locrisk.OpsSummary) error {
	var c eventCountsRow
	run := func(query string, args ...any) error {
		var r eventCountsRow
		if err := q.GetContext(ctx, &r, query, append([]any{accountID}, args...)...); err != nil {
			return fmt.Errorf("event counts: %w", err)
		}
		c.Jobs, c.Completed = c.Jobs+r.Jobs, c.Completed+r.Completed
		c.Deliveries, c.Succeeded = c.Deliveries+r.Deliveries, c.Succeeded+r.Succeeded
		return nil
	}
	hour := func(t time.Time) string { return t.Format(hourLayout) }
	// part counts [a, b), a part of the hour [h, h+1h): from the rows, or
	// as the hour less the rows of the rest of it.
	part := func(a, b, h time.Time, rest bool) error {
		if !a.Before(b) {
			return nil
		}
		if !rest {
			return run(opsEventCounts, FormatTime(a), FormatTime(b))
		}
		restFrom, restTo := h, a // the rest of a part at the hour's end
		if a.Equal(h) {
			restFrom, restTo = b, h.Add(time.Hour) // ... at its start
		}
		return run(opsHourLessRows, hour(h), hour(h.Add(time.Hour)), FormatTime(restFrom), FormatTime(restTo))
	}
	lo, hi := from.UTC().Truncate(time.Hour), to.UTC().Truncate(time.Hour)
	if lo.Before(from) {
		lo = lo.Add(time.Hour)
	}
	var err error
	switch {
	case lo.After(hi): // within one hour
		err = run(opsEventCounts, FormatTime(from), FormatTime(to))
	default:
		first, last := lo.Add(-time.Hour), hi.Add(time.Hour)
		err = errors.Join(
			func() error {
				if lo.Before(hi) {
					return run(opsHourlyCounts, hour(lo), hour(hi))
				}
				return nil
			}(),
			part(from, lo, first, from.Sub(first) < lo.Sub(from)),
			part(hi, to, hi, last.Sub(to) < to.Sub(hi) || !to.Before(now)))
	}
	if err != nil {
		return err
	}
	o.Jobs.Created, o.Jobs.Completed = c.Jobs, c.Completed
	o.Webhooks.Deliveries, o.Webhooks.Succeeded = c.Deliveries, c.Succeeded
	return nil
}

// eventCountsRow is a row of opsHourlyCounts or opsEventCounts.
type eventCountsRow struct {
	Jobs       int `db:"jobs_created"`
	Completed  int `db:"jobs_completed"`
	Deliveries int `db:"deliveries_created"`
	Succeeded  int `db:"deliveries_succeeded"`
}

// jobCounts sets the job counts of j but the created and the completed
// (eventCounts).
func jobCounts(ctx context.Context, q queryer, accountID, fromS, toS string, j *locrisk.JobOps) error {
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

// completionPercentiles sets j's completion percentiles from the
// histograms of migration 012 (completion_histograms), over the periods
// that cover [from, to) (locrisk.CompletionPeriodsOf), each a range of
// the primary key: at most 46 hours and 7 days of buckets, whatever the
// number of jobs. The answer is within 5% of the exact nearest-rank value
// of the same jobs (the bucket holds that value, and value_ms is within
// 5% of all it holds).
func completionPercentiles(ctx context.Context, q queryer, accountID string, from, to time.Time, j *locrisk.JobOps) error {
	p, ok := locrisk.CompletionPeriodsOf(from, to)
	if !ok {
		return nil
	}
	var h []locrisk.HistogramBucket
	if err := q.SelectContext(ctx, &h, completionHistogram, accountID,
		p.HoursBefore[0].Format(hourLayout), p.HoursBefore[1].Format(hourLayout),
		p.Days[0].Format(dayLayout), p.Days[1].Format(dayLayout),
		p.HoursAfter[0].Format(hourLayout), p.HoursAfter[1].Format(hourLayout)); err != nil {
		return fmt.Errorf("job completion times: %w", err)
	}
	j.SetCompletionPercentiles(h)
	return nil
}

// completionMs is a job's completion time (completed_utc - created_utc)
// in whole milliseconds, as both are stored, and never negative: the last
// column of the index report_jobs_ended (migration 010) and what the
// triggers of completion_histograms (migration 012) put in a bucket, written
// out the same way there. julianday keeps the milliseconds the times are
// stored with, and round() removes a double's error.
const completionMs = `MAX(0, CAST(round((julianday(completed_utc) - julianday(created_utc)) * 86400000) AS INTEGER))`

// The four counts of eventCountsRow, one a line, %[1]s and %[2]s the
// bounds of a range [%[1]s, %[2]s): hourlyEventCounts sums the hours
// (hourLayout) of usage_hourly and ops_hourly (migration 010) by their
// primary keys; rowEventCounts counts the rows of the times: jobs created
// by report_jobs_by_account, completed by report_jobs_ended, deliveries
// by webhook_deliveries_by_account and, succeeded, by
// webhook_deliveries_by_status.
const (
	hourlyEventCounts = `(SELECT COALESCE(SUM(open + completed + failed), 0) FROM usage_hourly WHERE account_id = ?1 AND hour >= %[1]s AND hour < %[2]s)
	(SELECT COALESCE(SUM(ended_completed), 0) FROM usage_hourly WHERE account_id = ?1 AND hour >= %[1]s AND hour < %[2]s)
	(SELECT COALESCE(SUM(deliveries_created), 0) FROM ops_hourly WHERE account_id = ?1 AND hour >= %[1]s AND hour < %[2]s)
	(SELECT COALESCE(SUM(deliveries_succeeded), 0) FROM ops_hourly WHERE account_id = ?1 AND hour >= %[1]s AND hour < %[2]s)`
	rowEventCounts = `(SELECT COUNT(*) FROM report_jobs WHERE account_id = ?1 AND created_utc >= %[1]s AND created_utc < %[2]s)
	(SELECT COUNT(*) FROM report_jobs WHERE account_id = ?1 AND status = 'completed' AND completed_utc IS NOT NULL AND completed_utc >= %[1]s AND completed_utc < %[2]s)
	(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = ?1 AND created_utc >= %[1]s AND created_utc < %[2]s)
	(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = ?1 AND status = 'succeeded' AND delivered_utc >= %[1]s AND delivered_utc < %[2]s)`
)

// eventCountsQuery selects eventCountsRow: each count is the one of plus
// (a line of hourlyEventCounts or rowEventCounts, rendered), less the one
// of minus if any. One statement, so one snapshot: an hour less the rest
// of it is never off by a job written between two reads.
func eventCountsQuery(plus, minus string) string {
	p, m := strings.Split(plus, "\n"), strings.Split(minus, "\n")
	cols := []string{"jobs_created", "jobs_completed", "deliveries_created", "deliveries_succeeded"}
	var b strings.Builder
	b.WriteString("SELECT")
	for i, col := range cols {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n\t" + strings.TrimSpace(p[i]))
		if minus != "" {
			b.WriteString("\n\t\t- " + strings.TrimSpace(m[i]))
		}
		b.WriteString(" AS " + col)
	}
	return b.String()
}

// The queries of eventCounts (TestOpsSummaryQueryPlans checks them):
// ?1 the account.
var (
	// opsHourlyCounts: the events of the whole hours [?2, ?3).
	opsHourlyCounts = eventCountsQuery(fmt.Sprintf(hourlyEventCounts, "?2", "?3"), "")
	// opsEventCounts: the events of the times [?2, ?3), from the rows.
	opsEventCounts = eventCountsQuery(fmt.Sprintf(rowEventCounts, "?2", "?3"), "")
	// opsHourLessRows: the events of the hour [?2, ?3) less those of the
	// times [?4, ?5) in it, from the rows.
	opsHourLessRows = eventCountsQuery(fmt.Sprintf(hourlyEventCounts, "?2", "?3"), fmt.Sprintf(rowEventCounts, "?4", "?5"))
)

// The operations summary's queries, one constant each so that
// TestOpsSummaryQueryPlans checks the very text OpsSummary runs. Every
// parameter is numbered: ?1 the account, ?2 and ?3 the window [from, to).
const (
	// jobOpsCounts: failed by report_jobs_ended; queued and processing
	// now by report_jobs_by_status.
	jobOpsCounts = `SELECT
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = ?1 AND status = 'failed' AND completed_utc IS NOT NULL AND completed_utc >= ?2 AND completed_utc < ?3) AS failed,
		(SELECT COUNT(*) FROM report_jobs WHERE status = 'queued' AND account_id = ?1) AS queued,
		(SELECT COUNT(*) FROM report_jobs WHERE status = 'processing' AND account_id = ?1) AS processing`
	// completionHistogram: the completion-time histogram of the hours
	// [?2, ?3) and [?6, ?7) (hourLayout) and the days [?4, ?5)
	// (dayLayout), from ranges of the primary key of
	// completion_histograms, summed by bucket, ascending, each with its
	// value_ms (by the rowid of completion_buckets). At most the buckets
	// used (about 290 exist) come back, however many jobs went in.
	completionHistogram = `SELECT value_ms, total AS jobs
		FROM (SELECT bucket, SUM(jobs) AS total FROM (
				SELECT bucket, jobs FROM completion_histograms
					WHERE account_id = ?1 AND span = 'hour' AND period >= ?2 AND period < ?3
				UNION ALL SELECT bucket, jobs FROM completion_histograms
					WHERE account_id = ?1 AND span = 'day' AND period >= ?4 AND period < ?5
				UNION ALL SELECT bucket, jobs FROM completion_histograms
					WHERE account_id = ?1 AND span = 'hour' AND period >= ?6 AND period < ?7)
			GROUP BY bucket)
		JOIN completion_buckets ON upper_ms = bucket
		ORDER BY bucket`
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
	// (?4), then merged (locrisk.RecentFailures). The kinds are
	// locrisk.FailureReportJob and FailureWebhookDelivery; ?5 is
	// locrisk.CodeWebhookDeliveryFailed.
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

func recentFailures(ctx context.Context, q queryer, accountID, fromS, toS string, limit int) ([]locrisk.Failure, error) {
	if limit <= 0 {
		return []locrisk.Failure{}, nil
	}
	var rows []struct {
		Kind     string `db:"kind"`
		ID       string `db:"id"`
		Code     string `db:"code"`
		Message  string `db:"message"`
		Occurred string `db:"occurred"`
	}
	err := q.SelectContext(ctx, &rows, recentFailuresQuery, accountID, fromS, toS, limit, locrisk.CodeWebhookDeliveryFailed)
	if err != nil {
		return nil, fmt.Errorf("recent failures: %w", err)
	}
	out := make([]locrisk.Failure, 0, len(rows))
	for _, r := range rows {
		t, err := ParseTime(r.Occurred)
		if err != nil {
			return nil, fmt.Errorf("failure %s: %w", r.ID, err)
		}
		out = append(out, locrisk.Failure{Kind: r.Kind, ID: r.ID, Code: r.Code, Message: r.Message, OccurredUTC: t})
	}
	return locrisk.RecentFailures(out, limit), nil
}
