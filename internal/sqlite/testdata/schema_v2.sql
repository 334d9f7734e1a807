-- Test data: schema.sql as committed in b0e507b (schema version 2), the
-- idempotent file older binaries applied; the migration tests build files
-- from it.
--
-- locrisk database schema. Applied at start-up by store.Open when the file's
-- PRAGMA user_version is lower than the version below; every statement is
-- idempotent so a half-applied file can be applied again.
--
-- Conventions: identifiers are the prefixed strings of CONTRACT section 1;
-- times are UTC text 'YYYY-MM-DDTHH:MM:SS.sssZ' (fixed width, so they sort
-- as text); booleans are 0/1 integers.
--
-- schema_version: 2 (2 added quota_usage)

CREATE TABLE IF NOT EXISTS accounts (
    id                    TEXT PRIMARY KEY,              -- acct_...
    name                  TEXT NOT NULL,
    monthly_quota         INTEGER NOT NULL CHECK (monthly_quota >= 0),
    rate_limit_per_minute INTEGER NOT NULL CHECK (rate_limit_per_minute > 0),
    created_utc           TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS api_keys (
    id            TEXT PRIMARY KEY,                      -- key_...
    account_id    TEXT NOT NULL REFERENCES accounts(id),
    secret_hash   TEXT NOT NULL UNIQUE,                  -- hex SHA-256 of the lrk_ secret
    secret_hint   TEXT NOT NULL,                         -- 'lrk_' + first 4 characters, for listings
    scopes        TEXT NOT NULL,                         -- space-separated scope names
    scope_version INTEGER NOT NULL DEFAULT 2,            -- 1: key from before usage:read existed
    allowed_cidrs TEXT NOT NULL DEFAULT '',              -- space-separated CIDRs; '' allows any address
    expires_utc   TEXT,                                  -- NULL: never expires
    revoked_utc   TEXT,
    created_utc   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS api_keys_by_account ON api_keys(account_id, created_utc);

-- Report jobs. bucket is the usage bucket: api (single jobs), bulk (batch
-- items), manual (operator command line).
CREATE TABLE IF NOT EXISTS report_jobs (
    id                TEXT PRIMARY KEY,                  -- job_...
    account_id        TEXT NOT NULL REFERENCES accounts(id),
    batch_id          TEXT REFERENCES batches(id),
    bucket            TEXT NOT NULL CHECK (bucket IN ('api', 'bulk', 'manual')),
    latitude          REAL NOT NULL,
    longitude         REAL NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('queued', 'processing', 'completed', 'failed')),
    attempts          INTEGER NOT NULL DEFAULT 0,        -- generation attempts started, across retries
    error_code        TEXT,
    error_message     TEXT,
    error_transient   INTEGER,
    report_id         TEXT,                              -- set when completed
    run_after_utc     TEXT NOT NULL,                     -- not claimed before this time (retry backoff)
    lease_owner       TEXT,                              -- worker holding the job while processing
    lease_expires_utc TEXT,                              -- after this a processing job may be claimed again
    created_utc       TEXT NOT NULL,
    updated_utc       TEXT NOT NULL,
    completed_utc     TEXT                               -- set when completed or failed
);
CREATE INDEX IF NOT EXISTS report_jobs_by_account ON report_jobs(account_id, created_utc DESC, id DESC);
CREATE INDEX IF NOT EXISTS report_jobs_runnable ON report_jobs(status, run_after_utc);
CREATE INDEX IF NOT EXISTS report_jobs_by_batch ON report_jobs(batch_id) WHERE batch_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS report_jobs_by_completion ON report_jobs(account_id, completed_utc) WHERE completed_utc IS NOT NULL;

-- Reports are written once, in the transaction that completes their job,
-- and never recomputed. body is the full report JSON.
CREATE TABLE IF NOT EXISTS reports (
    id            TEXT PRIMARY KEY,                      -- lowercase UUID
    job_id        TEXT NOT NULL UNIQUE REFERENCES report_jobs(id),
    account_id    TEXT NOT NULL REFERENCES accounts(id),
    generated_utc TEXT NOT NULL,
    data_version  TEXT NOT NULL,
    body          TEXT NOT NULL
);

-- Report jobs created per account and calendar month (UTC), the quota's
-- "used". It is counted up in the transaction that creates the jobs, so the
-- quota check reads one row instead of counting the month's jobs.
CREATE TABLE IF NOT EXISTS quota_usage (
    account_id       TEXT NOT NULL REFERENCES accounts(id),
    period_start_utc TEXT NOT NULL,                     -- first instant of the month
    report_jobs      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, period_start_utc)
);
-- Version 2 backfills the counters from the jobs a version 1 file holds
-- (a no-op on a new file).
INSERT OR IGNORE INTO quota_usage (account_id, period_start_utc, report_jobs)
    SELECT account_id, substr(created_utc, 1, 7) || '-01T00:00:00.000Z', COUNT(*)
    FROM report_jobs GROUP BY account_id, substr(created_utc, 1, 7);

