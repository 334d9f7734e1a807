package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// fakeItem is an item of the fake kind's in-memory queue.
type fakeItem struct {
	id       string
	attempts int       // attempts started (a claim counts one; a release takes it back)
	due      time.Time // claimable from
	leased   time.Time // claimable again after (zero: not leased)
	final    string    // "", "done" or "failed"
}

// claimed is a claim of the fake kind.
type claimed struct {
	it      *fakeItem
	worker  int
	lease   time.Time // the claim token
	attempt int
}

// fakeKind is a Kind over an in-memory queue. Work does what work says
// (Done by default). Every step is recorded in events, in order.
type fakeKind struct {
	mu     sync.Mutex
	items  []*fakeItem
	events []string
	work   func(ctx context.Context, c *claimed) Outcome
	// inHand and maxInHand count items between Claim and their settling.
	inHand, maxInHand int
	workers           map[int]bool // worker slots in hand now
	badSlot           bool         // a slot was handed out twice at once
	retries           []Retry
	claims            int                  // Claim calls, empty ones included
	eventAt           map[string]time.Time // when each event first happened
	lastEvent         time.Time
}

func newFake(work func(ctx context.Context, c *claimed) Outcome) *fakeKind {
	return &fakeKind{work: work, workers: map[int]bool{}, eventAt: map[string]time.Time{}}
}

func (f *fakeKind) add(id string, due time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items = append(f.items, &fakeItem{id: id, due: due})
}

func (f *fakeKind) event(format string, args ...any) {
	e := fmt.Sprintf(format, args...)
	f.events = append(f.events, e)
	f.lastEvent = time.Now()
	if _, ok := f.eventAt[e]; !ok {
		f.eventAt[e] = f.lastEvent
	}
}

func (f *fakeKind) Claim(ctx context.Context, c Claim) (*claimed, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.claims++
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	for _, it := range f.items {
		if it.final != "" || it.due.After(c.Now) || (!it.leased.IsZero() && !it.leased.Before(c.Now)) {
			continue
		}
		it.attempts++
		it.leased = c.Now.Add(c.Lease)
		f.inHand++
		f.maxInHand = max(f.maxInHand, f.inHand)
		if f.workers[c.Worker] {
			f.badSlot = true
		}
		f.workers[c.Worker] = true
		f.event("claim %s %d", it.id, it.attempts)
		return &claimed{it: it, worker: c.Worker, lease: it.leased, attempt: it.attempts}, true, nil
	}
	return nil, false, nil
}

// settle ends a claim in the fake's books.
func (f *fakeKind) settle(c *claimed) {
	f.inHand--
	delete(f.workers, c.worker)
}

func (f *fakeKind) Work(ctx context.Context, c *claimed) Outcome {
	out := Done()
	if f.work != nil {
		out = f.work(ctx, c)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.event("work %s", c.it.id)
	if !out.failed {
		if c.it.leased.Equal(c.lease) {
			c.it.final, c.it.leased = "done", time.Time{}
		}
		f.settle(c)
	}
	return out
}

func (f *fakeKind) Retry(_ context.Context, c *claimed, r Retry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settle(c)
	f.retries = append(f.retries, r)
	c.it.due, c.it.leased = r.At, time.Time{}
	f.event("retry %s after %v", c.it.id, r.Delay)
}

func (f *fakeKind) Fail(_ context.Context, c *claimed, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settle(c)
	c.it.final, c.it.leased = "failed", time.Time{}
	f.event("fail %s: %v", c.it.id, err)
}

func (f *fakeKind) Release(ctx context.Context, c *claimed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settle(c)
	if ctx.Err() != nil {
		f.event("release %s with a dead context", c.it.id)
		return
	}
	c.it.attempts--
	c.it.leased = time.Time{}
	f.event("release %s", c.it.id)
}

func (f *fakeKind) snapshot() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

// item returns a copy of the item.
func (f *fakeKind) item(id string) fakeItem {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, it := range f.items {
		if it.id == id {
			return *it
		}
	}
	return fakeItem{}
}

// last is when the last event happened.
func (f *fakeKind) last() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastEvent
}

