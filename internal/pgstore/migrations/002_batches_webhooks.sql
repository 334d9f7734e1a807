-- Migration 2 of the PostgreSQL store: batches and their items, webhook
-- endpoints, events and deliveries (the outbox), the engine's reference
-- cache (docs/postgres.md).

-- A batch's counts are derived from its items' jobs when read; status and
-- completed_utc are kept so that the transition that completes a batch
-- can tell it is the one (under the batch row's lock).
CREATE TABLE batches (
    id            text PRIMARY KEY,
    account_id    text NOT NULL REFERENCES accounts (id),
    name          text NOT NULL DEFAULT '',
    total_items   integer NOT NULL,
    status        text NOT NULL CHECK (status IN ('processing', 'completed')),
    created_utc   timestamptz NOT NULL,
    completed_utc timestamptz
);
CREATE INDEX batches_list ON batches (account_id, created_utc DESC, id DESC);

CREATE TABLE batch_items (
    batch_id      text NOT NULL REFERENCES batches (id),
    row_number    integer NOT NULL,
    external_id   text NOT NULL DEFAULT '',
    latitude      double precision,
    longitude     double precision,
    job_id        text REFERENCES report_jobs (id),
    error_code    text,
    error_message text,
    PRIMARY KEY (batch_id, row_number)
);
CREATE INDEX batch_items_job ON batch_items (job_id) WHERE job_id IS NOT NULL;
CREATE INDEX report_jobs_batch ON report_jobs (batch_id) WHERE batch_id IS NOT NULL;

CREATE TABLE webhook_endpoints (
    id             text PRIMARY KEY,
    account_id     text NOT NULL REFERENCES accounts (id),
    name           text NOT NULL,
    url            text NOT NULL,
    events         text NOT NULL,
    signing_secret text NOT NULL,
    is_active      boolean NOT NULL DEFAULT true,
    created_utc    timestamptz NOT NULL,
    disabled_utc   timestamptz
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_utc DESC, id DESC);

CREATE TABLE webhook_events (
    id          text PRIMARY KEY,
    account_id  text NOT NULL REFERENCES accounts (id),
    type        text NOT NULL,
    job_id      text REFERENCES report_jobs (id),
    body        text NOT NULL,
    created_utc timestamptz NOT NULL
);
CREATE INDEX webhook_events_job ON webhook_events (job_id) WHERE job_id IS NOT NULL;

CREATE TABLE webhook_deliveries (
    id                text PRIMARY KEY,
    event_id          text NOT NULL REFERENCES webhook_events (id),
    endpoint_id       text NOT NULL REFERENCES webhook_endpoints (id),
    account_id        text NOT NULL REFERENCES accounts (id),
    status            text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts          integer NOT NULL DEFAULT 0,
    schedule_start    integer NOT NULL DEFAULT 0,
    response_status   integer,
    error             text,
    next_attempt_utc  timestamptz,
    lease_expires_utc timestamptz,
    last_attempt_utc  timestamptz,
    delivered_utc     timestamptz,
    created_utc       timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_utc) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_utc);
CREATE INDEX webhook_deliveries_account ON webhook_deliveries (account_id, created_utc DESC, id DESC);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

-- The accounts' turns at webhook deliveries, like job_queue_accounts.
CREATE SEQUENCE webhook_delivery_claims;
CREATE TABLE webhook_delivery_turns (
    account_id text PRIMARY KEY REFERENCES accounts (id),
    last_claim bigint NOT NULL
);

CREATE TABLE reference_cache (
    cache_key   text PRIMARY KEY,
    body        bytea NOT NULL,
    created_utc timestamptz NOT NULL
);
