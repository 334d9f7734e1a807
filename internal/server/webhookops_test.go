package server

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/webhookverify"

	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/view"
)

// verified checks a request the receiver got against secret, with the
// importable verifier receivers use, by both schemes (docs/webhooks.md,
// Verifying a delivery and Standard Webhooks): the Service-* headers, and
// webhook-id (the body's event id), webhook-timestamp (Service-Timestamp's
// value) and webhook-signature (one v1 value).
func verified(t *testing.T, secret string, r received) {
	t.Helper()
	if err := webhookverify.VerifyHeader(secret, r.header, r.body, r.at, webhookverify.DefaultTolerance); err != nil {
		t.Errorf("delivery does not verify: %v", err)
	}
	if err := webhookverify.VerifyStandardHeader(secret, r.header, r.body, r.at, webhookverify.DefaultTolerance); err != nil {
		t.Errorf("delivery does not verify by Standard Webhooks: %v", err)
	}
	var ev struct{ ID string }
	if err := json.Unmarshal(r.body, &ev); err != nil || !ids.HasPrefix(ev.ID, ids.Event) {
		t.Errorf("event body %s: id %q, %v", r.body, ev.ID, err)
	}
	for name, want := range map[string]string{
		webhookverify.HeaderWebhookID:        ev.ID,
		webhookverify.HeaderWebhookTimestamp: r.header.Get(webhookverify.HeaderTimestamp),
	} {
		if v := r.header.Values(name); len(v) != 1 || v[0] != want {
			t.Errorf("%s = %q, want %q", name, v, want)
		}
	}
	if v := r.header.Values(webhookverify.HeaderWebhookSignature); len(v) != 1 || len(strings.Fields(v[0])) != 1 {
		t.Errorf("webhook-signature = %q, want one value", v)
	}
	// The Standard Webhooks key is the decoded base64, not the secret
	// string: a receiver that keys with the string is refused.
	if err := webhookverify.VerifyStandardHeader(base64.StdEncoding.EncodeToString([]byte(secret)), r.header, r.body, r.at,
		webhookverify.DefaultTolerance); !errors.Is(err, webhookverify.ErrSignatureMismatch) {
		t.Errorf("keyed with the secret string: %v, want ErrSignatureMismatch", err)
	}
}

// POST /webhooks/{endpointId}/test (operation 19) queues a signed
// webhook.test event for that endpoint, whatever it subscribes to, and the
// worker sends it at once.
func TestWebhookTestEvent(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true, schedule: "1h"})
	acct := e.account(100, 100000)
	key := e.allScopesKey(acct)
	rc := newReceiver(t, nil)
	created := e.createEndpoint(key, "test me", rc.srv.URL+"/hook", "report.job.failed")
	epID := created.Endpoint.ID
	e.sync()

	sent := time.Now()
	rec := e.do("POST", webhooksPath+"/"+epID+"/test", key, "")
	if rec.Code != http.StatusAccepted {
		t.Fatalf("test: %d %s", rec.Code, rec.Body)
	}
	if loc := rec.Header().Get("Location"); loc != deliveriesPath+"?endpointId="+url.QueryEscape(epID) {
		t.Errorf("Location = %q", loc)
	}
	var raw map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if v, present := raw["jobId"]; !present || v != nil {
		t.Errorf("jobId = %v (present %v), want null", v, present)
	}
	d := decode[view.WebhookDelivery](t, rec)
	if !ids.HasPrefix(d.ID, ids.Delivery) || d.EndpointID != epID || d.Event != "webhook.test" || d.Status != "pending" ||
		d.Attempts != 0 || d.NextAttemptUTC == nil {
		t.Errorf("delivery = %+v", d)
	}

	waitFor(t, "the test event", func() bool { return len(rc.requests()) >= 1 })
	if wait := time.Since(sent); wait > 2*time.Second {
		t.Errorf("the test event took %v; the worker was not woken", wait)
	}
	got := rc.requests()[0]
	verified(t, created.SigningSecret, got)
	if got.header.Get("Service-Event") != "webhook.test" || got.header.Get("Service-Delivery") != d.ID {
		t.Errorf("headers %v", got.header)
	}
	var body struct {
		ID, Type, APIVersion, CreatedUTC string
		Data                             map[string]any
	}
	if err := json.Unmarshal(got.body, &body); err != nil {
		t.Fatal(err)
	}
	if body.ID != d.EventID || body.Type != "webhook.test" || body.APIVersion != "v1" || body.CreatedUTC == "" ||
		len(body.Data) != 1 || body.Data["endpointId"] != epID {
		t.Errorf("event body %s", got.body)
	}
	waitFor(t, "success recorded", func() bool { return e.deliveries(key, "")[0].Status == "succeeded" })

	// A JSON object body is accepted too.
	if rec := e.do("POST", webhooksPath+"/"+epID+"/test", key, "{}"); rec.Code != http.StatusAccepted {
		t.Errorf("with {}: %d %s", rec.Code, rec.Body)
	}
}

