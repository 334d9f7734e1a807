package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/secretbox"
)

// endpointRow is a webhook_endpoints row: the endpoint's columns as the
// domain names them (locrisk.WebhookEndpoint's db tags), its events as
// words and its times as timestamptz.
type endpointRow struct {
	locrisk.WebhookEndpoint
	EventWords  string       `db:"events"`
	CreatedUTC  time.Time    `db:"created_utc"`
	DisabledUTC sql.NullTime `db:"disabled_utc"`
}

const endpointColumns = `id, account_id, name, url, events, is_active, created_utc, disabled_utc`

func (r endpointRow) endpoint() locrisk.WebhookEndpoint {
	e := r.WebhookEndpoint
	e.Events, e.CreatedUTC, e.DisabledUTC = locrisk.ParseStoredEvents(r.EventWords), utc(r.CreatedUTC), utcPtr(r.DisabledUTC)
	return e
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
	if err := ne.Validate(); err != nil {
		return locrisk.WebhookEndpoint{}, "", err
	}
	e, secret := ne.Endpoint(ids.New(ids.WebhookEndpoint), ms(now)), ids.NewSecret(ids.SigningSecret)
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		return locrisk.CreateEndpoint(ctx, endpointTx{txOps{tx}, s}, e, secret)
	})
	if err != nil {
		return locrisk.WebhookEndpoint{}, "", fmt.Errorf("create webhook endpoint: %w", err)
	}
	return e, secret, nil
}

// endpointTx is the transaction of an endpoint's creation, which also
// seals its secret with the store's key (locrisk.EndpointCreateOps).
type endpointTx struct {
	txOps
	s *Store
}

