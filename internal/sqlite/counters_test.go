package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/storetest"
)

// The counters of migration 010 (usage_hourly, the item counts on batches)
// against the row-counting queries they replace, which stay here as the
// oracle, over random sequences of everything that changes a job: creation
// (single and in batches, with rejected items), claims, lease takeovers,
// completion, failure, automatic and manual retries, releases and the
// retention purge.

// oraclePeriodUsage is PeriodUsage as it was computed before migration 010:
// the period's jobs counted by status.
func oraclePeriodUsage(t *testing.T, s *Store, accountID string, now time.Time) locrisk.PeriodUsage {
	t.Helper()
	a, err := getAccount(context.Background(), s.db, accountID)
	if err != nil {
		t.Fatal(err)
	}
	u := locrisk.PeriodUsage{Limit: a.MonthlyQuota, Start: locrisk.MonthStart(now), End: locrisk.NextMonthStart(now)}
	var rows []struct {
		Status string `db:"status"`
		N      int    `db:"n"`
	}
	if err := s.db.Select(&rows, `SELECT status, COUNT(*) AS n FROM report_jobs
		WHERE account_id = ? AND created_utc >= ? AND created_utc < ? GROUP BY status`,
		accountID, FormatTime(u.Start), FormatTime(u.End)); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Get(&u.Charged, `SELECT COALESCE(MAX(report_jobs), 0) FROM quota_usage
		WHERE account_id = ? AND period_start_utc = ?`, accountID, FormatTime(u.Start)); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		u.Created += r.N
		switch r.Status {
		case locrisk.StatusQueued:
			u.Queued = r.N
		case locrisk.StatusProcessing:
			u.Processing = r.N
		case locrisk.StatusCompleted:
			u.Completed = r.N
		case locrisk.StatusFailed:
			u.Failed = r.N
		}
	}
	return u
}

// oracleUsageHistory is UsageHistory (all buckets) as it was computed
// before migration 010: jobs created by created_utc, final states by
// completed_utc.
func oracleUsageHistory(t *testing.T, s *Store, accountID string, from time.Time, days int) []locrisk.DailyUsage {
	t.Helper()
	to := from.AddDate(0, 0, days)
	type key struct{ day, bucket string }
	got := map[key]*locrisk.DailyUsage{}
	at := func(k key) *locrisk.DailyUsage {
		if got[k] == nil {
			got[k] = &locrisk.DailyUsage{}
		}
		return got[k]
	}
	var created []struct {
		Day    string `db:"day"`
		Bucket string `db:"bucket"`
		N      int    `db:"n"`
	}
	if err := s.db.Select(&created, `SELECT substr(created_utc, 1, 10) AS day, bucket, COUNT(*) AS n
		FROM report_jobs WHERE account_id = ? AND created_utc >= ? AND created_utc < ?
		GROUP BY day, bucket`, accountID, FormatTime(from), FormatTime(to)); err != nil {
		t.Fatal(err)
	}
	for _, r := range created {
		at(key{r.Day, r.Bucket}).ReportJobs = r.N
	}
	var ended []struct {
		Day    string `db:"day"`
		Bucket string `db:"bucket"`
		Status string `db:"status"`
		N      int    `db:"n"`
	}
	if err := s.db.Select(&ended, `SELECT substr(completed_utc, 1, 10) AS day, bucket, status, COUNT(*) AS n
		FROM report_jobs WHERE account_id = ? AND completed_utc IS NOT NULL AND completed_utc >= ? AND completed_utc < ?
		  AND status IN ('completed', 'failed')
		GROUP BY day, bucket, status`, accountID, FormatTime(from), FormatTime(to)); err != nil {
		t.Fatal(err)
	}
	for _, r := range ended {
		if r.Status == locrisk.StatusCompleted {
			at(key{r.Day, r.Bucket}).Completed = r.N
		} else {
			at(key{r.Day, r.Bucket}).Failed = r.N
		}
	}
	var out []locrisk.DailyUsage
	for d := range days {
		day := from.AddDate(0, 0, d)
		for _, b := range locrisk.Buckets() {
			u := locrisk.DailyUsage{Day: day, Bucket: b}
			if c := got[key{day.Format(dayLayout), b}]; c != nil {
				u.ReportJobs, u.Completed, u.Failed = c.ReportJobs, c.Completed, c.Failed
			}
			out = append(out, u)
		}
	}
	return out
}