-- Idempotency keys, remembered 24 hours per account and kind.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    kind         TEXT NOT NULL CHECK (kind IN ('report_job', 'batch')),
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,                          -- hex SHA-256 of the canonical request
    resource_id  TEXT NOT NULL,                          -- job_... or bat_...
    created_utc  TEXT NOT NULL,
    PRIMARY KEY (account_id, kind, key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_by_age ON idempotency_keys(created_utc);

CREATE TABLE IF NOT EXISTS batches (
    id            TEXT PRIMARY KEY,                      -- bat_...
    account_id    TEXT NOT NULL REFERENCES accounts(id),
    name          TEXT NOT NULL DEFAULT '',
    total_items   INTEGER NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('processing', 'completed')),
    created_utc   TEXT NOT NULL,
    completed_utc TEXT
);
CREATE INDEX IF NOT EXISTS batches_by_account ON batches(account_id, created_utc);

-- One row per item of a batch request, valid or not. A valid item has a job;
-- a rejected one has the error instead.
CREATE TABLE IF NOT EXISTS batch_items (
    batch_id      TEXT NOT NULL REFERENCES batches(id),
    row_number    INTEGER NOT NULL,                      -- 1-based position in the request
    external_id   TEXT NOT NULL DEFAULT '',
    latitude      REAL,                                  -- NULL when the item had no usable number
    longitude     REAL,
    job_id        TEXT REFERENCES report_jobs(id),       -- NULL for rejected items
    error_code    TEXT,                                  -- set for rejected items
    error_message TEXT,
    PRIMARY KEY (batch_id, row_number)
);
CREATE INDEX IF NOT EXISTS batch_items_by_job ON batch_items(job_id) WHERE job_id IS NOT NULL;

-- Per-hour, per-account request aggregates for the operations summary.
-- latency_histogram is a JSON array of counts per bucket of
-- server.latencyBucketsMs (upper bounds in milliseconds, last is +Inf).
CREATE TABLE IF NOT EXISTS request_stats (
    account_id        TEXT NOT NULL REFERENCES accounts(id),
    hour_utc          TEXT NOT NULL,                     -- start of the hour
    total             INTEGER NOT NULL DEFAULT 0,
    succeeded         INTEGER NOT NULL DEFAULT 0,        -- 1xx-3xx
    client_errors     INTEGER NOT NULL DEFAULT 0,        -- 4xx
    server_errors     INTEGER NOT NULL DEFAULT 0,        -- 5xx
    rate_limited      INTEGER NOT NULL DEFAULT 0,        -- 429 rate_limit_exceeded
    latency_histogram TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (account_id, hour_utc)
);

CREATE TABLE IF NOT EXISTS webhook_endpoints (
    id             TEXT PRIMARY KEY,                     -- we_...
    account_id     TEXT NOT NULL REFERENCES accounts(id),
    name           TEXT NOT NULL,
    url            TEXT NOT NULL,
    events         TEXT NOT NULL,                        -- space-separated event names
    signing_secret TEXT NOT NULL,                        -- whsec_...; needed in clear to sign
    is_active      INTEGER NOT NULL DEFAULT 1,
    created_utc    TEXT NOT NULL,
    disabled_utc   TEXT
);
CREATE INDEX IF NOT EXISTS webhook_endpoints_by_account ON webhook_endpoints(account_id, created_utc);

-- The outbox: events are written in the transaction that moves a job to its
-- final state, with one delivery per subscribed active endpoint.
CREATE TABLE IF NOT EXISTS webhook_events (
    id          TEXT PRIMARY KEY,                        -- evt_...
    account_id  TEXT NOT NULL REFERENCES accounts(id),
    type        TEXT NOT NULL,                           -- report.job.completed | report.job.failed
    job_id      TEXT NOT NULL REFERENCES report_jobs(id),
    body        TEXT NOT NULL,                           -- the exact JSON sent
    created_utc TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id                TEXT PRIMARY KEY,                  -- wd_...
    event_id          TEXT NOT NULL REFERENCES webhook_events(id),
    endpoint_id       TEXT NOT NULL REFERENCES webhook_endpoints(id),
    account_id        TEXT NOT NULL REFERENCES accounts(id),
    status            TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts          INTEGER NOT NULL DEFAULT 0,
    response_status   INTEGER,                           -- last HTTP status received
    error             TEXT,                              -- last error, sanitised and short
    next_attempt_utc  TEXT,                              -- NULL once final
    lease_expires_utc TEXT,                              -- set while an attempt is in flight
    created_utc       TEXT NOT NULL,
    last_attempt_utc  TEXT,
    delivered_utc     TEXT
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries(status, next_attempt_utc);
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_account ON webhook_deliveries(account_id, created_utc DESC, id DESC);
