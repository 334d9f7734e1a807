package pgstore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/storetest"
)

// histogramRow is a row of completion_histograms (migration 5).
type histogramRow struct {
	AccountID string    `db:"account_id"`
	Span      string    `db:"span"`
	Period    time.Time `db:"period"`
	Bucket    int64     `db:"bucket"`
	Jobs      int64     `db:"jobs"`
}

// TestCompletionHistogramsFollowJobs: whatever moves jobs into and out of
// completed (completion, failure, the purge), the trigger of migration 5
// leaves completion_histograms equal to the rows its backfill computes
// from the jobs themselves, with no row at zero; the storetest checks
// only see the percentiles read from them.
func TestCompletionHistogramsFollowJobs(t *testing.T) {
	s := openFresh(t, serverDSN(t), Options{})
	ctx := context.Background()
	acct, err := s.CreateAccount(ctx, "histograms", 1000, 60)
	if err != nil {
		t.Fatal(err)
	}
	// Half an hour before a UTC midnight, so that completions fall in
	// different hours and days.
	t0 := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC)
	var jobs []string
	for range 6 {
		j, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: acct.ID, Latitude: 37, Longitude: -122}, t0)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j.ID)
	}
	complete := func(i int, after time.Duration) func(t *testing.T) {
		return func(t *testing.T) {
			now := t0.Add(after)
			storetest.ClaimJob(t, s, jobs[i], now)
			if _, err := s.CompleteJob(ctx, jobs[i], "tw", locrisk.Report{DataVersion: "dv", Body: []byte(`{}`)}, now); err != nil {
				t.Fatalf("complete: %v", err)
			}
		}
	}
	steps := []struct {
		name string
		do   func(t *testing.T)
		want int // completed jobs counted in each span
	}{
		{"nothing completed", func(*testing.T) {}, 0},
		{"completed in 10ms", complete(0, 10*time.Millisecond), 1},
		{"completed in 2s, same bucket hour", complete(1, 2*time.Second), 2},
		{"completed the next day", complete(2, 45*time.Minute), 3},
		{"completed hours later", complete(3, 3*time.Hour), 4},
		{"failed, not counted", func(t *testing.T) {
			now := t0.Add(time.Minute)
			storetest.ClaimJob(t, s, jobs[4], now)
			if _, err := s.FailJob(ctx, jobs[4], "tw", "invalid", "no", false, now); err != nil {
				t.Fatal(err)
			}
		}, 4},
		{"purge of the jobs completed before midnight", func(t *testing.T) {
			if _, err := s.Purge(ctx, locrisk.PurgePolicy{Before: t0.Add(30 * time.Minute), Now: t0.Add(4 * time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}, 2},
	}
	for _, st := range steps {
		st.do(t)
		var have, want []histogramRow
		if err := s.db.SelectContext(ctx, &have, `SELECT account_id, span, period, bucket, jobs
			FROM completion_histograms ORDER BY 1, 2, 3, 4`); err != nil {
			t.Fatal(err)
		}
		if err := s.db.SelectContext(ctx, &want, `SELECT account_id, s.span, date_trunc(s.span, completed_utc, 'UTC') AS period,
				completion_bucket(created_utc, completed_utc) AS bucket, COUNT(*) AS jobs
			FROM report_jobs, (VALUES ('hour'), ('day')) AS s(span)
			WHERE status = 'completed' AND completed_utc IS NOT NULL
			GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`); err != nil {
			t.Fatal(err)
		}
		same := slices.EqualFunc(have, want, func(a, b histogramRow) bool {
			return a.AccountID == b.AccountID && a.Span == b.Span && a.Period.Equal(b.Period) && a.Bucket == b.Bucket && a.Jobs == b.Jobs
		})
		if !same {
			t.Errorf("%s: histograms\n%+v\nwant, from the jobs,\n%+v", st.name, have, want)
		}
		for _, span := range []string{"hour", "day"} {
			var n int64
			for _, r := range have {
				if r.Span == span {
					n += r.Jobs
					if r.Jobs <= 0 {
						t.Errorf("%s: a %s row at %d jobs", st.name, span, r.Jobs)
					}
				}
			}
			if n != int64(st.want) {
				t.Errorf("%s: %d jobs in the %s rows, want %d", st.name, n, span, st.want)
			}
		}
	}
}
