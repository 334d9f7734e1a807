package pgstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
)

// UsageHistory returns one entry per day and bucket: jobs created that day,
// and jobs that completed or failed that day. It sums the days' hours of
// usage_hourly (migration 8; usageHistoryQuery), at most days times 24
// times 3 rows whatever the number of jobs; the triggers that keep it
// count the jobs held, as counting the rows did. The retention period (at
// least 91 days) is longer than the history the API offers (docs/api.md,
// Usage history), so the purge takes nothing the history shows.
func (s *Store) UsageHistory(ctx context.Context, accountID string, firstDay time.Time, days int, buckets []string) ([]locrisk.DailyUsage, error) {
	w, err := locrisk.NewUsageWindow(firstDay, days, buckets)
	if err != nil {
		return nil, err
	}
	var rows []locrisk.DailyUsage
	err = s.db.SelectContext(ctx, &rows, usageHistoryQuery, accountID, w.From, w.To())
	if err != nil {
		return nil, fmt.Errorf("usage history of %s: %w", accountID, err)
	}
	return w.Fill(rows), nil
}

// usageHistoryQuery sums the hours [$2, $3) of the account's usage_hourly
// rows (a range of its primary key) by UTC day and bucket: the jobs
// created in the day (by their status now, all of them), and those
// completed or failed in it. The day is a timestamp without time zone,
// which reads back as UTC.
const usageHistoryQuery = `SELECT date_trunc('day', hour AT TIME ZONE 'UTC') AS day, bucket,
		SUM(open + completed + failed) AS report_jobs, SUM(ended_completed) AS completed, SUM(ended_failed) AS failed
	FROM usage_hourly WHERE account_id = $1 AND hour >= $2 AND hour < $3
	GROUP BY 1, 2`

