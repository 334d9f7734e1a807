// Package webhookworker is the webhook delivery worker; package webhook is
// the library it uses. It claims due deliveries from the store's outbox
// with a lease, sends each with webhook.Send (signed afresh on every
// attempt), records the outcome, and schedules the next attempt from the
// retry schedule or marks the delivery failed once the schedule is
// exhausted (docs/api.md, Webhooks).
//
// Wake-up: Notify (the outbox hook calls it when a job's final transaction
// writes deliveries) starts a claim at once; the claim waits for the store's
// write slot, so it runs after that transaction commits. While idle the
// worker also sleeps only until the earliest pending delivery is due (a
// retry), and looks at the database at least every PollInterval.
//
// Restarts: all state is in the database. A delivery whose worker died
// mid-attempt keeps its lease until it expires (Config.Lease, longer than
// the 10 s attempt limit) and is then claimed again, unless serve, which
// knows at start that every delivery lease in its file is a dead
// predecessor's, hands them back first (store.ReleaseLeftLeases); its
// Service-Delivery id is unchanged, so receivers can drop the repeat. Such
// a lost attempt is not counted in attempts, which count recorded
// outcomes only.
//
// Shutdown: when Run's context ends, no new claims are made; attempts in
// flight may finish for DrainTimeout, after which they are cancelled and
// their deliveries released (due again at once, attempt not counted).
//
// Limits: delivery is at least once, not exactly once; deliveries are not
// ordered (not even per endpoint); at most Workers attempts run at a time,
// at most PerEndpoint of them to one endpoint and at most PerAccount to one
// account's endpoints together. Claims skip endpoints and accounts at their
// limit and take turns between accounts (the account whose last claim is
// the oldest first, then the earliest due delivery; see
// locrisk.WebhookOutbox.ClaimWebhookDelivery), so one receiver that answers slowly (or not
// at all) holds PerEndpoint workers, an account with many such receivers
// holds PerAccount, and one account's backlog does not queue ahead of
// another account's delivery.
package webhookworker

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/queue"
	"github.com/locrisk/locrisk/internal/webhook"
)

// Signal wakes a worker. It is made before the worker (the store's outbox
// hook needs it, and the worker needs the store), so it is its own type:
// the queue runner's wake-up signal. Notify wakes the worker without
// blocking and is safe on a nil Signal (no-op).
type Signal = queue.Signal

// NewSignal makes a Signal.
func NewSignal() Signal { return queue.NewSignal() }

// Defaults of Config.Workers, Config.PerEndpoint and Config.PerAccount.
const (
	DefaultWorkers     = 32
	DefaultPerEndpoint = 2
	DefaultPerAccount  = 8
)

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
	// Workers is the number of attempts in flight at most [32]. It is
	// well above PerAccount so that accounts whose receivers are all slow
	// at once (each holding PerAccount workers for up to webhook.Timeout)
	// still leave workers for the rest: with the defaults, three such
	// accounts leave 8 workers free. An attempt is a goroutine waiting on
	// the network, so idle workers cost next to nothing.
	Workers int
	// PerEndpoint is the most attempts in flight to one endpoint [2]: a
	// slow receiver delays only its own deliveries (docs/api.md, Delivery
	// and signing).
	PerEndpoint int
	// PerAccount is the most attempts in flight to one account's
	// endpoints together [8]. An account may have 20 active endpoints,
	// which PerEndpoint alone would let hold 40 workers, more than the
	// pool; with the defaults four accounts must be saturated at once
	// before a fifth account's delivery waits for a worker.
	PerAccount int
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
	// Observer is told of each recorded attempt [nil: nothing is
	// measured].
	Observer Observer
}

// Outcomes of an attempt, as Observer.DeliveryAttempt reports them.
const (
	OutcomeSucceeded     = "succeeded"      // the receiver answered 2xx
	OutcomeFailedAttempt = "failed_attempt" // failed; the delivery is due again on the schedule
	OutcomeFailedFinal   = "failed_final"   // failed, and the delivery is failed for good
)

