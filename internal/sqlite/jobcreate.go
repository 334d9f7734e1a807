package sqlite

// Creating report jobs (CreateJob): the idempotency keys and the monthly
// quota, which CreateBatch (batches.go) shares, and how the group commit
// makes the jobs created together with a few statements
// (createJobsTogether).

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// IdempotencyTTL is how long an idempotency key is remembered
// (locrisk.IdempotencyTTL).
const IdempotencyTTL = locrisk.IdempotencyTTL

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
func (s *Store) CreateJob(ctx context.Context, j locrisk.NewJob, now time.Time) (job locrisk.Job, replayed bool, err error) {
	if j, err = j.Normalized(); err != nil {
		return locrisk.Job{}, false, err
	}
	now = truncMs(now)
	create := &jobCreation{job: j.Job(ids.New(ids.Job), now), key: j.IdempotencyKey, hash: j.RequestHash}
	// The group may make this job together with the others created beside
	// it (createJobsTogether) instead of calling this function, with the
	// same outcome: the new job, not replayed.
	job = create.job
	err = s.withTx(ctx, jobCreate, create, func(ctx context.Context, tx *sqlx.Tx) error {
		var err error
		job, replayed, err = locrisk.CreateJobIn(ctx, txOps{tx}, j, create.job, now)
		return err
	})
	if err != nil {
		return locrisk.Job{}, false, fmt.Errorf("create job: %w", err)
	}
	return job, replayed, nil
}

// jobCreation is the job one CreateJob call makes, with its idempotency
// key, for createJobsTogether.
type jobCreation struct {
	job       locrisk.Job
	key, hash string // the idempotency key and its request's hash; "" without a key
}

// jobCreate is CreateJob's kind of write (group.go, writeKind): the group
// makes the job creations queued one after the other together
// (createJobsTogether). Each one's arg is its *jobCreation.
var jobCreate = &writeKind{merge: func(ctx context.Context, tx *sqlx.Tx, args []any) bool {
	cs := make([]*jobCreation, len(args))
	for i, a := range args {
		cs[i] = a.(*jobCreation)
	}
	return createJobsTogether(ctx, tx, cs)
}}

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
			keyArgs = appendKeyRow(keyArgs, j.AccountID, locrisk.IdempotencyKindJob, c.key, c.hash, j.ID, j.CreatedUTC)
		}
		quota[monthOf{j.AccountID, locrisk.MonthStart(j.CreatedUTC)}]++
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
func appendJobRow(args []any, j locrisk.Job) []any {
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

// GetJob reads the job an earlier request with the same idempotency key
// made (locrisk.JobCreateOps).
func (t txOps) GetJob(ctx context.Context, jobID string) (locrisk.Job, error) {
	return getJobByID(ctx, t.tx, jobID)
}

// InsertJob writes the new job j (locrisk.JobCreateOps).
func (t txOps) InsertJob(ctx context.Context, j locrisk.Job) error { return insertJob(ctx, t.tx, j) }

// UseQuota is useQuota in the transaction (locrisk.QuotaUser).
func (t txOps) UseQuota(ctx context.Context, accountID string, n int, now time.Time) error {
	return useQuota(ctx, t.tx, accountID, n, now)
}

// insertJob writes a new job row (queued, no attempts).
func insertJob(ctx context.Context, tx *sqlx.Tx, j locrisk.Job) error {
	if _, err := insertRows(ctx, tx, jobInsertHead, jobInsertRow, "", jobInsertArgs, appendJobRow(nil, j)); err != nil {
		return fmt.Errorf("insert job: %w", err)
	}
	return nil
}

// TakeIdempotencyKey records key (with hash) as making resourceID, the
// resource the caller is about to create, unless the key is live: then
// found is true with the resource it made, or the error is
// ErrIdempotencyConflict when hash differs. An expired key is taken over
// (locrisk.KeyTaker).
// Must run inside the write transaction that creates the resource, so
// that the key and the resource commit or roll back together.
//
// In the common case, a new key, this is one statement; a live key
// costs a second read, and an expired one an update.
func (t txOps) TakeIdempotencyKey(ctx context.Context, accountID, kind, key, hash, resourceID string, now time.Time) (string, bool, error) {
	tx := t.tx
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
	replay, expired, err := locrisk.IdempotentReplay(row.Hash, row.ResourceID, created, hash, now)
	if !expired {
		return replay, err == nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE idempotency_keys SET request_hash = ?, resource_id = ?, created_utc = ?
		WHERE account_id = ? AND kind = ? AND key = ?`, hash, resourceID, FormatTime(now), accountID, kind, key); err != nil {
		return "", false, fmt.Errorf("take over expired idempotency key: %w", err)
	}
	return "", false, nil
}

// quotaUsage returns the account's monthly quota and the jobs it created in
// now's calendar month (UTC), every bucket included.
func quotaUsage(ctx context.Context, q queryer, accountID string, now time.Time) (limit, used int, err error) {
	a, err := getAccount(ctx, q, accountID)
	if err != nil {
		return 0, 0, err
	}
	err = q.GetContext(ctx, &used, `SELECT COALESCE(MAX(report_jobs), 0) FROM quota_usage
		WHERE account_id = ? AND period_start_utc = ?`, accountID, FormatTime(locrisk.MonthStart(now)))
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
		accountID, FormatTime(locrisk.MonthStart(now)), n)
	if err != nil || !r.Limit.Valid {
		// An unknown account fails the foreign key: say so plainly.
		if _, aerr := getAccount(ctx, tx, accountID); aerr != nil {
			return aerr
		}
		return fmt.Errorf("count quota usage: %w", err)
	}
	// Refused, the caller's transaction rolls back, taking the increment
	// with it.
	return locrisk.CheckQuota(int(r.Limit.Int64), r.Used, n, now)
}
