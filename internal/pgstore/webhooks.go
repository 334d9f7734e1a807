package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/secretbox"
)

type endpointRow struct {
	ID          string       `db:"id"`
	AccountID   string       `db:"account_id"`
	Name        string       `db:"name"`
	URL         string       `db:"url"`
	Events      string       `db:"events"`
	Active      bool         `db:"is_active"`
	CreatedUTC  time.Time    `db:"created_utc"`
	DisabledUTC sql.NullTime `db:"disabled_utc"`
}

const endpointColumns = `id, account_id, name, url, events, is_active, created_utc, disabled_utc`

func (r endpointRow) endpoint() locrisk.WebhookEndpoint {
	return locrisk.WebhookEndpoint{ID: r.ID, AccountID: r.AccountID, Name: r.Name, URL: r.URL, Events: strings.Fields(r.Events),
		Active: r.Active, CreatedUTC: utc(r.CreatedUTC), DisabledUTC: utcPtr(r.DisabledUTC)}
}

// sealSecret seals an endpoint's signing secret for its row, as the SQLite
// store does (docs/operations.md, Webhook signing secrets at rest).
func (s *Store) sealSecret(endpointID, secret string) (string, error) {
	if s.secrets == nil {
		return "", errors.New("no secret key to seal webhook signing secrets with")
	}
	return s.secrets.Seal(secret, endpointID), nil
}

func (s *Store) openSecret(endpointID, stored string) (string, error) {
	if !secretbox.IsSealed(stored) {
		return stored, nil
	}
	if s.secrets == nil {
		return "", fmt.Errorf("signing secret of %s: no secret key to open it with", endpointID)
	}
	plain, err := s.secrets.Open(stored, endpointID)
	if err != nil {
		return "", fmt.Errorf("signing secret of %s: the secret key does not open it: %w", endpointID, err)
	}
	return plain, nil
}

// CreateWebhookEndpoint stores an active endpoint with a fresh signing
// secret. The account's row is locked while the active endpoints are
// counted, so two nodes cannot both pass the limit.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, ne locrisk.NewWebhookEndpoint, now time.Time) (locrisk.WebhookEndpoint, string, error) {
	if ne.AccountID == "" || ne.Name == "" || ne.URL == "" || len(ne.Events) == 0 {
		return locrisk.WebhookEndpoint{}, "", fmt.Errorf("%w: endpoint needs an account, name, url and events", locrisk.ErrInvalid)
	}
	for _, ev := range ne.Events {
		if ev == "" || strings.ContainsAny(ev, " \t\r\n") {
			return locrisk.WebhookEndpoint{}, "", fmt.Errorf("%w: event name %q", locrisk.ErrInvalid, ev)
		}
	}
	e := locrisk.WebhookEndpoint{ID: ids.New(ids.WebhookEndpoint), AccountID: ne.AccountID, Name: ne.Name, URL: ne.URL,
		Events: append([]string(nil), ne.Events...), Active: true, CreatedUTC: ms(now)}
	secret := ids.NewSecret(ids.SigningSecret)
	stored, err := s.sealSecret(e.ID, secret)
	if err != nil {
		return locrisk.WebhookEndpoint{}, "", fmt.Errorf("create webhook endpoint: %w", err)
	}
	err = s.withTx(ctx, func(tx *sqlx.Tx) error {
		var id string
		err := tx.GetContext(ctx, &id, `SELECT id FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, ne.AccountID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("account %s: %w", ne.AccountID, locrisk.ErrNotFound)
		}
		if err != nil {
			return err
		}
		var active int
		if err := tx.GetContext(ctx, &active, `SELECT COUNT(*) FROM webhook_endpoints WHERE account_id = $1 AND is_active`, ne.AccountID); err != nil {
			return fmt.Errorf("count active endpoints: %w", err)
		}
		if active >= locrisk.MaxActiveEndpoints {
			return locrisk.ErrEndpointLimit
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (id, account_id, name, url, events, signing_secret, is_active, created_utc)
			VALUES ($1, $2, $3, $4, $5, $6, true, $7)`, e.ID, e.AccountID, e.Name, e.URL, strings.Join(e.Events, " "), stored, e.CreatedUTC)
		return err
	})
	if err != nil {
		return locrisk.WebhookEndpoint{}, "", fmt.Errorf("create webhook endpoint: %w", err)
	}
	return e, secret, nil
}

