package locrisk

// Putting a failed job back in the queue at the account's request
// (Jobs.RetryJob in service.go), the same in every store: which jobs may
// go back, which error the others get, and the batch that is processing
// again. A store supplies the SQL over its open transaction
// (RetryTxOps, through a Transactor).

import (
	"context"
	"time"
)

// RetryTxOps is what a store does inside the transaction of a retry.
type RetryTxOps interface {
	// RequeueRetryable puts the account's job back in the queue,
	// runnable at now and its error cleared, if it failed with a
	// transient error, and returns it as it now stands; ok is false, and
	// nothing is written, for any other job.
	RequeueRetryable(ctx context.Context, accountID, jobID string, now time.Time) (job Job, ok bool, err error)
	// JobExists reports whether the account has the job.
	JobExists(ctx context.Context, accountID, jobID string) (bool, error)
	// SyncBatchStatus is FinalTxOps's.
	SyncBatchStatus(ctx context.Context, batchID string) (completed bool, err error)
}

// RetryJob puts the account's failed job back in the queue, runnable at
// now, when its error was transient; a job of another account (or none) is
// ErrNotFound, any other job ErrNotRetryable. No quota is used, and the
// attempts go on counting. A batch job's batch is processing again until
// the job ends again.
func RetryJob(ctx context.Context, db Transactor, accountID, jobID string, now time.Time) (Job, error) {
	return inTx(ctx, db, "retry job "+jobID, func(ctx context.Context, ops TxOps) (Job, error) {
		return retryFailedJob(ctx, ops, accountID, jobID, now)
	})
}

// retryFailedJob is RetryJob's steps.
func retryFailedJob(ctx context.Context, ops RetryTxOps, accountID, jobID string, now time.Time) (Job, error) {
	job, ok, err := ops.RequeueRetryable(ctx, accountID, jobID, now)
	if err != nil {
		return Job{}, err
	}
	if !ok {
		exists, err := ops.JobExists(ctx, accountID, jobID)
		switch {
		case err != nil:
			return Job{}, err
		case !exists:
			return Job{}, ErrNotFound
		}
		return Job{}, ErrNotRetryable
	}
	if job.BatchID != nil {
		if _, err := ops.SyncBatchStatus(ctx, *job.BatchID); err != nil {
			return Job{}, err
		}
	}
	return job, nil
}
