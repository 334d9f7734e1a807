package pgstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
)

// UsageHistory returns one entry per day and bucket: jobs created that day,
// and jobs that completed or failed that day. It counts the jobs
// themselves; the retention period (at least 91 days) is longer than the
// history the API offers (docs/api.md, Usage history), so the purge takes
// nothing the history shows.
func (s *Store) UsageHistory(ctx context.Context, accountID string, firstDay time.Time, days int, buckets []string) ([]locrisk.DailyUsage, error) {
	w, err := locrisk.NewUsageWindow(firstDay, days, buckets)
	if err != nil {
		return nil, err
	}
	var rows []locrisk.DailyUsage
	err = s.db.SelectContext(ctx, &rows, `SELECT day, bucket, SUM(created) AS report_jobs, SUM(completed) AS completed, SUM(failed) AS failed
		FROM (
			SELECT date_trunc('day', created_utc AT TIME ZONE 'UTC') AS day, bucket, 1 AS created, 0 AS completed, 0 AS failed
				FROM report_jobs WHERE account_id = $1 AND created_utc >= $2 AND created_utc < $3
			UNION ALL
			SELECT date_trunc('day', completed_utc AT TIME ZONE 'UTC'), bucket, 0,
				CASE WHEN status = 'completed' THEN 1 ELSE 0 END, CASE WHEN status = 'failed' THEN 1 ELSE 0 END
				FROM report_jobs WHERE account_id = $1 AND completed_utc >= $2 AND completed_utc < $3
				  AND status IN ('completed', 'failed')
		) AS e GROUP BY day, bucket`, accountID, w.From, w.To())
	if err != nil {
		return nil, fmt.Errorf("usage history of %s: %w", accountID, err)
	}
	return w.Fill(rows), nil
}

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
// summary over [from, to) from the rows themselves, and the completion
// percentiles from the histograms of migration 5, as the SQLite store
// does (completionPercentiles).
func (s *Store) OpsSummary(ctx context.Context, accountID string, from, to time.Time, failureLimit int) (locrisk.OpsSummary, error) {
	var o locrisk.OpsSummary
	from, to = ms(from), ms(to)
	var c struct {
		Created    int `db:"created"`
		Completed  int `db:"completed"`
		Failed     int `db:"failed"`
		Queued     int `db:"queued"`
		Processing int `db:"processing"`
	}
	err := s.db.GetContext(ctx, &c, `SELECT
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = $1 AND created_utc >= $2 AND created_utc < $3) AS created,
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = $1 AND status = 'completed' AND completed_utc >= $2 AND completed_utc < $3) AS completed,
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = $1 AND status = 'failed' AND completed_utc >= $2 AND completed_utc < $3) AS failed,
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = $1 AND status = 'queued') AS queued,
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = $1 AND status = 'processing') AS processing`, accountID, from, to)
	if err != nil {
		return o, fmt.Errorf("operations summary of %s: jobs: %w", accountID, err)
	}
	o.Jobs = locrisk.JobOps{Created: c.Created, Completed: c.Completed, Failed: c.Failed, Queued: c.Queued, Processing: c.Processing}
	if err := completionPercentiles(ctx, s.db, accountID, from, to, &o.Jobs); err != nil {
		return o, fmt.Errorf("operations summary of %s: %w", accountID, err)
	}
	if err := s.db.GetContext(ctx, &o.Batches, `SELECT
		(SELECT COUNT(*) FROM batches WHERE account_id = $1 AND created_utc >= $2 AND created_utc < $3) AS created,
		(SELECT COUNT(*) FROM batches WHERE account_id = $1 AND status = 'processing') AS processing,
		(SELECT COUNT(*) FROM batches WHERE account_id = $1 AND status = 'completed' AND completed_utc >= $2 AND completed_utc < $3) AS completed`,
		accountID, from, to); err != nil {
		return o, fmt.Errorf("operations summary of %s: batches: %w", accountID, err)
	}
	if err := s.db.GetContext(ctx, &o.Webhooks, `SELECT
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = $1 AND created_utc >= $2 AND created_utc < $3) AS deliveries,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = $1 AND status = 'succeeded' AND delivered_utc >= $2 AND delivered_utc < $3) AS succeeded,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = $1 AND status = 'failed'
			AND COALESCE(last_attempt_utc, created_utc) >= $2 AND COALESCE(last_attempt_utc, created_utc) < $3) AS failed,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = $1 AND status = 'pending') AS pending`,
		accountID, from, to); err != nil {
		return o, fmt.Errorf("operations summary of %s: webhooks: %w", accountID, err)
	}
	o.RecentFailures = []locrisk.Failure{}
	if failureLimit > 0 {
		var rows []struct {
			Kind     string    `db:"kind"`
			ID       string    `db:"id"`
			Code     string    `db:"code"`
			Message  string    `db:"message"`
			Occurred time.Time `db:"occurred"`
		}
		err := s.db.SelectContext(ctx, &rows, `(SELECT $5::text AS kind, id, COALESCE(error_code, '') AS code,
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
			ORDER BY occurred DESC, id DESC LIMIT $4)`,
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

// QueueDepth reads the job queue's and the webhook outbox's backlog.
func (s *Store) QueueDepth(ctx context.Context) (locrisk.QueueDepth, error) {
	var d struct {
		Queued     int          `db:"queued"`
		Processing int          `db:"processing"`
		Oldest     sql.NullTime `db:"oldest"`
		Pending    int          `db:"pending"`
	}
	err := s.db.GetContext(ctx, &d, `SELECT
		(SELECT COUNT(*) FROM report_jobs WHERE status = 'queued') AS queued,
		(SELECT COUNT(*) FROM report_jobs WHERE status = 'processing') AS processing,
		(SELECT MIN(run_after_utc) FROM report_jobs WHERE status = 'queued') AS oldest,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending') AS pending`)
	if err != nil {
		return locrisk.QueueDepth{}, fmt.Errorf("queue depth: %w", err)
	}
	q := locrisk.QueueDepth{JobsQueued: d.Queued, JobsProcessing: d.Processing, DeliveriesQueued: d.Pending}
	if d.Oldest.Valid {
		q.OldestRunnable = utc(d.Oldest.Time)
	}
	return q, nil
}

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
