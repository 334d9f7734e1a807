package sqlite

// The job queue the scheduler works (internal/jobs): the claim, with a
// lease and accounts taking turns; the final transitions (completed,
// failed), with the JobFinalHooks in their transaction; and handing a held
// job back.

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

// ClaimJob takes the next runnable job for owner: a queued job whose
// run_after has come, or a processing job whose lease has expired (its
// worker died). It becomes processing with owner's lease until now+lease,
// and its attempts count goes up by one. ok is false when nothing is
// runnable. One UPDATE takes the job inside the write transaction that
// picked it, so two workers never claim the same one.
//
// Which job (docs/operations.md, "Limits and defaults"): first a job whose lease
// has expired, the longest expired first; otherwise the accounts take
// turns. The account with runnable work whose last claim is the oldest
// (one never served before comes first) gets its oldest runnable job, by
// run_after and then creation. So a backlog in one account delays another
// account's job by at most one claim per account waiting, not by the
// backlog.
//
// Every step reads the first entries of an index (migration 004): the
// claim costs the same at one job or a million queued. It grows only with
// the accounts that have queued work but none runnable yet (jobs waiting
// out a retry backoff), which are few.
func (s *Store) ClaimJob(ctx context.Context, owner string, lease time.Duration, now time.Time) (locrisk.Job, bool, error) {
	if err := locrisk.CheckJobClaim(owner, lease); err != nil {
		return locrisk.Job{}, false, err
	}
	now = truncMs(now)
	nowS := FormatTime(now)
	// Look before taking the write lock: idle workers poll often, and a
	// read runs beside the writers where an empty UPDATE would queue
	// behind them and hold them up. The queued half seeks each waiting
	// account's oldest entry (report_jobs_queued) until one is runnable,
	// one seek per account waiting out a retry backoff; the other half is
	// one seek (report_jobs_leases).
	var runnable int
	err := s.db.GetContext(ctx, &runnable, claimPrecheck, nowS, nowS)
	if err != nil {
		return locrisk.Job{}, false, fmt.Errorf("claim job: %w", err)
	}
	if runnable == 0 {
		return locrisk.Job{}, false, nil
	}
	var r jobRow
	reclaimed := false
	err = s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		id, err := pickJob(ctx, tx, nowS)
		if err != nil {
			return err
		}
		if id.expired {
			// The scheduler counts a takeover against the job.
			reclaimed = true
		}
		if err := tx.GetContext(ctx, &r, `UPDATE report_jobs
			SET status = 'processing', lease_owner = ?, lease_expires_utc = ?, attempts = attempts + 1, updated_utc = ?
			WHERE id = ?
			RETURNING `+jobColumns, owner, FormatTime(now.Add(lease)), nowS, id.id); err != nil {
			return err
		}
		return takeTurn(ctx, tx, r.AccountID)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.Job{}, false, nil
	}
	if err != nil {
		return locrisk.Job{}, false, fmt.Errorf("claim job: %w", err)
	}
	j, err := r.job()
	if err != nil {
		return locrisk.Job{}, false, err
	}
	j.Reclaimed = reclaimed
	return j, true, nil
}

