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

func (r endpointRow) endpoint() (locrisk.WebhookEndpoint, error) {
	e := locrisk.WebhookEndpoint{ID: r.ID, AccountID: r.AccountID, Name: r.Name, URL: r.URL,
		Events: strings.Fields(r.Events), Active: r.Active}
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

// CreateWebhookEndpoint stores a new active endpoint with a fresh signing
// secret (whsec_..., returned here and never again through the API; stored
// sealed with Options.Secrets, secrets.go, and ErrNoSecretKey without). The
// count of active endpoints and the insert share one immediate transaction,
// so concurrent creates cannot pass MaxActiveEndpoints (ErrEndpointLimit).
func (s *Store) CreateWebhookEndpoint(ctx context.Context, ne locrisk.NewWebhookEndpoint, now time.Time) (locrisk.WebhookEndpoint, string, error) {
	if ne.AccountID == "" || ne.Name == "" || ne.URL == "" || len(ne.Events) == 0 {
		return locrisk.WebhookEndpoint{}, "", fmt.Errorf("%w: endpoint needs an account, name, url and events", locrisk.ErrInvalid)
	}
	for _, ev := range ne.Events {
		if ev == "" || strings.ContainsAny(ev, " \t\r\n") {
			return locrisk.WebhookEndpoint{}, "", fmt.Errorf("%w: event name %q", locrisk.ErrInvalid, ev)
		}
	}
	e := locrisk.WebhookEndpoint{
		ID: ids.New(ids.WebhookEndpoint), AccountID: ne.AccountID, Name: ne.Name, URL: ne.URL,
		Events: append([]string(nil), ne.Events...), Active: true, CreatedUTC: truncMs(now),
	}
	secret := ids.NewSecret(ids.SigningSecret)
	stored, err := s.sealSecret(e.ID, secret)
	if err != nil {
		return locrisk.WebhookEndpoint{}, "", fmt.Errorf("create webhook endpoint: %w", err)
	}
	err = s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var active int
		if err := tx.GetContext(ctx, &active, countActiveEndpoints, ne.AccountID); err != nil {
			return fmt.Errorf("count active endpoints: %w", err)
		}
		if active >= locrisk.MaxActiveEndpoints {
			return locrisk.ErrEndpointLimit
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints
			(id, account_id, name, url, events, signing_secret, is_active, created_utc)
			VALUES (?, ?, ?, ?, ?, ?, 1, ?)`,
			e.ID, e.AccountID, e.Name, e.URL, strings.Join(e.Events, " "), stored, FormatTime(e.CreatedUTC))
		if err != nil {
			if strings.Contains(err.Error(), "FOREIGN KEY") {
				return fmt.Errorf("account %s: %w", ne.AccountID, locrisk.ErrNotFound)
			}
			return fmt.Errorf("insert webhook endpoint: %w", err)
		}
		return nil
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
	q, args := pg.query(listEndpointsQuery, []any{accountID})
	var rows []endpointRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list webhook endpoints: %w", err)
	}
	rows, next := pageRows(pg, rows, func(r endpointRow) (string, string) { return r.CreatedUTC, r.ID })
	out := make([]locrisk.WebhookEndpoint, 0, len(rows))
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
// Another account's endpoint is ErrNotFound.
func (s *Store) DisableWebhookEndpoint(ctx context.Context, accountID, id string, now time.Time) error {
	now = truncMs(now)
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var active bool
		err := tx.GetContext(ctx, &active, `SELECT is_active FROM webhook_endpoints WHERE id = ? AND account_id = ?`, id, accountID)
		if errors.Is(err, sql.ErrNoRows) {
			return locrisk.ErrNotFound
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
			locrisk.ErrorEndpointDisabled, id, nowS)
		return err
	})
	if err != nil {
		return fmt.Errorf("disable webhook endpoint %s: %w", id, err)
	}
	return nil
}

// activeEndpoint checks inside tx that the account's endpoint exists
// (ErrNotFound) and is active (ErrEndpointDisabled).
func activeEndpoint(ctx context.Context, tx *sqlx.Tx, accountID, endpointID string) error {
	var active bool
	err := tx.GetContext(ctx, &active, `SELECT is_active FROM webhook_endpoints WHERE id = ? AND account_id = ?`, endpointID, accountID)
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
