package store

import (
	"context"

	"github.com/jmoiron/sqlx"
)

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
