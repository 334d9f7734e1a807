package locrisk

// The idempotent creation of jobs and batches, the same in every store: a
// request with an idempotency key takes the key for the resource it is
// about to create; when an earlier request still holds the key, the
// request gets what that one made (or ErrIdempotencyConflict) and creates
// nothing; otherwise it creates. A store supplies each step over the
// transaction that creates the resource, so that the key and the resource
// commit or roll back together; the order of the steps lives here once.

import (
	"context"
	"time"
)

// The kinds of resource an idempotency key makes (idempotency_keys.kind):
// one key may be used once for a job and once for a batch.
const (
	IdempotencyKindJob   = "report_job"
	IdempotencyKindBatch = "batch"
)

// KeyTaker takes idempotency keys inside a store's open transaction.
type KeyTaker interface {
	// TakeIdempotencyKey records the account's key of kind, with the
	// request's hash, as making resourceID at now, unless an earlier,
	// unexpired request holds it: then found is true with the id of what
	// that request made, or the error is ErrIdempotencyConflict when its
	// hash differs. An expired key is taken over.
	TakeIdempotencyKey(ctx context.Context, accountID, kind, key, hash, resourceID string, now time.Time) (id string, found bool, err error)
}

// JobCreateOps is what a store does inside the transaction that creates
// a job.
type JobCreateOps interface {
	KeyTaker
	// GetJob reads the job an earlier request made, as it stands now.
	GetJob(ctx context.Context, jobID string) (Job, error)
	QuotaUser
	// InsertJob writes the new job j.
	InsertJob(ctx context.Context, j Job) error
}

// QuotaUser counts jobs against the accounts' monthly quotas inside a
// store's open transaction.
type QuotaUser interface {
	// UseQuota takes n jobs of the account's quota for now's month, or
	// fails with *QuotaError when they do not fit (the transaction then
	// rolls back, and the count with it).
	UseQuota(ctx context.Context, accountID string, n int, now time.Time) error
}

// BatchCreateOps is what a store does inside the transaction that creates
// a batch.
type BatchCreateOps interface {
	KeyTaker
	QuotaUser
	// GetBatch reads the account's batch, as GetBatch shows it.
	GetBatch(ctx context.Context, accountID, batchID string) (Batch, error)
	// InsertBatch writes the new batch batchID of nb, valid of whose
	// items are valid, with its items and their jobs.
	InsertBatch(ctx context.Context, nb NewBatch, batchID string, valid int, now time.Time) (Batch, error)
}

// CreateJobIn creates job, made of nj at now, with ops, under nj's
// idempotency key if it has one: replayed is true when an earlier request
// with the key made the job returned, and nothing was created. A new job
// takes one of the account's quota.
func CreateJobIn(ctx context.Context, ops JobCreateOps, nj NewJob, job Job, now time.Time) (Job, bool, error) {
	return createIdempotent(ctx, ops, nj.AccountID, IdempotencyKindJob, nj.IdempotencyKey, nj.RequestHash, job.ID, now,
		ops.GetJob,
		func(ctx context.Context) (Job, error) {
			if err := ops.UseQuota(ctx, nj.AccountID, 1, now); err != nil {
				return Job{}, err
			}
			return job, ops.InsertJob(ctx, job)
		})
}

// CreateBatchIn creates the batch batchID of nb (valid of whose items are
// valid) at now with ops, under nb's idempotency key if it has one:
// replayed is true when an earlier request with the key made the batch
// returned, and nothing was created. A new batch takes one job of the
// account's quota per valid item; one whose items are all rejected takes
// none.
func CreateBatchIn(ctx context.Context, ops BatchCreateOps, nb NewBatch, batchID string, valid int, now time.Time) (Batch, bool, error) {
	return createIdempotent(ctx, ops, nb.AccountID, IdempotencyKindBatch, nb.IdempotencyKey, nb.RequestHash, batchID, now,
		func(ctx context.Context, id string) (Batch, error) { return ops.GetBatch(ctx, nb.AccountID, id) },
		func(ctx context.Context) (Batch, error) {
			if valid > 0 {
				if err := ops.UseQuota(ctx, nb.AccountID, valid, now); err != nil {
					return Batch{}, err
				}
			}
			return ops.InsertBatch(ctx, nb, batchID, valid, now)
		})
}

// createIdempotent takes key (when not "") for resourceID; when an
// earlier request holds it, it replays what that request made, else it
// creates. Errors are the steps', as they are.
func createIdempotent[T any](ctx context.Context, keys KeyTaker, accountID, kind, key, hash, resourceID string, now time.Time,
	replay func(ctx context.Context, id string) (T, error), create func(ctx context.Context) (T, error)) (v T, replayed bool, err error) {
	if key != "" {
		id, found, err := keys.TakeIdempotencyKey(ctx, accountID, kind, key, hash, resourceID, now)
		if err != nil {
			return v, false, err
		}
		if found {
			v, err := replay(ctx, id)
			return v, true, err
		}
	}
	v, err = create(ctx)
	return v, false, err
}
