-- Migration 14: the keys reports are signed with (schema version 14;
-- docs/verification.md).
--
-- One row per Ed25519 key. The current key is the one row whose
-- retired_utc is NULL; the partial unique index makes a second current key
-- impossible. private_key is the key's 32-byte seed, base64, sealed with the
-- server's secret key file (package secretbox, as webhook signing secrets
-- are), so the database alone does not give it away; a retired key's is
-- erased (NULL) and only its public key, in clear, stays, so that reports
-- signed with it still verify. Keys are never purged.
--
-- IF NOT EXISTS: the migration may run again on a file that has it.

CREATE TABLE IF NOT EXISTS signing_keys (
    id          TEXT PRIMARY KEY,
    algorithm   TEXT NOT NULL DEFAULT 'Ed25519',
    public_key  BLOB NOT NULL,
    private_key TEXT,
    created_utc TEXT NOT NULL,
    retired_utc TEXT,
    CHECK ((retired_utc IS NULL) = (private_key IS NOT NULL))
);

CREATE UNIQUE INDEX IF NOT EXISTS signing_keys_current
    ON signing_keys (retired_utc IS NULL) WHERE retired_utc IS NULL;
