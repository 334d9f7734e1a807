package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk/internal/ids"
)

// IdempotencyTTL is how long an idempotency key is remembered.
const IdempotencyTTL = 24 * time.Hour

// Idempotency kinds (idempotency_keys.kind).
const (
	kindReportJob = "report_job"
	kindBatch     = "batch"
)

type jobRow struct {
	ID              string         `db:"id"`
	AccountID       string         `db:"account_id"`
	BatchID         sql.NullString `db:"batch_id"`
	Bucket          string         `db:"bucket"`
	Latitude        float64        `db:"latitude"`
	Longitude       float64        `db:"longitude"`
	Status          string         `db:"status"`
	Attempts        int            `db:"attempts"`
	ErrorCode       sql.NullString `db:"error_code"`
	ErrorMessage    sql.NullString `db:"error_message"`
	ErrorTransient  sql.NullBool   `db:"error_transient"`
	ReportID        sql.NullString `db:"report_id"`
	RunAfterUTC     string         `db:"run_after_utc"`
	LeaseOwner      sql.NullString `db:"lease_owner"`
	LeaseExpiresUTC sql.NullString `db:"lease_expires_utc"`
	CreatedUTC      string         `db:"created_utc"`
	UpdatedUTC      string         `db:"updated_utc"`
	CompletedUTC    sql.NullString `db:"completed_utc"`
}

const jobColumns = `id, account_id, batch_id, bucket, latitude, longitude, status, attempts,
	error_code, error_message, error_transient, report_id, run_after_utc, lease_owner,
	lease_expires_utc, created_utc, updated_utc, completed_utc`

func (r jobRow) job() (Job, error) {
	j := Job{
		ID: r.ID, AccountID: r.AccountID, BatchID: strPtr(r.BatchID), Bucket: r.Bucket,
		Latitude: r.Latitude, Longitude: r.Longitude, Status: r.Status, Attempts: r.Attempts,
		ErrorCode: strPtr(r.ErrorCode), ErrorMessage: strPtr(r.ErrorMessage), ReportID: strPtr(r.ReportID),
	}
	if r.ErrorTransient.Valid {
		b := r.ErrorTransient.Bool
		j.ErrorTransient = &b
	}
	var err error
	if j.RunAfterUTC, err = ParseTime(r.RunAfterUTC); err != nil {
		return Job{}, fmt.Errorf("job %s: %w", r.ID, err)
	}
	if j.CreatedUTC, err = ParseTime(r.CreatedUTC); err != nil {
		return Job{}, fmt.Errorf("job %s: %w", r.ID, err)
	}
	if j.UpdatedUTC, err = ParseTime(r.UpdatedUTC); err != nil {
		return Job{}, fmt.Errorf("job %s: %w", r.ID, err)
	}
	if j.CompletedUTC, err = parseNullTime(r.CompletedUTC); err != nil {
		return Job{}, fmt.Errorf("job %s: %w", r.ID, err)
	}
	return j, nil
}