func TestWebhookTestEventErrors(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true})
	acct := e.account(100, 100000)
	key := e.allScopesKey(acct)
	other := e.allScopesKey(e.account(100, 100000))
	ep := e.createEndpoint(key, "mine", "http://127.0.0.1:9/hook", "report.job.completed").Endpoint.ID
	foreign := e.createEndpoint(other, "theirs", "http://127.0.0.1:9/hook", "report.job.completed").Endpoint.ID
	off := e.createEndpoint(key, "off", "http://127.0.0.1:9/hook", "report.job.completed").Endpoint.ID
	if rec := e.do("DELETE", webhooksPath+"/"+off, key, ""); rec.Code != http.StatusNoContent {
		t.Fatal(rec.Code)
	}
	readOnly, _ := e.key(acct, locrisk.NewKey{Scopes: []string{locrisk.ScopeWebhooksRead}})
	for _, tc := range []struct {
		name, id, key, body string
		status              int
		code                string
	}{
		{"unknown", ids.New(ids.WebhookEndpoint), key, "", 404, "webhook_endpoint_not_found"},
		{"not an endpoint id", "wd_x", key, "", 404, "webhook_endpoint_not_found"},
		{"foreign", foreign, key, "", 404, "webhook_endpoint_not_found"},
		{"disabled", off, key, "", 409, "webhook_endpoint_disabled"},
		{"body not an object", ep, key, "[1]", 400, "invalid_request"},
		{"read-only key", ep, readOnly, "", 403, "insufficient_scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.do("POST", webhooksPath+"/"+tc.id+"/test", tc.key, tc.body), tc.status, tc.code)
		})
	}
	if n := len(e.everyDelivery()); n != 0 {
		t.Errorf("%d deliveries written by refused requests", n)
	}
}

// POST /webhooks/deliveries/{deliveryId}/redeliver (operation 20): a failed
// delivery goes out again with the same id and a fresh retry schedule, its
// attempts counting on.
func TestWebhookRedeliver(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true, schedule: "20ms"})
	acct := e.account(100, 100000)
	key := e.allScopesKey(acct)
	// Attempts 1 and 2 (the first schedule) and 3 fail; 4 succeeds, which
	// needs the redelivery's own retry.
	rc := newReceiver(t, func(n int) (int, string) {
		if n <= 3 {
			return http.StatusServiceUnavailable, "down"
		}
		return http.StatusNoContent, ""
	})
	created := e.createEndpoint(key, "flaky", rc.srv.URL, "report.job.completed")
	job := e.createJob(key, 37.77, -122.42)
	e.sync()
	e.complete(job.JobID)
	waitFor(t, "the delivery to fail", func() bool { return e.deliveries(key, "")[0].Status == "failed" })
	failed := e.deliveries(key, "")[0]
	if failed.Attempts != 2 {
		t.Fatalf("failed after %d attempts, want 2", failed.Attempts)
	}
	path := deliveriesPath + "/" + failed.ID + "/redeliver"
	e.sync()
	rec := e.do("POST", path, key, "")
	if rec.Code != http.StatusAccepted {
		t.Fatalf("redeliver: %d %s", rec.Code, rec.Body)
	}
	d := decode[view.WebhookDelivery](t, rec)
	if d.ID != failed.ID || d.Status != "pending" || d.Attempts != 2 || d.NextAttemptUTC == nil || d.JobID == nil || *d.JobID != job.JobID {
		t.Errorf("redelivered: %+v", d)
	}
	if loc := rec.Header().Get("Location"); loc != deliveriesPath+"?endpointId="+url.QueryEscape(created.Endpoint.ID) {
		t.Errorf("Location = %q", loc)
	}
	waitFor(t, "success after redelivery", func() bool { return e.deliveries(key, "")[0].Status == "succeeded" })
	final := e.deliveries(key, "")[0]
	got := rc.requests()
	if final.ID != failed.ID || final.Attempts != 4 || len(got) != 4 {
		t.Errorf("after redelivery: %+v, %d requests", final, len(got))
	}
	for _, r := range got {
		verified(t, created.SigningSecret, r)
		if r.header.Get("Service-Delivery") != failed.ID {
			t.Errorf("Service-Delivery %s, want %s", r.header.Get("Service-Delivery"), failed.ID)
		}
		// The redelivery keeps the Standard Webhooks message id: the event's.
		if r.header.Get("webhook-id") != failed.EventID {
			t.Errorf("webhook-id %s, want the event id %s", r.header.Get("webhook-id"), failed.EventID)
		}
	}
	// Succeeded now: not redeliverable.
	wantError(t, e.do("POST", path, key, ""), 409, "delivery_not_failed")
}