// ActiveEndpoints counts the account's active endpoints under its row's
// lock, so two nodes cannot both pass the limit; the lock's read also
// tells an unknown account (locrisk.EndpointCreateOps).
func (t endpointTx) ActiveEndpoints(ctx context.Context, accountID string) (int, error) {
	var id string
	found, err := present(t.tx.GetContext(ctx, &id, `SELECT id FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, accountID))
	if err == nil && !found {
		err = fmt.Errorf("account %s: %w", accountID, locrisk.ErrNotFound)
	}
	if err != nil {
		return 0, err
	}
	var active int
	err = t.tx.GetContext(ctx, &active, `SELECT COUNT(*) FROM webhook_endpoints WHERE account_id = $1 AND is_active`, accountID)
	return active, err
}

// InsertEndpoint stores the endpoint, its secret sealed
// (locrisk.EndpointCreateOps).
func (t endpointTx) InsertEndpoint(ctx context.Context, e locrisk.WebhookEndpoint, secret string) error {
	stored, err := t.s.sealSecret(e.ID, secret)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (id, account_id, name, url, events, signing_secret, is_active, created_utc)
		VALUES ($1, $2, $3, $4, $5, $6, true, $7)`, e.ID, e.AccountID, e.Name, e.URL, locrisk.StoredEvents(e.Events), stored, e.CreatedUTC)
	return err
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
	q, args := pageQuery(pg, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE account_id = $1`, []any{accountID}, "", "")
	var rows []endpointRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list webhook endpoints: %w", err)
	}
	rows, next := locrisk.PageRows(pg, rows, func(r endpointRow) (time.Time, string) { return r.CreatedUTC, r.ID })
	out := make([]locrisk.WebhookEndpoint, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.endpoint())
	}
	return out, next, nil
}

// DisableWebhookEndpoint marks the endpoint inactive and fails its pending
// deliveries not in flight; disabling twice succeeds.
func (s *Store) DisableWebhookEndpoint(ctx context.Context, accountID, id string, now time.Time) error {
	return locrisk.DisableWebhookEndpoint(ctx, transactor{s}, accountID, id, ms(now))
}

// LockEndpoint reads whether the account's endpoint is active, its row
// locked until the transaction ends (locrisk.EndpointDisableOps).
func (t txOps) LockEndpoint(ctx context.Context, accountID, endpointID string) (active, found bool, err error) {
	found, err = present(t.tx.GetContext(ctx, &active,
		`SELECT is_active FROM webhook_endpoints WHERE id = $1 AND account_id = $2 FOR UPDATE`, endpointID, accountID))
	return active, found, err
}

// MarkEndpointDisabled marks the endpoint inactive and fails its pending
// deliveries not in flight (locrisk.EndpointDisableOps).
func (t txOps) MarkEndpointDisabled(ctx context.Context, endpointID string, now time.Time) error {
	if _, err := t.tx.ExecContext(ctx, `UPDATE webhook_endpoints SET is_active = false, disabled_utc = $1 WHERE id = $2`,
		now, endpointID); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `UPDATE webhook_deliveries
		SET status = 'failed', error = $1, next_attempt_utc = NULL, lease_expires_utc = NULL
		WHERE endpoint_id = $2 AND status = 'pending' AND (lease_expires_utc IS NULL OR lease_expires_utc < $3)`,
		locrisk.ErrorEndpointDisabled, endpointID, now)
	return err
}

// EndpointActive reads whether the account's endpoint is active
// (locrisk.WebhookTxOps).
func (t txOps) EndpointActive(ctx context.Context, accountID, endpointID string) (active, found bool, err error) {
	found, err = present(t.tx.GetContext(ctx, &active, `SELECT is_active FROM webhook_endpoints WHERE id = $1 AND account_id = $2`, endpointID, accountID))
	return active, found, err
}

// WebhookSubscribers returns the ids of the account's active endpoints
// subscribed to eventType, oldest first.
func (t txOps) WebhookSubscribers(ctx context.Context, accountID, eventType string) ([]string, error) {
	var eps []locrisk.EndpointEvents
	if err := t.tx.SelectContext(ctx, &eps, `SELECT id, events FROM webhook_endpoints
		WHERE account_id = $1 AND is_active ORDER BY created_utc, id`, accountID); err != nil {
		return nil, fmt.Errorf("find webhook subscribers: %w", err)
	}
	return locrisk.Subscribers(eps, eventType), nil
}

// isEventID tells an event's id from any other.
func isEventID(id string) bool { return ids.HasPrefix(id, ids.Event) }

// InsertWebhookEvent writes the event and one pending delivery per
// endpoint, due at once, and returns the delivery ids in endpoint order.
func (t txOps) InsertWebhookEvent(ctx context.Context, ev locrisk.WebhookEvent, endpointIDs []string) ([]string, error) {
	if err := ev.Validate(isEventID); err != nil {
		return nil, err
	}
	created := ms(ev.CreatedUTC)
	var job sql.NullString
	if ev.JobID != "" {
		job = sql.NullString{String: ev.JobID, Valid: true}
	}
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO webhook_events (id, account_id, type, job_id, body, created_utc)
		VALUES ($1, $2, $3, $4, $5, $6)`, ev.ID, ev.AccountID, ev.Type, job, string(ev.Body), created); err != nil {
		return nil, fmt.Errorf("insert webhook event: %w", err)
	}
	out := make([]string, 0, len(endpointIDs))
	for _, ep := range endpointIDs {
		id := ids.New(ids.Delivery)
		// Only to an endpoint of the event's account: the claim finds an
		// endpoint's leases under its account (claimableDelivery).
		res, err := t.tx.ExecContext(ctx, `INSERT INTO webhook_deliveries
			(id, event_id, endpoint_id, account_id, status, attempts, next_attempt_utc, created_utc)
			SELECT $1, $2, w.id, w.account_id, 'pending', 0, $5, $5 FROM webhook_endpoints w WHERE w.id = $3 AND w.account_id = $4`,
			id, ev.ID, ep, ev.AccountID, created)
		if err != nil {
			return nil, fmt.Errorf("insert webhook delivery: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, fmt.Errorf("insert webhook delivery: %w", err)
		} else if n != 1 {
			return nil, fmt.Errorf("%w: webhook endpoint %s is not account %s's", locrisk.ErrInvalid, ep, ev.AccountID)
		}
		out = append(out, id)
	}
	return out, nil
}

// deliveryRow is a delivery as deliverySelect reads it: the columns the
// domain names (locrisk.WebhookDelivery's db tags), and its times as
// timestamptz.
type deliveryRow struct {
	locrisk.WebhookDelivery
	CreatedUTC     time.Time    `db:"created_utc"`
	LastAttemptUTC sql.NullTime `db:"last_attempt_utc"`
	NextAttemptUTC sql.NullTime `db:"next_attempt_utc"`
	DeliveredUTC   sql.NullTime `db:"delivered_utc"`
}

func (r deliveryRow) delivery() locrisk.WebhookDelivery {
	d := r.WebhookDelivery
	d.JobID = locrisk.DeliveryJobID(d.Event, d.JobID)
	d.CreatedUTC, d.LastAttemptUTC = utc(r.CreatedUTC), utcPtr(r.LastAttemptUTC)
	d.NextAttemptUTC, d.DeliveredUTC = utcPtr(r.NextAttemptUTC), utcPtr(r.DeliveredUTC)
	return d
}

const deliverySelect = `SELECT d.id, d.endpoint_id, d.event_id, e.type, e.job_id, d.status, d.attempts, d.response_status,
		d.error, d.created_utc, d.last_attempt_utc, d.next_attempt_utc, d.delivered_utc
	FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`

// Delivery reads the account's delivery, its row locked until the
// transaction ends (locrisk.WebhookTxOps).
func (t txOps) Delivery(ctx context.Context, accountID, id string) (locrisk.WebhookDelivery, bool, error) {
	var r deliveryRow
	found, err := present(t.tx.GetContext(ctx, &r, deliverySelect+` WHERE d.id = $1 AND d.account_id = $2 FOR UPDATE OF d`, id, accountID))
	return r.delivery(), found, err
}

// ListWebhookDeliveries returns up to limit of the account's deliveries,
// newest first.
func (s *Store) ListWebhookDeliveries(ctx context.Context, accountID, endpointID string, limit int) ([]locrisk.WebhookDelivery, error) {
	limit = locrisk.DeliveryListLimit(limit)
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
	ev.CreatedUTC = ms(ev.CreatedUTC)
	return locrisk.QueueTestWebhook(ctx, transactor{s}, accountID, endpointID, ev)
}

// RedeliverWebhook puts a failed delivery back to pending, same id and event.
func (s *Store) RedeliverWebhook(ctx context.Context, accountID, deliveryID string, now time.Time) (locrisk.WebhookDelivery, error) {
	return locrisk.RedeliverWebhook(ctx, transactor{s}, accountID, deliveryID, ms(now))
}

// RequeueDelivery puts the failed delivery back to pending, due at now,
// a fresh retry schedule starting from its attempts (locrisk.WebhookTxOps).
func (t txOps) RequeueDelivery(ctx context.Context, deliveryID string, now time.Time) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE webhook_deliveries
		SET status = 'pending', next_attempt_utc = $1, lease_expires_utc = NULL, schedule_start = attempts
		WHERE id = $2 AND status = 'failed'`, now, deliveryID)
	return err
}

// deliveryClaimLock is the advisory lock that serializes webhook claims:
// the limits count the leases of every node, so two claims must not count
// at once. Claims are short; they take turns.
const deliveryClaimLock = 0x6c6f6377 // "locw"

// The delivery claim's queries, one constant each so that
// TestWebhookClaimPlans explains the very text the claim runs, and
// TestClaimMatchesReference compares them with the queries they replace.
// Their cost does not grow with the deliveries pending or done: with
// 10,000 in the table the claim used to take about 4 s, counting the
// endpoint's and the account's leases afresh over the whole table for
// every pending delivery, all of it under deliveryClaimLock, which every
// node's claims wait for.
// The indexes are migration 6's:
//
//   - webhook_deliveries_endpoint_due: an endpoint's pending deliveries in
//     the order they are claimed, so its next one is one seek;
//   - webhook_deliveries_leased: only the rows with a lease (attempts in
//     flight, and leases left by a worker that died, until they are
//     claimed again or failed), by account and endpoint, so the limits
//     count those alone.
//
// Every delivery of an endpoint is written with the endpoint's account
// (InsertWebhookEvent checks it), so an endpoint's leases are found under
// its account, its deliveries share one account turn and one account
// limit, and its earliest claimable delivery stands for all of them:
// taking, of each endpoint's earliest, the first by account turn, then
// (next_attempt_utc, created_utc, id), picks the delivery that ordering
// every claimable one would.
const (
	// claimableDelivery picks the next due delivery to an active endpoint
	// under its limits: the account whose last claim is the oldest first,
	// then the earliest due. $1 is now, $2 the per-endpoint and $3 the
	// per-account limit.
	//
	// It looks at the accounts in that order and stops at the first with
	// something to claim, so that in the usual case it reads one
	// account's endpoints however many accounts there are:
	//
	//   - first the accounts never claimed for (no webhook_delivery_turns
	//     row), whose turn comes before any other's and is the same for
	//     all of them, so the earliest due delivery among them all;
	//   - then the others by their last claim (unique: the numbers come
	//     from one sequence), each the earliest due delivery among its
	//     endpoints. The accounts are few rows, sorted in memory; an index
	//     on last_claim would gain a dead entry with every claim.
	//
	// Per endpoint: the count of its leases in force, and one seek for its
	// earliest due delivery not in flight; per account: the count of its
	// leases in force.
	claimableDelivery = `SELECT id FROM ((
			SELECT d.id
			FROM (SELECT w.id, w.account_id FROM webhook_endpoints w
				WHERE w.is_active AND NOT EXISTS (SELECT 1 FROM webhook_delivery_turns t WHERE t.account_id = w.account_id)
				OFFSET 0) w
			CROSS JOIN LATERAL (
				SELECT x.id, x.next_attempt_utc, x.created_utc
				FROM webhook_deliveries x
				WHERE x.endpoint_id = w.id AND x.status = 'pending' AND x.next_attempt_utc <= $1
				  AND (x.lease_expires_utc IS NULL OR x.lease_expires_utc < $1)
				ORDER BY x.next_attempt_utc, x.created_utc, x.id
				LIMIT 1) d
			WHERE (SELECT COUNT(*) FROM webhook_deliveries l
				WHERE l.account_id = w.account_id AND l.endpoint_id = w.id AND l.lease_expires_utc >= $1) < $2
			  AND (SELECT COUNT(*) FROM webhook_deliveries a
				WHERE a.account_id = w.account_id AND a.lease_expires_utc >= $1) < $3
			ORDER BY d.next_attempt_utc, d.created_utc, d.id
			LIMIT 1
		) UNION ALL (
			SELECT d.id
			FROM (SELECT account_id, last_claim FROM webhook_delivery_turns ORDER BY last_claim OFFSET 0) t
			CROSS JOIN LATERAL (
				SELECT x.id
				FROM webhook_endpoints w
				CROSS JOIN LATERAL (
					SELECT y.id, y.next_attempt_utc, y.created_utc
					FROM webhook_deliveries y
					WHERE y.endpoint_id = w.id AND y.status = 'pending' AND y.next_attempt_utc <= $1
					  AND (y.lease_expires_utc IS NULL OR y.lease_expires_utc < $1)
					ORDER BY y.next_attempt_utc, y.created_utc, y.id
					LIMIT 1) x
				WHERE w.account_id = t.account_id AND w.is_active
				  AND (SELECT COUNT(*) FROM webhook_deliveries l
					WHERE l.account_id = w.account_id AND l.endpoint_id = w.id AND l.lease_expires_utc >= $1) < $2
				ORDER BY x.next_attempt_utc, x.created_utc, x.id
				LIMIT 1) d
			WHERE (SELECT COUNT(*) FROM webhook_deliveries a
				WHERE a.account_id = t.account_id AND a.lease_expires_utc >= $1) < $3
			ORDER BY t.last_claim
			LIMIT 1
		)) AS candidates
		LIMIT 1`

	// claimDelivery is the whole claim but for its lock, in one statement
	// (sent with the lock, see ClaimWebhookDelivery): $1 now, $2 and $3 the
	// limits, $4 the new lease, $5 the error of a delivery failed for its
	// endpoint's sake.
	//
	//   - failed: fails the pending deliveries of disabled endpoints whose
	//     lease has expired, attempts in flight when the endpoint was
	//     disabled that never reported back. Disabling failed the others,
	//     so only leased rows are looked at (webhook_deliveries_leased, or
	//     per disabled endpoint when there are fewer of those). None of
	//     them is to an active endpoint, nor has a lease in force, so
	//     pick, which reads the table as it was before, is not changed by
	//     them.
	//   - pick: claimableDelivery.
	//   - leased: leases the delivery picked if it is still claimable:
	//     the worker whose expired lease made it claimable may have
	//     recorded its attempt meanwhile (recording does not wait for
	//     deliveryClaimLock), and then the row as it is now fails these
	//     conditions.
	//   - turn: the account's claim becomes the newest.
	//
	// It returns the delivery picked and, if it was leased, what the
	// attempt needs; nothing when nothing is claimable.
	claimDelivery = `WITH failed AS (
			UPDATE webhook_deliveries d
			SET status = 'failed', error = $5, next_attempt_utc = NULL, lease_expires_utc = NULL
			FROM webhook_endpoints w
			WHERE NOT w.is_active AND d.account_id = w.account_id AND d.endpoint_id = w.id AND d.status = 'pending'
			  AND d.lease_expires_utc IS NOT NULL AND d.lease_expires_utc < $1),
		pick AS (` + claimableDelivery + `),
		leased AS (
			UPDATE webhook_deliveries d SET lease_expires_utc = $4
			FROM pick
			WHERE d.id = pick.id AND d.status = 'pending' AND d.next_attempt_utc <= $1
			  AND (d.lease_expires_utc IS NULL OR d.lease_expires_utc < $1)
			RETURNING d.id, d.attempts, d.account_id, d.schedule_start, d.endpoint_id, d.event_id),
		turn AS (
			INSERT INTO webhook_delivery_turns (account_id, last_claim)
			SELECT account_id, nextval('webhook_delivery_claims') FROM leased
			ON CONFLICT (account_id) DO UPDATE SET last_claim = excluded.last_claim)
		SELECT pick.id AS picked, l.id, l.attempts, l.account_id, l.schedule_start, l.endpoint_id, l.event_id,
			e.type, e.job_id, e.body, w.url, w.signing_secret
		FROM pick
		LEFT JOIN leased l ON l.id = pick.id
		LEFT JOIN webhook_events e ON e.id = l.event_id
		LEFT JOIN webhook_endpoints w ON w.id = l.endpoint_id`

	// nextDeliveryDue: see NextWebhookDue. The earliest end of a lease in
	// force to an active endpoint, or, per active endpoint below its
	// limits (and its account below its own), its earliest pending
	// delivery not in flight (one seek, as in claimableDelivery). $1 is
	// now, $2 the per-endpoint and $3 the per-account limit.
	nextDeliveryDue = `SELECT MIN(t) FROM (
			SELECT (SELECT MIN(l.lease_expires_utc) FROM webhook_deliveries l
				WHERE l.account_id = w.account_id AND l.endpoint_id = w.id AND l.lease_expires_utc >= $1) AS t
			FROM webhook_endpoints w WHERE w.is_active
			UNION ALL
			SELECT d.next_attempt_utc
			FROM webhook_endpoints w
			CROSS JOIN LATERAL (
				SELECT x.next_attempt_utc, x.account_id
				FROM webhook_deliveries x
				WHERE x.endpoint_id = w.id AND x.status = 'pending'
				  AND (x.lease_expires_utc IS NULL OR x.lease_expires_utc < $1)
				ORDER BY x.next_attempt_utc, x.created_utc, x.id
				LIMIT 1) d
			WHERE w.is_active
			  AND (SELECT COUNT(*) FROM webhook_deliveries l
				WHERE l.account_id = w.account_id AND l.endpoint_id = w.id AND l.lease_expires_utc >= $1) < $2
			  AND (SELECT COUNT(*) FROM webhook_deliveries a
				WHERE a.account_id = d.account_id AND a.lease_expires_utc >= $1) < $3
		) AS due`
)

// ClaimWebhookDelivery leases the next due delivery within limits.
//
// The limits count the leases of every node, so claims take turns under
// deliveryClaimLock, and each claim must see the leases of the claims
// before it: the lock is taken in a statement of its own, and the claim
// (claimDelivery) runs in the next one, whose snapshot is then taken
// after the lock is held. Both go to the server in one round trip, a
// pipeline ending in one Sync (pgx's batch), which runs them in one
// implicit transaction: the lock is held while the server plans and runs
// the claim and commits it, never while a message crosses to this node
// and back (a claim used to hold it across six round trips, one per
// statement and the commit).
func (s *Store) ClaimWebhookDelivery(ctx context.Context, lease time.Duration, limits locrisk.DeliveryLimits, now time.Time) (locrisk.DeliveryTask, bool, error) {
	if err := locrisk.CheckDeliveryClaim(lease, limits); err != nil {
		return locrisk.DeliveryTask{}, false, err
	}
	now = ms(now)
	leaseUntil := ms(now.Add(lease))
	for try := 1; ; try++ {
		t, picked, err := s.claimOnce(ctx, now, leaseUntil, limits)
		if err != nil && retryable(err) && try < 5 {
			select {
			case <-ctx.Done():
				return locrisk.DeliveryTask{}, false, fmt.Errorf("claim webhook delivery: %w (retry abandoned: %w)", err, ctx.Err())
			case <-time.After(time.Duration(try) * 5 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return locrisk.DeliveryTask{}, false, fmt.Errorf("claim webhook delivery: %w", err)
		}
		if picked && t.ID == "" {
			// Picked, not leased: the delivery has just left the
			// claimable ones (see leased in claimDelivery), and the next
			// try sees that. A few tries are plenty.
			if try < 3 {
				continue
			}
			return locrisk.DeliveryTask{}, false, nil
		}
		if t.ID == "" {
			return locrisk.DeliveryTask{}, false, nil
		}
		if t.Secret, err = s.openSecret(t.EndpointID, t.Secret); err != nil {
			return locrisk.DeliveryTask{}, false, fmt.Errorf("claim webhook delivery %s: %w", t.ID, err)
		}
		return t, true, nil
	}
}

// claimLock takes deliveryClaimLock until the claim's transaction ends,
// and sets for the rest of that transaction, that is for the claim that
// follows:
//   - no wait for the disk at commit, as a job claim does (queue.go): if
//     the database lost the claim in a crash, the delivery is simply
//     still pending (or under its older lease) and is sent again, which
//     delivery at least once allows, and the record of the attempt, which
//     does wait, finds the claim gone (ErrLeaseLost). Without the wait,
//     claims do not queue for the lock behind one flush each;
//   - the prepared statement's generic plan, which TestWebhookClaimPlans
//     checks, rather than one made afresh for each claim's parameters:
//     planning costs more than running it (about 0.45 ms against 0.3 on
//     the 2-core test machine), all of it under the lock;
//   - no bitmap scans. Each claim leaves webhook_deliveries_leased an
//     entry that is dead once its attempt is recorded (migration 6); a plain
//     index scan marks such an entry dead when it meets it, so that later
//     scans pass over it without reading the row, and inserts reclaim
//     its room, but a bitmap scan never marks it.
const claimLock = `SELECT pg_advisory_xact_lock($1), set_config('synchronous_commit', 'off', true),
	set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_bitmapscan', 'off', true)`

// claimOnce runs claimLock and claimDelivery as one pipeline on one
// connection. picked says whether a delivery was picked; t is empty
// unless it was also leased.
func (s *Store) claimOnce(ctx context.Context, now, leaseUntil time.Time, limits locrisk.DeliveryLimits) (t locrisk.DeliveryTask, picked bool, err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return t, false, err
	}
	defer conn.Close()
	err = s.withPgx(conn, func(dc *stdlib.Conn) error {
		b := &pgx.Batch{}
		b.Queue(claimLock, deliveryClaimLock)
		b.Queue(claimDelivery, now, limits.PerEndpoint, limits.PerAccount, leaseUntil, locrisk.ErrorEndpointDisabled)
		br := dc.Conn().SendBatch(ctx, b)
		if _, err := br.Exec(); err != nil {
			br.Close()
			return err
		}
		rows, err := br.Query()
		if err != nil {
			br.Close()
			return err
		}
		for rows.Next() {
			var pick string
			var id, accountID, endpointID, eventID, eventType, jobID, body, url, secret *string
			var attempts, scheduleStart *int32
			if err := rows.Scan(&pick, &id, &attempts, &accountID, &scheduleStart, &endpointID, &eventID,
				&eventType, &jobID, &body, &url, &secret); err != nil {
				rows.Close()
				br.Close()
				return err
			}
			picked = true
			if id == nil {
				continue
			}
			deref := func(p *string) string {
				if p == nil {
					return ""
				}
				return *p
			}
			t = locrisk.DeliveryTask{ID: *id, EndpointID: deref(endpointID), AccountID: deref(accountID), EventID: deref(eventID),
				EventType: deref(eventType), JobID: deref(jobID), URL: deref(url), Secret: deref(secret), Body: []byte(deref(body)),
				Attempts: int(*attempts), ScheduleStart: int(*scheduleStart), Lease: leaseUntil}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			br.Close()
			return err
		}
		// The Sync's outcome: the implicit transaction's commit.
		return br.Close()
	})
	if err != nil {
		return locrisk.DeliveryTask{}, false, err
	}
	return t, picked, nil
}

// NextWebhookDue says when a claim with the same limits may next find
// something: the earliest due delivery of an endpoint under its limits,
// or the earliest lease to expire of one at them.
func (s *Store) NextWebhookDue(ctx context.Context, limits locrisk.DeliveryLimits, now time.Time) (time.Time, bool, error) {
	if err := limits.Validate(); err != nil {
		return time.Time{}, false, err
	}
	now = ms(now)
	var next sql.NullTime
	err := s.db.GetContext(ctx, &next, nextDeliveryDue, now, limits.PerEndpoint, limits.PerAccount)
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
	// One statement, which reads whether the endpoint is still active as
	// it writes: a success is succeeded whatever the endpoint; a failure
	// to a disabled endpoint is failed for good, with a note saying why;
	// otherwise a failure is due again at a.NextAttempt, or failed when
	// there is none.
	var next, delivered sql.NullTime
	var errText, errDisabled sql.NullString
	var respStatus sql.NullInt64
	if a.ResponseStatus > 0 {
		respStatus = sql.NullInt64{Int64: int64(a.ResponseStatus), Valid: true}
	}
	if a.Success {
		delivered = sql.NullTime{Time: now, Valid: true}
	} else {
		errText = sql.NullString{String: a.Error, Valid: true}
		errDisabled = sql.NullString{String: a.Error + " (" + locrisk.ErrorEndpointDisabled + ": no further attempts)", Valid: true}
		if a.NextAttempt != nil {
			next = sql.NullTime{Time: ms(*a.NextAttempt), Valid: true}
		}
	}
	var status string
	err := s.db.GetContext(ctx, &status, `UPDATE webhook_deliveries d
		SET status = CASE WHEN $1 THEN 'succeeded' WHEN w.is_active AND $5::timestamptz IS NOT NULL THEN 'pending' ELSE 'failed' END,
			attempts = d.attempts + 1, response_status = $2,
			error = CASE WHEN $1 OR w.is_active THEN $3::text ELSE $4::text END,
			next_attempt_utc = CASE WHEN w.is_active THEN $5::timestamptz END,
			lease_expires_utc = NULL, last_attempt_utc = $6, delivered_utc = $7
		FROM webhook_endpoints w
		WHERE w.id = d.endpoint_id AND d.id = $8 AND d.status = 'pending' AND d.lease_expires_utc = $9
		RETURNING d.status`,
		a.Success, respStatus, errText, errDisabled, next, ms(a.Started), delivered, t.ID, ms(t.Lease))
	if errors.Is(err, sql.ErrNoRows) {
		err = locrisk.ErrLeaseLost
	}
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
