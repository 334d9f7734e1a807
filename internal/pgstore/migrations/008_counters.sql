-- Migration 8 of the PostgreSQL store: counters that keep usage history,
-- period usage, queue depth, batch counts and the operations summary's
-- counts at a cost that does not grow with the jobs, batches and
-- deliveries held (docs/postgres.md, "Counters"). The same counts, in the
-- same meaning, as the SQLite store's migrations 010 and 012
-- (internal/sqlite/migrations): until now this store counted the rows
-- themselves at every read.
--
-- The counters are kept by triggers, not by the Go code that writes jobs:
-- every statement that inserts, updates or deletes a job, a batch, a
-- batch item or a webhook delivery keeps them right in its own
-- transaction, whichever code path or version of locrisk runs it (a node
-- not yet upgraded keeps writing while another migrates), and they commit
-- or roll back with the write (a creation refused in its savepoint takes
-- its counts with it). Each increment is an INSERT ... ON CONFLICT DO
-- UPDATE SET n = t.n + EXCLUDED.n or an UPDATE SET n = n + d, which lock
-- the counter row to the end of the transaction, so writers on several
-- nodes add one after the other and no count is lost.
--
-- Nothing here is written by a claim, a requeue or a lease renewal: those
-- are the most frequent writes, on every node at once, and a counter row
-- they all had to update would make them wait for each other's commits.
-- Queued and processing jobs are counted together as open (a claim moves
-- a job between the two and changes no counter); readers that need the
-- processing jobs alone count them from a partial index that holds only
-- them (report_jobs_processing below, or report_jobs_leases of migration
-- 1), since they are as few as the workers. The triggers on updates fire
-- only when a job moves into or out of open, completed or failed, or its
-- end time changes (WHEN clauses: no function call at all otherwise).
--
-- The counters of an account and hour are shared by every creation and
-- every end of its jobs, on every node, so they are updated at the
-- commit, not at the write (constraint triggers, DEFERRABLE INITIALLY
-- DEFERRED): a transaction holds the account's counter rows only from its
-- commit to the end of its flush to disk, rather than from its first job
-- written to then. Updated at the write, a transaction of 128 creations
-- (creations.go) held them through all its creations and every job's end
-- of the account waited for it: one account's jobs went from creation to
-- completion at half the rate (docs/postgres.md, "Counters"). A batch's
-- counts are on its own row, which the job's final transaction reads
-- (syncBatchStatus), so they are updated at the write.
--
-- Several counter rows are updated by one transaction, so two could wait
-- for each other in a circle. Each trigger updates its rows in key order,
-- and every transaction that updates several counter rows of an account
-- takes its queue_counts row first, so two of one account queue there
-- rather than crossing: a creation, an end or a retry changes a job's
-- open count, the first thing counted at its commit, and a batch's
-- creation, whose row is written before its jobs, takes the row before
-- counting it (batches_counters). A webhook delivery's attempt and a test
-- delivery update one counter row each. What remains, the purge against a
-- completion that touches an old hour, is a deadlock PostgreSQL breaks,
-- and the store runs the transaction again (withTx).
--
-- The counter tables leave room on their pages (fillfactor 70): a row is
-- updated many times while its hour is current (a queue_counts row, all
-- the time), and with room on its page each update can stay there (a
-- HOT update, without a new index entry), where the versions it leaves
-- are pruned when the page is next read, rather than spreading the row's
-- versions over new pages until a vacuum.

-- Writes wait while the counters are built and filled, so that no job
-- written meanwhile is missed or counted twice: once the triggers exist
-- (in this transaction), every write after this one's commit fires them,
-- and the backfill reads every write committed before.
LOCK TABLE report_jobs, batch_items, batches, webhook_deliveries IN SHARE ROW EXCLUSIVE MODE;