// Observer watches delivery attempts (serve's metrics listener, docs/operations.md,
// Metrics). It is called by the workers, so it must be quick and safe for
// concurrent use.
type Observer interface {
	// DeliveryAttempt is called once an attempt's outcome is recorded in
	// the store: one of the Outcome constants, and how long the request
	// took. Attempts released at shutdown or whose outcome could not be
	// recorded are not reported; they are sent again.
	DeliveryAttempt(outcome string, d time.Duration)
}

// Worker delivers webhook events. Create it with New, start it with Run.
type Worker struct {
	cfg    Config
	log    *slog.Logger
	runner *queue.Runner[*attempt]
}

// New makes a worker over st; nothing runs until Run.
func New(st locrisk.WebhookOutbox, cfg Config) *Worker {
	if cfg.Schedule == nil {
		cfg.Schedule = webhook.DefaultSchedule()
	}
	if cfg.Client == nil {
		cfg.Client = webhook.NewClient(cfg.AllowPrivate)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.PerEndpoint <= 0 {
		cfg.PerEndpoint = DefaultPerEndpoint
	}
	if cfg.PerAccount <= 0 {
		cfg.PerAccount = DefaultPerAccount
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
	k := &deliveryKind{st: st, cfg: cfg, log: cfg.Logger}
	return &Worker{cfg: cfg, log: cfg.Logger, runner: queue.New(k, queue.Config{
		Name: "webhook delivery worker", Workers: cfg.Workers, Lease: cfg.Lease, PollInterval: cfg.PollInterval,
		// After the drain deadline, cancelled attempts return at once and
		// are released within recordTimeout: wait for them.
		DrainTimeout: cfg.DrainTimeout, CancelGrace: 0, ReleaseTimeout: recordTimeout,
		Retry: queue.Schedule(cfg.Schedule), Wake: cfg.Wake, Logger: cfg.Logger, Now: cfg.Now,
	})}
}

// Notify wakes the worker now (new deliveries were written).
func (w *Worker) Notify() { w.runner.Notify() }

// Run claims and sends deliveries until ctx ends, then drains (see the
// package comment) and returns.
func (w *Worker) Run(ctx context.Context) {
	w.log.Info("webhook delivery worker started", "workers", w.cfg.Workers, "per_endpoint", w.cfg.PerEndpoint,
		"per_account", w.cfg.PerAccount,
		"attempts", webhook.MaxAttempts(w.cfg.Schedule), "allow_private", w.cfg.AllowPrivate)
	w.runner.Run(ctx)
	w.log.Info("webhook delivery worker stopped")
}

// recordTimeout bounds recording (or releasing) an attempt, which happens
// even after shutdown has cancelled the attempt: the attempt happened.
const recordTimeout = 5 * time.Second

// deliveryKind is webhook deliveries as the queue runner works them.
type deliveryKind struct {
	st  locrisk.WebhookOutbox
	cfg Config
	log *slog.Logger
}

// attempt is one attempt of a claimed delivery.
type attempt struct {
	task    locrisk.DeliveryTask
	started time.Time
	res     webhook.Result
}

// attrs are the attempt's log attributes.
func (a *attempt) attrs() []any {
	return []any{"delivery_id", a.task.ID, "endpoint_id", a.task.EndpointID, "event_id", a.task.EventID,
		"attempt", a.task.Attempts + 1, "response_status", a.res.StatusCode,
		"duration_ms", float64(a.res.Duration.Microseconds()) / 1000}
}

func (k *deliveryKind) Claim(ctx context.Context, c queue.Claim) (*attempt, bool, error) {
	t, ok, err := k.st.ClaimWebhookDelivery(ctx, c.Lease, k.limits(), c.Now)
	if err != nil || !ok {
		return nil, false, err
	}
	return &attempt{task: t}, true, nil
}

// NextDue is when the earliest pending delivery becomes claimable: an idle
// worker sleeps until then, at most PollInterval.
func (k *deliveryKind) NextDue(ctx context.Context) (time.Time, bool, error) {
	return k.st.NextWebhookDue(ctx, k.limits(), k.cfg.Now())
}

// limits are the claim's limits on attempts in flight.
func (k *deliveryKind) limits() locrisk.DeliveryLimits {
	return locrisk.DeliveryLimits{PerEndpoint: k.cfg.PerEndpoint, PerAccount: k.cfg.PerAccount}
}

// Work sends the delivery once and records a success; a failure goes back
// to the runner, which retries it on the schedule, fails it once the
// schedule is exhausted, or releases it when shutdown cut it short.
func (k *deliveryKind) Work(ctx context.Context, a *attempt) queue.Outcome {
	t := a.task
	a.started = k.cfg.Now()
	// Finish (and record) before the lease runs out, so no other worker
	// takes the delivery over while this attempt is still open.
	attemptCtx, cancel := context.WithTimeout(ctx, min(webhook.Timeout, k.cfg.Lease))
	a.res = webhook.Send(attemptCtx, k.cfg.Client, webhook.Attempt{
		URL: t.URL, Secret: t.Secret, Event: t.EventType, DeliveryID: t.ID, EventID: t.EventID, Body: t.Body,
	}, a.started)
	cancel()
	if a.res.Success {
		k.record(ctx, a, nil)
		return queue.Done()
	}
	// The schedule counts from ScheduleStart: a redelivery starts a fresh
	// one (docs/api.md, Webhooks).
	return queue.Retryable(t.Attempts-t.ScheduleStart+1, errors.New(attemptError(a.res)))
}

// Retry records the failed attempt with the next one due at r.At.
func (k *deliveryKind) Retry(ctx context.Context, a *attempt, r queue.Retry) { k.record(ctx, a, &r.At) }

// Fail records the failed attempt as the last.
func (k *deliveryKind) Fail(ctx context.Context, a *attempt, _ error) { k.record(ctx, a, nil) }

// Release hands an attempt that shutdown cut short back, uncounted.
func (k *deliveryKind) Release(ctx context.Context, a *attempt) {
	if err := k.st.ReleaseWebhookDelivery(ctx, a.task); err != nil {
		k.log.Warn("releasing a webhook delivery failed; it is retried when its lease expires", append(a.attrs(), "err", err)...)
		return
	}
	k.log.Info("webhook attempt", append(a.attrs(), "outcome", "released", "reason", "shutdown")...)
}

// record records the attempt; a failure is due again at next, or final
// when next is nil.
func (k *deliveryKind) record(ctx context.Context, a *attempt, next *time.Time) {
	attrs := a.attrs()
	// Record with a context that survives shutdown: the attempt happened.
	recCtx, recCancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer recCancel()

	res := a.res
	out := locrisk.DeliveryAttempt{Success: res.Success, ResponseStatus: res.StatusCode, Started: a.started}
	if !res.Success {
		out.Error = attemptError(res)
		out.NextAttempt = next
	}
	status, err := k.st.RecordWebhookAttempt(recCtx, a.task, out, k.cfg.Now())
	if err != nil {
		if errors.Is(err, locrisk.ErrLeaseLost) {
			k.log.Warn("webhook delivery lease lost before the attempt was recorded", append(attrs, "success", res.Success)...)
			return
		}
		k.log.Error("recording a webhook attempt failed; it is retried when its lease expires", append(attrs, "err", err)...)
		return
	}
	attrs = append(attrs, "outcome", status)
	if k.cfg.Observer != nil {
		k.cfg.Observer.DeliveryAttempt(attemptOutcome(res.Success, status), res.Duration)
	}
	if !res.Success {
		attrs = append(attrs, "error", out.Error)
		if status == locrisk.DeliveryPending && out.NextAttempt != nil {
			attrs = append(attrs, "next_attempt_in_ms", out.NextAttempt.Sub(k.cfg.Now()).Milliseconds())
		}
		k.log.Warn("webhook attempt", attrs...)
		return
	}
	k.log.Info("webhook attempt", attrs...)
}

// attemptOutcome names a recorded attempt for the Observer: status is the
// delivery's status after it.
func attemptOutcome(success bool, status string) string {
	switch {
	case success:
		return OutcomeSucceeded
	case status == locrisk.DeliveryPending:
		return OutcomeFailedAttempt
	default:
		return OutcomeFailedFinal
	}
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