// oracleBatch is the batch as getBatch derived it before migration 010:
// the counts and the latest job end aggregated from its items and their
// jobs.
func oracleBatch(t *testing.T, s *Store, accountID, batchID string) locrisk.Batch {
	t.Helper()
	var r batchRow
	err := s.db.Get(&r, `SELECT b.id, b.account_id, b.name, b.total_items, b.created_utc,
			COUNT(CASE WHEN j.status IN ('queued', 'processing') THEN 1 END) AS open,
			COUNT(CASE WHEN j.status = 'processing' THEN 1 END) AS processing,
			COUNT(CASE WHEN j.status = 'completed' THEN 1 END) AS completed,
			COUNT(CASE WHEN j.status = 'failed' THEN 1 END) AS failed,
			COUNT(CASE WHEN i.row_number IS NOT NULL AND i.job_id IS NULL THEN 1 END) AS rejected,
			MAX(j.completed_utc) AS last_final_utc
		FROM batches b
		LEFT JOIN batch_items i ON i.batch_id = b.id
		LEFT JOIN report_jobs j ON j.id = i.job_id
		WHERE b.id = ? AND b.account_id = ?
		GROUP BY b.id`, batchID, accountID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.batch()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jobHistory drives a store through random changes of its jobs.
type jobHistory struct {
	t     *testing.T
	s     *Store
	rng   *rand.Rand
	now   time.Time
	accts []string
	first time.Time // the earliest time any job was created
	done  map[string]int
}

func newJobHistory(t *testing.T, s *Store, seed uint64, accounts int) *jobHistory {
	h := &jobHistory{t: t, s: s, rng: rand.New(rand.NewPCG(seed, 16)), now: t0.Add(-40 * 24 * time.Hour), done: map[string]int{}}
	h.first = h.now
	for range accounts {
		h.accts = append(h.accts, newAccount(t, s, 1<<20).ID)
	}
	return h
}

// pick returns a random job id of the account in one of the statuses
// (with the extra condition), or "".
func (h *jobHistory) pick(cond string) string {
	var ids []string
	if err := h.s.db.Select(&ids, `SELECT id FROM report_jobs WHERE `+cond+` ORDER BY id`); err != nil {
		h.t.Fatal(err)
	}
	if len(ids) == 0 {
		return ""
	}
	return ids[h.rng.IntN(len(ids))]
}

// step makes one random change and moves the clock on by up to a few
// hours (now and then by days, so jobs end on other days and months than
// they began).
func (h *jobHistory) step() {
	t, s, ctx := h.t, h.s, context.Background()
	h.now = h.now.Add(time.Duration(h.rng.IntN(3*3600)) * time.Second)
	if h.rng.IntN(20) == 0 {
		h.now = h.now.Add(time.Duration(1+h.rng.IntN(4)) * 24 * time.Hour)
	}
	acct := h.accts[h.rng.IntN(len(h.accts))]
	var name string
	ignore := func(err error) {
		if err != nil && !errors.Is(err, locrisk.ErrLeaseLost) && !errors.Is(err, locrisk.ErrNotRetryable) {
			t.Fatal(err)
		}
		if err == nil {
			h.done[name]++
		}
	}
	ops := []string{"create", "create", "batch", "claim", "claim", "claim", "claim", "complete", "complete", "complete", "fail", "fail", "retry", "requeue", "purge", "wait"}
	name = ops[h.rng.IntN(len(ops))]
	switch name {
	case "create":
		b := locrisk.Buckets()[h.rng.IntN(3)]
		_, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: acct, Bucket: b, Latitude: 40, Longitude: -100}, h.now)
		ignore(err)
	case "batch":
		var items []locrisk.NewBatchItem
		for i := range 1 + h.rng.IntN(5) {
			if h.rng.IntN(4) == 0 {
				items = append(items, rejectedItem(fmt.Sprint("r", i), "invalid_coordinates", nil, nil))
			} else {
				items = append(items, validItem(fmt.Sprint("v", i), 40, -100))
			}
		}
		_, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: acct, Items: items}, h.now)
		ignore(err)
	case "claim":
		// A claim; now and then far enough ahead that a lease has
		// expired and the claim takes a processing job over.
		at := h.now
		if h.rng.IntN(5) == 0 {
			at = at.Add(2 * time.Hour)
		}
		_, _, err := s.ClaimJob(ctx, "w", time.Hour, at)
		ignore(err)
	case "complete":
		if id := h.pick(`status = 'processing'`); id != "" {
			_, err := s.CompleteJob(ctx, id, "w", locrisk.Report{DataVersion: "v", Body: []byte(`{}`)}, h.workerClock())
			ignore(err)
		}
	case "fail":
		if id := h.pick(`status = 'processing'`); id != "" {
			_, err := s.FailJob(ctx, id, "w", "generation_error", "boom", h.rng.IntN(2) == 0, h.workerClock())
			ignore(err)
		}
	case "retry":
		if id := h.pick(`status = 'failed'`); id != "" {
			var owner string
			if err := s.db.Get(&owner, `SELECT account_id FROM report_jobs WHERE id = ?`, id); err != nil {
				t.Fatal(err)
			}
			_, err := s.RetryJob(ctx, owner, id, h.now)
			ignore(err)
		}
	case "requeue":
		if id := h.pick(`status = 'processing'`); id != "" {
			if h.rng.IntN(2) == 0 {
				ignore(s.RetryLater(ctx, id, "w", h.now.Add(time.Minute), "engine_busy", "later", h.now))
			} else {
				ignore(s.ReleaseJob(ctx, id, "w", h.now))
			}
		}
	case "purge":
		if h.rng.IntN(3) == 0 {
			before := h.now.Add(-time.Duration(h.rng.IntN(20*24)) * time.Hour)
			c, err := s.Purge(ctx, locrisk.PurgePolicy{Before: before, Now: h.now, Batch: 1 + h.rng.IntN(7)})
			ignore(err)
			h.done["purged jobs"] += int(c.Jobs)
			h.done["purged batches"] += int(c.Batches)
		}
	case "wait":
		h.now = h.now.Add(time.Duration(h.rng.IntN(48)) * time.Hour)
	}
}