// The claim's queries, one constant each so that TestClaimQueryPlans checks
// the very text ClaimJob runs. INDEXED BY pins the index each is written
// for. Left to its guesses (no ANALYZE runs) SQLite may take another
// index on status and sort; pinned, the plan cannot
// drift with statistics, and a missing index is an error instead of a
// silent full scan.
const (
	// claimPrecheck: is anything runnable? Both parameters are now. The
	// queued half looks at each waiting account's oldest entry, one seek
	// each, and stops at the first account with a runnable job.
	claimPrecheck = `SELECT EXISTS (SELECT 1 FROM job_queue_accounts q INDEXED BY job_queue_accounts_turns
			WHERE q.has_queued = 1 AND EXISTS (SELECT 1 FROM report_jobs j INDEXED BY report_jobs_queued
				WHERE j.status = 'queued' AND j.account_id = q.account_id AND j.run_after_utc <= ?1))
		OR EXISTS (SELECT 1 FROM report_jobs INDEXED BY report_jobs_leases
			WHERE status = 'processing' AND lease_expires_utc < ?2)`
	// claimExpired: the job whose lease expired first. ? is now.
	claimExpired = `SELECT id FROM report_jobs INDEXED BY report_jobs_leases
		WHERE status = 'processing' AND lease_expires_utc < ?
		ORDER BY lease_expires_utc LIMIT 1`
	// claimNextTurn: the oldest runnable job of the waiting account whose
	// last claim is the oldest, walking the accounts in turn order and
	// stopping at the first with a runnable job. ?1 is now.
	claimNextTurn = `SELECT (SELECT j.id FROM report_jobs j INDEXED BY report_jobs_queued
			WHERE j.status = 'queued' AND j.account_id = q.account_id AND j.run_after_utc <= ?1
			ORDER BY j.run_after_utc, j.created_utc LIMIT 1) AS job_id
		FROM job_queue_accounts q
		WHERE q.has_queued = 1 AND job_id IS NOT NULL
		ORDER BY q.last_claim LIMIT 1`
	// claimTakeTurn: the account's claim becomes the newest. Whether it
	// still waits (has_queued) the triggers of migration 004 keep. A
	// missing row (a takeover of a job queued before that migration, in an
	// account with nothing queued since) means nothing queued. ? is the
	// account.
	claimTakeTurn = `INSERT INTO job_queue_accounts (account_id, last_claim, has_queued)
		VALUES (?, (SELECT COALESCE(MAX(last_claim), 0) + 1 FROM job_queue_accounts), 0)
		ON CONFLICT (account_id) DO UPDATE SET last_claim = excluded.last_claim`
)

// pickedJob is the job a claim takes; expired when its lease ran out.
type pickedJob struct {
	id      string
	expired bool
}

// pickJob chooses the job to claim (see ClaimJob), inside the claim's
// write transaction; sql.ErrNoRows when nothing is runnable.
func pickJob(ctx context.Context, tx *sqlx.Tx, nowS string) (pickedJob, error) {
	var id string
	err := tx.GetContext(ctx, &id, claimExpired, nowS)
	if err == nil {
		return pickedJob{id: id, expired: true}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return pickedJob{}, err
	}
	if err := tx.GetContext(ctx, &id, claimNextTurn, nowS); err != nil {
		return pickedJob{}, err
	}
	return pickedJob{id: id}, nil
}

// takeTurn records a claim for the account in the turns, in the claim's
// transaction.
func takeTurn(ctx context.Context, tx *sqlx.Tx, accountID string) error {
	if _, err := tx.ExecContext(ctx, claimTakeTurn, accountID); err != nil {
		return fmt.Errorf("record the account's turn: %w", err)
	}
	return nil
}

// CompleteJob stores the job's report (its body compressed, its scores
// beside it: reports.go) and marks the job completed, in one transaction,
// if owner still holds the job; otherwise ErrLeaseLost and nothing is
// written. r.ID defaults to a new UUID, r.GeneratedUTC to now;
// r.JobID and r.AccountID are taken from the job. reports.job_id is unique,
// so a job can never get two reports. The OnJobFinal hooks run inside the
// transaction.
func (s *Store) CompleteJob(ctx context.Context, jobID, owner string, r locrisk.Report, now time.Time) (locrisk.Job, error) {
	now = truncMs(now)
	if r.ID == "" {
		r.ID = ids.NewReportID()
	}
	if r.GeneratedUTC.IsZero() {
		r.GeneratedUTC = now
	}
	// Compress the body here, in the worker's goroutine, not inside the
	// transaction, where it would hold up every writer of the group.
	stored, err := s.encodeReport(r)
	if err != nil {
		return locrisk.Job{}, fmt.Errorf("complete job %s: %w", jobID, err)
	}
	var job locrisk.Job
	err = s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var row jobRow
		err := tx.GetContext(ctx, &row, `UPDATE report_jobs SET status = 'completed', report_id = ?,
			completed_utc = ?, updated_utc = ?, lease_owner = NULL, lease_expires_utc = NULL,
			error_code = NULL, error_message = NULL, error_transient = NULL
			WHERE id = ? AND status = 'processing' AND lease_owner = ?
			RETURNING `+jobColumns, stored.ID, FormatTime(now), FormatTime(now), jobID, owner)
		if errors.Is(err, sql.ErrNoRows) {
			return locrisk.ErrLeaseLost
		}
		if err != nil {
			return err
		}
		if job, err = row.job(); err != nil {
			return err
		}
		stored.JobID, stored.AccountID = job.ID, job.AccountID
		if err := insertReport(ctx, tx, stored); err != nil {
			return err
		}
		return locrisk.FinishJob(ctx, finalOps{txOps{tx}, s}, job, &stored.Report, s.onFinal)
	})
	if err != nil {
		return locrisk.Job{}, fmt.Errorf("complete job %s: %w", jobID, err)
	}
	return job, nil
}

