package sqlite

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/storetest"
)

func TestNearestRank(t *testing.T) {
	ms := func(vs ...int) []time.Duration {
		out := make([]time.Duration, len(vs))
		for i, v := range vs {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		in       []time.Duration
		p        float64
		want     time.Duration
		wantNone bool
	}{
		{nil, 0.5, 0, true},
		{ms(7), 0.5, 7 * time.Millisecond, false},
		{ms(7), 0.95, 7 * time.Millisecond, false},
		{ms(4, 1, 3, 2), 0.5, 2 * time.Millisecond, false},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.5, 5 * time.Millisecond, false},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.95, 10 * time.Millisecond, false},
		{ms(20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 0.95, 19 * time.Millisecond, false},
	}
	for i, tc := range tests {
		got := nearestRank(tc.in, tc.p)
		switch {
		case tc.wantNone && got != nil:
			t.Errorf("%d: got %v, want none", i, *got)
		case !tc.wantNone && (got == nil || *got != tc.want):
			t.Errorf("%d: got %v, want %v", i, got, tc.want)
		}
	}
}

// insertDelivery writes a webhook delivery row directly (with its endpoint
// and event), so these tests depend only on the schema.
func usageInsertDelivery(t *testing.T, s *Store, acct, jobID, status string, created time.Time, lastAttempt, delivered *time.Time, errText string) string {
	t.Helper()
	ctx := context.Background()
	n := countRows(t, s, `SELECT COUNT(*) FROM webhook_deliveries`)
	ep, ev, id := fmt.Sprintf("we_test%020d", n), fmt.Sprintf("evt_test%020d", n), fmt.Sprintf("wd_test%020d", n)
	nt := func(p *time.Time) any {
		if p == nil {
			return nil
		}
		return FormatTime(*p)
	}
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (id, account_id, name, url, events, signing_secret, created_utc)
			VALUES (?, ?, 'n', 'https://example.com/h', 'report.job.failed', 'whsec_x', ?)`, ep, acct, FormatTime(created)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_events (id, account_id, type, job_id, body, created_utc)
			VALUES (?, ?, 'report.job.failed', ?, '{}', ?)`, ev, acct, jobID, FormatTime(created)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, account_id, status, attempts,
			response_status, error, created_utc, last_attempt_utc, delivered_utc)
			VALUES (?, ?, ?, ?, ?, 1, 500, ?, ?, ?, ?)`, id, ev, ep, acct, status, errText, FormatTime(created), nt(lastAttempt), nt(delivered))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func usageInsertBatch(t *testing.T, s *Store, acct, status string, created time.Time, completed *time.Time) {
	t.Helper()
	n := countRows(t, s, `SELECT COUNT(*) FROM batches`)
	var c any
	if completed != nil {
		c = FormatTime(*completed)
	}
	_, err := s.db.Exec(`INSERT INTO batches (id, account_id, name, total_items, status, created_utc, completed_utc)
		VALUES (?, ?, '', 1, ?, ?, ?)`, fmt.Sprintf("bat_test%020d", n), acct, status, FormatTime(created), c)
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpsSummary(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a, other := newAccount(t, s, 1000), newAccount(t, s, 1000)
	// The window is [from, to): 24 hours ending at t0.
	from, to := t0.Add(-24*time.Hour), t0
	at := func(h float64) time.Time { return from.Add(time.Duration(h * float64(time.Hour))) }
	sec := time.Second

	// Completed in the window with completion times 1..10 s; one created
	// before the window (counts as completed, not created).
	for i := 1; i <= 9; i++ {
		storetest.EndJob(t, s, a.ID, locrisk.BucketAPI, at(float64(i)), at(float64(i)).Add(time.Duration(i)*sec), false)
	}
	storetest.EndJob(t, s, a.ID, locrisk.BucketAPI, at(-1), at(-1).Add(3601*sec), false) // completion 3601 s, ends at 1.0003 h
	// Completed before the window, created before: not counted anywhere.
	storetest.EndJob(t, s, a.ID, locrisk.BucketAPI, at(-3), at(-2), false)
	// Ends exactly at `to`: outside [from, to).
	storetest.EndJob(t, s, a.ID, locrisk.BucketAPI, at(23), to, false)
	// 25 failures in the window, one second apart, and one before it.
	storetest.EndJob(t, s, a.ID, locrisk.BucketAPI, at(-5), at(-4), true)
	var failed []locrisk.Job
	for i := range 25 {
		failed = append(failed, storetest.EndJob(t, s, a.ID, locrisk.BucketBulk, at(12), at(12).Add(time.Duration(i)*sec), true))
	}
	// Another account's failure, in the window.
	storetest.EndJob(t, s, other.ID, locrisk.BucketAPI, at(10), at(11), true)
	// Backlog: queued now and processing now, one created before the window.
	storetest.QueueJob(t, s, a.ID, locrisk.BucketAPI, at(-10))
	storetest.QueueJob(t, s, a.ID, locrisk.BucketAPI, at(20))
	storetest.QueueJob(t, s, a.ID, locrisk.BucketAPI, at(21))
	if _, ok, err := s.ClaimJob(ctx, "w", time.Hour, to); !ok || err != nil {
		t.Fatal(ok, err)
	}

	// Batches: two created in the window (one still processing, one
	// completed in it), one older and completed in the window, one older
	// and still processing, one completed before the window.
	usageInsertBatch(t, s, a.ID, "processing", at(2), nil)
	usageInsertBatch(t, s, a.ID, "completed", at(3), usagePtr(at(4)))
	usageInsertBatch(t, s, a.ID, "completed", at(-30), usagePtr(at(5)))
	usageInsertBatch(t, s, a.ID, "processing", at(-30), nil)
	usageInsertBatch(t, s, a.ID, "completed", at(-30), usagePtr(at(-20)))
	usageInsertBatch(t, s, other.ID, "processing", at(2), nil)

	// Deliveries: in the window one succeeded, one pending, two failed (one
	// after an attempt, one never attempted); before it a failed one and a
	// pending one (pending counts: it is a snapshot).
	job := failed[0].ID
	usageInsertDelivery(t, s, a.ID, job, "succeeded", at(1), usagePtr(at(1)), usagePtr(at(1)), "")
	usageInsertDelivery(t, s, a.ID, job, "pending", at(2), usagePtr(at(2)), nil, "HTTP 500")
	newestWebhookFailure := usageInsertDelivery(t, s, a.ID, job, "failed", at(-30), usagePtr(at(12).Add(100*sec)), nil, "HTTP 500 after 8 attempts")
	usageInsertDelivery(t, s, a.ID, job, "failed", at(3), nil, nil, "")
	usageInsertDelivery(t, s, a.ID, job, "failed", at(-30), usagePtr(at(-29)), nil, "old")
	usageInsertDelivery(t, s, a.ID, job, "pending", at(-30), nil, nil, "")
	usageInsertDelivery(t, s, other.ID, job, "failed", at(3), usagePtr(at(3)), nil, "other account")

	o, err := s.OpsSummary(ctx, a.ID, from, to, 20)
	if err != nil {
		t.Fatal(err)
	}
	// The exact nearest-rank values are 5 s and 3601 s; the summary
	// reports their buckets' values (the window is of whole hours, so the
	// histograms hold exactly its jobs).
	bs := wantCompletionBuckets()
	p50, p95 := time.Duration(completionValue(bs, 5000))*time.Millisecond, time.Duration(completionValue(bs, 3601000))*time.Millisecond
	if o.Jobs.CompletionP50 == nil || *o.Jobs.CompletionP50 != p50 || o.Jobs.CompletionP95 == nil || *o.Jobs.CompletionP95 != p95 {
		t.Errorf("completion p50 %v p95 %v, want %v %v", o.Jobs.CompletionP50, o.Jobs.CompletionP95, p50, p95)
	}
	counts := o.Jobs
	counts.CompletionP50, counts.CompletionP95 = nil, nil
	if want := (locrisk.JobOps{Created: 9 + 1 + 25 + 2, Completed: 10, Failed: 25, Queued: 2, Processing: 1}); counts != want {
		t.Errorf("jobs = %+v\nwant   %+v", counts, want)
	}
	if want := (locrisk.BatchOps{Created: 2, Processing: 2, Completed: 2}); o.Batches != want {
		t.Errorf("batches = %+v, want %+v", o.Batches, want)
	}
	if want := (locrisk.WebhookOps{Deliveries: 3, Succeeded: 1, Failed: 2, Pending: 2}); o.Webhooks != want {
		t.Errorf("webhooks = %+v, want %+v", o.Webhooks, want)
	}

	// Recent failures: newest first, capped at 20: the webhook failure at
	// 12 h + 100 s, then job failures 24..6 (seconds after 12 h).
	if len(o.RecentFailures) != 20 {
		t.Fatalf("%d recent failures, want 20", len(o.RecentFailures))
	}
	f0 := o.RecentFailures[0]
	if f0.Kind != locrisk.FailureWebhookDelivery || f0.ID != newestWebhookFailure || f0.Code != locrisk.CodeWebhookDeliveryFailed ||
		f0.Message != "HTTP 500 after 8 attempts" || !f0.OccurredUTC.Equal(at(12).Add(100*sec)) {
		t.Errorf("first failure = %+v", f0)
	}
	for i, f := range o.RecentFailures[1:] {
		j := failed[24-i]
		if f.Kind != locrisk.FailureReportJob || f.ID != j.ID || f.Code != "generation_error" || f.Message != *j.ErrorMessage || !f.OccurredUTC.Equal(*j.CompletedUTC) {
			t.Errorf("failure %d = %+v, want job %s at %v", i+1, f, j.ID, j.CompletedUTC)
		}
	}

	// A never-attempted failed delivery carries a made-up message, placed
	// at its creation; it shows once the newer ones are out of the window.
	o, err = s.OpsSummary(ctx, a.ID, from, at(4), 20)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, f := range o.RecentFailures {
		if f.Kind == locrisk.FailureWebhookDelivery {
			found = true
			if f.Message != "the endpoint answered HTTP 500" || !f.OccurredUTC.Equal(at(3)) {
				t.Errorf("never-attempted failure = %+v", f)
			}
		}
	}
	if !found {
		t.Errorf("never-attempted failed delivery missing: %+v", o.RecentFailures)
	}

	// An empty account: zeros, no percentiles, an empty (not nil) list.
	o, err = s.OpsSummary(ctx, newAccount(t, s, 1).ID, from, to, 20)
	if err != nil {
		t.Fatal(err)
	}
	if o.Jobs != (locrisk.JobOps{}) || o.Batches != (locrisk.BatchOps{}) || o.Webhooks != (locrisk.WebhookOps{}) || o.RecentFailures == nil || len(o.RecentFailures) != 0 {
		t.Errorf("empty account summary = %+v", o)
	}
}

func usagePtr[T any](v T) *T { return &v }

// The summary's percentiles are within 5% of nearestRank's over the
// completion times of the jobs completed in the UTC hours that overlap the
// window, as Go computes them from the stored times, to the millisecond
// (SQLite computes them for the histograms), and are exactly the value of
// the bucket that holds that time; its completed count is exact over the
// window itself. Random times of whole milliseconds (as stored) from 0 to
// 10 hours spread evenly in their logarithm, ties, zero and negative ones
// (a worker's clock behind the one that created the job: counted as 0),
// failed jobs (not counted), and windows of whole hours and of minutes.
func TestOpsSummaryPercentilesMatchNearestRank(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(16, 50))
	bs := wantCompletionBuckets()
	checked := 0
	for round := range 40 {
		a := newAccount(t, s, 1)
		from, to := t0.Add(-24*time.Hour), t0
		switch round % 4 {
		case 1:
			// Not on the hour: the hours at the ends count in full; up to a
			// week, so whole days come from the day rows.
			from = from.Add(time.Duration(rng.Int64N(int64(time.Hour)))).Truncate(time.Millisecond)
			to = from.Add(time.Duration(1+rng.IntN(336)) * 30 * time.Minute)
		case 2:
			// Whole days only.
			to = t0.Truncate(24 * time.Hour)
			from = to.Add(-time.Duration(1+rng.IntN(7)) * 24 * time.Hour)
		case 3:
			// Within a few hours.
			from = from.Add(time.Duration(rng.Int64N(int64(24 * time.Hour)))).Truncate(time.Millisecond)
			to = from.Add(time.Duration(1 + rng.Int64N(int64(3*time.Hour)))).Truncate(time.Millisecond).Add(time.Millisecond)
		}
		lo, hi := from.Truncate(time.Hour), to.Truncate(time.Hour)
		if hi.Before(to) {
			hi = hi.Add(time.Hour)
		}
		var hours []time.Duration // completion times in the hours that overlap the window
		inWindow := 0
		n := rng.IntN(3000)
		if round < 4 {
			n = round // none, one, two and three jobs
		}
		err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
			for range n {
				completed := from.Add(time.Duration(rng.Int64N(int64(to.Sub(from)+4*time.Hour))) - 2*time.Hour).Truncate(time.Millisecond)
				d := time.Duration(math.Exp(rng.Float64()*math.Log(float64(10*time.Hour/time.Millisecond)))) * time.Millisecond
				switch rng.IntN(8) {
				case 0:
					d = time.Duration(rng.IntN(3)) * time.Second // ties
				case 1:
					d = -time.Duration(rng.IntN(10000)) * time.Millisecond // 0 after the clamp
				}
				status := locrisk.StatusCompleted
				if rng.IntN(5) == 0 {
					status = locrisk.StatusFailed // not counted
				}
				c := FormatTime(completed.Add(-d))
				if _, err := tx.ExecContext(ctx, `INSERT INTO report_jobs (id, account_id, bucket, latitude, longitude, status, run_after_utc, created_utc, updated_utc, completed_utc)
					VALUES (?, ?, 'api', 1, 2, ?, ?, ?, ?, ?)`, ids.New(ids.Job), a.ID, status, c, c, FormatTime(completed), FormatTime(completed)); err != nil {
					return err
				}
				if status != locrisk.StatusCompleted {
					continue
				}
				if !completed.Before(lo) && completed.Before(hi) {
					hours = append(hours, max(d, 0))
				}
				if !completed.Before(from) && completed.Before(to) {
					inWindow++
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		o, err := s.OpsSummary(ctx, a.ID, from, to, 0)
		if err != nil {
			t.Fatal(err)
		}
		if o.Jobs.Completed != inWindow {
			t.Errorf("round %d: %d completed, want %d", round, o.Jobs.Completed, inWindow)
		}
		for _, c := range []struct {
			p   float64
			got *time.Duration
		}{{0.50, o.Jobs.CompletionP50}, {0.95, o.Jobs.CompletionP95}} {
			exact := nearestRank(slices.Clone(hours), c.p)
			if exact == nil || c.got == nil {
				if exact != nil || c.got != nil {
					t.Errorf("round %d, p%v of %d jobs: %s, want %s", round, c.p*100, len(hours), durationString(c.got), durationString(exact))
				}
				continue
			}
			e, g := exact.Milliseconds(), c.got.Milliseconds()
			if !within5(g, e) || g != completionValue(bs, e) || *c.got != time.Duration(g)*time.Millisecond {
				t.Errorf("round %d, p%v of %d jobs: %s, want %s (exact) within 5%%, as %d ms", round, c.p*100, len(hours),
					c.got, exact, completionValue(bs, e))
			}
			checked++
		}
	}
	if checked < 60 {
		t.Errorf("only %d percentiles checked", checked)
	}
}

// Every count of the operations summary is a search of an index that
// leads with the account (and the status, where it names one), bounded
// by the window or the state: nothing scans the account's whole history
// (docs/performance.md, "A large database"). The completion times are
// read from report_jobs_ended alone (covering: its expression is the
// query's, so no table row is read).
func TestOpsSummaryQueryPlans(t *testing.T) {
	s := newStore(t, Options{})
	tests := []struct {
		name, query string
		args        []any
		uses        []string // "INDEX name (constraints)" the plan must contain
		sorts       []string // the sorts allowed
	}{
		{"hourly counts", opsHourlyCounts, []any{"a", "f", "t"}, []string{
			"PRIMARY KEY (account_id=? AND hour>? AND hour<?)",
		}, nil},
		{"period usage", periodUsageQuery, []any{"a", "f", "t", "f", "t"}, []string{
			"PRIMARY KEY (account_id=? AND hour>? AND hour<?)",
			"COVERING INDEX report_jobs_by_status (account_id=? AND status=? AND created_utc>? AND created_utc<?)",
		}, nil},
		{"event counts", opsEventCounts, []any{"a", "f", "t"}, []string{
			"COVERING INDEX report_jobs_by_account (account_id=? AND created_utc>? AND created_utc<?)",
			"COVERING INDEX report_jobs_ended (account_id=? AND status=? AND completed_utc>? AND completed_utc<?)",
			"COVERING INDEX webhook_deliveries_by_account (account_id=? AND created_utc>? AND created_utc<?)",
			"COVERING INDEX webhook_deliveries_by_status (account_id=? AND status=? AND delivered_utc>? AND delivered_utc<?)",
		}, nil},
		{"hour less rows", opsHourLessRows, []any{"a", "h0", "h1", "f", "t"}, []string{
			"PRIMARY KEY (account_id=? AND hour>? AND hour<?)",
			"COVERING INDEX report_jobs_by_account (account_id=? AND created_utc>? AND created_utc<?)",
			"COVERING INDEX report_jobs_ended (account_id=? AND status=? AND completed_utc>? AND completed_utc<?)",
			"COVERING INDEX webhook_deliveries_by_account (account_id=? AND created_utc>? AND created_utc<?)",
			"COVERING INDEX webhook_deliveries_by_status (account_id=? AND status=? AND delivered_utc>? AND delivered_utc<?)",
		}, nil},
		{"job counts", jobOpsCounts, []any{"a", "f", "t"}, []string{
			"COVERING INDEX report_jobs_ended (account_id=? AND status=? AND completed_utc>? AND completed_utc<?)",
			"COVERING INDEX report_jobs_by_status (account_id=? AND status=?)",
		}, nil},
		{"completion histogram", completionHistogram, []any{"a", "h0", "h1", "d0", "d1", "h2", "h3"}, []string{
			"PRIMARY KEY (account_id=? AND span=? AND period>? AND period<?)",
			"INTEGER PRIMARY KEY (rowid=?)",
		}, []string{"USE TEMP B-TREE FOR GROUP BY", "USE TEMP B-TREE FOR ORDER BY"}}, // by bucket: at most hours times buckets rows
		{"batch counts", batchOpsCounts, []any{"a", "f", "t"}, []string{
			"COVERING INDEX batches_by_account (account_id=? AND created_utc>? AND created_utc<?)",
			"COVERING INDEX batches_by_status (account_id=? AND status=?)",
			"COVERING INDEX batches_by_status (account_id=? AND status=? AND completed_utc>? AND completed_utc<?)",
		}, nil},
		{"webhook counts", webhookOpsCounts, []any{"a", "f", "t"}, []string{
			"INDEX webhook_deliveries_failed (account_id=? AND <expr>>? AND <expr><?)",
			"COVERING INDEX webhook_deliveries_by_status (account_id=? AND status=?)",
		}, nil},
		{"recent failures", recentFailuresQuery, []any{"a", "f", "t", 20, "c"}, []string{
			"INDEX report_jobs_ended (account_id=? AND status=? AND completed_utc>? AND completed_utc<?)",
			"INDEX webhook_deliveries_failed (account_id=? AND <expr>>? AND <expr><?)",
		}, []string{"USE TEMP B-TREE FOR LAST TERM OF ORDER BY"}}, // ties of completed_utc, by id
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := queryPlan(t, s, tt.query, tt.args...)
			all := strings.Join(plan, "\n")
			for _, p := range plan {
				scan := strings.HasPrefix(p, "SCAN ") && p != "SCAN CONSTANT ROW" && !strings.HasPrefix(p, "SCAN (subquery-")
				if scan || (strings.Contains(p, "TEMP B-TREE") && !slices.Contains(tt.sorts, p)) {
					t.Errorf("plan step %q:\n%s", p, all)
				}
			}
			for _, u := range tt.uses {
				if !slices.ContainsFunc(plan, func(p string) bool { return strings.HasSuffix(p, " USING "+u) }) {
					t.Errorf("plan does not use %s:\n%s", u, all)
				}
			}
		})
	}
}