// at is when the event first happened (zero if it did not).
func (f *fakeKind) at(event string) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.eventAt[event]
}

// dueFake adds NextDue: the earliest due time of an open item.
type dueFake struct{ *fakeKind }

func (d dueFake) NextDue(context.Context) (time.Time, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var next time.Time
	for _, it := range d.items {
		if it.final == "" && (next.IsZero() || it.due.Before(next)) {
			next = it.due
		}
	}
	return next, !next.IsZero(), nil
}

// running is a runner under test.
type running[T any] struct {
	r      *Runner[T]
	cancel context.CancelFunc
	done   chan struct{}
}

// start runs a runner over k; call stop before the test's bubble ends.
func start[T any](k Kind[T], cfg Config) *running[T] {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = time.Hour // only wake-ups make the runner look
	}
	rn := &running[T]{r: New(k, cfg), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	rn.cancel = cancel
	go func() { rn.r.Run(ctx); close(rn.done) }()
	return rn
}

// stop cancels Run and waits for it; it returns how long that took.
func (rn *running[T]) stop() time.Duration {
	begin := time.Now()
	rn.cancel()
	<-rn.done
	return time.Since(begin)
}

var errBoom = errors.New("boom")

// TestOutcomes: the runner routes each outcome of Work by the retry policy,
// and a retry is claimed again when it falls due, not at the next poll.
func TestOutcomes(t *testing.T) {
	policy := Schedule{10 * time.Millisecond, 20 * time.Millisecond}
	tests := []struct {
		name   string
		work   func(attempt int) Outcome
		want   []string
		took   time.Duration // from the first claim to the end
		status string
	}{
		{"done", func(int) Outcome { return Done() },
			[]string{"claim a 1", "work a"}, 0, "done"},
		{"permanent failure", func(int) Outcome { return Permanent(errBoom) },
			[]string{"claim a 1", "work a", "fail a: boom"}, 0, "failed"},
		{"retry once, then done", func(n int) Outcome {
			if n == 1 {
				return Retryable(n, errBoom)
			}
			return Done()
		}, []string{"claim a 1", "work a", "retry a after 10ms", "claim a 2", "work a"}, 10 * time.Millisecond, "done"},
		{"retried until the policy has no attempt left", func(n int) Outcome { return Retryable(n, errBoom) }, []string{
			"claim a 1", "work a", "retry a after 10ms", "claim a 2", "work a", "retry a after 20ms",
			"claim a 3", "work a", "fail a: boom"}, 30 * time.Millisecond, "failed"},
		{"retryable failure without an error", func(int) Outcome { return Retryable(3, nil) },
			[]string{"claim a 1", "work a", "fail a: attempt failed"}, 0, "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake(func(_ context.Context, c *claimed) Outcome { return tt.work(c.attempt) })
				begin := time.Now()
				f.add("a", begin)
				rn := start(f, Config{Retry: policy}) // polls hourly
				defer rn.stop()
				time.Sleep(time.Minute)
				if got := f.snapshot(); !slices.Equal(got, tt.want) {
					t.Errorf("events\n got %q\nwant %q", got, tt.want)
				}
				if got := f.last().Sub(begin); got != tt.took {
					t.Errorf("the item ended %v after its first claim, want %v", got, tt.took)
				}
				if got := f.item("a").final; got != tt.status {
					t.Errorf("item ended %q, want %q", got, tt.status)
				}
				// An idle runner looks again after each item (the worker
				// for its next, then the dispatcher it wakes), and at each
				// retry; not in between (polling is hourly).
				f.mu.Lock()
				claims, attempts := f.claims, f.items[0].attempts
				f.mu.Unlock()
				if claims > 4*attempts+1 {
					t.Errorf("%d claims for %d attempts", claims, attempts)
				}
				for _, r := range f.retries {
					if r.Err != errBoom || r.Delay != policy[r.Attempt-1] {
						t.Errorf("retry %+v", r)
					}
				}
			})
		})
	}
}

