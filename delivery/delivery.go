// Package delivery is the webhook delivery worker: it claims due deliveries
// from the store's outbox with a lease, sends each with webhook.Send (signed
// afresh on every attempt), records the outcome, and schedules the next
// attempt from the retry schedule or marks the delivery failed once the
// schedule is exhausted (CONTRACT section 7).
//
// Wake-up: Notify (the outbox hook calls it when a job's final transaction
// writes deliveries) starts a claim at once; the claim waits for the store's
// write slot, so it runs after that transaction commits. While idle the
// worker also sleeps only until the earliest pending delivery is due (a
// retry), and looks at the database at least every PollInterval.
//
// Restarts: all state is in the database. A delivery whose worker died
// mid-attempt keeps its lease until it expires (Config.Lease, longer than
// the 10 s attempt limit) and is then claimed again; its Service-Delivery id
// is unchanged, so receivers can drop the repeat. Such a lost attempt is not
// counted in attempts, which count recorded outcomes only.
//
// Shutdown: when Run's context ends, no new claims are made; attempts in
// flight may finish for DrainTimeout, after which they are cancelled and
// their deliveries released (due again at once, attempt not counted).
//
// Limits: delivery is at least once, not exactly once; deliveries are not
// ordered (not even per endpoint); at most Workers attempts run at a time.
package delivery

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"locrisk/store"
	"locrisk/webhook"
)

// Signal wakes a worker. It is made before the worker (the store's outbox
// hook needs it, and the worker needs the store), so it is its own type.
type Signal chan struct{}

// NewSignal makes a Signal.
func NewSignal() Signal {
	// One pending wake-up is enough: the worker claims until nothing is due.
	return make(Signal, 1)
}

// Notify wakes the worker without blocking. Safe on a nil Signal (no-op).
func (s Signal) Notify() {
	select {
	case s <- struct{}{}:
	default:
	}
}

// Config tunes the worker; zero fields take the defaults in brackets.
type Config struct {
	// Schedule is the delays between attempts [webhook.DefaultSchedule()].
	Schedule []time.Duration
	// AllowPrivate lets deliveries reach private and loopback addresses
	// (--webhook-allow-private); otherwise the client refuses them at
	// connect time, whatever the host resolved to at endpoint creation.
	AllowPrivate bool
	// Client sends the attempts [webhook.NewClient(AllowPrivate)].
	Client *http.Client
	// Workers is the number of attempts in flight at most [4].
	Workers int
	// Lease is how long a claim holds a delivery; it should exceed
	// webhook.Timeout so a slow attempt is not sent twice [30s].
	Lease time.Duration
	// PollInterval bounds how long the worker sleeps when idle [1s].
	PollInterval time.Duration
	// DrainTimeout is how long shutdown waits for attempts in flight [5s].
	DrainTimeout time.Duration
	// Wake is the signal the outbox hook raises [a new Signal].
	Wake   Signal
	Logger *slog.Logger // [slog.Default()]
	Now    func() time.Time
}

// Worker delivers webhook events. Create it with New, start it with Run.
type Worker struct {
	st  *store.Store
	cfg Config
	log *slog.Logger
}

// New makes a worker over st; nothing runs until Run.
func New(st *store.Store, cfg Config) *Worker {
	if cfg.Schedule == nil {
		cfg.Schedule = webhook.DefaultSchedule()
	}
	if cfg.Client == nil {
		cfg.Client = webhook.NewClient(cfg.AllowPrivate)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 5 * time.Second
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
	return &Worker{st: st, cfg: cfg, log: cfg.Logger}
}

// Notify wakes the worker now (new deliveries were written).
func (w *Worker) Notify() { w.cfg.Wake.Notify() }

// Run claims and sends deliveries until ctx ends, then drains (see the
// package comment) and returns.
func (w *Worker) Run(ctx context.Context) {
	// Attempts in flight outlive ctx until the drain deadline.
	sendCtx, cancelSends := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelSends()
	w.log.Info("webhook delivery worker started", "workers", w.cfg.Workers,
		"attempts", webhook.MaxAttempts(w.cfg.Schedule), "allow_private", w.cfg.AllowPrivate)

	slots := make(chan struct{}, w.cfg.Workers)
	var wg sync.WaitGroup
	// Go 1.23 timers: Reset needs no draining of an expired timer.
	timer := time.NewTimer(w.cfg.PollInterval)
	defer timer.Stop()
loop:
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			break loop
		}
		t, ok, err := w.st.ClaimWebhookDelivery(ctx, w.cfg.Lease, w.cfg.Now())
		if ok {
			wg.Go(func() {
				defer func() { <-slots }()
				w.attempt(sendCtx, t)
				// The outcome may have scheduled a retry earlier than the
				// dispatcher's current sleep; let it look again.
				w.Notify()
			})
			continue
		}
		<-slots
		if err != nil && ctx.Err() == nil {
			w.log.Error("claiming a webhook delivery failed", "err", err)
		}
		timer.Reset(w.idleWait(ctx))
		select {
		case <-ctx.Done():
			break loop
		case <-w.cfg.Wake:
		case <-timer.C:
		}
	}

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(w.cfg.DrainTimeout):
		w.log.Warn("webhook attempts still in flight at shutdown; cancelling and releasing them", "timeout", w.cfg.DrainTimeout)
		cancelSends()
		<-done
	}
	w.log.Info("webhook delivery worker stopped")
}

