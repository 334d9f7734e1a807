// Package jobs is the report job scheduler: a pool of worker goroutines that
// claim queued jobs from the store with a lease, run the risk engine, and
// store the report and the job's completion in one transaction.
//
// Wake-up: Notify (called after jobs are inserted) wakes an idle worker at
// once; a worker that claims a job wakes a peer, so a burst of jobs fans out
// over the pool. Idle workers also poll every PollInterval, which picks up
// jobs whose retry backoff has passed, jobs inserted by another process,
// and jobs whose lease expired because their worker died.
//
// Leases are fixed (Config.Lease, 30 s by default) and not renewed: an
// assessment takes well under a millisecond, so a lease only ever expires
// when its worker is gone. If one did expire under a live worker, the store
// still lets only the lease holder complete the job, so a job never gets two
// reports.
//
// Retries: a transient error (code generation_failed) is retried with
// exponential backoff, BackoffBase * 2^(attempt-1) capped at BackoffMax
// (200 ms, 400 ms, 800 ms, ... by default: short, so a transient fault
// costs the caller little), until the job has used MaxAttempts attempts in
// all; then the job fails with error.transient=true and the API's retry
// endpoint may queue it again. Attempts count across retries, so a job
// retried through the API has one automatic attempt per retry once its
// first MaxAttempts are used. Permanent errors (generation_error,
// unsupported_location) fail the job at once.
//
// Shutdown: when Run's context is cancelled, workers stop claiming, finish
// the job in hand (bounded by DrainTimeout, after which the engine call is
// cancelled and the job released back to the queue uncounted) and Run
// returns.
package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"locrisk/ids"
	"locrisk/risk"
	"locrisk/store"
)

// Assessor is the engine as the scheduler needs it (risk.Engine satisfies it).
type Assessor interface {
	Assess(ctx context.Context, lat, lon float64) (*risk.Assessment, error)
}

// Error codes stored on failed jobs (job.error.code).
const (
	CodeTransient   = "generation_failed"    // a temporary failure; retryable
	CodePermanent   = "generation_error"     // the engine could not produce a report
	CodeUnsupported = "unsupported_location" // the point is outside coverage
)

// Error is a generation failure with the code and message the job shows.
// The engine (or a fault) returns one to say whether a retry may help; any
// other error from the engine is permanent, except ErrUnsupportedLocation,
// which gets its own code.
type Error struct {
	Code      string
	Message   string
	Transient bool
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Config tunes the scheduler; zero fields take the defaults in brackets.
type Config struct {
	Workers      int           // worker goroutines [runtime.NumCPU()]
	MaxAttempts  int           // attempts per job before a transient failure is final [3]
	Lease        time.Duration // how long a claim holds a job [30s]
	PollInterval time.Duration // idle workers look for work this often [250ms]
	Faults       Faults        // injected failures [none]
	Logger       *slog.Logger  // [slog.Default()]
	Now          func() time.Time

	BackoffBase  time.Duration // first retry delay [200ms]
	BackoffMax   time.Duration // retry delay cap [5s]
	DrainTimeout time.Duration // how long shutdown waits for jobs in hand [10s]
}

// Scheduler runs report jobs. Create it with New, start it with Run.
type Scheduler struct {
	st       *store.Store
	eng      Assessor
	cfg      Config
	log      *slog.Logger
	wake     chan struct{}
	instance string // distinguishes this process's lease owners from others'
}

// New makes a scheduler; nothing runs until Run.
func New(st *store.Store, eng Assessor, cfg Config) *Scheduler {
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.NumCPU()
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 3
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 250 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.BackoffBase <= 0 {
		cfg.BackoffBase = 200 * time.Millisecond
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = 5 * time.Second
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 10 * time.Second
	}
	return &Scheduler{
		st: st, eng: eng, cfg: cfg, log: cfg.Logger,
		// One pending token is enough: whoever takes it claims work and
		// passes the wake-up on while there is more.
		wake:     make(chan struct{}, 1),
		instance: ids.New("wrk_"),
	}
}

// Notify wakes an idle worker now. It never blocks; call it after inserting
// or re-queueing jobs.
func (s *Scheduler) Notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Backoff returns the delay before the automatic retry that follows a
// transient failure of the given attempt (1-based).
func (s *Scheduler) Backoff(attempt int) time.Duration {
	d := s.cfg.BackoffBase
	for i := 1; i < attempt && d < s.cfg.BackoffMax; i++ {
		d *= 2
	}
	return min(d, s.cfg.BackoffMax)
}

// Run starts the workers and blocks until ctx is cancelled and the workers
// have drained: jobs in hand finish, or after DrainTimeout are cancelled and
// released. It returns at the latest about DrainTimeout + 2 s after ctx ends
// even if the engine ignores cancellation; such a job's lease then expires
// and another worker (or the next start) runs it.
func (s *Scheduler) Run(ctx context.Context) {
	// Work in hand outlives ctx until the drain deadline.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()

	s.log.Info("scheduler started", "workers", s.cfg.Workers, "max_attempts", s.cfg.MaxAttempts,
		"lease", s.cfg.Lease, "faults", s.cfg.Faults.String())
	var wg sync.WaitGroup
	for i := range s.cfg.Workers {
		owner := fmt.Sprintf("%s-%d", s.instance, i)
		wg.Go(func() { s.worker(ctx, workCtx, owner) })
	}
	wg.Go(func() { s.janitor(ctx) })

	<-ctx.Done()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(s.cfg.DrainTimeout):
		s.log.Warn("scheduler drain timed out; cancelling jobs in hand", "timeout", s.cfg.DrainTimeout)
		cancelWork()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			s.log.Error("scheduler workers did not stop; their jobs will be reclaimed when the lease expires")
		}
	}
	s.log.Info("scheduler stopped")
}

