package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// CreateBatch creates a batch, its items and one queued report job per
// valid item, in one immediate transaction with the idempotency and quota
// checks, so it is all or nothing: concurrent requests with one key create
// one batch, and a batch never overshoots the quota.
//
// Same key and same RequestHash within IdempotencyTTL: the original batch as
// it stands now, replayed=true, nothing created. Same key, other hash:
// ErrIdempotencyConflict. Fewer jobs left in the period than valid items:
// *QuotaError and nothing is created. A batch whose items are all rejected
// uses no quota and is completed at once.
func (s *Store) CreateBatch(ctx context.Context, nb locrisk.NewBatch, now time.Time) (b locrisk.Batch, replayed bool, err error) {
	valid, err := nb.Validate()
	if err != nil {
		return locrisk.Batch{}, false, err
	}
	now = truncMs(now)
	err = s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var err error
		b, replayed, err = locrisk.CreateBatchIn(ctx, txOps{tx}, nb, ids.New(ids.Batch), valid, now)
		return err
	})
	if err != nil {
		return locrisk.Batch{}, false, fmt.Errorf("create batch: %w", err)
	}
	return b, replayed, nil
}

// InsertBatch writes the batch row and its items, with one queued job per
// valid item (locrisk.BatchCreateOps). With no valid item no quota was
// used, which would have found an unknown account: it checks the account
// first, which the batch row's foreign key would report less plainly.
func (t txOps) InsertBatch(ctx context.Context, nb locrisk.NewBatch, batchID string, valid int, now time.Time) (locrisk.Batch, error) {
	tx := t.tx
	if valid == 0 {
		if _, err := getAccount(ctx, tx, nb.AccountID); err != nil {
			return locrisk.Batch{}, err
		}
	}
	b := nb.Batch(batchID, valid, now)
	var completed sql.NullString
	if b.CompletedUTC != nil {
		completed = sql.NullString{String: FormatTime(*b.CompletedUTC), Valid: true}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO batches (id, account_id, name, total_items, status, created_utc, completed_utc)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, b.ID, b.AccountID, b.Name, b.TotalItems, b.Status, FormatTime(now), completed); err != nil {
		return locrisk.Batch{}, fmt.Errorf("insert batch: %w", err)
	}
	ins, err := tx.PreparexContext(ctx, `INSERT INTO batch_items
		(batch_id, row_number, external_id, latitude, longitude, job_id, error_code, error_message)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return locrisk.Batch{}, fmt.Errorf("prepare item insert: %w", err)
	}
	defer ins.Close()
	for i, it := range nb.Items {
		var jobID, code, msg sql.NullString
		if it.ErrorCode == "" {
			j := b.ItemJob(ids.New(ids.Job), it, now)
			if err := insertJob(ctx, tx, j); err != nil {
				return locrisk.Batch{}, err
			}
			jobID = sql.NullString{String: j.ID, Valid: true}
		} else {
			code = sql.NullString{String: it.ErrorCode, Valid: true}
			msg = sql.NullString{String: it.ErrorMessage, Valid: true}
		}
		if _, err := ins.ExecContext(ctx, b.ID, i+1, it.ExternalID, nullFloat(it.Latitude), nullFloat(it.Longitude),
			jobID, code, msg); err != nil {
			return locrisk.Batch{}, fmt.Errorf("insert batch item %d: %w", i+1, err)
		}
	}
	return b, nil
}

// GetBatch returns the account's batch with its state derived from its
// items; an unknown batch or another account's is ErrNotFound.
func (s *Store) GetBatch(ctx context.Context, accountID, batchID string) (locrisk.Batch, error) {
	return getBatch(ctx, s.db, accountID, batchID)
}

// batchRow is the batch with its item counts.
type batchRow struct {
	ID           string         `db:"id"`
	AccountID    string         `db:"account_id"`
	Name         string         `db:"name"`
	TotalItems   int            `db:"total_items"`
	CreatedUTC   string         `db:"created_utc"`
	Open         int            `db:"open"`
	Processing   int            `db:"processing"`
	Completed    int            `db:"completed"`
	Failed       int            `db:"failed"`
	Rejected     int            `db:"rejected"`
	LastFinalUTC sql.NullString `db:"last_final_utc"`
}

// batchColumns are the batch and its item counts, which migration 010's
// triggers keep on the batch row in the transaction of every change to one
// of its jobs or items, so one batch (getBatch) and a page of them
// (ListBatches) read one row each, whatever the number of items. The
// counters hold queued and processing together as open (a claim changes
// no counter); the processing items are counted beside them in the same
// statement from the account's processing jobs, which are as few as the
// workers (report_jobs_by_status).
const batchColumns = `id, account_id, name, total_items, created_utc,
	items_open AS open, items_completed AS completed, items_failed AS failed,
	items_rejected AS rejected, items_ended_utc AS last_final_utc,
	(SELECT COUNT(*) FROM report_jobs INDEXED BY report_jobs_by_status
		WHERE account_id = batches.account_id AND status = 'processing' AND batch_id = batches.id) AS processing`

// getBatch reads the batch's counts, and derives its status and
// completion time from them, so they are always consistent with what the
// items endpoint shows: the batch is completed when no item is queued or
// processing; its completion time is the latest end of its jobs, or its
// creation when every item was rejected. TestBatchCountersMatchItems
// checks the counts against the items and their jobs.
func getBatch(ctx context.Context, q queryer, accountID, batchID string) (locrisk.Batch, error) {
	var r batchRow
	err := q.GetContext(ctx, &r, `SELECT `+batchColumns+` FROM batches WHERE id = ? AND account_id = ?`, batchID, accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.Batch{}, fmt.Errorf("batch %s: %w", batchID, locrisk.ErrNotFound)
	}
	if err != nil {
		return locrisk.Batch{}, fmt.Errorf("get batch %s: %w", batchID, err)
	}
	return r.batch()
}

// GetBatch reads the account's batch inside the transaction
// (locrisk.FinalTxOps).
func (t txOps) GetBatch(ctx context.Context, accountID, batchID string) (locrisk.Batch, error) {
	return getBatch(ctx, t.tx, accountID, batchID)
}

// batch turns the aggregated row into a Batch (see getBatch).
func (r batchRow) batch() (locrisk.Batch, error) {
	b := locrisk.Batch{ID: r.ID, AccountID: r.AccountID, Name: r.Name, TotalItems: r.TotalItems}
	var err error
	if b.CreatedUTC, err = ParseTime(r.CreatedUTC); err != nil {
		return locrisk.Batch{}, fmt.Errorf("batch %s: %w", r.ID, err)
	}
	lastEnd, err := parseNullTime(r.LastFinalUTC)
	if err != nil {
		return locrisk.Batch{}, fmt.Errorf("batch %s: %w", r.ID, err)
	}
	b.SetCounts(locrisk.BatchCounts{Queued: r.Open - r.Processing, Processing: r.Processing, Completed: r.Completed,
		Failed: r.Failed, Rejected: r.Rejected}, lastEnd)
	return b, nil
}

// ListBatches returns up to limit of the account's batches, newest first
// (created_utc DESC, id DESC), starting after cursor ("" = from the newest),
// each exactly as GetBatch derives it; nextCursor is "" on the last page.
// Paging and its errors are the job list's (see ListJobs). The page is a
// seek on the batches_by_account index (migration 009) that reads the
// page's rows and nothing else: the counts are on them (batchColumns).
func (s *Store) ListBatches(ctx context.Context, accountID string, limit int, cursor string) ([]locrisk.Batch, string, error) {
	pg, err := newPage(limit, cursor, ids.Batch)
	if err != nil {
		return nil, "", err
	}
	q, args := pageQuery(pg, `SELECT `+batchColumns+` FROM batches WHERE account_id = ?`, []any{accountID})
	var rows []batchRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list batches: %w", err)
	}
	out := make([]locrisk.Batch, 0, len(rows))
	for _, r := range rows {
		b, err := r.batch()
		if err != nil {
			return nil, "", err
		}
		out = append(out, b)
	}
	out, next := locrisk.PageRows(pg, out, func(b locrisk.Batch) (time.Time, string) { return b.CreatedUTC, b.ID })
	return out, next, nil
}

// SyncBatchStatus brings batches.status and completed_utc in line with the
// batch's jobs. It runs inside every transaction that moves a batch job
// into or out of a final state (locrisk.FinishJob, RetryJob), so the stored
// columns, which the operations summary counts, agree with what getBatch
// derives from the item counts; the API itself shows the item counts
// (batchColumns).
//
// completed reports whether this call moved the batch from processing to
// completed: true in exactly one transaction each time the batch becomes
// complete, as the write transactions are serialised (the batch.completed
// event hangs on it, outbox.Hook). A batch all of whose items were
// rejected is completed at creation and never passes through here.
func (t txOps) SyncBatchStatus(ctx context.Context, batchID string) (completed bool, err error) {
	// The item counts on the batch row are already up to date: migration
	// 010's triggers keep them in the statement that moved the job. So
	// this reads one row, and writes it only when the status changes.
	var b struct {
		Status string `db:"status"`
		Open   int    `db:"items_open"`
	}
	if err := t.tx.GetContext(ctx, &b, `SELECT status, items_open FROM batches WHERE id = ?`, batchID); err != nil {
		return false, fmt.Errorf("read status of batch %s: %w", batchID, err)
	}
	after := locrisk.BatchProcessing
	if b.Open == 0 {
		after = locrisk.BatchCompleted
	}
	if after == b.Status {
		return false, nil
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE batches SET status = ?2,
			completed_utc = CASE WHEN ?2 = 'completed' THEN COALESCE(items_ended_utc, created_utc) END
		WHERE id = ?1`, batchID, after); err != nil {
		return false, fmt.Errorf("update status of batch %s: %w", batchID, err)
	}
	return after == locrisk.BatchCompleted, nil
}

