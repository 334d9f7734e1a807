package sqlite

// The webhook outbox: the events a job's final transition writes (through
// Tx) with one pending delivery per subscribed endpoint, and the delivery
// worker's side, which claims a delivery with a lease, attempts it and
// records the attempt (internal/webhookworker).
//
// Claim tokens: a claim sets lease_expires_utc, and the same value must be
// presented to record or release the attempt. A delivery can only be claimed
// again after that lease has passed, so a later claim always carries a later
// lease: the value identifies one claim without a separate owner column.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// isEventID tells an event's id from any other.
func isEventID(id string) bool { return ids.HasPrefix(id, ids.Event) }

// InsertWebhookEvent writes the event and one pending delivery per
// endpoint id, due at once (at ev.CreatedUTC), inside the transaction: the
// outbox half of a job's final transition (through locrisk.Tx), or a test
// event. It returns the delivery ids in endpoint order.
func (t txOps) InsertWebhookEvent(ctx context.Context, ev locrisk.WebhookEvent, endpointIDs []string) ([]string, error) {
	if err := ev.Validate(isEventID); err != nil {
		return nil, err
	}
	created := FormatTime(ev.CreatedUTC)
	var job sql.NullString
	if ev.JobID != "" {
		job = sql.NullString{String: ev.JobID, Valid: true}
	}
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO webhook_events (id, account_id, type, job_id, body, created_utc)
		VALUES (?, ?, ?, ?, ?, ?)`, ev.ID, ev.AccountID, ev.Type, job, string(ev.Body), created); err != nil {
		return nil, fmt.Errorf("insert webhook event: %w", err)
	}
	out := make([]string, 0, len(endpointIDs))
	for _, ep := range endpointIDs {
		id := ids.New(ids.Delivery)
		if _, err := t.tx.ExecContext(ctx, `INSERT INTO webhook_deliveries
			(id, event_id, endpoint_id, account_id, status, attempts, next_attempt_utc, created_utc)
			VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)`, id, ev.ID, ep, ev.AccountID, created, created); err != nil {
			return nil, fmt.Errorf("insert webhook delivery: %w", err)
		}
		out = append(out, id)
	}
	return out, nil
}

// The delivery claim's queries, one constant each so that
// TestDeliveryClaimQueryPlans checks the very text the claim runs.
const (
	// claimDelivery leases the delivery to claim and returns it with its
	// account. ?1 is now, ?2 the new lease, ?3 the per-endpoint and ?4 the
	// per-account limit. It walks the active endpoints, not the due
	// deliveries: per endpoint one seek for its earliest due delivery
	// (webhook_deliveries_endpoint_due) and two counts of leases in force,
	// the endpoint's and its account's (webhook_deliveries_leased,
	// webhook_deliveries_account_leased, which hold only leased rows). Of
	// the candidates it takes the account whose last claim is the oldest
	// (webhook_delivery_turns; never claimed first), then the earliest due.
	claimDelivery = `UPDATE webhook_deliveries SET lease_expires_utc = ?2
		WHERE id = (
			SELECT d.id FROM webhook_endpoints w INDEXED BY webhook_endpoints_active
			JOIN webhook_deliveries d ON d.id = (
				SELECT x.id FROM webhook_deliveries x INDEXED BY webhook_deliveries_endpoint_due
				WHERE x.endpoint_id = w.id AND x.status = 'pending' AND x.next_attempt_utc <= ?1
				  AND (x.lease_expires_utc IS NULL OR x.lease_expires_utc < ?1)
				ORDER BY x.next_attempt_utc, x.created_utc LIMIT 1)
			LEFT JOIN webhook_delivery_turns t ON t.account_id = w.account_id
			WHERE w.is_active = 1
			  AND (SELECT COUNT(*) FROM webhook_deliveries l INDEXED BY webhook_deliveries_leased
				WHERE l.endpoint_id = w.id AND l.lease_expires_utc >= ?1) < ?3
			  AND (SELECT COUNT(*) FROM webhook_deliveries a INDEXED BY webhook_deliveries_account_leased
				WHERE a.account_id = w.account_id AND a.lease_expires_utc >= ?1) < ?4
			ORDER BY COALESCE(t.last_claim, 0), d.next_attempt_utc, d.created_utc
			LIMIT 1)
		RETURNING id, attempts, account_id, schedule_start`
	// claimDeliveryTurn: the account's claim becomes the newest (the
	// largest last_claim, read from webhook_delivery_turns_by_claim). ? is
	// the account.
	claimDeliveryTurn = `INSERT INTO webhook_delivery_turns (account_id, last_claim)
		VALUES (?, (SELECT COALESCE(MAX(last_claim), 0) + 1 FROM webhook_delivery_turns))
		ON CONFLICT (account_id) DO UPDATE SET last_claim = excluded.last_claim`
	// nextDeliveryDue: see NextWebhookDue. ?1 is now, ?2 the per-endpoint
	// and ?3 the per-account limit.
	nextDeliveryDue = `SELECT MIN(t) FROM (
			SELECT (SELECT MIN(l.lease_expires_utc) FROM webhook_deliveries l INDEXED BY webhook_deliveries_leased
				WHERE l.endpoint_id = w.id AND l.lease_expires_utc >= ?1) AS t
			FROM webhook_endpoints w INDEXED BY webhook_endpoints_active WHERE w.is_active = 1
			UNION ALL
			SELECT (SELECT x.next_attempt_utc FROM webhook_deliveries x INDEXED BY webhook_deliveries_endpoint_due
				WHERE x.endpoint_id = w.id AND x.status = 'pending'
				  AND (x.lease_expires_utc IS NULL OR x.lease_expires_utc < ?1)
				ORDER BY x.next_attempt_utc, x.created_utc LIMIT 1)
			FROM webhook_endpoints w INDEXED BY webhook_endpoints_active WHERE w.is_active = 1
			  AND (SELECT COUNT(*) FROM webhook_deliveries l INDEXED BY webhook_deliveries_leased
				WHERE l.endpoint_id = w.id AND l.lease_expires_utc >= ?1) < ?2
			  AND (SELECT COUNT(*) FROM webhook_deliveries a INDEXED BY webhook_deliveries_account_leased
				WHERE a.account_id = w.account_id AND a.lease_expires_utc >= ?1) < ?3)`
)

// ClaimWebhookDelivery takes the next due delivery: pending, next attempt
// at or before now, not leased (or its lease expired: the worker that held
// it died), to an active endpoint that has fewer than limits.PerEndpoint
// attempts in flight (unexpired leases) and whose account has fewer than
// limits.PerAccount. It leases it until now+lease and returns it; ok is
// false when nothing is claimable.
//
// The limits are what keep one slow receiver, or one account with many,
// from taking every worker (docs/api.md, Delivery and signing). Between
// accounts with claimable deliveries the claim takes turns: the account
// whose last claim is the oldest goes first, so one account's backlog (a
// burst of events, or failing endpoints whose retries fall due) delays
// another account's delivery by at most one claim per waiting account.
// Within an account, the earliest due delivery goes first. The query
// (claimDelivery) walks the active endpoints through indexes; its cost
// grows with the number of active endpoints (at most MaxActiveEndpoints
// per account), never with a backlog or with disabled endpoints.
//
// In the same transaction it fails the pending deliveries of disabled
// endpoints whose lease has expired (an attempt that was in flight when the
// endpoint was disabled and never reported back).
//
// Like every write it waits for the store's write slot, so a claim issued
// while a job's final transaction is open runs after that transaction has
// committed and sees the deliveries it wrote: the outbox hook may wake the
// delivery worker from inside the transaction.
func (s *Store) ClaimWebhookDelivery(ctx context.Context, lease time.Duration, limits locrisk.DeliveryLimits, now time.Time) (locrisk.DeliveryTask, bool, error) {
	if err := locrisk.CheckDeliveryClaim(lease, limits); err != nil {
		return locrisk.DeliveryTask{}, false, err
	}
	now = truncMs(now)
	nowS := FormatTime(now)
	leaseUntil := now.Add(lease)
	var t locrisk.DeliveryTask
	found := false
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		// Only a delivery with a lease can be pending for a disabled
		// endpoint (disabling ends the others; a release ends it too), so
		// the leased rows are the only ones to look at.
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries
			SET status = 'failed', error = ?, next_attempt_utc = NULL, lease_expires_utc = NULL
			WHERE id IN (SELECT d.id FROM webhook_deliveries d INDEXED BY webhook_deliveries_leased
				JOIN webhook_endpoints w ON w.id = d.endpoint_id
				WHERE d.lease_expires_utc IS NOT NULL AND d.lease_expires_utc < ?
				  AND d.status = 'pending' AND w.is_active = 0)`,
			locrisk.ErrorEndpointDisabled, nowS); err != nil {
			return fmt.Errorf("fail deliveries of disabled endpoints: %w", err)
		}
		var row struct {
			ID        string `db:"id"`
			Attempts  int    `db:"attempts"`
			AccountID string `db:"account_id"`
			// ScheduleStart: see DeliveryTask.
			ScheduleStart int `db:"schedule_start"`
		}
		err := tx.GetContext(ctx, &row, claimDelivery, nowS, FormatTime(leaseUntil), limits.PerEndpoint, limits.PerAccount)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, claimDeliveryTurn, row.AccountID); err != nil {
			return fmt.Errorf("record the account's delivery turn: %w", err)
		}
		var d struct {
			EndpointID string         `db:"endpoint_id"`
			AccountID  string         `db:"account_id"`
			EventID    string         `db:"event_id"`
			EventType  string         `db:"type"`
			JobID      sql.NullString `db:"job_id"`
			Body       string         `db:"body"`
			URL        string         `db:"url"`
			Secret     string         `db:"signing_secret"`
		}
		if err := tx.GetContext(ctx, &d, `SELECT d.endpoint_id, d.account_id, d.event_id, e.type, e.job_id, e.body,
				w.url, w.signing_secret
			FROM webhook_deliveries d
			JOIN webhook_events e ON e.id = d.event_id
			JOIN webhook_endpoints w ON w.id = d.endpoint_id
			WHERE d.id = ?`, row.ID); err != nil {
			return fmt.Errorf("read claimed delivery %s: %w", row.ID, err)
		}
		t = locrisk.DeliveryTask{ID: row.ID, EndpointID: d.EndpointID, AccountID: d.AccountID, EventID: d.EventID,
			EventType: d.EventType, JobID: d.JobID.String, URL: d.URL, Secret: d.Secret, Body: []byte(d.Body),
			Attempts: row.Attempts, ScheduleStart: row.ScheduleStart, Lease: truncMs(leaseUntil)}
		found = true
		return nil
	})
	if err != nil {
		return locrisk.DeliveryTask{}, false, fmt.Errorf("claim webhook delivery: %w", err)
	}
	if found {
		// Opened after the claim has committed: a secret that does not
		// open fails this claim, never signs with anything else, and the
		// lease keeps the delivery aside until it expires, so the others
		// go on.
		if t.Secret, err = s.openSecret(t.EndpointID, t.Secret); err != nil {
			return locrisk.DeliveryTask{}, false, fmt.Errorf("claim webhook delivery %s: %w", t.ID, err)
		}
	}
	return t, found, nil
}