// scanJobs turns rows into jobs.
func scanJobs(rows []jobRow) ([]Job, error) {
	out := make([]Job, 0, len(rows))
	for _, r := range rows {
		j, err := r.job()
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// getJobTx reads one job by id (any account) with q.
func getJobByID(ctx context.Context, q queryer, jobID string) (Job, error) {
	var r jobRow
	err := q.GetContext(ctx, &r, `SELECT `+jobColumns+` FROM report_jobs WHERE id = ?`, jobID)
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, fmt.Errorf("job %s: %w", jobID, ErrNotFound)
	}
	if err != nil {
		return Job{}, fmt.Errorf("get job %s: %w", jobID, err)
	}
	return r.job()
}

// CreateJob checks the idempotency key, then the monthly quota, then inserts
// the job (queued, runnable at now) and remembers the key, all in one
// immediate transaction: concurrent requests with one key create one job,
// and concurrent creates can never overshoot the quota.
//
// Same key and same RequestHash within IdempotencyTTL: the original job as
// it stands now, replayed=true, no quota used. Same key, other hash:
// ErrIdempotencyConflict. A key older than IdempotencyTTL is forgotten (its
// row replaced). Over quota: *QuotaError (errors.Is ErrQuotaExceeded).
// Unknown account: ErrNotFound.
func (s *Store) CreateJob(ctx context.Context, j NewJob, now time.Time) (job Job, replayed bool, err error) {
	if j.Bucket == "" {
		j.Bucket = BucketAPI
	}
	if j.Bucket != BucketAPI && j.Bucket != BucketBulk && j.Bucket != BucketManual {
		return Job{}, false, fmt.Errorf("%w: unknown bucket %q", ErrInvalid, j.Bucket)
	}
	if j.IdempotencyKey != "" && j.RequestHash == "" {
		return Job{}, false, fmt.Errorf("%w: an idempotency key needs a request hash", ErrInvalid)
	}
	now = truncMs(now)
	create := &jobCreation{
		job: Job{
			ID: ids.New(ids.Job), AccountID: j.AccountID, Bucket: j.Bucket,
			Latitude: j.Latitude, Longitude: j.Longitude, Status: StatusQueued,
			RunAfterUTC: now, CreatedUTC: now, UpdatedUTC: now,
		},
		key: j.IdempotencyKey, hash: j.RequestHash,
	}
	// The group may make this job together with the others created beside
	// it (createJobsTogether) instead of calling this function, with the
	// same outcome: the new job, not replayed.
	job = create.job
	err = s.withTx(ctx, create, func(ctx context.Context, tx *sqlx.Tx) error {
		if create.key != "" {
			id, found, err := takeIdempotencyKey(ctx, tx, create.job.AccountID, kindReportJob, create.key, create.hash, create.job.ID, now)
			if err != nil {
				return err
			}
			if found {
				job, err = getJobByID(ctx, tx, id)
				replayed = true
				return err
			}
		}
		if err := useQuota(ctx, tx, create.job.AccountID, 1, now); err != nil {
			return err
		}
		return insertJob(ctx, tx, create.job)
	})
	if err != nil {
		return Job{}, false, fmt.Errorf("create job: %w", err)
	}
	return job, replayed, nil
}

// jobCreation is the job one CreateJob call makes, with its idempotency
// key, for createJobsTogether.
type jobCreation struct {
	job       Job
	key, hash string // the idempotency key and its request's hash; "" without a key
}

// rowsPerInsert bounds the rows of one multi-row INSERT of
// createJobsTogether, so that its statements come in a few lengths that
// the statement cache keeps prepared.
const rowsPerInsert = 16

// createJobsTogether makes the jobs of CreateJob calls queued one after the
// other in a group with a few statements: their idempotency keys in one
// insert, each account's quota in one increment, their jobs in one insert
// (rowsPerInsert rows at a time). It reports whether it made all of them,
// and does so only where running their functions one after the other
// would have made every one: each key new and distinct from the others,
// each account's quota enough for all of its jobs. Otherwise, or on any
// error, it returns false, and its caller undoes what it wrote and runs
// the functions one at a time, each to its own outcome.
func createJobsTogether(ctx context.Context, tx *sqlx.Tx, cs []*jobCreation) bool {
	type keyID struct{ account, key string }
	type monthOf struct {
		account string
		month   time.Time
	}
	keys := make(map[keyID]bool, len(cs))
	quota := map[monthOf]int{} // jobs per account and month
	var keyArgs, jobArgs []any
	for _, c := range cs {
		j := c.job
		if c.key != "" {
			k := keyID{j.AccountID, c.key}
			if keys[k] {
				return false // the second would replay the first
			}
			keys[k] = true
			keyArgs = appendKeyRow(keyArgs, j.AccountID, kindReportJob, c.key, c.hash, j.ID, j.CreatedUTC)
		}
		quota[monthOf{j.AccountID, MonthStart(j.CreatedUTC)}]++
		jobArgs = appendJobRow(jobArgs, j)
	}
	if len(keys) > 0 {
		n, err := insertRows(ctx, tx, keyInsertHead, keyInsertRow, keyInsertTail, keyInsertArgs, keyArgs)
		if err != nil || n != int64(len(keys)) {
			return false // a key seen before (replay, conflict or expired), or an unknown account
		}
	}
	for m, n := range quota {
		if err := useQuota(ctx, tx, m.account, n, m.month); err != nil {
			return false // some of them would be refused
		}
	}
	n, err := insertRows(ctx, tx, jobInsertHead, jobInsertRow, "", jobInsertArgs, jobArgs)
	return err == nil && n == int64(len(cs))
}

// The inserts of job rows and idempotency key rows, made one row at a time
// (insertJob, takeIdempotencyKey) or many (createJobsTogether) by
// insertRows, with the arguments of each row from appendJobRow and
// appendKeyRow.
const (
	jobInsertHead = `INSERT INTO report_jobs
		(id, account_id, batch_id, bucket, latitude, longitude, status, attempts, run_after_utc, created_utc, updated_utc) VALUES `
	jobInsertRow  = `(?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`
	jobInsertArgs = 10
	keyInsertHead = `INSERT INTO idempotency_keys (account_id, kind, key, request_hash, resource_id, created_utc) VALUES `
	keyInsertRow  = `(?, ?, ?, ?, ?, ?)`
	keyInsertTail = ` ON CONFLICT (account_id, kind, key) DO NOTHING`
	keyInsertArgs = 6
)

// appendJobRow appends the arguments of j's row (jobInsertRow) to args.
func appendJobRow(args []any, j Job) []any {
	return append(args, j.ID, j.AccountID, nullString(j.BatchID), j.Bucket, j.Latitude, j.Longitude, j.Status,
		FormatTime(j.RunAfterUTC), FormatTime(j.CreatedUTC), FormatTime(j.UpdatedUTC))
}

// appendKeyRow appends the arguments of a key's row (keyInsertRow) to args.
func appendKeyRow(args []any, accountID, kind, key, hash, resourceID string, now time.Time) []any {
	return append(args, accountID, kind, key, hash, resourceID, FormatTime(now))
}

// insertRows runs head, then one row per perRow arguments of args, then
// tail, rowsPerInsert rows at a time, and returns the rows inserted.
func insertRows(ctx context.Context, tx *sqlx.Tx, head, row, tail string, perRow int, args []any) (int64, error) {
	var total int64
	for len(args) > 0 {
		n := min(len(args)/perRow, rowsPerInsert)
		q := head + strings.Repeat(row+", ", n-1) + row + tail
		res, err := tx.ExecContext(ctx, q, args[:n*perRow]...)
		if err != nil {
			return total, err
		}
		k, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += k
		args = args[n*perRow:]
	}
	return total, nil
}

// insertJob writes a new job row (queued, no attempts).
func insertJob(ctx context.Context, tx *sqlx.Tx, j Job) error {
	if _, err := insertRows(ctx, tx, jobInsertHead, jobInsertRow, "", jobInsertArgs, appendJobRow(nil, j)); err != nil {
		return fmt.Errorf("insert job: %w", err)
	}
	return nil
}

// takeIdempotencyKey records key (with hash) as making resourceID, the
// resource the caller is about to create, unless the key is live: then
// found is true with the resource it made, or the error is
// ErrIdempotencyConflict when hash differs. An expired key is taken over.
// Must run inside the write transaction that creates the resource, so
// that the key and the resource commit or roll back together.
//
// In the common case, a new key, this is one statement; a live key
// costs a second read, and an expired one an update.
func takeIdempotencyKey(ctx context.Context, tx *sqlx.Tx, accountID, kind, key, hash, resourceID string, now time.Time) (string, bool, error) {
	n, err := insertRows(ctx, tx, keyInsertHead, keyInsertRow, keyInsertTail, keyInsertArgs,
		appendKeyRow(nil, accountID, kind, key, hash, resourceID, now))
	if err != nil {
		// An unknown account fails the foreign key: say so plainly.
		if _, aerr := getAccount(ctx, tx, accountID); aerr != nil {
			return "", false, aerr
		}
		return "", false, fmt.Errorf("remember idempotency key: %w", err)
	}
	if n == 1 {
		return "", false, nil
	}
	var row struct {
		Hash       string `db:"request_hash"`
		ResourceID string `db:"resource_id"`
		CreatedUTC string `db:"created_utc"`
	}
	err = tx.GetContext(ctx, &row, `SELECT request_hash, resource_id, created_utc FROM idempotency_keys
		WHERE account_id = ? AND kind = ? AND key = ?`, accountID, kind, key)
	if err != nil {
		return "", false, fmt.Errorf("idempotency lookup: %w", err)
	}
	created, err := ParseTime(row.CreatedUTC)
	if err != nil {
		return "", false, err
	}
	if !created.After(now.Add(-IdempotencyTTL)) {
		if _, err := tx.ExecContext(ctx, `UPDATE idempotency_keys SET request_hash = ?, resource_id = ?, created_utc = ?
			WHERE account_id = ? AND kind = ? AND key = ?`, hash, resourceID, FormatTime(now), accountID, kind, key); err != nil {
			return "", false, fmt.Errorf("take over expired idempotency key: %w", err)
		}
		return "", false, nil
	}
	if row.Hash != hash {
		return "", false, ErrIdempotencyConflict
	}
	return row.ResourceID, true, nil
}

// quotaUsage returns the account's monthly quota and the jobs it created in
// now's calendar month (UTC), every bucket included.
func quotaUsage(ctx context.Context, q queryer, accountID string, now time.Time) (limit, used int, err error) {
	a, err := getAccount(ctx, q, accountID)
	if err != nil {
		return 0, 0, err
	}
	err = q.GetContext(ctx, &used, `SELECT COALESCE(MAX(report_jobs), 0) FROM quota_usage
		WHERE account_id = ? AND period_start_utc = ?`, accountID, FormatTime(MonthStart(now)))
	if err != nil {
		return 0, 0, fmt.Errorf("read quota usage: %w", err)
	}
	return a.MonthlyQuota, used, nil
}

// useQuota takes n jobs from the account's quota for now's month, or fails
// with *QuotaError when they do not fit. Call it inside the write
// transaction that inserts the n jobs: the counter and the jobs then commit
// or roll back together, and concurrent requests cannot overshoot.
func useQuota(ctx context.Context, tx *sqlx.Tx, accountID string, n int, now time.Time) error {
	// One statement counts the jobs and reads the limit, since this runs
	// while the write lock is held.
	var r struct {
		Used  int           `db:"report_jobs"`
		Limit sql.NullInt64 `db:"monthly_quota"`
	}
	err := tx.GetContext(ctx, &r, `INSERT INTO quota_usage (account_id, period_start_utc, report_jobs) VALUES (?, ?, ?)
		ON CONFLICT (account_id, period_start_utc) DO UPDATE SET report_jobs = report_jobs + excluded.report_jobs
		RETURNING report_jobs, (SELECT monthly_quota FROM accounts WHERE accounts.id = quota_usage.account_id) AS monthly_quota`,
		accountID, FormatTime(MonthStart(now)), n)
	if err != nil || !r.Limit.Valid {
		// An unknown account fails the foreign key: say so plainly.
		if _, aerr := getAccount(ctx, tx, accountID); aerr != nil {
			return aerr
		}
		return fmt.Errorf("count quota usage: %w", err)
	}
	if limit := int(r.Limit.Int64); r.Used > limit {
		// The caller's transaction rolls back, taking the increment with it.
		return &QuotaError{Limit: limit, Used: r.Used - n, ResetsAt: NextMonthStart(now)}
	}
	return nil
}

// GetJob returns the account's job; another account's job is ErrNotFound.
func (s *Store) GetJob(ctx context.Context, accountID, jobID string) (Job, error) {
	var r jobRow
	err := s.db.GetContext(ctx, &r, `SELECT `+jobColumns+` FROM report_jobs WHERE id = ? AND account_id = ?`, jobID, accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, fmt.Errorf("job %s: %w", jobID, ErrNotFound)
	}
	if err != nil {
		return Job{}, fmt.Errorf("get job %s: %w", jobID, err)
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
func (s *Store) ListJobs(ctx context.Context, accountID, status string, limit int, cursor string) ([]Job, string, error) {
	if status != "" && !ValidStatus(status) {
		return nil, "", fmt.Errorf("%w: unknown status %q", ErrInvalid, status)
	}
	q, args := listJobsQuery(accountID, status)
	pg, err := newPage(limit, cursor, ids.Job)
	if err != nil {
		return nil, "", err
	}
	q, args = pg.query(q, args)
	var rows []jobRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	rows, next := pageRows(pg, rows, func(r jobRow) (string, string) { return r.CreatedUTC, r.ID })
	jobs, err := scanJobs(rows)
	if err != nil {
		return nil, "", err
	}
	return jobs, next, nil
}

// RetryJob puts the account's failed job back in the queue when its error
// was transient; anything else is ErrNotRetryable (ErrNotFound for an
// unknown or foreign job). No quota is used; attempts keep counting.
func (s *Store) RetryJob(ctx context.Context, accountID, jobID string, now time.Time) (Job, error) {
	now = truncMs(now)
	var job Job
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var r jobRow
		err := tx.GetContext(ctx, &r, `UPDATE report_jobs SET status = 'queued', run_after_utc = ?, updated_utc = ?,
			error_code = NULL, error_message = NULL, error_transient = NULL, completed_utc = NULL,
			lease_owner = NULL, lease_expires_utc = NULL
			WHERE id = ? AND account_id = ? AND status = 'failed' AND error_transient = 1
			RETURNING `+jobColumns, FormatTime(now), FormatTime(now), jobID, accountID)
		if errors.Is(err, sql.ErrNoRows) {
			var exists int
			if err := tx.GetContext(ctx, &exists, `SELECT COUNT(*) FROM report_jobs WHERE id = ? AND account_id = ?`, jobID, accountID); err != nil {
				return err
			}
			if exists == 0 {
				return ErrNotFound
			}
			return ErrNotRetryable
		}
		if err != nil {
			return err
		}
		if job, err = r.job(); err != nil {
			return err
		}
		if job.BatchID != nil {
			// The batch is processing again until this job ends again.
			_, err := syncBatchStatus(ctx, tx, *job.BatchID)
			return err
		}
		return nil
	})
	if err != nil {
		return Job{}, fmt.Errorf("retry job %s: %w", jobID, err)
	}
	return job, nil
}

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
func (s *Store) ClaimJob(ctx context.Context, owner string, lease time.Duration, now time.Time) (Job, bool, error) {
	if owner == "" || lease <= 0 {
		return Job{}, false, fmt.Errorf("%w: claim needs an owner and a positive lease", ErrInvalid)
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
		return Job{}, false, fmt.Errorf("claim job: %w", err)
	}
	if runnable == 0 {
		return Job{}, false, nil
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
		return Job{}, false, nil
	}
	if err != nil {
		return Job{}, false, fmt.Errorf("claim job: %w", err)
	}
	j, err := r.job()
	if err != nil {
		return Job{}, false, err
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

// CompleteJob stores the job's report and marks the job completed, in one
// transaction, if owner still holds the job; otherwise ErrLeaseLost and
// nothing is written. r.ID defaults to a new UUID, r.GeneratedUTC to now;
// r.JobID and r.AccountID are taken from the job. reports.job_id is unique,
// so a job can never get two reports. The OnJobFinal hooks run inside the
// transaction.
func (s *Store) CompleteJob(ctx context.Context, jobID, owner string, r Report, now time.Time) (Job, error) {
	now = truncMs(now)
	if r.ID == "" {
		r.ID = ids.NewReportID()
	}
	if r.GeneratedUTC.IsZero() {
		r.GeneratedUTC = now
	}
	var job Job
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var row jobRow
		err := tx.GetContext(ctx, &row, `UPDATE report_jobs SET status = 'completed', report_id = ?,
			completed_utc = ?, updated_utc = ?, lease_owner = NULL, lease_expires_utc = NULL,
			error_code = NULL, error_message = NULL, error_transient = NULL
			WHERE id = ? AND status = 'processing' AND lease_owner = ?
			RETURNING `+jobColumns, r.ID, FormatTime(now), FormatTime(now), jobID, owner)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrLeaseLost
		}
		if err != nil {
			return err
		}
		if job, err = row.job(); err != nil {
			return err
		}
		r.JobID, r.AccountID = job.ID, job.AccountID
		if err := insertReport(ctx, tx, r); err != nil {
			return err
		}
		return s.afterJobFinal(ctx, tx, job)
	})
	if err != nil {
		return Job{}, fmt.Errorf("complete job %s: %w", jobID, err)
	}
	return job, nil
}

