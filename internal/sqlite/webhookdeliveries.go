package sqlite

// Webhook deliveries as the API shows them (docs/api.md, Webhooks): the
// list, a test event queued to one endpoint, and a failed delivery queued
// again.

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/sqlrow"
)

// deliveryRow is a delivery as deliverySelect reads it: the columns the
// domain names (locrisk.WebhookDelivery's db tags), and its times as
// TimeLayout text.
type deliveryRow struct {
	locrisk.WebhookDelivery
	CreatedUTC     string         `db:"created_utc"`
	LastAttemptUTC sql.NullString `db:"last_attempt_utc"`
	NextAttemptUTC sql.NullString `db:"next_attempt_utc"`
	DeliveredUTC   sql.NullString `db:"delivered_utc"`
}

func (r deliveryRow) delivery() (locrisk.WebhookDelivery, error) {
	d := r.WebhookDelivery
	d.JobID = locrisk.DeliveryJobID(d.Event, d.JobID)
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

// deliverySelect reads deliveries as the API lists them; a WHERE follows.
const deliverySelect = `SELECT d.id, d.endpoint_id, d.event_id, e.type, e.job_id, d.status, d.attempts, d.response_status,
			d.error, d.created_utc, d.last_attempt_utc, d.next_attempt_utc, d.delivered_utc
		FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`

// Delivery reads the account's delivery inside the transaction, which
// holds it against other writers (locrisk.WebhookTxOps).
func (t txOps) Delivery(ctx context.Context, accountID, id string) (locrisk.WebhookDelivery, bool, error) {
	var r deliveryRow
	found, err := present(t.tx.GetContext(ctx, &r, deliverySelect+` WHERE d.id = ? AND d.account_id = ?`, id, accountID))
	if !found || err != nil {
		return locrisk.WebhookDelivery{}, found, err
	}
	d, err := r.delivery()
	return d, err == nil, err
}

// RequeueDelivery puts the failed delivery back to pending, due at now,
// a fresh retry schedule starting from its attempts (schedule_start;
// locrisk.WebhookTxOps).
func (t txOps) RequeueDelivery(ctx context.Context, deliveryID string, now time.Time) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE webhook_deliveries
		SET status = 'pending', next_attempt_utc = ?, lease_expires_utc = NULL, schedule_start = attempts
		WHERE id = ? AND status = 'failed'`, FormatTime(now), deliveryID)
	return err
}

// QueueTestWebhook writes ev (a webhook.test event, JobID "") and one
// pending delivery of it to the account's endpoint, due at ev.CreatedUTC,
// whatever events the endpoint subscribes to, and returns the delivery. An
// unknown endpoint or another account's is ErrNotFound; a disabled one
// ErrEndpointDisabled. The caller wakes the delivery worker.
func (s *Store) QueueTestWebhook(ctx context.Context, accountID, endpointID string, ev locrisk.WebhookEvent) (locrisk.WebhookDelivery, error) {
	ev.CreatedUTC = truncMs(ev.CreatedUTC)
	return locrisk.QueueTestWebhook(ctx, transactor{s}, accountID, endpointID, ev)
}

// RedeliverWebhook puts the account's failed delivery back to pending, due
// at now, with the same id and event: its attempts stay counted and a fresh
// retry schedule starts from them (schedule_start), and the last attempt's
// status and error stay until the next attempt replaces them. An unknown
// delivery or another account's is ErrNotFound; one that is not failed is
// ErrDeliveryNotFailed; one whose endpoint is disabled ErrEndpointDisabled
// (checked in that order). The caller wakes the delivery worker.
func (s *Store) RedeliverWebhook(ctx context.Context, accountID, deliveryID string, now time.Time) (locrisk.WebhookDelivery, error) {
	return locrisk.RedeliverWebhook(ctx, transactor{s}, accountID, deliveryID, truncMs(now))
}

// ListWebhookDeliveries returns up to limit of the account's deliveries,
// newest first (created_utc DESC, id DESC), only those to endpointID when it
// is not "". The caller checks that endpointID belongs to the account.
func (s *Store) ListWebhookDeliveries(ctx context.Context, accountID, endpointID string, limit int) ([]locrisk.WebhookDelivery, error) {
	limit = locrisk.DeliveryListLimit(limit)
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
	return sqlrow.Map(rows, deliveryRow.delivery)
}