func TestWebhookRedeliverErrors(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true, schedule: "1h"})
	acct := e.account(100, 100000)
	key := e.allScopesKey(acct)
	other := e.allScopesKey(e.account(100, 100000))
	rc := newReceiver(t, func(int) (int, string) { return http.StatusNoContent, "" })
	e.createEndpoint(key, "ok", rc.srv.URL, "report.job.completed")
	job := e.createJob(key, 37.77, -122.42)
	e.sync()
	e.complete(job.JobID)
	waitFor(t, "the delivery", func() bool { return e.deliveries(key, "")[0].Status == "succeeded" })
	succeeded := e.deliveries(key, "")[0].ID
	// A delivery failed by disabling its endpoint while it was pending.
	off := e.createEndpoint(key, "off", "http://127.0.0.1:9/x", "report.job.failed").Endpoint.ID
	failedJob := e.createJob(key, 41.88, -87.63)
	e.sync()
	e.fail(failedJob.JobID, false)
	if rec := e.do("DELETE", webhooksPath+"/"+off, key, ""); rec.Code != http.StatusNoContent {
		t.Fatal(rec.Code)
	}
	waitFor(t, "the delivery to the disabled endpoint to fail", func() bool {
		ds := e.deliveries(key, "?endpointId="+off)
		return len(ds) == 1 && ds[0].Status == "failed"
	})
	ofDisabled := e.deliveries(key, "?endpointId="+off)[0].ID
	readOnly, _ := e.key(acct, locrisk.NewKey{Scopes: []string{locrisk.ScopeWebhooksRead}})
	for _, tc := range []struct {
		name, id, key string
		status        int
		code          string
	}{
		{"unknown", ids.New(ids.Delivery), key, 404, "webhook_delivery_not_found"},
		{"not a delivery id", ids.New(ids.WebhookEndpoint), key, 404, "webhook_delivery_not_found"},
		{"foreign", succeeded, other, 404, "webhook_delivery_not_found"},
		{"succeeded", succeeded, key, 409, "delivery_not_failed"},
		{"endpoint disabled", ofDisabled, key, 409, "webhook_endpoint_disabled"},
		{"read-only key", succeeded, readOnly, 403, "insufficient_scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.do("POST", deliveriesPath+"/"+tc.id+"/redeliver", tc.key, ""), tc.status, tc.code)
		})
	}
}

// batch.completed is subscribable and goes out, signed, once the last item
// of a batch is final, carrying the batch exactly as operation 8 shows it;
// webhook.test cannot be subscribed to.
func TestBatchCompletedEvent(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true, schedule: "1h"})
	acct := e.account(100, 100000)
	key := e.allScopesKey(acct)
	rc := newReceiver(t, nil)
	created := e.createEndpoint(key, "batches", rc.srv.URL, "batch.completed")
	body, _ := json.Marshal(map[string]any{"name": "no", "url": rc.srv.URL, "events": []string{"webhook.test"}})
	wantError(t, e.do("POST", webhooksPath, key, string(body)), 400, "invalid_events")

	b := e.createBatch(key, batchBody(t, "Q4", item{"latitude": 40.7, "longitude": -74}, item{"latitude": 41, "longitude": -75},
		item{"latitude": 95, "longitude": 0}))
	items := e.getItems(key, b.BatchID)
	e.sync()
	e.complete(*items[0].ReportJobID)
	time.Sleep(50 * time.Millisecond)
	if n := len(rc.requests()); n != 0 {
		t.Fatalf("%d events while the batch is processing", n)
	}
	e.sync()
	e.fail(*items[1].ReportJobID, false)
	waitFor(t, "batch.completed", func() bool { return len(rc.requests()) >= 1 })
	time.Sleep(50 * time.Millisecond)
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(got))
	}
	verified(t, created.SigningSecret, got[0])
	if got[0].header.Get("Service-Event") != "batch.completed" {
		t.Errorf("Service-Event %q", got[0].header.Get("Service-Event"))
	}
	var ev struct {
		Type       string
		CreatedUTC string `json:"createdUtc"`
		Data       map[string]json.RawMessage
	}
	if err := json.Unmarshal(got[0].body, &ev); err != nil {
		t.Fatal(err)
	}
	shown := e.do("GET", batchesPath+"/"+b.BatchID, key, "").Body.Bytes()
	var want, have any
	_ = json.Unmarshal(shown, &want)
	_ = json.Unmarshal(ev.Data["batch"], &have)
	if ev.Type != "batch.completed" || len(ev.Data) != 1 || !jsonEqual(want, have) {
		t.Errorf("event %s\nGET shows %s", got[0].body, shown)
	}
	if bv := e.getBatch(key, b.BatchID); bv.Status != "completed" || bv.CompletedUTC == nil || ev.CreatedUTC != *bv.CompletedUTC {
		t.Errorf("batch %+v, event createdUtc %s", bv, ev.CreatedUTC)
	}
	d := e.deliveries(key, "")[0]
	if d.Event != "batch.completed" || d.JobID != nil {
		t.Errorf("delivery %+v", d)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