// FailJob marks the job failed with an error, if owner still holds it
// (else ErrLeaseLost). The OnJobFinal hooks run inside the transaction.
func (s *Store) FailJob(ctx context.Context, jobID, owner, code, msg string, transient bool, now time.Time) (Job, error) {
	now = truncMs(now)
	var job Job
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var row jobRow
		err := tx.GetContext(ctx, &row, `UPDATE report_jobs SET status = 'failed',
			error_code = ?, error_message = ?, error_transient = ?,
			completed_utc = ?, updated_utc = ?, lease_owner = NULL, lease_expires_utc = NULL
			WHERE id = ? AND status = 'processing' AND lease_owner = ?
			RETURNING `+jobColumns, code, msg, transient, FormatTime(now), FormatTime(now), jobID, owner)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrLeaseLost
		}
		if err != nil {
			return err
		}
		if job, err = row.job(); err != nil {
			return err
		}
		return s.afterJobFinal(ctx, tx, job)
	})
	if err != nil {
		return Job{}, fmt.Errorf("fail job %s: %w", jobID, err)
	}
	return job, nil
}

// afterJobFinal is the one place a job's final transition reaches beyond
// the job row: it brings a batch job's batch status up to date and runs
// the OnJobFinal hooks (webhook outbox) inside the transition's transaction,
// telling them (Tx.CompletedBatch) when this transition completed the
// job's batch.
func (s *Store) afterJobFinal(ctx context.Context, tx *sqlx.Tx, job Job) error {
	ftx := finalTx{tx: tx}
	if job.BatchID != nil {
		completed, err := syncBatchStatus(ctx, tx, *job.BatchID)
		if err != nil {
			return fmt.Errorf("job %s: %w", job.ID, err)
		}
		if completed {
			b, err := getBatch(ctx, tx, job.AccountID, *job.BatchID)
			if err != nil {
				return fmt.Errorf("job %s: %w", job.ID, err)
			}
			ftx.completedBatch = &b
		}
	}
	for _, h := range s.onFinal {
		if err := h(ctx, ftx, job); err != nil {
			return fmt.Errorf("job %s final hook: %w", job.ID, err)
		}
	}
	return nil
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
			return ErrLeaseLost
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("requeue job %s: %w", jobID, err)
	}
	return nil
}
