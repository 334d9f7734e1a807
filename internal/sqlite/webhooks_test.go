package sqlite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/storetest"
)

const (
	evCompleted = "report.job.completed"
	evFailed    = "report.job.failed"
)

// testLimits are the delivery limits of tests about something else: the
// defaults of serve.
func testLimits() locrisk.DeliveryLimits {
	return locrisk.DeliveryLimits{PerEndpoint: 2, PerAccount: 8}
}

func newEndpoint(t testing.TB, s *Store, acct string, now time.Time, events ...string) locrisk.WebhookEndpoint {
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

// newEvent writes an event of a fresh job of acct for the account's current
// subscribers, as the outbox hook does, and returns the delivery ids.
func newEvent(t testing.TB, s *Store, acct, typ string, at time.Time) []string {
	t.Helper()
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, apiJob(acct), at)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	err = s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		eps, err := txOps{tx}.WebhookSubscribers(ctx, acct, typ)
		if err != nil {
			return err
		}
		out, err = txOps{tx}.InsertWebhookEvent(ctx, locrisk.WebhookEvent{ID: ids.New(ids.Event), AccountID: acct, Type: typ,
			JobID: j.ID, Body: []byte(`{"job":"` + j.ID + `"}`), CreatedUTC: at}, eps)
		return err
	})
	if err != nil {
		t.Fatalf("insert event: %v", err)
	}
	return out
}

