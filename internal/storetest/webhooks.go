package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

var webhookTests = []test{
	{"EndpointsCRUD", webhookEndpointsCRUD},
	{"EndpointLimit", webhookEndpointLimit},
	{"ClaimRecordRelease", claimRecordRelease},
	{"ListDeliveries", listWebhookDeliveries},
	{"QueueTest", queueTestWebhook},
	{"Redeliver", redeliverWebhook},
	{"OutboxRollsBackWithTheJob", outboxRollsBackWithTheJob},
}

const (
	evCompleted = "report.job.completed"
	evFailed    = "report.job.failed"
)

// testLimits are the delivery limits of tests about something else: the
// defaults of serve.
func testLimits() locrisk.DeliveryLimits {
	return locrisk.DeliveryLimits{PerEndpoint: 2, PerAccount: 8}
}

func newEndpoint(t testing.TB, s locrisk.Store, acct string, now time.Time, events ...string) locrisk.WebhookEndpoint {
	t.Helper()
	if len(events) == 0 {
		events = []string{evCompleted, evFailed}
	}
	e, secret, err := s.CreateWebhookEndpoint(context.Background(), locrisk.NewWebhookEndpoint{
		AccountID: acct, Name: "hook", URL: "https://hooks.example.com/x", Events: events}, now)
	if err != nil {
		t.Fatalf("create endpoint: %v", err)
	}
	if !strings.HasPrefix(secret, ids.SigningSecret) || len(secret) < len(ids.SigningSecret)+32 {
		t.Fatalf("secret %q is not a whsec_ secret", secret)
	}
	return e
}

// outbox is a JobFinalHook like the service's (internal/outbox): in each
// job's final transaction it writes an event of the job's final status to
// the account's subscribed endpoints, and remembers the deliveries by job.
// fail makes it fail, rolling the transition back.
type outbox struct {
	mu         sync.Mutex
	deliveries map[string][]string // by job id
	fail       bool
}

func (o *outbox) hook(ctx context.Context, tx locrisk.Tx, job locrisk.Job) error {
	typ := evCompleted
	if job.Status == locrisk.StatusFailed {
		typ = evFailed
	}
	eps, err := tx.WebhookSubscribers(ctx, job.AccountID, typ)
	if err != nil {
		return err
	}
	out, err := tx.InsertWebhookEvent(ctx, locrisk.WebhookEvent{ID: ids.New(ids.Event), AccountID: job.AccountID, Type: typ,
		JobID: job.ID, Body: []byte(`{"job":"` + job.ID + `"}`), CreatedUTC: *job.CompletedUTC}, eps)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fail {
		return errors.New("outbox refuses")
	}
	o.deliveries[job.ID] = out
	return nil
}

// openWithOutbox opens a store whose job transitions write webhook events.
func (h Harness) openWithOutbox(t testing.TB) (locrisk.Store, *outbox) {
	t.Helper()
	o := &outbox{deliveries: map[string][]string{}}
	return h.Open(t, Config{Now: func() time.Time { return t0 }, OnJobFinal: []locrisk.JobFinalHook{o.hook}}), o
}

