package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

var jobTests = []test{
	{"CreateAndGet", createAndGetJob},
	{"QuotaMonthRollover", quotaMonthRollover},
	{"Idempotency", idempotency},
	{"ListPaging", listJobsPaging},
	{"ListBadCursor", listJobsBadCursor},
	{"CursorFormat", cursorFormat},
	{"Retry", retryJob},
}

var queueTests = []test{
	{"ClaimCompleteAndLeaseExpiry", claimCompleteAndLeaseExpiry},
	{"RetryLaterAndRelease", retryLaterAndRelease},
	{"ClaimOrder", claimOrder},
	{"ClaimExpiredLeaseAndBackoff", claimExpiredLeaseAndBackoff},
	{"JobFinalHooks", jobFinalHooks},
}

func createAndGetJob(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a, b := newAccount(t, s, 10), newAccount(t, s, 10)
	j, replayed, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: a.ID, Latitude: 41.88, Longitude: -87.63}, t0.Add(123456*time.Microsecond))
	if err != nil || replayed {
		t.Fatalf("CreateJob = %v, %v", replayed, err)
	}
	want := locrisk.Job{ID: j.ID, AccountID: a.ID, Bucket: locrisk.BucketAPI, Latitude: 41.88, Longitude: -87.63, Status: locrisk.StatusQueued,
		RunAfterUTC: t0.Add(123 * time.Millisecond), CreatedUTC: t0.Add(123 * time.Millisecond), UpdatedUTC: t0.Add(123 * time.Millisecond)}
	if fmt.Sprint(j) != fmt.Sprint(want) {
		t.Errorf("created %+v\nwant      %+v", j, want)
	}
	got, err := s.GetJob(ctx, a.ID, j.ID)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("GetJob = %+v, %v", got, err)
	}
	if _, err := s.GetJob(ctx, b.ID, j.ID); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("GetJob by another account: %v, want ErrNotFound", err)
	}
	if _, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: "acct_nope"}, t0); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("CreateJob for unknown account: %v, want ErrNotFound", err)
	}
	if _, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: a.ID, Bucket: "vip"}, t0); !errors.Is(err, locrisk.ErrInvalid) {
		t.Errorf("CreateJob with unknown bucket: %v, want ErrInvalid", err)
	}
}

func quotaMonthRollover(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 2)
	endOfNov := time.Date(2026, 11, 30, 23, 59, 59, 999_000_000, time.UTC)
	steps := []struct {
		at      time.Time
		bucket  string
		wantErr bool
	}{
		{time.Date(2026, 10, 31, 23, 0, 0, 0, time.UTC), locrisk.BucketAPI, false}, // October: its own period
		{time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), locrisk.BucketAPI, false},   // first instant of November
		{t0, locrisk.BucketManual, false},                                          // every bucket counts
		{endOfNov, locrisk.BucketBulk, true},                                       // November is full
		{time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), locrisk.BucketAPI, false},   // December starts afresh
		{time.Date(2026, 12, 15, 0, 0, 0, 0, time.UTC), locrisk.BucketAPI, false},
		{time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), locrisk.BucketAPI, true},
	}
	for i, st := range steps {
		_, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: a.ID, Bucket: st.bucket}, st.at)
		if st.wantErr {
			var qe *locrisk.QuotaError
			if !errors.As(err, &qe) {
				t.Errorf("step %d at %v: err = %v, want *QuotaError", i, st.at, err)
				continue
			}
			if want := locrisk.NextMonthStart(st.at); !qe.ResetsAt.Equal(want) {
				t.Errorf("step %d: resets at %v, want %v", i, qe.ResetsAt, want)
			}
		} else if err != nil {
			t.Errorf("step %d at %v: %v", i, st.at, err)
		}
	}
	u, err := s.PeriodUsage(ctx, a.ID, t0)
	if err != nil || u.Limit != 2 || u.Created != 2 || !u.Start.Equal(locrisk.MonthStart(t0)) || !u.End.Equal(locrisk.NextMonthStart(t0)) {
		t.Errorf("PeriodUsage(November) = %+v, %v; want 2 of 2 used in November", u, err)
	}
}