// TestDrain: at shutdown the runner stops claiming, lets work in hand finish
// until DrainTimeout, then cancels it and releases what did not finish.
func TestDrain(t *testing.T) {
	const drain, grace = 100 * time.Millisecond, 50 * time.Millisecond
	tests := []struct {
		name string
		// work runs the attempt; finish is closed 30 ms after shutdown
		// began, later than cancellation for a drain that times out.
		work     func(ctx context.Context, finish <-chan struct{}) Outcome
		drain    time.Duration
		wantStop time.Duration // how long Run took after cancel
		want     []string
		status   string
		leased   bool
	}{
		{"finishes within the deadline", func(ctx context.Context, finish <-chan struct{}) Outcome {
			<-finish
			return Done()
		}, drain, 30 * time.Millisecond, []string{"claim a 1", "work a"}, "done", false},
		{"failure within the deadline is routed as usual", func(ctx context.Context, finish <-chan struct{}) Outcome {
			<-finish
			return Permanent(errBoom)
		}, drain, 30 * time.Millisecond, []string{"claim a 1", "work a", "fail a: boom"}, "failed", false},
		{"cut short, retryable: released", func(ctx context.Context, _ <-chan struct{}) Outcome {
			<-ctx.Done()
			return Retryable(1, ctx.Err())
		}, 10 * time.Millisecond, 10 * time.Millisecond, []string{"claim a 1", "work a", "release a"}, "", false},
		{"cut short, permanent: released all the same", func(ctx context.Context, _ <-chan struct{}) Outcome {
			<-ctx.Done()
			return Permanent(ctx.Err())
		}, 10 * time.Millisecond, 10 * time.Millisecond, []string{"claim a 1", "work a", "release a"}, "", false},
		{"cut short but recorded by the kind: left alone", func(ctx context.Context, _ <-chan struct{}) Outcome {
			<-ctx.Done()
			return Done()
		}, 10 * time.Millisecond, 10 * time.Millisecond, []string{"claim a 1", "work a"}, "done", false},
		{"ignores cancellation: Run gives up after the grace, lease kept", func(ctx context.Context, finish <-chan struct{}) Outcome {
			<-finish
			time.Sleep(time.Second)
			return Retryable(1, errBoom)
		}, 10 * time.Millisecond, 10*time.Millisecond + grace, []string{"claim a 1"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				finish := make(chan struct{})
				f := newFake(func(ctx context.Context, _ *claimed) Outcome { return tt.work(ctx, finish) })
				f.add("a", time.Now())
				rn := start(f, Config{DrainTimeout: tt.drain, CancelGrace: grace})
				synctest.Wait() // the item is in hand
				time.AfterFunc(30*time.Millisecond, func() { close(finish) })
				if took := rn.stop(); took != tt.wantStop {
					t.Errorf("Run returned %v after cancel, want %v", took, tt.wantStop)
				}
				if got := f.snapshot(); !slices.Equal(got, tt.want) {
					t.Errorf("events\n got %q\nwant %q", got, tt.want)
				}
				it := f.item("a")
				if it.final != tt.status || !it.leased.IsZero() != tt.leased {
					t.Errorf("item %+v, want final %q, leased %v", it, tt.status, tt.leased)
				}
				if tt.status == "" && !tt.leased && it.attempts != 0 {
					t.Errorf("released item has %d attempts counted, want 0", it.attempts)
				}
				// Nothing is claimed after shutdown.
				f.add("b", time.Now())
				rn.r.Notify()
				time.Sleep(2 * time.Second)
				for _, e := range f.snapshot() {
					if strings.HasPrefix(e, "claim b") {
						t.Errorf("claimed after shutdown: %q", e)
					}
				}
			})
		})
	}
}