// newEvent finishes a fresh job of acct at at (completed for evCompleted,
// failed for evFailed), so the outbox writes its event, and returns the
// event's delivery ids in endpoint order.
func newEvent(t testing.TB, s locrisk.Store, o *outbox, acct, typ string, at time.Time) []string {
	t.Helper()
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, apiJob(acct), at)
	if err != nil {
		t.Fatal(err)
	}
	ClaimJob(t, s, j.ID, at)
	if typ == evFailed {
		_, err = s.FailJob(ctx, j.ID, "tw", "generation_error", "failed", false, at)
	} else {
		_, err = s.CompleteJob(ctx, j.ID, "tw", locrisk.Report{DataVersion: "dv", Body: []byte(`{}`)}, at)
	}
	if err != nil {
		t.Fatal(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.deliveries[j.ID]
}

// DeliveryByID is the account's delivery id, as ListWebhookDeliveries
// shows it.
func DeliveryByID(t testing.TB, s locrisk.Store, acct, id string) locrisk.WebhookDelivery {
	t.Helper()
	ds, err := s.ListWebhookDeliveries(context.Background(), acct, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.ID == id {
			return d
		}
	}
	t.Fatalf("delivery %s not listed", id)
	return locrisk.WebhookDelivery{}
}

func testEvent(at time.Time) locrisk.WebhookEvent {
	return locrisk.WebhookEvent{ID: ids.New(ids.Event), Type: "webhook.test", Body: []byte(`{"test":true}`), CreatedUTC: at}
}

// outboxRollsBackWithTheJob: the events a hook writes commit with the job's
// final state; when the transition fails (here the hook itself fails after
// writing), the event's deliveries are gone with it and the job is still
// held, so the next completion writes the event once.
func outboxRollsBackWithTheJob(t testing.TB, h Harness) {
	s, o := h.openWithOutbox(t)
	ctx := context.Background()
	a := newAccount(t, s, 10)
	ep := newEndpoint(t, s, a.ID, t0, evCompleted)
	j := makeJob(t, s, a.ID, locrisk.StatusProcessing, false)
	o.fail = true
	if _, err := s.CompleteJob(ctx, j.ID, "w", locrisk.Report{Body: []byte(`{}`)}, t0); err == nil {
		t.Fatal("completion succeeded although its hook failed")
	}
	if ds, err := s.ListWebhookDeliveries(ctx, a.ID, "", 100); err != nil || len(ds) != 0 {
		t.Fatalf("deliveries after a rolled-back completion: %+v, %v", ds, err)
	}
	o.fail = false
	if _, err := s.CompleteJob(ctx, j.ID, "w", locrisk.Report{Body: []byte(`{}`)}, t0); err != nil {
		t.Fatal(err)
	}
	ds, err := s.ListWebhookDeliveries(ctx, a.ID, "", 100)
	if err != nil || len(ds) != 1 || ds[0].EndpointID != ep.ID || ds[0].JobID == nil || *ds[0].JobID != j.ID || ds[0].Status != locrisk.DeliveryPending {
		t.Errorf("deliveries after the completion: %+v, %v; want one pending to %s for %s", ds, err, ep.ID, j.ID)
	}
}

func webhookEndpointsCRUD(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a, b := newAccount(t, s, 10), newAccount(t, s, 10)
	e1 := newEndpoint(t, s, a.ID, t0, evCompleted)
	e2 := newEndpoint(t, s, a.ID, t0.Add(time.Second), evFailed, evCompleted)
	newEndpoint(t, s, b.ID, t0)

	list, _, err := s.ListWebhookEndpoints(ctx, a.ID, 0, "")
	if err != nil || len(list) != 2 || list[0].ID != e2.ID || list[1].ID != e1.ID {
		t.Fatalf("list = %+v, %v; want e2, e1", list, err)
	}
	if !slices.Equal(list[0].Events, []string{evFailed, evCompleted}) || !list[0].Active || list[0].DisabledUTC != nil {
		t.Errorf("listed endpoint %+v", list[0])
	}
	if fmt.Sprint(list[1]) != fmt.Sprint(e1) {
		t.Errorf("listed %+v, created %+v", list[1], e1)
	}
	if _, err := s.GetWebhookEndpoint(ctx, b.ID, e1.ID); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("get another account's endpoint: %v", err)
	}
	if err := s.DisableWebhookEndpoint(ctx, b.ID, e1.ID, t0); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("disable another account's endpoint: %v", err)
	}
	if err := s.DisableWebhookEndpoint(ctx, a.ID, "we_unknown", t0); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("disable unknown endpoint: %v", err)
	}
	for i := range 2 { // the second time is a no-op that still succeeds
		if err := s.DisableWebhookEndpoint(ctx, a.ID, e1.ID, t0.Add(time.Duration(i+1)*time.Minute)); err != nil {
			t.Fatalf("disable #%d: %v", i+1, err)
		}
	}
	got, err := s.GetWebhookEndpoint(ctx, a.ID, e1.ID)
	if err != nil || got.Active || got.DisabledUTC == nil || !got.DisabledUTC.Equal(t0.Add(time.Minute)) {
		t.Errorf("disabled endpoint = %+v, %v; want inactive, disabled at the first DELETE", got, err)
	}
	if _, _, err := s.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{AccountID: "acct_nope", Name: "n", URL: "https://x", Events: []string{evFailed}}, t0); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("endpoint for unknown account: %v, want ErrNotFound", err)
	}
	if _, _, err := s.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{AccountID: a.ID, Name: "n", URL: "https://x"}, t0); !errors.Is(err, locrisk.ErrInvalid) {
		t.Errorf("endpoint without events: %v, want ErrInvalid", err)
	}
}

