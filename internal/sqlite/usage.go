package sqlite

// Usage queries: the current billing period and the daily history by
// bucket; the operations summary is in opssummary.go. Everything here is
// read-only. Usage reads the per-day counters that migration 010's triggers
// keep in the transaction of every change to a job, so its cost does not
// grow with the jobs (docs/performance.md, "A large database").

import (
	"context"
	"fmt"
	"time"

	"github.com/locrisk/locrisk"
)

// PeriodUsage returns the account's usage in now's billing period.
// ErrNotFound for an unknown account.
//
// It sums the period's hours of usage_hourly (migration 010), whose
// triggers count each job in the hour it was created by its status now: at
// most 744 hours times 3 buckets, whatever the number of jobs
// (periodUsageQuery).
func (s *Store) PeriodUsage(ctx context.Context, accountID string, now time.Time) (locrisk.PeriodUsage, error) {
	a, err := getAccount(ctx, s.db, accountID)
	if err != nil {
		return locrisk.PeriodUsage{}, err
	}
	u := locrisk.NewPeriodUsage(a, now)
	var c locrisk.UsageCounters
	err = s.db.GetContext(ctx, &c, periodUsageQuery, accountID, u.Start.Format(hourLayout), u.End.Format(hourLayout),
		FormatTime(u.Start), FormatTime(u.End))
	if err != nil {
		return locrisk.PeriodUsage{}, fmt.Errorf("period usage of %s: %w", accountID, err)
	}
	u.SetCounts(c)
	return u, nil
}

// periodUsageQuery sums the period's hours of usage_hourly (?2 to ?3,
// hourLayout) and counts, in the same statement and so the same snapshot,
// the period's jobs processing now (?4 to ?5, created_utc) and reads the
// period's quota counter (quota_usage, which the watch item re-scores do
// not add to): usage_hourly
// counts queued and processing together as open (a claim changes no
// counter, migration 010), and the processing jobs are as few as the
// workers, a range of report_jobs_by_status.
const periodUsageQuery = `SELECT COALESCE(SUM(open), 0) AS open, COALESCE(SUM(completed), 0) AS completed,
		COALESCE(SUM(failed), 0) AS failed,
		(SELECT COUNT(*) FROM report_jobs INDEXED BY report_jobs_by_status
			WHERE account_id = ?1 AND status = 'processing' AND created_utc >= ?4 AND created_utc < ?5) AS processing,
		(SELECT COALESCE(MAX(report_jobs), 0) FROM quota_usage WHERE account_id = ?1 AND period_start_utc = ?4) AS charged
	FROM usage_hourly WHERE account_id = ?1 AND hour >= ?2 AND hour < ?3`

// dayLayout is the prefix of TimeLayout that names the day.
const dayLayout = "2006-01-02"

// UsageHistory returns one entry per day and bucket for the days days
// starting at firstDay's UTC day, zeros included, oldest first and, within
// a day, in the order of buckets (each must be a usage bucket; none means
// all, in Buckets order).
func (s *Store) UsageHistory(ctx context.Context, accountID string, firstDay time.Time, days int, buckets []string) ([]locrisk.DailyUsage, error) {
	w, err := locrisk.NewUsageWindow(firstDay, days, buckets)
	if err != nil {
		return nil, err
	}
	// One range of usage_hourly's primary key (migration 010): at most
	// days times 24 times 3 rows, whatever the number of jobs. The
	// triggers that keep it count exactly what the definition of
	// DailyUsage says.
	// The day comes as text (dayLayout), read into Day below.
	var rows []struct {
		locrisk.DailyUsage
		DayText string `db:"day_text"`
	}
	err = s.db.SelectContext(ctx, &rows, `SELECT substr(hour, 1, 10) AS day_text, bucket,
			SUM(open + completed + failed) AS report_jobs, SUM(ended_completed) AS completed, SUM(ended_failed) AS failed
		FROM usage_hourly WHERE account_id = ? AND hour >= ? AND hour < ?
		GROUP BY 1, 2`,
		accountID, w.From.Format(hourLayout), w.To().Format(hourLayout))
	if err != nil {
		return nil, fmt.Errorf("usage history of %s: %w", accountID, err)
	}
	counts := make([]locrisk.DailyUsage, 0, len(rows))
	for _, r := range rows {
		if r.Day, err = time.Parse(dayLayout, r.DayText); err != nil {
			return nil, fmt.Errorf("usage history of %s: bad stored hour %q: %w", accountID, r.DayText, err)
		}
		counts = append(counts, r.DailyUsage)
	}
	return w.Fill(counts), nil
}

// hourLayout is the prefix of TimeLayout that names the hour (usage_hourly,
// and ops_hourly in opssummary.go).
const hourLayout = "2006-01-02T15"
