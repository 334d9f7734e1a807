// Package queue runs leased work from a durable queue. One Runner serves
// one kind of work (report jobs, webhook deliveries); the kind says how to
// claim, work and record its items (Kind), the runner does the rest:
//
//   - Claim: one dispatcher goroutine claims due items, with a lease, while
//     one of Workers worker slots is free, and hands each to a goroutine of
//     its own; so at most Workers items are in hand at once, and a burst
//     fans out over the slots without any wake-up passing. A worker that
//     has settled its item claims the next one for its slot itself, and
//     gives the slot back to the dispatcher only when nothing is due; busy
//     workers thus claim side by side, and their claims and outcomes share
//     the store's commits instead of queueing behind one dispatcher.
//   - Work: the kind works the item and says how it went (Outcome). Success
//     is recorded by the kind itself, in the transaction that ends the item.
//   - Retry policy: a failed attempt that may be retried goes back to the
//     queue after the delay the Policy gives for it (Kind.Retry), or fails
//     for good once the policy has no attempt left (Kind.Fail).
//   - Wake: Notify wakes the dispatcher without blocking; wake-ups coalesce
//     into one pending token. Idle, the dispatcher also wakes after
//     PollInterval, when a retry it recorded falls due, and, for a kind
//     that knows (Due), when its next item falls due. After each item it
//     looks again, so a freed slot or an earlier retry is used at once.
//   - Failed claims: a claim that fails (the store cannot take the write:
//     a full disk, another process's lock held past the busy wait) pauses
//     every slot's claims for a backoff that grows with each failure in a
//     row and ends at the first claim that succeeds; the error is logged
//     once, then summarised at most once per claimLogEvery (claimFailures).
//   - Drain: when Run's context ends the dispatcher stops claiming; items in
//     hand may finish for DrainTimeout, after which their context is
//     cancelled, and an item whose attempt was cut short is handed back
//     uncounted (Kind.Release) for this or another process to claim again.
//     An item the kind cannot release keeps its lease until it expires and
//     is claimed again then.
//
// All queue state lives in the kind's store, so any number of processes may
// run a Runner over the same queue; the lease decides who holds an item.
package queue

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Kind is one kind of queued work. T is a claimed item: whatever the kind
// needs to work it and to record the outcome under its claim (a pointer
// lets Work keep what it learned for Retry, Fail and Release). The runner
// calls the methods of one item from one goroutine, in order: Claim, Work,
// then at most one of Retry, Fail and Release. Each method logs its own
// transition and its own store failures.
type Kind[T any] interface {
	// Claim takes the next due item for worker slot c.Worker, leased
	// until c.Now+c.Lease; ok is false when nothing is due. ctx ends at
	// shutdown.
	Claim(ctx context.Context, c Claim) (item T, ok bool, err error)
	// Work makes one attempt at the item. It records a success itself and
	// returns Done; a failure it returns as Retryable or Permanent, for
	// the runner to route. ctx is cancelled when the drain deadline passes.
	Work(ctx context.Context, item T) Outcome
	// Retry records the failed attempt and puts the item back in the queue,
	// due at r.At.
	Retry(ctx context.Context, item T, r Retry)
	// Fail records the failed attempt as the item's last.
	Fail(ctx context.Context, item T, err error)
	// Release hands the item back, due at once, without counting the
	// attempt that shutdown cut short. ctx outlives shutdown, bounded by
	// Config.ReleaseTimeout.
	Release(ctx context.Context, item T)
}

// Due is implemented by a kind that can tell when its next item falls due
// (a retry, or the end of a lease); an idle runner then sleeps only until
// then. ok is false when nothing is pending.
type Due interface {
	NextDue(ctx context.Context) (at time.Time, ok bool, err error)
}

// Claim is what a claim needs from the runner.
type Claim struct {
	Worker int           // the worker slot the item goes to, 0..Workers-1
	Now    time.Time     // Config.Now at the claim
	Lease  time.Duration // Config.Lease
}

// Retry is a failed attempt going back to the queue.
type Retry struct {
	Attempt int           // the attempt that failed, from Outcome
	Delay   time.Duration // the policy's delay after it
	At      time.Time     // Config.Now + Delay: when the item is due again
	Err     error         // the attempt's error, from Outcome
}