func webhookEndpointLimit(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a, b := newAccount(t, s, 10), newAccount(t, s, 10)
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, limited := 0, 0
	for i := range locrisk.MaxActiveEndpoints + 5 {
		wg.Go(func() {
			_, _, err := s.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{AccountID: a.ID, Name: fmt.Sprint("e", i),
				URL: "https://hooks.example.com/", Events: []string{evCompleted}}, t0)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case errors.Is(err, locrisk.ErrEndpointLimit):
				limited++
			default:
				t.Errorf("create: %v", err)
			}
		})
	}
	wg.Wait()
	if created != locrisk.MaxActiveEndpoints || limited != 5 {
		t.Fatalf("created %d, limited %d; want %d and 5", created, limited, locrisk.MaxActiveEndpoints)
	}
	// Another account is not affected; disabling one frees a place.
	newEndpoint(t, s, b.ID, t0)
	list, _, _ := s.ListWebhookEndpoints(ctx, a.ID, 0, "")
	if err := s.DisableWebhookEndpoint(ctx, a.ID, list[0].ID, t0); err != nil {
		t.Fatal(err)
	}
	newEndpoint(t, s, a.ID, t0)
	if _, _, err := s.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{AccountID: a.ID, Name: "x", URL: "https://h/", Events: []string{evFailed}}, t0); !errors.Is(err, locrisk.ErrEndpointLimit) {
		t.Errorf("21st active endpoint: %v, want ErrEndpointLimit", err)
	}
}

