package locrisk

// The end of a job's final transition (completed or failed), the same in
// every store: bring the job's batch status up to date, read the batch if
// this transition is the one that completed it, move a watch item's
// reports on when the job is one of its (watchlists.go), and run the
// JobFinalHooks (outbox.go) with a Tx over the same transaction. A store
// supplies the SQL operations (FinalTxOps) over its open transaction; the
// order, the batch and watch item handling and the errors' wording live
// here once.

import (
	"context"
	"fmt"
	"time"
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
	// LockWatchItem reads the watch item, with its list's minScoreChange,
	// and holds it against concurrent changes until the transaction
	// ends; found is false when it was removed.
	LockWatchItem(ctx context.Context, itemID string) (st WatchItemState, found bool, err error)
	// UpdateWatchItem stores the item's reports, versions, scores and
	// change state as st has them.
	UpdateWatchItem(ctx context.Context, st WatchItemState) error
	// ReadReport and MarkWatchItemChanged are Tx's.
	ReadReport(ctx context.Context, reportID string) (Report, error)
	MarkWatchItemChanged(ctx context.Context, itemID string, at time.Time) error
}

// FinishJob runs, inside the transaction ops works in, what follows the
// update of job's row to its final state: the batch (if the job has one),
// the watch item (if the job is one of its: rep is the report a completed
// job stored, nil for a failed one), then hooks in order with a Tx over
// that transaction. An error rolls the whole transition back.
func FinishJob(ctx context.Context, ops FinalTxOps, job Job, rep *Report, hooks []JobFinalHook) error {
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
	if job.WatchItemID != nil {
		ch, err := advanceWatchItem(ctx, ops, job, rep)
		if err != nil {
			return fmt.Errorf("job %s: watch item %s: %w", job.ID, *job.WatchItemID, err)
		}
		tx.watchChange = ch
	}
	for _, h := range hooks {
		if err := h(ctx, tx, job); err != nil {
			return fmt.Errorf("job %s final hook: %w", job.ID, err)
		}
	}
	return nil
}

// advanceWatchItem moves the reports of job's watch item on
// (WatchItemState.Advance) and returns what the hooks judge: the item
// and both reports, when the job gave it a new report and it had one
// before; nil otherwise, and when the item was removed meanwhile (its
// job's report is then an ordinary report, nothing more).
func advanceWatchItem(ctx context.Context, ops FinalTxOps, job Job, rep *Report) (*WatchChange, error) {
	st, found, err := ops.LockWatchItem(ctx, *job.WatchItemID)
	if err != nil || !found {
		return nil, err
	}
	if job.Status != StatusCompleted {
		return nil, nil // the item keeps its reports; its latest job shows the failure
	}
	if rep == nil {
		return nil, fmt.Errorf("completed job %s has no report", job.ID)
	}
	next, compare := st.Advance(job, rep)
	if err := ops.UpdateWatchItem(ctx, next); err != nil {
		return nil, err
	}
	if !compare {
		return nil, nil
	}
	return &WatchChange{Item: next, Previous: *st.Current, Report: *rep}, nil
}

// finalTx is the Tx the hooks get: the store's operations, the batch
// this transition completed and the watch item change it made, if any.
// It offers the hooks only Tx's methods, not the batch and item
// operations beside them.
type finalTx struct {
	ops            FinalTxOps
	completedBatch *Batch
	watchChange    *WatchChange
}

func (t finalTx) WatchChange() (WatchChange, bool) {
	if t.watchChange == nil {
		return WatchChange{}, false
	}
	return *t.watchChange, true
}

func (t finalTx) ReadReport(ctx context.Context, reportID string) (Report, error) {
	return t.ops.ReadReport(ctx, reportID)
}

func (t finalTx) MarkWatchItemChanged(ctx context.Context, itemID string, at time.Time) error {
	return t.ops.MarkWatchItemChanged(ctx, itemID, at)
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
