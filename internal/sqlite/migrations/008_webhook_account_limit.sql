-- Migration 8: a per-account limit on webhook attempts in flight, and
-- turns between accounts for delivery claims (schema version 8).
-- Store.ClaimWebhookDelivery in store/webhooks.go is the reader of
-- everything here.

-- Attempts in flight (a lease is set only while one is), counted per
-- account against the per-account limit. Few rows: only leased ones.
CREATE INDEX IF NOT EXISTS webhook_deliveries_account_leased
    ON webhook_deliveries(account_id, lease_expires_utc) WHERE lease_expires_utc IS NOT NULL;

-- One row per account that has had a delivery claimed: whose turn it is.
-- The claim serves the account with a claimable delivery whose last claim
-- is the oldest (an account without a row first), so one account's backlog
-- delays another's delivery by at most one claim per waiting account.
CREATE TABLE IF NOT EXISTS webhook_delivery_turns (
    account_id TEXT PRIMARY KEY REFERENCES accounts(id),
    last_claim INTEGER NOT NULL                         -- claim sequence number of its last claim
);
CREATE INDEX IF NOT EXISTS webhook_delivery_turns_by_claim ON webhook_delivery_turns(last_claim);
