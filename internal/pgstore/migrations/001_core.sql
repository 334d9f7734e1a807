-- Migration 1 of the PostgreSQL store: accounts, API keys, report jobs and
-- their reports, the job queue's turns, quotas and idempotency keys
-- (docs/postgres.md). Times are timestamptz at millisecond precision, as
-- every store keeps them (service.go).

CREATE TABLE accounts (
    id                    text PRIMARY KEY,
    name                  text NOT NULL,
    monthly_quota         integer NOT NULL CHECK (monthly_quota >= 0),
    rate_limit_per_minute integer NOT NULL CHECK (rate_limit_per_minute > 0),
    created_utc           timestamptz NOT NULL,
    disabled_utc          timestamptz
);

CREATE TABLE api_keys (
    id            text PRIMARY KEY,
    account_id    text NOT NULL REFERENCES accounts (id),
    name          text NOT NULL DEFAULT '',
    secret_hash   text NOT NULL UNIQUE,
    secret_hint   text NOT NULL,
    scopes        text NOT NULL,
    scope_version integer NOT NULL,
    allowed_cidrs text NOT NULL DEFAULT '',
    expires_utc   timestamptz,
    revoked_utc   timestamptz,
    created_utc   timestamptz NOT NULL,
    last_used_utc timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id, created_utc, id);

-- One row per account and calendar month: the jobs created. A creation
-- adds to it with INSERT ... ON CONFLICT DO UPDATE, which locks the row,
-- so concurrent creations of one account, on any node, count one after
-- the other and the quota is never overshot.
CREATE TABLE quota_usage (
    account_id       text NOT NULL REFERENCES accounts (id),
    period_start_utc timestamptz NOT NULL,
    report_jobs      integer NOT NULL,
    PRIMARY KEY (account_id, period_start_utc)
);

-- The primary key makes one idempotency key one resource: a second insert
-- of the key waits for the first's transaction and then does nothing.
CREATE TABLE idempotency_keys (
    account_id   text NOT NULL REFERENCES accounts (id),
    kind         text NOT NULL,
    key          text NOT NULL,
    request_hash text NOT NULL,
    resource_id  text NOT NULL,
    created_utc  timestamptz NOT NULL,
    PRIMARY KEY (account_id, kind, key)
);

CREATE TABLE report_jobs (
    id                text PRIMARY KEY,
    account_id        text NOT NULL REFERENCES accounts (id),
    batch_id          text,
    bucket            text NOT NULL,
    latitude          double precision NOT NULL,
    longitude         double precision NOT NULL,
    status            text NOT NULL,
    attempts          integer NOT NULL DEFAULT 0,
    error_code        text,
    error_message     text,
    error_transient   boolean,
    report_id         text,
    run_after_utc     timestamptz NOT NULL,
    lease_owner       text,
    lease_expires_utc timestamptz,
    created_utc       timestamptz NOT NULL,
    updated_utc       timestamptz NOT NULL,
    completed_utc     timestamptz
);
CREATE INDEX report_jobs_list ON report_jobs (account_id, created_utc DESC, id DESC);
CREATE INDEX report_jobs_queued ON report_jobs (account_id, run_after_utc, created_utc, id) WHERE status = 'queued';
CREATE INDEX report_jobs_leases ON report_jobs (lease_expires_utc) WHERE status = 'processing';

-- The turns of the queue: each account's last claim, from one sequence,
-- so that claims on several nodes still order the accounts.
CREATE SEQUENCE job_claims;
CREATE TABLE job_queue_accounts (
    account_id text PRIMARY KEY REFERENCES accounts (id),
    last_claim bigint NOT NULL
);

CREATE TABLE reports (
    id            text PRIMARY KEY,
    job_id        text NOT NULL UNIQUE REFERENCES report_jobs (id),
    account_id    text NOT NULL REFERENCES accounts (id),
    generated_utc timestamptz NOT NULL,
    data_version  text NOT NULL,
    body          bytea NOT NULL,
    body_codec    text,
    overall_score integer,
    risk_level    text,
    module_scores jsonb
);

-- The keys reports are signed with (docs/verification.md): at most one
-- current key (retired_utc NULL), its private half sealed with the
-- server's secret key file and erased when retired.
CREATE TABLE signing_keys (
    id          text PRIMARY KEY,
    algorithm   text NOT NULL DEFAULT 'Ed25519',
    public_key  bytea NOT NULL,
    private_key text,
    created_utc timestamptz NOT NULL,
    retired_utc timestamptz,
    CHECK ((retired_utc IS NULL) = (private_key IS NOT NULL))
);
CREATE UNIQUE INDEX signing_keys_current ON signing_keys ((retired_utc IS NULL)) WHERE retired_utc IS NULL;