-- Usage per account, UTC hour and bucket (PeriodUsage, UsageHistory, and
-- the jobs created, completed and failed of OpsSummary). open, completed
-- and failed count the jobs created in the hour (created_utc) by their
-- status now (open: queued or processing), so their sum is the hour's
-- jobs created and a month's sums are its usage by status.
-- ended_completed and ended_failed count the jobs that are completed or
-- failed now and reached that state in the hour (completed_utc): a failed
-- job retried leaves its hour's count, and counts again in the hour it
-- ends again (docs/api.md, Usage). A deleted job (the retention purge)
-- leaves every count it was in, so the counts are always those of the
-- jobs held, as the rows counted before were. Rows are never deleted: at
-- most three per account and hour with jobs.
CREATE TABLE usage_hourly (
    account_id      text NOT NULL,
    hour            timestamptz NOT NULL,               -- the hour's start, UTC
    bucket          text NOT NULL,
    open            integer NOT NULL DEFAULT 0,
    completed       integer NOT NULL DEFAULT 0,
    failed          integer NOT NULL DEFAULT 0,
    ended_completed integer NOT NULL DEFAULT 0,
    ended_failed    integer NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, hour, bucket)
) WITH (fillfactor = 70);

-- The open jobs (queued or processing) of each account, whatever their
-- creation time: the queue depth (QueueDepth sums the accounts) and an
-- account's queued jobs now (OpsSummary), each less the processing jobs
-- (see above).
CREATE TABLE queue_counts (
    account_id text PRIMARY KEY,
    jobs_open  integer NOT NULL
) WITH (fillfactor = 70);

-- A batch's items by their job's status now (GetBatch, ListBatches):
-- open (queued or processing), completed and failed, and the items
-- rejected at creation, which have no job. status and completed_utc stay
-- syncBatchStatus's, set in the transaction of every job's final move and
-- of a retry: the batch completes when no item is open, at the latest end
-- of its jobs (its creation when all were rejected), which is what the
-- readers report.
ALTER TABLE batches
    ADD COLUMN items_open      integer NOT NULL DEFAULT 0,
    ADD COLUMN items_completed integer NOT NULL DEFAULT 0,
    ADD COLUMN items_failed    integer NOT NULL DEFAULT 0,
    ADD COLUMN items_rejected  integer NOT NULL DEFAULT 0;

-- Webhook deliveries and batches per account and UTC hour (OpsSummary):
-- deliveries created (by created_utc) and succeeded now (by
-- delivered_utc), batches created (by created_utc) and completed now (by
-- completed_utc). A deleted delivery or batch leaves its counts.
CREATE TABLE ops_hourly (
    account_id           text NOT NULL,
    hour                 timestamptz NOT NULL,          -- the hour's start, UTC
    deliveries_created   integer NOT NULL DEFAULT 0,
    deliveries_succeeded integer NOT NULL DEFAULT 0,
    batches_created      integer NOT NULL DEFAULT 0,
    batches_completed    integer NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, hour)
) WITH (fillfactor = 70);

-- report_jobs_counters keeps queue_counts and usage_hourly for one change
-- of a job: what its old row counted in (none for an insert) leaves, what
-- its new row counts in (none for a delete) enters. The deltas of each
-- counter row are summed first, so a job that ends in the hour it was
-- created updates that row once, and rows whose deltas cancel out are not
-- touched. Run at the commit (above), with the job's rows as they were at
-- the change.
CREATE FUNCTION report_jobs_counters() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    -- 1 when the old (o_) or new (n_) row counts in it, else 0; OLD is
    -- NULL in an insert, NEW in a delete.
    o_open int := 0; o_completed int := 0; o_failed int := 0; o_ended boolean := false;
    n_open int := 0; n_completed int := 0; n_failed int := 0; n_ended boolean := false;
