-- Migration 5: webhook delivery per endpoint and endpoint paging (schema
-- version 5).

-- The claim picks each active endpoint's earliest due delivery
-- (store.ClaimWebhookDelivery), so a slow endpoint's backlog is never
-- scanned: pending deliveries by endpoint, in due order.
CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint_due
    ON webhook_deliveries(endpoint_id, next_attempt_utc, created_utc) WHERE status = 'pending';

-- Attempts in flight (a lease is set only while one is), counted per
-- endpoint against the per-endpoint limit. Few rows: only leased ones.
CREATE INDEX IF NOT EXISTS webhook_deliveries_leased
    ON webhook_deliveries(endpoint_id, lease_expires_utc) WHERE lease_expires_utc IS NOT NULL;

-- Active endpoints: the claim walks them, the create counts an account's
-- against its limit; disabled endpoints, however many, are not visited.
CREATE INDEX IF NOT EXISTS webhook_endpoints_active
    ON webhook_endpoints(account_id, created_utc, id) WHERE is_active = 1;

-- The endpoint list is paged newest first on (created_utc, id), like the
-- job list.
DROP INDEX IF EXISTS webhook_endpoints_by_account;
CREATE INDEX IF NOT EXISTS webhook_endpoints_by_account
    ON webhook_endpoints(account_id, created_utc DESC, id DESC);

-- A delivery released at shutdown after its endpoint was disabled could be
-- left pending without a lease, which no claim takes any more: end it as
-- disabling does.
UPDATE webhook_deliveries
    SET status = 'failed', error = 'endpoint disabled', next_attempt_utc = NULL
    WHERE status = 'pending' AND lease_expires_utc IS NULL
      AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE is_active = 0);
