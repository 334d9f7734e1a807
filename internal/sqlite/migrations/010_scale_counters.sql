-- Migration 10: counters and indexes that keep the usage, batch and
-- operations reads at a constant cost however many jobs the file holds
-- (schema version 10; README.md, "Durable job creation and scale").
--
-- The counters are kept by triggers, not by the Go code that writes jobs:
-- every statement that inserts, updates or deletes a job, a batch item or
-- a webhook delivery keeps them right in its own transaction, whichever
-- code path runs it. Each one is backfilled below from the rows an older
-- file holds.
--
-- SQLite compiles a table's triggers into every statement that writes it
-- when the statement is prepared, so what the triggers on report_jobs
-- hold is paid by every job written. Hence: a job's move between queued
-- and processing (a claim, a requeue) changes no counter, and the
-- triggers on updates fire on UPDATE OF completed_utc only, which every
-- move into or out of completed and failed sets (store.CompleteJob,
-- FailJob, RetryJob) and a claim or a requeue does not; the readers count
-- the processing jobs, which are as few as the workers, from
-- report_jobs_by_status. Batch jobs are counted when their item is
-- inserted (after the job, which its foreign key needs), not by a trigger
-- on every job insert.

-- Usage per account, UTC hour and bucket (store.PeriodUsage,
-- store.UsageHistory, and the jobs created of store.OpsSummary). open,
-- completed and failed count the jobs created that hour (by created_utc)
-- by their status now (open: queued or processing), so their sum is the
-- hour's jobs created and a month's sums are the month's usage by current
-- status. ended_completed and ended_failed count the jobs that are
-- completed or failed now and reached that state that hour (by
-- completed_utc), so a failed job that is retried leaves its hour's count
-- (docs/api.md, Usage). A deleted job (the retention purge) leaves every
-- count it was in. One table serves days and hours so that a job's insert
-- compiles one trigger statement, not one per table.
CREATE TABLE usage_hourly (
    account_id      TEXT NOT NULL,
    hour            TEXT NOT NULL,                      -- 'YYYY-MM-DDTHH', UTC
    bucket          TEXT NOT NULL,
    open            INTEGER NOT NULL DEFAULT 0,
    completed       INTEGER NOT NULL DEFAULT 0,
    failed          INTEGER NOT NULL DEFAULT 0,
    ended_completed INTEGER NOT NULL DEFAULT 0,
    ended_failed    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, hour, bucket)
) WITHOUT ROWID;

INSERT INTO usage_hourly (account_id, hour, bucket, open, completed, failed)
    SELECT account_id, substr(created_utc, 1, 13), bucket,
        SUM(status IN ('queued', 'processing')), SUM(status = 'completed'), SUM(status = 'failed')
    FROM report_jobs GROUP BY 1, 2, 3;
INSERT INTO usage_hourly (account_id, hour, bucket, ended_completed, ended_failed)
    SELECT account_id, substr(completed_utc, 1, 13), bucket, SUM(status = 'completed'), SUM(status = 'failed')
    FROM report_jobs WHERE completed_utc IS NOT NULL AND status IN ('completed', 'failed') GROUP BY 1, 2, 3
    ON CONFLICT (account_id, hour, bucket) DO UPDATE SET
        ended_completed = excluded.ended_completed, ended_failed = excluded.ended_failed;

-- The second row is for a job inserted already final, which only a
-- restore or a test does.
CREATE TRIGGER report_jobs_usage_insert AFTER INSERT ON report_jobs
BEGIN
    INSERT INTO usage_hourly (account_id, hour, bucket, open, completed, failed, ended_completed, ended_failed)
        SELECT new.account_id, substr(new.created_utc, 1, 13), new.bucket,
            new.status IN ('queued', 'processing'), new.status = 'completed', new.status = 'failed', 0, 0
        UNION ALL
        SELECT new.account_id, substr(new.completed_utc, 1, 13), new.bucket, 0, 0, 0,
            new.status = 'completed', new.status = 'failed'
        WHERE new.completed_utc IS NOT NULL AND new.status IN ('completed', 'failed')
        ON CONFLICT (account_id, hour, bucket) DO UPDATE SET
            open = open + excluded.open, completed = completed + excluded.completed, failed = failed + excluded.failed,
            ended_completed = ended_completed + excluded.ended_completed,
            ended_failed = ended_failed + excluded.ended_failed;