// TestExpiredLeaseIsReclaimed: an item whose worker vanished (claimed,
// never settled) is claimed again once its lease has expired.
func TestExpiredLeaseIsReclaimed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(nil)
		begin := time.Now()
		f.add("a", begin)
		// A worker that is gone now claimed the item with a 300 ms lease.
		if _, ok, _ := f.Claim(context.Background(), Claim{Now: begin, Lease: 300 * time.Millisecond}); !ok {
			t.Fatal("dead claim failed")
		}
		f.mu.Lock()
		f.settle(&claimed{}) // not in anyone's hand any more
		f.mu.Unlock()
		rn := start(f, Config{PollInterval: 100 * time.Millisecond, Lease: time.Minute})
		defer rn.stop()
		time.Sleep(time.Second)
		want := []string{"claim a 1", "claim a 2", "work a"}
		if got := f.snapshot(); !slices.Equal(got, want) {
			t.Fatalf("events %q, want %q", got, want)
		}
		// Claimable after 300 ms (the lease ends strictly before the
		// claim); the runner looks every 100 ms.
		if got := f.at("claim a 2").Sub(begin); got != 400*time.Millisecond {
			t.Errorf("reclaimed %v after the dead claim, want 400ms (first poll after the lease)", got)
		}
	})
}

// TestWake: what makes an idle runner look for work.
func TestWake(t *testing.T) {
	tests := []struct {
		name string
		// queued: the item is queued before the runner starts, due dueIn
		// after; else it is queued, due at once, while the runner is idle,
		// and wake runs.
		queued bool
		dueIn  time.Duration
		due    bool // the kind implements Due
		wake   func(r *Runner[*claimed], sig Signal)
		poll   time.Duration
		want   time.Duration // claimed this long after the item was due
	}{
		{"notify", false, 0, false, func(r *Runner[*claimed], _ Signal) { r.Notify() }, time.Hour, 0},
		{"notify through the signal given to New", false, 0, false, func(_ *Runner[*claimed], sig Signal) { sig.Notify() }, time.Hour, 0},
		{"poll", false, 0, false, func(*Runner[*claimed], Signal) {}, 250 * time.Millisecond, 250 * time.Millisecond},
		{"the kind's next due time", true, 40 * time.Millisecond, true, nil, time.Hour, 0},
		{"without Due, the poll", true, 40 * time.Millisecond, false, nil, 250 * time.Millisecond, 210 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake(nil)
				sig := NewSignal()
				var k Kind[*claimed] = f
				if tt.due {
					k = dueFake{f}
				}
				dueAt := time.Now().Add(tt.dueIn)
				if tt.queued {
					f.add("a", dueAt)
				}
				rn := start(k, Config{PollInterval: tt.poll, Wake: sig})
				defer rn.stop()
				synctest.Wait() // idle
				if !tt.queued {
					f.add("a", dueAt)
					tt.wake(rn.r, sig)
				}
				time.Sleep(time.Minute)
				if got := f.at("claim a 1").Sub(dueAt); got != tt.want {
					t.Errorf("claimed %v after the item was due, want %v (events %q)", got, tt.want, f.snapshot())
				}
			})
		})
	}
}

// TestNotifyNeverBlocks: Notify returns at once whether the runner is busy,
// idle, stopped or never started, and on a nil Signal.
func TestNotifyNeverBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		f := newFake(func(context.Context, *claimed) Outcome { <-release; return Done() })
		f.add("a", time.Now())
		rn := start(f, Config{Workers: 1})
		synctest.Wait() // the only worker is busy
		idle := New[*claimed](newFake(nil), Config{})
		var nilSig Signal
		for range 10000 {
			rn.r.Notify() // busy
			idle.Notify() // never started
			nilSig.Notify()
		}
		close(release)
		rn.stop()
		for range 10000 {
			rn.r.Notify() // stopped
		}
	})
}

