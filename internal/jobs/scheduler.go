// Package jobs is the report job scheduler: it runs report jobs on a
// queue.Runner (a pool of Workers worker slots) that claims queued jobs from
// the store with a lease; a worker runs the risk engine and stores the
// report and the job's completion in one transaction.
//
// Wake-up: Notify (called after jobs are inserted) wakes the runner at once,
// and it claims while a worker is free, so a burst of jobs fans out over the
// pool. Idle, it also looks every PollInterval, which picks up jobs inserted
// by another process and jobs whose lease expired because their worker died,
// and when a backoff it scheduled has passed.
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
// Shutdown: when Run's context is cancelled, the runner stops claiming, the
// workers finish the job in hand (bounded by DrainTimeout, after which the
// engine call is cancelled and the job released back to the queue
// uncounted) and Run returns.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/queue"
	"github.com/locrisk/locrisk/internal/risk"
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

// DefaultWorkers is the default number of workers: the number of CPUs,
// and at least 8. A worker spends much of a job waiting for the commits
// of its claim and its outcome, which the store shares between the
// writes that arrive together (docs/operations.md, The database file), so more
// workers than CPUs keep the CPUs busy and make each commit serve more
// jobs: a 100-item batch completed in about two thirds of the time with
// 8 workers as with 2 on a 2-core machine (BenchmarkBatch100).
func DefaultWorkers() int { return max(8, runtime.NumCPU()) }

// Config tunes the scheduler; zero fields take the defaults in brackets.
type Config struct {
	Workers      int           // worker goroutines [DefaultWorkers()]
	MaxAttempts  int           // attempts per job before a transient failure is final [3]
	Lease        time.Duration // how long a claim holds a job [30s]
	PollInterval time.Duration // idle workers look for work this often [250ms]
	Faults       Faults        // injected failures [none]
	Logger       *slog.Logger  // [slog.Default()]
	Now          func() time.Time
	Observer     Observer // told of attempts and outcomes [nil: nothing is measured]

	BackoffBase  time.Duration // first retry delay [200ms]
	BackoffMax   time.Duration // retry delay cap [5s]
	DrainTimeout time.Duration // how long shutdown waits for jobs in hand [10s]

	// Rescore runs the re-score lane of watch items (rescore.go); nil
	// runs none.
	Rescore *Rescore

	// OwnerPrefix starts the lease owner of each of the scheduler's
	// workers, followed by an id of this scheduler and the worker's
	// number ["wrk_"]. serve gives its own (cmd/locrisk), so that when it
	// starts it can take back the leases a server before it left without
	// touching those of `locrisk report`, whose worker may run beside it
	// (store.ReleaseLeftLeases).
	OwnerPrefix string
}

// Outcomes of an attempt, as Observer.JobFinished reports them.
const (
	OutcomeCompleted = "completed" // the report is stored
	OutcomeFailed    = "failed"    // the job failed for good (until retried through the API)
	OutcomeRetried   = "retried"   // a transient failure; queued again after a backoff
	OutcomeReleased  = "released"  // shutdown cut the attempt short; queued again, uncounted
)

// Observer watches the scheduler's attempts (serve's metrics listener,
// docs/operations.md, Metrics). Its methods are called by the workers, so they must
// be quick and safe for concurrent use.
type Observer interface {
	// JobStarted is called when a worker starts an attempt; reclaimed
	// says the job was taken over from a worker whose lease expired (that
	// worker's attempt was lost).
	JobStarted(reclaimed bool)
	// JobFinished is called once an attempt's outcome is recorded in the
	// store: one of the Outcome constants, and the time since the attempt
	// started. An attempt whose outcome could not be recorded (lease lost,
	// database error) is not reported; it runs again.
	JobFinished(outcome string, d time.Duration)
}