END;

CREATE TRIGGER report_jobs_usage_update AFTER UPDATE OF completed_utc ON report_jobs
    WHEN old.status IS NOT new.status OR old.completed_utc IS NOT new.completed_utc
BEGIN
    UPDATE usage_hourly SET
            open = open - (old.status IN ('queued', 'processing')) + (new.status IN ('queued', 'processing')),
            completed = completed - (old.status = 'completed') + (new.status = 'completed'),
            failed = failed - (old.status = 'failed') + (new.status = 'failed')
        WHERE account_id = new.account_id AND hour = substr(new.created_utc, 1, 13) AND bucket = new.bucket;
    UPDATE usage_hourly SET
            ended_completed = ended_completed - (old.status = 'completed'),
            ended_failed = ended_failed - (old.status = 'failed')
        WHERE old.completed_utc IS NOT NULL AND old.status IN ('completed', 'failed')
          AND account_id = old.account_id AND hour = substr(old.completed_utc, 1, 13) AND bucket = old.bucket;
    INSERT INTO usage_hourly (account_id, hour, bucket, ended_completed, ended_failed)
        SELECT new.account_id, substr(new.completed_utc, 1, 13), new.bucket,
            new.status = 'completed', new.status = 'failed'
        WHERE new.completed_utc IS NOT NULL AND new.status IN ('completed', 'failed')
        ON CONFLICT (account_id, hour, bucket) DO UPDATE SET
            ended_completed = ended_completed + excluded.ended_completed,
            ended_failed = ended_failed + excluded.ended_failed;
END;

CREATE TRIGGER report_jobs_usage_delete AFTER DELETE ON report_jobs
BEGIN
    UPDATE usage_hourly SET
            open = open - (old.status IN ('queued', 'processing')),
            completed = completed - (old.status = 'completed'),
            failed = failed - (old.status = 'failed')
        WHERE account_id = old.account_id AND hour = substr(old.created_utc, 1, 13) AND bucket = old.bucket;
    UPDATE usage_hourly SET
            ended_completed = ended_completed - (old.status = 'completed'),
            ended_failed = ended_failed - (old.status = 'failed')
        WHERE old.completed_utc IS NOT NULL AND old.status IN ('completed', 'failed')
          AND account_id = old.account_id AND hour = substr(old.completed_utc, 1, 13) AND bucket = old.bucket;
END;

-- Item counts on the batch (store.GetBatch, ListBatches): the items whose
-- job is open (queued or processing), completed or failed now, the
-- rejected items, and, while no item is open, the latest end
-- (completed_utc) of its jobs, which is when the batch completed (NULL
-- when it has no job: every item was rejected, and the batch completed at
-- its creation). They are the API's own columns: status and completed_utc
-- stay syncBatchStatus's, which the batch.completed event hangs on.
ALTER TABLE batches ADD COLUMN items_open INTEGER NOT NULL DEFAULT 0;
ALTER TABLE batches ADD COLUMN items_completed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE batches ADD COLUMN items_failed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE batches ADD COLUMN items_rejected INTEGER NOT NULL DEFAULT 0;
ALTER TABLE batches ADD COLUMN items_ended_utc TEXT;

UPDATE batches SET
    items_open = (SELECT COUNT(*) FROM batch_items i JOIN report_jobs j ON j.id = i.job_id
        WHERE i.batch_id = batches.id AND j.status IN ('queued', 'processing')),
    items_completed = (SELECT COUNT(*) FROM batch_items i JOIN report_jobs j ON j.id = i.job_id
        WHERE i.batch_id = batches.id AND j.status = 'completed'),
    items_failed = (SELECT COUNT(*) FROM batch_items i JOIN report_jobs j ON j.id = i.job_id
        WHERE i.batch_id = batches.id AND j.status = 'failed'),
    items_rejected = (SELECT COUNT(*) FROM batch_items i WHERE i.batch_id = batches.id AND i.job_id IS NULL);
UPDATE batches SET items_ended_utc = (SELECT MAX(j.completed_utc) FROM batch_items i JOIN report_jobs j ON j.id = i.job_id
        WHERE i.batch_id = batches.id)
    WHERE items_open = 0;

