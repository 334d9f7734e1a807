package locrisk

// The webhook operations whose steps and errors are the same in every
// store: which endpoints an event goes to, creating and disabling an
// endpoint, queueing a test event to one endpoint, and putting a failed
// delivery back. A store supplies the SQL of each step over its open
// transaction (WebhookTxOps and the others, txops.go); the order of the
// checks, and so which error a request gets, is decided here once.

import (
	"context"
	"fmt"
	"time"
)

// EndpointEvents is an endpoint's id and its events in their stored form
// (StoredEvents), as a store reads them to find the subscribers of an
// event.
type EndpointEvents struct {
	ID     string `db:"id"`
	Events string `db:"events"`
}

// Subscribers returns the ids of the endpoints of eps whose events include
// eventType, in the order of eps.
func Subscribers(eps []EndpointEvents, eventType string) []string {
	var out []string
	for _, e := range eps {
		for _, ev := range ParseStoredEvents(e.Events) {
			if ev == eventType {
				out = append(out, e.ID)
				break
			}
		}
	}
	return out
}

// WebhookTxOps is what a store does inside the open transaction of a test
// event or a redelivery.
type WebhookTxOps interface {
	// EndpointActive reads whether the account's endpoint is active;
	// found is false when the account has no such endpoint.
	EndpointActive(ctx context.Context, accountID, endpointID string) (active, found bool, err error)
	// InsertWebhookEvent is Tx's.
	InsertWebhookEvent(ctx context.Context, ev WebhookEvent, endpointIDs []string) ([]string, error)
	// Delivery reads the account's delivery as the API lists it, and
	// holds it against concurrent changes until the transaction ends;
	// found is false when the account has no such delivery.
	Delivery(ctx context.Context, accountID, deliveryID string) (d WebhookDelivery, found bool, err error)
	// RequeueDelivery puts the failed delivery back to pending, due at
	// now, its retry schedule starting afresh from the attempts it has.
	RequeueDelivery(ctx context.Context, deliveryID string, now time.Time) error
}

// checkEndpointActive is nil when the account's endpoint exists and is
// active: ErrNotFound for none (another account's included), and
// ErrEndpointDisabled for a disabled one.
func checkEndpointActive(ctx context.Context, ops WebhookTxOps, accountID, endpointID string) error {
	active, found, err := ops.EndpointActive(ctx, accountID, endpointID)
	switch {
	case err != nil:
		return fmt.Errorf("read webhook endpoint %s: %w", endpointID, err)
	case !found:
		return fmt.Errorf("webhook endpoint %s: %w", endpointID, ErrNotFound)
	case !active:
		return fmt.Errorf("webhook endpoint %s: %w", endpointID, ErrEndpointDisabled)
	}
	return nil
}

// EndpointCreateOps is what a store does inside the transaction that
// creates an endpoint.
type EndpointCreateOps interface {
	// ActiveEndpoints counts the account's active endpoints and holds
	// the count against concurrent creations until the transaction ends;
	// ErrNotFound for an unknown account, if the store can tell here.
	ActiveEndpoints(ctx context.Context, accountID string) (int, error)
	// InsertEndpoint stores e, active, with its signing secret, sealed as
	// the store keeps secrets; ErrNotFound for an unknown account.
	InsertEndpoint(ctx context.Context, e WebhookEndpoint, secret string) error
}

// CreateEndpoint stores e, a new endpoint (NewWebhookEndpoint.Endpoint),
// with its signing secret, unless its account already has
// MaxActiveEndpoints active ones (ErrEndpointLimit). The count and the
// insert share the transaction, so concurrent creations cannot pass the
// limit.
func CreateEndpoint(ctx context.Context, ops EndpointCreateOps, e WebhookEndpoint, secret string) error {
	active, err := ops.ActiveEndpoints(ctx, e.AccountID)
	if err != nil {
		return fmt.Errorf("count active endpoints: %w", err)
	}
	if active >= MaxActiveEndpoints {
		return ErrEndpointLimit
	}
	return ops.InsertEndpoint(ctx, e, secret)
}

// EndpointDisableOps is what a store does inside the transaction that
// disables an endpoint.
type EndpointDisableOps interface {
	// LockEndpoint reads whether the account's endpoint is active and
	// holds it against concurrent changes until the transaction ends;
	// found is false when the account has no such endpoint.
	LockEndpoint(ctx context.Context, accountID, endpointID string) (active, found bool, err error)
	// MarkEndpointDisabled marks the endpoint inactive at now and fails,
	// with ErrorEndpointDisabled, its pending deliveries not in flight (no
	// lease in force at now).
	MarkEndpointDisabled(ctx context.Context, endpointID string, now time.Time) error
}