BEGIN
    IF TG_OP <> 'INSERT' THEN
        o_open := (OLD.status IN ('queued', 'processing'))::int;
        o_completed := (OLD.status = 'completed')::int;
        o_failed := (OLD.status = 'failed')::int;
        o_ended := OLD.completed_utc IS NOT NULL AND OLD.status IN ('completed', 'failed');
    END IF;
    IF TG_OP <> 'DELETE' THEN
        n_open := (NEW.status IN ('queued', 'processing'))::int;
        n_completed := (NEW.status = 'completed')::int;
        n_failed := (NEW.status = 'failed')::int;
        n_ended := NEW.completed_utc IS NOT NULL AND NEW.status IN ('completed', 'failed');
    END IF;

    -- First the account's open jobs (see the header: this row is where
    -- one account's writers queue).
    INSERT INTO queue_counts AS q (account_id, jobs_open)
        SELECT v.account_id, SUM(v.d)
        FROM (VALUES (OLD.account_id, -o_open), (NEW.account_id, n_open)) AS v(account_id, d)
        WHERE v.account_id IS NOT NULL
        GROUP BY v.account_id HAVING SUM(v.d) <> 0
        ORDER BY v.account_id
        ON CONFLICT (account_id) DO UPDATE SET jobs_open = q.jobs_open + EXCLUDED.jobs_open;

    INSERT INTO usage_hourly AS u (account_id, hour, bucket, open, completed, failed, ended_completed, ended_failed)
        SELECT v.account_id, v.hour, v.bucket, SUM(v.op), SUM(v.co), SUM(v.fa), SUM(v.ec), SUM(v.ef)
        FROM (VALUES
            (OLD.account_id, date_trunc('hour', OLD.created_utc, 'UTC'), OLD.bucket, -o_open, -o_completed, -o_failed, 0, 0),
            (NEW.account_id, date_trunc('hour', NEW.created_utc, 'UTC'), NEW.bucket, n_open, n_completed, n_failed, 0, 0),
            (CASE WHEN o_ended THEN OLD.account_id END, date_trunc('hour', OLD.completed_utc, 'UTC'), OLD.bucket,
                0, 0, 0, -o_completed, -o_failed),
            (CASE WHEN n_ended THEN NEW.account_id END, date_trunc('hour', NEW.completed_utc, 'UTC'), NEW.bucket,
                0, 0, 0, n_completed, n_failed)
        ) AS v(account_id, hour, bucket, op, co, fa, ec, ef)
        WHERE v.account_id IS NOT NULL
        GROUP BY v.account_id, v.hour, v.bucket
        HAVING SUM(v.op) <> 0 OR SUM(v.co) <> 0 OR SUM(v.fa) <> 0 OR SUM(v.ec) <> 0 OR SUM(v.ef) <> 0
        ORDER BY v.account_id, v.hour, v.bucket
        ON CONFLICT (account_id, hour, bucket) DO UPDATE SET
            open = u.open + EXCLUDED.open, completed = u.completed + EXCLUDED.completed,
            failed = u.failed + EXCLUDED.failed, ended_completed = u.ended_completed + EXCLUDED.ended_completed,
            ended_failed = u.ended_failed + EXCLUDED.ended_failed;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER report_jobs_counters_insert AFTER INSERT ON report_jobs
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION report_jobs_counters();
-- Open, completed and failed are what is counted, so a move between
-- queued and processing (a claim, a requeue) is none of the WHEN's
-- changes; no code changes the account, creation time or bucket, but were
-- one changed, the job would move to its new rows.
CREATE CONSTRAINT TRIGGER report_jobs_counters_update
    AFTER UPDATE OF status, completed_utc, account_id, created_utc, bucket ON report_jobs
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (
        (CASE WHEN OLD.status IN ('queued', 'processing') THEN 'open' ELSE OLD.status END)
            IS DISTINCT FROM (CASE WHEN NEW.status IN ('queued', 'processing') THEN 'open' ELSE NEW.status END)
        OR OLD.completed_utc IS DISTINCT FROM NEW.completed_utc
        OR OLD.account_id <> NEW.account_id OR OLD.created_utc <> NEW.created_utc OR OLD.bucket <> NEW.bucket)
    EXECUTE FUNCTION report_jobs_counters();
CREATE CONSTRAINT TRIGGER report_jobs_counters_delete AFTER DELETE ON report_jobs
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION report_jobs_counters();

-- report_jobs_batch_counts keeps a batch's counts of its jobs, as
-- report_jobs_counters keeps the account's: a batch's job is its item,
-- counted from its insert (in CreateBatch, after the batch row) and
-- through its moves; the purge deletes it only with its batch. At the
-- write, in the job's statement, so that syncBatchStatus, later in the
-- same transaction, reads the batch's open items with this move counted.
CREATE FUNCTION report_jobs_batch_counts() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    UPDATE batches b SET items_open = b.items_open + d.op, items_completed = b.items_completed + d.co,
            items_failed = b.items_failed + d.fa
        FROM (SELECT v.id, SUM(v.op) AS op, SUM(v.co) AS co, SUM(v.fa) AS fa
            FROM (VALUES
                (OLD.batch_id, -(OLD.status IN ('queued', 'processing'))::int, -(OLD.status = 'completed')::int,
                    -(OLD.status = 'failed')::int),
                (NEW.batch_id, (NEW.status IN ('queued', 'processing'))::int, (NEW.status = 'completed')::int,
                    (NEW.status = 'failed')::int)
            ) AS v(id, op, co, fa)
            WHERE v.id IS NOT NULL
            GROUP BY v.id HAVING SUM(v.op) <> 0 OR SUM(v.co) <> 0 OR SUM(v.fa) <> 0) AS d
        WHERE b.id = d.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER report_jobs_batch_counts_insert AFTER INSERT ON report_jobs
    FOR EACH ROW WHEN (NEW.batch_id IS NOT NULL) EXECUTE FUNCTION report_jobs_batch_counts();