-- An item counts as its job when it is inserted. A job inserted already
-- final (only a restore or a test does that) can only move the latest end
-- later, so no other job is read.
CREATE TRIGGER batch_items_insert AFTER INSERT ON batch_items
BEGIN
    UPDATE batches SET
            items_rejected = items_rejected + (j.status IS NULL),
            items_open = items_open + (j.status IS 'queued' OR j.status IS 'processing'),
            items_completed = items_completed + (j.status IS 'completed'),
            items_failed = items_failed + (j.status IS 'failed'),
            items_ended_utc = CASE
                WHEN items_open + (j.status IS 'queued' OR j.status IS 'processing') > 0 THEN NULL
                WHEN items_ended_utc IS NULL OR j.completed_utc > items_ended_utc THEN j.completed_utc
                ELSE items_ended_utc END
        FROM (SELECT (SELECT status FROM report_jobs WHERE id = new.job_id) AS status,
                     (SELECT completed_utc FROM report_jobs WHERE id = new.job_id) AS completed_utc) AS j
        WHERE batches.id = new.batch_id;
END;

CREATE TRIGGER batch_items_delete AFTER DELETE ON batch_items
BEGIN
    UPDATE batches SET
            items_rejected = items_rejected - (j.status IS NULL),
            items_open = items_open - (j.status IS 'queued' OR j.status IS 'processing'),
            items_completed = items_completed - (j.status IS 'completed'),
            items_failed = items_failed - (j.status IS 'failed')
        FROM (SELECT (SELECT status FROM report_jobs WHERE id = old.job_id) AS status) AS j
        WHERE batches.id = old.batch_id;
END;

-- A job's final move changes its item's count. The latest end is read
-- from the batch's jobs (at most 100, by report_jobs_by_batch) only when
-- the last open item ends.
CREATE TRIGGER report_jobs_batch_update AFTER UPDATE OF completed_utc ON report_jobs
    WHEN new.batch_id IS NOT NULL AND (old.status IS NOT new.status OR old.completed_utc IS NOT new.completed_utc)
BEGIN
    UPDATE batches SET
            items_open = items_open - (old.status IN ('queued', 'processing')) + (new.status IN ('queued', 'processing')),
            items_completed = items_completed - (old.status = 'completed') + (new.status = 'completed'),
            items_failed = items_failed - (old.status = 'failed') + (new.status = 'failed'),
            items_ended_utc = CASE
                WHEN items_open - (old.status IN ('queued', 'processing')) + (new.status IN ('queued', 'processing')) > 0 THEN NULL
                ELSE (SELECT MAX(completed_utc) FROM report_jobs WHERE batch_id = new.batch_id) END
        WHERE id = new.batch_id;
END;

-- The operations summary (store.OpsSummary) counts events inside its
-- window and states of now; each of these indexes leads with the account
-- and the status, so every count is a range of the account's own entries
-- in the window (or in the state), not a walk over all its rows.
--
-- Jobs that ended, by status and end: the completed and failed counts,
-- the recent job failures and the completion-time percentiles. The last
-- column is the completion time in whole milliseconds (never negative),
-- computed once when the job ends, so the percentiles read it from the
-- index (store.completionMs is the same expression) instead of parsing
-- two times per job at every summary. julianday keeps the milliseconds
-- the times are stored with, and round() removes a double's error. It
-- replaces report_jobs_by_completion, whose queries all name the status.
DROP INDEX IF EXISTS report_jobs_by_completion;
CREATE INDEX report_jobs_ended ON report_jobs(account_id, status, completed_utc,
        MAX(0, CAST(round((julianday(completed_utc) - julianday(created_utc)) * 86400000) AS INTEGER)))
    WHERE completed_utc IS NOT NULL;
-- Batches processing now, and completed in the window.
CREATE INDEX batches_by_status ON batches(account_id, status, completed_utc);
-- Deliveries pending now, and succeeded in the window.
CREATE INDEX webhook_deliveries_by_status ON webhook_deliveries(account_id, status, delivered_utc);
-- Deliveries that failed, placed in time by their last attempt or, never
-- attempted, their creation (store.WebhookOps): the failed count and the
-- recent delivery failures, newest first.
CREATE INDEX webhook_deliveries_failed
    ON webhook_deliveries(account_id, COALESCE(last_attempt_utc, created_utc), id)
    WHERE status = 'failed';

