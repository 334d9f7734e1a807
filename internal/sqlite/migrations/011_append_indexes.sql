-- Migration 11: fewer and cheaper index writes per job created (schema
-- version 11; README.md, "Durable job creation and scale").
--
-- Every job created writes one entry into each index of report_jobs, and
-- under load that is most of the single writer's time. Two changes:
--
-- report_jobs_by_account and report_jobs_by_status are rebuilt ascending.
-- A new job has the newest created_utc, so in a descending index its entry
-- went at the front of its account's range, splitting pages in the middle
-- of the tree; ascending, it goes at the end, as a time-ordered key
-- should. The lists still read newest first: SQLite walks an index
-- backwards for ORDER BY created_utc DESC, id DESC (TestListJobsQueryPlan).
--
-- report_jobs_runnable (status, run_after_utc) is dropped: it was written
-- by every job created, claimed and ended, and read only by the workers'
-- "anything to do?" check and the queue gauges, which now read the partial
-- indexes of the queued jobs (report_jobs_queued, per account) and of the
-- jobs held (report_jobs_leases), each sized by the backlog it describes
-- (store.claimPrecheck, store.queueDepthQuery).

DROP INDEX IF EXISTS report_jobs_runnable;

DROP INDEX IF EXISTS report_jobs_by_account;
CREATE INDEX report_jobs_by_account ON report_jobs(account_id, created_utc, id);

DROP INDEX IF EXISTS report_jobs_by_status;
CREATE INDEX report_jobs_by_status ON report_jobs(account_id, status, created_utc, id);
