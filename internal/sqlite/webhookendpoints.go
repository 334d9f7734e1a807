package sqlite

// Webhooks (docs/api.md, Webhooks): endpoints an account registers (this
// file), the outbox of events written inside a job's final transaction, and
// one delivery per event and subscribed endpoint, which the delivery worker
// claims with a lease, attempts and records (webhookoutbox.go); the
// deliveries as the API shows them are in webhookdeliveries.go.

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
)

// endpointRow is a webhook_endpoints row: the endpoint's columns as the
// domain names them (locrisk.WebhookEndpoint's db tags), its events as
// words and its times as TimeLayout text.
type endpointRow struct {
	locrisk.WebhookEndpoint
	EventWords  string         `db:"events"`
	CreatedUTC  string         `db:"created_utc"`
	DisabledUTC sql.NullString `db:"disabled_utc"`
}

const endpointColumns = `id, account_id, name, url, events, is_active, created_utc, disabled_utc`

func (r endpointRow) endpoint() (locrisk.WebhookEndpoint, error) {
	e := r.WebhookEndpoint
	e.Events = locrisk.ParseStoredEvents(r.EventWords)
	var err error
	if e.CreatedUTC, err = ParseTime(r.CreatedUTC); err != nil {
		return locrisk.WebhookEndpoint{}, fmt.Errorf("webhook endpoint %s: %w", r.ID, err)
	}
	if e.DisabledUTC, err = parseNullTime(r.DisabledUTC); err != nil {
		return locrisk.WebhookEndpoint{}, fmt.Errorf("webhook endpoint %s: %w", r.ID, err)
	}
	return e, nil
}

// countActiveEndpoints counts an account's active endpoints through the
// partial index of active endpoints (migration 005), so an account's
// disabled endpoints, however many, are not read.
const countActiveEndpoints = `SELECT COUNT(*) FROM webhook_endpoints WHERE account_id = ? AND is_active = 1`

// endpointTx is the transaction of an endpoint's creation, which also
// seals its secret with the store's key (locrisk.EndpointCreateOps).
type endpointTx struct {
	txOps
	s *Store
}

// ActiveEndpoints counts the account's active endpoints; the write
// transaction holds the count against other creations
// (locrisk.EndpointCreateOps).
func (t endpointTx) ActiveEndpoints(ctx context.Context, accountID string) (int, error) {
	var n int
	err := t.tx.GetContext(ctx, &n, countActiveEndpoints, accountID)
	return n, err
}

// InsertEndpoint stores the endpoint, its secret sealed; an unknown
// account fails the foreign key (locrisk.EndpointCreateOps).
func (t endpointTx) InsertEndpoint(ctx context.Context, e locrisk.WebhookEndpoint, secret string) error {
	stored, err := t.s.sealSecret(e.ID, secret)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO webhook_endpoints
		(id, account_id, name, url, events, signing_secret, is_active, created_utc)
		VALUES (?, ?, ?, ?, ?, ?, 1, ?)`,
		e.ID, e.AccountID, e.Name, e.URL, locrisk.StoredEvents(e.Events), stored, FormatTime(e.CreatedUTC))
	if err != nil && strings.Contains(err.Error(), "FOREIGN KEY") {
		return fmt.Errorf("account %s: %w", e.AccountID, locrisk.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("insert webhook endpoint: %w", err)
	}
	return nil
}

// CreateWebhookEndpoint stores a new active endpoint with a fresh signing
// secret (whsec_..., returned here and never again through the API; stored
// sealed with Options.Secrets, secrets.go, and ErrNoSecretKey without). The
// count of active endpoints and the insert share one immediate transaction,
// so concurrent creates cannot pass MaxActiveEndpoints (ErrEndpointLimit).
func (s *Store) CreateWebhookEndpoint(ctx context.Context, ne locrisk.NewWebhookEndpoint, now time.Time) (locrisk.WebhookEndpoint, string, error) {
	if err := ne.Validate(); err != nil {
		return locrisk.WebhookEndpoint{}, "", err
	}
	e, secret := ne.Endpoint(ids.New(ids.WebhookEndpoint), truncMs(now)), ids.NewSecret(ids.SigningSecret)
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		return locrisk.CreateEndpoint(ctx, endpointTx{txOps{tx}, s}, e, secret)
	})
	if err != nil {
		return locrisk.WebhookEndpoint{}, "", fmt.Errorf("create webhook endpoint: %w", err)
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
func (s *Store) ListWebhookEndpoints(ctx context.Context, accountID string, limit int, cursor string) ([]locrisk.WebhookEndpoint, string, error) {
	pg, err := newPage(limit, cursor, ids.WebhookEndpoint)
	if err != nil {
		return nil, "", err
	}
	q, args := pageQuery(pg, listEndpointsQuery, []any{accountID})
	var rows []endpointRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list webhook endpoints: %w", err)
	}
	out := make([]locrisk.WebhookEndpoint, 0, len(rows))
	for _, r := range rows {
		e, err := r.endpoint()
		if err != nil {
			return nil, "", err
		}
		out = append(out, e)
	}
	out, next := locrisk.PageRows(pg, out, func(e locrisk.WebhookEndpoint) (time.Time, string) { return e.CreatedUTC, e.ID })
	return out, next, nil
}

// GetWebhookEndpoint returns the account's endpoint, active or not; another
// account's is ErrNotFound.
func (s *Store) GetWebhookEndpoint(ctx context.Context, accountID, id string) (locrisk.WebhookEndpoint, error) {
	var r endpointRow
	err := s.db.GetContext(ctx, &r, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE id = ? AND account_id = ?`, id, accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.WebhookEndpoint{}, fmt.Errorf("webhook endpoint %s: %w", id, locrisk.ErrNotFound)
	}
	if err != nil {
		return locrisk.WebhookEndpoint{}, fmt.Errorf("get webhook endpoint %s: %w", id, err)
	}
	return r.endpoint()
}