// TestWorkers: at most Workers items are in hand, each slot is in one
// claim at a time, and one wake-up fans a burst out over every slot.
func TestWorkers(t *testing.T) {
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprint(workers, " workers"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake(func(context.Context, *claimed) Outcome { time.Sleep(10 * time.Millisecond); return Done() })
				rn := start(f, Config{Workers: workers})
				defer rn.stop()
				synctest.Wait()
				for i := range 12 {
					f.add(fmt.Sprint("item", i), time.Now())
				}
				rn.r.Notify() // once
				begin := time.Now()
				time.Sleep(time.Minute)
				f.mu.Lock()
				defer f.mu.Unlock()
				for _, it := range f.items {
					if it.final != "done" {
						t.Errorf("item %s: %+v", it.id, it)
					}
				}
				if f.maxInHand != workers || f.badSlot {
					t.Errorf("%d items in hand at most (want %d); a slot used twice at once: %v", f.maxInHand, workers, f.badSlot)
				}
				want := time.Duration(12/workers) * 10 * time.Millisecond
				if got := f.lastEvent.Sub(begin); got != want {
					t.Errorf("12 items of 10 ms took %v with %d workers, want %v", got, workers, want)
				}
			})
		})
	}
}

// TestClaimError: a failed claim is logged and tried again after the
// first pause (claimPauseBase, within its jitter), not at the next poll
// nor when the item is due (it is due at once), and the recovery is
// logged.
func TestClaimError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(nil)
		f.add("a", time.Now())
		k := &flakyClaim{fakeKind: f, fails: 1}
		var logs strings.Builder
		var mu sync.Mutex
		rn := start[*claimed](dueFlaky{k}, Config{Name: "test queue", PollInterval: time.Hour,
			Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
		defer rn.stop()
		time.Sleep(time.Second)
		if f.item("a").final != "done" {
			t.Fatalf("events %q", f.snapshot())
		}
		lo, hi := pauseBounds(1)
		if got := f.at("claim a 1").Sub(k.failedAt); got < lo || got > hi {
			t.Errorf("claimed %v after the failed claim, want the first pause, %v to %v", got, lo, hi)
		}
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(logs.String(), `msg="test queue claim failed" err="database is locked" failures=1`) ||
			!strings.Contains(logs.String(), `msg="test queue claims succeed again" failures=1 unlogged=0`) {
			t.Errorf("log %q", logs.String())
		}
	})
}

// pauseBounds is the shortest and the longest pause after n failed claims
// in a row.
func pauseBounds(n int) (lo, hi time.Duration) {
	d := backoffDelay(n)
	spread := time.Duration(float64(d) * claimPauseJitter)
	return d - spread, d + spread
}

// dueFlaky is a flakyClaim whose item is always due: as the webhook
// worker's store, whose reads (NextDue) work while its claims, writes,
// fail.
type dueFlaky struct{ *flakyClaim }

func (d dueFlaky) NextDue(ctx context.Context) (time.Time, bool, error) {
	return dueFake{d.fakeKind}.NextDue(ctx)
}

// failingClaims is the fake kind whose claims fail while failing is set,
// with its items due (NextDue) all the while. Claims and their times are
// counted.
type failingClaims struct {
	*fakeKind
	failing  atomic.Bool
	mu       sync.Mutex
	attempts []time.Time // every Claim call
	failures []time.Time // the failed ones
}

var errFull = errors.New("database or disk is full")

func (k *failingClaims) Claim(ctx context.Context, c Claim) (*claimed, bool, error) {
	k.mu.Lock()
	k.attempts = append(k.attempts, time.Now())
	if k.failing.Load() {
		k.failures = append(k.failures, time.Now())
		k.mu.Unlock()
		return nil, false, errFull
	}
	k.mu.Unlock()
	return k.fakeKind.Claim(ctx, c)
}

func (k *failingClaims) NextDue(ctx context.Context) (time.Time, bool, error) {
	return dueFake{k.fakeKind}.NextDue(ctx)
}

