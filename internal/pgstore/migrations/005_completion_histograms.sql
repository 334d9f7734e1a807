-- Migration 5 of the PostgreSQL store: completion-time histograms per
-- account and UTC hour and day, so that the operations summary's
-- completion percentiles cost the same however many jobs completed in its
-- window. The same approach, buckets and bounds as the SQLite store's
-- migration 012 (internal/sqlite/migrations), so both stores answer a
-- percentile with the same bucket value, within 5% of the exact one.
--
-- A completion time is completed_utc - created_utc in whole milliseconds,
-- never negative (both are stored at millisecond precision).

-- The buckets, fixed: [lower_ms, upper_ms] reported as value_ms, with
--   value_ms = floor(lower_ms * 21 / 20)  so (value_ms - t) <= t / 20 for t >= lower_ms,
--   upper_ms = floor(value_ms * 20 / 19)  so (t - value_ms) <= t / 20 for t <= upper_ms,
-- and the next bucket starting at upper_ms + 1. bigint division truncates,
-- which for these non-negative numbers is the floor, so the rows are the
-- SQLite store's exactly. The last is opened to the largest bigint so that
-- every time has a bucket. upper_ms is the primary key: a time's bucket
-- is one index seek (the smallest upper_ms at or above it).
CREATE TABLE completion_buckets (
    upper_ms bigint PRIMARY KEY,
    lower_ms bigint NOT NULL,
    value_ms bigint NOT NULL
);

INSERT INTO completion_buckets (upper_ms, lower_ms, value_ms)
    WITH RECURSIVE b(lower_ms, value_ms, upper_ms) AS (
        SELECT 0::bigint, 0::bigint, 0::bigint
        UNION ALL
        SELECT upper_ms + 1, (upper_ms + 1) * 21 / 20, (upper_ms + 1) * 21 / 20 * 20 / 19
        FROM b WHERE upper_ms < 10000000000000
    )
    SELECT upper_ms, lower_ms, value_ms FROM b;
UPDATE completion_buckets SET upper_ms = 9223372036854775807
    WHERE upper_ms = (SELECT MAX(upper_ms) FROM completion_buckets);

-- completion_bucket is the bucket (its upper_ms) of a job's completion.
-- STABLE, not IMMUTABLE: it reads a table.
CREATE FUNCTION completion_bucket(created timestamptz, completed timestamptz) RETURNS bigint
    LANGUAGE sql STABLE AS $$
    SELECT MIN(upper_ms) FROM completion_buckets
    WHERE upper_ms >= GREATEST(0, round(EXTRACT(EPOCH FROM completed - created) * 1000))::bigint
$$;

-- The jobs completed (status completed now) per account, period and
-- bucket, each job counted twice: in its UTC hour (span 'hour', period the
-- hour's start) and in its UTC day (span 'day', period midnight UTC), so
-- that a week's summary reads at most 7 days and 46 hours of rows rather
-- than 169 hours (the SQLite store's migration 012 says why). A row exists
-- only while its count is above zero, so the purge of old jobs takes
-- their rows with them.
CREATE TABLE completion_histograms (
    account_id text NOT NULL,
    span       text NOT NULL CHECK (span IN ('hour', 'day')),
    period     timestamptz NOT NULL,
    bucket     bigint NOT NULL,
    jobs       bigint NOT NULL,
    PRIMARY KEY (account_id, span, period, bucket)
);

-- The backfill: what the trigger below would have counted for the jobs
-- already held.
INSERT INTO completion_histograms (account_id, span, period, bucket, jobs)
    SELECT account_id, s.span, date_trunc(s.span, completed_utc, 'UTC'),
        completion_bucket(created_utc, completed_utc), COUNT(*)
    FROM report_jobs, (VALUES ('hour'), ('day')) AS s(span)
    WHERE status = 'completed' AND completed_utc IS NOT NULL
    GROUP BY 1, 2, 3, 4;

-- Kept by a trigger, so that every path that moves a job into or out of
-- completed (completion, a requeue, the purge, a restore) counts it, in
-- the transaction that moves it: the counts commit or roll back with the
-- job. A job leaves the rows of its old values and enters those of its
-- new ones only when its status or completion time changes. The increment
-- is an INSERT ... ON CONFLICT DO UPDATE, which locks the row to the end
-- of the transaction, so concurrent completions on several nodes add one
-- after the other and no count is lost.
CREATE FUNCTION report_jobs_completion_count() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    was boolean := TG_OP IN ('UPDATE', 'DELETE') AND OLD.status = 'completed' AND OLD.completed_utc IS NOT NULL;
    is_now boolean := TG_OP IN ('INSERT', 'UPDATE') AND NEW.status = 'completed' AND NEW.completed_utc IS NOT NULL;
    sp text; -- not span: a variable named like a column is ambiguous
BEGIN
    IF TG_OP = 'UPDATE' AND was AND is_now AND OLD.completed_utc = NEW.completed_utc
       AND OLD.created_utc = NEW.created_utc AND OLD.account_id = NEW.account_id THEN
        RETURN NULL; -- still counted where it was
    END IF;
    FOREACH sp IN ARRAY ARRAY['hour', 'day'] LOOP
        IF was THEN
            UPDATE completion_histograms SET jobs = jobs - 1
                WHERE account_id = OLD.account_id AND completion_histograms.span = sp
                  AND period = date_trunc(sp, OLD.completed_utc, 'UTC')
                  AND bucket = completion_bucket(OLD.created_utc, OLD.completed_utc);
            DELETE FROM completion_histograms
                WHERE account_id = OLD.account_id AND completion_histograms.span = sp
                  AND period = date_trunc(sp, OLD.completed_utc, 'UTC')
                  AND bucket = completion_bucket(OLD.created_utc, OLD.completed_utc)
                  AND jobs <= 0;
        END IF;
        IF is_now THEN
            INSERT INTO completion_histograms AS h (account_id, span, period, bucket, jobs)
                VALUES (NEW.account_id, sp, date_trunc(sp, NEW.completed_utc, 'UTC'),
                    completion_bucket(NEW.created_utc, NEW.completed_utc), 1)
                ON CONFLICT (account_id, span, period, bucket) DO UPDATE SET jobs = h.jobs + 1;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

CREATE TRIGGER report_jobs_completion_count
    AFTER INSERT OR UPDATE OF status, completed_utc, created_utc, account_id OR DELETE ON report_jobs
    FOR EACH ROW EXECUTE FUNCTION report_jobs_completion_count();