func TestWebhookSubscribersAndOutbox(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a, b := newAccount(t, s, 100), newAccount(t, s, 100)
	both := newEndpoint(t, s, a.ID, t0, evCompleted, evFailed)
	onlyFailed := newEndpoint(t, s, a.ID, t0.Add(time.Second), evFailed)
	disabled := newEndpoint(t, s, a.ID, t0.Add(2*time.Second), evCompleted)
	if err := s.DisableWebhookEndpoint(ctx, a.ID, disabled.ID, t0); err != nil {
		t.Fatal(err)
	}
	newEndpoint(t, s, b.ID, t0, evCompleted)

	tests := []struct {
		acct, typ string
		want      []string
	}{
		{a.ID, evCompleted, []string{both.ID}},
		{a.ID, evFailed, []string{both.ID, onlyFailed.ID}},
		{"acct_none", evFailed, nil},
	}
	for _, tc := range tests {
		var got []string
		err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) (err error) {
			got, err = txOps{tx}.WebhookSubscribers(ctx, tc.acct, tc.typ)
			return err
		})
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("subscribers(%s, %s) = %v, %v; want %v", tc.acct, tc.typ, got, err, tc.want)
		}
	}

	at := t0.Add(time.Hour + 250*time.Millisecond)
	ds := newEvent(t, s, a.ID, evFailed, at)
	if len(ds) != 2 {
		t.Fatalf("deliveries %v, want 2", ds)
	}
	for i, id := range ds {
		d := storetest.DeliveryByID(t, s, a.ID, id)
		wantEP := []string{both.ID, onlyFailed.ID}[i]
		if d.EndpointID != wantEP || d.Status != locrisk.DeliveryPending || d.Attempts != 0 || d.Event != evFailed ||
			d.ResponseStatus != nil || d.Error != nil || d.LastAttemptUTC != nil || d.DeliveredUTC != nil ||
			d.NextAttemptUTC == nil || !d.NextAttemptUTC.Equal(at) || !d.CreatedUTC.Equal(at) ||
			!strings.HasPrefix(d.EventID, ids.Event) || d.JobID == nil || !strings.HasPrefix(*d.JobID, ids.Job) {
			t.Errorf("delivery %d = %+v", i, d)
		}
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM webhook_events`); n != 1 {
		t.Errorf("%d events, want 1", n)
	}
	// An event rolled back with its transaction leaves nothing.
	j, _, _ := s.CreateJob(ctx, apiJob(a.ID), t0)
	boom := errors.New("boom")
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if _, err := (txOps{tx}).InsertWebhookEvent(ctx, locrisk.WebhookEvent{ID: ids.New(ids.Event), AccountID: a.ID, Type: evFailed,
			JobID: j.ID, Body: []byte(`{}`), CreatedUTC: t0}, []string{both.ID}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || countRows(t, s, `SELECT COUNT(*) FROM webhook_events`) != 1 ||
		countRows(t, s, `SELECT COUNT(*) FROM webhook_deliveries`) != 2 {
		t.Errorf("rolled-back event left rows (err %v)", err)
	}
}

func TestDisableStopsPendingDeliveries(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 100)
	ep := newEndpoint(t, s, a.ID, t0)
	other := newEndpoint(t, s, a.ID, t0)
	ds := newEvent(t, s, a.ID, evCompleted, t0) // one to each endpoint
	ds2 := newEvent(t, s, a.ID, evCompleted, t0)
	byEP := map[string][]string{}
	for _, id := range append(ds, ds2...) {
		d := storetest.DeliveryByID(t, s, a.ID, id)
		byEP[d.EndpointID] = append(byEP[d.EndpointID], id)
	}

	// Claim both deliveries to ep: one will be in flight at the DELETE, the
	// other's worker "dies" (its lease runs out).
	var inFlight, dead locrisk.DeliveryTask
	for i := 0; i < 4; i++ {
		task, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), t0)
		if err != nil || !ok {
			t.Fatalf("claim %d: %v %v", i, ok, err)
		}
		if task.EndpointID != ep.ID {
			if err := s.ReleaseWebhookDelivery(ctx, task); err != nil {
				t.Fatal(err)
			}
			// Park the other endpoint's delivery in the future so the
			// next claims find ep's.
			if _, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET next_attempt_utc = ? WHERE id = ?`,
				FormatTime(t0.Add(time.Hour)), task.ID); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if inFlight.ID == "" {
			inFlight = task
		} else {
			dead = task
		}
	}
	if inFlight.ID == "" || dead.ID == "" {
		t.Fatal("did not claim both deliveries to the endpoint")
	}
	// A third delivery to ep, pending and not in flight, fails at once.
	ds3 := newEvent(t, s, a.ID, evCompleted, t0.Add(time.Second))
	var idle string
	for _, id := range ds3 {
		if storetest.DeliveryByID(t, s, a.ID, id).EndpointID == ep.ID {
			idle = id
		}
	}
	if err := s.DisableWebhookEndpoint(ctx, a.ID, ep.ID, t0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if d := storetest.DeliveryByID(t, s, a.ID, idle); d.Status != locrisk.DeliveryFailed || *d.Error != locrisk.ErrorEndpointDisabled || d.Attempts != 0 || d.NextAttemptUTC != nil {
		t.Errorf("idle delivery after disable: %+v", d)
	}
	// Nothing to the disabled endpoint is claimable, even after leases end;
	// the dead one is failed by the next claim's sweep.
	for {
		task, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), t0.Add(2*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if task.EndpointID == ep.ID {
			t.Fatalf("claimed delivery %s of a disabled endpoint", task.ID)
		}
		if _, err := s.RecordWebhookAttempt(ctx, task, locrisk.DeliveryAttempt{Success: true, Started: t0}, t0); err != nil {
			t.Fatal(err)
		}
	}
	if d := storetest.DeliveryByID(t, s, a.ID, dead.ID); d.Status != locrisk.DeliveryFailed || *d.Error != locrisk.ErrorEndpointDisabled {
		t.Errorf("dead in-flight delivery of a disabled endpoint: %+v", d)
	}
	// The in-flight attempt (here with its lease forged to be still valid)
	// may complete: a failure is final, a success is recorded.
	if _, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', lease_expires_utc = ? WHERE id = ?`,
		FormatTime(inFlight.Lease), inFlight.ID); err != nil {
		t.Fatal(err)
	}
	next := t0.Add(time.Hour)
	st, err := s.RecordWebhookAttempt(ctx, inFlight, locrisk.DeliveryAttempt{ResponseStatus: 503, Error: "receiver responded with status 503", Started: t0, NextAttempt: &next}, t0)
	if err != nil || st != locrisk.DeliveryFailed {
		t.Fatalf("in-flight failure after disable: %q %v", st, err)
	}
	if d := storetest.DeliveryByID(t, s, a.ID, inFlight.ID); d.NextAttemptUTC != nil || !strings.Contains(*d.Error, locrisk.ErrorEndpointDisabled) || d.Attempts != 1 {
		t.Errorf("in-flight delivery after its failure: %+v", d)
	}
	// The other endpoint's deliveries were untouched.
	for _, id := range byEP[other.ID] {
		if d := storetest.DeliveryByID(t, s, a.ID, id); d.Status == locrisk.DeliveryFailed {
			t.Errorf("delivery %s to the other endpoint failed: %+v", id, d)
		}
	}
}

