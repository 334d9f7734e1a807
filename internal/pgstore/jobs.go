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
	"github.com/locrisk/locrisk/internal/sqlrow"
)

// jobRow is a report_jobs row: the job's columns as the domain names them
// (locrisk.Job's db tags), and its times as timestamptz.
type jobRow struct {
	locrisk.Job
	RunAfterUTC     time.Time      `db:"run_after_utc"`
	LeaseOwner      sql.NullString `db:"lease_owner"`
	LeaseExpiresUTC sql.NullTime   `db:"lease_expires_utc"`
	CreatedUTC      time.Time      `db:"created_utc"`
	UpdatedUTC      time.Time      `db:"updated_utc"`
	CompletedUTC    sql.NullTime   `db:"completed_utc"`
}

const jobColumns = `id, account_id, batch_id, bucket, latitude, longitude, status, attempts,
	error_code, error_message, error_transient, report_id, run_after_utc, lease_owner,
	lease_expires_utc, created_utc, updated_utc, completed_utc, watch_item_id`

func (r jobRow) job() locrisk.Job {
	j := r.Job
	j.RunAfterUTC, j.CreatedUTC, j.UpdatedUTC = utc(r.RunAfterUTC), utc(r.CreatedUTC), utc(r.UpdatedUTC)
	j.CompletedUTC = utcPtr(r.CompletedUTC)
	return j
}

// CreateJob creates a queued job, unless its idempotency key replays an
// earlier one or the quota is used up (see the package comment for how
// both hold across nodes). Creations that arrive together share one
// transaction and so one commit (creations.go).
func (s *Store) CreateJob(ctx context.Context, nj locrisk.NewJob, now time.Time) (locrisk.Job, bool, error) {
	nj, err := nj.Normalized()
	if err != nil {
		return locrisk.Job{}, false, err
	}
	res, err := s.creations.create(ctx, nj, ms(now))
	if err != nil {
		return locrisk.Job{}, false, fmt.Errorf("create job: %w", err)
	}
	return res.job, res.replayed, nil
}

// createOne creates (or replays) one job in tx: the body of CreateJob's
// transaction.
func createOne(ctx context.Context, tx *sqlx.Tx, nj locrisk.NewJob, now time.Time) (creation, error) {
	// The account first: a failed statement would abort the transaction
	// before it could say which error it was.
	if _, err := getAccount(ctx, tx, nj.AccountID); err != nil {
		return creation{}, err
	}
	job, replayed, err := locrisk.CreateJobIn(ctx, txOps{tx}, nj, nj.Job(ids.New(ids.Job), now), now)
	if err != nil {
		return creation{}, err
	}
	return creation{job: job, replayed: replayed}, nil
}

// GetJob reads the job an earlier request with the same idempotency key
// made (locrisk.JobCreateOps).
func (t txOps) GetJob(ctx context.Context, jobID string) (locrisk.Job, error) {
	var r jobRow
	if err := t.tx.GetContext(ctx, &r, `SELECT `+jobColumns+` FROM report_jobs WHERE id = $1`, jobID); err != nil {
		return locrisk.Job{}, fmt.Errorf("replayed job %s: %w", jobID, err)
	}
	return r.job(), nil
}

// InsertJob writes the new job j (locrisk.JobCreateOps).
func (t txOps) InsertJob(ctx context.Context, j locrisk.Job) error { return insertJob(ctx, t.tx, j) }

// UseQuota is useQuota in the transaction (locrisk.QuotaUser).
func (t txOps) UseQuota(ctx context.Context, accountID string, n int, now time.Time) error {
	return useQuota(ctx, t.tx, accountID, n, now)
}