// GetWebhookEndpoint returns the account's endpoint, active or not.
func (s *Store) GetWebhookEndpoint(ctx context.Context, accountID, id string) (locrisk.WebhookEndpoint, error) {
	var r endpointRow
	err := s.db.GetContext(ctx, &r, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE id = $1 AND account_id = $2`, id, accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.WebhookEndpoint{}, fmt.Errorf("webhook endpoint %s: %w", id, locrisk.ErrNotFound)
	}
	if err != nil {
		return locrisk.WebhookEndpoint{}, fmt.Errorf("get webhook endpoint %s: %w", id, err)
	}
	return r.endpoint(), nil
}

// ListWebhookEndpoints pages the account's endpoints, newest first.
func (s *Store) ListWebhookEndpoints(ctx context.Context, accountID string, limit int, cursor string) ([]locrisk.WebhookEndpoint, string, error) {
	pg, err := newPage(limit, cursor, ids.WebhookEndpoint)
	if err != nil {
		return nil, "", err
	}
	q, args := pg.query(`SELECT `+endpointColumns+` FROM webhook_endpoints WHERE account_id = $1`, []any{accountID}, "", "")
	var rows []endpointRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list webhook endpoints: %w", err)
	}
	rows, next := pageRows(pg, rows, func(r endpointRow) (time.Time, string) { return r.CreatedUTC, r.ID })
	out := make([]locrisk.WebhookEndpoint, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.endpoint())
	}
	return out, next, nil
}

// DisableWebhookEndpoint marks the endpoint inactive and fails its pending
// deliveries not in flight; disabling twice succeeds.
func (s *Store) DisableWebhookEndpoint(ctx context.Context, accountID, id string, now time.Time) error {
	now = ms(now)
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		var active bool
		err := tx.GetContext(ctx, &active, `SELECT is_active FROM webhook_endpoints WHERE id = $1 AND account_id = $2 FOR UPDATE`, id, accountID)
		if errors.Is(err, sql.ErrNoRows) {
			return locrisk.ErrNotFound
		}
		if err != nil || !active {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET is_active = false, disabled_utc = $1 WHERE id = $2`, now, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE webhook_deliveries
			SET status = 'failed', error = $1, next_attempt_utc = NULL, lease_expires_utc = NULL
			WHERE endpoint_id = $2 AND status = 'pending' AND (lease_expires_utc IS NULL OR lease_expires_utc < $3)`,
			locrisk.ErrorEndpointDisabled, id, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("disable webhook endpoint %s: %w", id, err)
	}
	return nil
}

func activeEndpoint(ctx context.Context, tx *sqlx.Tx, accountID, endpointID string) error {
	var active bool
	err := tx.GetContext(ctx, &active, `SELECT is_active FROM webhook_endpoints WHERE id = $1 AND account_id = $2`, endpointID, accountID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("webhook endpoint %s: %w", endpointID, locrisk.ErrNotFound)
	case err != nil:
		return fmt.Errorf("read webhook endpoint %s: %w", endpointID, err)
	case !active:
		return fmt.Errorf("webhook endpoint %s: %w", endpointID, locrisk.ErrEndpointDisabled)
	}
	return nil
}

func webhookSubscribers(ctx context.Context, tx *sqlx.Tx, accountID, eventType string) ([]string, error) {
	var rows []struct {
		ID     string `db:"id"`
		Events string `db:"events"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT id, events FROM webhook_endpoints
		WHERE account_id = $1 AND is_active ORDER BY created_utc, id`, accountID); err != nil {
		return nil, fmt.Errorf("find webhook subscribers: %w", err)
	}
	var out []string
	for _, r := range rows {
		for _, ev := range strings.Fields(r.Events) {
			if ev == eventType {
				out = append(out, r.ID)
				break
			}
		}
	}
	return out, nil
}

func insertWebhookEvent(ctx context.Context, tx *sqlx.Tx, ev locrisk.WebhookEvent, endpointIDs []string) ([]string, error) {
	if !ids.HasPrefix(ev.ID, ids.Event) || ev.Type == "" || len(ev.Body) == 0 {
		return nil, fmt.Errorf("%w: incomplete webhook event %q", locrisk.ErrInvalid, ev.ID)
	}
	created := ms(ev.CreatedUTC)
	var job sql.NullString
	if ev.JobID != "" {
		job = sql.NullString{String: ev.JobID, Valid: true}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_events (id, account_id, type, job_id, body, created_utc)
		VALUES ($1, $2, $3, $4, $5, $6)`, ev.ID, ev.AccountID, ev.Type, job, string(ev.Body), created); err != nil {
		return nil, fmt.Errorf("insert webhook event: %w", err)
	}
	out := make([]string, 0, len(endpointIDs))
	for _, ep := range endpointIDs {
		id := ids.New(ids.Delivery)
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries
			(id, event_id, endpoint_id, account_id, status, attempts, next_attempt_utc, created_utc)
			VALUES ($1, $2, $3, $4, 'pending', 0, $5, $5)`, id, ev.ID, ep, ev.AccountID, created); err != nil {
			return nil, fmt.Errorf("insert webhook delivery: %w", err)
		}
		out = append(out, id)
	}
	return out, nil
}

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
	CreatedUTC     time.Time      `db:"created_utc"`
	LastAttemptUTC sql.NullTime   `db:"last_attempt_utc"`
	NextAttemptUTC sql.NullTime   `db:"next_attempt_utc"`
	DeliveredUTC   sql.NullTime   `db:"delivered_utc"`
}

func (r deliveryRow) delivery() locrisk.WebhookDelivery {
	d := locrisk.WebhookDelivery{ID: r.ID, EndpointID: r.EndpointID, EventID: r.EventID, Event: r.Event, Status: r.Status,
		Attempts: r.Attempts, Error: strPtr(r.Error), CreatedUTC: utc(r.CreatedUTC), LastAttemptUTC: utcPtr(r.LastAttemptUTC),
		NextAttemptUTC: utcPtr(r.NextAttemptUTC), DeliveredUTC: utcPtr(r.DeliveredUTC)}
	// Only job events name their job; batch.completed's job is kept for
	// the purge, not shown.
	if strings.HasPrefix(r.Event, "report.job.") {
		d.JobID = strPtr(r.JobID)
	}
	if r.ResponseStatus.Valid {
		v := int(r.ResponseStatus.Int64)
		d.ResponseStatus = &v
	}
	return d
}

const deliverySelect = `SELECT d.id, d.endpoint_id, d.event_id, e.type, e.job_id, d.status, d.attempts, d.response_status,
		d.error, d.created_utc, d.last_attempt_utc, d.next_attempt_utc, d.delivered_utc
	FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`

func getDelivery(ctx context.Context, q queryer, id string) (locrisk.WebhookDelivery, error) {
	var r deliveryRow
	if err := q.GetContext(ctx, &r, deliverySelect+` WHERE d.id = $1`, id); err != nil {
		return locrisk.WebhookDelivery{}, fmt.Errorf("read webhook delivery %s: %w", id, err)
	}
	return r.delivery(), nil
}

// ListWebhookDeliveries returns up to limit of the account's deliveries,
// newest first.
func (s *Store) ListWebhookDeliveries(ctx context.Context, accountID, endpointID string, limit int) ([]locrisk.WebhookDelivery, error) {
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 1000)
	q := deliverySelect + ` WHERE d.account_id = $1`
	args := []any{accountID}
	if endpointID != "" {
		args = append(args, endpointID)
		q += ` AND d.endpoint_id = $2`
	}
	args = append(args, limit)
	q += fmt.Sprintf(` ORDER BY d.created_utc DESC, d.id DESC LIMIT $%d`, len(args))
	var rows []deliveryRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, fmt.Errorf("list webhook deliveries: %w", err)
	}
	out := make([]locrisk.WebhookDelivery, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.delivery())
	}
	return out, nil
}

// QueueTestWebhook writes ev and one delivery of it to the endpoint.
func (s *Store) QueueTestWebhook(ctx context.Context, accountID, endpointID string, ev locrisk.WebhookEvent) (locrisk.WebhookDelivery, error) {
	ev.CreatedUTC, ev.AccountID = ms(ev.CreatedUTC), accountID
	var d locrisk.WebhookDelivery
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
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

// RedeliverWebhook puts a failed delivery back to pending, same id and event.
func (s *Store) RedeliverWebhook(ctx context.Context, accountID, deliveryID string, now time.Time) (locrisk.WebhookDelivery, error) {
	now = ms(now)
	var d locrisk.WebhookDelivery
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		var cur struct {
			Status     string `db:"status"`
			EndpointID string `db:"endpoint_id"`
		}
		err := tx.GetContext(ctx, &cur, `SELECT status, endpoint_id FROM webhook_deliveries WHERE id = $1 AND account_id = $2 FOR UPDATE`,
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
			SET status = 'pending', next_attempt_utc = $1, lease_expires_utc = NULL, schedule_start = attempts
			WHERE id = $2 AND status = 'failed'`, now, deliveryID); err != nil {
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

func checkLimits(l locrisk.DeliveryLimits) error {
	if l.PerEndpoint <= 0 || l.PerAccount <= 0 {
		return fmt.Errorf("%w: a claim needs positive per-endpoint and per-account limits", locrisk.ErrInvalid)
	}
	return nil
}

// deliveryClaimLock is the advisory lock that serializes webhook claims:
// the limits count the leases of every node, so two claims must not count
// at once. Claims are short; they take turns.
const deliveryClaimLock = 0x6c6f6377 // "locw"

// claimableDelivery picks the next due delivery to an active endpoint
// under its limits, the account whose last claim is the oldest first.
const claimableDelivery = `SELECT d.id, d.attempts, d.account_id, d.schedule_start
	FROM webhook_deliveries d
	JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.is_active
	LEFT JOIN webhook_delivery_turns t ON t.account_id = d.account_id
	WHERE d.status = 'pending' AND d.next_attempt_utc <= $1 AND (d.lease_expires_utc IS NULL OR d.lease_expires_utc < $1)
	  AND (SELECT COUNT(*) FROM webhook_deliveries l WHERE l.endpoint_id = d.endpoint_id AND l.lease_expires_utc >= $1) < $2
	  AND (SELECT COUNT(*) FROM webhook_deliveries a WHERE a.account_id = d.account_id AND a.lease_expires_utc >= $1) < $3
	ORDER BY COALESCE(t.last_claim, 0), d.next_attempt_utc, d.created_utc, d.id
	LIMIT 1`

// ClaimWebhookDelivery leases the next due delivery within limits.
func (s *Store) ClaimWebhookDelivery(ctx context.Context, lease time.Duration, limits locrisk.DeliveryLimits, now time.Time) (locrisk.DeliveryTask, bool, error) {
	if lease <= 0 {
		return locrisk.DeliveryTask{}, false, fmt.Errorf("%w: a claim needs a positive lease", locrisk.ErrInvalid)
	}
	if err := checkLimits(limits); err != nil {
		return locrisk.DeliveryTask{}, false, err
	}
	now = ms(now)
	leaseUntil := ms(now.Add(lease))
	var t locrisk.DeliveryTask
	found := false
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		found = false
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, deliveryClaimLock); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries d
			SET status = 'failed', error = $1, next_attempt_utc = NULL, lease_expires_utc = NULL
			FROM webhook_endpoints w
			WHERE w.id = d.endpoint_id AND NOT w.is_active AND d.status = 'pending'
			  AND d.lease_expires_utc IS NOT NULL AND d.lease_expires_utc < $2`, locrisk.ErrorEndpointDisabled, now); err != nil {
			return fmt.Errorf("fail deliveries of disabled endpoints: %w", err)
		}
		var row struct {
			ID            string `db:"id"`
			Attempts      int    `db:"attempts"`
			AccountID     string `db:"account_id"`
			ScheduleStart int    `db:"schedule_start"`
		}
		err := tx.GetContext(ctx, &row, claimableDelivery, now, limits.PerEndpoint, limits.PerAccount)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET lease_expires_utc = $1 WHERE id = $2`, leaseUntil, row.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_delivery_turns (account_id, last_claim)
			VALUES ($1, nextval('webhook_delivery_claims'))
			ON CONFLICT (account_id) DO UPDATE SET last_claim = excluded.last_claim`, row.AccountID); err != nil {
			return fmt.Errorf("record the account's delivery turn: %w", err)
		}
		var d struct {
			EndpointID string         `db:"endpoint_id"`
			EventID    string         `db:"event_id"`
			EventType  string         `db:"type"`
			JobID      sql.NullString `db:"job_id"`
			Body       string         `db:"body"`
			URL        string         `db:"url"`
			Secret     string         `db:"signing_secret"`
		}
		if err := tx.GetContext(ctx, &d, `SELECT d.endpoint_id, d.event_id, e.type, e.job_id, e.body, w.url, w.signing_secret
			FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
			WHERE d.id = $1`, row.ID); err != nil {
			return fmt.Errorf("read claimed delivery %s: %w", row.ID, err)
		}
		t = locrisk.DeliveryTask{ID: row.ID, EndpointID: d.EndpointID, AccountID: row.AccountID, EventID: d.EventID,
			EventType: d.EventType, JobID: d.JobID.String, URL: d.URL, Secret: d.Secret, Body: []byte(d.Body),
			Attempts: row.Attempts, ScheduleStart: row.ScheduleStart, Lease: leaseUntil}
		found = true
		return nil
	})
	if err != nil {
		return locrisk.DeliveryTask{}, false, fmt.Errorf("claim webhook delivery: %w", err)
	}
	if found {
		if t.Secret, err = s.openSecret(t.EndpointID, t.Secret); err != nil {
			return locrisk.DeliveryTask{}, false, fmt.Errorf("claim webhook delivery %s: %w", t.ID, err)
		}
	}
	return t, found, nil
}

// NextWebhookDue says when a claim with the same limits may next find
// something: the earliest due delivery of an endpoint under its limits,
// or the earliest lease to expire of one at them.
func (s *Store) NextWebhookDue(ctx context.Context, limits locrisk.DeliveryLimits, now time.Time) (time.Time, bool, error) {
	if err := checkLimits(limits); err != nil {
		return time.Time{}, false, err
	}
	now = ms(now)
	var next sql.NullTime
	err := s.db.GetContext(ctx, &next, `SELECT MIN(t) FROM (
			SELECT MIN(l.lease_expires_utc) AS t FROM webhook_deliveries l JOIN webhook_endpoints w ON w.id = l.endpoint_id AND w.is_active
				WHERE l.lease_expires_utc >= $1
			UNION ALL
			SELECT MIN(d.next_attempt_utc) FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.is_active
				WHERE d.status = 'pending' AND (d.lease_expires_utc IS NULL OR d.lease_expires_utc < $1)
				  AND (SELECT COUNT(*) FROM webhook_deliveries l WHERE l.endpoint_id = d.endpoint_id AND l.lease_expires_utc >= $1) < $2
				  AND (SELECT COUNT(*) FROM webhook_deliveries a WHERE a.account_id = d.account_id AND a.lease_expires_utc >= $1) < $3
		) AS due`, now, limits.PerEndpoint, limits.PerAccount)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next webhook delivery due: %w", err)
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	return utc(next.Time), true, nil
}

// RecordWebhookAttempt records an attempt of the claimed task and ends the
// claim, returning the delivery's new status.
func (s *Store) RecordWebhookAttempt(ctx context.Context, t locrisk.DeliveryTask, a locrisk.DeliveryAttempt, now time.Time) (string, error) {
	now = ms(now)
	status := locrisk.DeliveryPending
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		status = locrisk.DeliveryPending
		var active bool
		if err := tx.GetContext(ctx, &active, `SELECT is_active FROM webhook_endpoints WHERE id = $1`, t.EndpointID); err != nil {
			return fmt.Errorf("read endpoint %s: %w", t.EndpointID, err)
		}
		var next, delivered sql.NullTime
		var errText sql.NullString
		var respStatus sql.NullInt64
		if a.ResponseStatus > 0 {
			respStatus = sql.NullInt64{Int64: int64(a.ResponseStatus), Valid: true}
		}
		switch {
		case a.Success:
			status, delivered = locrisk.DeliverySucceeded, sql.NullTime{Time: now, Valid: true}
		case !active:
			status = locrisk.DeliveryFailed
			errText = sql.NullString{String: a.Error + " (" + locrisk.ErrorEndpointDisabled + ": no further attempts)", Valid: true}
		case a.NextAttempt == nil:
			status, errText = locrisk.DeliveryFailed, sql.NullString{String: a.Error, Valid: true}
		default:
			next, errText = sql.NullTime{Time: ms(*a.NextAttempt), Valid: true}, sql.NullString{String: a.Error, Valid: true}
		}
		res, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries
			SET status = $1, attempts = attempts + 1, response_status = $2, error = $3, next_attempt_utc = $4,
				lease_expires_utc = NULL, last_attempt_utc = $5, delivered_utc = $6
			WHERE id = $7 AND status = 'pending' AND lease_expires_utc = $8`,
			status, respStatus, errText, next, ms(a.Started), delivered, t.ID, ms(t.Lease))
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
// attempt (failed at once when its endpoint was disabled meanwhile).
func (s *Store) ReleaseWebhookDelivery(ctx context.Context, t locrisk.DeliveryTask) error {
	res, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries d SET lease_expires_utc = NULL,
			status = CASE WHEN w.is_active THEN 'pending' ELSE 'failed' END,
			error = CASE WHEN w.is_active THEN d.error ELSE $1 END,
			next_attempt_utc = CASE WHEN w.is_active THEN d.next_attempt_utc END
		FROM webhook_endpoints w
		WHERE w.id = d.endpoint_id AND d.id = $2 AND d.status = 'pending' AND d.lease_expires_utc = $3`,
		locrisk.ErrorEndpointDisabled, t.ID, ms(t.Lease))
	if err != nil {
		return fmt.Errorf("release webhook delivery %s: %w", t.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("release webhook delivery %s: %w", t.ID, err)
	} else if n == 0 {
		return fmt.Errorf("release webhook delivery %s: %w", t.ID, locrisk.ErrLeaseLost)
	}
	return nil
}
