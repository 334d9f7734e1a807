-- Migration 7: disabled accounts, key labels and key last use (schema
-- version 7).

-- An account is disabled from disabled_utc on (NULL: enabled). Its keys are
-- refused with the same 401 as a revoked key (docs/api.md, Authentication,
-- scopes and check order); enabling clears the time again.
ALTER TABLE accounts ADD COLUMN disabled_utc TEXT;

-- A key's label: operator's free text, '' when none was given.
ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT '';

-- When the key last authenticated a request, to the minute: the server
-- records at most one use a minute per key, written with the request
-- statistics (README.md, Commands). NULL: not used since this column
-- exists.
ALTER TABLE api_keys ADD COLUMN last_used_utc TEXT;
