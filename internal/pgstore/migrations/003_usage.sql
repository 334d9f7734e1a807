-- Migration 3 of the PostgreSQL store: hourly request statistics for the
-- operations summary, and the indexes its counts read (docs/postgres.md).

CREATE TABLE request_stats (
    account_id        text NOT NULL REFERENCES accounts (id),
    hour_utc          timestamptz NOT NULL,
    total             bigint NOT NULL DEFAULT 0,
    succeeded         bigint NOT NULL DEFAULT 0,
    client_errors     bigint NOT NULL DEFAULT 0,
    server_errors     bigint NOT NULL DEFAULT 0,
    rate_limited      bigint NOT NULL DEFAULT 0,
    latency_histogram jsonb NOT NULL DEFAULT '[]',
    PRIMARY KEY (account_id, hour_utc)
);

CREATE INDEX report_jobs_created ON report_jobs (account_id, created_utc);
CREATE INDEX report_jobs_ended ON report_jobs (account_id, completed_utc) WHERE completed_utc IS NOT NULL;
CREATE INDEX webhook_deliveries_account_created ON webhook_deliveries (account_id, created_utc);