// worker claims and runs jobs until ctx is cancelled.
func (s *Scheduler) worker(ctx, workCtx context.Context, owner string) {
	timer := time.NewTimer(s.cfg.PollInterval)
	defer timer.Stop()
	for ctx.Err() == nil {
		job, ok, err := s.st.ClaimJob(workCtx, owner, s.cfg.Lease, s.cfg.Now())
		if err != nil {
			s.log.Error("claim job failed", "worker", owner, "err", err)
		}
		if err != nil || !ok {
			timer.Reset(s.cfg.PollInterval)
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
			case <-timer.C:
			}
			continue
		}
		// There may be more: let an idle peer look while this one works.
		s.Notify()
		s.run(workCtx, owner, job)
	}
}

// run takes one claimed job to its next state.
func (s *Scheduler) run(ctx context.Context, owner string, job store.Job) {
	start := time.Now()
	s.log.Info("job transition", "job_id", job.ID, "from", store.StatusQueued, "to", store.StatusProcessing, "attempt", job.Attempts, "worker", owner)
	transition := func(to string, attrs ...any) {
		s.log.Info("job transition", append([]any{"job_id", job.ID, "from", store.StatusProcessing, "to", to,
			"attempt", job.Attempts, "duration_ms", float64(time.Since(start).Microseconds()) / 1000}, attrs...)...)
	}

	// A job taken over from a dead worker has already been charged the
	// attempt that worker started. Once that leaves no attempts, fail it
	// (transient, so it can be retried by hand) rather than run it again:
	// a job that kills its process every time must not loop forever.
	if job.Reclaimed && job.Attempts > s.cfg.MaxAttempts {
		msg := fmt.Sprintf("the job's worker stopped during its attempts (%d started); retry the job to run it again", job.Attempts-1)
		if _, err := s.st.FailJob(ctx, job.ID, owner, CodeTransient, msg, true, s.cfg.Now()); err != nil {
			s.storeFailed(ctx, owner, job, err)
			return
		}
		transition(store.StatusFailed, "error_code", CodeTransient, "reason", "worker lost")
		return
	}

	a, err := s.generate(ctx, job)
	if err == nil {
		var body []byte
		if body, err = json.Marshal(a); err != nil {
			err = fmt.Errorf("encode report: %w", err)
		} else {
			_, err = s.st.CompleteJob(ctx, job.ID, owner, store.Report{DataVersion: a.DataVersion, Body: body}, s.cfg.Now())
			switch {
			case err == nil:
				transition(store.StatusCompleted)
			case errors.Is(err, store.ErrLeaseLost):
				s.log.Warn("job lease lost before completion; another worker owns it", "job_id", job.ID, "worker", owner)
			default:
				s.storeFailed(ctx, owner, job, err)
			}
			return
		}
	}

	if ctx.Err() != nil {
		// Shutdown cut the attempt short: hand the job back uncounted.
		relCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if rerr := s.st.ReleaseJob(relCtx, job.ID, owner, s.cfg.Now()); rerr != nil {
			s.log.Error("release job failed; it will be reclaimed when its lease expires", "job_id", job.ID, "err", rerr)
			return
		}
		transition(store.StatusQueued, "reason", "shutdown")
		return
	}

	code, msg, transient := classify(err)
	if !errors.As(err, new(*Error)) && !errors.Is(err, risk.ErrUnsupportedLocation) {
		s.log.Error("report generation error", "job_id", job.ID, "attempt", job.Attempts, "err", err)
	}
	if transient && job.Attempts < s.cfg.MaxAttempts {
		delay := s.Backoff(job.Attempts)
		if err := s.st.RetryLater(ctx, job.ID, owner, s.cfg.Now().Add(delay), code, msg, s.cfg.Now()); err != nil {
			s.storeFailed(ctx, owner, job, err)
			return
		}
		transition(store.StatusQueued, "error_code", code, "retry_in_ms", delay.Milliseconds())
		time.AfterFunc(delay, s.Notify)
		return
	}
	if _, err := s.st.FailJob(ctx, job.ID, owner, code, msg, transient, s.cfg.Now()); err != nil {
		s.storeFailed(ctx, owner, job, err)
		return
	}
	transition(store.StatusFailed, "error_code", code, "transient", transient)
}

