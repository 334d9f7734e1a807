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
	u := locrisk.PeriodUsage{Limit: a.MonthlyQuota, Start: locrisk.MonthStart(now), End: locrisk.NextMonthStart(now)}
	var c struct {
		Open       int `db:"open"`
		Processing int `db:"processing"`
		Completed  int `db:"completed"`
		Failed     int `db:"failed"`
	}
	err = s.db.GetContext(ctx, &c, periodUsageQuery, accountID, u.Start.Format(hourLayout), u.End.Format(hourLayout),
		FormatTime(u.Start), FormatTime(u.End))
	if err != nil {
		return locrisk.PeriodUsage{}, fmt.Errorf("period usage of %s: %w", accountID, err)
	}
	u.Queued, u.Processing, u.Completed, u.Failed = c.Open-c.Processing, c.Processing, c.Completed, c.Failed
	u.Created = c.Open + c.Completed + c.Failed
	return u, nil
}

// periodUsageQuery sums the period's hours of usage_hourly (?2 to ?3,
// hourLayout) and counts, in the same statement and so the same snapshot,
// the period's jobs processing now (?4 to ?5, created_utc): usage_hourly
// counts queued and processing together as open (a claim changes no
// counter, migration 010), and the processing jobs are as few as the
// workers, a range of report_jobs_by_status.
const periodUsageQuery = `SELECT COALESCE(SUM(open), 0) AS open, COALESCE(SUM(completed), 0) AS completed,
		COALESCE(SUM(failed), 0) AS failed,
		(SELECT COUNT(*) FROM report_jobs INDEXED BY report_jobs_by_status
			WHERE account_id = ?1 AND status = 'processing' AND created_utc >= ?4 AND created_utc < ?5) AS processing
	FROM usage_hourly WHERE account_id = ?1 AND hour >= ?2 AND hour < ?3`

// dayLayout is the prefix of TimeLayout that names the day.
const dayLayout = "2006-01-02"

// UsageHistory returns one entry per day and bucket for the days days
// starting at firstDay's UTC day, zeros included, oldest first and, within
// a day, in the order of buckets (each must be a usage bucket; none means
// all, in Buckets order).
func (s *Store) UsageHistory(ctx context.Context, accountID string, firstDay time.Time, days int, buckets []string) ([]locrisk.DailyUsage, error) {
	if days < 1 {
		return nil, fmt.Errorf("%w: usage history needs at least one day, got %d", locrisk.ErrInvalid, days)
	}
	if len(buckets) == 0 {
		buckets = locrisk.Buckets()
	}
	for _, b := range buckets {
		if !locrisk.ValidBucket(b) {
			return nil, fmt.Errorf("%w: unknown bucket %q", locrisk.ErrInvalid, b)
		}
	}
	f := firstDay.UTC()
	from := time.Date(f.Year(), f.Month(), f.Day(), 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 0, days)
	type key struct{ day, bucket string }
	// One range of usage_hourly's primary key (migration 010): at most
	// days times 24 times 3 rows, whatever the number of jobs. The
	// triggers that keep it count exactly what the definition of
	// DailyUsage says.
	var rows []struct {
		Day       string `db:"day"`
		Bucket    string `db:"bucket"`
		Created   int    `db:"created"`
		Completed int    `db:"ended_completed"`
		Failed    int    `db:"ended_failed"`
	}
	err := s.db.SelectContext(ctx, &rows, `SELECT substr(hour, 1, 10) AS day, bucket,
			SUM(open + completed + failed) AS created, SUM(ended_completed) AS ended_completed, SUM(ended_failed) AS ended_failed
		FROM usage_hourly WHERE account_id = ? AND hour >= ? AND hour < ?
		GROUP BY 1, 2`,
		accountID, from.Format(hourLayout), to.Format(hourLayout))
	if err != nil {
		return nil, fmt.Errorf("usage history of %s: %w", accountID, err)
	}
	got := make(map[key]locrisk.DailyUsage, len(rows))
	for _, r := range rows {
		got[key{r.Day, r.Bucket}] = locrisk.DailyUsage{ReportJobs: r.Created, Completed: r.Completed, Failed: r.Failed}
	}

	out := make([]locrisk.DailyUsage, 0, days*len(buckets))
	for d := range days {
		day := from.AddDate(0, 0, d)
		ds := day.Format(dayLayout)
		for _, b := range buckets {
			u := got[key{ds, b}]
			u.Day, u.Bucket = day, b
			out = append(out, u)
		}
	}
	return out, nil
}

// hourLayout is the prefix of TimeLayout that names the hour (usage_hourly,
// and ops_hourly in opssummary.go).
const hourLayout = "2006-01-02T15"
