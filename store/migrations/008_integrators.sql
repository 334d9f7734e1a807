-- Migration 8: batch listing (schema version 8).

-- The batch list is paged newest first on (created_utc, id), like the job
-- list (store.ListBatches), so the account's batches need an index in that
-- order; it also serves everything the old one on (account_id,
-- created_utc) did.
DROP INDEX IF EXISTS batches_by_account;
CREATE INDEX IF NOT EXISTS batches_by_account
    ON batches(account_id, created_utc DESC, id DESC);