// workerClock is the time a worker ends a job at: now, or, one time in
// three, up to a few hours earlier (workers' clocks differ), so the job
// that ends a batch is not always the one that ended last.
func (h *jobHistory) workerClock() time.Time {
	if h.rng.IntN(3) == 0 {
		return h.now.Add(-time.Duration(h.rng.IntN(4*3600)) * time.Second)
	}
	return h.now
}

// check compares every counter-based answer with its oracle.
func (h *jobHistory) check(where string) {
	t, s, ctx := h.t, h.s, context.Background()
	t.Helper()
	from := time.Date(h.first.Year(), h.first.Month(), h.first.Day(), 0, 0, 0, 0, time.UTC)
	days := int(h.now.Sub(from).Hours()/24) + 2
	for _, a := range h.accts {
		for _, at := range []time.Time{h.now, h.now.AddDate(0, -1, 0), h.first} {
			got, err := s.PeriodUsage(ctx, a, at)
			if err != nil {
				t.Fatal(err)
			}
			if want := oraclePeriodUsage(t, s, a, at); got != want {
				t.Fatalf("%s: period usage of %s at %s = %+v, want %+v", where, a, at, got, want)
			}
		}
		got, err := s.UsageHistory(ctx, a, from, days, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := oracleUsageHistory(t, s, a, from, days); !reflect.DeepEqual(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s: usage of %s on %s: %+v, want %+v", where, a, got[i].Day.Format(dayLayout), got[i], want[i])
				}
			}
			t.FailNow()
		}
		var batches []string
		if err := s.db.Select(&batches, `SELECT id FROM batches WHERE account_id = ?`, a); err != nil {
			t.Fatal(err)
		}
		for _, id := range batches {
			got, err := s.GetBatch(ctx, a, id)
			if err != nil {
				t.Fatal(err)
			}
			want := oracleBatch(t, s, a, id)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: batch %s = %+v, want %+v", where, id, got, want)
			}
		}
	}
}

func TestCountersMatchRowCounts(t *testing.T) {
	steps := 400
	if testing.Short() {
		steps = 100
	}
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			h := newJobHistory(t, newStore(t, Options{}), seed, 3)
			for i := range steps {
				h.step()
				if i%25 == 24 {
					h.check(fmt.Sprint("step ", i+1))
				}
			}
			h.check("end")
			// The sequence did what it is for.
			for _, op := range []string{"create", "batch", "claim", "complete", "fail", "retry", "requeue", "purged jobs", "purged batches"} {
				if h.done[op] == 0 {
					t.Errorf("no %s in %v", op, h.done)
				}
			}
			t.Logf("%v", h.done)
		})
	}
}