func idempotency(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a, b := newAccount(t, s, 3), newAccount(t, s, 3)
	nj := func(acct, key, hash string) locrisk.NewJob {
		j := apiJob(acct)
		j.IdempotencyKey, j.RequestHash = key, hash
		return j
	}
	first, replayed, err := s.CreateJob(ctx, nj(a.ID, "k1", "h1"), t0)
	if err != nil || replayed {
		t.Fatalf("first create: %v %v", replayed, err)
	}
	steps := []struct {
		name         string
		j            locrisk.NewJob
		at           time.Time
		wantErr      error
		wantReplay   bool
		wantSameJob  bool
		wantJobCount int // jobs of account a afterwards
	}{
		{"replay", nj(a.ID, "k1", "h1"), t0.Add(time.Minute), nil, true, true, 1},
		{"conflict", nj(a.ID, "k1", "h2"), t0.Add(time.Minute), locrisk.ErrIdempotencyConflict, false, false, 1},
		{"replay just before 24h", nj(a.ID, "k1", "h1"), t0.Add(locrisk.IdempotencyTTL - time.Millisecond), nil, true, true, 1},
		{"other key", nj(a.ID, "k2", "h1"), t0.Add(time.Hour), nil, false, false, 2},
		{"other account same key", nj(b.ID, "k1", "h1"), t0.Add(time.Hour), nil, false, false, 2},
		{"expired key with other payload is fresh", nj(a.ID, "k1", "h2"), t0.Add(locrisk.IdempotencyTTL), nil, false, false, 3},
		{"the new key is now live", nj(a.ID, "k1", "h1"), t0.Add(locrisk.IdempotencyTTL + time.Second), locrisk.ErrIdempotencyConflict, false, false, 3},
	}
	for _, st := range steps {
		j, replayed, err := s.CreateJob(ctx, st.j, st.at)
		if st.wantErr != nil {
			if !errors.Is(err, st.wantErr) {
				t.Errorf("%s: err = %v, want %v", st.name, err, st.wantErr)
			}
		} else if err != nil {
			t.Errorf("%s: %v", st.name, err)
		}
		if replayed != st.wantReplay {
			t.Errorf("%s: replayed = %v, want %v", st.name, replayed, st.wantReplay)
		}
		if st.wantSameJob && j.ID != first.ID {
			t.Errorf("%s: job %s, want the original %s", st.name, j.ID, first.ID)
		}
		if !st.wantSameJob && err == nil && j.ID == first.ID {
			t.Errorf("%s: got the original job", st.name)
		}
		if n := len(listJobs(t, s, a.ID, "")); n != st.wantJobCount {
			t.Errorf("%s: account has %d jobs, want %d", st.name, n, st.wantJobCount)
		}
	}
	// locrisk.Account a has used its quota of 3; a replay still answers, a new key is refused.
	if _, replayed, err := s.CreateJob(ctx, nj(a.ID, "k2", "h1"), t0.Add(locrisk.IdempotencyTTL)); err != nil || !replayed {
		t.Errorf("replay at full quota: replayed %v, err %v", replayed, err)
	}
	if _, _, err := s.CreateJob(ctx, nj(a.ID, "k3", "h1"), t0.Add(locrisk.IdempotencyTTL)); !errors.Is(err, locrisk.ErrQuotaExceeded) {
		t.Errorf("new key at full quota: %v, want ErrQuotaExceeded", err)
	}
	// A replay shows the job as it stands now, not as it was created.
	for {
		if _, ok, err := s.ClaimJob(ctx, "w", time.Minute, t0.Add(48*time.Hour)); err != nil {
			t.Fatal(err)
		} else if !ok {
			break
		}
	}
	if j, replayed, err := s.CreateJob(ctx, nj(a.ID, "k1", "h2"), t0.Add(locrisk.IdempotencyTTL+time.Hour)); err != nil || !replayed || j.Status != locrisk.StatusProcessing {
		t.Errorf("replay after the job started: status %q replayed %v err %v", j.Status, replayed, err)
	}
	// The purge forgets expired keys whatever the retention (here off).
	if c, err := s.Purge(ctx, locrisk.PurgePolicy{Now: t0.Add(locrisk.IdempotencyTTL + time.Hour)}); err != nil || c.IdempotencyKeys != 2 || c.Total() != 2 {
		t.Errorf("purge removed %+v (err %v), want the 2 keys from t0+1h and before", c, err)
	}
}