// Scheduler runs report jobs. Create it with New, start it with Run.
type Scheduler struct {
	st     locrisk.JobQueue
	eng    Assessor
	cfg    Config
	log    *slog.Logger
	policy queue.Backoff
	runner *queue.Runner[*run]
	// Completions in flight (complete): a worker hands its job's report
	// to one and claims its next job while the report commits. pending
	// bounds them, so a slow disk holds the workers back rather than
	// piling up reports; Run waits for the last before it returns.
	pending     chan struct{}
	completions sync.WaitGroup
	rescore     *rescoreLane // nil: no re-score lane
}

// pendingPerWorker is how many completions each worker may have in flight
// beside the job in its hands (Scheduler.pending).
const pendingPerWorker = 4

// New makes a scheduler; nothing runs until Run.
func New(st locrisk.JobQueue, eng Assessor, cfg Config) *Scheduler {
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers()
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
	if cfg.OwnerPrefix == "" {
		cfg.OwnerPrefix = "wrk_"
	}
	s := &Scheduler{st: st, eng: eng, cfg: cfg, log: cfg.Logger,
		policy:  queue.Backoff{Base: cfg.BackoffBase, Max: cfg.BackoffMax, Attempts: cfg.MaxAttempts},
		pending: make(chan struct{}, pendingPerWorker*cfg.Workers), rescore: newRescoreLane(cfg.Rescore, cfg.PollInterval)}
	// instance distinguishes this process's lease owners from others'.
	instance := ids.New(cfg.OwnerPrefix)
	k := &jobKind{Scheduler: s, owners: make([]string, cfg.Workers)}
	for i := range k.owners {
		k.owners[i] = fmt.Sprintf("%s-%d", instance, i)
	}
	s.runner = queue.New(k, queue.Config{
		Name: "scheduler", Workers: cfg.Workers, Lease: cfg.Lease, PollInterval: cfg.PollInterval,
		DrainTimeout: cfg.DrainTimeout, CancelGrace: 2 * time.Second, ReleaseTimeout: 2 * time.Second,
		Retry: s.policy, Logger: cfg.Logger, Now: cfg.Now,
	})
	return s
}

// Notify wakes the scheduler now. It never blocks; call it after inserting
// or re-queueing jobs.
func (s *Scheduler) Notify() { s.runner.Notify() }

// Backoff returns the delay before the automatic retry that follows a
// transient failure of the given attempt (1-based).
func (s *Scheduler) Backoff(attempt int) time.Duration { return s.policy.Delay(attempt) }

// Run starts the workers and blocks until ctx is cancelled and the workers
// have drained: jobs in hand finish, or after DrainTimeout are cancelled and
// released. It returns at the latest about DrainTimeout + 2 s after ctx ends
// even if the engine ignores cancellation; such a job's lease then expires
// and another worker (or the next start) runs it.
func (s *Scheduler) Run(ctx context.Context) {
	s.log.Info("scheduler started", "workers", s.cfg.Workers, "max_attempts", s.cfg.MaxAttempts,
		"lease", s.cfg.Lease.String(), "faults", s.cfg.Faults.String())
	var planner sync.WaitGroup
	if s.rescore != nil {
		s.log.Info("re-score lane", "rate_per_second", s.rescore.cfg.Rate, "data_version", s.rescore.cfg.Versions.Data,
			"methodology_version", s.rescore.cfg.Versions.Methodology)
		planner.Add(1)
		go func() {
			defer planner.Done()
			s.planRescores(ctx)
		}()
	}
	s.runner.Run(ctx)
	planner.Wait()
	s.completions.Wait()
	s.log.Info("scheduler stopped")
}

// jobKind is report jobs as the queue runner works them: the scheduler and
// the lease owner of each worker slot.
type jobKind struct {
	*Scheduler
	owners []string
}

// run is a claimed job in the hands of one worker.
type run struct {
	job   locrisk.Job
	owner string
	start time.Time
}