CREATE TRIGGER report_jobs_batch_counts_update AFTER UPDATE OF status, batch_id ON report_jobs
    FOR EACH ROW WHEN ((OLD.batch_id IS NOT NULL OR NEW.batch_id IS NOT NULL) AND (
        (CASE WHEN OLD.status IN ('queued', 'processing') THEN 'open' ELSE OLD.status END)
            IS DISTINCT FROM (CASE WHEN NEW.status IN ('queued', 'processing') THEN 'open' ELSE NEW.status END)
        OR OLD.batch_id IS DISTINCT FROM NEW.batch_id))
    EXECUTE FUNCTION report_jobs_batch_counts();
CREATE TRIGGER report_jobs_batch_counts_delete AFTER DELETE ON report_jobs
    FOR EACH ROW WHEN (OLD.batch_id IS NOT NULL) EXECUTE FUNCTION report_jobs_batch_counts();

-- The rejected items: those without a job. (An item with a job counts as
-- its job, above.) Items are never changed after their insert, but were
-- one given or taken its job, or moved, it would count where it ends up.
CREATE FUNCTION batch_items_rejected() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    UPDATE batches b SET items_rejected = b.items_rejected + d.n
        FROM (SELECT v.id, SUM(v.n) AS n
            FROM (VALUES (CASE WHEN OLD.job_id IS NULL THEN OLD.batch_id END, -1),
                         (CASE WHEN NEW.job_id IS NULL THEN NEW.batch_id END, 1)) AS v(id, n)
            WHERE v.id IS NOT NULL
            GROUP BY v.id HAVING SUM(v.n) <> 0) AS d
        WHERE b.id = d.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER batch_items_rejected_insert AFTER INSERT ON batch_items
    FOR EACH ROW WHEN (NEW.job_id IS NULL) EXECUTE FUNCTION batch_items_rejected();
CREATE TRIGGER batch_items_rejected_update AFTER UPDATE OF batch_id, job_id ON batch_items
    FOR EACH ROW WHEN ((OLD.job_id IS NULL OR NEW.job_id IS NULL)
        AND (OLD.job_id IS DISTINCT FROM NEW.job_id OR OLD.batch_id <> NEW.batch_id))
    EXECUTE FUNCTION batch_items_rejected();
CREATE TRIGGER batch_items_rejected_delete AFTER DELETE ON batch_items
    FOR EACH ROW WHEN (OLD.job_id IS NULL) EXECUTE FUNCTION batch_items_rejected();

-- ops_hourly for one change of a delivery, as report_jobs_counters does
-- for usage_hourly, at the commit. A claim or a failed attempt changes
-- neither count: only an insert, a delete, and a move into or out of
-- succeeded (or of its delivery time) fire it.
CREATE FUNCTION webhook_deliveries_counters() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    o_succeeded boolean := TG_OP <> 'INSERT' AND OLD.status = 'succeeded' AND OLD.delivered_utc IS NOT NULL;
    n_succeeded boolean := TG_OP <> 'DELETE' AND NEW.status = 'succeeded' AND NEW.delivered_utc IS NOT NULL;
