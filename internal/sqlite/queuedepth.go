package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/locrisk/locrisk"
)

// queueDepthQuery reads QueueDepth in one statement. Each part reads an
// index that holds only the backlog it describes, pinned with INDEXED BY:
// the partial indexes of the queued jobs (report_jobs_queued, migration
// 004; one pass gives their count and the earliest run_after_utc) and of
// the jobs held (report_jobs_leases), and webhook_deliveries_due (migration
// 001). Its cost is the size of the backlog, never the size of the history.
const queueDepthQuery = `SELECT q.n, (SELECT count(*) FROM report_jobs INDEXED BY report_jobs_leases WHERE status = 'processing'),
	q.oldest,
	(SELECT count(*) FROM webhook_deliveries INDEXED BY webhook_deliveries_due WHERE status = 'pending')
	FROM (SELECT count(*) AS n, min(run_after_utc) AS oldest FROM report_jobs INDEXED BY report_jobs_queued WHERE status = 'queued') AS q`

// QueueDepth reads the backlog of the job queue and the webhook outbox in
// one read (WAL: it never waits for a writer).
func (s *Store) QueueDepth(ctx context.Context) (locrisk.QueueDepth, error) {
	var d locrisk.QueueDepth
	var oldest sql.NullString
	if err := s.db.QueryRowContext(ctx, queueDepthQuery).Scan(&d.JobsQueued, &d.JobsProcessing, &oldest, &d.DeliveriesQueued); err != nil {
		return locrisk.QueueDepth{}, fmt.Errorf("queue depth: %w", err)
	}
	if oldest.Valid {
		t, err := ParseTime(oldest.String)
		if err != nil {
			return locrisk.QueueDepth{}, fmt.Errorf("queue depth: %w", err)
		}
		d.OldestRunnable = t
	}
	return d, nil
}
