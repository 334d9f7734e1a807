package sqlite

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// TestLoadQueue is the queue's load measurement (docs/operations.md, "Limits and
// defaults"): one account queues a large backlog, then the test reports the
// claim's cost at 1,000 and at the full backlog, the drain rate of workers
// that claim and complete with the store's real completion path, another
// tenant's create-to-completed latency while the backlog drains, and job
// creation latency meanwhile. After the 20 s window the workers go on until
// the other tenant's last job is done, for at most a minute. It is opt-in
// because it takes about a minute:
//
//	LOCRISK_LOAD=1 go test ./internal/sqlite -run TestLoadQueue -v
//
// LOCRISK_LOAD_JOBS sets the backlog (default 200000). The normal suite
// runs the same scenario small (TestQueueUnderBacklog).
func TestLoadQueue(t *testing.T) {
	if os.Getenv("LOCRISK_LOAD") == "" {
		t.Skip("need LOCRISK_LOAD=1: the queue load measurement")
	}
	backlog := 200_000
	if v := os.Getenv("LOCRISK_LOAD_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			t.Fatalf("LOCRISK_LOAD_JOBS=%q: want a number >= 1000", v)
		}
		backlog = n
	}
	r := runQueueLoad(t, backlog, 20*time.Second)
	r.log(t)
}

// TestQueueUnderBacklog is TestLoadQueue at a size the normal suite can
// afford. It asserts no timings (the machine is shared); it counts instead
// the backlog jobs completed while each of the other tenant's jobs waited:
// a few with turns between accounts, the rest of the backlog with a claim
// in global queue order.
func TestQueueUnderBacklog(t *testing.T) {
	if testing.Short() {
		t.Skip("in -short mode")
	}
	const backlog = 3000
	r := runQueueLoad(t, backlog, 500*time.Millisecond)
	r.log(t)
	if r.otherCreated == 0 || r.otherDone != r.otherCreated {
		t.Fatalf("the other tenant's jobs: %d created, %d completed", r.otherCreated, r.otherDone)
	}
	if w := slices.Max(r.otherWaitedFor); w > 20 {
		t.Errorf("one of the other tenant's jobs waited for %d backlog jobs, want a few", w)
	} else if r.drainedAtOtherDone >= backlog {
		t.Errorf("the backlog drained before the other tenant's last job was done; the test proves nothing")
	}
}

// queueLoad is what runQueueLoad measured.
type queueLoad struct {
	backlog               int
	claimSmall, claimFull []time.Duration // ClaimJob at 1,000 queued and at the backlog
	window                time.Duration
	drained               int             // backlog jobs claimed and completed in window
	drainedAtOtherDone    int             // backlog jobs done when the other tenant's last job was
	otherCreated          int             // the other tenant's jobs, created during window
	otherDone             int             // of those, completed by the end
	otherLatency          []time.Duration // the other tenant's create-to-completed
	otherWaitedFor        []int           // backlog jobs completed while each waited
	createLatency         []time.Duration // CreateJob while draining
}

func (r queueLoad) log(t *testing.T) {
	t.Logf("claim cost, backlog account only: 1000 queued p50 %s p99 %s; %d queued p50 %s p99 %s",
		pct(r.claimSmall, 50), pct(r.claimSmall, 99), r.backlog, pct(r.claimFull, 50), pct(r.claimFull, 99))
	t.Logf("drain: %d jobs claimed+completed in %s = %.0f jobs/s", r.drained, r.window, float64(r.drained)/r.window.Seconds())
	waited := "-"
	if len(r.otherWaitedFor) > 0 {
		waited = strconv.Itoa(slices.Max(r.otherWaitedFor))
	}
	t.Logf("other tenant: %d jobs created, %d completed; create-to-completed p50 %s max %s; each waited for at most %s backlog jobs",
		r.otherCreated, r.otherDone, pct(r.otherLatency, 50), pct(r.otherLatency, 100), waited)
	t.Logf("job creation while draining: p50 %s p99 %s max %s (%d creates)",
		pct(r.createLatency, 50), pct(r.createLatency, 99), pct(r.createLatency, 100), len(r.createLatency))
}