-- The job list filtered by status (store.ListJobs, docs/api.md, List
-- jobs) is paged newest first like the whole list; without an index on
-- the status it walked report_jobs_by_account past every job of the
-- other statuses, all of them for a status the account's recent jobs
-- rarely have.
CREATE INDEX report_jobs_by_status ON report_jobs(account_id, status, created_utc DESC, id DESC);

-- Webhook deliveries per account and UTC hour that the operations
-- summary counts over its window (store.OpsSummary): created (by
-- created_utc) and succeeded now, by delivered_utc. The summary adds the
-- whole hours inside its window from here (and its jobs created from
-- usage_hourly) and counts the two part hours at its ends from the
-- indexes, so it reads at most an hour of rows of each kind however many
-- the window holds. A deleted delivery leaves its counts.
CREATE TABLE ops_hourly (
    account_id           TEXT NOT NULL,
    hour                 TEXT NOT NULL,                 -- 'YYYY-MM-DDTHH', UTC
    deliveries_created   INTEGER NOT NULL DEFAULT 0,
    deliveries_succeeded INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, hour)
) WITHOUT ROWID;

INSERT INTO ops_hourly (account_id, hour, deliveries_created)
    SELECT account_id, substr(created_utc, 1, 13), COUNT(*) FROM webhook_deliveries GROUP BY 1, 2;
INSERT INTO ops_hourly (account_id, hour, deliveries_succeeded)
    SELECT account_id, substr(delivered_utc, 1, 13), COUNT(*) FROM webhook_deliveries
    WHERE status = 'succeeded' AND delivered_utc IS NOT NULL GROUP BY 1, 2
    ON CONFLICT (account_id, hour) DO UPDATE SET deliveries_succeeded = excluded.deliveries_succeeded;

CREATE TRIGGER webhook_deliveries_ops_insert AFTER INSERT ON webhook_deliveries
BEGIN
    INSERT INTO ops_hourly (account_id, hour, deliveries_created, deliveries_succeeded)
        SELECT new.account_id, substr(new.created_utc, 1, 13), 1, 0
        UNION ALL
        SELECT new.account_id, substr(new.delivered_utc, 1, 13), 0, 1
        WHERE new.status = 'succeeded' AND new.delivered_utc IS NOT NULL
        ON CONFLICT (account_id, hour) DO UPDATE SET
            deliveries_created = deliveries_created + excluded.deliveries_created,
            deliveries_succeeded = deliveries_succeeded + excluded.deliveries_succeeded;
END;

CREATE TRIGGER webhook_deliveries_ops_update AFTER UPDATE OF status, delivered_utc ON webhook_deliveries
    WHEN old.status IS NOT new.status OR old.delivered_utc IS NOT new.delivered_utc
BEGIN
    UPDATE ops_hourly SET deliveries_succeeded = deliveries_succeeded - 1
        WHERE old.status = 'succeeded' AND old.delivered_utc IS NOT NULL
          AND account_id = old.account_id AND hour = substr(old.delivered_utc, 1, 13);
    INSERT INTO ops_hourly (account_id, hour, deliveries_succeeded)
        SELECT new.account_id, substr(new.delivered_utc, 1, 13), 1
        WHERE new.status = 'succeeded' AND new.delivered_utc IS NOT NULL
        ON CONFLICT (account_id, hour) DO UPDATE SET deliveries_succeeded = deliveries_succeeded + 1;
END;

CREATE TRIGGER webhook_deliveries_ops_delete AFTER DELETE ON webhook_deliveries
BEGIN
    UPDATE ops_hourly SET deliveries_created = deliveries_created - 1
        WHERE account_id = old.account_id AND hour = substr(old.created_utc, 1, 13);
    UPDATE ops_hourly SET deliveries_succeeded = deliveries_succeeded - 1
        WHERE old.status = 'succeeded' AND old.delivered_utc IS NOT NULL
          AND account_id = old.account_id AND hour = substr(old.delivered_utc, 1, 13);
END;
