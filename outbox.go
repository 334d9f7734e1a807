package locrisk

import (
	"context"
	"time"
)

// JobFinalHook runs inside the transaction that moves a job to a final state
// (completed or failed), after the job row is updated; job is the row as it
// now stands. Returning an error rolls the whole transition back, so a hook
// must only fail for real database errors. This is where the webhook outbox
// (an event per subscribed endpoint) and batch completion attach, so their
// rows commit atomically with the job's final state.
type JobFinalHook func(ctx context.Context, tx Tx, job Job) error

// Tx is what a JobFinalHook may do inside the transaction that moves a job
// to its final state: the writes that must commit with that state or not at
// all. It is an interface so that hooks (the webhook outbox, internal/outbox) depend on
// the store's operations, not on its SQL driver: FinishJob (finaltx.go)
// hands the hooks one over the operations each store supplies on its open
// transaction (FinalTxOps).
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
	// WatchChange returns, when this transition completed a job of a
	// watch item that had a report before, the item as it now stands
	// (its new report current, Changed false) and both reports; ok is
	// false otherwise (docs/api.md, Watchlists).
	WatchChange() (c WatchChange, ok bool)
	// ReadReport reads a stored report, any account's, with its body.
	ReadReport(ctx context.Context, reportID string) (Report, error)
	// MarkWatchItemChanged records that the item's current report
	// differs materially from its previous one, changed at at: the item
	// is Changed and its LastChangedUTC is at.
	MarkWatchItemChanged(ctx context.Context, itemID string, at time.Time) error
}