// itemsQuery lists a batch's items in row order with their job's state and,
// for a job that is completed now, its report's scores, from their columns:
// no report body is read.
const itemsQuery = `SELECT i.row_number, i.external_id, i.latitude, i.longitude, i.job_id,
		i.error_code AS item_error_code, i.error_message AS item_error_message,
		j.status AS job_status, j.report_id, j.error_code AS job_error_code, j.error_message AS job_error_message,
		r.overall_score, r.risk_level, r.module_scores
	FROM batch_items i
	JOIN batches b ON b.id = i.batch_id
	LEFT JOIN report_jobs j ON j.id = i.job_id
	LEFT JOIN reports r ON r.id = j.report_id AND j.status = 'completed'
	WHERE i.batch_id = ? AND b.account_id = ?
	ORDER BY i.row_number`

// BatchItems calls fn for each item of the account's batch in rowNumber
// order, reading them from one cursor, so a caller can stream them out
// without holding the whole batch. An unknown batch or another account's is
// ErrNotFound, returned before fn is called. An error from fn stops the
// iteration and is returned unchanged.
//
// The cursor holds a pooled connection (and a WAL read snapshot) until the
// iteration ends, so fn should not block for long.
func (s *Store) BatchItems(ctx context.Context, accountID, batchID string, fn func(locrisk.BatchItem) error) error {
	var n int
	if err := s.db.GetContext(ctx, &n, `SELECT COUNT(*) FROM batches WHERE id = ? AND account_id = ?`, batchID, accountID); err != nil {
		return fmt.Errorf("find batch %s: %w", batchID, err)
	}
	if n == 0 {
		return fmt.Errorf("batch %s: %w", batchID, locrisk.ErrNotFound)
	}
	rows, err := s.db.QueryxContext(ctx, itemsQuery, batchID, accountID)
	if err != nil {
		return fmt.Errorf("list items of batch %s: %w", batchID, err)
	}
	defer rows.Close()
	return locrisk.EachBatchItem(batchID, rows, fn)
}
