package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
)

// The claim's queries before the indexed ones, which ordered every
// claimable delivery and counted leases over the whole table for each:
// too slow with a backlog, but plainly what a claim means, so the
// reference the indexed queries (webhooks.go) must agree with.
const (
	referenceClaimable = `SELECT d.id
		FROM webhook_deliveries d
		JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.is_active
		LEFT JOIN webhook_delivery_turns t ON t.account_id = d.account_id
		WHERE d.status = 'pending' AND d.next_attempt_utc <= $1 AND (d.lease_expires_utc IS NULL OR d.lease_expires_utc < $1)
		  AND (SELECT COUNT(*) FROM webhook_deliveries l WHERE l.endpoint_id = d.endpoint_id AND l.lease_expires_utc >= $1) < $2
		  AND (SELECT COUNT(*) FROM webhook_deliveries a WHERE a.account_id = d.account_id AND a.lease_expires_utc >= $1) < $3
		ORDER BY COALESCE(t.last_claim, 0), d.next_attempt_utc, d.created_utc, d.id
		LIMIT 1`
	referenceNextDue = `SELECT MIN(t) FROM (
			SELECT MIN(l.lease_expires_utc) AS t FROM webhook_deliveries l JOIN webhook_endpoints w ON w.id = l.endpoint_id AND w.is_active
				WHERE l.lease_expires_utc >= $1
			UNION ALL
			SELECT MIN(d.next_attempt_utc) FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.is_active
				WHERE d.status = 'pending' AND (d.lease_expires_utc IS NULL OR d.lease_expires_utc < $1)
				  AND (SELECT COUNT(*) FROM webhook_deliveries l WHERE l.endpoint_id = d.endpoint_id AND l.lease_expires_utc >= $1) < $2
				  AND (SELECT COUNT(*) FROM webhook_deliveries a WHERE a.account_id = d.account_id AND a.lease_expires_utc >= $1) < $3
		) AS due`
)