func claimRecordRelease(t testing.TB, h Harness) {
	s, o := h.openWithOutbox(t)
	ctx := context.Background()
	a := newAccount(t, s, 100)
	ep := newEndpoint(t, s, a.ID, t0)
	ids1 := newEvent(t, s, o, a.ID, evCompleted, t0)
	id := ids1[0]

	if _, ok, _ := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), t0.Add(-time.Second)); ok {
		t.Fatal("claimed a delivery before it was due")
	}
	task, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), t0)
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if task.ID != id || task.EndpointID != ep.ID || task.URL != ep.URL || !strings.HasPrefix(task.Secret, ids.SigningSecret) ||
		task.EventType != evCompleted || !strings.HasPrefix(string(task.Body), `{"job":"job_`) || task.Attempts != 0 ||
		!task.Lease.Equal(t0.Add(time.Minute)) {
		t.Errorf("task = %+v", task)
	}
	// Leased: nobody else gets it until the lease has passed.
	if _, ok, _ := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), t0.Add(59*time.Second)); ok {
		t.Error("claimed a leased delivery")
	}
	if next, ok, err := s.NextWebhookDue(ctx, testLimits(), t0.Add(59*time.Second)); err != nil || !ok || !next.Equal(t0.Add(time.Minute)) {
		t.Errorf("NextWebhookDue while leased = %v %v %v, want the lease end", next, ok, err)
	}
	// The lease expires (the worker died): another claim takes over, and
	// the first claim can no longer record.
	task2, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), t0.Add(61*time.Second))
	if err != nil || !ok || task2.ID != id || task2.Lease.Equal(task.Lease) {
		t.Fatalf("takeover claim: %+v %v %v", task2, ok, err)
	}
	if _, err := s.RecordWebhookAttempt(ctx, task, locrisk.DeliveryAttempt{Success: true, ResponseStatus: 200, Started: t0}, t0); !errors.Is(err, locrisk.ErrLeaseLost) {
		t.Errorf("record with a stale claim: %v, want ErrLeaseLost", err)
	}
	// A failure with a retry: pending, attempt counted, lease cleared.
	started := t0.Add(62 * time.Second)
	next := started.Add(10 * time.Second)
	st, err := s.RecordWebhookAttempt(ctx, task2, locrisk.DeliveryAttempt{ResponseStatus: 500, Error: "receiver responded with status 500",
		Started: started, NextAttempt: &next}, started.Add(time.Second))
	if err != nil || st != locrisk.DeliveryPending {
		t.Fatalf("record failure: %q %v", st, err)
	}
	d := DeliveryByID(t, s, a.ID, id)
	if d.Status != locrisk.DeliveryPending || d.Attempts != 1 || d.ResponseStatus == nil || *d.ResponseStatus != 500 ||
		d.Error == nil || *d.Error != "receiver responded with status 500" || d.LastAttemptUTC == nil ||
		!d.LastAttemptUTC.Equal(started) || d.NextAttemptUTC == nil || !d.NextAttemptUTC.Equal(next) || d.DeliveredUTC != nil {
		t.Errorf("after a failed attempt: %+v", d)
	}
	if _, ok, _ := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), next.Add(-time.Millisecond)); ok {
		t.Error("claimed before the retry was due")
	}
	// Released by a shutdown: due again at once, attempt not counted.
	task3, ok, _ := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), next)
	if !ok || task3.Attempts != 1 {
		t.Fatalf("retry claim: %+v %v", task3, ok)
	}
	if err := s.ReleaseWebhookDelivery(ctx, task3); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseWebhookDelivery(ctx, task3); !errors.Is(err, locrisk.ErrLeaseLost) {
		t.Errorf("second release: %v, want ErrLeaseLost", err)
	}
	task4, ok, _ := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), next)
	if !ok || task4.Attempts != 1 {
		t.Fatalf("claim after release: %+v %v", task4, ok)
	}
	done := next.Add(time.Second)
	st, err = s.RecordWebhookAttempt(ctx, task4, locrisk.DeliveryAttempt{Success: true, ResponseStatus: 204, Started: next}, done)
	if err != nil || st != locrisk.DeliverySucceeded {
		t.Fatalf("record success: %q %v", st, err)
	}
	d = DeliveryByID(t, s, a.ID, id)
	if d.Status != locrisk.DeliverySucceeded || d.Attempts != 2 || *d.ResponseStatus != 204 || d.Error != nil ||
		d.NextAttemptUTC != nil || d.DeliveredUTC == nil || !d.DeliveredUTC.Equal(done) {
		t.Errorf("after success: %+v", d)
	}
	if _, ok, _ := s.NextWebhookDue(ctx, testLimits(), done); ok {
		t.Error("NextWebhookDue reports a due delivery when none is pending")
	}

	// Exhausted schedule: a failure without a next attempt is final.
	id2 := newEvent(t, s, o, a.ID, evFailed, t0)[0]
	task5, ok, _ := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), t0)
	if !ok || task5.ID != id2 {
		t.Fatalf("claim: %+v %v", task5, ok)
	}
	st, err = s.RecordWebhookAttempt(ctx, task5, locrisk.DeliveryAttempt{Error: "timed out", Started: t0}, t0)
	if err != nil || st != locrisk.DeliveryFailed {
		t.Fatalf("final failure: %q %v", st, err)
	}
	d = DeliveryByID(t, s, a.ID, id2)
	if d.Status != locrisk.DeliveryFailed || d.ResponseStatus != nil || *d.Error != "timed out" || d.NextAttemptUTC != nil {
		t.Errorf("after the last failure: %+v", d)
	}
}

