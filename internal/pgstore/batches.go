package pgstore

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

// CreateBatch creates a batch, its items and one queued job per valid
// item, all or nothing, with CreateJob's idempotency and quota rules.
func (s *Store) CreateBatch(ctx context.Context, nb locrisk.NewBatch, now time.Time) (locrisk.Batch, bool, error) {
	valid, err := nb.Validate()
	if err != nil {
		return locrisk.Batch{}, false, err
	}
	now = ms(now)
	var b locrisk.Batch
	var replayed bool
	err = s.withTx(ctx, func(tx *sqlx.Tx) error {
		if err := lockAccounts(ctx, tx, []string{nb.AccountID}); err != nil {
			return err
		}
		if _, err := getAccount(ctx, tx, nb.AccountID); err != nil {
			return err
		}
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
// valid item (locrisk.BatchCreateOps).
func (t txOps) InsertBatch(ctx context.Context, nb locrisk.NewBatch, batchID string, valid int, now time.Time) (locrisk.Batch, error) {
	tx := t.tx
	b := nb.Batch(batchID, valid, now)
	var completed sql.NullTime
	if b.CompletedUTC != nil {
		completed = sql.NullTime{Time: *b.CompletedUTC, Valid: true}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO batches (id, account_id, name, total_items, status, created_utc, completed_utc)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, b.ID, b.AccountID, b.Name, b.TotalItems, b.Status, now, completed); err != nil {
		return locrisk.Batch{}, fmt.Errorf("insert batch: %w", err)
	}
	for i, it := range nb.Items {
		var jobID, code, msg sql.NullString
		if it.ErrorCode == "" {
			j := b.ItemJob(ids.New(ids.Job), it, now)
			if err := insertJob(ctx, tx, j); err != nil {
				return locrisk.Batch{}, fmt.Errorf("insert job of item %d: %w", i+1, err)
			}
			jobID = sql.NullString{String: j.ID, Valid: true}
		} else {
			code, msg = sql.NullString{String: it.ErrorCode, Valid: true}, sql.NullString{String: it.ErrorMessage, Valid: true}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO batch_items
			(batch_id, row_number, external_id, latitude, longitude, job_id, error_code, error_message)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			b.ID, i+1, it.ExternalID, nullFloat(it.Latitude), nullFloat(it.Longitude), jobID, code, msg); err != nil {
			return locrisk.Batch{}, fmt.Errorf("insert batch item %d: %w", i+1, err)
		}
	}
	return b, nil
}

func nullFloat(f *float64) sql.NullFloat64 {
	if f == nil {
		return sql.NullFloat64{}
	}
	return sql.NullFloat64{Float64: *f, Valid: true}
}

type batchRow struct {
	ID           string       `db:"id"`
	AccountID    string       `db:"account_id"`
	Name         string       `db:"name"`
	TotalItems   int          `db:"total_items"`
	CreatedUTC   time.Time    `db:"created_utc"`
	Open         int          `db:"open"`
	Processing   int          `db:"processing"`
	Completed    int          `db:"completed"`
	Failed       int          `db:"failed"`
	Rejected     int          `db:"rejected"`
	LastFinalUTC sql.NullTime `db:"last_final_utc"`
}

// batchSelect reads each batch with its item counts, which the triggers
// of migration 8 keep on its row in the transaction of every change to
// one of its jobs or items, so a batch and a page of them read one row
// each, whatever the number of items. The counters hold queued and
// processing together as open (a claim changes no counter); the
// processing items are counted beside them from the batch's processing
// jobs, one range of report_jobs_processing, which holds only the jobs
// processing, as few as the workers. The batch's latest job end is its
// completed_utc, which syncBatchStatus sets in the transaction that ends
// its last open item.
const batchSelect = `SELECT b.id, b.account_id, b.name, b.total_items, b.created_utc,
		b.items_open AS open, b.items_completed AS completed, b.items_failed AS failed, b.items_rejected AS rejected,
		(SELECT COUNT(*) FROM report_jobs j
			WHERE j.account_id = b.account_id AND j.status = 'processing' AND j.batch_id = b.id) AS processing,
		b.completed_utc AS last_final_utc
	FROM batches b`

func (r batchRow) batch() locrisk.Batch {
	b := locrisk.Batch{ID: r.ID, AccountID: r.AccountID, Name: r.Name, TotalItems: r.TotalItems, CreatedUTC: utc(r.CreatedUTC)}
	b.SetCounts(locrisk.BatchCounts{Queued: r.Open - r.Processing, Processing: r.Processing, Completed: r.Completed, Failed: r.Failed,
		Rejected: r.Rejected}, utcPtr(r.LastFinalUTC))
	return b
}

func getBatch(ctx context.Context, q queryer, accountID, batchID string) (locrisk.Batch, error) {
	var r batchRow
	err := q.GetContext(ctx, &r, batchSelect+` WHERE b.id = $1 AND b.account_id = $2`, batchID, accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.Batch{}, fmt.Errorf("batch %s: %w", batchID, locrisk.ErrNotFound)
	}
	if err != nil {
		return locrisk.Batch{}, fmt.Errorf("get batch %s: %w", batchID, err)
	}
	return r.batch(), nil
}

// GetBatch reads the account's batch inside the transaction
// (locrisk.FinalTxOps).
func (t txOps) GetBatch(ctx context.Context, accountID, batchID string) (locrisk.Batch, error) {
	return getBatch(ctx, t.tx, accountID, batchID)
}

// GetBatch returns the account's batch with its state derived from its items.
func (s *Store) GetBatch(ctx context.Context, accountID, batchID string) (locrisk.Batch, error) {
	return getBatch(ctx, s.db, accountID, batchID)
}

// ListBatches pages the account's batches, newest first.
func (s *Store) ListBatches(ctx context.Context, accountID string, limit int, cursor string) ([]locrisk.Batch, string, error) {
	pg, err := newPage(limit, cursor, ids.Batch)
	if err != nil {
		return nil, "", err
	}
	q, args := pageQuery(pg, batchSelect+` WHERE b.account_id = $1`, []any{accountID}, "b.", "")
	var rows []batchRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list batches: %w", err)
	}
	rows, next := locrisk.PageRows(pg, rows, func(r batchRow) (time.Time, string) { return r.CreatedUTC, r.ID })
	out := make([]locrisk.Batch, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.batch())
	}
	return out, next, nil
}

// SyncBatchStatus brings the batch's stored status in line with its items,
// under the batch row's lock, so that of concurrent transitions on any
// node exactly one sees the batch become complete.
func (t txOps) SyncBatchStatus(ctx context.Context, batchID string) (completed bool, err error) {
	// items_open is the batch's open items with this transaction's move
	// counted (migration 8's trigger ran in its statement, and took the
	// row's lock then).
	var row struct {
		Status string `db:"status"`
		Open   int    `db:"items_open"`
	}
	if err := t.tx.GetContext(ctx, &row, `SELECT status, items_open FROM batches WHERE id = $1 FOR UPDATE`, batchID); err != nil {
		return false, fmt.Errorf("lock batch %s: %w", batchID, err)
	}
	stored := row.Status
	after := locrisk.BatchProcessing
	if row.Open == 0 {
		after = locrisk.BatchCompleted
	}
	if after == stored {
		return false, nil
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE batches SET status = $2, completed_utc = CASE WHEN $2 = 'completed' THEN
			COALESCE((SELECT MAX(completed_utc) FROM report_jobs WHERE batch_id = $1), created_utc) END
		WHERE id = $1`, batchID, after); err != nil {
		return false, fmt.Errorf("update status of batch %s: %w", batchID, err)
	}
	return after == locrisk.BatchCompleted, nil
}

// BatchItems calls fn for each item of the account's batch, in input order.
func (s *Store) BatchItems(ctx context.Context, accountID, batchID string, fn func(locrisk.BatchItem) error) error {
	var n int
	if err := s.db.GetContext(ctx, &n, `SELECT COUNT(*) FROM batches WHERE id = $1 AND account_id = $2`, batchID, accountID); err != nil {
		return fmt.Errorf("find batch %s: %w", batchID, err)
	}
	if n == 0 {
		return fmt.Errorf("batch %s: %w", batchID, locrisk.ErrNotFound)
	}
	rows, err := s.db.QueryxContext(ctx, `SELECT i.row_number, i.external_id, i.latitude, i.longitude, i.job_id,
			i.error_code AS item_error_code, i.error_message AS item_error_message,
			j.status AS job_status, j.report_id, j.error_code AS job_error_code, j.error_message AS job_error_message,
			r.overall_score, r.risk_level, r.module_scores::text AS module_scores
		FROM batch_items i
		LEFT JOIN report_jobs j ON j.id = i.job_id
		LEFT JOIN reports r ON r.id = j.report_id AND j.status = 'completed'
		WHERE i.batch_id = $1 ORDER BY i.row_number`, batchID)
	if err != nil {
		return fmt.Errorf("list items of batch %s: %w", batchID, err)
	}
	defer rows.Close()
	return locrisk.EachBatchItem(batchID, rows, fn)
}
