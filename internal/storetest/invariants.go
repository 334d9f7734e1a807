package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

// The four concurrency invariants. With SQLite's single writer they come
// for free; a store with concurrent writers (several nodes on one
// database) must earn each one explicitly, so each is checked with many
// goroutines let loose at once. They use only account creation, job
// creation and listing, the claim, completion and the report, so that
// this package's tests can run them against small broken stores.
var invariants = []test{
	{"QuotaNeverOvershot", quotaNeverOvershot},
	{"OneJobPerIdempotencyKey", oneJobPerIdempotencyKey},
	{"ClaimExclusiveCompleteOnce", claimExclusiveCompleteOnce},
	{"AccountsTakeTurns", accountsTakeTurns},
}

// together runs fn(i) for i in [0, n) in n goroutines released at the same
// moment, and waits for them all.
func together(n int, fn func(i int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			fn(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}

// quotaNeverOvershot: 50 concurrent creations against a quota of 10 create
// exactly 10 jobs; the other 40 are refused with the quota's numbers. A
// second account's quota is its own.
func quotaNeverOvershot(t testing.TB, h Harness) {
	s := h.open(t)
	a, b := newAccount(t, s, 10), newAccount(t, s, 3)
	var mu sync.Mutex
	created := map[string]int{}
	var over int
	var other []error
	together(60, func(i int) {
		acct := a.ID
		if i%6 == 5 {
			acct = b.ID // 10 of the 60 go to b
		}
		_, _, err := s.CreateJob(context.Background(), apiJob(acct), t0)
		mu.Lock()
		defer mu.Unlock()
		var qe *locrisk.QuotaError
		switch {
		case err == nil:
			created[acct]++
		case errors.As(err, &qe) && errors.Is(err, locrisk.ErrQuotaExceeded):
			over++
			limit := map[string]int{a.ID: 10, b.ID: 3}[acct]
			if qe.Limit != limit || qe.Used != limit || !qe.ResetsAt.Equal(locrisk.NextMonthStart(t0)) {
				other = append(other, fmt.Errorf("quota error %+v, want %d of %d used, resetting %v", qe, limit, limit, locrisk.NextMonthStart(t0)))
			}
		default:
			other = append(other, err)
		}
	})
	if created[a.ID] != 10 || created[b.ID] != 3 || over != 47 || len(other) > 0 {
		t.Errorf("60 concurrent creates against quotas 10 and 3: created %v, %d over quota, other errors %v; want 10, 3 and 47", created, over, other)
	}
	if n := len(listJobs(t, s, a.ID, "")); n != 10 {
		t.Errorf("account a has %d jobs, want 10", n)
	}
	if n := len(listJobs(t, s, b.ID, "")); n != 3 {
		t.Errorf("account b has %d jobs, want 3", n)
	}
}

// oneJobPerIdempotencyKey: 20 concurrent creations under one key and one
// payload make one job (one fresh create, 19 replays of it); 20 under
// another key, half with another payload, make one job too, and the
// requests whose payload differs from the winner's are refused as
// conflicts.
func oneJobPerIdempotencyKey(t testing.TB, h Harness) {
	s := h.open(t)
	a := newAccount(t, s, 1000)
	type result struct {
		key, hash string
		id        string
		replayed  bool
		err       error
	}
	results := make([]result, 40)
	together(40, func(i int) {
		j := apiJob(a.ID)
		j.IdempotencyKey, j.RequestHash = "same-key", "same-hash"
		if i >= 20 {
			j.IdempotencyKey, j.RequestHash = "mixed-key", fmt.Sprintf("hash-%d", i%2)
		}
		job, replayed, err := s.CreateJob(context.Background(), j, t0)
		results[i] = result{j.IdempotencyKey, j.RequestHash, job.ID, replayed, err}
	})
	for _, key := range []string{"same-key", "mixed-key"} {
		ids, fresh := map[string]bool{}, 0
		winner := ""
		for _, r := range results {
			if r.key != key || r.err != nil {
				continue
			}
			ids[r.id] = true
			if !r.replayed {
				fresh++
				winner = r.hash
			}
		}
		if len(ids) != 1 || fresh != 1 {
			t.Errorf("key %s: job ids %v, %d fresh creates; want one job, one fresh create", key, ids, fresh)
			continue
		}
		for _, r := range results {
			if r.key != key {
				continue
			}
			switch {
			case r.hash == winner && r.err != nil:
				t.Errorf("key %s: a request with the winner's payload failed: %v", key, r.err)
			case r.hash != winner && !errors.Is(r.err, locrisk.ErrIdempotencyConflict):
				t.Errorf("key %s: a request with another payload got %v (job %q), want ErrIdempotencyConflict", key, r.err, r.id)
			}
		}
	}
	if n := len(listJobs(t, s, a.ID, "")); n != 2 {
		t.Errorf("%d jobs stored for two keys, want 2", n)
	}
}

// claimExclusiveCompleteOnce: six workers drain 60 jobs of three accounts
// concurrently. No job is claimed twice while its lease runs; each worker
// completes what it claimed from two goroutines at once, and exactly one
// of the two succeeds; another owner's completion is refused; every job
// ends completed with the one report its winner wrote.
func claimExclusiveCompleteOnce(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	var accts []string
	for range 3 {
		a := newAccount(t, s, 100)
		accts = append(accts, a.ID)
		for range 20 {
			if _, _, err := s.CreateJob(ctx, apiJob(a.ID), t0); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	claimedBy := map[string]string{}
	body := map[string]string{} // the body of the completion that won
	var problems []string
	fail := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	together(6, func(w int) {
		owner := fmt.Sprintf("w%d", w)
		for {
			c, ok, err := s.ClaimJob(ctx, owner, time.Hour, t0)
			if err != nil {
				fail("claim: %v", err)
				return
			}
			if !ok {
				return
			}
			mu.Lock()
			prev, dup := claimedBy[c.ID]
			claimedBy[c.ID] = owner
			mu.Unlock()
			if dup {
				fail("job %s claimed by %s and then by %s while the first lease ran", c.ID, prev, owner)
				continue
			}
			if c.Status != locrisk.StatusProcessing || c.Attempts != 1 || c.Reclaimed {
				fail("claimed job %+v, want processing, attempt 1, not reclaimed", c)
			}
			if _, err := s.CompleteJob(ctx, c.ID, "intruder", locrisk.Report{Body: []byte(`{"by":"intruder"}`)}, t0); !errors.Is(err, locrisk.ErrLeaseLost) {
				fail("completion by an owner without the lease: %v, want ErrLeaseLost", err)
			}
			var wins []string
			var winMu sync.Mutex
			together(2, func(k int) {
				b := fmt.Sprintf(`{"by":%q,"k":%d}`, owner, k)
				_, err := s.CompleteJob(ctx, c.ID, owner, locrisk.Report{DataVersion: "v", Body: []byte(b)}, t0)
				switch {
				case err == nil:
					winMu.Lock()
					wins = append(wins, b)
					winMu.Unlock()
				case !errors.Is(err, locrisk.ErrLeaseLost):
					fail("second completion of %s: %v, want ErrLeaseLost", c.ID, err)
				}
			})
			if len(wins) != 1 {
				fail("job %s: %d of two simultaneous completions succeeded, want exactly 1", c.ID, len(wins))
				continue
			}
			mu.Lock()
			body[c.ID] = wins[0]
			mu.Unlock()
		}
	})
	for _, p := range problems {
		t.Error(p)
	}
	if len(claimedBy) != 60 {
		t.Errorf("%d jobs claimed, want 60", len(claimedBy))
	}
	for _, acct := range accts {
		for _, j := range listJobs(t, s, acct, "") {
			if j.Status != locrisk.StatusCompleted || j.ReportID == nil {
				t.Errorf("job %s ends %s with report %v, want completed with a report", j.ID, j.Status, j.ReportID)
				continue
			}
			r, err := s.GetReport(ctx, acct, *j.ReportID)
			if err != nil || r.JobID != j.ID || string(r.Body) != body[j.ID] {
				t.Errorf("report of job %s: %s (job %s), %v; want the winning completion's %s", j.ID, r.Body, r.JobID, err, body[j.ID])
			}
		}
	}
	if _, ok, err := s.ClaimJob(ctx, "late", time.Hour, t0.Add(48*time.Hour)); ok || err != nil {
		t.Errorf("a claim after every job completed: ok %v, err %v; want nothing to claim", ok, err)
	}
}

// accountsTakeTurns: one account's backlog of 300 jobs does not hold back
// the others. Two accounts that arrive later with three jobs each are
// served in turns with the backlog: every three consecutive claims serve
// each of the three accounts once, each account's jobs in creation order;
// then the backlog drains alone.
func accountsTakeTurns(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	heavy, light, third := newAccount(t, s, 1000), newAccount(t, s, 10), newAccount(t, s, 10)
	together(10, func(int) {
		for range 30 {
			if _, _, err := s.CreateJob(ctx, apiJob(heavy.ID), t0); err != nil {
				t.Error(err)
				return
			}
		}
	})
	now := t0.Add(time.Second)
	for range 3 {
		if c, ok, err := s.ClaimJob(ctx, "w", time.Hour, now); err != nil || !ok || c.AccountID != heavy.ID {
			t.Fatalf("claim with only the backlog queued: account %q ok %v err %v", c.AccountID, ok, err)
		}
	}
	want := map[string][]string{}
	for i := range 3 {
		at := now.Add(time.Duration(i) * time.Millisecond)
		for _, a := range []string{light.ID, third.ID} {
			j, _, err := s.CreateJob(ctx, apiJob(a), at)
			if err != nil {
				t.Fatal(err)
			}
			want[a] = append(want[a], j.ID)
		}
	}
	name := map[string]string{heavy.ID: "heavy", light.ID: "light", third.ID: "third"}
	got := map[string][]string{}
	var order []string
	for range 9 {
		c, ok, err := s.ClaimJob(ctx, "w", time.Hour, now.Add(time.Second))
		if err != nil || !ok {
			t.Fatalf("claim: ok %v err %v", ok, err)
		}
		order = append(order, name[c.AccountID])
		got[c.AccountID] = append(got[c.AccountID], c.ID)
	}
	for i := 0; i+3 <= len(order); i += 3 {
		round := slices.Clone(order[i : i+3])
		slices.Sort(round)
		if !slices.Equal(round, []string{"heavy", "light", "third"}) {
			t.Errorf("claims went to %v; want every account once in each round of three", order)
			break
		}
	}
	for _, a := range []string{light.ID, third.ID} {
		if !slices.Equal(got[a], want[a]) {
			t.Errorf("%s's jobs claimed as %v, want creation order %v", name[a], got[a], want[a])
		}
	}
	if c, ok, _ := s.ClaimJob(ctx, "w", time.Hour, now.Add(time.Second)); !ok || c.AccountID != heavy.ID {
		t.Errorf("with only the backlog left the claim took account %q (ok %v)", name[c.AccountID], ok)
	}
}