func listJobsPaging(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a, b := newAccount(t, s, 100), newAccount(t, s, 100)
	// 25 jobs for a; jobs 10..14 share one creation time, so the id decides
	// their order. b's jobs are interleaved and must never show. Jobs 7 and
	// 21 are failed, for the status filter: they are created first and
	// failed while alone in the queue.
	at := func(i int) time.Time {
		if i >= 10 && i < 15 {
			return t0.Add(10 * time.Second)
		}
		return t0.Add(time.Duration(i) * time.Second)
	}
	var all []locrisk.Job
	for _, i := range []int{7, 21} {
		j, _, err := s.CreateJob(ctx, apiJob(a.ID), at(i))
		if err != nil {
			t.Fatal(err)
		}
		if c, ok, err := s.ClaimJob(ctx, "w", time.Minute, t0.Add(time.Minute)); err != nil || !ok || c.ID != j.ID {
			t.Fatalf("claim %s: %s %v %v", j.ID, c.ID, ok, err)
		}
		if _, err := s.FailJob(ctx, j.ID, "w", "generation_error", "failed", false, t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		all = append(all, j)
	}
	for i := range 25 {
		if i != 7 && i != 21 {
			j, _, err := s.CreateJob(ctx, apiJob(a.ID), at(i))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, j)
		}
		if _, _, err := s.CreateJob(ctx, apiJob(b.ID), at(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Newest first: created DESC, id DESC.
	slices.SortFunc(all, func(x, y locrisk.Job) int {
		if c := y.CreatedUTC.Compare(x.CreatedUTC); c != 0 {
			return c
		}
		return -strings.Compare(x.ID, y.ID)
	})

	tests := []struct {
		limit     int
		status    string
		wantPages []int
	}{
		{10, "", []int{10, 10, 5}},
		{25, "", []int{25}},
		{24, "", []int{24, 1}},
		{100, "", []int{25}},
		{7, "", []int{7, 7, 7, 4}},
		{1, "failed", []int{1, 1}},
		{20, "queued", []int{20, 3}},
		{20, "completed", []int{0}},
	}
	for _, tt := range tests {
		var got []locrisk.Job
		var sizes []int
		cursor := ""
		for page := 0; page < 50; page++ {
			jobs, next, err := s.ListJobs(ctx, a.ID, tt.status, tt.limit, cursor)
			if err != nil {
				t.Fatalf("limit %d status %q: %v", tt.limit, tt.status, err)
			}
			sizes = append(sizes, len(jobs))
			got = append(got, jobs...)
			if next == "" {
				break
			}
			cursor = next
		}
		if !slices.Equal(sizes, tt.wantPages) {
			t.Errorf("limit %d status %q: pages %v, want %v", tt.limit, tt.status, sizes, tt.wantPages)
		}
		var want []string
		for _, j := range all {
			if cur, _ := s.GetJob(ctx, a.ID, j.ID); tt.status == "" || cur.Status == tt.status {
				want = append(want, j.ID)
			}
		}
		var gotIDs []string
		for _, j := range got {
			gotIDs = append(gotIDs, j.ID)
			if j.AccountID != a.ID {
				t.Errorf("listed another account's job %s", j.ID)
			}
		}
		if !slices.Equal(gotIDs, want) {
			t.Errorf("limit %d status %q: order\n got %v\nwant %v", tt.limit, tt.status, gotIDs, want)
		}
	}
	if _, _, err := s.ListJobs(ctx, a.ID, "done", 10, ""); !errors.Is(err, locrisk.ErrInvalid) {
		t.Errorf("unknown status: %v, want ErrInvalid", err)
	}
}

func listJobsBadCursor(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 10)
	for range 3 {
		if _, _, err := s.CreateJob(ctx, apiJob(a.ID), t0); err != nil {
			t.Fatal(err)
		}
	}
	_, good, err := s.ListJobs(ctx, a.ID, "", 2, "")
	if err != nil || good == "" {
		t.Fatalf("first page: next %q, %v", good, err)
	}
	if page, next, err := s.ListJobs(ctx, a.ID, "", 2, good); err != nil || len(page) != 1 || next != "" {
		t.Fatalf("second page: %d jobs, next %q, %v; want the last job", len(page), next, err)
	}
	for _, c := range []string{"!!!", good + "=", good[:len(good)/2], "job_0123456789abcdefghijKLMN", "' OR 1=1 --"} {
		if _, _, err := s.ListJobs(ctx, a.ID, "", 10, c); !errors.Is(err, locrisk.ErrBadCursor) {
			t.Errorf("cursor %q: err = %v, want ErrBadCursor", c, err)
		}
	}
}

// retryJob: only a failed job with a transient error is retried, by its
// own account, using no quota; each case has a store of its own.
func retryJob(t testing.TB, h Harness) {
	ctx := context.Background()
	tests := []struct {
		status    string
		transient bool
		byOwner   bool
		wantErr   error
	}{
		{locrisk.StatusQueued, false, true, locrisk.ErrNotRetryable},
		{locrisk.StatusProcessing, false, true, locrisk.ErrNotRetryable},
		{locrisk.StatusCompleted, false, true, locrisk.ErrNotRetryable},
		{locrisk.StatusFailed, false, true, locrisk.ErrNotRetryable},
		{locrisk.StatusFailed, true, false, locrisk.ErrNotFound},
		{locrisk.StatusFailed, true, true, nil},
	}
	for _, tt := range tests {
		s := h.open(t)
		a, b := newAccount(t, s, 10), newAccount(t, s, 10)
		j := makeJob(t, s, a.ID, tt.status, tt.transient)
		account := map[bool]string{true: a.ID, false: b.ID}[tt.byOwner]
		got, err := s.RetryJob(ctx, account, j.ID, t0.Add(time.Hour))
		name := fmt.Sprintf("%s transient=%v by %s", tt.status, tt.transient, map[bool]string{true: "owner", false: "other"}[tt.byOwner])
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("%s: err = %v, want %v", name, err, tt.wantErr)
			}
			if cur, _ := s.GetJob(ctx, a.ID, j.ID); cur.Status != tt.status {
				t.Errorf("%s: status changed to %s", name, cur.Status)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Status != locrisk.StatusQueued || got.Attempts != 1 || got.ErrorCode != nil || got.ErrorTransient != nil ||
			got.CompletedUTC != nil || !got.RunAfterUTC.Equal(t0.Add(time.Hour)) {
			t.Errorf("%s: retried job %+v", name, got)
		}
		if n := len(listJobs(t, s, a.ID, "")); n != 1 {
			t.Errorf("%s: %d jobs after the retry, want the one", name, n)
		}
		if u, err := s.PeriodUsage(ctx, a.ID, t0); err != nil || u.Created != 1 {
			t.Errorf("%s: quota used %d (%v), want 1: retries use none", name, u.Created, err)
		}
		// The retried job runs again and its attempts keep counting.
		c, ok, err := s.ClaimJob(ctx, "w2", time.Minute, t0.Add(time.Hour))
		if err != nil || !ok || c.ID != j.ID || c.Attempts != 2 {
			t.Errorf("%s: claim after retry = %s attempts %d ok %v err %v", name, c.ID, c.Attempts, ok, err)
		}
		if _, err := s.RetryJob(ctx, a.ID, j.ID, t0.Add(time.Hour)); !errors.Is(err, locrisk.ErrNotRetryable) {
			t.Errorf("%s: retry of the now processing job: %v", name, err)
		}
		if _, err := s.RetryJob(ctx, a.ID, "job_unknown", t0); !errors.Is(err, locrisk.ErrNotFound) {
			t.Errorf("retry unknown: %v", err)
		}
	}
}

func claimCompleteAndLeaseExpiry(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a, b := newAccount(t, s, 10), newAccount(t, s, 10)
	lease := 30 * time.Second

	if _, ok, err := s.ClaimJob(ctx, "w1", lease, t0); err != nil || ok {
		t.Fatalf("claim on an empty queue: ok %v err %v", ok, err)
	}
	j, _, _ := s.CreateJob(ctx, apiJob(a.ID), t0)
	c, ok, err := s.ClaimJob(ctx, "w1", lease, t0)
	if err != nil || !ok || c.ID != j.ID || c.Status != locrisk.StatusProcessing || c.Attempts != 1 || c.Reclaimed {
		t.Fatalf("claim = %+v %v %v", c, ok, err)
	}
	if _, ok, _ := s.ClaimJob(ctx, "w2", lease, t0.Add(lease)); ok {
		t.Fatal("a job was claimed while its lease was live")
	}
	// The lease lapses (worker w1 died): w2 claims it again.
	c2, ok, err := s.ClaimJob(ctx, "w2", lease, t0.Add(lease+time.Millisecond))
	if err != nil || !ok || c2.ID != j.ID || c2.Attempts != 2 || !c2.Reclaimed {
		t.Fatalf("reclaim = %+v %v %v; want attempt 2, Reclaimed", c2, ok, err)
	}
	// w1 comes back and tries to finish: lease lost, nothing written.
	for name, call := range map[string]func() error{
		"complete": func() error {
			_, err := s.CompleteJob(ctx, j.ID, "w1", locrisk.Report{DataVersion: "v1", Body: []byte(`{"x":1}`)}, t0)
			return err
		},
		"fail":        func() error { _, err := s.FailJob(ctx, j.ID, "w1", "c", "m", true, t0); return err },
		"retry later": func() error { return s.RetryLater(ctx, j.ID, "w1", t0, "c", "m", t0) },
		"release":     func() error { return s.ReleaseJob(ctx, j.ID, "w1", t0) },
	} {
		if err := call(); !errors.Is(err, locrisk.ErrLeaseLost) {
			t.Errorf("%s by the old owner: %v, want ErrLeaseLost", name, err)
		}
	}
	if cur, err := s.GetJob(ctx, a.ID, j.ID); err != nil || cur.Status != locrisk.StatusProcessing || cur.ReportID != nil || cur.Attempts != 2 {
		t.Fatalf("after the old owner's attempts: %+v, %v; want still processing for w2, no report", cur, err)
	}
	done, err := s.CompleteJob(ctx, j.ID, "w2", locrisk.Report{DataVersion: "v1", Body: []byte(`{"x":2}`)}, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != locrisk.StatusCompleted || done.ReportID == nil || done.CompletedUTC == nil || !done.CompletedUTC.Equal(t0.Add(time.Minute)) {
		t.Errorf("completed job %+v", done)
	}
	// Completing again, by anyone, changes nothing.
	if _, err := s.CompleteJob(ctx, j.ID, "w2", locrisk.Report{DataVersion: "v1", Body: []byte(`{}`)}, t0); !errors.Is(err, locrisk.ErrLeaseLost) {
		t.Errorf("second complete: %v", err)
	}
	if _, ok, _ := s.ClaimJob(ctx, "w3", lease, t0.Add(24*time.Hour)); ok {
		t.Error("a completed job was claimed")
	}
	if cur, _ := s.GetJob(ctx, a.ID, j.ID); cur.ReportID == nil || *cur.ReportID != *done.ReportID {
		t.Errorf("the job's report changed to %v after a refused completion, want %s", cur.ReportID, *done.ReportID)
	}
	r, err := s.GetReport(ctx, a.ID, *done.ReportID)
	if err != nil {
		t.Fatal(err)
	}
	if r.JobID != j.ID || r.AccountID != a.ID || string(r.Body) != `{"x":2}` || r.DataVersion != "v1" || !r.GeneratedUTC.Equal(t0.Add(time.Minute)) {
		t.Errorf("report %+v", r)
	}
	if _, err := s.GetReport(ctx, b.ID, r.ID); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("GetReport by another account: %v", err)
	}
	if _, err := s.GetReport(ctx, a.ID, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("GetReport unknown: %v", err)
	}
}

func retryLaterAndRelease(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 10)
	j, _, _ := s.CreateJob(ctx, apiJob(a.ID), t0)
	c, _, _ := s.ClaimJob(ctx, "w", time.Minute, t0)
	if err := s.RetryLater(ctx, c.ID, "w", t0.Add(400*time.Millisecond), "generation_failed", "try again", t0); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetJob(ctx, a.ID, j.ID)
	if got.Status != locrisk.StatusQueued || got.Attempts != 1 || got.ErrorCode == nil || *got.ErrorCode != "generation_failed" ||
		got.ErrorTransient == nil || !*got.ErrorTransient || !got.RunAfterUTC.Equal(t0.Add(400*time.Millisecond)) {
		t.Errorf("after RetryLater: %+v", got)
	}
	if _, ok, _ := s.ClaimJob(ctx, "w", time.Minute, t0.Add(399*time.Millisecond)); ok {
		t.Error("claimed before run_after")
	}
	c, ok, _ := s.ClaimJob(ctx, "w", time.Minute, t0.Add(400*time.Millisecond))
	if !ok || c.Attempts != 2 {
		t.Fatalf("claim at run_after: ok %v attempts %d", ok, c.Attempts)
	}
	if err := s.ReleaseJob(ctx, c.ID, "w", t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetJob(ctx, a.ID, j.ID)
	if got.Status != locrisk.StatusQueued || got.Attempts != 1 || !got.RunAfterUTC.Equal(t0.Add(time.Second)) {
		t.Errorf("after release: %+v (the released attempt must not count)", got)
	}
	c, _, _ = s.ClaimJob(ctx, "w", time.Minute, t0.Add(time.Second))
	f, err := s.FailJob(ctx, c.ID, "w", "unsupported_location", "outside coverage", false, t0.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if f.Status != locrisk.StatusFailed || f.Attempts != 2 || *f.ErrorCode != "unsupported_location" || *f.ErrorTransient ||
		f.CompletedUTC == nil || f.ReportID != nil {
		t.Errorf("failed job %+v", f)
	}
}

// Claims go to the job that has waited longest (run_after, then creation).
func claimOrder(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 10)
	var want []string
	for i := range 4 {
		j, _, _ := s.CreateJob(ctx, apiJob(a.ID), t0.Add(time.Duration(i)*time.Second))
		want = append(want, j.ID)
	}
	// The oldest job is pushed back behind the others.
	c, _, _ := s.ClaimJob(ctx, "w", time.Minute, t0.Add(10*time.Second))
	if err := s.RetryLater(ctx, c.ID, "w", t0.Add(20*time.Second), "x", "y", t0.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	want = append(want[1:], want[0])
	var got []string
	for range 4 {
		c, ok, err := s.ClaimJob(ctx, "w", time.Minute, t0.Add(time.Minute))
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		got = append(got, c.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("claim order %v, want %v", got, want)
	}
}

// An expired lease is taken over before any queued job, and a job waiting
// out its retry backoff lets the other accounts' jobs (and its own
// account's runnable ones) go first.
func claimExpiredLeaseAndBackoff(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a, b := newAccount(t, s, 100), newAccount(t, s, 100)
	dead, _, _ := s.CreateJob(ctx, apiJob(a.ID), t0)
	if c, _, _ := s.ClaimJob(ctx, "dead", time.Second, t0); c.ID != dead.ID {
		t.Fatalf("claimed %s", c.ID)
	}
	backoff, _, _ := s.CreateJob(ctx, apiJob(b.ID), t0)
	if c, _, _ := s.ClaimJob(ctx, "w", time.Minute, t0); c.ID != backoff.ID {
		t.Fatalf("claimed %s", c.ID)
	}
	if err := s.RetryLater(ctx, backoff.ID, "w", t0.Add(10*time.Second), "generation_failed", "later", t0); err != nil {
		t.Fatal(err)
	}
	later, _, _ := s.CreateJob(ctx, apiJob(b.ID), t0.Add(time.Millisecond))
	for range 3 {
		if _, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: a.ID, Bucket: locrisk.BucketBulk, Latitude: 30, Longitude: -90}, t0.Add(2*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	at := t0.Add(2 * time.Second) // the lease has expired, the backoff has not
	c, ok, err := s.ClaimJob(ctx, "w2", time.Minute, at)
	if err != nil || !ok || c.ID != dead.ID || !c.Reclaimed || c.Attempts != 2 {
		t.Fatalf("first claim after the lease ran out: %+v %v %v; want the takeover of %s", c, ok, err, dead.ID)
	}
	c, _, _ = s.ClaimJob(ctx, "w2", time.Minute, at)
	if c.ID != later.ID || c.Reclaimed {
		t.Errorf("second claim took %s, want %s (b's runnable job, past its job in backoff)", c.ID, later.ID)
	}
	for range 3 {
		if c, ok, _ := s.ClaimJob(ctx, "w2", time.Minute, at); !ok || c.AccountID != a.ID {
			t.Fatalf("claim took %v %v, want a's queued jobs", c.AccountID, ok)
		}
	}
	if _, ok, _ := s.ClaimJob(ctx, "w2", time.Minute, at); ok {
		t.Error("a job in backoff was claimed before its run_after")
	}
	if c, ok, _ := s.ClaimJob(ctx, "w2", time.Minute, t0.Add(10*time.Second)); !ok || c.ID != backoff.ID || c.Attempts != 2 {
		t.Errorf("at run_after the claim took %v %v", c.ID, ok)
	}
}

// jobFinalHooks: the hooks run inside the final transition of every job,
// completed or failed, and see the job as it now stands; a hook's failure
// rolls the transition back, so the job stays with its worker and gets no
// report.
func jobFinalHooks(t testing.TB, h Harness) {
	var mu sync.Mutex
	var calls []string
	fail := false
	hook := func(ctx context.Context, tx locrisk.Tx, job locrisk.Job) error {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, job.Status)
		if _, ok := tx.CompletedBatch(); ok {
			calls = append(calls, "batch")
		}
		if fail {
			return errors.New("outbox full")
		}
		return nil
	}
	s := h.Open(t, Config{Now: func() time.Time { return t0 }, OnJobFinal: []locrisk.JobFinalHook{hook}})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	makeJob(t, s, a.ID, locrisk.StatusCompleted, false)
	makeJob(t, s, a.ID, locrisk.StatusFailed, true)
	if want := []string{locrisk.StatusCompleted, locrisk.StatusFailed}; !slices.Equal(calls, want) {
		t.Errorf("hook calls %v, want %v", calls, want)
	}
	fail = true
	j := makeJob(t, s, a.ID, locrisk.StatusProcessing, false)
	if _, err := s.CompleteJob(ctx, j.ID, "w", locrisk.Report{Body: []byte("{}")}, t0); err == nil {
		t.Fatal("complete succeeded although its hook failed")
	}
	if _, err := s.FailJob(ctx, j.ID, "w", "generation_error", "failed", false, t0); err == nil {
		t.Fatal("fail succeeded although its hook failed")
	}
	got, err := s.GetJob(ctx, a.ID, j.ID)
	if err != nil || got.Status != locrisk.StatusProcessing || got.ReportID != nil || got.CompletedUTC != nil {
		t.Errorf("after a failed hook: %+v, %v; want still processing, no report", got, err)
	}
	fail = false
	if done, err := s.CompleteJob(ctx, j.ID, "w", locrisk.Report{Body: []byte("{}")}, t0); err != nil || done.Status != locrisk.StatusCompleted {
		t.Errorf("complete once the hook works again: %+v, %v", done, err)
	}
}
