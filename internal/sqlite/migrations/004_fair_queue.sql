-- Migration 4: a job claim whose cost does not grow with the queue, and
-- turns between accounts (schema version 4). Store.ClaimJob in
-- store/jobs.go is the reader of everything here.

-- Each account's queued jobs in claim order, oldest runnable first: the
-- claim reads the first entry of one account's range. Partial, so it holds
-- only the queue, not the jobs that have finished.
CREATE INDEX IF NOT EXISTS report_jobs_queued ON report_jobs(account_id, run_after_utc, created_utc)
    WHERE status = 'queued';
-- Jobs in hand by lease expiry: the claim takes over an expired one first.
CREATE INDEX IF NOT EXISTS report_jobs_leases ON report_jobs(lease_expires_utc)
    WHERE status = 'processing';

-- One row per account that has had a queued job: whose turn it is. The
-- claim serves the account with runnable work whose last claim is the
-- oldest, so one account's backlog delays another's job by at most one
-- claim per waiting account.
CREATE TABLE IF NOT EXISTS job_queue_accounts (
    account_id TEXT PRIMARY KEY REFERENCES accounts(id),
    last_claim INTEGER NOT NULL DEFAULT 0,               -- claim sequence number of its last claim; 0 never claimed
    has_queued INTEGER NOT NULL DEFAULT 1                -- 1 while it has queued jobs (kept by the triggers below)
);
CREATE INDEX IF NOT EXISTS job_queue_accounts_turns ON job_queue_accounts(last_claim) WHERE has_queued = 1;
CREATE INDEX IF NOT EXISTS job_queue_accounts_by_claim ON job_queue_accounts(last_claim);

-- has_queued follows the jobs in the transaction that moves them. Every way
-- a job becomes queued (created, retried by hand, retried after a transient
-- error, released at shutdown) marks its account as waiting; the account
-- keeps its place in the turns.
CREATE TRIGGER IF NOT EXISTS report_jobs_queue_insert AFTER INSERT ON report_jobs
    WHEN new.status = 'queued'
BEGIN
    INSERT INTO job_queue_accounts (account_id) VALUES (new.account_id)
        ON CONFLICT (account_id) DO UPDATE SET has_queued = 1 WHERE has_queued = 0;
END;
CREATE TRIGGER IF NOT EXISTS report_jobs_queue_update AFTER UPDATE OF status ON report_jobs
    WHEN new.status = 'queued' AND old.status <> 'queued'
BEGIN
    INSERT INTO job_queue_accounts (account_id) VALUES (new.account_id)
        ON CONFLICT (account_id) DO UPDATE SET has_queued = 1 WHERE has_queued = 0;
END;
-- Every way a job stops being queued (claimed, or a row deleted) looks
-- whether the account has any queued job left: one seek in
-- report_jobs_queued, pinned with INDEXED BY as the claim's queries are
-- (store/jobs.go) so that it never walks another index's long range.
CREATE TRIGGER IF NOT EXISTS report_jobs_dequeue_update AFTER UPDATE OF status ON report_jobs
    WHEN old.status = 'queued' AND new.status <> 'queued'
BEGIN
    UPDATE job_queue_accounts
        SET has_queued = EXISTS (SELECT 1 FROM report_jobs INDEXED BY report_jobs_queued
            WHERE status = 'queued' AND account_id = old.account_id)
        WHERE account_id = old.account_id;
END;
CREATE TRIGGER IF NOT EXISTS report_jobs_dequeue_delete AFTER DELETE ON report_jobs
    WHEN old.status = 'queued'
BEGIN
    UPDATE job_queue_accounts
        SET has_queued = EXISTS (SELECT 1 FROM report_jobs INDEXED BY report_jobs_queued
            WHERE status = 'queued' AND account_id = old.account_id)
        WHERE account_id = old.account_id;
END;

-- The accounts with jobs queued before this migration.
INSERT OR IGNORE INTO job_queue_accounts (account_id)
    SELECT DISTINCT account_id FROM report_jobs WHERE status = 'queued';
