-- Migration 3: the risk engine's reference cache (schema version 3).

-- The risk engine's population-weighted reference distributions, computed
-- once per data version and methodology (docs/methodology.md,
-- "Percentiles"); a gob-encoded body. Only the current key is kept.
CREATE TABLE IF NOT EXISTS reference_cache (
    cache_key   TEXT PRIMARY KEY,                        -- data version / methodology / format
    body        BLOB NOT NULL,
    created_utc TEXT NOT NULL
);