BEGIN
    INSERT INTO ops_hourly AS o (account_id, hour, deliveries_created, deliveries_succeeded)
        SELECT v.account_id, v.hour, SUM(v.c), SUM(v.s)
        FROM (VALUES
            (OLD.account_id, date_trunc('hour', OLD.created_utc, 'UTC'), -1, 0),
            (NEW.account_id, date_trunc('hour', NEW.created_utc, 'UTC'), 1, 0),
            (CASE WHEN o_succeeded THEN OLD.account_id END, date_trunc('hour', OLD.delivered_utc, 'UTC'), 0, -1),
            (CASE WHEN n_succeeded THEN NEW.account_id END, date_trunc('hour', NEW.delivered_utc, 'UTC'), 0, 1)
        ) AS v(account_id, hour, c, s)
        WHERE v.account_id IS NOT NULL
        GROUP BY v.account_id, v.hour HAVING SUM(v.c) <> 0 OR SUM(v.s) <> 0
        ORDER BY v.account_id, v.hour
        ON CONFLICT (account_id, hour) DO UPDATE SET
            deliveries_created = o.deliveries_created + EXCLUDED.deliveries_created,
            deliveries_succeeded = o.deliveries_succeeded + EXCLUDED.deliveries_succeeded;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER webhook_deliveries_counters_insert AFTER INSERT ON webhook_deliveries
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION webhook_deliveries_counters();
CREATE CONSTRAINT TRIGGER webhook_deliveries_counters_update
    AFTER UPDATE OF status, delivered_utc, account_id, created_utc ON webhook_deliveries
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (
        (OLD.status = 'succeeded' AND OLD.delivered_utc IS NOT NULL)
            IS DISTINCT FROM (NEW.status = 'succeeded' AND NEW.delivered_utc IS NOT NULL)
        OR (NEW.status = 'succeeded' AND OLD.delivered_utc IS DISTINCT FROM NEW.delivered_utc)
        OR OLD.account_id <> NEW.account_id OR OLD.created_utc <> NEW.created_utc)
    EXECUTE FUNCTION webhook_deliveries_counters();
CREATE CONSTRAINT TRIGGER webhook_deliveries_counters_delete AFTER DELETE ON webhook_deliveries
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION webhook_deliveries_counters();

-- ops_hourly for one change of a batch, at the commit: its creation, and
-- its completion (status and completed_utc, which syncBatchStatus sets in
-- the transaction that ends its last open item, or clears when a retry
-- opens one again). The item counts the triggers above update are none
-- of the columns that fire it.
CREATE FUNCTION batches_counters() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    o_completed boolean := TG_OP <> 'INSERT' AND OLD.status = 'completed' AND OLD.completed_utc IS NOT NULL;
    n_completed boolean := TG_OP <> 'DELETE' AND NEW.status = 'completed' AND NEW.completed_utc IS NOT NULL;
BEGIN
    IF TG_OP = 'INSERT' THEN
        -- Before the batch's jobs take it at this commit (see the header).
        PERFORM 1 FROM queue_counts WHERE account_id = NEW.account_id FOR NO KEY UPDATE;
    END IF;
    INSERT INTO ops_hourly AS o (account_id, hour, batches_created, batches_completed)
        SELECT v.account_id, v.hour, SUM(v.c), SUM(v.d)
        FROM (VALUES
            (OLD.account_id, date_trunc('hour', OLD.created_utc, 'UTC'), -1, 0),
            (NEW.account_id, date_trunc('hour', NEW.created_utc, 'UTC'), 1, 0),
            (CASE WHEN o_completed THEN OLD.account_id END, date_trunc('hour', OLD.completed_utc, 'UTC'), 0, -1),
            (CASE WHEN n_completed THEN NEW.account_id END, date_trunc('hour', NEW.completed_utc, 'UTC'), 0, 1)
        ) AS v(account_id, hour, c, d)
        WHERE v.account_id IS NOT NULL
        GROUP BY v.account_id, v.hour HAVING SUM(v.c) <> 0 OR SUM(v.d) <> 0
        ORDER BY v.account_id, v.hour
        ON CONFLICT (account_id, hour) DO UPDATE SET
            batches_created = o.batches_created + EXCLUDED.batches_created,
            batches_completed = o.batches_completed + EXCLUDED.batches_completed;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER batches_counters_insert AFTER INSERT ON batches
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION batches_counters();
CREATE CONSTRAINT TRIGGER batches_counters_update
    AFTER UPDATE OF status, completed_utc, account_id, created_utc ON batches
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (
        (OLD.status = 'completed' AND OLD.completed_utc IS NOT NULL)
            IS DISTINCT FROM (NEW.status = 'completed' AND NEW.completed_utc IS NOT NULL)
        OR (NEW.status = 'completed' AND OLD.completed_utc IS DISTINCT FROM NEW.completed_utc)
        OR OLD.account_id <> NEW.account_id OR OLD.created_utc <> NEW.created_utc)
    EXECUTE FUNCTION batches_counters();
CREATE CONSTRAINT TRIGGER batches_counters_delete AFTER DELETE ON batches
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION batches_counters();