func (k *jobKind) Claim(ctx context.Context, c queue.Claim) (*run, bool, error) {
	owner := k.owners[c.Worker]
	job, ok, err := k.st.ClaimJob(ctx, owner, c.Lease, c.Now)
	if err != nil {
		return nil, false, fmt.Errorf("worker %s: %w", owner, err)
	}
	if !ok && k.rescore != nil {
		// No caller's job is runnable: the re-score lane's turn.
		if job, ok, err = k.rescore.claim(ctx, owner, c.Lease, c.Now); err != nil {
			return nil, false, fmt.Errorf("worker %s: %w", owner, err)
		}
	}
	if !ok {
		return nil, false, nil
	}
	return &run{job: job, owner: owner}, true, nil
}

// transition logs the job's move from processing to another status, and
// tells the observer the attempt's outcome.
func (k *jobKind) transition(r *run, to, outcome string, attrs ...any) {
	if k.cfg.Observer != nil {
		k.cfg.Observer.JobFinished(outcome, time.Since(r.start))
	}
	k.log.Info("job transition", append([]any{"job_id", r.job.ID, "from", locrisk.StatusProcessing, "to", to,
		"attempt", r.job.Attempts, "duration_ms", float64(time.Since(r.start).Microseconds()) / 1000}, attrs...)...)
}

// Work runs one claimed job: it completes the job, or fails a job whose
// workers keep dying, or returns the generation error for the runner to
// retry, fail or (when shutdown cut the attempt short) release.
func (k *jobKind) Work(ctx context.Context, r *run) queue.Outcome {
	job, owner := r.job, r.owner
	r.start = time.Now()
	k.log.Info("job transition", "job_id", job.ID, "from", locrisk.StatusQueued, "to", locrisk.StatusProcessing, "attempt", job.Attempts, "worker", owner)
	if k.cfg.Observer != nil {
		k.cfg.Observer.JobStarted(job.Reclaimed)
	}

	// A job taken over from a dead worker has already been charged the
	// attempt that worker started. Once that leaves no attempts, fail it
	// (transient, so it can be retried by hand) rather than run it again:
	// a job that kills its process every time must not loop forever.
	if job.Reclaimed && job.Attempts > k.cfg.MaxAttempts {
		msg := fmt.Sprintf("the job's worker stopped during its attempts (%d started); retry the job to run it again", job.Attempts-1)
		if _, err := k.st.FailJob(ctx, job.ID, owner, CodeTransient, msg, true, k.cfg.Now()); err != nil {
			k.storeFailed(r, err)
			return queue.Done()
		}
		k.transition(r, locrisk.StatusFailed, OutcomeFailed, "error_code", CodeTransient, "reason", "worker lost")
		return queue.Done()
	}

	a, err := k.generate(ctx, job)
	if err == nil {
		var rep locrisk.Report
		if rep, err = ReportOf(a); err == nil {
			k.complete(ctx, r, rep)
			return queue.Done()
		}
	}
	if _, _, transient := classify(err); transient {
		return queue.Retryable(job.Attempts, err)
	}
	return queue.Permanent(err)
}

// complete stores the job's report and marks it completed, in a goroutine
// of its own, so that the worker claims its next job while this one's
// commit waits for the disk (docs/performance.md, The whole path): with
// group commit, the completions of many jobs then share one commit. The
// job stays processing under the worker's lease until the completion
// commits, so a crash meanwhile loses nothing (the job runs again once
// its lease expires) and the store completes it once at most. The
// completion outlives a shutdown's cancellation (Run waits for it); at
// most pendingPerWorker per worker are in flight, beyond which the worker
// waits here.
func (k *jobKind) complete(ctx context.Context, r *run, rep locrisk.Report) {
	k.pending <- struct{}{}
	k.completions.Add(1)
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer func() {
			<-k.pending
			k.completions.Done()
		}()
		_, err := k.st.CompleteJob(ctx, r.job.ID, r.owner, rep, k.cfg.Now())
		switch {
		case err == nil:
			k.transition(r, locrisk.StatusCompleted, OutcomeCompleted)
		case errors.Is(err, locrisk.ErrLeaseLost):
			k.log.Warn("job lease lost before completion; another worker owns it", "job_id", r.job.ID, "worker", r.owner)
		default:
			k.storeFailed(r, err)
		}
	}()
}

