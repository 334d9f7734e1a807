package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk/internal/ids"
)

// Webhooks (docs/api.md, Webhooks): endpoints an account registers, the outbox
// of events written inside a job's final transaction, and one delivery per
// event and subscribed endpoint, which the delivery worker claims with a
// lease, attempts and records.
//
// Claim tokens: a claim sets lease_expires_utc, and the same value must be
// presented to record or release the attempt. A delivery can only be claimed
// again after that lease has passed, so a later claim always carries a later
// lease: the value identifies one claim without a separate owner column.

type endpointRow struct {
	ID          string         `db:"id"`
	AccountID   string         `db:"account_id"`
	Name        string         `db:"name"`
	URL         string         `db:"url"`
	Events      string         `db:"events"`
	Active      bool           `db:"is_active"`
	CreatedUTC  string         `db:"created_utc"`
	DisabledUTC sql.NullString `db:"disabled_utc"`
}

const endpointColumns = `id, account_id, name, url, events, is_active, created_utc, disabled_utc`

func (r endpointRow) endpoint() (WebhookEndpoint, error) {
	e := WebhookEndpoint{ID: r.ID, AccountID: r.AccountID, Name: r.Name, URL: r.URL,
		Events: strings.Fields(r.Events), Active: r.Active}
	var err error
	if e.CreatedUTC, err = ParseTime(r.CreatedUTC); err != nil {
		return WebhookEndpoint{}, fmt.Errorf("webhook endpoint %s: %w", r.ID, err)
	}
	if e.DisabledUTC, err = parseNullTime(r.DisabledUTC); err != nil {
		return WebhookEndpoint{}, fmt.Errorf("webhook endpoint %s: %w", r.ID, err)
	}
	return e, nil
}

// countActiveEndpoints counts an account's active endpoints through the
// partial index of active endpoints (migration 005), so an account's
// disabled endpoints, however many, are not read.
const countActiveEndpoints = `SELECT COUNT(*) FROM webhook_endpoints WHERE account_id = ? AND is_active = 1`

