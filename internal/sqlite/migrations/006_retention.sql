-- Migration 6: the indexes the retention purge needs (schema version 6).
--
-- The purge (store/purge.go) walks each kind of record oldest first in
-- small transactions, so each walk needs an index in its order, and it
-- must find the rows that still reference a record before deleting it.

-- Single jobs that reached a final state, by the time they did (batch jobs
-- go with their batch).
CREATE INDEX IF NOT EXISTS report_jobs_single_by_end ON report_jobs(completed_utc, id)
    WHERE batch_id IS NULL AND completed_utc IS NOT NULL;
-- Completed batches by the time they completed.
CREATE INDEX IF NOT EXISTS batches_by_completion ON batches(completed_utc, id)
    WHERE status = 'completed';
-- A job's webhook events, an event's deliveries, an endpoint's deliveries:
-- the references a purged job or endpoint must not leave behind.
CREATE INDEX IF NOT EXISTS webhook_events_by_job ON webhook_events(job_id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_event ON webhook_deliveries(event_id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_endpoint ON webhook_deliveries(endpoint_id);
-- Disabled endpoints by the time they were disabled.
CREATE INDEX IF NOT EXISTS webhook_endpoints_disabled ON webhook_endpoints(disabled_utc, id)
    WHERE is_active = 0;
