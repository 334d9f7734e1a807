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

// ClaimJob takes the next runnable job for owner until now+lease: first a
// job whose lease expired (the longest expired first), else the accounts
// take turns: the account with runnable work whose last claim is the
// oldest (never served first) gets its oldest runnable job. The row is
// locked FOR UPDATE SKIP LOCKED, so claimers on any node never take the
// same job and never wait for each other.
func (s *Store) ClaimJob(ctx context.Context, owner string, lease time.Duration, now time.Time) (locrisk.Job, bool, error) {
	if err := locrisk.CheckJobClaim(owner, lease); err != nil {
		return locrisk.Job{}, false, err
	}
	now = ms(now)
	var job locrisk.Job
	found := false
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		found = false
		// A claim need not wait for the disk: if the database lost its
		// commit in a crash, the job is simply still queued (or under its
		// older lease) and runs again, and the completion, which does wait,
		// finds the claim gone and records nothing (ErrLeaseLost). Without
		// the wait, the claims of one account, which all stamp its turn
		// row, no longer queue behind one flush each.
		if _, err := tx.ExecContext(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
			return err
		}
		var id string
		reclaimed := true
		err := tx.GetContext(ctx, &id, `SELECT id FROM report_jobs
			WHERE status = 'processing' AND lease_expires_utc < $1
			ORDER BY lease_expires_utc, id LIMIT 1 FOR UPDATE SKIP LOCKED`, now)
		if errors.Is(err, sql.ErrNoRows) {
			reclaimed = false
			id, err = pickByTurns(ctx, tx, now)
		}
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		var r jobRow
		if err := tx.GetContext(ctx, &r, `UPDATE report_jobs SET status = 'processing', lease_owner = $1,
			lease_expires_utc = $2, attempts = attempts + 1, updated_utc = $3 WHERE id = $4 RETURNING `+jobColumns,
			owner, ms(now.Add(lease)), now, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO job_queue_accounts (account_id, last_claim) VALUES ($1, nextval('job_claims'))
			ON CONFLICT (account_id) DO UPDATE SET last_claim = excluded.last_claim`, r.AccountID); err != nil {
			return fmt.Errorf("record the account's turn: %w", err)
		}
		job, found = r.job(), true
		job.Reclaimed = reclaimed
		return nil
	})
	if err != nil {
		return locrisk.Job{}, false, fmt.Errorf("claim job: %w", err)
	}
	return job, found, nil
}

// waitingAccounts lists the accounts with a runnable queued job, the one
// whose last claim is the oldest first (never served first). It walks
// the distinct accounts of the queued jobs' index one seek at a time
// (a recursive query), so it costs a few index reads per waiting account
// however many jobs are queued.
const waitingAccounts = `WITH RECURSIVE accounts AS (
		(SELECT account_id FROM report_jobs WHERE status = 'queued' ORDER BY account_id LIMIT 1)
		UNION ALL
		SELECT (SELECT j.account_id FROM report_jobs j WHERE j.status = 'queued' AND j.account_id > a.account_id
			ORDER BY j.account_id LIMIT 1)
		FROM accounts a WHERE a.account_id IS NOT NULL)
	SELECT a.account_id FROM accounts a LEFT JOIN job_queue_accounts q ON q.account_id = a.account_id
	WHERE a.account_id IS NOT NULL
	  AND EXISTS (SELECT 1 FROM report_jobs j WHERE j.status = 'queued' AND j.account_id = a.account_id AND j.run_after_utc <= $1)
	ORDER BY COALESCE(q.last_claim, 0), a.account_id`

// pickByTurns locks the oldest runnable job of the first waiting account
// (in turn order) that has one not locked by another claim; sql.ErrNoRows
// when there is none.
func pickByTurns(ctx context.Context, tx *sqlx.Tx, now time.Time) (string, error) {
	var accounts []string
	if err := tx.SelectContext(ctx, &accounts, waitingAccounts, now); err != nil {
		return "", err
	}
	for _, account := range accounts {
		var id string
		err := tx.GetContext(ctx, &id, `SELECT id FROM report_jobs
			WHERE status = 'queued' AND account_id = $1 AND run_after_utc <= $2
			ORDER BY run_after_utc, created_utc, id LIMIT 1 FOR UPDATE SKIP LOCKED`, account, now)
		if errors.Is(err, sql.ErrNoRows) {
			continue // its runnable jobs are being claimed by others
		}
		return id, err
	}
	return "", sql.ErrNoRows
}

// CompleteJob stores the report and marks the job completed, with the
// JobFinalHooks, in one transaction, if owner still holds the job.
func (s *Store) CompleteJob(ctx context.Context, jobID, owner string, rep locrisk.Report, now time.Time) (locrisk.Job, error) {
	now = ms(now)
	if rep.ID == "" {
		rep.ID = ids.NewReportID()
	}
	if rep.GeneratedUTC.IsZero() {
		rep.GeneratedUTC = now
	}
	codec, body := s.codec.Encode(nil, rep.Body)
	var overall sql.NullInt64
	var level sql.NullString
	var modules sql.NullString
	if sc := rep.Scores; sc != nil {
		overall, level = sql.NullInt64{Int64: int64(sc.Overall), Valid: true}, sql.NullString{String: sc.RiskLevel, Valid: true}
		m, err := sc.ModulesJSON()
		if err != nil {
			return locrisk.Job{}, err
		}
		modules = sql.NullString{String: m, Valid: true}
	}
	var job locrisk.Job
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		var r jobRow
		err := tx.GetContext(ctx, &r, `UPDATE report_jobs SET status = 'completed', report_id = $1,
			completed_utc = $2, updated_utc = $2, lease_owner = NULL, lease_expires_utc = NULL,
			error_code = NULL, error_message = NULL, error_transient = NULL
			WHERE id = $3 AND status = 'processing' AND lease_owner = $4 RETURNING `+jobColumns, rep.ID, now, jobID, owner)
		if errors.Is(err, sql.ErrNoRows) {
			return locrisk.ErrLeaseLost
		}
		if err != nil {
			return err
		}
		job = r.job()
		if _, err := tx.ExecContext(ctx, `INSERT INTO reports
			(id, job_id, account_id, generated_utc, data_version, body, body_codec, overall_score, risk_level, module_scores)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			rep.ID, job.ID, job.AccountID, ms(rep.GeneratedUTC), rep.DataVersion, body, codec, overall, level, modules); err != nil {
			return fmt.Errorf("insert report: %w", err)
		}
		rep.JobID, rep.AccountID = job.ID, job.AccountID
		return locrisk.FinishJob(ctx, finalOps{txOps{tx}, s}, job, &rep, s.hooks)
	})
	if err != nil {
		return locrisk.Job{}, fmt.Errorf("complete job %s: %w", jobID, err)
	}
	return job, nil
}