// pct is the p-th percentile of ds (100 = the maximum), "-" if empty.
func pct(ds []time.Duration, p int) string {
	if len(ds) == 0 {
		return "-"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(len(s)*p/100, len(s)-1)
	return s[i].Round(10 * time.Microsecond).String()
}

// runQueueLoad queues backlog jobs for one account and measures, on the
// real clock, as queueLoad describes. Two workers claim and complete (the
// scheduler's default on this project's 2-core machine); for window the
// other tenant creates a job every 50 ms, then the workers go on until its
// last job is done (at most a minute) and stop.
func runQueueLoad(t *testing.T, backlog int, window time.Duration) queueLoad {
	ctx := context.Background()
	s := newStore(t, Options{Now: time.Now})
	heavy, other := newAccount(t, s, 1<<30), newAccount(t, s, 1<<30)
	r := queueLoad{backlog: backlog, window: window}

	fill(t, s, heavy.ID, 1000)
	r.claimSmall = claimCost(t, s, 200)
	fill(t, s, heavy.ID, backlog-1000)
	r.claimFull = claimCost(t, s, 200)

	body := locrisk.Report{DataVersion: "load", Body: []byte(`{"load":true}`)}
	var (
		mu        sync.Mutex
		createdAt = map[string]time.Time{}
		doneAt    = map[string]time.Time{}
		// The backlog jobs done when each of the other tenant's jobs
		// was created and completed.
		drainedAtCreate = map[string]int64{}
		drainedAtDone   = map[string]int64{}
		drained         atomic.Int64
		stop            = make(chan struct{})
		workers         sync.WaitGroup
	)
	// otherDone reports whether every job the other tenant created is done.
	otherDone := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(doneAt) == len(createdAt)
	}
	for w := range 2 {
		owner := fmt.Sprintf("load-%d", w)
		workers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				j, ok, err := s.ClaimJob(ctx, owner, time.Minute, time.Now())
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				if _, err := s.CompleteJob(ctx, j.ID, owner, body, time.Now()); err != nil {
					t.Error(err)
					return
				}
				if j.AccountID == heavy.ID {
					drained.Add(1)
					continue
				}
				mu.Lock()
				doneAt[j.ID] = time.Now()
				drainedAtDone[j.ID] = drained.Load()
				mu.Unlock()
			}
		})
	}
	start := time.Now()
	tick := time.NewTicker(50 * time.Millisecond)
	for range tick.C {
		if time.Since(start) >= window {
			break
		}
		begin := time.Now()
		j, _, err := s.CreateJob(ctx, apiJob(other.ID), begin)
		if err != nil {
			t.Error(err)
			break
		}
		mu.Lock()
		createdAt[j.ID] = begin
		drainedAtCreate[j.ID] = drained.Load()
		r.createLatency = append(r.createLatency, time.Since(begin))
		mu.Unlock()
	}
	tick.Stop()
	r.drained = int(drained.Load())
	for deadline := time.Now().Add(time.Minute); !otherDone() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	r.drainedAtOtherDone = int(drained.Load())
	close(stop)
	workers.Wait()

	r.otherCreated = len(createdAt)
	for id, c := range createdAt {
		if d, ok := doneAt[id]; ok {
			r.otherDone++
			r.otherLatency = append(r.otherLatency, d.Sub(c))
			r.otherWaitedFor = append(r.otherWaitedFor, int(drainedAtDone[id]-drainedAtCreate[id]))
		}
	}
	return r
}

// fill queues n jobs for the account directly, in transactions of 5,000
// (CreateJob one at a time would take minutes for a large backlog).
func fill(t *testing.T, s *Store, accountID string, n int) {
	t.Helper()
	ctx := context.Background()
	for n > 0 {
		k := min(n, 5000)
		now := truncMs(time.Now())
		err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
			for range k {
				j := locrisk.Job{ID: ids.New(ids.Job), AccountID: accountID, Bucket: locrisk.BucketBulk, Latitude: 30, Longitude: -90,
					Status: locrisk.StatusQueued, RunAfterUTC: now, CreatedUTC: now, UpdatedUTC: now}
				if err := insertJob(ctx, tx, j); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		n -= k
	}
}

// claimCost times n claims, handing each job back (uncounted) so the queue
// keeps its length.
func claimCost(t *testing.T, s *Store, n int) []time.Duration {
	t.Helper()
	ctx := context.Background()
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		j, ok, err := s.ClaimJob(ctx, "cost", time.Minute, start)
		d := time.Since(start)
		if err != nil || !ok {
			t.Fatalf("claim: ok %v err %v", ok, err)
		}
		out = append(out, d)
		if err := s.ReleaseJob(ctx, j.ID, "cost", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