// DisableWebhookEndpoint disables the account's endpoint at now:
// ErrNotFound for none (another account's included); an endpoint already
// disabled stays as it is, so disabling twice succeeds and keeps the first
// time. An attempt in flight may still complete and is recorded.
func DisableWebhookEndpoint(ctx context.Context, db Transactor, accountID, endpointID string, now time.Time) error {
	_, err := inTx(ctx, db, "disable webhook endpoint "+endpointID, func(ctx context.Context, ops TxOps) (struct{}, error) {
		return struct{}{}, disableEndpoint(ctx, ops, accountID, endpointID, now)
	})
	return err
}

// disableEndpoint is DisableWebhookEndpoint's steps.
func disableEndpoint(ctx context.Context, ops EndpointDisableOps, accountID, endpointID string, now time.Time) error {
	active, found, err := ops.LockEndpoint(ctx, accountID, endpointID)
	switch {
	case err != nil:
		return err
	case !found:
		return ErrNotFound
	case !active:
		return nil
	}
	return ops.MarkEndpointDisabled(ctx, endpointID, now)
}

// QueueTestWebhook writes ev, an event of the account, and one pending
// delivery of it to the account's endpoint, due at ev.CreatedUTC, whatever
// the endpoint subscribes to, and returns the delivery; an unknown
// endpoint (or another account's) is ErrNotFound, a disabled one
// ErrEndpointDisabled.
func QueueTestWebhook(ctx context.Context, db Transactor, accountID, endpointID string, ev WebhookEvent) (WebhookDelivery, error) {
	return inTx(ctx, db, "queue test webhook", func(ctx context.Context, ops TxOps) (WebhookDelivery, error) {
		return queueTestEvent(ctx, ops, accountID, endpointID, ev)
	})
}

// queueTestEvent is QueueTestWebhook's steps.
func queueTestEvent(ctx context.Context, ops WebhookTxOps, accountID, endpointID string, ev WebhookEvent) (WebhookDelivery, error) {
	if err := checkEndpointActive(ctx, ops, accountID, endpointID); err != nil {
		return WebhookDelivery{}, err
	}
	ev.AccountID = accountID
	ids, err := ops.InsertWebhookEvent(ctx, ev, []string{endpointID})
	if err != nil {
		return WebhookDelivery{}, err
	}
	return readDelivery(ctx, ops, accountID, ids[0])
}

// readDelivery reads a delivery the transaction has just written or
// changed, which must be there.
func readDelivery(ctx context.Context, ops WebhookTxOps, accountID, deliveryID string) (WebhookDelivery, error) {
	d, found, err := ops.Delivery(ctx, accountID, deliveryID)
	if err == nil && !found {
		err = ErrNotFound
	}
	if err != nil {
		return WebhookDelivery{}, fmt.Errorf("read webhook delivery %s: %w", deliveryID, err)
	}
	return d, nil
}

// RedeliverWebhook puts the account's failed delivery back to pending, due
// at now, with the same id and event, and returns it: its attempts stay
// counted and a fresh retry schedule starts from them. The checks come in
// this order: an unknown delivery (or another account's) is ErrNotFound,
// one that is not failed ErrDeliveryNotFailed, one whose endpoint is
// disabled ErrEndpointDisabled.
func RedeliverWebhook(ctx context.Context, db Transactor, accountID, deliveryID string, now time.Time) (WebhookDelivery, error) {
	return inTx(ctx, db, "redeliver webhook", func(ctx context.Context, ops TxOps) (WebhookDelivery, error) {
		return redeliver(ctx, ops, accountID, deliveryID, now)
	})
}

// redeliver is RedeliverWebhook's steps.
func redeliver(ctx context.Context, ops WebhookTxOps, accountID, deliveryID string, now time.Time) (WebhookDelivery, error) {
	d, found, err := ops.Delivery(ctx, accountID, deliveryID)
	switch {
	case err != nil:
		return WebhookDelivery{}, err
	case !found:
		return WebhookDelivery{}, fmt.Errorf("webhook delivery %s: %w", deliveryID, ErrNotFound)
	case d.Status != DeliveryFailed:
		return WebhookDelivery{}, fmt.Errorf("webhook delivery %s is %s: %w", deliveryID, d.Status, ErrDeliveryNotFailed)
	}
	if err := checkEndpointActive(ctx, ops, accountID, d.EndpointID); err != nil {
		return WebhookDelivery{}, err
	}
	if err := ops.RequeueDelivery(ctx, deliveryID, now); err != nil {
		return WebhookDelivery{}, fmt.Errorf("requeue webhook delivery %s: %w", deliveryID, err)
	}
	return readDelivery(ctx, ops, accountID, deliveryID)
}