// idleWait is how long to sleep with nothing claimable: until the earliest
// pending delivery is due, at most PollInterval.
func (w *Worker) idleWait(ctx context.Context) time.Duration {
	wait := w.cfg.PollInterval
	next, ok, err := w.st.NextWebhookDue(ctx)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("reading the next webhook due time failed", "err", err)
		}
		return wait
	}
	if ok {
		// A millisecond at least: the stored times have millisecond
		// precision, so "due now" may still be a fraction away.
		wait = min(wait, max(next.Sub(w.cfg.Now()), time.Millisecond))
	}
	return wait
}

// attempt makes one attempt of a claimed delivery and records it.
func (w *Worker) attempt(ctx context.Context, t store.DeliveryTask) {
	started := w.cfg.Now()
	// Finish (and record) before the lease runs out, so no other worker
	// takes the delivery over while this attempt is still open.
	attemptCtx, cancel := context.WithTimeout(ctx, min(webhook.Timeout, w.cfg.Lease))
	res := webhook.Send(attemptCtx, w.cfg.Client, webhook.Attempt{
		URL: t.URL, Secret: t.Secret, Event: t.EventType, DeliveryID: t.ID, Body: t.Body,
	}, started)
	cancel()
	n := t.Attempts + 1
	attrs := []any{"delivery_id", t.ID, "endpoint_id", t.EndpointID, "event_id", t.EventID,
		"attempt", n, "response_status", res.StatusCode, "duration_ms", float64(res.Duration.Microseconds()) / 1000}

	// Record with a context that survives shutdown: the attempt happened.
	recCtx, recCancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer recCancel()

	if ctx.Err() != nil && !res.Success {
		// Shutdown cut the attempt short: hand it back uncounted.
		if err := w.st.ReleaseWebhookDelivery(recCtx, t); err != nil {
			w.log.Warn("releasing a webhook delivery failed; it is retried when its lease expires", append(attrs, "err", err)...)
			return
		}
		w.log.Info("webhook attempt", append(attrs, "outcome", "released", "reason", "shutdown")...)
		return
	}

	out := store.DeliveryAttempt{Success: res.Success, ResponseStatus: res.StatusCode, Started: started}
	if !res.Success {
		out.Error = attemptError(res)
		if next, ok := webhook.NextAttempt(w.cfg.Schedule, n, w.cfg.Now()); ok {
			out.NextAttempt = &next
		}
	}
	status, err := w.st.RecordWebhookAttempt(recCtx, t, out, w.cfg.Now())
	if err != nil {
		if errors.Is(err, store.ErrLeaseLost) {
			w.log.Warn("webhook delivery lease lost before the attempt was recorded", append(attrs, "success", res.Success)...)
			return
		}
		w.log.Error("recording a webhook attempt failed; it is retried when its lease expires", append(attrs, "err", err)...)
		return
	}
	attrs = append(attrs, "outcome", status)
	if !res.Success {
		attrs = append(attrs, "error", out.Error)
		if status == store.DeliveryPending && out.NextAttempt != nil {
			attrs = append(attrs, "next_attempt_in_ms", out.NextAttempt.Sub(w.cfg.Now()).Milliseconds())
		}
		w.log.Warn("webhook attempt", attrs...)
		return
	}
	w.log.Info("webhook attempt", attrs...)
}

// excerptInError bounds the receiver's text quoted in a delivery's error.
const excerptInError = 100

// attemptError is the delivery's error text: the sanitised reason and, for
// a response, a short sanitised excerpt of what the receiver said.
func attemptError(res webhook.Result) string {
	msg := res.Err
	if msg == "" {
		msg = "attempt failed"
	}
	if res.StatusCode > 0 && res.Excerpt != "" {
		msg += ": " + webhook.Excerpt([]byte(res.Excerpt), excerptInError)
	}
	return msg
}
