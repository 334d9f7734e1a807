package store

import (
	"context"

	"github.com/jmoiron/sqlx"
)

// Tx is what a JobFinalHook may do inside the transaction that moves a job
// to its final state: the writes that must commit with that state or not at
// all. It is an interface so that hooks (the webhook outbox, package
// outbox) depend on the store's operations, not on its SQL driver; the
// store implements it over the open transaction.
type Tx interface {
	// WebhookSubscribers returns the ids of the account's active endpoints
	// subscribed to eventType, oldest first.
	WebhookSubscribers(ctx context.Context, accountID, eventType string) ([]string, error)
	// InsertWebhookEvent writes the event and one pending delivery per
	// endpoint id, due at once (at ev.CreatedUTC), and returns the delivery
	// ids in endpoint order.
	InsertWebhookEvent(ctx context.Context, ev WebhookEvent, endpointIDs []string) ([]string, error)
	// CompletedBatch returns the job's batch, as GetBatch now shows it,
	// when this transition is the one that completed it (every item
	// completed, failed or rejected); ok is false otherwise. It is true in
	// exactly one transaction each time a batch becomes complete.
	CompletedBatch() (b Batch, ok bool)
}

// finalTx is the Tx handed to the JobFinalHooks: the job's final
// transaction.
type finalTx struct {
	tx             *sqlx.Tx
	completedBatch *Batch // set when this transition completed the job's batch
}

func (t finalTx) CompletedBatch() (Batch, bool) {
	if t.completedBatch == nil {
		return Batch{}, false
	}
	return *t.completedBatch, true
}

func (t finalTx) WebhookSubscribers(ctx context.Context, accountID, eventType string) ([]string, error) {
	return webhookSubscribers(ctx, t.tx, accountID, eventType)
}

func (t finalTx) InsertWebhookEvent(ctx context.Context, ev WebhookEvent, endpointIDs []string) ([]string, error) {
	return insertWebhookEvent(ctx, t.tx, ev, endpointIDs)
}