// CreateWebhookEndpoint stores a new active endpoint with a fresh signing
// secret (whsec_..., returned here and never again through the API; stored
// sealed with Options.Secrets, secrets.go, and ErrNoSecretKey without). The
// count of active endpoints and the insert share one immediate transaction,
// so concurrent creates cannot pass MaxActiveEndpoints (ErrEndpointLimit).
func (s *Store) CreateWebhookEndpoint(ctx context.Context, ne NewWebhookEndpoint, now time.Time) (WebhookEndpoint, string, error) {
	if ne.AccountID == "" || ne.Name == "" || ne.URL == "" || len(ne.Events) == 0 {
		return WebhookEndpoint{}, "", fmt.Errorf("%w: endpoint needs an account, name, url and events", ErrInvalid)
	}
	for _, ev := range ne.Events {
		if ev == "" || strings.ContainsAny(ev, " \t\r\n") {
			return WebhookEndpoint{}, "", fmt.Errorf("%w: event name %q", ErrInvalid, ev)
		}
	}
	e := WebhookEndpoint{
		ID: ids.New(ids.WebhookEndpoint), AccountID: ne.AccountID, Name: ne.Name, URL: ne.URL,
		Events: append([]string(nil), ne.Events...), Active: true, CreatedUTC: truncMs(now),
	}
	secret := ids.NewSecret(ids.SigningSecret)
	stored, err := s.sealSecret(e.ID, secret)
	if err != nil {
		return WebhookEndpoint{}, "", fmt.Errorf("create webhook endpoint: %w", err)
	}
	err = s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var active int
		if err := tx.GetContext(ctx, &active, countActiveEndpoints, ne.AccountID); err != nil {
			return fmt.Errorf("count active endpoints: %w", err)
		}
		if active >= MaxActiveEndpoints {
			return ErrEndpointLimit
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints
			(id, account_id, name, url, events, signing_secret, is_active, created_utc)
			VALUES (?, ?, ?, ?, ?, ?, 1, ?)`,
			e.ID, e.AccountID, e.Name, e.URL, strings.Join(e.Events, " "), stored, FormatTime(e.CreatedUTC))
		if err != nil {
			if strings.Contains(err.Error(), "FOREIGN KEY") {
				return fmt.Errorf("account %s: %w", ne.AccountID, ErrNotFound)
			}
			return fmt.Errorf("insert webhook endpoint: %w", err)
		}
		return nil
	})
	if err != nil {
		return WebhookEndpoint{}, "", fmt.Errorf("create webhook endpoint: %w", err)
	}
	return e, secret, nil
}

const listEndpointsQuery = `SELECT ` + endpointColumns + ` FROM webhook_endpoints WHERE account_id = ?`

// ListWebhookEndpoints returns up to limit of the account's endpoints,
// disabled ones included, newest first (created_utc DESC, id DESC),
// starting after cursor ("" = from the newest); nextCursor is "" on the last
// page. Paging and its errors are the job list's (see ListJobs); the
// webhook_endpoints_by_account index serves every page, however many
// disabled endpoints the account has.
func (s *Store) ListWebhookEndpoints(ctx context.Context, accountID string, limit int, cursor string) ([]WebhookEndpoint, string, error) {
	pg, err := newPage(limit, cursor, ids.WebhookEndpoint)
	if err != nil {
		return nil, "", err
	}
	q, args := pg.query(listEndpointsQuery, []any{accountID})
	var rows []endpointRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list webhook endpoints: %w", err)
	}
	rows, next := pageRows(pg, rows, func(r endpointRow) (string, string) { return r.CreatedUTC, r.ID })
	out := make([]WebhookEndpoint, 0, len(rows))
	for _, r := range rows {
		e, err := r.endpoint()
		if err != nil {
			return nil, "", err
		}
		out = append(out, e)
	}
	return out, next, nil
}

// GetWebhookEndpoint returns the account's endpoint, active or not; another
// account's is ErrNotFound.
func (s *Store) GetWebhookEndpoint(ctx context.Context, accountID, id string) (WebhookEndpoint, error) {
	var r endpointRow
	err := s.db.GetContext(ctx, &r, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE id = ? AND account_id = ?`, id, accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return WebhookEndpoint{}, fmt.Errorf("webhook endpoint %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return WebhookEndpoint{}, fmt.Errorf("get webhook endpoint %s: %w", id, err)
	}
	return r.endpoint()
}

// DisableWebhookEndpoint marks the account's endpoint inactive and, in the
// same transaction, fails its pending deliveries that are not in flight
// (error ErrorEndpointDisabled). Once it returns, no attempt to the endpoint
// is claimed any more; an attempt already in flight may still complete and
// is then recorded (a failure ends the delivery instead of scheduling a
// retry). Disabling a disabled endpoint changes nothing and succeeds.
// Another account's endpoint is ErrNotFound.
func (s *Store) DisableWebhookEndpoint(ctx context.Context, accountID, id string, now time.Time) error {
	now = truncMs(now)
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var active bool
		err := tx.GetContext(ctx, &active, `SELECT is_active FROM webhook_endpoints WHERE id = ? AND account_id = ?`, id, accountID)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if !active {
			return nil
		}
		nowS := FormatTime(now)
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET is_active = 0, disabled_utc = ? WHERE id = ?`, nowS, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE webhook_deliveries
			SET status = 'failed', error = ?, next_attempt_utc = NULL, lease_expires_utc = NULL
			WHERE endpoint_id = ? AND status = 'pending' AND (lease_expires_utc IS NULL OR lease_expires_utc < ?)`,
			ErrorEndpointDisabled, id, nowS)
		return err
	})
	if err != nil {
		return fmt.Errorf("disable webhook endpoint %s: %w", id, err)
	}
	return nil
}

