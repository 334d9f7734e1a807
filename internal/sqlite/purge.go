package sqlite

// The retention purge: deleting records older than the retention period
// (maintenance.go gives the space back to the file system). The policy
// (how long is kept, and why at least 90 days) is the retention package's
// and docs/operations.md's (Retention); this file knows only which rows
// may go and how to delete them without stalling the service.
//
// Every kind of record is walked oldest first along an index (migration
// 006_retention.sql), a few hundred rows per write transaction, with a
// keyset cursor, so a transaction holds the write lock for milliseconds
// and other writers (job creation, workers) run between two of them. A run
// that is cancelled stops between two transactions, or rolls one back;
// what it committed stays committed and the next run goes on from there.
//
// What is never deleted, whatever its age: accounts; a job that is not
// completed or failed, or that ended inside the period; a batch that is
// not completed, or any of whose jobs may not go; a job or batch with a
// webhook delivery still pending; a job a watch item names (its latest,
// and those of its current and previous reports), and watchlists; an endpoint that is active, or that
// still has deliveries; the reference cache. Rows that reference others
// go first (deliveries, events, reports, batch items, then jobs and
// batches), in the same transaction, so no foreign key is ever broken.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/sqlpurge"
)

// DefaultPurgeBatch is locrisk.DefaultPurgeBatch under the store's old name.
const DefaultPurgeBatch = locrisk.DefaultPurgeBatch

// Purge deletes what p allows, kind by kind, in transactions of at most
// p.Batch rows, and returns the counts. On an error (ctx included) it
// returns what it had committed so far with the error.
func (s *Store) Purge(ctx context.Context, p locrisk.PurgePolicy) (locrisk.PurgeCounts, error) {
	p, err := p.Normalized()
	if err != nil {
		return locrisk.PurgeCounts{}, err
	}
	var c locrisk.PurgeCounts
	var steps []purgeStep
	if !p.Before.IsZero() {
		before := FormatTime(p.Before)
		steps = append(steps, batchesStep(before), singleJobsStep(before), endpointsStep(before),
			keysStep(before), requestStatsStep(before), quotaCountersStep(FormatTime(p.QuotaCutoff())))
	}
	steps = append(steps, idempotencyStep(FormatTime(p.IdempotencyCutoff())))
	for _, st := range steps {
		if err := s.purgeWalk(ctx, st, p, &c); err != nil {
			return c, fmt.Errorf("purge %s: %w", st.name, err)
		}
	}
	return c, nil
}

// purgeStep is one kind of record. pick selects, in a transaction, up to
// limit deletable rows after the cursor (the sort values of the last row
// picked) in cursor order; del deletes them (and what references them)
// and adds to the counts. The cursor, not the deletion, moves the walk on,
// so a dry run (which deletes nothing) ends too, and rows that may not go
// yet are passed once per run rather than read again by every transaction.
// limit is the policy's rows per transaction for the kind, p.Batch when
// nil.
type purgeStep struct {
	name   string
	cursor [2]any // the sort values before the first row
	limit  func(p locrisk.PurgePolicy) int
	pick   string // SELECT of (key, sort1, sort2): ?1 = cut-off, ?2, ?3 = cursor, ?4 = limit
	cutoff string
	del    func(ctx context.Context, tx *sqlx.Tx, keys []any, c *locrisk.PurgeCounts) error
}

// purgeWalk runs st in transactions until a pick finds fewer rows than it
// may take, adding what each committed (or, dry, rolled back) to c.
func (s *Store) purgeWalk(ctx context.Context, st purgeStep, p locrisk.PurgePolicy, c *locrisk.PurgeCounts) error {
	limit := p.Batch
	if st.limit != nil {
		limit = st.limit(p)
	}
	cur := st.cursor
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := 0
		var chunk locrisk.PurgeCounts
		next := cur
		err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
			rows, err := tx.QueryContext(ctx, st.pick, st.cutoff, next[0], next[1], limit)
			if err != nil {
				return fmt.Errorf("pick: %w", err)
			}
			var keys []any
			for rows.Next() {
				var k any
				if err := rows.Scan(&k, &next[0], &next[1]); err != nil {
					rows.Close()
					return fmt.Errorf("pick: %w", err)
				}
				keys = append(keys, k)
			}
			if err := errors.Join(rows.Err(), rows.Close()); err != nil {
				return fmt.Errorf("pick: %w", err)
			}
			n = len(keys)
			if n == 0 {
				return nil
			}
			if err := st.del(ctx, tx, keys, &chunk); err != nil {
				return err
			}
			if p.DryRun {
				return errDryRun
			}
			return nil
		})
		if err != nil && !errors.Is(err, errDryRun) {
			return err
		}
		c.Add(chunk)
		cur = next
		if n < limit {
			return nil
		}
	}
}