// TestClaimPerEndpointLimit: a claim skips an endpoint with perEndpoint
// attempts in flight, however early its backlog is due, and takes another
// endpoint's later delivery; NextWebhookDue then does not call the skipped
// backlog due (the worker would spin) but names the first lease end. Both
// endpoints are one account's, whose limit is out of the way, so the order
// is the due order.
func TestClaimPerEndpointLimit(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	acct := newAccount(t, s, 1000)
	slow := newEndpoint(t, s, acct.ID, t0, evFailed)
	fast := newEndpoint(t, s, acct.ID, t0, evCompleted)
	for i := range 20 {
		newEvent(t, s, acct.ID, evFailed, t0.Add(time.Duration(i)*time.Millisecond))
	}
	fastIDs := newEvent(t, s, acct.ID, evCompleted, t0.Add(time.Second))
	now := t0.Add(2 * time.Second)

	tests := []struct {
		perEndpoint int
		wantSlow    int // slow endpoint's claims before the fast one's
	}{
		{1, 1},
		{2, 2},
		{5, 5},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.perEndpoint), func(t *testing.T) {
			limits := locrisk.DeliveryLimits{PerEndpoint: tc.perEndpoint, PerAccount: 100}
			if _, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET lease_expires_utc = NULL`); err != nil {
				t.Fatal(err)
			}
			got := claimAll(t, s, limits, now)
			want := slices.Repeat([]string{slow.ID}, tc.wantSlow)
			want = append(want, fast.ID)
			if !slices.Equal(endpointsOf(got), want) {
				t.Errorf("claimed endpoints %v, want %v (slow %s, fast %s)", endpointsOf(got), want, slow.ID, fast.ID)
			}
			next, ok, err := s.NextWebhookDue(ctx, limits, now)
			if err != nil || !ok || !next.Equal(now.Add(time.Minute)) {
				t.Errorf("NextWebhookDue at the limit = %v %v %v, want the lease end %v", next, ok, err, now.Add(time.Minute))
			}
			// Below the limit the backlog is due again.
			limits.PerEndpoint++
			if next, ok, _ := s.NextWebhookDue(ctx, limits, now); !ok || next.After(now) {
				t.Errorf("NextWebhookDue below the limit = %v %v, want a due time by %v", next, ok, now)
			}
		})
	}
	if d := storetest.DeliveryByID(t, s, acct.ID, fastIDs[0]); d.Status != locrisk.DeliveryPending {
		t.Errorf("fast delivery %+v", d)
	}
}

// claimAll claims until nothing is claimable and returns the tasks in
// claim order.
func claimAll(t *testing.T, s *Store, limits locrisk.DeliveryLimits, now time.Time) []locrisk.DeliveryTask {
	t.Helper()
	var got []locrisk.DeliveryTask
	for {
		task, ok, err := s.ClaimWebhookDelivery(context.Background(), time.Minute, limits, now)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return got
		}
		got = append(got, task)
	}
}

func endpointsOf(ts []locrisk.DeliveryTask) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.EndpointID
	}
	return out
}

func accountsOf(ts []locrisk.DeliveryTask) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.AccountID
	}
	return out
}

// TestClaimPerAccountLimit: an account with many endpoints, each with a
// backlog due before another account's delivery, gets at most perAccount
// attempts in flight however many endpoints are below their own limit;
// the other account's delivery is claimed, and NextWebhookDue does not
// call the capped backlog due.
func TestClaimPerAccountLimit(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	busy := newAccount(t, s, 1000)
	other := newAccount(t, s, 1000)
	for range locrisk.MaxActiveEndpoints {
		newEndpoint(t, s, busy.ID, t0)
	}
	otherEp := newEndpoint(t, s, other.ID, t0)
	for i := range 5 {
		newEvent(t, s, busy.ID, evCompleted, t0.Add(time.Duration(i)*time.Millisecond))
	}
	newEvent(t, s, other.ID, evCompleted, t0.Add(time.Second))
	now := t0.Add(2 * time.Second)

	tests := []struct {
		perEndpoint, perAccount int
	}{
		{2, 1},
		{2, 8},
		{1, 8},
		{2, 39},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.perEndpoint, "/", tc.perAccount), func(t *testing.T) {
			if _, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET lease_expires_utc = NULL`); err != nil {
				t.Fatal(err)
			}
			limits := locrisk.DeliveryLimits{PerEndpoint: tc.perEndpoint, PerAccount: tc.perAccount}
			got := claimAll(t, s, limits, now)
			busyClaims, otherClaims := 0, 0
			for _, task := range got {
				switch task.AccountID {
				case busy.ID:
					busyClaims++
				case other.ID:
					otherClaims++
					if task.EndpointID != otherEp.ID {
						t.Errorf("claimed %+v", task)
					}
				}
			}
			// 20 endpoints with 5 deliveries each: the per-endpoint limit
			// alone would allow 20*min(perEndpoint, 5).
			wantBusy := min(tc.perAccount, locrisk.MaxActiveEndpoints*min(tc.perEndpoint, 5))
			if busyClaims != wantBusy || otherClaims != 1 {
				t.Errorf("claims: %d of the busy account (want %d), %d of the other (want 1)", busyClaims, wantBusy, otherClaims)
			}
			if next, ok, err := s.NextWebhookDue(ctx, limits, now); err != nil || !ok || next.Before(now.Add(time.Minute)) {
				t.Errorf("NextWebhookDue with every account at its limit = %v %v %v, want the first lease end %v", next, ok, err, now.Add(time.Minute))
			}
		})
	}
}