// counts returns the claims made and failed so far.
func (k *failingClaims) counts() (attempts, failures int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.attempts), len(k.failures)
}

// TestClaimFailuresBackOff: while every claim fails (a full disk under the
// webhook worker) with items due and many slots, the runner
// claims a handful of times a minute, not hundreds of times a second:
// each failure in a row doubles the pause, up to claimPauseMax; the error
// is logged once and then summarised at most every claimLogEvery, with
// the number of failures left out. When claims work again the items go
// out within one pause, the recovery is logged once, and the next run of
// failures starts again from the shortest pause.
func TestClaimFailuresBackOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(nil)
		for i := range 100 {
			f.add(fmt.Sprint("item", i), time.Now())
		}
		k := &failingClaims{fakeKind: f}
		k.failing.Store(true)
		var logs strings.Builder
		var mu sync.Mutex
		logLines := func(msg string) int {
			mu.Lock()
			defer mu.Unlock()
			return strings.Count(logs.String(), `msg="q `+msg+`"`)
		}
		rn := start[*claimed](k, Config{Name: "q", Workers: 32, PollInterval: time.Second,
			Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
		defer rn.stop()

		// Before the backoff, 10 s of this made 10,001 claims and as many
		// error lines (the 1 ms floor of the wait for a due item).
		time.Sleep(10 * time.Second)
		attempts, _ := k.counts()
		if attempts < 5 || attempts > 12 {
			t.Errorf("%d claims in the first 10 s of failures, want 5 to 12 (50 ms doubling to %v)", attempts, claimPauseMax)
		}
		if n := logLines("claim failed"); n != 1 {
			t.Errorf("%d error lines in the first 10 s, want 1", n)
		}
		// At the cap: one claim per claimPauseMax, give or take the
		// jitter, and one summary line per claimLogEvery.
		time.Sleep(time.Minute)
		total, _ := k.counts()
		if perMin := total - attempts; perMin < 9 || perMin > 16 {
			t.Errorf("%d claims in a minute at the longest pause, want about %d", perMin, int(time.Minute/claimPauseMax))
		}
		if n := logLines("claim failed"); n < 2 || n > 3 {
			t.Errorf("%d error lines after 70 s of failures, want the first and a summary per %v", n, claimLogEvery)
		}
		mu.Lock()
		if !strings.Contains(logs.String(), "unlogged=") {
			t.Errorf("no summary line says how many failures it did not log: %q", logs.String())
		}
		mu.Unlock()
		k.mu.Lock()
		for i := 1; i < len(k.attempts); i++ {
			if gap := k.attempts[i].Sub(k.attempts[i-1]); gap > 0 && gap < time.Duration(float64(claimPauseBase)*(1-claimPauseJitter)) {
				t.Errorf("claims %v apart while failing", gap)
			}
		}
		k.mu.Unlock()

		// Claims work again: every item goes out within the longest pause.
		recovered := time.Now()
		k.failing.Store(false)
		time.Sleep(2 * claimPauseMax)
		for i := range 100 {
			if it := f.item(fmt.Sprint("item", i)); it.final != "done" {
				t.Fatalf("item%d not done %v after claims work again: %+v", i, 2*claimPauseMax, it)
			}
		}
		if took := f.last().Sub(recovered); took > time.Duration(float64(claimPauseMax)*(1+claimPauseJitter)) {
			t.Errorf("the backlog took %v after the recovery", took)
		}
		if n := logLines("claims succeed again"); n != 1 {
			t.Errorf("%d recovery lines, want 1", n)
		}

		// A new run of failures starts from the shortest pause.
		_, before := k.counts()
		f.add("late", time.Now())
		k.failing.Store(true)
		rn.r.Notify()
		time.Sleep(time.Second)
		k.mu.Lock()
		fails := k.failures[before:]
		k.mu.Unlock()
		lo, hi := pauseBounds(1)
		if gap := fails[1].Sub(fails[0]); gap < lo || gap > hi {
			t.Errorf("first pause of a new run of failures %v, want %v to %v", gap, lo, hi)
		}
		if n := logLines("claim failed"); n < 3 {
			t.Errorf("the new run of failures was not logged at once (%d error lines)", n)
		}
	})
}