// Migration 010 fills its counters from the rows an older file holds: a
// file taken back to version 9 and opened again has the counters the
// triggers kept.
func TestCountersBackfill(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/v9.db"
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	h := newJobHistory(t, s, 7, 2)
	for range 300 {
		h.step()
	}
	undoMigration10(t, s)
	if _, err := s.db.ExecContext(ctx, `PRAGMA user_version = 9`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.db.Get(&n, `SELECT COUNT(*) FROM batches`); err != nil || n == 0 {
		t.Fatalf("no batches to backfill (%d, %v)", n, err)
	}
	s.Close()
	if h.s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer h.s.Close()
	h.check("after the backfill")
}

// A batch's counts are read from its row, never aggregated from its items:
// a batch row whose counters say otherwise shows what they say. (The test
// that the stored counts are right is TestCountersMatchRowCounts.)
func TestBatchReadsStoredCounts(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 100)
	b, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: []locrisk.NewBatchItem{validItem("a", 1, 2)}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`UPDATE batches SET items_open = 0, items_failed = 7, items_ended_utc = ? WHERE id = ?`,
		FormatTime(t0.Add(time.Hour)), b.ID); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetBatch(ctx, a.ID, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Counts != (locrisk.BatchCounts{Failed: 7}) || got.Status != locrisk.BatchCompleted || got.CompletedUTC == nil || !got.CompletedUTC.Equal(t0.Add(time.Hour)) {
		t.Errorf("batch = %+v", got)
	}
	page, _, err := s.ListBatches(ctx, a.ID, 10, "")
	if err != nil || len(page) != 1 || !reflect.DeepEqual(page[0], got) {
		t.Errorf("list = %+v, %v; want [%+v]", page, err, got)
	}
}

