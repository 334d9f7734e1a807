package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

var usageTests = []test{
	{"Period", periodUsage},
	{"History", usageHistory},
	{"RequestStats", requestStatsMergeAndRange},
	{"OpsSummary", opsSummaryCounts},
	{"OpsSummaryPercentiles", opsSummaryPercentiles},
	{"OpsSummaryWindows", opsSummaryWindows},
	{"RetryMovesTheEnd", usageRetryMovesTheEnd},
	{"QueueDepth", queueDepth},
}

var retentionTests = []test{
	{"Purge", purge},
}

var referenceTests = []test{
	{"Cache", referenceCache},
}

// EndJob makes a job of acct created at created and ended (completed,
// or failed if fail) at ended.
func EndJob(t testing.TB, s locrisk.Store, acct, bucket string, created, ended time.Time, fail bool) locrisk.Job {
	t.Helper()
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: acct, Bucket: bucket, Latitude: 40, Longitude: -100}, created)
	if err != nil {
		t.Fatal(err)
	}
	c, ok, err := s.ClaimJob(ctx, "w", time.Hour, created)
	if err != nil || !ok || c.ID != j.ID {
		t.Fatalf("claim %s: got %q ok=%v err=%v", j.ID, c.ID, ok, err)
	}
	if fail {
		c, err = s.FailJob(ctx, j.ID, "w", "generation_error", "failed at "+ended.Format(time.RFC3339), false, ended)
	} else {
		c, err = s.CompleteJob(ctx, j.ID, "w", locrisk.Report{DataVersion: "v", Body: []byte(`{}`)}, ended)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// QueueJob makes a queued job of acct created at created.
func QueueJob(t testing.TB, s locrisk.Store, acct, bucket string, created time.Time) locrisk.Job {
	t.Helper()
	j, _, err := s.CreateJob(context.Background(), locrisk.NewJob{AccountID: acct, Bucket: bucket, Latitude: 40, Longitude: -100}, created)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func periodUsage(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a, other := newAccount(t, s, 7), newAccount(t, s, 100)
	oct := time.Date(2026, 10, 31, 23, 59, 59, 999e6, time.UTC)
	nov := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	EndJob(t, s, a.ID, locrisk.BucketAPI, oct, oct, false)                   // last month
	EndJob(t, s, a.ID, locrisk.BucketAPI, oct, nov.Add(time.Hour), false)    // created last month, ended this month
	EndJob(t, s, a.ID, locrisk.BucketBulk, nov, nov.Add(time.Hour), false)   // completed
	EndJob(t, s, a.ID, locrisk.BucketManual, nov.Add(time.Hour), t0, true)   // failed
	EndJob(t, s, other.ID, locrisk.BucketAPI, nov.Add(time.Hour), t0, false) // another account
	QueueJob(t, s, a.ID, locrisk.BucketAPI, t0)                              // processing, below
	QueueJob(t, s, a.ID, locrisk.BucketAPI, t0)                              // queued
	if _, ok, err := s.ClaimJob(ctx, "w", time.Hour, t0); !ok || err != nil {
		t.Fatal(ok, err)
	}
	QueueJob(t, s, a.ID, locrisk.BucketAPI, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) // next month

	u, err := s.PeriodUsage(ctx, a.ID, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := locrisk.PeriodUsage{Limit: 7, Start: nov, End: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		Created: 4, Charged: 4, Queued: 1, Processing: 1, Completed: 1, Failed: 1}
	if fmt.Sprint(u) != fmt.Sprint(want) {
		t.Errorf("PeriodUsage = %+v\nwant          %+v", u, want)
	}
	if u.Remaining() != 3 {
		t.Errorf("Remaining = %d, want 3", u.Remaining())
	}
	// The quota check counts the same jobs: 3 more fit, the 4th does not.
	for i := range 4 {
		_, _, err := s.CreateJob(ctx, apiJob(a.ID), t0)
		if (i < 3) != (err == nil) {
			t.Errorf("creation %d of 4 with 3 left: %v", i+1, err)
		}
	}
	if _, err := s.PeriodUsage(ctx, "acct_nope", t0); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("unknown account: %v, want ErrNotFound", err)
	}
	if (locrisk.PeriodUsage{Limit: 2, Created: 5, Charged: 5}).Remaining() != 0 {
		t.Error("Remaining went negative")
	}
}

func usageHistory(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a, other := newAccount(t, s, 100), newAccount(t, s, 100)
	day := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, time.UTC) }
	EndJob(t, s, a.ID, locrisk.BucketAPI, day(18, 12), day(18, 13), false)     // before the range
	EndJob(t, s, a.ID, locrisk.BucketAPI, day(19, 23), day(20, 0), false)      // created before, completed on day 1
	EndJob(t, s, a.ID, locrisk.BucketAPI, day(20, 1), day(20, 2), false)       // day 1
	EndJob(t, s, a.ID, locrisk.BucketBulk, day(20, 5), day(22, 1), true)       // created day 1, failed day 3
	EndJob(t, s, a.ID, locrisk.BucketManual, day(22, 0), day(22, 0), false)    // day 3
	EndJob(t, s, other.ID, locrisk.BucketManual, day(21, 3), day(21, 4), true) // another account
	QueueJob(t, s, a.ID, locrisk.BucketAPI, day(22, 9))                        // queued, day 3
	QueueJob(t, s, a.ID, locrisk.BucketAPI, day(23, 0))                        // after the range

	got, err := s.UsageHistory(ctx, a.ID, day(20, 17), 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []locrisk.DailyUsage{
		{Day: day(20, 0), Bucket: "api", ReportJobs: 1, Completed: 2, Failed: 0}, {Day: day(20, 0), Bucket: "bulk", ReportJobs: 1, Completed: 0, Failed: 0}, {Day: day(20, 0), Bucket: "manual", ReportJobs: 0, Completed: 0, Failed: 0},
		{Day: day(21, 0), Bucket: "api", ReportJobs: 0, Completed: 0, Failed: 0}, {Day: day(21, 0), Bucket: "bulk", ReportJobs: 0, Completed: 0, Failed: 0}, {Day: day(21, 0), Bucket: "manual", ReportJobs: 0, Completed: 0, Failed: 0},
		{Day: day(22, 0), Bucket: "api", ReportJobs: 1, Completed: 0, Failed: 0}, {Day: day(22, 0), Bucket: "bulk", ReportJobs: 0, Completed: 0, Failed: 1}, {Day: day(22, 0), Bucket: "manual", ReportJobs: 1, Completed: 1, Failed: 0},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("UsageHistory =\n%v\nwant\n%v", got, want)
	}

	got, err = s.UsageHistory(ctx, a.ID, day(20, 0), 3, []string{locrisk.BucketBulk})
	if err != nil {
		t.Fatal(err)
	}
	want = []locrisk.DailyUsage{{Day: day(20, 0), Bucket: "bulk", ReportJobs: 1, Completed: 0, Failed: 0}, {Day: day(21, 0), Bucket: "bulk", ReportJobs: 0, Completed: 0, Failed: 0}, {Day: day(22, 0), Bucket: "bulk", ReportJobs: 0, Completed: 0, Failed: 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("bulk only =\n%v\nwant\n%v", got, want)
	}

	// An account with nothing gets zeros for every day and bucket.
	empty := newAccount(t, s, 1)
	got, err = s.UsageHistory(ctx, empty.ID, day(1, 0), 90, nil)
	if err != nil || len(got) != 270 {
		t.Fatalf("90 empty days: %d items, %v", len(got), err)
	}
	for i, u := range got {
		if u.ReportJobs+u.Completed+u.Failed != 0 || !u.Day.Equal(day(1, 0).AddDate(0, 0, i/3)) || u.Bucket != locrisk.Buckets()[i%3] {
			t.Fatalf("item %d = %+v", i, u)
		}
	}

	if _, err := s.UsageHistory(ctx, a.ID, day(20, 0), 0, nil); !errors.Is(err, locrisk.ErrInvalid) {
		t.Errorf("0 days: %v, want ErrInvalid", err)
	}
	if _, err := s.UsageHistory(ctx, a.ID, day(20, 0), 1, []string{"vip"}); !errors.Is(err, locrisk.ErrInvalid) {
		t.Errorf("bad bucket: %v, want ErrInvalid", err)
	}
}

func requestStatsMergeAndRange(t testing.TB, h Harness) {
	ctx := context.Background()
	s := h.open(t)
	a, err := s.CreateAccount(ctx, "a", 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateAccount(ctx, "b", 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	hour := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) } // t0 is on the hour

	err = s.AddRequestStats(ctx, []locrisk.HourStats{
		{AccountID: a.ID, Hour: hour(0).Add(17 * time.Minute), RequestCounts: locrisk.RequestCounts{Total: 3, Succeeded: 2, ClientErrors: 1, Latency: []int64{2, 1}}},
		{AccountID: a.ID, Hour: hour(1), RequestCounts: locrisk.RequestCounts{Total: 1, ServerErrors: 1, Latency: []int64{0, 0, 1}}},
		{AccountID: b.ID, Hour: hour(0), RequestCounts: locrisk.RequestCounts{Total: 7, Succeeded: 7, Latency: []int64{7}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A second flush into an existing hour merges counters and histogram.
	err = s.AddRequestStats(ctx, []locrisk.HourStats{
		{AccountID: a.ID, Hour: hour(0), RequestCounts: locrisk.RequestCounts{Total: 2, ClientErrors: 2, RateLimited: 1, Latency: []int64{0, 1, 0, 1}}},
		{AccountID: a.ID, Hour: hour(-2), RequestCounts: locrisk.RequestCounts{Total: 1, Succeeded: 1, Latency: []int64{1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddRequestStats(ctx, nil); err != nil {
		t.Errorf("empty add: %v", err)
	}
	check := func() {
		t.Helper()
		tests := []struct {
			acct     string
			from, to time.Time
			want     locrisk.RequestCounts
		}{
			{a.ID, hour(0), hour(1), locrisk.RequestCounts{Total: 5, Succeeded: 2, ClientErrors: 3, RateLimited: 1, Latency: []int64{2, 2, 0, 1}}},
			{a.ID, hour(0), hour(2), locrisk.RequestCounts{Total: 6, Succeeded: 2, ClientErrors: 3, ServerErrors: 1, RateLimited: 1, Latency: []int64{2, 2, 1, 1}}},
			{a.ID, hour(-2), hour(2), locrisk.RequestCounts{Total: 7, Succeeded: 3, ClientErrors: 3, ServerErrors: 1, RateLimited: 1, Latency: []int64{3, 2, 1, 1}}},
			{a.ID, hour(-1), hour(0), locrisk.RequestCounts{}},
			{b.ID, hour(-5), hour(5), locrisk.RequestCounts{Total: 7, Succeeded: 7, Latency: []int64{7}}},
		}
		for i, tc := range tests {
			got, err := s.RequestStats(ctx, tc.acct, tc.from, tc.to)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("case %d: RequestStats = %+v, want %+v", i, got, tc.want)
			}
		}
	}
	check()

	// A failing batch (unknown account: foreign key) adds nothing at all.
	err = s.AddRequestStats(ctx, []locrisk.HourStats{
		{AccountID: a.ID, Hour: hour(0), RequestCounts: locrisk.RequestCounts{Total: 100, Latency: []int64{100}}},
		{AccountID: "acct_nope", Hour: hour(0), RequestCounts: locrisk.RequestCounts{Total: 1}},
	})
	if err == nil {
		t.Fatal("stats for an unknown account were accepted")
	}
	check()
}

func referenceCache(t testing.TB, h Harness) {
	ctx := context.Background()
	s := h.open(t)

	// An absent key is no reference and no error: the engine builds one.
	body, err := s.LoadReference(ctx, "dv1/m2/f1")
	if body != nil || err != nil {
		t.Fatalf("absent key: body %q err %v, want nil, nil", body, err)
	}

	// Round trip, byte for byte (the body is binary).
	b1 := []byte{0, 1, 2, 0xff, 'g', 'o', 'b', 0}
	if err := s.SaveReference(ctx, "dv1/m2/f1", b1); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LoadReference(ctx, "dv1/m2/f1"); err != nil || !bytes.Equal(got, b1) {
		t.Fatalf("round trip: %v err %v, want %v", got, err, b1)
	}

	// Saving the same key again replaces its body.
	b1b := []byte("second body")
	if err := s.SaveReference(ctx, "dv1/m2/f1", b1b); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LoadReference(ctx, "dv1/m2/f1"); err != nil || !bytes.Equal(got, b1b) {
		t.Fatalf("resave: %q err %v, want %q", got, err, b1b)
	}

	// A new key (new data version or methodology) drops every other key.
	b2 := []byte("reference for dv2")
	if err := s.SaveReference(ctx, "dv2/m2/f1", b2); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LoadReference(ctx, "dv2/m2/f1"); err != nil || !bytes.Equal(got, b2) {
		t.Fatalf("new key: %q err %v, want %q", got, err, b2)
	}
	if got, err := s.LoadReference(ctx, "dv1/m2/f1"); got != nil || err != nil {
		t.Fatalf("old key after a new save: %q err %v, want nil, nil", got, err)
	}
}

// opsSummaryCounts: the operations summary counts the jobs of its window
// and account by final state, with their failures, newest first.
func opsSummaryCounts(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a, other := newAccount(t, s, 100), newAccount(t, s, 100)
	EndJob(t, s, a.ID, locrisk.BucketAPI, t0.Add(-3*time.Hour), t0.Add(-3*time.Hour), false) // before the window
	EndJob(t, s, a.ID, locrisk.BucketAPI, t0, t0.Add(time.Minute), false)
	EndJob(t, s, a.ID, locrisk.BucketAPI, t0, t0.Add(2*time.Minute), true)
	EndJob(t, s, a.ID, locrisk.BucketBulk, t0, t0.Add(3*time.Minute), true)
	EndJob(t, s, other.ID, locrisk.BucketAPI, t0, t0.Add(time.Minute), true)
	QueueJob(t, s, a.ID, locrisk.BucketAPI, t0.Add(4*time.Minute))
	ops, err := s.OpsSummary(ctx, a.ID, t0.Add(-time.Hour), t0.Add(time.Hour), 1)
	if err != nil {
		t.Fatal(err)
	}
	j := ops.Jobs
	if j.Created != 4 || j.Completed != 1 || j.Failed != 2 || j.Queued != 1 {
		t.Errorf("job counts %+v; want 4 created, 1 completed, 2 failed, 1 queued in the window", j)
	}
	if len(ops.RecentFailures) != 1 || !ops.RecentFailures[0].OccurredUTC.Equal(t0.Add(3*time.Minute)) {
		t.Errorf("recent failures %+v; want only the newest, at %v", ops.RecentFailures, t0.Add(3*time.Minute))
	}
}

// opsSummaryPercentiles: the completion percentiles (locrisk.JobOps) are
// within 5% of the exact nearest-rank values of the completion times of
// the jobs completed in the UTC hours that overlap the window, every
// such hour counted in full, while the completed count is the window's
// own.
func opsSummaryPercentiles(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(28, 12))
	// Completion times spread evenly in their logarithm from 1 ms to 20
	// minutes, with ties, ending inside a window that starts and ends
	// within an hour: [10:10, 12:10).
	a := newAccount(t, s, 1000)
	from, to := t0.Add(10*time.Minute), t0.Add(130*time.Minute)
	var ds []time.Duration
	for i := range 200 {
		d := time.Duration(math.Exp(rng.Float64()*math.Log(20*60*1000))) * time.Millisecond
		if i%10 == 0 {
			d = 1500 * time.Millisecond
		}
		ended := from.Add(time.Duration(rng.Int64N(int64(to.Sub(from))))).Truncate(time.Millisecond)
		EndJob(t, s, a.ID, locrisk.BucketAPI, ended.Add(-d), ended, false)
		ds = append(ds, d)
	}
	EndJob(t, s, a.ID, locrisk.BucketAPI, from, from.Add(time.Minute), true) // failed: not counted
	ops, err := s.OpsSummary(ctx, a.ID, from, to, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ops.Jobs.Completed != len(ds) {
		t.Errorf("%d completed, want %d", ops.Jobs.Completed, len(ds))
	}
	checkPercentiles(t, "[10:10, 12:10)", ops.Jobs, ds)

	// Over days: jobs completed from 60 hours before 10:00 to 2 hours
	// after, a window from 49:53 hours before to 0:03 after; the hours
	// [-50 h, +1 h) count.
	c := newAccount(t, s, 1000)
	ds = ds[:0]
	for range 150 {
		d := time.Duration(math.Exp(rng.Float64()*math.Log(60*60*1000))) * time.Millisecond
		ended := t0.Add(-60 * time.Hour).Add(time.Duration(rng.Int64N(int64(62 * time.Hour)))).Truncate(time.Millisecond)
		EndJob(t, s, c.ID, locrisk.BucketAPI, ended.Add(-d), ended, false)
		if !ended.Before(t0.Add(-50*time.Hour)) && ended.Before(t0.Add(time.Hour)) {
			ds = append(ds, d)
		}
	}
	if ops, err = s.OpsSummary(ctx, c.ID, t0.Add(-50*time.Hour+7*time.Minute), t0.Add(3*time.Minute), 0); err != nil {
		t.Fatal(err)
	}
	checkPercentiles(t, "[-49:53 h, +0:03 h)", ops.Jobs, ds)

	// The hours at the window's ends count in full: a job completed at
	// 10:05 counts in the percentiles of [10:10, 10:40) though not in its
	// completed count; one completed at 11:00 does not.
	b := newAccount(t, s, 1000)
	slow := 3 * time.Hour
	EndJob(t, s, b.ID, locrisk.BucketAPI, t0.Add(5*time.Minute-slow), t0.Add(5*time.Minute), false)
	EndJob(t, s, b.ID, locrisk.BucketAPI, t0.Add(time.Hour-time.Millisecond), t0.Add(time.Hour), false)
	ops, err = s.OpsSummary(ctx, b.ID, t0.Add(10*time.Minute), t0.Add(40*time.Minute), 0)
	if err != nil {
		t.Fatal(err)
	}
	j := ops.Jobs
	if j.Completed != 0 || j.CompletionP50 == nil || j.CompletionP95 == nil ||
		20*(*j.CompletionP50-slow).Abs() > slow || *j.CompletionP95 != *j.CompletionP50 {
		t.Errorf("[10:10, 10:40): %d completed, p50 %v, p95 %v; want 0 and both within 5%% of %v",
			j.Completed, j.CompletionP50, j.CompletionP95, slow)
	}
	// No job completed in the hours: no percentiles.
	if ops, err = s.OpsSummary(ctx, b.ID, t0.Add(2*time.Hour), t0.Add(3*time.Hour), 0); err != nil {
		t.Fatal(err)
	}
	if ops.Jobs.CompletionP50 != nil || ops.Jobs.CompletionP95 != nil {
		t.Errorf("no job in the hours: p50 %v p95 %v, want none", ops.Jobs.CompletionP50, ops.Jobs.CompletionP95)
	}
}

// checkPercentiles fails the test unless j's completion percentiles are
// within 5% of the exact nearest-rank values of ds.
func checkPercentiles(t testing.TB, where string, j locrisk.JobOps, ds []time.Duration) {
	t.Helper()
	ds = slices.Sorted(slices.Values(ds))
	for _, c := range []struct {
		p   float64
		got *time.Duration
	}{{0.50, j.CompletionP50}, {0.95, j.CompletionP95}} {
		exact := ds[int(math.Ceil(c.p*float64(len(ds))-1e-9))-1] // nearest rank
		if c.got == nil || 20*(*c.got-exact).Abs() > exact {
			t.Errorf("%s: p%v = %v, want within 5%% of %v (%d jobs)", where, c.p*100, c.got, exact, len(ds))
		}
	}
}

// purge: a purge removes the finished jobs older than its cut-off with
// their reports, keeps what is newer or still open, and forgets expired
// idempotency keys whatever the retention; a dry run only counts.
func purge(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 100)
	old := EndJob(t, s, a.ID, locrisk.BucketAPI, t0, t0.Add(time.Minute), false)
	recent := EndJob(t, s, a.ID, locrisk.BucketAPI, t0.Add(48*time.Hour), t0.Add(49*time.Hour), false)
	open := QueueJob(t, s, a.ID, locrisk.BucketAPI, t0)
	keyed := apiJob(a.ID)
	keyed.IdempotencyKey, keyed.RequestHash = "k", "h"
	if _, _, err := s.CreateJob(ctx, keyed, t0.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// The usage counts are those of the jobs held: the purged job leaves
	// every count it was in, in the history of the day it was created and
	// ended in, the billing period's, and the operations summary's.
	usage := func(when string, created, completed, queued int) {
		t.Helper()
		h, err := s.UsageHistory(ctx, a.ID, t0, 1, []string{locrisk.BucketAPI})
		if err != nil {
			t.Fatal(err)
		}
		if h[0].ReportJobs != created || h[0].Completed != completed || h[0].Failed != 0 {
			t.Errorf("%s: usage of the old job's day %+v, want %d created, %d completed", when, h[0], created, completed)
		}
		u, err := s.PeriodUsage(ctx, a.ID, t0)
		if err != nil {
			t.Fatal(err)
		}
		if u.Created != created+2 || u.Completed != completed+1 || u.Queued != queued || u.Failed != 0 || u.Processing != 0 {
			t.Errorf("%s: period usage %+v, want %d created, %d completed, %d queued", when, u, created+2, completed+1, queued)
		}
		o, err := s.OpsSummary(ctx, a.ID, t0, t0.Add(time.Hour), 0)
		if err != nil {
			t.Fatal(err)
		}
		if o.Jobs.Created != created || o.Jobs.Completed != completed || o.Jobs.Queued != queued ||
			(o.Jobs.CompletionP50 != nil) != (completed > 0) {
			t.Errorf("%s: operations summary of the old job's hour %+v, want %d created, %d completed, %d queued",
				when, o.Jobs, created, completed, queued)
		}
	}
	usage("before the purge", 2, 1, 2)
	policy := locrisk.PurgePolicy{Before: t0.Add(24 * time.Hour), Now: t0.Add(50 * time.Hour), Batch: 10}
	dry := policy
	dry.DryRun = true
	c, err := s.Purge(ctx, dry)
	if err != nil || c.Jobs != 1 || c.Reports != 1 {
		t.Errorf("dry run counted %+v (%v), want the one old job and its report", c, err)
	}
	usage("after a dry run", 2, 1, 2)
	if _, err := s.GetJob(ctx, a.ID, old.ID); err != nil {
		t.Fatalf("a dry run removed the old job: %v", err)
	}
	c, err = s.Purge(ctx, policy)
	if err != nil || c.Jobs != 1 || c.Reports != 1 {
		t.Errorf("purge removed %+v (%v), want the one old job and its report", c, err)
	}
	if _, err := s.GetJob(ctx, a.ID, old.ID); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("old job after the purge: %v, want ErrNotFound", err)
	}
	usage("after the purge", 1, 0, 2)
	if _, err := s.GetReport(ctx, a.ID, *old.ReportID); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("old report after the purge: %v, want ErrNotFound", err)
	}
	for _, j := range []locrisk.Job{recent, open} {
		if _, err := s.GetJob(ctx, a.ID, j.ID); err != nil {
			t.Errorf("job %s (%s) was purged: %v", j.ID, j.Status, err)
		}
	}
	if _, err := s.GetReport(ctx, a.ID, *recent.ReportID); err != nil {
		t.Errorf("the recent report was purged: %v", err)
	}
	// Retention off: only the idempotency key, a day past its time, goes.
	c, err = s.Purge(ctx, locrisk.PurgePolicy{Now: t0.Add(48*time.Hour + locrisk.IdempotencyTTL + time.Hour), Batch: 10})
	if err != nil || c.IdempotencyKeys != 1 || c.Total() != 1 {
		t.Errorf("purge with retention off removed %+v (%v), want the one expired key", c, err)
	}
	if _, replayed, err := s.CreateJob(ctx, keyed, t0.Add(48*time.Hour+locrisk.IdempotencyTTL+time.Hour)); err != nil || replayed {
		t.Errorf("the forgotten key replayed (%v, %v), want a new job", replayed, err)
	}
}

// opsSummaryWindows: the operations summary counts exactly the events of
// its window, whatever the window's ends: within one hour, on the hour,
// or in the middle of their hours, shorter or longer than the rest of the
// hour, and ending at the store's now or before. (A store may sum whole
// hours from counters and count only the part hours from the rows; the
// counts must be the rows' all the same.) Also the jobs queued and
// processing and the batches and deliveries in their states now.
func opsSummaryWindows(t testing.TB, h Harness) {
	s := h.open(t) // now is t0, 10:00
	ctx := context.Background()
	a, other := newAccount(t, s, 1000), newAccount(t, s, 1000)
	at := func(hh, mm int) time.Time { return time.Date(2026, 11, 22, hh, mm, 0, 0, time.UTC) }

	// Jobs that ended, each created and ended at the times given.
	type ended struct {
		created, ended time.Time
		failed         bool
	}
	jobs := []ended{
		{at(6, 50), at(6, 59), false}, {at(7, 5), at(7, 10), true}, {at(7, 10), at(7, 30), false},
		{at(7, 25), at(8, 1), true}, {at(8, 30), at(8, 31), false}, {at(8, 59), at(9, 2), false},
		{at(9, 3), at(9, 30), true}, {at(9, 30), at(10, 5), false}, {at(10, 1), at(10, 39), true},
		{at(10, 39), at(10, 45), false}, {at(10, 50), at(11, 10), false}, {at(5, 0), at(9, 59), false},
	}
	for _, j := range jobs {
		EndJob(t, s, a.ID, locrisk.BucketAPI, j.created, j.ended, j.failed)
		EndJob(t, s, other.ID, locrisk.BucketBulk, j.created, j.ended, !j.failed)
	}
	// Deliveries: created (a test event), then succeeded or failed (for
	// good) at the second time, or left pending.
	type delivery struct {
		created, done time.Time
		outcome       string
	}
	deliveries := []delivery{
		{at(6, 55), at(7, 15), locrisk.DeliverySucceeded}, {at(7, 20), at(7, 21), locrisk.DeliveryFailed},
		{at(7, 40), at(8, 10), locrisk.DeliverySucceeded}, {at(8, 45), at(9, 1), locrisk.DeliverySucceeded},
		{at(9, 4), at(9, 6), locrisk.DeliveryFailed}, {at(9, 50), at(10, 2), locrisk.DeliverySucceeded},
		{at(10, 3), at(10, 41), locrisk.DeliverySucceeded}, {at(10, 44), at(10, 46), locrisk.DeliveryFailed},
		{at(8, 20), time.Time{}, locrisk.DeliveryPending}, {at(10, 20), time.Time{}, locrisk.DeliveryPending},
	}
	ep := newEndpoint(t, s, a.ID, at(5, 0))
	otherEp := newEndpoint(t, s, other.ID, at(5, 0))
	for _, d := range deliveries {
		for _, e := range []string{ep.ID, otherEp.ID} {
			acct := a.ID
			if e == otherEp.ID {
				acct = other.ID
			}
			if _, err := s.QueueTestWebhook(ctx, acct, e, testEvent(d.created)); err != nil {
				t.Fatal(err)
			}
			if d.outcome == locrisk.DeliveryPending {
				continue
			}
			task, ok, err := s.ClaimWebhookDelivery(ctx, 24*time.Hour, testLimits(), d.created)
			if err != nil || !ok {
				t.Fatalf("claim the delivery of %v: %v %v", d.created, ok, err)
			}
			attempt := locrisk.DeliveryAttempt{Success: true, ResponseStatus: 200, Started: d.done}
			if d.outcome == locrisk.DeliveryFailed {
				attempt = locrisk.DeliveryAttempt{Error: "gone", Started: d.done}
			}
			if st, err := s.RecordWebhookAttempt(ctx, task, attempt, d.done); err != nil || st != d.outcome {
				t.Fatalf("record the delivery of %v: %q %v, want %s", d.created, st, err, d.outcome)
			}
		}
	}
	// The pending deliveries above were created after the others were
	// claimed, so every claim took the one just made.
	//
	// Batches: one completed at 9:10, one processing (its job queued).
	done, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: []locrisk.NewBatchItem{
		validItem("v", 30, -90), rejectedItem("r", "invalid_latitude", nil, nil)}}, at(8, 15))
	if err != nil {
		t.Fatal(err)
	}
	completeBatchJob(t, s, *BatchItems(t, s, a.ID, done.ID)[0].JobID, []byte(`{}`), at(9, 10))
	if _, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: []locrisk.NewBatchItem{validItem("v", 30, -90)}}, at(9, 40)); err != nil {
		t.Fatal(err)
	}
	// Jobs open now: the batch's, queued; two more queued, one of them
	// then processing.
	QueueJob(t, s, a.ID, locrisk.BucketAPI, at(9, 55))
	held := QueueJob(t, s, a.ID, locrisk.BucketManual, at(10, 0))
	ClaimJob(t, s, held.ID, at(10, 0))

	in := func(x, from, to time.Time) bool { return !x.Before(from) && x.Before(to) }
	for _, w := range [][2]time.Time{
		{at(7, 20), at(10, 40)}, // part hours longer than their rests; ends after now
		{at(7, 50), at(10, 10)}, // a short first part; ends after now
		{at(6, 50), at(9, 5)},   // a short last part, before now
		{at(6, 10), at(9, 55)},  // long parts, before now
		{at(8, 0), at(10, 0)},   // whole hours, ending now
		{at(8, 10), at(8, 50)},  // within one hour
		{at(7, 0), at(7, 30)},   // the start of an hour
		{at(9, 30), at(10, 0)},  // the end of an hour
		{at(10, 0), at(12, 0)},  // from now on
		{at(0, 0), at(23, 0)},   // everything
	} {
		from, to := w[0], w[1]
		var want locrisk.OpsSummary
		for _, j := range jobs {
			if in(j.created, from, to) {
				want.Jobs.Created++
			}
			if in(j.ended, from, to) {
				if j.failed {
					want.Jobs.Failed++
				} else {
					want.Jobs.Completed++
				}
			}
		}
		// The two batch jobs, and the two queued after them.
		for _, c := range []time.Time{at(8, 15), at(9, 40), at(9, 55), at(10, 0)} {
			if in(c, from, to) {
				want.Jobs.Created++
			}
		}
		if in(at(9, 10), from, to) {
			want.Jobs.Completed++
		}
		want.Jobs.Queued, want.Jobs.Processing = 2, 1
		for _, d := range deliveries {
			if in(d.created, from, to) {
				want.Webhooks.Deliveries++
			}
			switch {
			case d.outcome == locrisk.DeliverySucceeded && in(d.done, from, to):
				want.Webhooks.Succeeded++
			case d.outcome == locrisk.DeliveryFailed && in(d.done, from, to):
				want.Webhooks.Failed++
			}
		}
		want.Webhooks.Pending = 2
		for _, c := range []time.Time{at(8, 15), at(9, 40)} {
			if in(c, from, to) {
				want.Batches.Created++
			}
		}
		want.Batches.Processing = 1
		if in(at(9, 10), from, to) {
			want.Batches.Completed++
		}
		got, err := s.OpsSummary(ctx, a.ID, from, to, 0)
		if err != nil {
			t.Fatal(err)
		}
		g := got.Jobs
		g.CompletionP50, g.CompletionP95 = nil, nil
		if g != want.Jobs || got.Webhooks != want.Webhooks || got.Batches != want.Batches {
			t.Errorf("[%s, %s): jobs %+v, webhooks %+v, batches %+v\nwant           jobs %+v, webhooks %+v, batches %+v",
				from.Format("15:04"), to.Format("15:04"), g, got.Webhooks, got.Batches, want.Jobs, want.Webhooks, want.Batches)
		}
	}
}

// usageRetryMovesTheEnd: a failed job retried leaves the failed counts of
// the day and hour it failed in (usage history, period usage, the
// operations summary) and counts, once it ends again, in the day and hour
// of its new end; it stays created in the day it was created.
func usageRetryMovesTheEnd(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 100)
	day := func(d, hh, mm int) time.Time { return time.Date(2026, 11, d, hh, mm, 0, 0, time.UTC) }
	j := QueueJob(t, s, a.ID, locrisk.BucketAPI, day(20, 9, 0))
	ClaimJob(t, s, j.ID, day(20, 9, 0))
	if _, err := s.FailJob(ctx, j.ID, "tw", "generation_error", "try again", true, day(20, 10, 30)); err != nil {
		t.Fatal(err)
	}
	check := func(when string, history [3][3]int, period locrisk.PeriodUsage, ops map[time.Time][2]int) {
		t.Helper()
		got, err := s.UsageHistory(ctx, a.ID, day(20, 0, 0), 3, []string{locrisk.BucketAPI})
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range got {
			if w := history[i]; u.ReportJobs != w[0] || u.Completed != w[1] || u.Failed != w[2] {
				t.Errorf("%s: day %d: %+v, want created %d, completed %d, failed %d", when, 20+i, u, w[0], w[1], w[2])
			}
		}
		u, err := s.PeriodUsage(ctx, a.ID, t0)
		if err != nil {
			t.Fatal(err)
		}
		period.Limit, period.Start, period.End = 100, locrisk.MonthStart(t0), locrisk.NextMonthStart(t0)
		if fmt.Sprint(u) != fmt.Sprint(period) {
			t.Errorf("%s: PeriodUsage = %+v\nwant            %+v", when, u, period)
		}
		for hour, w := range ops {
			o, err := s.OpsSummary(ctx, a.ID, hour, hour.Add(time.Hour), 10)
			if err != nil {
				t.Fatal(err)
			}
			if o.Jobs.Completed != w[0] || o.Jobs.Failed != w[1] || len(o.RecentFailures) != w[1] {
				t.Errorf("%s: the hour at %s: %d completed, %d failed (%d recent failures), want %d and %d",
					when, hour.Format("02 15:04"), o.Jobs.Completed, o.Jobs.Failed, len(o.RecentFailures), w[0], w[1])
			}
		}
	}
	failedHour, endHour := day(20, 10, 0), day(22, 13, 0)
	check("failed", [3][3]int{{1, 0, 1}}, locrisk.PeriodUsage{Created: 1, Charged: 1, Failed: 1},
		map[time.Time][2]int{failedHour: {0, 1}, endHour: {0, 0}})

	if _, err := s.RetryJob(ctx, a.ID, j.ID, day(21, 8, 0)); err != nil {
		t.Fatal(err)
	}
	check("retried", [3][3]int{{1, 0, 0}}, locrisk.PeriodUsage{Created: 1, Charged: 1, Queued: 1},
		map[time.Time][2]int{failedHour: {0, 0}, endHour: {0, 0}})

	ClaimJob(t, s, j.ID, day(22, 13, 0))
	check("processing", [3][3]int{{1, 0, 0}}, locrisk.PeriodUsage{Created: 1, Charged: 1, Processing: 1},
		map[time.Time][2]int{failedHour: {0, 0}, endHour: {0, 0}})
	if _, err := s.CompleteJob(ctx, j.ID, "tw", locrisk.Report{DataVersion: "v", Body: []byte(`{}`)}, day(22, 13, 15)); err != nil {
		t.Fatal(err)
	}
	check("completed", [3][3]int{{1, 0, 0}, {0, 0, 0}, {0, 1, 0}}, locrisk.PeriodUsage{Created: 1, Charged: 1, Completed: 1},
		map[time.Time][2]int{failedHour: {0, 0}, endHour: {1, 0}})
}

// queueDepth: the queue's depth follows jobs through creation, claims,
// requeues, ends and retries, over several accounts: the queued and the
// processing jobs, and the earliest run_after_utc of the queued ones;
// and the pending webhook deliveries.
func queueDepth(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	check := func(when string, want locrisk.QueueDepth) {
		t.Helper()
		d, err := s.QueueDepth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if d.JobsQueued != want.JobsQueued || d.JobsProcessing != want.JobsProcessing ||
			!d.OldestRunnable.Equal(want.OldestRunnable) || d.DeliveriesQueued != want.DeliveriesQueued {
			t.Errorf("%s: depth %+v, want %+v", when, d, want)
		}
	}
	check("empty", locrisk.QueueDepth{})
	a, b := newAccount(t, s, 100), newAccount(t, s, 100)
	a1 := QueueJob(t, s, a.ID, locrisk.BucketAPI, t0)
	QueueJob(t, s, a.ID, locrisk.BucketBulk, t0.Add(time.Minute))
	QueueJob(t, s, a.ID, locrisk.BucketAPI, t0.Add(2*time.Minute))
	b1 := QueueJob(t, s, b.ID, locrisk.BucketAPI, t0.Add(-30*time.Minute))
	check("created", locrisk.QueueDepth{JobsQueued: 4, OldestRunnable: t0.Add(-30 * time.Minute)})

	ClaimJob(t, s, b1.ID, t0)
	check("b's claimed", locrisk.QueueDepth{JobsQueued: 3, JobsProcessing: 1, OldestRunnable: t0})
	if err := s.RetryLater(ctx, b1.ID, "tw", t0.Add(time.Hour), "engine_busy", "later", t0); err != nil {
		t.Fatal(err)
	}
	check("b's put back for an hour", locrisk.QueueDepth{JobsQueued: 4, OldestRunnable: t0})

	ClaimJob(t, s, a1.ID, t0)
	if _, err := s.FailJob(ctx, a1.ID, "tw", "generation_error", "boom", true, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	check("a's first failed", locrisk.QueueDepth{JobsQueued: 3, OldestRunnable: t0.Add(time.Minute)})
	if _, err := s.RetryJob(ctx, a.ID, a1.ID, t0.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	check("a's first retried", locrisk.QueueDepth{JobsQueued: 4, OldestRunnable: t0.Add(-time.Hour)})

	// Claimed at once, not through ClaimJob, which puts back what it
	// claims on the way, runnable from then.
	if _, _, err := s.ClaimJob(ctx, "w", time.Hour, t0); err != nil {
		t.Fatal(err)
	}
	if j, err := s.GetJob(ctx, a.ID, a1.ID); err != nil || j.Status != locrisk.StatusProcessing {
		t.Fatalf("the claim took another job than the only runnable one (%v)", err)
	}
	check("a's first claimed", locrisk.QueueDepth{JobsQueued: 3, JobsProcessing: 1, OldestRunnable: t0.Add(time.Minute)})
	if _, err := s.CompleteJob(ctx, a1.ID, "w", locrisk.Report{DataVersion: "v", Body: []byte(`{}`)}, t0); err != nil {
		t.Fatal(err)
	}
	check("a's first completed", locrisk.QueueDepth{JobsQueued: 3, OldestRunnable: t0.Add(time.Minute)})

	ep := newEndpoint(t, s, b.ID, t0)
	for range 2 {
		if _, err := s.QueueTestWebhook(ctx, b.ID, ep.ID, testEvent(t0)); err != nil {
			t.Fatal(err)
		}
	}
	check("two deliveries", locrisk.QueueDepth{JobsQueued: 3, OldestRunnable: t0.Add(time.Minute), DeliveriesQueued: 2})
	// The batch's job and the account with nothing queued now.
	if _, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: b.ID, Items: []locrisk.NewBatchItem{
		validItem("v", 30, -90), rejectedItem("r", "invalid_latitude", nil, nil)}}, t0.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	check("a batch", locrisk.QueueDepth{JobsQueued: 4, OldestRunnable: t0.Add(-2 * time.Hour), DeliveriesQueued: 2})
}
