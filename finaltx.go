package locrisk

// The end of a job's final transition (completed or failed), the same in
// every store: bring the job's batch status up to date, read the batch if
// this transition is the one that completed it, and run the JobFinalHooks
// (outbox.go) with a Tx over the same transaction. A store supplies the
// SQL operations (FinalTxOps) over its open transaction; the order, the
// batch handling and the errors' wording live here once.

import (
	"context"
	"fmt"
)

// FinalTxOps is what a store does inside the open transaction of a job's
// final transition.
type FinalTxOps interface {
	// SyncBatchStatus brings the batch's stored status in line with its
	// items and reports whether this call moved it from processing to
	// completed: true in exactly one transaction each time a batch becomes
	// complete.
	SyncBatchStatus(ctx context.Context, batchID string) (completed bool, err error)
	// GetBatch reads the account's batch as GetBatch shows it.
	GetBatch(ctx context.Context, accountID, batchID string) (Batch, error)
	// WebhookSubscribers and InsertWebhookEvent are Tx's.
	WebhookSubscribers(ctx context.Context, accountID, eventType string) ([]string, error)
	InsertWebhookEvent(ctx context.Context, ev WebhookEvent, endpointIDs []string) ([]string, error)
}

// FinishJob runs, inside the transaction ops works in, what follows the
// update of job's row to its final state: the batch (if the job has one),
// then hooks in order with a Tx over that transaction. An error rolls the
// whole transition back.
func FinishJob(ctx context.Context, ops FinalTxOps, job Job, hooks []JobFinalHook) error {
	tx := finalTx{ops: ops}
	if job.BatchID != nil {
		completed, err := ops.SyncBatchStatus(ctx, *job.BatchID)
		if err != nil {
			return fmt.Errorf("job %s: %w", job.ID, err)
		}
		if completed {
			b, err := ops.GetBatch(ctx, job.AccountID, *job.BatchID)
			if err != nil {
				return fmt.Errorf("job %s: %w", job.ID, err)
			}
			tx.completedBatch = &b
		}
	}
	for _, h := range hooks {
		if err := h(ctx, tx, job); err != nil {
			return fmt.Errorf("job %s final hook: %w", job.ID, err)
		}
	}
	return nil
}

// finalTx is the Tx the hooks get: the store's operations, and the batch
// this transition completed, if any. It offers the hooks only Tx's
// methods, not the batch operations beside them.
type finalTx struct {
	ops            FinalTxOps
	completedBatch *Batch
}

func (t finalTx) CompletedBatch() (Batch, bool) {
	if t.completedBatch == nil {
		return Batch{}, false
	}
	return *t.completedBatch, true
}

func (t finalTx) WebhookSubscribers(ctx context.Context, accountID, eventType string) ([]string, error) {
	return t.ops.WebhookSubscribers(ctx, accountID, eventType)
}

func (t finalTx) InsertWebhookEvent(ctx context.Context, ev WebhookEvent, endpointIDs []string) ([]string, error) {
	return t.ops.InsertWebhookEvent(ctx, ev, endpointIDs)
}
