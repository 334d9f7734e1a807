package sqlite

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

// seedOldJobs writes n single jobs that completed before old, each with a
// report of body and a delivered webhook event, in transactions of 500.
func seedOldJobs(t testing.TB, s *Store, acct, endpoint string, n int, body string, old time.Time) {
	t.Helper()
	ctx := context.Background()
	ts := FormatTime(old)
	const seq = `WITH RECURSIVE n(value) AS (SELECT ?3 UNION ALL SELECT value + 1 FROM n WHERE value < ?4) `
	for from := 0; from < n; from += 500 {
		to := min(n, from+500)
		for _, q := range []string{
			seq + `INSERT INTO report_jobs (id, account_id, bucket, latitude, longitude, status, attempts, report_id, run_after_utc, created_utc, updated_utc, completed_utc)
			 SELECT printf('job_seed%08d', value), ?1, 'api', 1, 2, 'completed', 1, printf('rep%08d', value), ?2, ?2, ?2, ?2 FROM n`,
			seq + `INSERT INTO reports (id, job_id, account_id, generated_utc, data_version, body)
			 SELECT printf('rep%08d', value), printf('job_seed%08d', value), ?1, ?2, 'v', ?5 FROM n`,
			seq + `INSERT INTO webhook_events (id, account_id, type, job_id, body, created_utc)
			 SELECT printf('evt_seed%08d', value), ?1, 'report.job.completed', printf('job_seed%08d', value), '{}', ?2 FROM n`,
			seq + `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, account_id, status, attempts, created_utc, last_attempt_utc, delivered_utc)
			 SELECT printf('wd_seed%08d', value), printf('evt_seed%08d', value), ?6, ?1, 'succeeded', 1, ?2, ?2, ?2 FROM n`,
		} {
			if _, err := s.db.ExecContext(ctx, q, acct, ts, from+1, to, body, endpoint); err != nil {
				t.Fatalf("seed: %v", err)
			}
		}
	}
}

// createLatencies creates jobs from callers goroutines until stop is
// closed and returns the latencies, sorted.
func createLatencies(t testing.TB, s *Store, acct string, callers int, stop <-chan struct{}) []time.Duration {
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				if _, _, err := s.CreateJob(context.Background(), apiJob(acct), t0); err != nil {
					t.Error(err)
					return
				}
				d := time.Since(start)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
				time.Sleep(2 * time.Millisecond) // a steady stream, not a flood
			}
		})
	}
	wg.Wait()
	slices.Sort(lat)
	return lat
}

// TestPurgeUnderLoad purges old jobs with 19 KB reports while other
// goroutines create jobs, and reports the creations' latency: with no
// purge running, during the purge in transactions of DefaultPurgeBatch rows and of
// 100, and during the same purge in one transaction (what a plain DELETE
// would do). The normal suite runs it small, checking only that
// everything old goes and the creations succeed; LOCRISK_LOAD=1 runs it
// with 20,000 jobs (LOCRISK_LOAD_JOBS to change) and logs the numbers
// (docs/operations.md, "Limits and defaults").
func TestPurgeUnderLoad(t *testing.T) {
	n := 300
	if os.Getenv("LOCRISK_LOAD") == "1" {
		n = 20000
		if v, err := strconv.Atoi(os.Getenv("LOCRISK_LOAD_JOBS")); err == nil && v > 0 {
			n = v
		}
	}
	body := `{"r":"` + strings.Repeat("z", 19<<10) + `"}`
	old := t0.Add(-400 * day)
	const callers = 4
	for _, mode := range []struct {
		name  string
		purge bool
		batch int
	}{{"no purge", false, 0}, {"purge, batch 500 (default)", true, DefaultPurgeBatch}, {"purge, batch 100", true, 100}, {"purge in one transaction", true, 1 << 30}} {
		ctx := context.Background()
		s := newStore(t, Options{})
		a := newAccount(t, s, 1<<30)
		ep := newEndpoint(t, s, a.ID, old)
		seedOldJobs(t, s, a.ID, ep.ID, n, body, old)
		stop := make(chan struct{})
		var lat []time.Duration
		done := make(chan struct{})
		go func() { lat = createLatencies(t, s, a.ID, callers, stop); close(done) }()
		time.Sleep(50 * time.Millisecond)
		start := time.Now()
		var c locrisk.PurgeCounts
		var freed int64
		var err error
		if mode.purge {
			c, err = s.Purge(ctx, locrisk.PurgePolicy{Before: t0.Add(-180 * day), Now: t0, Batch: mode.batch})
			if err == nil {
				freed, err = s.IncrementalVacuum(ctx, 256)
			}
		} else {
			time.Sleep(time.Duration(n/7) * time.Millisecond) // about as long as a purge
		}
		took := time.Since(start)
		close(stop)
		<-done
		if err != nil {
			t.Fatalf("%s: %v", mode.name, err)
		}
		if mode.purge && (c.Jobs != int64(n) || c.Reports != int64(n) || c.Deliveries != int64(n)) {
			t.Errorf("%s: deleted %+v, want the %d old jobs with reports and deliveries", mode.name, c, n)
		}
		t.Logf("%-25s %d jobs: took %v, freed %d pages; %d creations: p50 %v p99 %v max %v", mode.name, n,
			took.Round(time.Millisecond), freed, len(lat), pct(lat, 50), pct(lat, 99), pct(lat, 100))
	}
}
