package sqlite

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

// TestLoadOpsSummary is the operations summary's measurement at a busy
// day's completions (docs/performance.md, "A large database"), where the
// summary used to take seconds:
// one account with LOCRISK_LOAD_JOBS (default 2,000,000) jobs completed
// in the 24 hours before now, and 2,000 an hour in the six days before
// that, so that the 168-hour window has every hour's histogram full. It
// times OpsSummary over 24 and 168 hours, and beside it, in the same run,
// the completion percentiles as the summary computed them before
// migration 012 (every completion time of the window read and sorted,
// oldCompletionTimes) and as it computes them now (the histograms).
// The fill writes the rows with SQL, the triggers keeping the
// histograms; at the end the file is taken back to version 11 and the
// migration's backfill is timed. Opt-in, a few minutes:
//
//	LOCRISK_LOAD=1 go test -count=1 ./internal/sqlite -run TestLoadOpsSummary -v -timeout 1h
func TestLoadOpsSummary(t *testing.T) {
	if os.Getenv("LOCRISK_LOAD") == "" {
		t.Skip("need LOCRISK_LOAD=1: the operations summary load measurement")
	}
	jobs := 2_000_000
	if v := os.Getenv("LOCRISK_LOAD_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			t.Fatalf("LOCRISK_LOAD_JOBS=%q: want a number >= 1000", v)
		}
		jobs = n
	}
	ctx := context.Background()
	path := t.TempDir() + "/load.db"
	s := openStore(t, path, Options{})
	acct, other := newAccount(t, s, 1), newAccount(t, s, 1)
	// Not on the hour, as the server's windows are not: the part hours at
	// the window's ends are counted from rows (the completed count).
	now := t0.Add(37*time.Minute + 12*time.Second)

	start := time.Now()
	fillCompleted(t, s, acct.ID, "d", jobs, now.Add(-24*time.Hour), now)
	fillCompleted(t, s, acct.ID, "w", 144*2000, now.Add(-168*time.Hour), now.Add(-24*time.Hour))
	fillCompleted(t, s, other.ID, "o", 10_000, now.Add(-24*time.Hour), now)
	t.Logf("fill: %d + %d jobs of the account, 10,000 of another, in %v", jobs, 144*2000, time.Since(start).Round(time.Second))
	var rows int
	if err := s.db.Get(&rows, `SELECT COUNT(*) FROM completion_histograms WHERE account_id = ?`, acct.ID); err != nil {
		t.Fatal(err)
	}
	t.Logf("completion_histograms: %d rows of the account", rows)

	for _, hours := range []int{24, 168} {
		from := now.Add(-time.Duration(hours) * time.Hour)
		o, err := s.OpsSummary(ctx, acct.ID, from, now, 20)
		if err != nil {
			t.Fatal(err)
		}
		// The answer is within 5% of the exact one over the same jobs: those
		// completed in the hours that overlap the window.
		lo, hi := from.Truncate(time.Hour), now.Truncate(time.Hour).Add(time.Hour)
		var exact []time.Duration
		if exact, err = oldCompletionTimes(ctx, s, acct.ID, FormatTime(lo), FormatTime(hi)); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			p   float64
			got *time.Duration
		}{{0.50, o.Jobs.CompletionP50}, {0.95, o.Jobs.CompletionP95}} {
			e := nearestRank(exact, c.p)
			if c.got == nil || !within5(c.got.Milliseconds(), e.Milliseconds()) {
				t.Errorf("%d hours: p%v %v, exact %v", hours, c.p*100, c.got, e)
			}
		}
		t.Logf("%d hours: %d completed in the window, %d in its hours; p50 %v (exact %v), p95 %v (exact %v)", hours,
			o.Jobs.Completed, len(exact), *o.Jobs.CompletionP50, *nearestRank(exact, 0.5), *o.Jobs.CompletionP95, *nearestRank(exact, 0.95))

		summary := timeRuns(300, 20*time.Second, func() error {
			_, err := s.OpsSummary(ctx, acct.ID, from, now, 20)
			return err
		})
		histogram := timeRuns(300, 20*time.Second, func() error {
			var j locrisk.JobOps
			return completionPercentiles(ctx, s.db, acct.ID, from, now, &j)
		})
		old := timeRuns(10, 30*time.Second, func() error {
			ds, err := oldCompletionTimes(ctx, s, acct.ID, FormatTime(from), FormatTime(now))
			nearestRank(ds, 0.5)
			nearestRank(ds, 0.95)
			return err
		})
		if err := errorsOf(summary, histogram, old); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d hours: OpsSummary p50 %v p99 %v (%d runs); percentiles from the histograms p50 %v p99 %v; "+
			"before migration 012, every completion time read and sorted: p50 %v max %v (%d runs)", hours,
			summary.pct(0.5), summary.pct(0.99), len(summary.d), histogram.pct(0.5), histogram.pct(0.99),
			old.pct(0.5), old.pct(1), len(old.d))
		if p99 := summary.pct(0.99); p99 > 20*time.Millisecond {
			t.Errorf("%d hours: OpsSummary p99 %v, want under 20 ms", hours, p99)
		}
	}

	// The migration's backfill on this file: an upgrade's cost.
	before := storedCompletionHistogram(t, s)
	undoMigration12(t, s)
	if _, err := s.db.ExecContext(ctx, `PRAGMA user_version = 11`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	start = time.Now()
	s = openStore(t, path, Options{})
	t.Logf("open with migration 012's backfill: %v", time.Since(start).Round(time.Millisecond))
	if after := storedCompletionHistogram(t, s); len(after) != len(before) {
		t.Errorf("backfill: %d histogram rows, the triggers kept %d", len(after), len(before))
	}
}

