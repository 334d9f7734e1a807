-- Migration 6 of the PostgreSQL store: indexes that make a webhook
-- delivery claim, and NextWebhookDue, cost the same however many
-- deliveries are pending or done, so that a backlog does not slow every
-- claim down. The claim walks the active endpoints an account at a time;
-- per endpoint it seeks the earliest due delivery and counts the leases
-- in force of the endpoint and of its account
-- (internal/pgstore/webhooks.go, claimableDelivery). Before these, each
-- count read every delivery of the endpoint or the whole table, once per
-- pending delivery: about 4 s a claim with 10,000 in the table. Like the
-- SQLite store's (internal/sqlite/schema.sql), but shaped by what
-- PostgreSQL's planner and row versions do (below).

-- An endpoint's pending deliveries in the order a claim takes them. It
-- replaces webhook_deliveries_due (all pending deliveries by due time),
-- which the planner preferred for an endpoint's earliest: walking every
-- endpoint's due deliveries in time order until one of this endpoint's
-- turns up, which passes the whole backlog of the endpoints due before
-- it. Counting the pending deliveries (the operations summary) reads this
-- one as well as it read that.
CREATE INDEX webhook_deliveries_endpoint_due
    ON webhook_deliveries (endpoint_id, next_attempt_utc, created_utc, id) WHERE status = 'pending';
DROP INDEX webhook_deliveries_due;

-- The deliveries with a lease, by account and endpoint (an endpoint's
-- deliveries are all of its account): attempts in flight, and leases a
-- worker that died left behind until they are claimed again (or failed,
-- for a disabled endpoint). Recording or releasing an attempt clears the
-- lease, so this holds about as many live entries as there are attempts
-- in flight, whatever the history. One index serves both counts, the
-- account's and the endpoint's: with two, one per count, both small and
-- alike to the planner, it served an endpoint's count from the account's
-- index, reading every lease of the account for each endpoint.
--
-- The lease itself is not in the key, only in the predicate: each claim
-- adds an entry (a new row version) that is dead once its attempt is
-- recorded. Keyed by account and endpoint alone, an endpoint's dead
-- entries stay among its few live ones, where the claim's index scans
-- mark them dead and later inserts into the same pages reclaim their
-- room. Keyed by lease, they would pile up in lease order until a vacuum,
-- and every count of leases in force would pass over every delivery
-- claimed in the last lease period (measured 8,000 deliveries into a
-- drain by two nodes: 1.1 ms a claim keyed by lease, 0.33 ms without).
CREATE INDEX webhook_deliveries_leased
    ON webhook_deliveries (account_id, endpoint_id) WHERE lease_expires_utc IS NOT NULL;

-- The active endpoints, which the claim walks by account, apart from the
-- disabled ones, which only accumulate.
CREATE INDEX webhook_endpoints_active ON webhook_endpoints (account_id, id) WHERE is_active;
