package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// QueueDepth is the backlog of the two queues at one moment, as serve's
// metrics listener shows it (README.md, Metrics).
type QueueDepth struct {
	JobsQueued     int // report jobs waiting for a worker, backoffs included
	JobsProcessing int // report jobs a worker holds
	// OldestRunnable is the earliest run_after_utc of the queued jobs:
	// when the job that has waited longest became runnable (its creation,
	// or its retry). Zero when no job is queued; it may lie in the future
	// when every queued job is in a retry backoff.
	OldestRunnable   time.Time
	DeliveriesQueued int // webhook deliveries pending (due now or later)
}

// queueDepthQuery reads QueueDepth in one statement. Each part is a range
// of an index on (status, ...) pinned with INDEXED BY (report_jobs_runnable
// and webhook_deliveries_due, migration 001), so its cost is the size of the
// backlog it counts, never the size of the history, and the minimum is one
// seek.
const queueDepthQuery = `SELECT
	(SELECT count(*) FROM report_jobs INDEXED BY report_jobs_runnable WHERE status = 'queued'),
	(SELECT count(*) FROM report_jobs INDEXED BY report_jobs_runnable WHERE status = 'processing'),
	(SELECT min(run_after_utc) FROM report_jobs INDEXED BY report_jobs_runnable WHERE status = 'queued'),
	(SELECT count(*) FROM webhook_deliveries INDEXED BY webhook_deliveries_due WHERE status = 'pending')`

// QueueDepth reads the backlog of the job queue and the webhook outbox in
// one read (WAL: it never waits for a writer).
func (s *Store) QueueDepth(ctx context.Context) (QueueDepth, error) {
	var d QueueDepth
	var oldest sql.NullString
	if err := s.db.QueryRowContext(ctx, queueDepthQuery).Scan(&d.JobsQueued, &d.JobsProcessing, &oldest, &d.DeliveriesQueued); err != nil {
		return QueueDepth{}, fmt.Errorf("queue depth: %w", err)
	}
	if oldest.Valid {
		t, err := ParseTime(oldest.String)
		if err != nil {
			return QueueDepth{}, fmt.Errorf("queue depth: %w", err)
		}
		d.OldestRunnable = t
	}
	return d, nil
}
