-- Migration 12: completion-time histograms per account and UTC hour, so
-- that the operations summary's completion percentiles cost the same
-- however many jobs completed in its window (schema version 12;
-- docs/api.md, Operations summary; docs/performance.md, "A large
-- database"). Until now the summary read one completion time per job of
-- its window from report_jobs_ended and sorted them: at millions of jobs
-- a day that is seconds.
--
-- A completion time is completed_utc - created_utc in whole milliseconds,
-- never negative: the expression of report_jobs_ended (migration 010) and
-- store.completionMs, written out the same way below.

-- The buckets: fixed, the same for every account and hour. Each is a
-- range [lower_ms, upper_ms] of whole milliseconds with value_ms, the
-- whole millisecond a percentile that falls in it is reported as, chosen
-- so that value_ms is within 5% of every time in the range:
--   value_ms = floor(lower_ms * 21 / 20)  so (value_ms - t) <= t / 20 for t >= lower_ms,
--   upper_ms = floor(value_ms * 20 / 19)  so (t - value_ms) <= t / 20 for t <= upper_ms,
-- and the next bucket starts at upper_ms + 1. Integer arithmetic only, so
-- the bounds are exact (SQLite's integer division truncates, which for
-- these non-negative numbers is the floor) and the table needs no math
-- functions. Up to 18 ms every bucket is one millisecond (exact); above,
-- each is about 21/19 (1.105) times the last. The recursion stops past
-- 10^13 ms (317 years); the last bucket is then opened to the largest
-- integer so that every time has a bucket (beyond the bound, and only
-- there, the 5% no longer holds). About 290 rows.
-- upper_ms is the rowid, so the bucket of a time is one seek.
CREATE TABLE completion_buckets (
    upper_ms INTEGER PRIMARY KEY,
    lower_ms INTEGER NOT NULL,
    value_ms INTEGER NOT NULL
);

INSERT INTO completion_buckets (upper_ms, lower_ms, value_ms)
    WITH RECURSIVE b(lower_ms, value_ms, upper_ms) AS (
        SELECT 0, 0, 0
        UNION ALL
        SELECT upper_ms + 1, (upper_ms + 1) * 21 / 20, (upper_ms + 1) * 21 / 20 * 20 / 19
        FROM b WHERE upper_ms < 10000000000000
    )
    SELECT upper_ms, lower_ms, value_ms FROM b;
UPDATE completion_buckets SET upper_ms = 9223372036854775807
    WHERE upper_ms = (SELECT MAX(upper_ms) FROM completion_buckets);

-- The jobs completed (status completed now) per account, period of
-- completed_utc and bucket (its upper_ms): the population of
-- usage_hourly's ended_completed, spread by completion time. Each job is
-- counted twice, in its UTC hour (span 'hour', period 'YYYY-MM-DDTHH') and
-- in its UTC day (span 'day', period 'YYYY-MM-DD'): the summary takes the
-- whole days of its hours from the day rows and only the hours around
-- them from the hour rows, so a week's histogram is read from at most 7
-- days and 46 hours of bucket rows rather than 169 hours of them (with
-- every hour's buckets in use, hour rows alone made the 168-hour summary's
-- p99 about 22 ms, over its 20 ms target; docs/performance.md, "A large
-- database"). A row exists only while its
-- count is above zero: the purge deletes old jobs, and the rows they
-- empty go with them, so the table holds no more hours than the jobs do.
CREATE TABLE completion_histograms (
    account_id TEXT NOT NULL,
    span       TEXT NOT NULL,                           -- 'hour' or 'day'
    period     TEXT NOT NULL,                           -- 'YYYY-MM-DDTHH' or 'YYYY-MM-DD', UTC
    bucket     INTEGER NOT NULL,                        -- completion_buckets.upper_ms
    jobs       INTEGER NOT NULL,
    PRIMARY KEY (account_id, span, period, bucket)
) WITHOUT ROWID;

-- The backfill counts what the triggers below would have counted for the
-- rows an older file holds.
INSERT INTO completion_histograms (account_id, span, period, bucket, jobs)
    WITH ended(account_id, hour, bucket) AS (
        SELECT account_id, substr(completed_utc, 1, 13),
            (SELECT MIN(upper_ms) FROM completion_buckets WHERE upper_ms >=
                MAX(0, CAST(round((julianday(completed_utc) - julianday(created_utc)) * 86400000) AS INTEGER)))
        FROM report_jobs WHERE status = 'completed' AND completed_utc IS NOT NULL
    ), hours(account_id, hour, bucket, jobs) AS (
        SELECT account_id, hour, bucket, COUNT(*) FROM ended GROUP BY 1, 2, 3
    )
    SELECT account_id, 'hour', hour, bucket, jobs FROM hours
    UNION ALL
    SELECT account_id, 'day', substr(hour, 1, 10), bucket, SUM(jobs) FROM hours GROUP BY 1, 3, 4;

-- Kept as migration 010 keeps usage_hourly (its header says why the
-- updates fire on UPDATE OF completed_utc only: every move into or out of
-- completed sets it, a claim or a requeue does not). A job enters its two
-- rows when it becomes completed and leaves them when it stops being
-- completed or is deleted (the retention purge), each a trigger of its
-- own whose WHEN is false for every other change. Each statement finds
-- its row by the whole primary key, the bucket by one seek in
-- completion_buckets (TestCompletionTriggerPlans). The statements are
-- plain and repeat the completion time's expression: together they cost
-- a job about 6-8 us of CPU (BenchmarkJobWritesCounters, "with" against
-- "no-histograms"; docs/performance.md, "The usage counters"), the day
-- row about half of it, while the same two rows written by one INSERT ...
-- SELECT over a two-row subquery, computing the bucket once, cost about
-- 25 us more. created_utc and account_id never change, so the old row's
-- bucket is found from the old values.

-- A job inserted already completed: only a restore or a test does that.
CREATE TRIGGER report_jobs_completion_insert AFTER INSERT ON report_jobs
    WHEN new.status = 'completed' AND new.completed_utc IS NOT NULL
BEGIN
    INSERT INTO completion_histograms (account_id, span, period, bucket, jobs)
        VALUES (new.account_id, 'hour', substr(new.completed_utc, 1, 13),
            (SELECT MIN(upper_ms) FROM completion_buckets WHERE upper_ms >=
                MAX(0, CAST(round((julianday(new.completed_utc) - julianday(new.created_utc)) * 86400000) AS INTEGER))), 1)
        ON CONFLICT (account_id, span, period, bucket) DO UPDATE SET jobs = jobs + 1;
    INSERT INTO completion_histograms (account_id, span, period, bucket, jobs)
        VALUES (new.account_id, 'day', substr(new.completed_utc, 1, 10),
            (SELECT MIN(upper_ms) FROM completion_buckets WHERE upper_ms >=
                MAX(0, CAST(round((julianday(new.completed_utc) - julianday(new.created_utc)) * 86400000) AS INTEGER))), 1)
        ON CONFLICT (account_id, span, period, bucket) DO UPDATE SET jobs = jobs + 1;
END;

CREATE TRIGGER report_jobs_completion_enter AFTER UPDATE OF completed_utc ON report_jobs
    WHEN new.status = 'completed' AND new.completed_utc IS NOT NULL
     AND (old.status IS NOT new.status OR old.completed_utc IS NOT new.completed_utc)
BEGIN
    INSERT INTO completion_histograms (account_id, span, period, bucket, jobs)
        VALUES (new.account_id, 'hour', substr(new.completed_utc, 1, 13),
            (SELECT MIN(upper_ms) FROM completion_buckets WHERE upper_ms >=
                MAX(0, CAST(round((julianday(new.completed_utc) - julianday(new.created_utc)) * 86400000) AS INTEGER))), 1)
        ON CONFLICT (account_id, span, period, bucket) DO UPDATE SET jobs = jobs + 1;
    INSERT INTO completion_histograms (account_id, span, period, bucket, jobs)
        VALUES (new.account_id, 'day', substr(new.completed_utc, 1, 10),
            (SELECT MIN(upper_ms) FROM completion_buckets WHERE upper_ms >=
                MAX(0, CAST(round((julianday(new.completed_utc) - julianday(new.created_utc)) * 86400000) AS INTEGER))), 1)
        ON CONFLICT (account_id, span, period, bucket) DO UPDATE SET jobs = jobs + 1;
END;

-- The rows a job leaves lose it, and go once empty; leaving and deleting
-- are the same statements.
CREATE TRIGGER report_jobs_completion_leave AFTER UPDATE OF completed_utc ON report_jobs
    WHEN old.status = 'completed' AND old.completed_utc IS NOT NULL
     AND (old.status IS NOT new.status OR old.completed_utc IS NOT new.completed_utc)
BEGIN
    UPDATE completion_histograms SET jobs = jobs - 1
        WHERE account_id = old.account_id AND span = 'hour' AND period = substr(old.completed_utc, 1, 13)
          AND bucket = (SELECT MIN(upper_ms) FROM completion_buckets WHERE upper_ms >=
                MAX(0, CAST(round((julianday(old.completed_utc) - julianday(old.created_utc)) * 86400000) AS INTEGER)));
    UPDATE completion_histograms SET jobs = jobs - 1
        WHERE account_id = old.account_id AND span = 'day' AND period = substr(old.completed_utc, 1, 10)
          AND bucket = (SELECT MIN(upper_ms) FROM completion_buckets WHERE upper_ms >=
                MAX(0, CAST(round((julianday(old.completed_utc) - julianday(old.created_utc)) * 86400000) AS INTEGER)));
    DELETE FROM completion_histograms
        WHERE account_id = old.account_id AND span = 'hour' AND period = substr(old.completed_utc, 1, 13)
          AND bucket = (SELECT MIN(upper_ms) FROM completion_buckets WHERE upper_ms >=
                MAX(0, CAST(round((julianday(old.completed_utc) - julianday(old.created_utc)) * 86400000) AS INTEGER)))
          AND jobs <= 0;
    DELETE FROM completion_histograms
        WHERE account_id = old.account_id AND span = 'day' AND period = substr(old.completed_utc, 1, 10)
          AND bucket = (SELECT MIN(upper_ms) FROM completion_buckets WHERE upper_ms >=
                MAX(0, CAST(round((julianday(old.completed_utc) - julianday(old.created_utc)) * 86400000) AS INTEGER)))
          AND jobs <= 0;
END;

CREATE TRIGGER report_jobs_completion_delete AFTER DELETE ON report_jobs
    WHEN old.status = 'completed' AND old.completed_utc IS NOT NULL
BEGIN
    UPDATE completion_histograms SET jobs = jobs - 1
        WHERE account_id = old.account_id AND span = 'hour' AND period = substr(old.completed_utc, 1, 13)
          AND bucket = (SELECT MIN(upper_ms) FROM completion_buckets WHERE upper_ms >=
                MAX(0, CAST(round((julianday(old.completed_utc) - julianday(old.created_utc)) * 86400000) AS INTEGER)));
    UPDATE completion_histograms SET jobs = jobs - 1
        WHERE account_id = old.account_id AND span = 'day' AND period = substr(old.completed_utc, 1, 10)
          AND bucket = (SELECT MIN(upper_ms) FROM completion_buckets WHERE upper_ms >=
                MAX(0, CAST(round((julianday(old.completed_utc) - julianday(old.created_utc)) * 86400000) AS INTEGER)));
    DELETE FROM completion_histograms
        WHERE account_id = old.account_id AND span = 'hour' AND period = substr(old.completed_utc, 1, 13)
          AND bucket = (SELECT MIN(upper_ms) FROM completion_buckets WHERE upper_ms >=
                MAX(0, CAST(round((julianday(old.completed_utc) - julianday(old.created_utc)) * 86400000) AS INTEGER)))
          AND jobs <= 0;
    DELETE FROM completion_histograms
        WHERE account_id = old.account_id AND span = 'day' AND period = substr(old.completed_utc, 1, 10)
          AND bucket = (SELECT MIN(upper_ms) FROM completion_buckets WHERE upper_ms >=
                MAX(0, CAST(round((julianday(old.completed_utc) - julianday(old.created_utc)) * 86400000) AS INTEGER)))
          AND jobs <= 0;
END;