// Retry queues the job again after a transient failure, for the backoff.
func (k *jobKind) Retry(ctx context.Context, r *run, rt queue.Retry) {
	code, msg, _ := k.failure(r, rt.Err)
	if err := k.st.RetryLater(ctx, r.job.ID, r.owner, rt.At, code, msg, k.cfg.Now()); err != nil {
		k.storeFailed(r, err)
		return
	}
	k.transition(r, locrisk.StatusQueued, OutcomeRetried, "error_code", code, "retry_in_ms", rt.Delay.Milliseconds())
}

// Fail fails the job: a permanent error, or a transient one with no
// attempts left.
func (k *jobKind) Fail(ctx context.Context, r *run, err error) {
	code, msg, transient := k.failure(r, err)
	if _, err := k.st.FailJob(ctx, r.job.ID, r.owner, code, msg, transient, k.cfg.Now()); err != nil {
		k.storeFailed(r, err)
		return
	}
	k.transition(r, locrisk.StatusFailed, OutcomeFailed, "error_code", code, "transient", transient)
}

// Release hands a job whose attempt shutdown cut short back to the queue,
// uncounted.
func (k *jobKind) Release(ctx context.Context, r *run) {
	if err := k.st.ReleaseJob(ctx, r.job.ID, r.owner, k.cfg.Now()); err != nil {
		k.log.Error("release job failed; it will be reclaimed when its lease expires", "job_id", r.job.ID, "err", err)
		return
	}
	k.transition(r, locrisk.StatusQueued, OutcomeReleased, "reason", "shutdown")
}

// failure classifies a generation error for the job, logging one that is
// neither an *Error nor an unsupported location.
func (k *jobKind) failure(r *run, err error) (code, msg string, transient bool) {
	if !errors.As(err, new(*Error)) && !errors.Is(err, risk.ErrUnsupportedLocation) {
		k.log.Error("report generation error", "job_id", r.job.ID, "attempt", r.job.Attempts, "err", err)
	}
	return classify(err)
}

// storeFailed logs a store error on the way out of a job. The lease stays,
// so the job is retried when it expires; nothing is lost.
func (k *jobKind) storeFailed(r *run, err error) {
	if errors.Is(err, locrisk.ErrLeaseLost) {
		k.log.Warn("job lease lost; another worker owns it", "job_id", r.job.ID, "worker", r.owner)
		return
	}
	k.log.Error("recording job outcome failed; the job runs again when its lease expires", "job_id", r.job.ID, "err", err)
}

// generate runs the fault injector, then the engine, turning a panic into
// a permanent error so one bad job cannot take the worker down.
func (s *Scheduler) generate(ctx context.Context, job locrisk.Job) (a *risk.Assessment, err error) {
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

// ReportOf is the report a job stores for the assessment a: its JSON body
// (json.Marshal's bytes, at a third of its cost: risk.Assessment.AppendJSON),
// its summary scores, which the store keeps beside the body
// (locrisk.Report.Scores), and the versions of its provenance, which a
// watch item keeps (docs/api.md, Watchlists). Tests that complete jobs in the scheduler's
// place use it too.
func ReportOf(a *risk.Assessment) (locrisk.Report, error) {
	body, err := a.AppendJSON(make([]byte, 0, 48<<10))
	if err != nil {
		return locrisk.Report{}, fmt.Errorf("encode report: %w", err)
	}
	sc := &locrisk.ReportScores{Overall: a.Summary.OverallScore, RiskLevel: a.Summary.RiskLevel}
	for _, m := range a.Summary.ModuleScores {
		sc.Modules = append(sc.Modules, locrisk.ModuleScore{Module: m.Module, Score: m.Value})
	}
	rep := locrisk.Report{DataVersion: a.DataVersion, Body: body, Scores: sc}
	if p := a.Provenance; p != nil {
		rep.MethodologyVersion, rep.EngineVersion = p.MethodologyVersion, p.EngineVersion
	}
	return rep, nil
}