type flakyClaim struct {
	*fakeKind
	fails    int
	failedAt time.Time
}

func (k *flakyClaim) Claim(ctx context.Context, c Claim) (*claimed, bool, error) {
	if k.fails > 0 {
		k.fails--
		k.failedAt = c.Now
		return nil, false, errors.New("database is locked")
	}
	return k.fakeKind.Claim(ctx, c)
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func TestPolicies(t *testing.T) {
	type step struct {
		attempt int
		delay   time.Duration
		ok      bool
	}
	ms := time.Millisecond
	tests := []struct {
		name   string
		policy Policy
		steps  []step
	}{
		{"backoff: doubling, capped, attempts in all", Backoff{Base: 200 * ms, Max: time.Second, Attempts: 5}, []step{
			{0, 200 * ms, true}, {1, 200 * ms, true}, {2, 400 * ms, true}, {3, 800 * ms, true}, {4, time.Second, true},
			{5, 0, false}, {1000, 0, false}}},
		{"backoff: one attempt means no retry", Backoff{Base: 200 * ms, Max: time.Second, Attempts: 1}, []step{{1, 0, false}}},
		{"schedule: N delays, N+1 attempts", Schedule{10 * time.Second, time.Minute, 5 * time.Minute}, []step{
			{0, 10 * time.Second, true}, {1, 10 * time.Second, true}, {2, time.Minute, true}, {3, 5 * time.Minute, true},
			{4, 0, false}}},
		{"empty schedule", Schedule{}, []step{{1, 0, false}}},
		{"never", Never{}, []step{{1, 0, false}, {0, 0, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range tt.steps {
				if d, ok := tt.policy.Next(s.attempt); d != s.delay || ok != s.ok {
					t.Errorf("Next(%d) = %v, %v; want %v, %v", s.attempt, d, ok, s.delay, s.ok)
				}
			}
		})
	}
	b := Backoff{Base: 200 * ms, Max: time.Second}
	for attempt, want := range map[int]time.Duration{1: 200 * ms, 3: 800 * ms, 4: time.Second, 1 << 20: time.Second} {
		if got := b.Delay(attempt); got != want {
			t.Errorf("Delay(%d) = %v, want %v", attempt, got, want)
		}
	}
}

// shutdownDuringClaim is a kind whose second claim succeeds just as
// shutdown begins, as a store's claim can when its commit was already
// under way.
type shutdownDuringClaim struct {
	*fakeKind
	mu     sync.Mutex
	n      int
	cancel func()
}

func (k *shutdownDuringClaim) Claim(ctx context.Context, c Claim) (*claimed, bool, error) {
	it, ok, err := k.fakeKind.Claim(context.WithoutCancel(ctx), c)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n++; k.n == 2 {
		k.cancel()
	}
	return it, ok, err
}

// TestClaimAtShutdownIsWorked: an item a worker claimed for itself is
// worked (or released) even when shutdown began during its claim, never
// left leased until its lease runs out.
func TestClaimAtShutdownIsWorked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(nil)
		f.add("a", time.Now())
		f.add("b", time.Now())
		ctx, cancel := context.WithCancel(context.Background())
		k := &shutdownDuringClaim{fakeKind: f, cancel: cancel}
		New[*claimed](k, Config{Workers: 1, DrainTimeout: 100 * time.Millisecond, PollInterval: time.Hour,
			Logger: slog.New(slog.DiscardHandler)}).Run(ctx)
		if it := f.item("b"); it.final == "" && !it.leased.IsZero() {
			t.Errorf("item b claimed (attempt %d) but neither worked nor released (events %q)", it.attempts, f.snapshot())
		}
	})
}