// errDryRun rolls a dry run's transaction back.
var errDryRun = errors.New("dry run")

// execIn runs query with "(?)" expanded to the keys, and returns the rows
// it changed.
func execIn(ctx context.Context, tx *sqlx.Tx, query string, keys []any) (int64, error) {
	q, args, err := sqlx.In(query, keys)
	if err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// deleteAll runs the deletes in order, adding each one's count to its
// counter (nil: not counted).
func deleteAll(ctx context.Context, tx *sqlx.Tx, keys []any, stmts []sqlpurge.Delete) error {
	for _, d := range stmts {
		n, err := execIn(ctx, tx, d.SQL, keys)
		if err != nil {
			return fmt.Errorf("%s: %w", strings.Fields(d.SQL)[2], err)
		}
		if d.Count != nil {
			*d.Count += n
		}
	}
	return nil
}

// batchesStep: completed batches whose jobs all ended before the cut-off,
// with their items, jobs and everything of those jobs. A batch is
// completed once every item is final, at the time its last job ended
// (SyncBatchStatus); the job check guards against a batch put back to
// processing by a retry between the pick and now (it cannot happen inside
// the transaction, but costs little). A batch counts as its 100 items at
// most, so a transaction takes a few batches.
func batchesStep(before string) purgeStep {
	return purgeStep{
		name:   "batches",
		cursor: [2]any{"", ""},
		limit:  locrisk.PurgePolicy.BatchesPerTx,
		cutoff: before,
		pick: `SELECT b.id, b.completed_utc, b.id FROM batches b
			WHERE b.status = 'completed' AND b.completed_utc < ?1 AND (b.completed_utc, b.id) > (?2, ?3)
			  AND NOT EXISTS (SELECT 1 FROM report_jobs j WHERE j.batch_id = b.id
			                  AND (j.status NOT IN ('completed', 'failed') OR j.completed_utc IS NULL OR j.completed_utc >= ?1))
			  AND ` + sqlpurge.NoPendingDelivery(`e.job_id IN (SELECT id FROM report_jobs WHERE batch_id = b.id)`) + `
			ORDER BY b.completed_utc, b.id LIMIT ?4`,
		del: func(ctx context.Context, tx *sqlx.Tx, keys []any, c *locrisk.PurgeCounts) error {
			jobs := `SELECT id FROM report_jobs WHERE batch_id IN (?)`
			return deleteAll(ctx, tx, keys, append(sqlpurge.JobDeletes(jobs, c),
				sqlpurge.Delete{SQL: `DELETE FROM batch_items WHERE batch_id IN (?)`, Count: &c.BatchItems},
				sqlpurge.Delete{SQL: `DELETE FROM report_jobs WHERE batch_id IN (?)`, Count: &c.Jobs},
				sqlpurge.Delete{SQL: `DELETE FROM batches WHERE id IN (?)`, Count: &c.Batches}))
		},
	}
}

// singleJobsStep: jobs outside batches that completed or failed before the
// cut-off, with their report, events and deliveries.
func singleJobsStep(before string) purgeStep {
	return purgeStep{
		name:   "report jobs",
		cursor: [2]any{"", ""},
		cutoff: before,
		pick: `SELECT j.id, j.completed_utc, j.id FROM report_jobs j
			WHERE j.batch_id IS NULL AND j.completed_utc IS NOT NULL AND j.completed_utc < ?1
			  AND (j.completed_utc, j.id) > (?2, ?3) AND j.status IN ('completed', 'failed')
			  AND ` + sqlpurge.NoPendingDelivery(`e.job_id = j.id`) + `
			  AND ` + sqlpurge.NotWatched("j") + `
			ORDER BY j.completed_utc, j.id LIMIT ?4`,
		del: func(ctx context.Context, tx *sqlx.Tx, keys []any, c *locrisk.PurgeCounts) error {
			return deleteAll(ctx, tx, keys, append(sqlpurge.JobDeletes(`?`, c),
				sqlpurge.Delete{SQL: `DELETE FROM report_jobs WHERE id IN (?)`, Count: &c.Jobs}))
		},
	}
}

// endpointsStep: webhook endpoints disabled before the cut-off that no
// delivery of a job's or batch's event refers to any more (those go with
// their jobs), with their webhook.test events (no job: job_id NULL) and
// those events' deliveries, which belong to the endpoint alone.
func endpointsStep(before string) purgeStep {
	return purgeStep{
		name:   "webhook endpoints",
		cursor: [2]any{"", ""},
		cutoff: before,
		pick: `SELECT w.id, w.disabled_utc, w.id FROM webhook_endpoints w
			WHERE w.is_active = 0 AND w.disabled_utc < ?1 AND (w.disabled_utc, w.id) > (?2, ?3)
			  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
				WHERE d.endpoint_id = w.id AND e.job_id IS NOT NULL)
			ORDER BY w.disabled_utc, w.id LIMIT ?4`,
		del: func(ctx context.Context, tx *sqlx.Tx, keys []any, c *locrisk.PurgeCounts) error {
			return deleteAll(ctx, tx, keys, []sqlpurge.Delete{
				{SQL: `DELETE FROM webhook_deliveries WHERE endpoint_id IN (?)
					AND event_id IN (SELECT id FROM webhook_events WHERE job_id IS NULL)`, Count: &c.Deliveries},
				// A test event has one delivery, just deleted; the index on
				// job_id finds the events without a job.
				{SQL: `DELETE FROM webhook_events WHERE job_id IS NULL
					AND account_id IN (SELECT account_id FROM webhook_endpoints WHERE id IN (?))
					AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`, Count: &c.Events},
				{SQL: `DELETE FROM webhook_endpoints WHERE id IN (?)`, Count: &c.Endpoints},
			})
		},
	}
}

// keysStep: API keys revoked, or expired, before the cut-off. Nothing
// refers to a key; there are a few per account, so the walk needs no index.
func keysStep(before string) purgeStep {
	return purgeStep{
		name:   "api keys",
		cursor: [2]any{"", ""},
		cutoff: before,
		pick: `SELECT id, created_utc, id FROM api_keys
			WHERE (revoked_utc < ?1 OR expires_utc < ?1) AND (created_utc, id) > (?2, ?3)
			ORDER BY created_utc, id LIMIT ?4`,
		del: func(ctx context.Context, tx *sqlx.Tx, keys []any, c *locrisk.PurgeCounts) error {
			return deleteAll(ctx, tx, keys, []sqlpurge.Delete{{SQL: `DELETE FROM api_keys WHERE id IN (?)`, Count: &c.Keys}})
		},
	}
}

// requestStatsStep: hourly request statistics of hours before the cut-off,
// walked in primary key order (account, hour). The key is the rowid.
func requestStatsStep(before string) purgeStep {
	return purgeStep{
		name:   "request statistics",
		cursor: [2]any{"", ""},
		cutoff: before,
		pick: `SELECT rowid, account_id, hour_utc FROM request_stats
			WHERE hour_utc < ?1 AND (account_id, hour_utc) > (?2, ?3)
			ORDER BY account_id, hour_utc LIMIT ?4`,
		del: func(ctx context.Context, tx *sqlx.Tx, keys []any, c *locrisk.PurgeCounts) error {
			return deleteAll(ctx, tx, keys, []sqlpurge.Delete{{SQL: `DELETE FROM request_stats WHERE rowid IN (?)`, Count: &c.RequestStats}})
		},
	}
}

// quotaCountersStep: monthly quota counters of months that began before
// firstKept (the month of the cut-off, so a month goes only once it ended
// before the cut-off; the quota reads only the current month).
func quotaCountersStep(firstKept string) purgeStep {
	return purgeStep{
		name:   "quota counters",
		cursor: [2]any{"", ""},
		cutoff: firstKept,
		pick: `SELECT rowid, account_id, period_start_utc FROM quota_usage
			WHERE period_start_utc < ?1 AND (account_id, period_start_utc) > (?2, ?3)
			ORDER BY account_id, period_start_utc LIMIT ?4`,
		del: func(ctx context.Context, tx *sqlx.Tx, keys []any, c *locrisk.PurgeCounts) error {
			return deleteAll(ctx, tx, keys, []sqlpurge.Delete{{SQL: `DELETE FROM quota_usage WHERE rowid IN (?)`, Count: &c.QuotaCounters}})
		},
	}
}

// idempotencyStep: idempotency keys past IdempotencyTTL (expired keys are
// already ignored; this keeps the table small), oldest first.
func idempotencyStep(expired string) purgeStep {
	return purgeStep{
		name:   "idempotency keys",
		cursor: [2]any{"", int64(0)},
		cutoff: expired,
		pick: `SELECT rowid, created_utc, rowid FROM idempotency_keys
			WHERE created_utc <= ?1 AND (created_utc, rowid) > (?2, ?3)
			ORDER BY created_utc, rowid LIMIT ?4`,
		del: func(ctx context.Context, tx *sqlx.Tx, keys []any, c *locrisk.PurgeCounts) error {
			return deleteAll(ctx, tx, keys, []sqlpurge.Delete{{SQL: `DELETE FROM idempotency_keys WHERE rowid IN (?)`, Count: &c.IdempotencyKeys}})
		},
	}
}