// webhookSubscribers returns the ids of the account's active endpoints
// subscribed to eventType, oldest first. q may be the transaction of a job's
// final transition (the outbox, through Tx) or the database.
func webhookSubscribers(ctx context.Context, q sqlx.QueryerContext, accountID, eventType string) ([]string, error) {
	var rows []struct {
		ID     string `db:"id"`
		Events string `db:"events"`
	}
	// The active-endpoint index: every job's final transaction runs this,
	// and the account may have any number of disabled endpoints.
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT id, events FROM webhook_endpoints INDEXED BY webhook_endpoints_active
		WHERE account_id = ? AND is_active = 1 ORDER BY created_utc, id`, accountID); err != nil {
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

// insertWebhookEvent writes the event and one pending delivery per endpoint
// id, due at once (at ev.CreatedUTC), inside tx: the outbox half of a job's
// final transition (through Tx), or a test event. It returns the delivery
// ids in endpoint order.
func insertWebhookEvent(ctx context.Context, tx *sqlx.Tx, ev WebhookEvent, endpointIDs []string) ([]string, error) {
	if !ids.HasPrefix(ev.ID, ids.Event) || ev.Type == "" || len(ev.Body) == 0 {
		return nil, fmt.Errorf("%w: incomplete webhook event %q", ErrInvalid, ev.ID)
	}
	created := FormatTime(ev.CreatedUTC)
	var job sql.NullString
	if ev.JobID != "" {
		job = sql.NullString{String: ev.JobID, Valid: true}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_events (id, account_id, type, job_id, body, created_utc)
		VALUES (?, ?, ?, ?, ?, ?)`, ev.ID, ev.AccountID, ev.Type, job, string(ev.Body), created); err != nil {
		return nil, fmt.Errorf("insert webhook event: %w", err)
	}
	out := make([]string, 0, len(endpointIDs))
	for _, ep := range endpointIDs {
		id := ids.New(ids.Delivery)
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries
			(id, event_id, endpoint_id, account_id, status, attempts, next_attempt_utc, created_utc)
			VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)`, id, ev.ID, ep, ev.AccountID, created, created); err != nil {
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
	CreatedUTC     string         `db:"created_utc"`
	LastAttemptUTC sql.NullString `db:"last_attempt_utc"`
	NextAttemptUTC sql.NullString `db:"next_attempt_utc"`
	DeliveredUTC   sql.NullString `db:"delivered_utc"`
}

func (r deliveryRow) delivery() (WebhookDelivery, error) {
	d := WebhookDelivery{ID: r.ID, EndpointID: r.EndpointID, EventID: r.EventID, Event: r.Event,
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
		return WebhookDelivery{}, fmt.Errorf("webhook delivery %s: %w", r.ID, err)
	}
	for _, f := range []struct {
		dst **time.Time
		src sql.NullString
	}{{&d.LastAttemptUTC, r.LastAttemptUTC}, {&d.NextAttemptUTC, r.NextAttemptUTC}, {&d.DeliveredUTC, r.DeliveredUTC}} {
		if *f.dst, err = parseNullTime(f.src); err != nil {
			return WebhookDelivery{}, fmt.Errorf("webhook delivery %s: %w", r.ID, err)
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
func getDelivery(ctx context.Context, tx *sqlx.Tx, id string) (WebhookDelivery, error) {
	var r deliveryRow
	if err := tx.GetContext(ctx, &r, deliverySelect+` WHERE d.id = ?`, id); err != nil {
		return WebhookDelivery{}, fmt.Errorf("read webhook delivery %s: %w", id, err)
	}
	return r.delivery()
}

// activeEndpoint checks inside tx that the account's endpoint exists
// (ErrNotFound) and is active (ErrEndpointDisabled).
func activeEndpoint(ctx context.Context, tx *sqlx.Tx, accountID, endpointID string) error {
	var active bool
	err := tx.GetContext(ctx, &active, `SELECT is_active FROM webhook_endpoints WHERE id = ? AND account_id = ?`, endpointID, accountID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("webhook endpoint %s: %w", endpointID, ErrNotFound)
	case err != nil:
		return fmt.Errorf("read webhook endpoint %s: %w", endpointID, err)
	case !active:
		return fmt.Errorf("webhook endpoint %s: %w", endpointID, ErrEndpointDisabled)
	}
	return nil
}

// QueueTestWebhook writes ev (a webhook.test event, JobID "") and one
// pending delivery of it to the account's endpoint, due at ev.CreatedUTC,
// whatever events the endpoint subscribes to, and returns the delivery. An
// unknown endpoint or another account's is ErrNotFound; a disabled one
// ErrEndpointDisabled. The caller wakes the delivery worker.
func (s *Store) QueueTestWebhook(ctx context.Context, accountID, endpointID string, ev WebhookEvent) (WebhookDelivery, error) {
	ev.CreatedUTC = truncMs(ev.CreatedUTC)
	ev.AccountID = accountID
	var d WebhookDelivery
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
		return WebhookDelivery{}, fmt.Errorf("queue test webhook: %w", err)
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
func (s *Store) RedeliverWebhook(ctx context.Context, accountID, deliveryID string, now time.Time) (WebhookDelivery, error) {
	nowS := FormatTime(truncMs(now))
	var d WebhookDelivery
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var cur struct {
			Status     string `db:"status"`
			EndpointID string `db:"endpoint_id"`
		}
		err := tx.GetContext(ctx, &cur, `SELECT status, endpoint_id FROM webhook_deliveries WHERE id = ? AND account_id = ?`,
			deliveryID, accountID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("webhook delivery %s: %w", deliveryID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if cur.Status != DeliveryFailed {
			return fmt.Errorf("webhook delivery %s is %s: %w", deliveryID, cur.Status, ErrDeliveryNotFailed)
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
		return WebhookDelivery{}, fmt.Errorf("redeliver webhook: %w", err)
	}
	return d, nil
}

// ListWebhookDeliveries returns up to limit of the account's deliveries,
// newest first (created_utc DESC, id DESC), only those to endpointID when it
// is not "". The caller checks that endpointID belongs to the account.
func (s *Store) ListWebhookDeliveries(ctx context.Context, accountID, endpointID string, limit int) ([]WebhookDelivery, error) {
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
	out := make([]WebhookDelivery, 0, len(rows))
	for _, r := range rows {
		d, err := r.delivery()
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func checkLimits(l DeliveryLimits) error {
	if l.PerEndpoint <= 0 || l.PerAccount <= 0 {
		return fmt.Errorf("%w: a claim needs positive per-endpoint and per-account limits", ErrInvalid)
	}
	return nil
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
func (s *Store) ClaimWebhookDelivery(ctx context.Context, lease time.Duration, limits DeliveryLimits, now time.Time) (DeliveryTask, bool, error) {
	if lease <= 0 {
		return DeliveryTask{}, false, fmt.Errorf("%w: a claim needs a positive lease", ErrInvalid)
	}
	if err := checkLimits(limits); err != nil {
		return DeliveryTask{}, false, err
	}
	now = truncMs(now)
	nowS := FormatTime(now)
	leaseUntil := now.Add(lease)
	var t DeliveryTask
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
			ErrorEndpointDisabled, nowS); err != nil {
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
		t = DeliveryTask{ID: row.ID, EndpointID: d.EndpointID, AccountID: d.AccountID, EventID: d.EventID,
			EventType: d.EventType, JobID: d.JobID.String, URL: d.URL, Secret: d.Secret, Body: []byte(d.Body),
			Attempts: row.Attempts, ScheduleStart: row.ScheduleStart, Lease: truncMs(leaseUntil)}
		found = true
		return nil
	})
	if err != nil {
		return DeliveryTask{}, false, fmt.Errorf("claim webhook delivery: %w", err)
	}
	if found {
		// Opened after the claim has committed: a secret that does not
		// open fails this claim, never signs with anything else, and the
		// lease keeps the delivery aside until it expires, so the others
		// go on.
		if t.Secret, err = s.openSecret(t.EndpointID, t.Secret); err != nil {
			return DeliveryTask{}, false, fmt.Errorf("claim webhook delivery %s: %w", t.ID, err)
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
func (s *Store) NextWebhookDue(ctx context.Context, limits DeliveryLimits, now time.Time) (time.Time, bool, error) {
	if err := checkLimits(limits); err != nil {
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
func (s *Store) RecordWebhookAttempt(ctx context.Context, t DeliveryTask, a DeliveryAttempt, now time.Time) (string, error) {
	now = truncMs(now)
	status := DeliveryPending
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
			status = DeliverySucceeded
			delivered = sql.NullString{String: FormatTime(now), Valid: true}
		case !active:
			status = DeliveryFailed
			errText = sql.NullString{String: a.Error + " (" + ErrorEndpointDisabled + ": no further attempts)", Valid: true}
		case a.NextAttempt == nil:
			status = DeliveryFailed
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
			return ErrLeaseLost
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
func (s *Store) ReleaseWebhookDelivery(ctx context.Context, t DeliveryTask) error {
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
			  AND webhook_deliveries.lease_expires_utc = ?`, ErrorEndpointDisabled, t.ID, FormatTime(t.Lease))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrLeaseLost
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("release webhook delivery %s: %w", t.ID, err)
	}
	return nil
}