// NextWebhookDue returns when a claim with the same limits may next find
// something at or after now; ok is false when nothing is pending to an
// active endpoint. The delivery worker sleeps until then. Per active
// endpoint that is the earliest end of a lease in force (a slot frees, or a
// lost attempt becomes claimable again) and, if the endpoint and its
// account are below their limits, its earliest unleased pending delivery.
// An endpoint or account at its limit with a due backlog is therefore not
// "due now", so the worker does not spin on it: a finished attempt wakes
// the worker anyway.
func (s *Store) NextWebhookDue(ctx context.Context, limits locrisk.DeliveryLimits, now time.Time) (time.Time, bool, error) {
	if err := limits.Validate(); err != nil {
		return time.Time{}, false, err
	}
	nowS := FormatTime(truncMs(now))
	var next sql.NullString
	err := s.db.GetContext(ctx, &next, nextDeliveryDue, nowS, limits.PerEndpoint, limits.PerAccount)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next webhook delivery due: %w", err)
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	t, err := ParseTime(next.String)
	if err != nil {
		return time.Time{}, false, err
	}
	return t, true, nil
}

// RecordWebhookAttempt records an attempt of the claimed task t and ends
// the claim: a success makes the delivery succeeded; a failure leaves it
// pending until a.NextAttempt, or makes it failed when there is none or the
// endpoint has been disabled meanwhile. It returns the delivery's new
// status. ErrLeaseLost when the claim is no longer t's (its lease expired
// and another worker took over).
func (s *Store) RecordWebhookAttempt(ctx context.Context, t locrisk.DeliveryTask, a locrisk.DeliveryAttempt, now time.Time) (string, error) {
	now = truncMs(now)
	status := locrisk.DeliveryPending
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var active bool
		if err := tx.GetContext(ctx, &active, `SELECT is_active FROM webhook_endpoints WHERE id = ?`, t.EndpointID); err != nil {
			return fmt.Errorf("read endpoint %s: %w", t.EndpointID, err)
		}
		var next, delivered, errText sql.NullString
		var respStatus sql.NullInt64
		if a.ResponseStatus > 0 {
			respStatus = sql.NullInt64{Int64: int64(a.ResponseStatus), Valid: true}
		}
		switch {
		case a.Success:
			status = locrisk.DeliverySucceeded
			delivered = sql.NullString{String: FormatTime(now), Valid: true}
		case !active:
			status = locrisk.DeliveryFailed
			errText = sql.NullString{String: a.Error + " (" + locrisk.ErrorEndpointDisabled + ": no further attempts)", Valid: true}
		case a.NextAttempt == nil:
			status = locrisk.DeliveryFailed
			errText = sql.NullString{String: a.Error, Valid: true}
		default:
			next = sql.NullString{String: FormatTime(*a.NextAttempt), Valid: true}
			errText = sql.NullString{String: a.Error, Valid: true}
		}
		res, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries
			SET status = ?, attempts = attempts + 1, response_status = ?, error = ?, next_attempt_utc = ?,
				lease_expires_utc = NULL, last_attempt_utc = ?, delivered_utc = ?
			WHERE id = ? AND status = 'pending' AND lease_expires_utc = ?`,
			status, respStatus, errText, next, FormatTime(a.Started), delivered, t.ID, FormatTime(t.Lease))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return locrisk.ErrLeaseLost
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("record webhook attempt %s: %w", t.ID, err)
	}
	return status, nil
}

// ReleaseWebhookDelivery hands a claimed delivery back without counting an
// attempt (graceful shutdown cut the attempt short), due again at once, or
// failed (ErrorEndpointDisabled) if its endpoint was disabled meanwhile.
// ErrLeaseLost when the claim is no longer t's.
func (s *Store) ReleaseWebhookDelivery(ctx context.Context, t locrisk.DeliveryTask) error {
	err := s.withWriteLock(ctx, func() error {
		// A delivery whose endpoint was disabled meanwhile ends here, as
		// disabling ends the others: no claim takes it any more.
		res, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET lease_expires_utc = NULL,
				status = CASE WHEN w.is_active = 1 THEN 'pending' ELSE 'failed' END,
				error = CASE WHEN w.is_active = 1 THEN webhook_deliveries.error ELSE ? END,
				next_attempt_utc = CASE WHEN w.is_active = 1 THEN webhook_deliveries.next_attempt_utc END
			FROM webhook_endpoints w
			WHERE w.id = webhook_deliveries.endpoint_id
			  AND webhook_deliveries.id = ? AND webhook_deliveries.status = 'pending'
			  AND webhook_deliveries.lease_expires_utc = ?`, locrisk.ErrorEndpointDisabled, t.ID, FormatTime(t.Lease))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return locrisk.ErrLeaseLost
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("release webhook delivery %s: %w", t.ID, err)
	}
	return nil
}