// TestClaimMatchesReference: on random outboxes (deliveries pending, done
// or failed, due before or after now, unleased, with a lease in force or
// expired, to active and disabled endpoints, accounts with and without a
// turn, ties in every key of a delivery), the claim picks the delivery
// the reference query picks, and NextWebhookDue says what the reference
// says, under several limits.
func TestClaimMatchesReference(t *testing.T) {
	s := openFresh(t, serverDSN(t), Options{})
	ctx := context.Background()
	base := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	targets := newBacklogTargets(t, s, backlogShape{accounts: 3, endpoints: 3}, "https://hooks.example.com/x", base)
	fillPostgres(t, s, targets, 360, base, "r", false)
	// A disabled endpoint of the first account with deliveries of its own,
	// whose leases in force still count towards the account's limit.
	gone, _, err := s.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{AccountID: targets[0].account, Name: "gone",
		URL: "https://hooks.example.com/gone", Events: []string{"webhook.test"}}, base)
	if err != nil {
		t.Fatal(err)
	}
	fillPostgres(t, s, []backlogTarget{{targets[0].account, gone.ID}}, 40, base, "g", false)
	if err := s.DisableWebhookEndpoint(ctx, targets[0].account, gone.ID, base); err != nil {
		t.Fatal(err)
	}
	limits := []locrisk.DeliveryLimits{{PerEndpoint: 1, PerAccount: 1}, {PerEndpoint: 1, PerAccount: 3}, {PerEndpoint: 2, PerAccount: 8},
		{PerEndpoint: 3, PerAccount: 2}, {PerEndpoint: 5, PerAccount: 12}, {PerEndpoint: 100, PerAccount: 100}}
	agreed := map[bool]int{}
	for round := range 100 {
		// Times in whole seconds around base, so that keys tie.
		err := s.withTx(ctx, func(tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, `SELECT setseed($1)`, float64(round)/101); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET
					status = (ARRAY['pending', 'pending', 'pending', 'pending', 'succeeded', 'failed'])[1 + floor(random() * 6)::int],
					next_attempt_utc = $1::timestamptz + floor(random() * 40 - 30) * interval '1 second',
					created_utc = $1::timestamptz + floor(random() * 10 - 40) * interval '1 second',
					lease_expires_utc = CASE WHEN random() < 0.02 + 0.06 * $2 THEN $1::timestamptz + floor(random() * 20 - 5) * interval '1 second' END`,
				base, float64(round%3)/2); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET next_attempt_utc = NULL, lease_expires_utc = NULL
				WHERE status <> 'pending'`); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_delivery_turns`); err != nil {
				return err
			}
			// Turns as claims stamp them: from one sequence, so distinct
			// and from 1; some accounts never claimed for.
			_, err := tx.ExecContext(ctx, `INSERT INTO webhook_delivery_turns (account_id, last_claim)
				SELECT id, row_number() OVER (ORDER BY random()) FROM accounts WHERE random() < 0.7`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range limits {
			var want, got sql.NullString
			if err := s.db.GetContext(ctx, &want, referenceClaimable, base, l.PerEndpoint, l.PerAccount); err != nil && !errors.Is(err, sql.ErrNoRows) {
				t.Fatal(err)
			}
			if err := s.db.GetContext(ctx, &got, claimableDelivery, base, l.PerEndpoint, l.PerAccount); err != nil && !errors.Is(err, sql.ErrNoRows) {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("round %d, limits %+v: claim picks %v, the reference %v", round, l, got, want)
			}
			agreed[want.Valid]++
			var wantDue, gotDue sql.NullTime
			if err := s.db.GetContext(ctx, &wantDue, referenceNextDue, base, l.PerEndpoint, l.PerAccount); err != nil {
				t.Fatal(err)
			}
			if err := s.db.GetContext(ctx, &gotDue, nextDeliveryDue, base, l.PerEndpoint, l.PerAccount); err != nil {
				t.Fatal(err)
			}
			if gotDue.Valid != wantDue.Valid || !gotDue.Time.Equal(wantDue.Time) {
				t.Errorf("round %d, limits %+v: next due %v, the reference %v", round, l, gotDue, wantDue)
			}
		}
	}
	t.Logf("%d picks, %d with nothing claimable, all as the reference", agreed[true], agreed[false])
	// Both outcomes must have come up, or the rounds tested little.
	if agreed[true] < 50 || agreed[false] < 20 {
		t.Errorf("picks %d, nothing claimable %d: the random outboxes are too one-sided", agreed[true], agreed[false])
	}
}

// TestRecordToDisabledEndpoint: an attempt recorded after its endpoint
// was disabled fails the delivery for good, saying why, unless it
// succeeded; an attempt that never reports back is failed by the next
// claim once its lease has expired.
func TestRecordToDisabledEndpoint(t *testing.T) {
	s := openFresh(t, serverDSN(t), Options{})
	ctx := context.Background()
	at := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	tg := newBacklogTargets(t, s, backlogShape{accounts: 1, endpoints: 1}, "https://hooks.example.com/x", at)
	fillPostgres(t, s, tg, 4, at, "d", false)
	limits := locrisk.DeliveryLimits{PerEndpoint: 4, PerAccount: 4}
	var tasks []locrisk.DeliveryTask
	for range 3 {
		task, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, limits, at.Add(time.Second))
		if err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		tasks = append(tasks, task)
	}
	if err := s.DisableWebhookEndpoint(ctx, tg[0].account, tg[0].endpoint, at.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	next := at.Add(time.Hour)
	st, err := s.RecordWebhookAttempt(ctx, tasks[0], locrisk.DeliveryAttempt{ResponseStatus: 503, Error: "receiver responded with status 503",
		Started: at, NextAttempt: &next}, at.Add(2*time.Second))
	if err != nil || st != locrisk.DeliveryFailed {
		t.Errorf("failed attempt to a disabled endpoint: %q %v, want failed", st, err)
	}
	d := findDelivery(t, s, tg[0].account, tasks[0].ID)
	if want := "receiver responded with status 503 (" + locrisk.ErrorEndpointDisabled + ": no further attempts)"; d.Status != locrisk.DeliveryFailed ||
		d.Error == nil || *d.Error != want || d.NextAttemptUTC != nil || d.Attempts != 1 || d.ResponseStatus == nil || *d.ResponseStatus != 503 {
		t.Errorf("after a failed attempt to a disabled endpoint: %+v", d)
	}
	done := at.Add(3 * time.Second)
	st, err = s.RecordWebhookAttempt(ctx, tasks[1], locrisk.DeliveryAttempt{Success: true, ResponseStatus: 200, Started: at}, done)
	if err != nil || st != locrisk.DeliverySucceeded {
		t.Errorf("successful attempt to a disabled endpoint: %q %v, want succeeded", st, err)
	}
	d = findDelivery(t, s, tg[0].account, tasks[1].ID)
	if d.Status != locrisk.DeliverySucceeded || d.Error != nil || d.NextAttemptUTC != nil || d.DeliveredUTC == nil || !d.DeliveredUTC.Equal(done) {
		t.Errorf("after a successful attempt to a disabled endpoint: %+v", d)
	}
	// The third never reports back; the fourth was failed by disabling.
	if _, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, limits, at.Add(2*time.Minute)); err != nil || ok {
		t.Errorf("claim: %v %v, want nothing", ok, err)
	}
	for _, id := range []string{tasks[2].ID, "wd_d3"} {
		d = findDelivery(t, s, tg[0].account, id)
		if d.Status != locrisk.DeliveryFailed || d.Error == nil || *d.Error != locrisk.ErrorEndpointDisabled {
			t.Errorf("%s after disabling: %+v", id, d)
		}
	}
	if _, err := s.RecordWebhookAttempt(ctx, tasks[2], locrisk.DeliveryAttempt{Success: true, Started: at}, at); !errors.Is(err, locrisk.ErrLeaseLost) {
		t.Errorf("record after the claim's delivery was failed: %v, want ErrLeaseLost", err)
	}
}

// findDelivery finds the account's delivery by id.
func findDelivery(t *testing.T, s *Store, accountID, id string) locrisk.WebhookDelivery {
	t.Helper()
	ds, err := s.ListWebhookDeliveries(context.Background(), accountID, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.ID == id {
			return d
		}
	}
	t.Fatalf("no delivery %s", id)
	return locrisk.WebhookDelivery{}
}

// TestClaimLimitsAcrossNodes: two nodes claiming and recording at once
// never hand a delivery out twice nor exceed the limits, and deliver
// everything.
func TestClaimLimitsAcrossNodes(t *testing.T) {
	s := openFresh(t, serverDSN(t), Options{})
	ctx := context.Background()
	other, err := Open(ctx, s.dsn, Options{Secrets: testSecrets(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	at := time.Now().Add(-time.Minute)
	fillPostgres(t, s, newBacklogTargets(t, s, backlogShape{accounts: 2, endpoints: 5}, "https://hooks.example.com/x", at), 400, at, "n", false)
	if st := drainByClaims(t, []locrisk.WebhookOutbox{s, other}, 6, 400, time.Minute); st.delivered != 400 {
		t.Errorf("%v, want all 400", st)
	}
}
