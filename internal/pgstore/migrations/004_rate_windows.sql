-- Migration 4 of the PostgreSQL store: the requests each account made in
-- the current rate-limit window, summed over every node
-- (internal/sharedrate; docs/postgres.md, Several nodes). Old windows are
-- deleted as the counts move on.
CREATE TABLE rate_windows (
    account_id   text NOT NULL,
    window_start timestamptz NOT NULL,
    requests     bigint NOT NULL,
    PRIMARY KEY (window_start, account_id)
);