// AddRequestStats adds hourly request aggregates to the stored ones. The
// upsert locks the hour's row, so nodes adding at once add one after the
// other; the histograms are merged under that lock.
func (s *Store) AddRequestStats(ctx context.Context, rows []locrisk.HourStats) error {
	if len(rows) == 0 {
		return nil
	}
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		for _, r := range rows {
			hour := r.Hour.UTC().Truncate(time.Hour)
			if _, err := tx.ExecContext(ctx, `INSERT INTO request_stats (account_id, hour_utc) VALUES ($1, $2)
				ON CONFLICT DO NOTHING`, r.AccountID, hour); err != nil {
				return fmt.Errorf("add %s %s: %w", r.AccountID, hour, err)
			}
			var stored []byte
			if err := tx.GetContext(ctx, &stored, `SELECT latency_histogram FROM request_stats
				WHERE account_id = $1 AND hour_utc = $2 FOR UPDATE`, r.AccountID, hour); err != nil {
				return fmt.Errorf("read %s %s: %w", r.AccountID, hour, err)
			}
			hist, err := locrisk.MergeLatencyHistogram(stored, r.Latency)
			if err != nil {
				return fmt.Errorf("request stats %s %s: %w", r.AccountID, hour, err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE request_stats SET total = total + $3, succeeded = succeeded + $4,
					client_errors = client_errors + $5, server_errors = server_errors + $6, rate_limited = rate_limited + $7,
					latency_histogram = $8
				WHERE account_id = $1 AND hour_utc = $2`, r.AccountID, hour, r.Total, r.Succeeded, r.ClientErrors,
				r.ServerErrors, r.RateLimited, hist); err != nil {
				return fmt.Errorf("add %s %s: %w", r.AccountID, hour, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add request stats: %w", err)
	}
	return nil
}

// RequestStats sums the account's aggregates of the hours in [fromHour, toHour).
func (s *Store) RequestStats(ctx context.Context, accountID string, fromHour, toHour time.Time) (locrisk.RequestCounts, error) {
	var rows []struct {
		locrisk.RequestCounts
		Histogram []byte `db:"latency_histogram"`
	}
	err := s.db.SelectContext(ctx, &rows, `SELECT total, succeeded, client_errors, server_errors, rate_limited, latency_histogram
		FROM request_stats WHERE account_id = $1 AND hour_utc >= $2 AND hour_utc < $3`, accountID, fromHour, toHour)
	if err != nil {
		return locrisk.RequestCounts{}, fmt.Errorf("request stats of %s: %w", accountID, err)
	}
	var sum locrisk.RequestCounts
	for _, r := range rows {
		if r.Latency, err = locrisk.ParseLatencyHistogram(r.Histogram); err != nil {
			return locrisk.RequestCounts{}, fmt.Errorf("request stats of %s: %w", accountID, err)
		}
		sum.Add(r.RequestCounts)
	}
	return sum, nil
}

// OpsSummary computes the job, batch and webhook parts of the operations
// summary over [from, to): the events of the window from the hourly
// counters of migration 8 and, for the part hours at its ends, from the
// rows (opsEventCounts); the jobs queued and processing now from the
// account's open jobs counted in queue_counts and its processing jobs;
// the completion percentiles from the histograms of migration 5, as the
// SQLite store does (completionPercentiles); the batches processing, the
// deliveries pending and failed, and the recent failures from ranges of
// indexes that hold only the states or the failures they count. None of
// it reads more rows as the jobs, batches and deliveries held grow.
func (s *Store) OpsSummary(ctx context.Context, accountID string, from, to time.Time, failureLimit int) (locrisk.OpsSummary, error) {
	var o locrisk.OpsSummary
	from, to = ms(from), ms(to)
	ev, err := opsEventCounts(ctx, s.db, accountID, from, to, s.now())
	if err != nil {
		return o, fmt.Errorf("operations summary of %s: %w", accountID, err)
	}
	var c struct {
		Queued     int `db:"queued"`
		Processing int `db:"processing"`
	}
	if err := s.db.GetContext(ctx, &c, opsJobsNow, accountID); err != nil {
		return o, fmt.Errorf("operations summary of %s: jobs: %w", accountID, err)
	}
	o.Jobs = locrisk.JobOps{Created: ev.JobsCreated, Completed: ev.JobsCompleted, Failed: ev.JobsFailed,
		Queued: c.Queued, Processing: c.Processing}
	if err := completionPercentiles(ctx, s.db, accountID, from, to, &o.Jobs); err != nil {
		return o, fmt.Errorf("operations summary of %s: %w", accountID, err)
	}
	o.Batches = locrisk.BatchOps{Created: ev.BatchesCreated, Completed: ev.BatchesCompleted}
	if err := s.db.GetContext(ctx, &o.Batches.Processing, opsBatchesProcessing, accountID); err != nil {
		return o, fmt.Errorf("operations summary of %s: batches: %w", accountID, err)
	}
	var w struct {
		Failed  int `db:"failed"`
		Pending int `db:"pending"`
	}
	if err := s.db.GetContext(ctx, &w, opsWebhookCounts, accountID, from, to); err != nil {
		return o, fmt.Errorf("operations summary of %s: webhooks: %w", accountID, err)
	}
	o.Webhooks = locrisk.WebhookOps{Deliveries: ev.Deliveries, Succeeded: ev.Succeeded, Failed: w.Failed, Pending: w.Pending}
	o.RecentFailures = []locrisk.Failure{}
	if failureLimit > 0 {
		var rows []struct {
			Kind     string    `db:"kind"`
			ID       string    `db:"id"`
			Code     string    `db:"code"`
			Message  string    `db:"message"`
			Occurred time.Time `db:"occurred"`
		}
		err := s.db.SelectContext(ctx, &rows, opsRecentFailures,
			accountID, from, to, failureLimit, locrisk.FailureReportJob, locrisk.FailureWebhookDelivery, locrisk.CodeWebhookDeliveryFailed)
		if err != nil {
			return o, fmt.Errorf("operations summary of %s: recent failures: %w", accountID, err)
		}
		for _, r := range rows {
			o.RecentFailures = append(o.RecentFailures, locrisk.Failure{Kind: r.Kind, ID: r.ID, Code: r.Code, Message: r.Message,
				OccurredUTC: utc(r.Occurred)})
		}
		o.RecentFailures = locrisk.RecentFailures(o.RecentFailures, failureLimit)
	}
	return o, nil
}

// The operations summary's queries, one constant each so that
// TestCounterReadPlans explains the very text OpsSummary runs: $1 the
// account, $2 and $3 the window [from, to).
const (
	// opsJobsNow: the account's open jobs (queue_counts) less those
	// processing, and those: as few as the workers, in partial indexes
	// that hold only them (report_jobs_processing, report_jobs_leases).
	opsJobsNow = `SELECT (SELECT COALESCE(SUM(jobs_open), 0) FROM queue_counts WHERE account_id = $1) - p.n AS queued,
		p.n AS processing
	FROM (SELECT COUNT(*) AS n FROM report_jobs WHERE account_id = $1 AND status = 'processing') AS p`
	// opsBatchesProcessing: the account's batches processing now, by
	// batches_by_status.
	opsBatchesProcessing = `SELECT COUNT(*) FROM batches WHERE account_id = $1 AND status = 'processing'`
	// opsWebhookCounts: failed by webhook_deliveries_failed; pending now
	// by each endpoint's pending deliveries (webhook_deliveries_endpoint_due,
	// migration 6), the account's endpoints being few.
	opsWebhookCounts = `SELECT
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = $1 AND status = 'failed'
			AND COALESCE(last_attempt_utc, created_utc) >= $2 AND COALESCE(last_attempt_utc, created_utc) < $3) AS failed,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = $1 AND status = 'pending'
			AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE account_id = $1)) AS pending`
	// opsRecentFailures: each side newest first along its index
	// (report_jobs_failed, webhook_deliveries_failed), limited on its own
	// ($4), then merged by the caller. $5 to $7 are the kinds and the
	// delivery failure's code.
	opsRecentFailures = `(SELECT $5::text AS kind, id, COALESCE(error_code, '') AS code,
			COALESCE(error_message, '') AS message, completed_utc AS occurred
		FROM report_jobs WHERE account_id = $1 AND status = 'failed' AND completed_utc >= $2 AND completed_utc < $3
		ORDER BY completed_utc DESC, id DESC LIMIT $4)
		UNION ALL
		(SELECT $6::text, id, $7::text,
			COALESCE(NULLIF(error, ''), CASE WHEN response_status IS NOT NULL THEN 'the endpoint answered HTTP ' || response_status
				ELSE 'delivery failed' END),
			COALESCE(last_attempt_utc, created_utc) AS occurred
		FROM webhook_deliveries WHERE account_id = $1 AND status = 'failed'
		  AND COALESCE(last_attempt_utc, created_utc) >= $2 AND COALESCE(last_attempt_utc, created_utc) < $3
		ORDER BY occurred DESC, id DESC LIMIT $4)`
)

// opsEvents are the counts of the operations summary that hourly
// counters keep (migration 8): jobs created, completed and failed
// (usage_hourly), deliveries created and succeeded, batches created and
// completed (ops_hourly).
type opsEvents struct {
	JobsCreated      int `db:"jobs_created"`
	JobsCompleted    int `db:"jobs_completed"`
	JobsFailed       int `db:"jobs_failed"`
	Deliveries       int `db:"deliveries_created"`
	Succeeded        int `db:"deliveries_succeeded"`
	BatchesCreated   int `db:"batches_created"`
	BatchesCompleted int `db:"batches_completed"`
}

// The counts of opsEvents, in its order, as terms of a sum over the
// range [%[1]s, %[2]s), one a line: opsHourlyTerms from the hourly
// counters, by their primary keys (the bounds whole hours); opsRowTerms
// from the rows, by report_jobs_created, report_jobs_ended,
// webhook_deliveries_account_created, webhook_deliveries_succeeded,
// batches_list and batches_by_status.
const (
	opsHourlyTerms = `(SELECT COALESCE(SUM(open + completed + failed), 0) FROM usage_hourly WHERE account_id = $1 AND hour >= %[1]s AND hour < %[2]s)
	(SELECT COALESCE(SUM(ended_completed), 0) FROM usage_hourly WHERE account_id = $1 AND hour >= %[1]s AND hour < %[2]s)
	(SELECT COALESCE(SUM(ended_failed), 0) FROM usage_hourly WHERE account_id = $1 AND hour >= %[1]s AND hour < %[2]s)
	(SELECT COALESCE(SUM(deliveries_created), 0) FROM ops_hourly WHERE account_id = $1 AND hour >= %[1]s AND hour < %[2]s)
	(SELECT COALESCE(SUM(deliveries_succeeded), 0) FROM ops_hourly WHERE account_id = $1 AND hour >= %[1]s AND hour < %[2]s)
	(SELECT COALESCE(SUM(batches_created), 0) FROM ops_hourly WHERE account_id = $1 AND hour >= %[1]s AND hour < %[2]s)
	(SELECT COALESCE(SUM(batches_completed), 0) FROM ops_hourly WHERE account_id = $1 AND hour >= %[1]s AND hour < %[2]s)`
	opsRowTerms = `(SELECT COUNT(*) FROM report_jobs WHERE account_id = $1 AND created_utc >= %[1]s AND created_utc < %[2]s)
	(SELECT COUNT(*) FROM report_jobs WHERE account_id = $1 AND status = 'completed' AND completed_utc >= %[1]s AND completed_utc < %[2]s)
	(SELECT COUNT(*) FROM report_jobs WHERE account_id = $1 AND status = 'failed' AND completed_utc >= %[1]s AND completed_utc < %[2]s)
	(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = $1 AND created_utc >= %[1]s AND created_utc < %[2]s)
	(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = $1 AND status = 'succeeded' AND delivered_utc >= %[1]s AND delivered_utc < %[2]s)
	(SELECT COUNT(*) FROM batches WHERE account_id = $1 AND created_utc >= %[1]s AND created_utc < %[2]s)
	(SELECT COUNT(*) FROM batches WHERE account_id = $1 AND status = 'completed' AND completed_utc >= %[1]s AND completed_utc < %[2]s)`
)

// opsRange is one term of opsEventsQuery: the counts of [from, to), from
// the hourly counters or the rows, added or (minus) subtracted.
type opsRange struct {
	from, to      time.Time
	hourly, minus bool
}

// opsEventsQuery is the statement that selects opsEvents as the sums of
// ranges, $1 the account and each range's bounds the parameters after:
// one statement, so one snapshot, so an hour less the rest of it is
// never off by a job written between two reads.
func opsEventsQuery(ranges []opsRange) (string, []any) {
	cols := []string{"jobs_created", "jobs_completed", "jobs_failed", "deliveries_created", "deliveries_succeeded",
		"batches_created", "batches_completed"}
	terms := make([][]string, len(cols))
	var args []any
	for _, r := range ranges {
		args = append(args, r.from, r.to)
		src := opsRowTerms
		if r.hourly {
			src = opsHourlyTerms
		}
		lines := strings.Split(fmt.Sprintf(src, fmt.Sprintf("$%d", len(args)), fmt.Sprintf("$%d", len(args)+1)), "\n")
		for i := range cols {
			op := " + "
			if r.minus {
				op = " - "
			}
			terms[i] = append(terms[i], op+strings.TrimSpace(lines[i]))
		}
	}
	var b strings.Builder
	b.WriteString("SELECT")
	for i, col := range cols {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n\t0" + strings.Join(terms[i], "\n\t\t") + " AS " + col)
	}
	return b.String(), args
}

// opsEventRanges are the ranges whose counts make those of [from, to):
// the whole UTC hours inside it from the counters, and each part hour at
// its ends either from the rows or, when that is shorter, as its hour's
// counters less the rows of the rest of the hour. The rest of the last
// hour lies after now when the window ends now, as the server's do, so
// it holds no rows. Every choice gives the same counts; now only chooses
// which rows are read, at most half an hour of them at each end.
func opsEventRanges(from, to, now time.Time) []opsRange {
	if !from.Before(to) {
		return nil
	}
	lo, hi := from.UTC().Truncate(time.Hour), to.UTC().Truncate(time.Hour)
	if lo.Before(from) {
		lo = lo.Add(time.Hour)
	}
	if lo.After(hi) { // within one hour
		return []opsRange{{from: from, to: to}}
	}
	var rs []opsRange
	if lo.Before(hi) {
		rs = append(rs, opsRange{from: lo, to: hi, hourly: true})
	}
	// part adds [a, b), a part of the hour [h, h+1h), from the rows, or
	// as the hour less the rows of the rest of it.
	part := func(a, b, h time.Time, rest bool) {
		switch {
		case !a.Before(b):
		case !rest:
			rs = append(rs, opsRange{from: a, to: b})
		case a.Equal(h): // the part begins the hour: less the rest after it
			rs = append(rs, opsRange{from: h, to: h.Add(time.Hour), hourly: true}, opsRange{from: b, to: h.Add(time.Hour), minus: true})
		default: // the part ends the hour: less the rest before it
			rs = append(rs, opsRange{from: h, to: h.Add(time.Hour), hourly: true}, opsRange{from: h, to: a, minus: true})
		}
	}
	first := lo.Add(-time.Hour)
	part(from, lo, first, from.Sub(first) < lo.Sub(from))
	part(hi, to, hi, hi.Add(time.Hour).Sub(to) < to.Sub(hi) || !to.Before(now))
	return rs
}

// opsEventCounts reads the opsEvents of [from, to) (opsEventRanges).
func opsEventCounts(ctx context.Context, q queryer, accountID string, from, to, now time.Time) (opsEvents, error) {
	var ev opsEvents
	ranges := opsEventRanges(from, to, now)
	if len(ranges) == 0 {
		return ev, nil
	}
	query, args := opsEventsQuery(ranges)
	if err := q.GetContext(ctx, &ev, query, append([]any{accountID}, args...)...); err != nil {
		return ev, fmt.Errorf("event counts: %w", err)
	}
	return ev, nil
}

// LoadReference returns the engine reference saved under key, or nil
// when this node is to build it. Nodes that start together on a fresh
// database build it once: the first to find no reference takes a
// PostgreSQL advisory lock for the key and builds (LoadReference answers
// nil, and SaveReference, or Close, lets the lock go), while the others
// wait for the lock and read what it saved. A builder that dies lets the
// lock go with its connection, and the next node builds.
func (s *Store) LoadReference(ctx context.Context, key string) ([]byte, error) {
	body, err := s.readReference(ctx, key)
	if body != nil || err != nil {
		return body, err
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("reference lock: %w", err)
	}
	var got bool
	if err := conn.GetContext(ctx, &got, `SELECT pg_try_advisory_lock($1)`, referenceLockID(key)); err != nil {
		conn.Close()
		return nil, fmt.Errorf("reference lock: %w", err)
	}
	if got {
		// This node builds; the lock stays held on conn until it saves.
		s.releaseReferenceLock()
		s.refMu.Lock()
		s.refLock = conn
		s.refMu.Unlock()
		return nil, nil
	}
	// Another node is building: wait for it, then read what it saved.
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, referenceLockID(key)); err != nil {
		return nil, fmt.Errorf("wait for the reference another node builds: %w", err)
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, referenceLockID(key)); err != nil {
		return nil, fmt.Errorf("reference lock: %w", err)
	}
	return s.readReference(ctx, key)
}

func (s *Store) readReference(ctx context.Context, key string) ([]byte, error) {
	var body []byte
	err := s.db.GetContext(ctx, &body, `SELECT body FROM reference_cache WHERE cache_key = $1`, key)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read reference cache: %w", err)
	}
	return body, nil
}

// referenceLockID is the advisory lock of a reference key: a fixed
// namespace in the high half, the key's hash in the low.
func referenceLockID(key string) int64 {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int64(0x6c72_6566)<<32 | int64(h.Sum32())
}

// releaseReferenceLock lets the reference lock go, if this node holds it.
func (s *Store) releaseReferenceLock() {
	s.refMu.Lock()
	defer s.refMu.Unlock()
	if s.refLock != nil {
		// The connection goes back to the pool, not away: its session's
		// advisory locks must be let go first. Should that fail, the
		// connection is dropped, and the lock with its session.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := s.refLock.ExecContext(ctx, `SELECT pg_advisory_unlock_all()`); err != nil {
			_ = s.refLock.Raw(func(any) error { return driver.ErrBadConn })
		}
		s.refLock.Close()
		s.refLock = nil
	}
}

// SaveReference keeps body under key and drops every other key. The same
// body already saved under key is not written again: nodes that built the
// same reference (it is a pure function of its key, the data version and
// the engine build) would otherwise each leave a dead copy of its 27 MB
// behind.
func (s *Store) SaveReference(ctx context.Context, key string, body []byte) error {
	defer s.releaseReferenceLock()
	return s.withTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM reference_cache WHERE cache_key <> $1`, key); err != nil {
			return fmt.Errorf("clear reference cache: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO reference_cache (cache_key, body, created_utc) VALUES ($1, $2, $3)
			ON CONFLICT (cache_key) DO UPDATE SET body = excluded.body, created_utc = excluded.created_utc
			WHERE reference_cache.body IS DISTINCT FROM excluded.body`, key, body, ms(time.Now())); err != nil {
			return fmt.Errorf("save reference cache: %w", err)
		}
		return nil
	})
}

// QueueDepth reads the job queue's and the webhook outbox's backlog
// (queueDepthQuery).
func (s *Store) QueueDepth(ctx context.Context) (locrisk.QueueDepth, error) {
	var d struct {
		Queued     int          `db:"queued"`
		Processing int          `db:"processing"`
		Oldest     sql.NullTime `db:"oldest"`
		Pending    int          `db:"pending"`
	}
	err := s.db.GetContext(ctx, &d, queueDepthQuery)
	if err != nil {
		return locrisk.QueueDepth{}, fmt.Errorf("queue depth: %w", err)
	}
	q := locrisk.QueueDepth{JobsQueued: d.Queued, JobsProcessing: d.Processing, DeliveriesQueued: d.Pending}
	if d.Oldest.Valid {
		q.OldestRunnable = utc(d.Oldest.Time)
	}
	return q, nil
}

// queueDepthQuery reads QueueDepth in one statement, so one snapshot. The
// open jobs are the sum of queue_counts (migration 8), one row per
// account, less the processing jobs, which are as few as the workers
// (report_jobs_leases); the oldest runnable is the earliest of each
// account's first queued job, one seek of report_jobs_queued per account
// with open jobs. Neither reads the queued jobs themselves, however many
// wait. The pending deliveries are counted from the index that holds
// only them (webhook_deliveries_endpoint_due): the outbox's backlog, as
// the SQLite store counts it.
const queueDepthQuery = `SELECT (SELECT COALESCE(SUM(jobs_open), 0) FROM queue_counts) - p.n AS queued, p.n AS processing,
		(SELECT MIN(f.run_after_utc) FROM queue_counts c CROSS JOIN LATERAL (
			SELECT run_after_utc FROM report_jobs WHERE status = 'queued' AND account_id = c.account_id
			ORDER BY run_after_utc LIMIT 1) AS f
		WHERE c.jobs_open > 0) AS oldest,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending') AS pending
	FROM (SELECT COUNT(*) AS n FROM report_jobs WHERE status = 'processing') AS p`

// ProbeWrite checks that a write can happen now: a transaction that
// fails on a read-only server (a standby) or a lost connection. While the
// store's room is unproven (since it opened, since PostgreSQL refused a
// write for a full disk, or for longer than reproveAfter: classify.go) it
// also writes 64 KiB that do not compress into the room_probe table,
// emptied first so that they need new blocks (migration 7), and commits:
// only a write that succeeds proves room,
// since taking a transaction writes nothing a full disk would refuse. A
// full disk fails it with ErrStorageFull, a server away or restarting
// with ErrUnavailable.
func (s *Store) ProbeWrite(ctx context.Context) error {
	wrote := false
	err := s.tryTx(ctx, func(tx *sqlx.Tx) error {
		var readOnly string
		if err := tx.GetContext(ctx, &readOnly, `SHOW transaction_read_only`); err != nil {
			return err
		}
		if readOnly == "on" {
			return fmt.Errorf("%w: the database is read-only", locrisk.ErrUnavailable)
		}
		if s.room.proven(s.now()) {
			return nil
		}
		pad := make([]byte, probeRoom)
		if _, err := rand.Read(pad); err != nil {
			return err
		}
		// TRUNCATE gives the table (and its TOAST table) new, empty
		// files, so the row must take new blocks from the file system:
		// rewriting it in place could reuse the free space of its old
		// versions, which a full disk does not refuse.
		if _, err := tx.ExecContext(ctx, `TRUNCATE room_probe`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO room_probe (id, written_utc, pad) VALUES (1, $1, $2)`, ms(s.now()), pad)
		wrote = err == nil
		return err
	})
	if err != nil {
		return fmt.Errorf("probe write: %w", err)
	}
	if wrote {
		s.room.prove(s.now())
	}
	return nil
}

