package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/sqlrow"
)

// jobRow is a report_jobs row: the job's columns as the domain names them
// (locrisk.Job's db tags), and its times as TimeLayout text.
type jobRow struct {
	locrisk.Job
	RunAfterUTC     string         `db:"run_after_utc"`
	LeaseOwner      sql.NullString `db:"lease_owner"`
	LeaseExpiresUTC sql.NullString `db:"lease_expires_utc"`
	CreatedUTC      string         `db:"created_utc"`
	UpdatedUTC      string         `db:"updated_utc"`
	CompletedUTC    sql.NullString `db:"completed_utc"`
}

const jobColumns = `id, account_id, batch_id, bucket, latitude, longitude, status, attempts,
	error_code, error_message, error_transient, report_id, run_after_utc, lease_owner,
	lease_expires_utc, created_utc, updated_utc, completed_utc, watch_item_id`

func (r jobRow) job() (locrisk.Job, error) {
	j := r.Job
	var err error
	if j.RunAfterUTC, err = ParseTime(r.RunAfterUTC); err != nil {
		return locrisk.Job{}, fmt.Errorf("job %s: %w", r.ID, err)
	}
	if j.CreatedUTC, err = ParseTime(r.CreatedUTC); err != nil {
		return locrisk.Job{}, fmt.Errorf("job %s: %w", r.ID, err)
	}
	if j.UpdatedUTC, err = ParseTime(r.UpdatedUTC); err != nil {
		return locrisk.Job{}, fmt.Errorf("job %s: %w", r.ID, err)
	}
	if j.CompletedUTC, err = parseNullTime(r.CompletedUTC); err != nil {
		return locrisk.Job{}, fmt.Errorf("job %s: %w", r.ID, err)
	}
	return j, nil
}

// scanJobs turns rows into jobs.
func scanJobs(rows []jobRow) ([]locrisk.Job, error) {
	return sqlrow.Map(rows, jobRow.job)
}

// getJobTx reads one job by id (any account) with q.
func getJobByID(ctx context.Context, q queryer, jobID string) (locrisk.Job, error) {
	var r jobRow
	err := q.GetContext(ctx, &r, `SELECT `+jobColumns+` FROM report_jobs WHERE id = ?`, jobID)
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.Job{}, fmt.Errorf("job %s: %w", jobID, locrisk.ErrNotFound)
	}
	if err != nil {
		return locrisk.Job{}, fmt.Errorf("get job %s: %w", jobID, err)
	}
	return r.job()
}

// GetJob returns the account's job; another account's job is ErrNotFound.
func (s *Store) GetJob(ctx context.Context, accountID, jobID string) (locrisk.Job, error) {
	var r jobRow
	err := s.db.GetContext(ctx, &r, `SELECT `+jobColumns+` FROM report_jobs WHERE id = ? AND account_id = ?`, jobID, accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.Job{}, fmt.Errorf("job %s: %w", jobID, locrisk.ErrNotFound)
	}
	if err != nil {
		return locrisk.Job{}, fmt.Errorf("get job %s: %w", jobID, err)
	}
	return r.job()
}

// listJobsQuery is ListJobs' query before the page's conditions: the
// account's jobs, with one status unless status is "" (report_jobs_by_account
// or, with a status, report_jobs_by_status, migration 010; TestListJobsQueryPlan).
func listJobsQuery(accountID, status string) (string, []any) {
	q := `SELECT ` + jobColumns + ` FROM report_jobs WHERE account_id = ?`
	args := []any{accountID}
	if status != "" {
		q += ` AND status = ?`
		args = append(args, status)
	}
	return q, args
}

// ListJobs returns up to limit of the account's jobs, newest first
// (created_utc DESC, id DESC), starting after cursor ("" = from the newest),
// optionally only those with one status ("" = all). nextCursor is "" on the
// last page. The cursor is opaque to callers: a malformed one is
// ErrBadCursor. limit <= 0 means 20; it is capped at 1000.
func (s *Store) ListJobs(ctx context.Context, accountID, status string, limit int, cursor string) ([]locrisk.Job, string, error) {
	if err := locrisk.CheckStatusFilter(status); err != nil {
		return nil, "", err
	}
	q, args := listJobsQuery(accountID, status)
	pg, err := newPage(limit, cursor, ids.Job)
	if err != nil {
		return nil, "", err
	}
	q, args = pageQuery(pg, q, args)
	var rows []jobRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	jobs, err := scanJobs(rows)
	if err != nil {
		return nil, "", err
	}
	jobs, next := locrisk.PageRows(pg, jobs, func(j locrisk.Job) (time.Time, string) { return j.CreatedUTC, j.ID })
	return jobs, next, nil
}

// RetryJob puts the account's failed job back in the queue when its error
// was transient; anything else is ErrNotRetryable (ErrNotFound for an
// unknown or foreign job). No quota is used; attempts keep counting
// (locrisk.RetryJob).
func (s *Store) RetryJob(ctx context.Context, accountID, jobID string, now time.Time) (locrisk.Job, error) {
	return locrisk.RetryJob(ctx, transactor{s}, accountID, jobID, truncMs(now))
}

// RequeueRetryable puts the account's job back in the queue if it failed
// with a transient error, inside the transaction (locrisk.RetryTxOps).
func (t txOps) RequeueRetryable(ctx context.Context, accountID, jobID string, now time.Time) (locrisk.Job, bool, error) {
	var r jobRow
	nowS := FormatTime(now)
	ok, err := present(t.tx.GetContext(ctx, &r, `UPDATE report_jobs SET status = 'queued', run_after_utc = ?, updated_utc = ?,
			error_code = NULL, error_message = NULL, error_transient = NULL, completed_utc = NULL,
			lease_owner = NULL, lease_expires_utc = NULL
		WHERE id = ? AND account_id = ? AND status = 'failed' AND error_transient = 1
		RETURNING `+jobColumns, nowS, nowS, jobID, accountID))
	if !ok || err != nil {
		return locrisk.Job{}, ok, err
	}
	j, err := r.job()
	return j, err == nil, err
}

// JobExists reports whether the account has the job, inside the
// transaction (locrisk.RetryTxOps).
func (t txOps) JobExists(ctx context.Context, accountID, jobID string) (bool, error) {
	var n int
	err := t.tx.GetContext(ctx, &n, `SELECT COUNT(*) FROM report_jobs WHERE id = ? AND account_id = ?`, jobID, accountID)
	return n > 0, err
}
