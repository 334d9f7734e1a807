-- Migration 9 of the PostgreSQL store: watchlists, whose items are
-- re-scored when the data or methodology changes (docs/api.md,
-- Watchlists). The tables are the SQLite store's (its migration 15).

-- The watch item a job scores, its first job or a re-score; NULL for every
-- other job. No foreign key: an item may be removed while its job runs.
ALTER TABLE report_jobs ADD COLUMN watch_item_id text;

CREATE TABLE watchlists (
    id                    text PRIMARY KEY,
    account_id            text NOT NULL REFERENCES accounts (id),
    name                  text NOT NULL DEFAULT '',
    min_score_change      integer NOT NULL CHECK (min_score_change BETWEEN 1 AND 100),
    item_count            integer NOT NULL DEFAULT 0,
    created_utc           timestamptz NOT NULL,
    rescore_requested_utc timestamptz
);
CREATE INDEX watchlists_list ON watchlists (account_id, created_utc DESC, id DESC);

-- job_id: the item's latest job; report_id: its current report, with the
-- versions that made it and its scores; previous_report_id: the one
-- before; changed: the current report differs materially from it. The
-- ids are not foreign keys: the purge keeps what an item names.
CREATE TABLE watch_items (
    id                  text PRIMARY KEY,
    watchlist_id        text NOT NULL REFERENCES watchlists (id),
    account_id          text NOT NULL REFERENCES accounts (id),
    external_id         text NOT NULL DEFAULT '',
    latitude            double precision NOT NULL,
    longitude           double precision NOT NULL,
    created_utc         timestamptz NOT NULL,
    job_id              text,
    report_id           text,
    report_job_id       text,
    data_version        text,
    methodology_version text,
    engine_version      text,
    generated_utc       timestamptz,
    overall_score       integer,
    risk_level          text,
    module_scores       text,
    previous_report_id  text,
    changed             boolean NOT NULL DEFAULT false,
    last_changed_utc    timestamptz
);
CREATE INDEX watch_items_list ON watch_items (watchlist_id, created_utc DESC, id DESC);
CREATE INDEX watch_items_changed ON watch_items (watchlist_id, created_utc DESC, id DESC) WHERE changed;

-- The re-scores planned, one per item and trigger: the primary key makes
-- a version change's re-score of an item planned once, whichever nodes
-- plan it; a claim takes a row FOR UPDATE SKIP LOCKED and sets job_id in
-- the transaction that makes the job.
CREATE TABLE watch_rescores (
    item_id     text NOT NULL REFERENCES watch_items (id),
    trigger_key text NOT NULL,
    account_id  text NOT NULL REFERENCES accounts (id),
    planned_utc timestamptz NOT NULL,
    job_id      text,
    PRIMARY KEY (item_id, trigger_key)
);
CREATE INDEX watch_rescores_pending ON watch_rescores (planned_utc, item_id) WHERE job_id IS NULL;