// TestClaimTurnsBetweenAccounts: accounts with claimable deliveries take
// turns. An account's backlog due long before another account's new
// delivery (a burst, or failing endpoints whose retries fell due) does not
// go first: the newcomer is claimed within one claim per waiting account,
// and from then on the accounts alternate.
func TestClaimTurnsBetweenAccounts(t *testing.T) {
	s := newStore(t, Options{})
	backlog := newAccount(t, s, 1000)
	a2 := newAccount(t, s, 1000)
	a3 := newAccount(t, s, 1000)
	for range 5 {
		newEndpoint(t, s, backlog.ID, t0)
	}
	newEndpoint(t, s, a2.ID, t0)
	newEndpoint(t, s, a3.ID, t0)
	limits := locrisk.DeliveryLimits{PerEndpoint: 100, PerAccount: 1000}
	for i := range 40 {
		newEvent(t, s, backlog.ID, evCompleted, t0.Add(time.Duration(i)*time.Millisecond))
	}
	// The backlog account has been served before; its deliveries are
	// older than anything else.
	now := t0.Add(time.Hour)
	first := claimAll(t, s, locrisk.DeliveryLimits{PerEndpoint: 1, PerAccount: 1}, now)
	if len(first) != 1 || first[0].AccountID != backlog.ID {
		t.Fatalf("first claim %+v", first)
	}
	newEvent(t, s, a2.ID, evCompleted, now.Add(-time.Second))
	newEvent(t, s, a2.ID, evCompleted, now.Add(-time.Second))
	newEvent(t, s, a3.ID, evCompleted, now.Add(-time.Second+time.Millisecond))

	got := accountsOf(claimAll(t, s, limits, now))[:6]
	want := []string{a2.ID, a3.ID, backlog.ID, a2.ID, backlog.ID, backlog.ID}
	if !slices.Equal(got, want) {
		t.Errorf("claim order by account %v, want %v (backlog %s, a2 %s, a3 %s)", got, want, backlog.ID, a2.ID, a3.ID)
	}
}