// Outcome is how an attempt went. Make one with Done, Retryable or
// Permanent; the zero Outcome is Done.
type Outcome struct {
	failed    bool
	retryable bool
	attempt   int
	err       error
}

// Done says Work has finished with the item: it recorded the result, or
// found that its claim had been lost, or recorded a failure it decided on
// itself. The runner does nothing more with it.
func Done() Outcome { return Outcome{} }

// Retryable says the attempt (1-based, counting across the item's
// attempts) failed in a way another attempt may fix; the runner retries it
// if the policy has an attempt left, else fails it.
func Retryable(attempt int, err error) Outcome {
	return Outcome{failed: true, retryable: true, attempt: attempt, err: failure(err)}
}

// Permanent says the attempt failed in a way no retry can fix; the runner
// fails the item (unless shutdown cut the attempt short: then it is
// released, as any failed attempt is).
func Permanent(err error) Outcome {
	return Outcome{failed: true, err: failure(err)}
}

func failure(err error) error {
	if err == nil {
		return errors.New("attempt failed")
	}
	return err
}

// Err is the attempt's error; nil for Done.
func (o Outcome) Err() error { return o.err }

// Config tunes a runner; zero fields take the defaults in brackets.
type Config struct {
	// Name starts the runner's own log messages ["queue"].
	Name string
	// Workers is the most items in hand at once [1].
	Workers int
	// Lease is how long a claim holds an item [30s].
	Lease time.Duration
	// PollInterval is the longest an idle runner sleeps: it picks up items
	// due later, queued by other processes, or whose lease expired [1s].
	PollInterval time.Duration
	// DrainTimeout is how long shutdown lets items in hand finish before
	// cancelling them [10s].
	DrainTimeout time.Duration
	// CancelGrace is how long Run still waits, after cancelling the items
	// in hand, for their workers to return; 0 waits as long as it takes.
	// A worker that outlasts it leaves its item leased until the lease
	// expires.
	CancelGrace time.Duration
	// ReleaseTimeout bounds Kind.Release [5s].
	ReleaseTimeout time.Duration
	// Retry says when a retryable failure is tried again [never].
	Retry Policy
	// Wake is the runner's wake-up signal [a new Signal]. Pass one when
	// something must be able to wake the runner before it exists.
	Wake   Signal
	Logger *slog.Logger // [slog.Default()]
	// Now is the clock for claims and retry times [time.Now].
	Now func() time.Time
}

// Signal wakes a runner. One pending wake-up is enough: the woken runner
// claims until nothing is due, so further wake-ups coalesce into it.
type Signal chan struct{}

// NewSignal makes a Signal.
func NewSignal() Signal { return make(Signal, 1) }

// Notify wakes the runner without blocking. Safe on a nil Signal (no-op).
func (s Signal) Notify() {
	select {
	case s <- struct{}{}:
	default:
	}
}

// Runner claims and works the items of one kind. Make it with New, start it
// with Run (once).
type Runner[T any] struct {
	kind Kind[T]
	due  Due // nil when the kind does not implement Due
	cfg  Config
	log  *slog.Logger

	mu sync.Mutex
	// alarms are the times (on the real clock) when retries this runner
	// recorded fall due, earliest first. A claim covers, and removes,
	// every alarm that has passed when it starts.
	alarms []time.Time

	fails claimFailures
}

