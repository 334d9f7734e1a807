-- Migration 15: watchlists, whose items are re-scored when the data or
-- methodology changes (schema version 15; docs/api.md, Watchlists).

-- The watch item a job scores, its first job or a re-score; NULL for every
-- other job. The job's final transition moves the item's reports on
-- (locrisk.FinishJob). No foreign key: an item may be removed while its
-- job runs, and the job is then an ordinary one.
ALTER TABLE report_jobs ADD COLUMN watch_item_id TEXT;

CREATE TABLE IF NOT EXISTS watchlists (
    id                    TEXT PRIMARY KEY,              -- wl_...
    account_id            TEXT NOT NULL REFERENCES accounts(id),
    name                  TEXT NOT NULL DEFAULT '',
    min_score_change      INTEGER NOT NULL CHECK (min_score_change BETWEEN 1 AND 100),
    item_count            INTEGER NOT NULL DEFAULT 0,     -- items held now
    created_utc           TEXT NOT NULL,
    rescore_requested_utc TEXT                            -- last on-demand re-score; NULL: never
);
-- Paged newest first per account, like the batches.
CREATE INDEX IF NOT EXISTS watchlists_by_account ON watchlists(account_id, created_utc DESC, id DESC);

-- An item and its reports. job_id is its latest job (its first, or its
-- latest re-score); report_id its current report, with the versions that
-- made it and its summary scores; previous_report_id the one before.
-- changed: the current report differs materially from the previous one
-- (the report.changed rule); last_changed_utc: the last time a re-score
-- changed it so. The ids are not foreign keys: the purge keeps the jobs and
-- reports an item names (purge.go), and a removed item's jobs stay.
CREATE TABLE IF NOT EXISTS watch_items (
    id                  TEXT PRIMARY KEY,                -- wli_...
    watchlist_id        TEXT NOT NULL REFERENCES watchlists(id),
    account_id          TEXT NOT NULL REFERENCES accounts(id),
    external_id         TEXT NOT NULL DEFAULT '',
    latitude            REAL NOT NULL,
    longitude           REAL NOT NULL,
    created_utc         TEXT NOT NULL,
    job_id              TEXT,
    report_id           TEXT,
    report_job_id       TEXT,
    data_version        TEXT,
    methodology_version TEXT,
    engine_version      TEXT,
    generated_utc       TEXT,
    overall_score       INTEGER,
    risk_level          TEXT,
    module_scores       TEXT,
    previous_report_id  TEXT,
    changed             INTEGER NOT NULL DEFAULT 0,
    last_changed_utc    TEXT
);
CREATE INDEX IF NOT EXISTS watch_items_by_list ON watch_items(watchlist_id, created_utc DESC, id DESC);
CREATE INDEX IF NOT EXISTS watch_items_changed ON watch_items(watchlist_id, created_utc DESC, id DESC) WHERE changed = 1;

-- The re-scores planned: one row per item and trigger, a version change
-- ('v:<data version>/<methodology version>') or an on-demand request
-- ('r:<request id>'). The primary key makes a re-score planned once per
-- item and version change, whichever node plans it; job_id is set, in the
-- transaction that makes the job, when the re-score starts. Rows go with
-- their item.
CREATE TABLE IF NOT EXISTS watch_rescores (
    item_id     TEXT NOT NULL REFERENCES watch_items(id),
    trigger_key TEXT NOT NULL,
    account_id  TEXT NOT NULL REFERENCES accounts(id),
    planned_utc TEXT NOT NULL,
    job_id      TEXT,
    PRIMARY KEY (item_id, trigger_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS watch_rescores_pending ON watch_rescores(planned_utc, item_id) WHERE job_id IS NULL;