// TestDeliveryClaimQueryPlans: the delivery claim and NextWebhookDue walk
// the active endpoints through their index and reach deliveries only
// through indexes (a seek per endpoint): no scan of the deliveries, however
// many there are. The only sort is of the candidates, one per active
// endpoint.
func TestDeliveryClaimQueryPlans(t *testing.T) {
	s := newStore(t, Options{})
	tests := []struct {
		name, query string
		args        []any
		uses        []string
	}{
		{"claim", claimDelivery, []any{"x", "x", 2, 8}, []string{"webhook_endpoints_active", "webhook_deliveries_endpoint_due",
			"webhook_deliveries_leased", "webhook_deliveries_account_leased", "sqlite_autoindex_webhook_delivery_turns_1"}},
		{"take turn", claimDeliveryTurn, []any{"x"}, []string{"webhook_delivery_turns_by_claim"}},
		{"next due", nextDeliveryDue, []any{"x", 2, 8}, []string{"webhook_endpoints_active", "webhook_deliveries_endpoint_due",
			"webhook_deliveries_leased", "webhook_deliveries_account_leased"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var plan []struct {
				ID     int    `db:"id"`
				Parent int    `db:"parent"`
				NotUse int    `db:"notused"`
				Detail string `db:"detail"`
			}
			if err := s.db.Select(&plan, "EXPLAIN QUERY PLAN "+tc.query, tc.args...); err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, p := range plan {
				all = append(all, p.Detail)
			}
			text := strings.Join(all, "\n")
			for _, p := range all {
				if strings.HasPrefix(p, "SCAN ") && !strings.Contains(p, "USING INDEX webhook_endpoints_active") &&
					!strings.Contains(p, "USING COVERING INDEX webhook_endpoints_active") && p != "SCAN CONSTANT ROW" {
					t.Errorf("plan step %q:\n%s", p, text)
				}
			}
			for _, ix := range tc.uses {
				if !strings.Contains(text, "INDEX "+ix) {
					t.Errorf("plan does not use %s:\n%s", ix, text)
				}
			}
		})
	}
}

// TestReleaseAfterDisable: a delivery released (shutdown) after its
// endpoint was disabled ends as failed instead of staying pending where no
// claim takes it.
func TestReleaseAfterDisable(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 100)
	ep := newEndpoint(t, s, a.ID, t0)
	id := newEvent(t, s, a.ID, evCompleted, t0)[0]
	task, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), t0)
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if err := s.DisableWebhookEndpoint(ctx, a.ID, ep.ID, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseWebhookDelivery(ctx, task); err != nil {
		t.Fatal(err)
	}
	d := storetest.DeliveryByID(t, s, a.ID, id)
	if d.Status != locrisk.DeliveryFailed || d.Error == nil || *d.Error != locrisk.ErrorEndpointDisabled || d.NextAttemptUTC != nil || d.Attempts != 0 {
		t.Errorf("released delivery of a disabled endpoint: %+v", d)
	}
	// An active endpoint's release stays pending and due.
	ep2 := newEndpoint(t, s, a.ID, t0)
	id2 := newEvent(t, s, a.ID, evCompleted, t0)[0]
	task2, ok, _ := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), t0)
	if !ok || task2.EndpointID != ep2.ID {
		t.Fatalf("claim: %+v %v", task2, ok)
	}
	if err := s.ReleaseWebhookDelivery(ctx, task2); err != nil {
		t.Fatal(err)
	}
	if d := storetest.DeliveryByID(t, s, a.ID, id2); d.Status != locrisk.DeliveryPending || d.NextAttemptUTC == nil {
		t.Errorf("released delivery of an active endpoint: %+v", d)
	}
}

// TestWebhookEndpointQueryPlans: the endpoint list seeks to its cursor and
// the active-endpoint count reads only active endpoints, through indexes:
// neither cost grows with an account's disabled endpoints, of which it may
// have any number (BenchmarkWebhookEndpoints measures it).
func TestWebhookEndpointQueryPlans(t *testing.T) {
	s := newStore(t, Options{})
	pg, err := newPage(20, locrisk.EncodeCursor(t0, ids.New(ids.WebhookEndpoint)), ids.WebhookEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	list, listArgs := pageQuery(pg, listEndpointsQuery, []any{"acct_x"})
	tests := []struct {
		name, query string
		args        []any
		want        string
	}{
		{"list page", list, listArgs, "USING INDEX webhook_endpoints_by_account (account_id=? AND (created_utc,id)<(?,?))"},
		{"active count", countActiveEndpoints, []any{"acct_x"}, "USING COVERING INDEX webhook_endpoints_active (account_id=?)"},
	}
	for _, tc := range tests {
		var plan []struct {
			ID     int    `db:"id"`
			Parent int    `db:"parent"`
			NotUse int    `db:"notused"`
			Detail string `db:"detail"`
		}
		if err := s.db.Select(&plan, "EXPLAIN QUERY PLAN "+tc.query, tc.args...); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(plan) != 1 || !strings.HasSuffix(plan[0].Detail, tc.want) {
			t.Errorf("%s: plan %+v, want one step %q", tc.name, plan, tc.want)
		}
	}
}