// New makes a runner for kind; nothing runs until Run.
func New[T any](kind Kind[T], cfg Config) *Runner[T] {
	if cfg.Name == "" {
		cfg.Name = "queue"
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 10 * time.Second
	}
	if cfg.ReleaseTimeout <= 0 {
		cfg.ReleaseTimeout = 5 * time.Second
	}
	if cfg.Retry == nil {
		cfg.Retry = Never{}
	}
	if cfg.Wake == nil {
		cfg.Wake = NewSignal()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	due, _ := any(kind).(Due)
	return &Runner[T]{kind: kind, due: due, cfg: cfg, log: cfg.Logger}
}

// Notify wakes the runner now; call it after queueing items. It never
// blocks.
func (r *Runner[T]) Notify() { r.cfg.Wake.Notify() }

// Run claims and works items until ctx ends, then drains (see the package
// comment) and returns: once the items in hand are settled, or at the
// latest DrainTimeout + CancelGrace after ctx ends when CancelGrace is set.
func (r *Runner[T]) Run(ctx context.Context) {
	// Work in hand outlives ctx until the drain deadline.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()

	// Free worker slots, first in first out, so every slot takes turns.
	free := make(chan int, r.cfg.Workers)
	for i := range r.cfg.Workers {
		free <- i
	}
	var wg sync.WaitGroup
	// Go 1.23 timers: Reset needs no draining of an expired timer.
	timer := time.NewTimer(r.cfg.PollInterval)
	defer timer.Stop()
	for {
		var slot int
		select {
		case slot = <-free:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		if pause := r.fails.pause(); pause > 0 {
			// Claims are failing (claimFailures): neither a wake-up nor
			// an item due ends the pause, only its end or shutdown.
			free <- slot
			timer.Reset(pause)
			select {
			case <-ctx.Done():
			case <-timer.C:
			}
			if ctx.Err() != nil {
				break
			}
			continue
		}
		item, ok, err := r.claim(ctx, slot)
		if ok {
			wg.Go(func() {
				// The worker claims its next item itself, as soon as it
				// has recorded this one, rather than waiting for the
				// dispatcher: the workers' claims and outcomes then reach
				// the store together and share its commits (docs/operations.md,
				// The database file).
				// An item claimed is always worked (or, cut short by the
				// drain, released), even when shutdown began while its
				// claim committed.
				for ok {
					r.work(workCtx, item)
					if ctx.Err() != nil || r.fails.pause() > 0 {
						break
					}
					item, ok, _ = r.claim(ctx, slot)
				}
				free <- slot
				// A slot is free, and the outcome may have made an item
				// due sooner than the dispatcher's sleep: look again.
				r.Notify()
			})
			continue
		}
		free <- slot
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			continue // logged by claim; the pause begins at the top
		}
		timer.Reset(r.idleWait(ctx))
		select {
		case <-ctx.Done():
		case <-r.cfg.Wake:
		case <-timer.C:
		}
		if ctx.Err() != nil {
			break
		}
	}
	r.drain(&wg, cancelWork)
}

// claim takes the next due item for slot, and counts a failure
// (claimFailures) unless shutdown cut the claim short.
func (r *Runner[T]) claim(ctx context.Context, slot int) (T, bool, error) {
	now := r.cfg.Now()
	started := time.Now()
	r.alarmsPassed(started)
	item, ok, err := r.kind.Claim(ctx, Claim{Worker: slot, Now: now, Lease: r.cfg.Lease})
	if err == nil || ctx.Err() == nil {
		r.fails.note(r.log, r.cfg.Name, started, err)
	}
	return item, ok, err
}

// Claim failures. A claim that fails says nothing of when the next one
// may succeed, and the items it was after stay due: retrying when the
// next one falls due (at least a millisecond) made the webhook worker
// claim and log about 690 times a second, on a quarter of a core, while
// the disk was full. So a failed claim pauses every slot's
// claims, for claimPauseBase doubling with each failure in a row up to
// claimPauseMax, each pause drawn within ±claimPauseJitter of that so that
// the two runners of a server (jobs and deliveries) do not retry in step.
// A claim that succeeds, whether it found an item or none, ends the run.
// The pause bounds how soon claims resume once the store takes writes
// again.
const (
	claimPauseBase   = 50 * time.Millisecond
	claimPauseMax    = 5 * time.Second
	claimPauseJitter = 0.2
	// claimLogEvery: the first failure of a run is logged at once, later
	// ones at most once per claimLogEvery, with the number not logged.
	claimLogEvery = 30 * time.Second
)

// claimFailures is the run of failed claims of one runner, shared by its
// dispatcher and workers. Times are on the real clock.
type claimFailures struct {
	mu       sync.Mutex
	n        int       // failures in a row
	failedAt time.Time // when the last counted failure ended
	until    time.Time // no claim begins before this
	loggedAt time.Time // the last "claim failed" line; zero: none in this run
	unlogged int       // failures since that line
}

// pause is how long claims must still wait, 0 when they may go ahead.
func (f *claimFailures) pause() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return max(time.Until(f.until), 0)
}

