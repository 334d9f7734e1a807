package pgstore

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
)

// Purge deletes what p allows of what this store holds (finished jobs and
// their reports, old API keys, quota counters of past months, expired
// idempotency keys), at most p.Batch rows of a kind per transaction, and
// returns the counts, with what it had committed on an error. With
// p.DryRun it counts and deletes nothing.
func (s *Store) Purge(ctx context.Context, p locrisk.PurgePolicy) (locrisk.PurgeCounts, error) {
	var c locrisk.PurgeCounts
	batch := p.Batch
	if batch <= 0 {
		batch = locrisk.DefaultPurgeBatch
	}
	type step struct {
		count *int64
		// where picks the rows ($1 the cut-off); before runs on the picked
		// ids first (the reports of the jobs).
		table, where string
		cutoff       any
		reports      bool
	}
	var steps []step
	if !p.Before.IsZero() {
		before := ms(p.Before)
		steps = append(steps,
			step{&c.Jobs, "report_jobs", `completed_utc IS NOT NULL AND completed_utc < $1 AND batch_id IS NULL
				AND status IN ('completed', 'failed')`, before, true},
			step{&c.Keys, "api_keys", `revoked_utc < $1 OR expires_utc < $1`, before, false},
			step{&c.QuotaCounters, "quota_usage", `period_start_utc < $1`, locrisk.MonthStart(before), false})
	}
	if !p.Now.IsZero() {
		steps = append(steps, step{&c.IdempotencyKeys, "idempotency_keys", `created_utc <= $1`,
			ms(p.Now.Add(-locrisk.IdempotencyTTL)), false})
	}
	for _, st := range steps {
		if p.DryRun {
			var n int64
			if err := s.db.GetContext(ctx, &n, `SELECT COUNT(*) FROM `+st.table+` WHERE `+st.where, st.cutoff); err != nil {
				return c, fmt.Errorf("purge %s: %w", st.table, err)
			}
			*st.count += n
			if st.reports {
				if err := s.db.GetContext(ctx, &n, `SELECT COUNT(*) FROM reports WHERE job_id IN
					(SELECT id FROM report_jobs WHERE `+st.where+`)`, st.cutoff); err != nil {
					return c, fmt.Errorf("purge reports: %w", err)
				}
				c.Reports += n
			}
			continue
		}
		for {
			var deleted, reports int64
			err := s.withTx(ctx, func(tx *sqlx.Tx) error {
				deleted, reports = 0, 0
				pick := `SELECT ctid FROM ` + st.table + ` WHERE ` + st.where + ` LIMIT $2 FOR UPDATE SKIP LOCKED`
				if st.reports {
					res, err := tx.ExecContext(ctx, `DELETE FROM reports WHERE job_id IN
						(SELECT id FROM report_jobs WHERE ctid IN (`+pick+`))`, st.cutoff, batch)
					if err != nil {
						return err
					}
					if reports, err = res.RowsAffected(); err != nil {
						return err
					}
				}
				res, err := tx.ExecContext(ctx, `DELETE FROM `+st.table+` WHERE ctid IN (`+pick+`)`, st.cutoff, batch)
				if err != nil {
					return err
				}
				deleted, err = res.RowsAffected()
				return err
			})
			if err != nil {
				return c, fmt.Errorf("purge %s: %w", st.table, err)
			}
			*st.count += deleted
			c.Reports += reports
			if deleted < int64(batch) {
				break
			}
		}
	}
	return c, nil
}