// FailJob marks the job failed, with the JobFinalHooks, if owner still
// holds it.
func (s *Store) FailJob(ctx context.Context, jobID, owner, code, msg string, transient bool, now time.Time) (locrisk.Job, error) {
	now = ms(now)
	var job locrisk.Job
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		var r jobRow
		err := tx.GetContext(ctx, &r, `UPDATE report_jobs SET status = 'failed',
			error_code = $1, error_message = $2, error_transient = $3,
			completed_utc = $4, updated_utc = $4, lease_owner = NULL, lease_expires_utc = NULL
			WHERE id = $5 AND status = 'processing' AND lease_owner = $6 RETURNING `+jobColumns,
			code, msg, transient, now, jobID, owner)
		if errors.Is(err, sql.ErrNoRows) {
			return locrisk.ErrLeaseLost
		}
		if err != nil {
			return err
		}
		job = r.job()
		return locrisk.FinishJob(ctx, finalOps{txOps{tx}, s}, job, nil, s.hooks)
	})
	if err != nil {
		return locrisk.Job{}, fmt.Errorf("fail job %s: %w", jobID, err)
	}
	return job, nil
}

// RetryLater puts a held job back, runnable from runAfter, keeping the
// error for operators.
func (s *Store) RetryLater(ctx context.Context, jobID, owner string, runAfter time.Time, code, msg string, now time.Time) error {
	return s.requeue(ctx, jobID, owner, now, `run_after_utc = $4, error_code = $5, error_message = $6, error_transient = true`,
		ms(runAfter), code, msg)
}

// ReleaseJob hands a held job back without counting the attempt.
func (s *Store) ReleaseJob(ctx context.Context, jobID, owner string, now time.Time) error {
	return s.requeue(ctx, jobID, owner, now, `run_after_utc = $3, attempts = GREATEST(attempts - 1, 0)`)
}

// requeue sets the job owner holds queued again, with set: its
// placeholders are $3 for now and $4 on for setArgs.
func (s *Store) requeue(ctx context.Context, jobID, owner string, now time.Time, set string, setArgs ...any) error {
	res, err := s.db.ExecContext(ctx, `UPDATE report_jobs SET status = 'queued', lease_owner = NULL, lease_expires_utc = NULL, `+
		set+`, updated_utc = $3 WHERE id = $1 AND status = 'processing' AND lease_owner = $2`,
		append([]any{jobID, owner, ms(now)}, setArgs...)...)
	if err != nil {
		return fmt.Errorf("requeue job %s: %w", jobID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("requeue job %s: %w", jobID, err)
	} else if n == 0 {
		return fmt.Errorf("requeue job %s: %w", jobID, locrisk.ErrLeaseLost)
	}
	return nil
}
