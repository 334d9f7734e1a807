-- Migration 9: batch listing, and webhook events that are not about a job
-- (schema version 9).

-- The batch list is paged newest first on (created_utc, id), like the job
-- list (store.ListBatches), so the account's batches need an index in that
-- order; it also serves everything the old one on (account_id,
-- created_utc) did.
DROP INDEX IF EXISTS batches_by_account;
CREATE INDEX IF NOT EXISTS batches_by_account
    ON batches(account_id, created_utc DESC, id DESC);

-- A webhook.test event (docs/api.md, Webhooks) belongs to no job, so
-- webhook_events.job_id becomes nullable. A batch.completed event keeps
-- the job whose final state completed the batch, so it goes with the
-- batch's jobs when they are purged. SQLite cannot drop a NOT NULL, so the
-- table is rebuilt; foreign keys are enforced inside a migration and
-- webhook_deliveries refers to the events, so the deliveries are rebuilt
-- with it (their new table refers to webhook_events_new, which the rename
-- below rewrites to webhook_events). Rows, ids and indexes stay as they
-- were. The deliveries gain schedule_start: a redelivery of a failed
-- delivery (store.RedeliverWebhook) keeps its attempt count and starts a
-- fresh retry schedule from there.
CREATE TABLE webhook_events_new (
    id          TEXT PRIMARY KEY,                        -- evt_...
    account_id  TEXT NOT NULL REFERENCES accounts(id),
    type        TEXT NOT NULL,                           -- report.job.completed | report.job.failed | batch.completed | webhook.test
    job_id      TEXT REFERENCES report_jobs(id),         -- the job; for batch.completed the one that completed the batch; NULL for webhook.test
    body        TEXT NOT NULL,                           -- the exact JSON sent
    created_utc TEXT NOT NULL
);
INSERT INTO webhook_events_new (id, account_id, type, job_id, body, created_utc)
    SELECT id, account_id, type, job_id, body, created_utc FROM webhook_events;

CREATE TABLE webhook_deliveries_new (
    id                TEXT PRIMARY KEY,                  -- wd_...
    event_id          TEXT NOT NULL REFERENCES webhook_events_new(id),
    endpoint_id       TEXT NOT NULL REFERENCES webhook_endpoints(id),
    account_id        TEXT NOT NULL REFERENCES accounts(id),
    status            TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts          INTEGER NOT NULL DEFAULT 0,
    schedule_start    INTEGER NOT NULL DEFAULT 0,        -- attempts when the current retry schedule began (a redelivery starts a new one)
    response_status   INTEGER,                           -- last HTTP status received
    error             TEXT,                              -- last error, sanitised and short
    next_attempt_utc  TEXT,                              -- NULL once final
    lease_expires_utc TEXT,                              -- set while an attempt is in flight
    created_utc       TEXT NOT NULL,
    last_attempt_utc  TEXT,
    delivered_utc     TEXT
);
INSERT INTO webhook_deliveries_new (id, event_id, endpoint_id, account_id, status, attempts, response_status,
        error, next_attempt_utc, lease_expires_utc, created_utc, last_attempt_utc, delivered_utc)
    SELECT id, event_id, endpoint_id, account_id, status, attempts, response_status,
        error, next_attempt_utc, lease_expires_utc, created_utc, last_attempt_utc, delivered_utc
    FROM webhook_deliveries;

DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
ALTER TABLE webhook_events_new RENAME TO webhook_events;
ALTER TABLE webhook_deliveries_new RENAME TO webhook_deliveries;

CREATE INDEX webhook_events_by_job ON webhook_events(job_id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_utc);
CREATE INDEX webhook_deliveries_by_account ON webhook_deliveries(account_id, created_utc DESC, id DESC);
CREATE INDEX webhook_deliveries_endpoint_due
    ON webhook_deliveries(endpoint_id, next_attempt_utc, created_utc) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_leased
    ON webhook_deliveries(endpoint_id, lease_expires_utc) WHERE lease_expires_utc IS NOT NULL;
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries(event_id);
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries(endpoint_id);
CREATE INDEX webhook_deliveries_account_leased
    ON webhook_deliveries(account_id, lease_expires_utc) WHERE lease_expires_utc IS NOT NULL;
