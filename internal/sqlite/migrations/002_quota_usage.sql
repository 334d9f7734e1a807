-- Migration 2: per-month quota counters (schema version 2).

-- Report jobs created per account and calendar month (UTC), the quota's
-- "used". It is counted up in the transaction that creates the jobs, so the
-- quota check reads one row instead of counting the month's jobs.
CREATE TABLE IF NOT EXISTS quota_usage (
    account_id       TEXT NOT NULL REFERENCES accounts(id),
    period_start_utc TEXT NOT NULL,                     -- first instant of the month
    report_jobs      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, period_start_utc)
);
-- Backfill the counters from the jobs a version 1 file holds (a no-op on a
-- new file).
INSERT OR IGNORE INTO quota_usage (account_id, period_start_utc, report_jobs)
    SELECT account_id, substr(created_utc, 1, 7) || '-01T00:00:00.000Z', COUNT(*)
    FROM report_jobs GROUP BY account_id, substr(created_utc, 1, 7);