func listWebhookDeliveries(t testing.TB, h Harness) {
	s, o := h.openWithOutbox(t)
	ctx := context.Background()
	a, b := newAccount(t, s, 100), newAccount(t, s, 100)
	e1 := newEndpoint(t, s, a.ID, t0)
	e2 := newEndpoint(t, s, a.ID, t0, evFailed)
	newEndpoint(t, s, b.ID, t0)
	for i := range 5 {
		typ := evCompleted
		if i%2 == 1 {
			typ = evFailed
		}
		newEvent(t, s, o, a.ID, typ, t0.Add(time.Duration(i)*time.Second))
	}
	newEvent(t, s, o, b.ID, evCompleted, t0.Add(time.Hour))

	got, err := s.ListWebhookDeliveries(ctx, a.ID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 { // 5 to e1, 2 to e2
		t.Fatalf("%d deliveries, want 7", len(got))
	}
	for i := 1; i < len(got); i++ {
		p, c := got[i-1], got[i]
		if p.CreatedUTC.Before(c.CreatedUTC) || (p.CreatedUTC.Equal(c.CreatedUTC) && p.ID < c.ID) {
			t.Errorf("not newest first at %d: %v %s then %v %s", i, p.CreatedUTC, p.ID, c.CreatedUTC, c.ID)
		}
	}
	limited, _ := s.ListWebhookDeliveries(ctx, a.ID, "", 3)
	if len(limited) != 3 || limited[0].ID != got[0].ID || limited[2].ID != got[2].ID {
		t.Errorf("limit 3 = %v", limited)
	}
	only, _ := s.ListWebhookDeliveries(ctx, a.ID, e2.ID, 100)
	if len(only) != 2 {
		t.Errorf("e2 deliveries = %d, want 2", len(only))
	}
	for _, d := range only {
		if d.EndpointID != e2.ID || d.Event != evFailed {
			t.Errorf("filtered delivery %+v", d)
		}
	}
	if other, _ := s.ListWebhookDeliveries(ctx, b.ID, e1.ID, 100); len(other) != 0 {
		t.Errorf("account b sees %d deliveries of a's endpoint", len(other))
	}
}

// A test delivery goes to the one endpoint asked for, subscribed or not,
// due at once, without a job; unknown, foreign and disabled endpoints are
// refused and nothing is written.
func queueTestWebhook(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a, other := newAccount(t, s, 10), newAccount(t, s, 10)
	ep := newEndpoint(t, s, a.ID, t0, evFailed)
	foreign := newEndpoint(t, s, other.ID, t0)
	off := newEndpoint(t, s, a.ID, t0)
	if err := s.DisableWebhookEndpoint(ctx, a.ID, off.ID, t0); err != nil {
		t.Fatal(err)
	}
	d, err := s.QueueTestWebhook(ctx, a.ID, ep.ID, testEvent(t0))
	if err != nil {
		t.Fatal(err)
	}
	if d.EndpointID != ep.ID || d.Event != "webhook.test" || d.JobID != nil || d.Status != locrisk.DeliveryPending ||
		d.Attempts != 0 || d.NextAttemptUTC == nil || !d.NextAttemptUTC.Equal(t0) || !ids.HasPrefix(d.ID, ids.Delivery) {
		t.Errorf("test delivery = %+v", d)
	}
	task, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), t0)
	if err != nil || !ok || task.ID != d.ID || task.JobID != "" || string(task.Body) != `{"test":true}` {
		t.Errorf("claim of the test delivery: %+v %v %v", task, ok, err)
	}
	for _, tc := range []struct {
		name, acct, ep string
		want           error
	}{
		{"unknown", a.ID, ids.New(ids.WebhookEndpoint), locrisk.ErrNotFound},
		{"foreign", a.ID, foreign.ID, locrisk.ErrNotFound},
		{"disabled", a.ID, off.ID, locrisk.ErrEndpointDisabled},
	} {
		if _, err := s.QueueTestWebhook(ctx, tc.acct, tc.ep, testEvent(t0)); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if ds, err := s.ListWebhookDeliveries(ctx, a.ID, "", 100); err != nil || len(ds) != 1 {
		t.Errorf("%d deliveries written (%v), want 1", len(ds), err)
	}
}