// insertJob writes a new job row (queued, no attempts yet).
func insertJob(ctx context.Context, tx *sqlx.Tx, j locrisk.Job) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO report_jobs
		(id, account_id, batch_id, bucket, latitude, longitude, status, attempts, run_after_utc, created_utc, updated_utc)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $9, $10)`,
		j.ID, j.AccountID, j.BatchID, j.Bucket, j.Latitude, j.Longitude, j.Status, j.RunAfterUTC, j.CreatedUTC, j.UpdatedUTC)
	return err
}

// TakeIdempotencyKey records key for resourceID, or returns the resource an
// unexpired earlier use of the key made (found), or ErrIdempotencyConflict
// when that use had another request. An expired key is taken over
// (locrisk.KeyTaker).
func (t txOps) TakeIdempotencyKey(ctx context.Context, accountID, kind, key, hash, resourceID string, now time.Time) (string, bool, error) {
	tx := t.tx
	res, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (account_id, kind, key, request_hash, resource_id, created_utc)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (account_id, kind, key) DO NOTHING`,
		accountID, kind, key, hash, resourceID, now)
	if err != nil {
		return "", false, fmt.Errorf("remember idempotency key: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return "", false, err
	} else if n == 1 {
		return "", false, nil
	}
	var row struct {
		Hash       string    `db:"request_hash"`
		ResourceID string    `db:"resource_id"`
		CreatedUTC time.Time `db:"created_utc"`
	}
	// FOR UPDATE: a concurrent take-over of the same expired key waits.
	err = tx.GetContext(ctx, &row, `SELECT request_hash, resource_id, created_utc FROM idempotency_keys
		WHERE account_id = $1 AND kind = $2 AND key = $3 FOR UPDATE`, accountID, kind, key)
	if err != nil {
		return "", false, fmt.Errorf("idempotency lookup: %w", err)
	}
	replay, expired, err := locrisk.IdempotentReplay(row.Hash, row.ResourceID, row.CreatedUTC, hash, now)
	if !expired {
		return replay, err == nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE idempotency_keys SET request_hash = $1, resource_id = $2, created_utc = $3
		WHERE account_id = $4 AND kind = $5 AND key = $6`, hash, resourceID, now, accountID, kind, key); err != nil {
		return "", false, fmt.Errorf("take over expired idempotency key: %w", err)
	}
	return "", false, nil
}

// useQuota counts n jobs against the account's quota for now's month, or
// returns *QuotaError. The upsert locks the month's row until the
// transaction ends.
func useQuota(ctx context.Context, tx *sqlx.Tx, accountID string, n int, now time.Time) error {
	var r struct {
		Used  int `db:"report_jobs"`
		Limit int `db:"monthly_quota"`
	}
	err := tx.GetContext(ctx, &r, `INSERT INTO quota_usage AS q (account_id, period_start_utc, report_jobs) VALUES ($1, $2, $3)
		ON CONFLICT (account_id, period_start_utc) DO UPDATE SET report_jobs = q.report_jobs + excluded.report_jobs
		RETURNING q.report_jobs, (SELECT monthly_quota FROM accounts WHERE accounts.id = q.account_id) AS monthly_quota`,
		accountID, locrisk.MonthStart(now), n)
	if err != nil {
		return fmt.Errorf("count quota usage: %w", err)
	}
	return locrisk.CheckQuota(r.Limit, r.Used, n, now)
}

// GetJob returns the account's job.
func (s *Store) GetJob(ctx context.Context, accountID, jobID string) (locrisk.Job, error) {
	var r jobRow
	err := s.db.GetContext(ctx, &r, `SELECT `+jobColumns+` FROM report_jobs WHERE id = $1 AND account_id = $2`, jobID, accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.Job{}, fmt.Errorf("job %s: %w", jobID, locrisk.ErrNotFound)
	}
	if err != nil {
		return locrisk.Job{}, fmt.Errorf("get job %s: %w", jobID, err)
	}
	return r.job(), nil
}

// ListJobs pages the account's jobs, newest first.
func (s *Store) ListJobs(ctx context.Context, accountID, status string, limit int, cursor string) ([]locrisk.Job, string, error) {
	if err := locrisk.CheckStatusFilter(status); err != nil {
		return nil, "", err
	}
	pg, err := newPage(limit, cursor, ids.Job)
	if err != nil {
		return nil, "", err
	}
	q := `SELECT ` + jobColumns + ` FROM report_jobs WHERE account_id = $1`
	args := []any{accountID}
	if status != "" {
		args = append(args, status)
		q += fmt.Sprintf(` AND status = $%d`, len(args))
	}
	q, args = pageQuery(pg, q, args, "", "")
	var rows []jobRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	rows, next := locrisk.PageRows(pg, rows, func(r jobRow) (time.Time, string) { return r.CreatedUTC, r.ID })
	out := make([]locrisk.Job, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.job())
	}
	return out, next, nil
}

// RetryJob queues the account's failed job again when its error was
// transient (locrisk.RetryJob), and its batch, if any, is processing
// again.
func (s *Store) RetryJob(ctx context.Context, accountID, jobID string, now time.Time) (locrisk.Job, error) {
	return locrisk.RetryJob(ctx, transactor{s}, accountID, jobID, ms(now))
}

// RequeueRetryable puts the account's job back in the queue if it failed
// with a transient error (locrisk.RetryTxOps).
func (t txOps) RequeueRetryable(ctx context.Context, accountID, jobID string, now time.Time) (locrisk.Job, bool, error) {
	var r jobRow
	ok, err := present(t.tx.GetContext(ctx, &r, `UPDATE report_jobs SET status = 'queued', run_after_utc = $1, updated_utc = $1,
			error_code = NULL, error_message = NULL, error_transient = NULL, completed_utc = NULL,
			lease_owner = NULL, lease_expires_utc = NULL
		WHERE id = $2 AND account_id = $3 AND status = 'failed' AND error_transient
		RETURNING `+jobColumns, now, jobID, accountID))
	return r.job(), ok, err
}

// JobExists reports whether the account has the job (locrisk.RetryTxOps).
func (t txOps) JobExists(ctx context.Context, accountID, jobID string) (bool, error) {
	var n int
	err := t.tx.GetContext(ctx, &n, `SELECT COUNT(*) FROM report_jobs WHERE id = $1 AND account_id = $2`, jobID, accountID)
	return n > 0, err
}

// GetReport returns the account's report, its body decoded.
func (s *Store) GetReport(ctx context.Context, accountID, reportID string) (locrisk.Report, error) {
	return s.readReport(ctx, s.db, `id = $1 AND account_id = $2`, reportID, accountID)
}

// readReport reads the report where (on reportID, and args beyond it)
// holds with q, its body decoded; none is ErrNotFound.
func (s *Store) readReport(ctx context.Context, q queryer, where, reportID string, args ...any) (locrisk.Report, error) {
	var r struct {
		ID           string         `db:"id"`
		JobID        string         `db:"job_id"`
		AccountID    string         `db:"account_id"`
		GeneratedUTC time.Time      `db:"generated_utc"`
		DataVersion  string         `db:"data_version"`
		Body         []byte         `db:"body"`
		BodyCodec    sql.NullString `db:"body_codec"`
	}
	err := q.GetContext(ctx, &r, `SELECT id, job_id, account_id, generated_utc, data_version, body, body_codec
		FROM reports WHERE `+where, append([]any{reportID}, args...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.Report{}, fmt.Errorf("report %s: %w", reportID, locrisk.ErrNotFound)
	}
	if err != nil {
		return locrisk.Report{}, fmt.Errorf("get report %s: %w", reportID, err)
	}
	body, err := s.codec.Decode(r.BodyCodec.String, r.Body)
	if err != nil {
		return locrisk.Report{}, fmt.Errorf("report %s: %w", reportID, err)
	}
	return locrisk.Report{ID: r.ID, JobID: r.JobID, AccountID: r.AccountID, GeneratedUTC: utc(r.GeneratedUTC),
		DataVersion: r.DataVersion, Body: body}, nil
}

// PeriodUsage returns the account's usage in now's billing period: the
// jobs created in it (a retry creates none) by their status now, summed
// from the period's hours of usage_hourly (migration 8), read with the
// account's quota in one statement (periodUsageQuery).
func (s *Store) PeriodUsage(ctx context.Context, accountID string, now time.Time) (locrisk.PeriodUsage, error) {
	u := locrisk.NewPeriodUsage(locrisk.Account{}, now)
	var row struct {
		Quota int `db:"monthly_quota"`
		locrisk.UsageCounters
	}
	err := s.db.GetContext(ctx, &row, periodUsageQuery, accountID, u.Start, u.End)
	if err := sqlrow.Got(err, "account "+accountID); err != nil {
		return locrisk.PeriodUsage{}, err
	}
	u.Limit = row.Quota
	u.SetCounts(row.UsageCounters)
	return u, nil
}

// periodUsageQuery reads the account's quota and sums the period's hours
// [$2, $3) of usage_hourly, at most 744 hours times 3 buckets whatever the
// number of jobs, and counts in the same statement, so the same snapshot,
// the period's jobs processing now, and the period's quota counter
// (quota_usage, which watch item re-scores do not add to): usage_hourly
// counts queued and
// processing together as open (a claim changes no counter), and the
// processing jobs are as few as the workers, in partial indexes that hold
// only them (report_jobs_processing, report_jobs_leases). No row: no such
// account.
const periodUsageQuery = `SELECT a.monthly_quota, COALESCE(u.open, 0) AS open, COALESCE(u.completed, 0) AS completed,
		COALESCE(u.failed, 0) AS failed,
		(SELECT COUNT(*) FROM report_jobs
			WHERE account_id = $1 AND status = 'processing' AND created_utc >= $2 AND created_utc < $3) AS processing,
		(SELECT COALESCE(MAX(report_jobs), 0) FROM quota_usage WHERE account_id = $1 AND period_start_utc = $2) AS charged
	FROM accounts a CROSS JOIN LATERAL (SELECT SUM(open) AS open, SUM(completed) AS completed, SUM(failed) AS failed
		FROM usage_hourly WHERE account_id = $1 AND hour >= $2 AND hour < $3) u
	WHERE a.id = $1`