// A batch completes at the latest end of its jobs, also when the job that
// ends it last reports an earlier time than another one did (workers'
// clocks differ) and after a retry.
func TestBatchEndIsLatestJobEnd(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 100)
	b, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: []locrisk.NewBatchItem{
		validItem("a", 1, 2), validItem("b", 3, 4), rejectedItem("c", "invalid_coordinates", nil, nil)}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []string
	if err := s.db.Select(&jobs, `SELECT job_id FROM batch_items WHERE batch_id = ? AND job_id IS NOT NULL ORDER BY row_number`, b.ID); err != nil {
		t.Fatal(err)
	}
	failBatchJob(t, s, jobs[0], true, t0.Add(3*time.Hour))
	completeBatchJob(t, s, jobs[1], []byte(`{}`), t0.Add(time.Hour)) // ends the batch, reporting an earlier time
	for _, step := range []struct {
		name string
		do   func()
		want time.Time
	}{
		{"ended by an earlier time", func() {}, t0.Add(3 * time.Hour)},
		{"retried and completed", func() {
			if _, err := s.RetryJob(ctx, a.ID, jobs[0], t0.Add(4*time.Hour)); err != nil {
				t.Fatal(err)
			}
			// Its earlier end (3 h) no longer counts.
			storetest.ClaimJob(t, s, jobs[0], t0.Add(4*time.Hour))
			if _, err := s.CompleteJob(ctx, jobs[0], "tw", locrisk.Report{DataVersion: "v", Body: []byte(`{}`)}, t0.Add(150*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}, t0.Add(150 * time.Minute)},
	} {
		step.do()
		got, err := s.GetBatch(ctx, a.ID, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != locrisk.BatchCompleted || got.CompletedUTC == nil || !got.CompletedUTC.Equal(step.want) {
			t.Errorf("%s: batch %s at %v, want completed at %v", step.name, got.Status, got.CompletedUTC, step.want)
		}
		if want := oracleBatch(t, s, a.ID, b.ID); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: batch = %+v, derived %+v", step.name, got, want)
		}
	}
}

// The summary's counts of jobs created, jobs completed, deliveries created
// and deliveries succeeded in a window, from usage_hourly, ops_hourly and
// the part hours at its ends, are the row counts over the whole window,
// for windows of whole hours and of minutes, after random inserts, status
// changes and deletes.
func TestOpsEventCountsMatchRowCounts(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(16, 4))
	accts := []string{newAccount(t, s, 1).ID, newAccount(t, s, 1).ID}
	start := t0.Add(-10 * 24 * time.Hour)
	at := func() time.Time {
		return start.Add(time.Duration(rng.Int64N(int64(10 * 24 * time.Hour)))).Truncate(time.Millisecond)
	}
	job := storetest.EndJob(t, s, accts[0], locrisk.BucketAPI, t0, t0, false).ID
	var deliveries, jobs []string
	for i := range 3000 {
		acct := accts[rng.IntN(2)]
		switch rng.IntN(8) {
		case 0, 1:
			created := at()
			c := FormatTime(created)
			id := fmt.Sprintf("job_ev%020d", i)
			// Half of them completed already (jobs completed are counted
			// like the others; the histograms' part is
			// TestCompletionHistogramMatchesRows).
			status, completed := "queued", any(nil)
			if rng.IntN(2) == 0 {
				status, completed = "completed", FormatTime(created.Add(time.Duration(rng.Int64N(int64(3*time.Hour)))))
			}
			if _, err := s.db.Exec(`INSERT INTO report_jobs (id, account_id, bucket, latitude, longitude, status, run_after_utc, created_utc, updated_utc, completed_utc)
				VALUES (?, ?, 'api', 1, 2, ?, ?, ?, ?, ?)`, id, acct, status, c, c, c, completed); err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, id)
		case 2, 3:
			created := at()
			status := []string{"pending", "succeeded", "failed"}[rng.IntN(3)]
			var delivered *time.Time
			if status == "succeeded" {
				delivered = usagePtr(created.Add(time.Duration(rng.Int64N(int64(3 * time.Hour)))))
			}
			if len(deliveries) == 0 {
				// The first, with its event and endpoint, is the others'
				// template (the helper's ids count the deliveries, which
				// the deletes below would make it reuse).
				id := usageInsertDelivery(t, s, acct, job, status, created, delivered, delivered, "")
				if _, err := s.db.Exec(`UPDATE webhook_deliveries SET id = ? WHERE id = ?`, fmt.Sprintf("wd_ev%020d", i), id); err != nil {
					t.Fatal(err)
				}
				deliveries = append(deliveries, fmt.Sprintf("wd_ev%020d", i))
				break
			}
			var d any
			if delivered != nil {
				d = FormatTime(*delivered)
			}
			id := fmt.Sprintf("wd_ev%020d", i)
			if _, err := s.db.Exec(`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, account_id, status, created_utc, last_attempt_utc, delivered_utc)
				SELECT ?, event_id, endpoint_id, ?, ?, ?, ?, ? FROM webhook_deliveries WHERE id = ?`,
				id, acct, status, FormatTime(created), d, d, deliveries[0]); err != nil {
				t.Fatal(err)
			}
			deliveries = append(deliveries, id)
		case 4, 5:
			if len(deliveries) > 0 {
				id := deliveries[rng.IntN(len(deliveries))]
				status := []string{"pending", "succeeded", "failed"}[rng.IntN(3)]
				var delivered any
				if status == "succeeded" {
					delivered = FormatTime(at())
				}
				if _, err := s.db.Exec(`UPDATE webhook_deliveries SET status = ?, delivered_utc = ? WHERE id = ?`, status, delivered, id); err != nil {
					t.Fatal(err)
				}
			}
		case 6:
			if len(deliveries) > 1 {
				k := 1 + rng.IntN(len(deliveries)-1) // the first is the others' template
				if _, err := s.db.Exec(`DELETE FROM webhook_deliveries WHERE id = ?`, deliveries[k]); err != nil {
					t.Fatal(err)
				}
				deliveries = append(deliveries[:k], deliveries[k+1:]...)
			}
		case 7:
			if len(jobs) > 0 {
				k := rng.IntN(len(jobs))
				if _, err := s.db.Exec(`DELETE FROM report_jobs WHERE id = ?`, jobs[k]); err != nil {
					t.Fatal(err)
				}
				jobs = append(jobs[:k], jobs[k+1:]...)
			}
		}
		if i%100 != 99 {
			continue
		}
		for range 5 {
			from := at()
			if rng.IntN(4) == 0 {
				from = from.Truncate(time.Hour)
			}
			d := time.Duration(1+rng.IntN(168)) * time.Hour
			if rng.IntN(4) == 0 {
				d = time.Duration(1+rng.IntN(120)) * time.Minute
			}
			for _, acct := range accts {
				o, err := s.OpsSummary(ctx, acct, from, from.Add(d), 0)
				if err != nil {
					t.Fatal(err)
				}
				var want eventCountsRow
				if err := s.db.Get(&want, opsEventCounts, acct, FormatTime(from), FormatTime(from.Add(d))); err != nil {
					t.Fatal(err)
				}
				if got := (eventCountsRow{o.Jobs.Created, o.Jobs.Completed, o.Webhooks.Deliveries, o.Webhooks.Succeeded}); got != want {
					t.Fatalf("step %d, %s from %s for %s: %+v, rows say %+v", i, acct, from.Format(time.RFC3339Nano), d, got, want)
				}
			}
		}
	}
}
