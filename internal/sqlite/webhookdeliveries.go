package sqlite

// Webhook deliveries as the API shows them (docs/api.md, Webhooks): the
// list, a test event queued to one endpoint, and a failed delivery queued
// again.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/locrisk/locrisk"
)

type deliveryRow struct {
	ID             string         `db:"id"`
	EndpointID     string         `db:"endpoint_id"`
	EventID        string         `db:"event_id"`
	Event          string         `db:"type"`
	JobID          sql.NullString `db:"job_id"`
	Status         string         `db:"status"`
	Attempts       int            `db:"attempts"`
	ResponseStatus sql.NullInt64  `db:"response_status"`
	Error          sql.NullString `db:"error"`
	CreatedUTC     string         `db:"created_utc"`
	LastAttemptUTC sql.NullString `db:"last_attempt_utc"`
	NextAttemptUTC sql.NullString `db:"next_attempt_utc"`
	DeliveredUTC   sql.NullString `db:"delivered_utc"`
}

func (r deliveryRow) delivery() (locrisk.WebhookDelivery, error) {
	d := locrisk.WebhookDelivery{ID: r.ID, EndpointID: r.EndpointID, EventID: r.EventID, Event: r.Event,
		Status: r.Status, Attempts: r.Attempts, Error: strPtr(r.Error)}
	if strings.HasPrefix(r.Event, jobEventPrefix) {
		d.JobID = strPtr(r.JobID)
	}
	if r.ResponseStatus.Valid {
		v := int(r.ResponseStatus.Int64)
		d.ResponseStatus = &v
	}
	var err error
	if d.CreatedUTC, err = ParseTime(r.CreatedUTC); err != nil {
		return locrisk.WebhookDelivery{}, fmt.Errorf("webhook delivery %s: %w", r.ID, err)
	}
	for _, f := range []struct {
		dst **time.Time
		src sql.NullString
	}{{&d.LastAttemptUTC, r.LastAttemptUTC}, {&d.NextAttemptUTC, r.NextAttemptUTC}, {&d.DeliveredUTC, r.DeliveredUTC}} {
		if *f.dst, err = parseNullTime(f.src); err != nil {
			return locrisk.WebhookDelivery{}, fmt.Errorf("webhook delivery %s: %w", r.ID, err)
		}
	}
	return d, nil
}

// jobEventPrefix starts the types of the events about one report job, the
// only ones whose delivery names a jobId (docs/api.md, Webhooks).
const jobEventPrefix = "report.job."

// deliverySelect reads deliveries as the API lists them; a WHERE follows.
const deliverySelect = `SELECT d.id, d.endpoint_id, d.event_id, e.type, e.job_id, d.status, d.attempts, d.response_status,
			d.error, d.created_utc, d.last_attempt_utc, d.next_attempt_utc, d.delivered_utc
		FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`

// getDelivery reads one delivery inside tx.
func getDelivery(ctx context.Context, tx *sqlx.Tx, id string) (locrisk.WebhookDelivery, error) {
	var r deliveryRow
	if err := tx.GetContext(ctx, &r, deliverySelect+` WHERE d.id = ?`, id); err != nil {
		return locrisk.WebhookDelivery{}, fmt.Errorf("read webhook delivery %s: %w", id, err)
	}
	return r.delivery()
}

// QueueTestWebhook writes ev (a webhook.test event, JobID "") and one
// pending delivery of it to the account's endpoint, due at ev.CreatedUTC,
// whatever events the endpoint subscribes to, and returns the delivery. An
// unknown endpoint or another account's is ErrNotFound; a disabled one
// ErrEndpointDisabled. The caller wakes the delivery worker.
func (s *Store) QueueTestWebhook(ctx context.Context, accountID, endpointID string, ev locrisk.WebhookEvent) (locrisk.WebhookDelivery, error) {
	ev.CreatedUTC = truncMs(ev.CreatedUTC)
	ev.AccountID = accountID
	var d locrisk.WebhookDelivery
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if err := activeEndpoint(ctx, tx, accountID, endpointID); err != nil {
			return err
		}
		ids, err := insertWebhookEvent(ctx, tx, ev, []string{endpointID})
		if err != nil {
			return err
		}
		d, err = getDelivery(ctx, tx, ids[0])
		return err
	})
	if err != nil {
		return locrisk.WebhookDelivery{}, fmt.Errorf("queue test webhook: %w", err)
	}
	return d, nil
}

// RedeliverWebhook puts the account's failed delivery back to pending, due
// at now, with the same id and event: its attempts stay counted and a fresh
// retry schedule starts from them (schedule_start), and the last attempt's
// status and error stay until the next attempt replaces them. An unknown
// delivery or another account's is ErrNotFound; one that is not failed is
// ErrDeliveryNotFailed; one whose endpoint is disabled ErrEndpointDisabled
// (checked in that order). The caller wakes the delivery worker.
func (s *Store) RedeliverWebhook(ctx context.Context, accountID, deliveryID string, now time.Time) (locrisk.WebhookDelivery, error) {
	nowS := FormatTime(truncMs(now))
	var d locrisk.WebhookDelivery
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var cur struct {
			Status     string `db:"status"`
			EndpointID string `db:"endpoint_id"`
		}
		err := tx.GetContext(ctx, &cur, `SELECT status, endpoint_id FROM webhook_deliveries WHERE id = ? AND account_id = ?`,
			deliveryID, accountID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("webhook delivery %s: %w", deliveryID, locrisk.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if cur.Status != locrisk.DeliveryFailed {
			return fmt.Errorf("webhook delivery %s is %s: %w", deliveryID, cur.Status, locrisk.ErrDeliveryNotFailed)
		}
		if err := activeEndpoint(ctx, tx, accountID, cur.EndpointID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries
			SET status = 'pending', next_attempt_utc = ?, lease_expires_utc = NULL, schedule_start = attempts
			WHERE id = ? AND status = 'failed'`, nowS, deliveryID); err != nil {
			return fmt.Errorf("requeue webhook delivery %s: %w", deliveryID, err)
		}
		d, err = getDelivery(ctx, tx, deliveryID)
		return err
	})
	if err != nil {
		return locrisk.WebhookDelivery{}, fmt.Errorf("redeliver webhook: %w", err)
	}
	return d, nil
}

// ListWebhookDeliveries returns up to limit of the account's deliveries,
// newest first (created_utc DESC, id DESC), only those to endpointID when it
// is not "". The caller checks that endpointID belongs to the account.
func (s *Store) ListWebhookDeliveries(ctx context.Context, accountID, endpointID string, limit int) ([]locrisk.WebhookDelivery, error) {
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 1000)
	q := deliverySelect + ` WHERE d.account_id = ?`
	args := []any{accountID}
	if endpointID != "" {
		q += ` AND d.endpoint_id = ?`
		args = append(args, endpointID)
	}
	q += ` ORDER BY d.created_utc DESC, d.id DESC LIMIT ?`
	args = append(args, limit)
	var rows []deliveryRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, fmt.Errorf("list webhook deliveries: %w", err)
	}
	out := make([]locrisk.WebhookDelivery, 0, len(rows))
	for _, r := range rows {
		d, err := r.delivery()
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
