package storetest

// The arguments a store refuses before it touches its database, and the
// words it refuses them with. The checks are the domain's (validate.go at
// the root), so every store must answer a bad value with exactly the
// text below, which the API and the command line show: an operator sees
// the same message whichever store is behind the service.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

var validationTests = []test{
	{"SameWordsEverywhere", validationErrors},
}

// validationErrors: each bad argument is ErrInvalid, said in the same
// words by every store, and writes nothing.
func validationErrors(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 10)
	ep := newEndpoint(t, s, a.ID, t0)
	name, quota, rate := " ", -1, 0
	one := func(v float64) *float64 { return &v }
	known := strings.Join(locrisk.AllScopes(), ", ")
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"account name", func() error { _, err := s.CreateAccount(ctx, "  ", 1, 1); return err },
			"invalid argument: account name is empty"},
		{"account quota", func() error { _, err := s.CreateAccount(ctx, "a", -1, 1); return err },
			"invalid argument: monthly quota -1 is negative"},
		{"account rate", func() error { _, err := s.CreateAccount(ctx, "a", 1, 0); return err },
			"invalid argument: rate limit 0 must be positive"},
		{"update name", func() error { _, err := s.UpdateAccount(ctx, a.ID, locrisk.AccountUpdate{Name: &name}); return err },
			"invalid argument: account name is empty"},
		{"update quota", func() error {
			_, err := s.UpdateAccount(ctx, a.ID, locrisk.AccountUpdate{MonthlyQuota: &quota})
			return err
		}, "invalid argument: monthly quota -1 is negative"},
		{"update rate", func() error {
			_, err := s.UpdateAccount(ctx, a.ID, locrisk.AccountUpdate{RateLimit: &rate})
			return err
		}, "invalid argument: rate limit 0 must be positive"},
		{"key without scopes", func() error { _, _, err := s.CreateKey(ctx, locrisk.NewKey{AccountID: a.ID}); return err },
			"invalid argument: a key needs at least one scope (known: " + known + ")"},
		{"key scope", func() error {
			_, _, err := s.CreateKey(ctx, locrisk.NewKey{AccountID: a.ID, Scopes: []string{"reports:delete"}})
			return err
		}, `invalid argument: unknown scope "reports:delete" (known: ` + known + ")"},
		{"key version", func() error {
			_, _, err := s.CreateKey(ctx, locrisk.NewKey{AccountID: a.ID, Scopes: []string{"reports:read"}, ScopeVersion: 3})
			return err
		}, "invalid argument: scope version 3 (want 1 or 2)"},
		{"job bucket", func() error {
			_, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: a.ID, Bucket: "gold"}, t0)
			return err
		}, `invalid argument: unknown bucket "gold"`},
		{"job key without hash", func() error {
			nj := apiJob(a.ID)
			nj.IdempotencyKey = "k"
			_, _, err := s.CreateJob(ctx, nj, t0)
			return err
		}, "invalid argument: an idempotency key needs a request hash"},
		{"job status filter", func() error { _, _, err := s.ListJobs(ctx, a.ID, "done", 10, ""); return err },
			`invalid argument: unknown status "done"`},
		{"batch without items", func() error { _, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID}, t0); return err },
			"invalid argument: a batch needs at least one item"},
		{"batch item without coordinate", func() error {
			_, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: []locrisk.NewBatchItem{
				validItem("x", 30, -80), {Latitude: one(30)}}}, t0)
			return err
		}, "invalid argument: item 2 is valid but lacks a coordinate"},
		{"job claim owner", func() error { _, _, err := s.ClaimJob(ctx, "", time.Minute, t0); return err },
			"invalid argument: claim needs an owner and a positive lease"},
		{"job claim lease", func() error { _, _, err := s.ClaimJob(ctx, "w", 0, t0); return err },
			"invalid argument: claim needs an owner and a positive lease"},
		{"endpoint fields", func() error {
			_, _, err := s.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{AccountID: a.ID, Name: "hook"}, t0)
			return err
		}, "invalid argument: endpoint needs an account, name, url and events"},
		{"endpoint event", func() error {
			_, _, err := s.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{AccountID: a.ID, Name: "hook",
				URL: "https://hooks.example.com/x", Events: []string{"report.job failed"}}, t0)
			return err
		}, `invalid argument: event name "report.job failed"`},
		{"test event", func() error {
			_, err := s.QueueTestWebhook(ctx, a.ID, ep.ID, locrisk.WebhookEvent{ID: "evt_x", Type: "webhook.test", Body: []byte(`{}`)})
			return err
		}, `queue test webhook: invalid argument: incomplete webhook event "evt_x"`},
		{"delivery claim lease", func() error { _, _, err := s.ClaimWebhookDelivery(ctx, 0, testLimits(), t0); return err },
			"invalid argument: a claim needs a positive lease"},
		{"delivery claim limits", func() error {
			_, _, err := s.ClaimWebhookDelivery(ctx, time.Minute, locrisk.DeliveryLimits{PerEndpoint: 1}, t0)
			return err
		}, "invalid argument: a claim needs positive per-endpoint and per-account limits"},
		{"next due limits", func() error {
			_, _, err := s.NextWebhookDue(ctx, locrisk.DeliveryLimits{PerAccount: 1}, t0)
			return err
		}, "invalid argument: a claim needs positive per-endpoint and per-account limits"},
		{"usage days", func() error { _, err := s.UsageHistory(ctx, a.ID, t0, 0, nil); return err },
			"invalid argument: usage history needs at least one day, got 0"},
		{"usage bucket", func() error { _, err := s.UsageHistory(ctx, a.ID, t0, 7, []string{"api", "free"}); return err },
			`invalid argument: unknown bucket "free"`},
		{"purge without now", func() error { _, err := s.Purge(ctx, locrisk.PurgePolicy{Before: t0}); return err },
			"invalid argument: purge needs the current time"},
		{"signing key", func() error { return s.RotateSigningKey(ctx, locrisk.SigningKey{ID: "k", CreatedUTC: t0}) },
			"rotate signing key: invalid argument: a signing key needs an id, a creation time and its private key"},
	}
	for _, tt := range tests {
		err := tt.call()
		if !errors.Is(err, locrisk.ErrInvalid) || err.Error() != tt.want {
			t.Errorf("%s: %v\nwant ErrInvalid, said %q", tt.name, err, tt.want)
		}
	}
	// Nothing was written: the account and the endpoint are the only rows.
	if accts, err := s.ListAccounts(ctx); err != nil || len(accts) != 1 {
		t.Errorf("%d accounts after refused creates (%v)", len(accts), err)
	}
	if jobs := listJobs(t, s, a.ID, ""); len(jobs) != 0 {
		t.Errorf("%d jobs after refused creates", len(jobs))
	}
	if eps, _, err := s.ListWebhookEndpoints(ctx, a.ID, 10, ""); err != nil || len(eps) != 1 {
		t.Errorf("%d endpoints after refused creates (%v)", len(eps), err)
	}
	if keys, err := s.ListKeys(ctx, a.ID); err != nil || len(keys) != 0 {
		t.Errorf("%d keys after refused creates (%v)", len(keys), err)
	}
	if ds, err := s.ListWebhookDeliveries(ctx, a.ID, "", 10); err != nil || len(ds) != 0 {
		t.Errorf("%d deliveries after a refused test event (%v)", len(ds), err)
	}
}