// note records the outcome of a claim that began at started. Claims that
// were under way together fail together: one that began before the last
// counted failure ended (the workers' own claims, made side by side) does
// not lengthen the pause.
func (f *claimFailures) note(log *slog.Logger, name string, started time.Time, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if err == nil {
		if f.n > 0 {
			log.Info(name+" claims succeed again", "failures", f.n, "unlogged", f.unlogged)
		}
		f.n, f.unlogged = 0, 0
		f.failedAt, f.until, f.loggedAt = time.Time{}, time.Time{}, time.Time{}
		return
	}
	if f.n == 0 || started.After(f.failedAt) {
		f.n++
		f.failedAt = now
		f.until = now.Add(jitter(backoffDelay(f.n)))
	}
	if !f.loggedAt.IsZero() && now.Sub(f.loggedAt) < claimLogEvery {
		f.unlogged++
		return
	}
	attrs := []any{"err", err, "failures", f.n, "pause", f.until.Sub(now).Round(time.Millisecond)}
	if f.unlogged > 0 {
		attrs = append(attrs, "unlogged", f.unlogged)
	}
	log.Error(name+" claim failed", attrs...)
	f.loggedAt, f.unlogged = now, 0
}

// backoffDelay is the pause after n failed claims in a row.
func backoffDelay(n int) time.Duration {
	return Backoff{Base: claimPauseBase, Max: claimPauseMax}.Delay(n)
}

// jitter draws a duration within ±claimPauseJitter of d.
func jitter(d time.Duration) time.Duration {
	spread := time.Duration(float64(d) * claimPauseJitter)
	return d - spread + rand.N(2*spread+1)
}

// work takes one claimed item through Work and routes a failure.
func (r *Runner[T]) work(ctx context.Context, item T) {
	out := r.kind.Work(ctx, item)
	if !out.failed {
		return
	}
	if ctx.Err() != nil {
		// Shutdown cut the attempt short: hand the item back uncounted.
		relCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.ReleaseTimeout)
		defer cancel()
		r.kind.Release(relCtx, item)
		return
	}
	if out.retryable {
		if delay, ok := r.cfg.Retry.Next(out.attempt); ok {
			r.kind.Retry(ctx, item, Retry{Attempt: out.attempt, Delay: delay, At: r.cfg.Now().Add(delay), Err: out.err})
			r.addAlarm(time.Now().Add(delay))
			return
		}
	}
	r.kind.Fail(ctx, item, out.err)
}

// drain waits for the items in hand (the dispatcher has stopped claiming).
func (r *Runner[T]) drain(wg *sync.WaitGroup, cancelWork context.CancelFunc) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(r.cfg.DrainTimeout):
	}
	r.log.Warn(r.cfg.Name+" drain timed out; cancelling and releasing the work in hand", "timeout", r.cfg.DrainTimeout)
	cancelWork()
	if r.cfg.CancelGrace <= 0 {
		<-done
		return
	}
	select {
	case <-done:
	case <-time.After(r.cfg.CancelGrace):
		r.log.Error(r.cfg.Name + " workers did not stop; their items are claimed again when the lease expires")
	}
}

// idleWait is how long to sleep with nothing claimable: until the next
// retry alarm or the kind's next due item, at most PollInterval.
func (r *Runner[T]) idleWait(ctx context.Context) time.Duration {
	wait := r.cfg.PollInterval
	if at, ok := r.nextAlarm(); ok {
		wait = min(wait, max(time.Until(at), time.Millisecond))
	}
	if r.due == nil {
		return wait
	}
	next, ok, err := r.due.NextDue(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Error(r.cfg.Name+" could not read when the next item is due", "err", err)
		}
		return wait
	}
	if ok {
		// A millisecond at least: stored times may have millisecond
		// precision, so "due now" may still be a fraction away.
		wait = min(wait, max(next.Sub(r.cfg.Now()), time.Millisecond))
	}
	return wait
}

func (r *Runner[T]) addAlarm(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, _ := slices.BinarySearchFunc(r.alarms, at, time.Time.Compare)
	r.alarms = slices.Insert(r.alarms, i, at)
}

// alarmsPassed drops the alarms at or before now: the claim about to start
// covers them.
func (r *Runner[T]) alarmsPassed(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := 0
	for i < len(r.alarms) && !r.alarms[i].After(now) {
		i++
	}
	r.alarms = slices.Delete(r.alarms, 0, i)
}

func (r *Runner[T]) nextAlarm() (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.alarms) == 0 {
		return time.Time{}, false
	}
	return r.alarms[0], true
}