// storeFailed logs a store error on the way out of a job. The lease stays,
// so the job is retried when it expires; nothing is lost.
func (s *Scheduler) storeFailed(ctx context.Context, owner string, job store.Job, err error) {
	if errors.Is(err, store.ErrLeaseLost) {
		s.log.Warn("job lease lost; another worker owns it", "job_id", job.ID, "worker", owner)
		return
	}
	s.log.Error("recording job outcome failed; the job runs again when its lease expires", "job_id", job.ID, "err", err)
}

// generate runs the fault injector, then the engine, turning a panic into
// a permanent error so one bad job cannot take the worker down.
func (s *Scheduler) generate(ctx context.Context, job store.Job) (a *risk.Assessment, err error) {
	if d := s.cfg.Faults.Delay(OpGenerate); d > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(d):
		}
	}
	if err := s.cfg.Faults.Check(OpGenerate, job.ID, job.Attempts); err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("report generation panicked", "job_id", job.ID, "panic", fmt.Sprint(p))
			a, err = nil, &Error{Code: CodePermanent, Message: "report generation failed with an internal error"}
		}
	}()
	a, err = s.eng.Assess(ctx, job.Latitude, job.Longitude)
	if err == nil && a == nil {
		err = errors.New("engine returned no assessment")
	}
	return a, err
}

// classify maps a generation error to the job's error fields.
func classify(err error) (code, msg string, transient bool) {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.Code, e.Message, e.Transient
	case errors.Is(err, risk.ErrUnsupportedLocation):
		return CodeUnsupported, "coordinate outside supported United States coverage", false
	default:
		// Details go to the log, not to the API caller.
		return CodePermanent, "report generation failed with an internal error", false
	}
}

// janitor does periodic upkeep: forgetting expired idempotency keys.
func (s *Scheduler) janitor(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := s.st.PurgeIdempotencyKeys(ctx, s.cfg.Now()); err != nil && ctx.Err() == nil {
			s.log.Warn("purging expired idempotency keys failed", "err", err)
		} else if n > 0 {
			s.log.Info("purged expired idempotency keys", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
