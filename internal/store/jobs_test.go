package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk/internal/ids"
)

func apiJob(acct string) NewJob {
	return NewJob{AccountID: acct, Bucket: BucketAPI, Latitude: 37.77, Longitude: -122.42}
}

func countRows(t testing.TB, s *Store, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.db.GetContext(context.Background(), &n, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func TestCreateAndGetJob(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a, b := newAccount(t, s, 10), newAccount(t, s, 10)
	j, replayed, err := s.CreateJob(ctx, NewJob{AccountID: a.ID, Latitude: 41.88, Longitude: -87.63}, t0.Add(123456*time.Microsecond))
	if err != nil || replayed {
		t.Fatalf("CreateJob = %v, %v", replayed, err)
	}
	want := Job{ID: j.ID, AccountID: a.ID, Bucket: BucketAPI, Latitude: 41.88, Longitude: -87.63, Status: StatusQueued,
		RunAfterUTC: t0.Add(123 * time.Millisecond), CreatedUTC: t0.Add(123 * time.Millisecond), UpdatedUTC: t0.Add(123 * time.Millisecond)}
	if fmt.Sprint(j) != fmt.Sprint(want) {
		t.Errorf("created %+v\nwant      %+v", j, want)
	}
	got, err := s.GetJob(ctx, a.ID, j.ID)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("GetJob = %+v, %v", got, err)
	}
	if _, err := s.GetJob(ctx, b.ID, j.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetJob by another account: %v, want ErrNotFound", err)
	}
	if _, _, err := s.CreateJob(ctx, NewJob{AccountID: "acct_nope"}, t0); !errors.Is(err, ErrNotFound) {
		t.Errorf("CreateJob for unknown account: %v, want ErrNotFound", err)
	}
	if _, _, err := s.CreateJob(ctx, NewJob{AccountID: a.ID, Bucket: "vip"}, t0); !errors.Is(err, ErrInvalid) {
		t.Errorf("CreateJob with unknown bucket: %v, want ErrInvalid", err)
	}
}

func TestQuotaExactUnderConcurrency(t *testing.T) {
	s := newStore(t, Options{})
	a := newAccount(t, s, 10)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ok, over int
	var other []error
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := s.CreateJob(context.Background(), apiJob(a.ID), t0)
			mu.Lock()
			defer mu.Unlock()
			var qe *QuotaError
			switch {
			case err == nil:
				ok++
			case errors.As(err, &qe) && errors.Is(err, ErrQuotaExceeded):
				over++
				if qe.Limit != 10 || qe.Used != 10 || !qe.ResetsAt.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
					other = append(other, fmt.Errorf("quota error %+v", qe))
				}
			default:
				other = append(other, err)
			}
		}()
	}
	wg.Wait()
	if ok != 10 || over != 40 || len(other) > 0 {
		t.Errorf("50 concurrent creates against quota 10: %d created, %d over quota, other errors %v", ok, over, other)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM report_jobs`); n != 10 {
		t.Errorf("%d jobs stored, want 10", n)
	}
}

func TestQuotaMonthRollover(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 2)
	endOfNov := time.Date(2026, 11, 30, 23, 59, 59, 999_000_000, time.UTC)
	steps := []struct {
		at      time.Time
		bucket  string
		wantErr bool
	}{
		{time.Date(2026, 10, 31, 23, 0, 0, 0, time.UTC), BucketAPI, false}, // October: its own period
		{time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), BucketAPI, false},   // first instant of November
		{t0, BucketManual, false},                                        // every bucket counts
		{endOfNov, BucketBulk, true},                                     // November is full
		{time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), BucketAPI, false}, // December starts afresh
		{time.Date(2026, 12, 15, 0, 0, 0, 0, time.UTC), BucketAPI, false},
		{time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), BucketAPI, true},
	}
	for i, st := range steps {
		_, _, err := s.CreateJob(ctx, NewJob{AccountID: a.ID, Bucket: st.bucket}, st.at)
		if st.wantErr {
			var qe *QuotaError
			if !errors.As(err, &qe) {
				t.Errorf("step %d at %v: err = %v, want *QuotaError", i, st.at, err)
				continue
			}
			if want := NextMonthStart(st.at); !qe.ResetsAt.Equal(want) {
				t.Errorf("step %d: resets at %v, want %v", i, qe.ResetsAt, want)
			}
		} else if err != nil {
			t.Errorf("step %d at %v: %v", i, st.at, err)
		}
	}
	limit, used, err := quotaUsage(ctx, s.db, a.ID, t0)
	if err != nil || limit != 2 || used != 2 {
		t.Errorf("QuotaUsage(November) = %d, %d, %v; want 2, 2", limit, used, err)
	}
}

func TestIdempotency(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a, b := newAccount(t, s, 3), newAccount(t, s, 3)
	nj := func(acct, key, hash string) NewJob {
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
		j            NewJob
		at           time.Time
		wantErr      error
		wantReplay   bool
		wantSameJob  bool
		wantJobCount int // jobs of account a afterwards
	}{
		{"replay", nj(a.ID, "k1", "h1"), t0.Add(time.Minute), nil, true, true, 1},
		{"conflict", nj(a.ID, "k1", "h2"), t0.Add(time.Minute), ErrIdempotencyConflict, false, false, 1},
		{"replay just before 24h", nj(a.ID, "k1", "h1"), t0.Add(IdempotencyTTL - time.Millisecond), nil, true, true, 1},
		{"other key", nj(a.ID, "k2", "h1"), t0.Add(time.Hour), nil, false, false, 2},
		{"other account same key", nj(b.ID, "k1", "h1"), t0.Add(time.Hour), nil, false, false, 2},
		{"expired key with other payload is fresh", nj(a.ID, "k1", "h2"), t0.Add(IdempotencyTTL), nil, false, false, 3},
		{"the new key is now live", nj(a.ID, "k1", "h1"), t0.Add(IdempotencyTTL + time.Second), ErrIdempotencyConflict, false, false, 3},
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
		if n := countRows(t, s, `SELECT COUNT(*) FROM report_jobs WHERE account_id = ?`, a.ID); n != st.wantJobCount {
			t.Errorf("%s: account has %d jobs, want %d", st.name, n, st.wantJobCount)
		}
	}
	// Account a has used its quota of 3; a replay still answers, a new key is refused.
	if _, replayed, err := s.CreateJob(ctx, nj(a.ID, "k2", "h1"), t0.Add(IdempotencyTTL)); err != nil || !replayed {
		t.Errorf("replay at full quota: replayed %v, err %v", replayed, err)
	}
	if _, _, err := s.CreateJob(ctx, nj(a.ID, "k3", "h1"), t0.Add(IdempotencyTTL)); !errors.Is(err, ErrQuotaExceeded) {
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
	if j, replayed, err := s.CreateJob(ctx, nj(a.ID, "k1", "h2"), t0.Add(IdempotencyTTL+time.Hour)); err != nil || !replayed || j.Status != StatusProcessing {
		t.Errorf("replay after the job started: status %q replayed %v err %v", j.Status, replayed, err)
	}
	// The purge forgets expired keys whatever the retention (here off).
	if c, err := s.Purge(ctx, PurgePolicy{Now: t0.Add(IdempotencyTTL + time.Hour)}); err != nil || c.IdempotencyKeys != 2 || c.Total() != 2 {
		t.Errorf("purge removed %+v (err %v), want the 2 keys from t0+1h and before", c, err)
	}
}

func TestConcurrentSameIdempotencyKey(t *testing.T) {
	s := newStore(t, Options{})
	a := newAccount(t, s, 100)
	const n = 20
	var wg sync.WaitGroup
	type result struct {
		id       string
		replayed bool
		err      error
	}
	results := make(chan result, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := apiJob(a.ID)
			j.IdempotencyKey, j.RequestHash = "same-key", "same-hash"
			job, replayed, err := s.CreateJob(context.Background(), j, t0)
			results <- result{job.ID, replayed, err}
		}()
	}
	wg.Wait()
	close(results)
	ids := map[string]int{}
	fresh := 0
	for r := range results {
		if r.err != nil {
			t.Errorf("create: %v", r.err)
			continue
		}
		ids[r.id]++
		if !r.replayed {
			fresh++
		}
	}
	if len(ids) != 1 || fresh != 1 {
		t.Errorf("%d concurrent creates with one key gave job ids %v and %d fresh creates; want one job, one fresh", n, ids, fresh)
	}
	if got := countRows(t, s, `SELECT COUNT(*) FROM report_jobs`); got != 1 {
		t.Errorf("%d jobs stored, want 1", got)
	}
}

func TestListJobs(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a, b := newAccount(t, s, 100), newAccount(t, s, 100)
	// 25 jobs for a; jobs 10..14 share one creation time, so the id decides
	// their order. b's jobs are interleaved and must never show.
	var all []Job
	for i := range 25 {
		at := t0.Add(time.Duration(i) * time.Second)
		if i >= 10 && i < 15 {
			at = t0.Add(10 * time.Second)
		}
		j, _, err := s.CreateJob(ctx, apiJob(a.ID), at)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, j)
		if _, _, err := s.CreateJob(ctx, apiJob(b.ID), at); err != nil {
			t.Fatal(err)
		}
	}
	// Newest first: created DESC, id DESC.
	slices.SortFunc(all, func(x, y Job) int {
		if c := y.CreatedUTC.Compare(x.CreatedUTC); c != 0 {
			return c
		}
		return -compareStr(x.ID, y.ID)
	})
	// Fail two of a's jobs for the status filter.
	for _, j := range []Job{all[3], all[17]} {
		if _, err := s.db.ExecContext(ctx, `UPDATE report_jobs SET status = 'failed' WHERE id = ?`, j.ID); err != nil {
			t.Fatal(err)
		}
	}

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
		var got []Job
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
	if _, _, err := s.ListJobs(ctx, a.ID, "done", 10, ""); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown status: %v, want ErrInvalid", err)
	}
}

func compareStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestListJobsBadCursor(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	good := encodeCursor("2026-11-22T10:00:00.000Z", "job_0123456789abcdefghijKLMN")
	if _, _, err := s.ListJobs(ctx, a.ID, "", 10, good); err != nil {
		t.Fatalf("well-formed cursor: %v", err)
	}
	for _, c := range []string{
		"!!!",
		good + "=",
		enc("v1\x002026-11-22T10:00:00.000Z"),
		enc("v2\x002026-11-22T10:00:00.000Z\x00job_0123456789abcdefghijKLMN"),
		enc("v1\x002026-11-22\x00job_0123456789abcdefghijKLMN"),
		enc("v1\x002026-11-22T10:00:00.000Z\x00bat_0123456789abcdefghijKLMN"),
		enc("v1\x002026-11-22T10:00:00.000Z\x00job_' OR 1=1 --"),
	} {
		if _, _, err := s.ListJobs(ctx, a.ID, "", 10, c); !errors.Is(err, ErrBadCursor) {
			t.Errorf("cursor %q: err = %v, want ErrBadCursor", c, err)
		}
	}
}

// makeJobIn moves a fresh job of acct to the given status through the
// scheduler-side calls and returns it.
func makeJobIn(t *testing.T, s *Store, acct, status string, transient bool) Job {
	t.Helper()
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, apiJob(acct), t0)
	if err != nil {
		t.Fatal(err)
	}
	if status == StatusQueued {
		return j
	}
	c, ok, err := s.ClaimJob(ctx, "w", 100*time.Hour, t0)
	if err != nil || !ok || c.ID != j.ID {
		t.Fatalf("claim %s: %v %v %v", j.ID, c.ID, ok, err)
	}
	switch status {
	case StatusProcessing:
		return c
	case StatusCompleted:
		c, err = s.CompleteJob(ctx, j.ID, "w", Report{DataVersion: "v", Body: []byte(`{}`)}, t0)
	case StatusFailed:
		c, err = s.FailJob(ctx, j.ID, "w", "generation_failed", "failed", transient, t0)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRetryJob(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a, b := newAccount(t, s, 10), newAccount(t, s, 10)
	tests := []struct {
		status    string
		transient bool
		account   string
		wantErr   error
	}{
		{StatusQueued, false, a.ID, ErrNotRetryable},
		{StatusProcessing, false, a.ID, ErrNotRetryable},
		{StatusCompleted, false, a.ID, ErrNotRetryable},
		{StatusFailed, false, a.ID, ErrNotRetryable},
		{StatusFailed, true, b.ID, ErrNotFound},
		{StatusFailed, true, a.ID, nil},
	}
	for _, tt := range tests {
		j := makeJobIn(t, s, a.ID, tt.status, tt.transient)
		// Park every job so later cases claim their own.
		if j.Status == StatusQueued {
			if _, err := s.db.ExecContext(ctx, `UPDATE report_jobs SET run_after_utc = '2099-01-01T00:00:00.000Z' WHERE id = ?`, j.ID); err != nil {
				t.Fatal(err)
			}
		}
		before := countRows(t, s, `SELECT COUNT(*) FROM report_jobs`)
		got, err := s.RetryJob(ctx, tt.account, j.ID, t0.Add(time.Hour))
		name := fmt.Sprintf("%s transient=%v by %s", tt.status, tt.transient, map[bool]string{true: "owner", false: "other"}[tt.account == a.ID])
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
		if got.Status != StatusQueued || got.Attempts != 1 || got.ErrorCode != nil || got.ErrorTransient != nil ||
			got.CompletedUTC != nil || !got.RunAfterUTC.Equal(t0.Add(time.Hour)) {
			t.Errorf("%s: retried job %+v", name, got)
		}
		if after := countRows(t, s, `SELECT COUNT(*) FROM report_jobs`); after != before {
			t.Errorf("%s: retry created a job", name)
		}
		// The retried job runs again and its attempts keep counting.
		c, ok, err := s.ClaimJob(ctx, "w2", time.Minute, t0.Add(time.Hour))
		if err != nil || !ok || c.ID != j.ID || c.Attempts != 2 {
			t.Errorf("%s: claim after retry = %s attempts %d ok %v err %v", name, c.ID, c.Attempts, ok, err)
		}
		if _, err := s.RetryJob(ctx, a.ID, j.ID, t0.Add(time.Hour)); !errors.Is(err, ErrNotRetryable) {
			t.Errorf("%s: retry of the now processing job: %v", name, err)
		}
	}
	if _, err := s.RetryJob(ctx, a.ID, "job_unknown", t0); !errors.Is(err, ErrNotFound) {
		t.Errorf("retry unknown: %v", err)
	}
	limit, used, _ := quotaUsage(ctx, s.db, a.ID, t0)
	if used != len(tests) || limit != 10 {
		t.Errorf("quota used %d, want %d (retries use none)", used, len(tests))
	}
}

func TestClaimCompleteAndLeaseExpiry(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a, b := newAccount(t, s, 10), newAccount(t, s, 10)
	lease := 30 * time.Second

	if _, ok, err := s.ClaimJob(ctx, "w1", lease, t0); err != nil || ok {
		t.Fatalf("claim on an empty queue: ok %v err %v", ok, err)
	}
	j, _, _ := s.CreateJob(ctx, apiJob(a.ID), t0)
	c, ok, err := s.ClaimJob(ctx, "w1", lease, t0)
	if err != nil || !ok || c.ID != j.ID || c.Status != StatusProcessing || c.Attempts != 1 || c.Reclaimed {
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
			_, err := s.CompleteJob(ctx, j.ID, "w1", Report{DataVersion: "v1", Body: []byte(`{"x":1}`)}, t0)
			return err
		},
		"fail":        func() error { _, err := s.FailJob(ctx, j.ID, "w1", "c", "m", true, t0); return err },
		"retry later": func() error { return s.RetryLater(ctx, j.ID, "w1", t0, "c", "m", t0) },
		"release":     func() error { return s.ReleaseJob(ctx, j.ID, "w1", t0) },
	} {
		if err := call(); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("%s by the old owner: %v, want ErrLeaseLost", name, err)
		}
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM reports`); n != 0 {
		t.Fatalf("%d reports after a lost lease", n)
	}
	done, err := s.CompleteJob(ctx, j.ID, "w2", Report{DataVersion: "v1", Body: []byte(`{"x":2}`)}, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != StatusCompleted || done.ReportID == nil || done.CompletedUTC == nil || !done.CompletedUTC.Equal(t0.Add(time.Minute)) {
		t.Errorf("completed job %+v", done)
	}
	// Completing again, by anyone, changes nothing.
	if _, err := s.CompleteJob(ctx, j.ID, "w2", Report{DataVersion: "v1", Body: []byte(`{}`)}, t0); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("second complete: %v", err)
	}
	if _, ok, _ := s.ClaimJob(ctx, "w3", lease, t0.Add(24*time.Hour)); ok {
		t.Error("a completed job was claimed")
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM reports WHERE job_id = ?`, j.ID); n != 1 {
		t.Errorf("%d reports for the job, want 1", n)
	}
	r, err := s.GetReport(ctx, a.ID, *done.ReportID)
	if err != nil {
		t.Fatal(err)
	}
	if r.JobID != j.ID || r.AccountID != a.ID || string(r.Body) != `{"x":2}` || r.DataVersion != "v1" || !r.GeneratedUTC.Equal(t0.Add(time.Minute)) {
		t.Errorf("report %+v", r)
	}
	if _, err := s.GetReport(ctx, b.ID, r.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetReport by another account: %v", err)
	}
	if _, err := s.GetReport(ctx, a.ID, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetReport unknown: %v", err)
	}
}

// The unique job_id on reports is the last line of defence: even a second
// report with a fresh id for a completed job is refused.
func TestOneReportPerJob(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	j := makeJobIn(t, s, a.ID, StatusCompleted, false)
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		return insertReport(ctx, tx, Report{ID: "11111111-1111-4111-8111-111111111111", JobID: j.ID, AccountID: a.ID, GeneratedUTC: t0, Body: []byte("{}")})
	})
	if err == nil {
		t.Error("a second report for one job was stored")
	}
}

func TestRetryLaterAndRelease(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	j, _, _ := s.CreateJob(ctx, apiJob(a.ID), t0)
	c, _, _ := s.ClaimJob(ctx, "w", time.Minute, t0)
	if err := s.RetryLater(ctx, c.ID, "w", t0.Add(400*time.Millisecond), "generation_failed", "try again", t0); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetJob(ctx, a.ID, j.ID)
	if got.Status != StatusQueued || got.Attempts != 1 || got.ErrorCode == nil || *got.ErrorCode != "generation_failed" ||
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
	if got.Status != StatusQueued || got.Attempts != 1 || !got.RunAfterUTC.Equal(t0.Add(time.Second)) {
		t.Errorf("after release: %+v (the released attempt must not count)", got)
	}
	c, _, _ = s.ClaimJob(ctx, "w", time.Minute, t0.Add(time.Second))
	f, err := s.FailJob(ctx, c.ID, "w", "unsupported_location", "outside coverage", false, t0.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if f.Status != StatusFailed || f.Attempts != 2 || *f.ErrorCode != "unsupported_location" || *f.ErrorTransient ||
		f.CompletedUTC == nil || f.ReportID != nil {
		t.Errorf("failed job %+v", f)
	}
}

// Claims go to the job that has waited longest (run_after, then creation).
func TestClaimOrder(t *testing.T) {
	s := newStore(t, Options{})
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

// Concurrent claimers never get the same job.
func TestConcurrentClaims(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 100)
	for range 60 {
		if _, _, err := s.CreateJob(ctx, apiJob(a.ID), t0); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("w%d", w)
			for {
				c, ok, err := s.ClaimJob(ctx, owner, time.Minute, t0)
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					return
				}
				mu.Lock()
				if prev, dup := seen[c.ID]; dup {
					t.Errorf("job %s claimed by %s and %s", c.ID, prev, owner)
				}
				seen[c.ID] = owner
				mu.Unlock()
				if _, err := s.CompleteJob(ctx, c.ID, owner, Report{Body: []byte("{}")}, t0); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != 60 || countRows(t, s, `SELECT COUNT(*) FROM reports`) != 60 {
		t.Errorf("%d jobs claimed, %d reports; want 60 each", len(seen), countRows(t, s, `SELECT COUNT(*) FROM reports`))
	}
}

func TestJobFinalHooks(t *testing.T) {
	var calls []string
	fail := false
	hook := func(ctx context.Context, tx Tx, job Job) error {
		// The hook sees the job's final state inside the transaction.
		var status string
		if err := tx.(finalTx).tx.GetContext(ctx, &status, `SELECT status FROM report_jobs WHERE id = ?`, job.ID); err != nil {
			return err
		}
		calls = append(calls, job.Status+"/"+status)
		if fail {
			return errors.New("outbox full")
		}
		return nil
	}
	s := newStore(t, Options{OnJobFinal: []JobFinalHook{hook}})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	makeJobIn(t, s, a.ID, StatusCompleted, false)
	makeJobIn(t, s, a.ID, StatusFailed, true)
	if want := []string{"completed/completed", "failed/failed"}; !slices.Equal(calls, want) {
		t.Errorf("hook calls %v, want %v", calls, want)
	}
	// A failing hook rolls the transition back: no report, job still held.
	fail = true
	j := makeJobIn(t, s, a.ID, StatusProcessing, false)
	if _, err := s.CompleteJob(ctx, j.ID, "w", Report{Body: []byte("{}")}, t0); err == nil {
		t.Fatal("complete succeeded although its hook failed")
	}
	got, _ := s.GetJob(ctx, a.ID, j.ID)
	if got.Status != StatusProcessing || countRows(t, s, `SELECT COUNT(*) FROM reports WHERE job_id = ?`, j.ID) != 0 {
		t.Errorf("after a failed hook: status %s", got.Status)
	}
}

// Every query of the claim reads an index in the claim's order: no table
// scan and no sort, whatever the queue holds. The only scan allowed is the
// walk over the waiting accounts' turns, which stops at the first account
// with a runnable job.
func TestClaimQueryPlans(t *testing.T) {
	s := newStore(t, Options{})
	tests := []struct {
		name, query string
		uses        []string // indexes the plan must use
	}{
		{"precheck", claimPrecheck, []string{"job_queue_accounts_turns", "report_jobs_queued", "report_jobs_leases"}},
		{"expired lease", claimExpired, []string{"report_jobs_leases"}},
		{"next turn", claimNextTurn, []string{"job_queue_accounts_turns", "report_jobs_queued"}},
		{"take turn", claimTakeTurn, []string{"job_queue_accounts_by_claim"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := queryPlan(t, s, tt.query, "x", "x")
			all := strings.Join(plan, "\n")
			for _, p := range plan {
				if strings.Contains(p, "TEMP B-TREE") || (strings.HasPrefix(p, "SCAN ") && p != "SCAN q USING INDEX job_queue_accounts_turns" && p != "SCAN CONSTANT ROW") {
					t.Errorf("plan step %q:\n%s", p, all)
				}
			}
			for _, ix := range tt.uses {
				if !slices.ContainsFunc(plan, func(p string) bool {
					return strings.HasSuffix(p, "INDEX "+ix) || strings.Contains(p, "INDEX "+ix+" ")
				}) {
					t.Errorf("plan does not use %s:\n%s", ix, all)
				}
			}
		})
	}
}

// queryPlan returns the detail column of EXPLAIN QUERY PLAN for q with
// args bound, one step per element.
func queryPlan(t *testing.T, s *Store, q string, args ...any) []string {
	t.Helper()
	rows, err := s.db.QueryxContext(context.Background(), `EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// A large backlog in one account does not hold up another account's new
// job: the newcomer is claimed within the first claims, and from then on
// the waiting accounts take turns.
func TestClaimFairBetweenAccounts(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	heavy, light, third := newAccount(t, s, 1<<20), newAccount(t, s, 10), newAccount(t, s, 10)
	fillAt(t, s, heavy.ID, 5000, t0)
	// Some of the backlog is served before the newcomer arrives.
	now := t0.Add(time.Second)
	for range 3 {
		if c, ok, err := s.ClaimJob(ctx, "w", time.Minute, now); err != nil || !ok || c.AccountID != heavy.ID {
			t.Fatalf("claim: %v %v %v", c.AccountID, ok, err)
		}
	}
	newcomer, _, err := s.CreateJob(ctx, apiJob(light.ID), now)
	if err != nil {
		t.Fatal(err)
	}
	c, ok, err := s.ClaimJob(ctx, "w", time.Minute, now)
	if err != nil || !ok || c.ID != newcomer.ID {
		t.Fatalf("the claim after the newcomer's job took %v (account %v), want the newcomer %s", c.ID, c.AccountID, newcomer.ID)
	}
	// Three accounts waiting: turns go round, each in its own creation order.
	var lightIDs, thirdIDs []string
	for i := range 3 {
		j, _, _ := s.CreateJob(ctx, apiJob(light.ID), now.Add(time.Duration(i)*time.Millisecond))
		lightIDs = append(lightIDs, j.ID)
		j, _, _ = s.CreateJob(ctx, apiJob(third.ID), now.Add(time.Duration(i)*time.Millisecond))
		thirdIDs = append(thirdIDs, j.ID)
	}
	var accts []string
	var gotLight, gotThird []string
	for range 9 {
		c, ok, err := s.ClaimJob(ctx, "w", time.Minute, now.Add(time.Second))
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		switch c.AccountID {
		case heavy.ID:
			accts = append(accts, "heavy")
		case light.ID:
			accts = append(accts, "light")
			gotLight = append(gotLight, c.ID)
		case third.ID:
			accts = append(accts, "third")
			gotThird = append(gotThird, c.ID)
		}
	}
	// third has never been served, heavy was served before light.
	want := []string{"third", "heavy", "light", "third", "heavy", "light", "third", "heavy", "light"}
	if !slices.Equal(accts, want) {
		t.Errorf("claims went to %v, want %v", accts, want)
	}
	if !slices.Equal(gotLight, lightIDs) || !slices.Equal(gotThird, thirdIDs) {
		t.Errorf("within an account, claims out of creation order: %v %v, want %v %v", gotLight, gotThird, lightIDs, thirdIDs)
	}
	// Only the backlog is left: it drains on its own.
	if c, ok, _ := s.ClaimJob(ctx, "w", time.Minute, now.Add(time.Second)); !ok || c.AccountID != heavy.ID {
		t.Errorf("with only the backlog left the claim took %v %v", c.AccountID, ok)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM job_queue_accounts WHERE has_queued = 1`); n != 1 {
		t.Errorf("%d accounts waiting, want 1 (the backlog's)", n)
	}
}

// An expired lease is taken over before any queued job, and a job waiting
// out its retry backoff lets the other accounts' jobs (and its own
// account's runnable ones) go first.
func TestClaimExpiredLeaseAndBackoff(t *testing.T) {
	s := newStore(t, Options{})
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
	fillAt(t, s, a.ID, 3, t0.Add(2*time.Millisecond))
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

// A database migrated from version 3 with jobs already queued serves them
// in turns like new ones.
func TestClaimAfterMigration(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	a, b := newAccount(t, s, 100), newAccount(t, s, 100)
	fillAt(t, s, a.ID, 5, t0)
	fillAt(t, s, b.ID, 1, t0.Add(time.Second))
	// Back to version 3: the turns are gone; migration 004 rebuilds them.
	// A version 3 file has report_jobs_runnable (migration 011 drops it),
	// which 004's backfill reads the queued jobs by, oldest runnable first.
	undoMigration7(t, s)
	if _, err := s.db.ExecContext(ctx, `DROP TABLE job_queue_accounts; DROP INDEX report_jobs_queued;
		DROP INDEX report_jobs_leases; DROP TRIGGER report_jobs_queue_insert; DROP TRIGGER report_jobs_queue_update;
		DROP TRIGGER report_jobs_dequeue_update; DROP TRIGGER report_jobs_dequeue_delete;
		CREATE INDEX report_jobs_runnable ON report_jobs(status, run_after_utc);
		PRAGMA user_version = 3`); err != nil {
		t.Fatal(err)
	}
	ms, err := embeddedMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.migrate(ctx, ms); err != nil {
		t.Fatal(err)
	}
	var accts []string
	for range 3 {
		c, ok, err := s.ClaimJob(ctx, "w", time.Minute, t0.Add(time.Minute))
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		accts = append(accts, c.AccountID)
	}
	if want := []string{a.ID, b.ID, a.ID}; !slices.Equal(accts, want) {
		t.Errorf("claims after the migration went to %v, want %v", accts, want)
	}
}

// has_queued (migration 004) says whether the account has a queued job
// after every transition in and out of the queue, including a row
// deleted: a stale 0 would leave its jobs unclaimed, a stale 1 would make
// every claim look at it.
func TestQueueTurnsFollowJobs(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 100)
	var job Job
	steps := []struct {
		name string
		do   func() error
		want int
	}{
		{"created", func() (err error) { job, _, err = s.CreateJob(ctx, apiJob(a.ID), t0); return err }, 1},
		{"claimed", claimed(t, s, &job, "w"), 0},
		{"released", func() error { return s.ReleaseJob(ctx, job.ID, "w", t0) }, 1},
		{"claimed again", claimed(t, s, &job, "w"), 0},
		{"retry later", func() error {
			return s.RetryLater(ctx, job.ID, "w", t0.Add(time.Minute), "generation_failed", "x", t0)
		}, 1},
		{"claimed after backoff", claimed(t, s, &job, "w"), 0},
		{"failed", func() error { _, err := s.FailJob(ctx, job.ID, "w", "generation_failed", "x", true, t0); return err }, 0},
		{"retried by hand", func() error { _, err := s.RetryJob(ctx, a.ID, job.ID, t0); return err }, 1},
		{"deleted", func() error {
			_, err := s.db.ExecContext(ctx, `DELETE FROM report_jobs WHERE id = ?`, job.ID)
			return err
		}, 0},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := countRows(t, s, `SELECT has_queued FROM job_queue_accounts WHERE account_id = ?`, a.ID); got != st.want {
			t.Errorf("after %s: has_queued %d, want %d", st.name, got, st.want)
		}
	}
}

// claimed is a step that claims the next job as owner, late enough for
// any backoff, and stores it in job.
func claimed(t *testing.T, s *Store, job *Job, owner string) func() error {
	return func() error {
		j, ok, err := s.ClaimJob(context.Background(), owner, time.Minute, t0.Add(time.Hour))
		if err == nil && !ok {
			err = errors.New("nothing claimed")
		}
		*job = j
		return err
	}
}

// fillAt queues n jobs for the account, created and runnable at at.
func fillAt(t *testing.T, s *Store, accountID string, n int, at time.Time) {
	t.Helper()
	err := s.WithTx(context.Background(), func(ctx context.Context, tx *sqlx.Tx) error {
		for range n {
			j := Job{ID: ids.New(ids.Job), AccountID: accountID, Bucket: BucketBulk, Latitude: 30, Longitude: -90,
				Status: StatusQueued, RunAfterUTC: at, CreatedUTC: at, UpdatedUTC: at}
			if err := insertJob(context.Background(), tx, j); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