// fillCompleted inserts n completed jobs of acct (ids prefixed tag) with
// completed_utc spread evenly over [from, to) and completion times spread
// evenly in their logarithm from 2 ms to 10 minutes, 100,000 a transaction.
func fillCompleted(t *testing.T, s *Store, acct, tag string, n int, from, to time.Time) {
	t.Helper()
	const chunk = 100_000
	span := to.Sub(from).Milliseconds()
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		_, err := s.db.Exec(`INSERT INTO report_jobs (id, account_id, bucket, latitude, longitude, status, run_after_utc, created_utc, updated_utc, completed_utc)
			WITH RECURSIVE seq(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?2),
			t(i, ended, took) AS (SELECT i, ?3 + i * ?4 / ?5,
				CAST(exp(ln(2) + (abs(random()) % 1000000) / 1000000.0 * ln(300000)) AS INTEGER) FROM seq),
			f(i, created, ended) AS (SELECT i, strftime('%Y-%m-%dT%H:%M:%fZ', (ended - took) / 1000.0, 'unixepoch'),
				strftime('%Y-%m-%dT%H:%M:%fZ', ended / 1000.0, 'unixepoch') FROM t)
			SELECT printf('job_%s%020d', ?6, i), ?7, 'api', 40, -100, 'completed', created, created, ended, ended FROM f`,
			lo, hi, from.UnixMilli(), span, n, tag, acct)
		if err != nil {
			t.Fatal(err)
		}
	}
}

// oldCompletionTimes is how the summary read the completion times before
// migration 012: every one of the window's, from report_jobs_ended, as
// one comma-separated text, parsed here.
func oldCompletionTimes(ctx context.Context, s *Store, accountID, fromS, toS string) ([]time.Duration, error) {
	var list string
	if err := s.db.GetContext(ctx, &list, `SELECT COALESCE(group_concat(`+completionMs+`, ','), '') FROM report_jobs
		WHERE account_id = ?1 AND status = 'completed' AND completed_utc IS NOT NULL AND completed_utc >= ?2 AND completed_utc < ?3`,
		accountID, fromS, toS); err != nil {
		return nil, err
	}
	if list == "" {
		return nil, nil
	}
	parts := strings.Split(list, ",")
	ds := make([]time.Duration, len(parts))
	for i, p := range parts {
		ms, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("completion time %q: %w", p, err)
		}
		ds[i] = time.Duration(ms) * time.Millisecond
	}
	return ds, nil
}

// runs are the durations of the runs of one operation, and its first error.
type runs struct {
	d   []time.Duration
	err error
}

// timeRuns runs f n times, or until budget is spent (at least once).
func timeRuns(n int, budget time.Duration, f func() error) runs {
	var r runs
	end := time.Now().Add(budget)
	for i := 0; i < n && (i == 0 || time.Now().Before(end)); i++ {
		start := time.Now()
		if err := f(); err != nil {
			r.err = err
			return r
		}
		r.d = append(r.d, time.Since(start))
	}
	slices.Sort(r.d)
	return r
}

// pct is the p-th percentile (nearest rank) of the runs, rounded.
func (r runs) pct(p float64) time.Duration {
	return nearestRank(slices.Clone(r.d), p).Round(10 * time.Microsecond)
}

func errorsOf(rs ...runs) error {
	for _, r := range rs {
		if r.err != nil {
			return r.err
		}
	}
	return nil
}