-- The backfill: what the triggers would have counted for the rows held.
INSERT INTO usage_hourly (account_id, hour, bucket, open, completed, failed, ended_completed, ended_failed)
    SELECT account_id, hour, bucket, SUM(op), SUM(co), SUM(fa), SUM(ec), SUM(ef)
    FROM (
        SELECT account_id, date_trunc('hour', created_utc, 'UTC') AS hour, bucket,
            (status IN ('queued', 'processing'))::int AS op, (status = 'completed')::int AS co,
            (status = 'failed')::int AS fa, 0 AS ec, 0 AS ef
        FROM report_jobs
        UNION ALL
        SELECT account_id, date_trunc('hour', completed_utc, 'UTC'), bucket, 0, 0, 0,
            (status = 'completed')::int, (status = 'failed')::int
        FROM report_jobs WHERE completed_utc IS NOT NULL AND status IN ('completed', 'failed')
    ) AS e
    GROUP BY account_id, hour, bucket;

INSERT INTO queue_counts (account_id, jobs_open)
    SELECT account_id, COUNT(*) FROM report_jobs WHERE status IN ('queued', 'processing') GROUP BY account_id;

UPDATE batches b SET items_open = c.op, items_completed = c.co, items_failed = c.fa, items_rejected = c.rj
    FROM (SELECT i.batch_id,
            COUNT(*) FILTER (WHERE j.status IN ('queued', 'processing')) AS op,
            COUNT(*) FILTER (WHERE j.status = 'completed') AS co,
            COUNT(*) FILTER (WHERE j.status = 'failed') AS fa,
            COUNT(*) FILTER (WHERE i.job_id IS NULL) AS rj
        FROM batch_items i LEFT JOIN report_jobs j ON j.id = i.job_id
        GROUP BY i.batch_id) AS c
    WHERE b.id = c.batch_id;

INSERT INTO ops_hourly (account_id, hour, deliveries_created, deliveries_succeeded, batches_created, batches_completed)
    SELECT account_id, hour, SUM(c), SUM(s), SUM(bc), SUM(bd)
    FROM (
        SELECT account_id, date_trunc('hour', created_utc, 'UTC') AS hour, 1 AS c, 0 AS s, 0 AS bc, 0 AS bd
        FROM webhook_deliveries
        UNION ALL
        SELECT account_id, date_trunc('hour', delivered_utc, 'UTC'), 0, 1, 0, 0 FROM webhook_deliveries
        WHERE status = 'succeeded' AND delivered_utc IS NOT NULL
        UNION ALL
        SELECT account_id, date_trunc('hour', created_utc, 'UTC'), 0, 0, 1, 0 FROM batches
        UNION ALL
        SELECT account_id, date_trunc('hour', completed_utc, 'UTC'), 0, 0, 0, 1 FROM batches
        WHERE status = 'completed' AND completed_utc IS NOT NULL
    ) AS e
    GROUP BY account_id, hour;

-- Indexes for what the readers still count from rows, each a range of
-- entries that does not grow with the history held:
--
-- The processing jobs, by account, batch and creation: an account's now
-- (OpsSummary), a batch's (GetBatch, ListBatches) and those of a billing
-- period (PeriodUsage). As few as the workers.
CREATE INDEX report_jobs_processing ON report_jobs (account_id, batch_id, created_utc) WHERE status = 'processing';
-- The failed jobs by end, newest first: the summary's recent failures,
-- which otherwise walked every job that ended in the window until it had
-- found enough failed ones.
CREATE INDEX report_jobs_failed ON report_jobs (account_id, completed_utc, id) WHERE status = 'failed';
-- Batches processing now, and completed in the part hours at a window's
-- ends (OpsSummary).
CREATE INDEX batches_by_status ON batches (account_id, status, completed_utc);
-- Deliveries succeeded in the part hours at a window's ends (OpsSummary).
CREATE INDEX webhook_deliveries_succeeded ON webhook_deliveries (account_id, delivered_utc) WHERE status = 'succeeded';
-- Deliveries failed, placed in time by their last attempt or, never
-- attempted, their creation: the failed count and the recent delivery
-- failures, newest first (OpsSummary).
CREATE INDEX webhook_deliveries_failed
    ON webhook_deliveries (account_id, (COALESCE(last_attempt_utc, created_utc)), id) WHERE status = 'failed';