// FailJob marks the job failed with an error, if owner still holds it
// (else ErrLeaseLost). The OnJobFinal hooks run inside the transaction.
func (s *Store) FailJob(ctx context.Context, jobID, owner, code, msg string, transient bool, now time.Time) (locrisk.Job, error) {
	now = truncMs(now)
	var job locrisk.Job
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var row jobRow
		err := tx.GetContext(ctx, &row, `UPDATE report_jobs SET status = 'failed',
			error_code = ?, error_message = ?, error_transient = ?,
			completed_utc = ?, updated_utc = ?, lease_owner = NULL, lease_expires_utc = NULL
			WHERE id = ? AND status = 'processing' AND lease_owner = ?
			RETURNING `+jobColumns, code, msg, transient, FormatTime(now), FormatTime(now), jobID, owner)
		if errors.Is(err, sql.ErrNoRows) {
			return locrisk.ErrLeaseLost
		}
		if err != nil {
			return err
		}
		if job, err = row.job(); err != nil {
			return err
		}
		return locrisk.FinishJob(ctx, finalOps{txOps{tx}, s}, job, nil, s.onFinal)
	})
	if err != nil {
		return locrisk.Job{}, fmt.Errorf("fail job %s: %w", jobID, err)
	}
	return job, nil
}

// RetryLater puts a job owner holds back in the queue after a transient
// error, runnable from runAfter, keeping the error for operators; the
// attempt stays counted. ErrLeaseLost if owner no longer holds the job.
func (s *Store) RetryLater(ctx context.Context, jobID, owner string, runAfter time.Time, code, msg string, now time.Time) error {
	return s.requeue(ctx, jobID, owner, `run_after_utc = ?, error_code = ?, error_message = ?, error_transient = 1`,
		[]any{FormatTime(runAfter), code, msg}, now)
}

// ReleaseJob hands a job owner holds back to the queue without counting the
// attempt (graceful shutdown before the work finished). ErrLeaseLost if
// owner no longer holds it.
func (s *Store) ReleaseJob(ctx context.Context, jobID, owner string, now time.Time) error {
	return s.requeue(ctx, jobID, owner, `run_after_utc = ?, attempts = MAX(attempts - 1, 0)`,
		[]any{FormatTime(now)}, now)
}

func (s *Store) requeue(ctx context.Context, jobID, owner, set string, args []any, now time.Time) error {
	args = append(args, FormatTime(now), jobID, owner)
	// A transaction of its own (not a bare statement) so that it shares
	// the commit of the writes beside it (group.go).
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE report_jobs SET status = 'queued', lease_owner = NULL,
			lease_expires_utc = NULL, `+set+`, updated_utc = ?
			WHERE id = ? AND status = 'processing' AND lease_owner = ?`, args...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			return locrisk.ErrLeaseLost
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("requeue job %s: %w", jobID, err)
	}
	return nil
}