// probeRoom is what ProbeWrite writes to prove room: about what a group
// of job creations adds to the tables and the write-ahead log.
const probeRoom = 64 << 10

// completionPercentiles sets j's completion percentiles from the
// histograms of migration 5 (completion_histograms), over the periods
// that cover [from, to) (locrisk.CompletionPeriodsOf): each read from its
// hour or day rows, so the cost does not grow with the jobs.
func completionPercentiles(ctx context.Context, q queryer, accountID string, from, to time.Time, j *locrisk.JobOps) error {
	p, ok := locrisk.CompletionPeriodsOf(from, to)
	if !ok {
		return nil
	}
	var h []locrisk.HistogramBucket
	err := q.SelectContext(ctx, &h, `SELECT b.value_ms, SUM(h.jobs)::bigint AS jobs
		FROM completion_histograms h JOIN completion_buckets b ON b.upper_ms = h.bucket
		WHERE h.account_id = $1 AND (
			(h.span = 'hour' AND ((h.period >= $2 AND h.period < $3) OR (h.period >= $6 AND h.period < $7)))
			OR (h.span = 'day' AND h.period >= $4 AND h.period < $5))
		GROUP BY h.bucket, b.value_ms ORDER BY h.bucket`, accountID,
		p.HoursBefore[0], p.HoursBefore[1], p.Days[0], p.Days[1], p.HoursAfter[0], p.HoursAfter[1])
	if err != nil {
		return fmt.Errorf("completion times: %w", err)
	}
	j.SetCompletionPercentiles(h)
	return nil
}