// DisableWebhookEndpoint marks the account's endpoint inactive and, in the
// same transaction, fails its pending deliveries that are not in flight
// (error ErrorEndpointDisabled). Once it returns, no attempt to the endpoint
// is claimed any more; an attempt already in flight may still complete and
// is then recorded (a failure ends the delivery instead of scheduling a
// retry). Disabling a disabled endpoint changes nothing and succeeds.
// Another account's endpoint is ErrNotFound (locrisk.DisableWebhookEndpoint).
func (s *Store) DisableWebhookEndpoint(ctx context.Context, accountID, id string, now time.Time) error {
	return locrisk.DisableWebhookEndpoint(ctx, transactor{s}, accountID, id, truncMs(now))
}

// LockEndpoint is EndpointActive: the write transaction already holds
// every row against other writers (locrisk.EndpointDisableOps).
func (t txOps) LockEndpoint(ctx context.Context, accountID, endpointID string) (active, found bool, err error) {
	return t.EndpointActive(ctx, accountID, endpointID)
}

// MarkEndpointDisabled marks the endpoint inactive and, in the same
// transaction, fails its pending deliveries not in flight
// (locrisk.EndpointDisableOps).
func (t txOps) MarkEndpointDisabled(ctx context.Context, endpointID string, now time.Time) error {
	nowS := FormatTime(now)
	if _, err := t.tx.ExecContext(ctx, `UPDATE webhook_endpoints SET is_active = 0, disabled_utc = ? WHERE id = ?`, nowS, endpointID); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `UPDATE webhook_deliveries
		SET status = 'failed', error = ?, next_attempt_utc = NULL, lease_expires_utc = NULL
		WHERE endpoint_id = ? AND status = 'pending' AND (lease_expires_utc IS NULL OR lease_expires_utc < ?)`,
		locrisk.ErrorEndpointDisabled, endpointID, nowS)
	return err
}

// EndpointActive reads inside the transaction whether the account's
// endpoint is active (locrisk.WebhookTxOps).
func (t txOps) EndpointActive(ctx context.Context, accountID, endpointID string) (active, found bool, err error) {
	found, err = present(t.tx.GetContext(ctx, &active, `SELECT is_active FROM webhook_endpoints WHERE id = ? AND account_id = ?`, endpointID, accountID))
	return active, found, err
}

// WebhookSubscribers returns the ids of the account's active endpoints
// subscribed to eventType, oldest first, inside the transaction of a job's
// final transition (the outbox, through locrisk.Tx).
func (t txOps) WebhookSubscribers(ctx context.Context, accountID, eventType string) ([]string, error) {
	var eps []locrisk.EndpointEvents
	// The active-endpoint index: every job's final transaction runs this,
	// and the account may have any number of disabled endpoints.
	if err := t.tx.SelectContext(ctx, &eps, `SELECT id, events FROM webhook_endpoints INDEXED BY webhook_endpoints_active
		WHERE account_id = ? AND is_active = 1 ORDER BY created_utc, id`, accountID); err != nil {
		return nil, fmt.Errorf("find webhook subscribers: %w", err)
	}
	return locrisk.Subscribers(eps, eventType), nil
}
