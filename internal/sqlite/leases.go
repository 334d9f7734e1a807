package sqlite

// Leases left by a process that stopped without handing them back (killed,
// crashed, the machine lost): see ReleaseLeftLeases.

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/locrisk/locrisk"
)

// LeftLeases counts what ReleaseLeftLeases handed back.
type LeftLeases struct {
	Jobs       int // processing jobs whose lease it ended
	Deliveries int // deliveries released (or failed, their endpoint disabled)
}

// ReleaseLeftLeases hands back, at now, the leases a process that is gone
// left in the database, so that its work goes on at once instead of when
// each lease expires (a webhook delivery lease runs 30 s, and while it
// runs it counts against its endpoint's and account's attempts in flight,
// so after a restart it held up every delivery to them).
//
// Only for a process that knows no other process uses these leases. serve
// knows it: it holds the database file's exclusive lock (internal/filelock;
// docs/operations.md, The database file), so no other serve runs on the
// file, and it alone delivers webhooks. Job leases are another matter:
// `locrisk report` runs a worker of its own beside the server, so only
// the jobs leased by owners whose id starts with jobOwnerPrefix (serve's
// workers, jobs.Config.OwnerPrefix) are taken back; "" takes none. A store
// shared by several live processes (a PostgreSQL store serving several
// nodes) cannot tell a dead process's leases from a live one's this way:
// it will need each process to own its leases under an id of its own, and
// to release only the ids of processes known to be gone.
//
//   - Deliveries leased are released as ReleaseWebhookDelivery releases
//     one: due again at once (their next attempt time is already past),
//     the lost attempt not counted (attempts count recorded outcomes);
//     one whose endpoint was disabled meanwhile fails.
//   - Jobs leased by the prefix's owners have their lease ended at now, so
//     the next claim takes them over as it takes over a job whose lease
//     expired: the lost attempt stays counted, so that a job that kills
//     its process every time still fails once its attempts are used
//     (internal/jobs) rather than loop through restarts for ever.
func (s *Store) ReleaseLeftLeases(ctx context.Context, jobOwnerPrefix string, now time.Time) (LeftLeases, error) {
	now = truncMs(now)
	var out LeftLeases
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		out = LeftLeases{}
		res, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET lease_expires_utc = NULL,
				status = CASE WHEN w.is_active = 1 THEN 'pending' ELSE 'failed' END,
				error = CASE WHEN w.is_active = 1 THEN webhook_deliveries.error ELSE ? END,
				next_attempt_utc = CASE WHEN w.is_active = 1 THEN webhook_deliveries.next_attempt_utc END
			FROM webhook_endpoints w
			WHERE w.id = webhook_deliveries.endpoint_id
			  AND webhook_deliveries.lease_expires_utc IS NOT NULL AND webhook_deliveries.status = 'pending'`,
			locrisk.ErrorEndpointDisabled)
		if err != nil {
			return fmt.Errorf("release webhook deliveries: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		out.Deliveries = int(n)
		if jobOwnerPrefix == "" {
			return nil
		}
		// A lease ending a millisecond ago has expired for every claim
		// from now on (ClaimJob takes a processing job whose lease ends
		// before its now).
		res, err = tx.ExecContext(ctx, `UPDATE report_jobs INDEXED BY report_jobs_leases SET lease_expires_utc = ?
			WHERE status = 'processing' AND lease_expires_utc >= ? AND substr(lease_owner, 1, length(?)) = ?`,
			FormatTime(now.Add(-time.Millisecond)), FormatTime(now), jobOwnerPrefix, jobOwnerPrefix)
		if err != nil {
			return fmt.Errorf("end the leases of jobs: %w", err)
		}
		n, err = res.RowsAffected()
		if err != nil {
			return err
		}
		out.Jobs = int(n)
		return nil
	})
	if err != nil {
		return LeftLeases{}, fmt.Errorf("release left leases: %w", err)
	}
	return out, nil
}
