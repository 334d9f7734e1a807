package sqlite

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/locrisk/locrisk"
)

// TestQueueDepth: the counts follow jobs through queued and processing,
// the oldest runnable time is the earliest run_after_utc of the queued
// ones, and an empty queue reads as zero.
func TestQueueDepth(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	if d, err := s.QueueDepth(ctx); err != nil || d != (locrisk.QueueDepth{}) {
		t.Fatalf("empty queue: %+v, %v", d, err)
	}
	acct := newAccount(t, s, 100)
	for i := range 3 {
		if _, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: acct.ID, Latitude: 40, Longitude: -90}, t0.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, err := s.ClaimJob(ctx, "w1", time.Minute, t0.Add(time.Hour)); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	d, err := s.QueueDepth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The claim takes the oldest, so the oldest still queued is the second.
	want := locrisk.QueueDepth{JobsQueued: 2, JobsProcessing: 1, OldestRunnable: t0.Add(time.Minute)}
	if d != want {
		t.Errorf("depth %+v, want %+v", d, want)
	}
}

// recordingObserver is an Observer that keeps what it is told.
type recordingObserver struct {
	mu     sync.Mutex
	waits  []time.Duration
	busy   int
	groups []int
}

func (o *recordingObserver) GroupCommit(size int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.groups = append(o.groups, size)
}

func (o *recordingObserver) WriteWait(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.waits = append(o.waits, d)
}

func (o *recordingObserver) WriteBusy() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.busy++
}

// TestObserverSeesWriteWaitAndBusy: a write queued behind another for the
// write slot reports its wait and waits it out, even past its busy wait
// (the holder is this process's own writer); a write that meets another
// connection's lock reports one busy error.
func TestObserverSeesWriteWaitAndBusy(t *testing.T) {
	ctx := context.Background()
	obs := &recordingObserver{}
	s := newStore(t, Options{Observer: obs})
	const hold = 100 * time.Millisecond
	obs.mu.Lock()
	before := len(obs.waits) // the writes of opening the store
	obs.mu.Unlock()

	held := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.WithTx(ctx, func(context.Context, *sqlx.Tx) error {
			close(held)
			time.Sleep(hold)
			return nil
		})
	}()
	<-held
	// The short view outwaits its busy wait behind our own writer.
	if err := s.WithBusyWait(10*time.Millisecond).WithTx(ctx, func(context.Context, *sqlx.Tx) error { return nil }); err != nil {
		t.Fatalf("short wait behind our own writer: %v, want nil", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Another connection holds SQLite's write lock, as another process
	// would.
	conn, err := s.db.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	err = s.WithBusyWait(10*time.Millisecond).WithTx(ctx, func(context.Context, *sqlx.Tx) error { return nil })
	if _, rerr := conn.ExecContext(ctx, "ROLLBACK"); rerr != nil {
		t.Fatal(rerr)
	}
	if !errors.Is(err, locrisk.ErrBusy) {
		t.Fatalf("write under another connection's lock: %v, want ErrBusy", err)
	}

	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.busy != 1 {
		t.Errorf("busy errors %d, want 1", obs.busy)
	}
	waits := obs.waits[before:]
	var longest time.Duration
	for _, w := range waits {
		longest = max(longest, w)
	}
	// Three writes: the holder (no wait), the one that waited out most
	// of the hold, the one that met the lock.
	if len(waits) != 3 || longest < hold/2 {
		t.Errorf("waits %v: want 3, the longest at least %s", waits, hold/2)
	}
}

// TestQueueDepthQueryPlan: each part of the gauges' query reads an index
// that holds only its backlog, never the job table or its history.
func TestQueueDepthQueryPlan(t *testing.T) {
	s := newStore(t, Options{})
	plan := queryPlan(t, s, queueDepthQuery)
	all := strings.Join(plan, "\n")
	for _, ix := range []string{"report_jobs_queued", "report_jobs_leases", "webhook_deliveries_due"} {
		if !strings.Contains(all, "INDEX "+ix) {
			t.Errorf("plan does not use %s:\n%s", ix, all)
		}
	}
	for _, p := range plan {
		// SCAN q is the one row of the queued jobs' count and minimum.
		if strings.Contains(p, "TEMP B-TREE") || (strings.HasPrefix(p, "SCAN ") && !strings.Contains(p, "INDEX") && p != "SCAN q") {
			t.Errorf("plan step %q:\n%s", p, all)
		}
	}
}
