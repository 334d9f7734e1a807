package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/sqlpurge"
)

// purgeLock is the advisory lock a purge holds, so that one node purges
// at a time.
const purgeLock = 0x6c6f6370 // "locp"

// purgeStep is one kind of record the purge deletes: pick chooses the ids
// of at most $2 records past the cut-off $1; deletes remove them and what
// belongs to them ($1 the ids), each counted.
type purgeStep struct {
	pick    string
	cutoff  time.Time
	limit   int
	deletes []sqlpurge.Delete
}

// Purge deletes what p allows, with the SQLite store's rules
// (docs/operations.md, Retention): finished batches and jobs whose
// webhook deliveries are all done, with their reports, events and
// deliveries; disabled webhook endpoints no job delivery names; revoked or
// expired API keys; request statistics and quota counters past the
// cut-off; expired idempotency keys. Each kind goes in transactions of at
// most p.Batch records (a batch counting as up to 100); with p.DryRun,
// one transaction counts everything and rolls back. While another node
// purges, a purge does nothing and counts nothing.
func (s *Store) Purge(ctx context.Context, p locrisk.PurgePolicy) (locrisk.PurgeCounts, error) {
	p, err := p.Normalized()
	if err != nil {
		return locrisk.PurgeCounts{}, err
	}
	var c locrisk.PurgeCounts
	batch := p.Batch
	var steps []purgeStep
	if !p.Before.IsZero() {
		before := ms(p.Before)
		steps = append(steps,
			purgeStep{pick: `SELECT b.id FROM batches b WHERE b.status = 'completed' AND b.completed_utc < $1
				AND NOT EXISTS (SELECT 1 FROM report_jobs j WHERE j.batch_id = b.id
					AND (j.status NOT IN ('completed', 'failed') OR j.completed_utc IS NULL OR j.completed_utc >= $1))
				AND ` + sqlpurge.NoPendingDelivery(`e.job_id IN (SELECT id FROM report_jobs WHERE batch_id = b.id)`) + `
				ORDER BY b.completed_utc, b.id LIMIT $2`,
				cutoff: before, limit: p.BatchesPerTx(),
				deletes: append(sqlpurge.JobDeletes(`SELECT id FROM report_jobs WHERE batch_id = ANY($1)`, &c),
					sqlpurge.Delete{SQL: `DELETE FROM batch_items WHERE batch_id = ANY($1)`, Count: &c.BatchItems},
					sqlpurge.Delete{SQL: `DELETE FROM report_jobs WHERE batch_id = ANY($1)`, Count: &c.Jobs},
					sqlpurge.Delete{SQL: `DELETE FROM batches WHERE id = ANY($1)`, Count: &c.Batches})},
			purgeStep{pick: `SELECT j.id FROM report_jobs j WHERE j.batch_id IS NULL AND j.status IN ('completed', 'failed')
				AND j.completed_utc < $1 AND ` + sqlpurge.NoPendingDelivery(`e.job_id = j.id`) + `
				AND ` + sqlpurge.NotWatched("j") + `
				ORDER BY j.completed_utc, j.id LIMIT $2`,
				cutoff: before, limit: batch,
				deletes: append(sqlpurge.JobDeletes(`SELECT unnest($1::text[])`, &c),
					sqlpurge.Delete{SQL: `DELETE FROM report_jobs WHERE id = ANY($1)`, Count: &c.Jobs})},
			purgeStep{pick: `SELECT w.id FROM webhook_endpoints w WHERE NOT w.is_active AND w.disabled_utc < $1
				AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
					WHERE d.endpoint_id = w.id AND e.job_id IS NOT NULL)
				ORDER BY w.disabled_utc, w.id LIMIT $2`,
				cutoff: before, limit: batch,
				deletes: []sqlpurge.Delete{
					{SQL: `DELETE FROM webhook_deliveries WHERE endpoint_id = ANY($1)
						AND event_id IN (SELECT id FROM webhook_events WHERE job_id IS NULL)`, Count: &c.Deliveries},
					{SQL: `DELETE FROM webhook_events WHERE job_id IS NULL
						AND account_id IN (SELECT account_id FROM webhook_endpoints WHERE id = ANY($1))
						AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`, Count: &c.Events},
					{SQL: `DELETE FROM webhook_endpoints WHERE id = ANY($1)`, Count: &c.Endpoints}}},
			purgeStep{pick: `SELECT id FROM api_keys WHERE revoked_utc < $1 OR expires_utc < $1 ORDER BY created_utc, id LIMIT $2`,
				cutoff: before, limit: batch,
				deletes: []sqlpurge.Delete{{SQL: `DELETE FROM api_keys WHERE id = ANY($1)`, Count: &c.Keys}}},
			purgeStep{pick: `SELECT ctid::text FROM request_stats WHERE hour_utc < $1 ORDER BY account_id, hour_utc LIMIT $2`,
				cutoff: before, limit: batch,
				deletes: []sqlpurge.Delete{{SQL: `DELETE FROM request_stats WHERE ctid = ANY($1::tid[])`, Count: &c.RequestStats}}},
			purgeStep{pick: `SELECT ctid::text FROM quota_usage WHERE period_start_utc < $1 ORDER BY account_id, period_start_utc LIMIT $2`,
				cutoff: ms(p.QuotaCutoff()), limit: batch,
				deletes: []sqlpurge.Delete{{SQL: `DELETE FROM quota_usage WHERE ctid = ANY($1::tid[])`, Count: &c.QuotaCounters}}})
	}
	steps = append(steps, purgeStep{pick: `SELECT ctid::text FROM idempotency_keys WHERE created_utc <= $1
		ORDER BY created_utc LIMIT $2`,
		cutoff: ms(p.IdempotencyCutoff()), limit: batch,
		deletes: []sqlpurge.Delete{{SQL: `DELETE FROM idempotency_keys WHERE ctid = ANY($1::tid[])`, Count: &c.IdempotencyKeys}}})
	if p.DryRun {
		// Everything at once in one transaction, rolled back: the counts
		// of a real run (see locrisk.PurgePolicy.DryRun).
		tx, err := s.db.BeginTxx(ctx, nil)
		if err != nil {
			return c, fmt.Errorf("purge (dry run): %w", err)
		}
		defer tx.Rollback()
		for _, st := range steps {
			st.limit = 1 << 30
			if _, err := runPurgeStep(ctx, tx, st); err != nil {
				return locrisk.PurgeCounts{}, fmt.Errorf("purge (dry run): %w", err)
			}
		}
		return c, nil
	}
	// One node purges at a time: the others find the lock taken and leave
	// the work to it (their hourly run counts nothing).
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return c, fmt.Errorf("purge: %w", err)
	}
	defer conn.Close()
	var mine bool
	if err := conn.GetContext(ctx, &mine, `SELECT pg_try_advisory_lock($1)`, purgeLock); err != nil {
		return c, fmt.Errorf("purge: %w", err)
	}
	if !mine {
		return c, nil
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, purgeLock)
	for _, st := range steps {
		for {
			before := c
			var picked int
			err := s.withTx(ctx, func(tx *sqlx.Tx) error {
				c = before // a retried transaction counts afresh
				var err error
				picked, err = runPurgeStep(ctx, tx, st)
				return err
			})
			if err != nil {
				c = before
				return c, fmt.Errorf("purge: %w", err)
			}
			if picked < st.limit {
				break
			}
		}
	}
	return c, nil
}

// runPurgeStep picks one transaction's worth of st's records and deletes
// them, adding to the counts; it returns how many it picked.
func runPurgeStep(ctx context.Context, tx *sqlx.Tx, st purgeStep) (int, error) {
	var keys []string
	if err := tx.SelectContext(ctx, &keys, st.pick, st.cutoff, st.limit); err != nil {
		return 0, err
	}
	if len(keys) == 0 {
		return 0, nil
	}
	for _, d := range st.deletes {
		res, err := tx.ExecContext(ctx, d.SQL, keys)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		*d.Count += n
	}
	return len(keys), nil
}