// A failed delivery becomes pending again with the same id, due now, its
// attempts kept and a fresh schedule (ScheduleStart) from them; the other
// states and a disabled endpoint are refused.
func redeliverWebhook(t testing.TB, h Harness) {
	s, o := h.openWithOutbox(t)
	ctx := context.Background()
	a, other := newAccount(t, s, 10), newAccount(t, s, 10)
	ep := newEndpoint(t, s, a.ID, t0)
	id := newEvent(t, s, o, a.ID, evCompleted, t0)[0]

	attempt := func(at time.Time, success bool, next *time.Time) {
		t.Helper()
		task, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), at)
		if err != nil || !ok || task.ID != id {
			t.Fatalf("claim at %v: %+v %v %v", at, task, ok, err)
		}
		if _, err := s.RecordWebhookAttempt(ctx, task, locrisk.DeliveryAttempt{Success: success, ResponseStatus: 500, Error: "boom",
			Started: at, NextAttempt: next}, at); err != nil {
			t.Fatal(err)
		}
	}
	// Pending: not redeliverable.
	if _, err := s.RedeliverWebhook(ctx, a.ID, id, t0); !errors.Is(err, locrisk.ErrDeliveryNotFailed) {
		t.Errorf("pending: %v, want ErrDeliveryNotFailed", err)
	}
	retry := t0.Add(10 * time.Second)
	attempt(t0, false, &retry)
	attempt(retry, false, nil) // failed for good after 2 attempts
	if d := DeliveryByID(t, s, a.ID, id); d.Status != locrisk.DeliveryFailed || d.Attempts != 2 {
		t.Fatalf("before redelivery: %+v", d)
	}
	for _, tc := range []struct {
		name, acct, id string
	}{{"unknown", a.ID, ids.New(ids.Delivery)}, {"foreign", other.ID, id}} {
		if _, err := s.RedeliverWebhook(ctx, tc.acct, tc.id, t0); !errors.Is(err, locrisk.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", tc.name, err)
		}
	}

	now := t0.Add(time.Hour)
	d, err := s.RedeliverWebhook(ctx, a.ID, id, now)
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != id || d.Status != locrisk.DeliveryPending || d.Attempts != 2 || d.NextAttemptUTC == nil || !d.NextAttemptUTC.Equal(now) {
		t.Errorf("redelivered: %+v", d)
	}
	task, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), now)
	if err != nil || !ok || task.ID != id || task.Attempts != 2 || task.ScheduleStart != 2 {
		t.Fatalf("claim after redelivery: %+v %v %v", task, ok, err)
	}
	if _, err := s.RecordWebhookAttempt(ctx, task, locrisk.DeliveryAttempt{Success: true, ResponseStatus: 204, Started: now}, now); err != nil {
		t.Fatal(err)
	}
	if d := DeliveryByID(t, s, a.ID, id); d.Status != locrisk.DeliverySucceeded || d.Attempts != 3 || d.Error != nil {
		t.Errorf("after the redelivered attempt: %+v", d)
	}
	if _, err := s.RedeliverWebhook(ctx, a.ID, id, now); !errors.Is(err, locrisk.ErrDeliveryNotFailed) {
		t.Errorf("succeeded: %v, want ErrDeliveryNotFailed", err)
	}

	// A delivery failed by disabling its endpoint stays failed.
	id2 := newEvent(t, s, o, a.ID, evCompleted, now)[0]
	if err := s.DisableWebhookEndpoint(ctx, a.ID, ep.ID, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RedeliverWebhook(ctx, a.ID, id2, now); !errors.Is(err, locrisk.ErrEndpointDisabled) {
		t.Errorf("disabled endpoint: %v, want ErrEndpointDisabled", err)
	}
	if d := DeliveryByID(t, s, a.ID, id2); d.Status != locrisk.DeliveryFailed {
		t.Errorf("after a refused redelivery: %+v", d)
	}
}
