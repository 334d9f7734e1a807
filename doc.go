// Package locrisk holds the domain of the locrisk service: accounts, API
// keys and their scopes, report jobs and their statuses, batches,
// watchlists and the re-scores that make their items follow the data,
// usage, webhook endpoints, events and deliveries, retention counts, and the
// errors every store reports in the same words (not found, conflict, quota,
// busy or overloaded, closed). It has no storage and no HTTP: two stores
// implement the operations on these types, SQLite (internal/sqlite), the
// default, and PostgreSQL (internal/pgstore), for several nodes on one
// database (docs/postgres.md); the server, workers and commands speak them
// (docs/architecture.md). The rules both stores follow live here once
// (page cursors, input checks, usage windows, completion percentiles, a
// job's final transition and its hooks, idempotent creation), so that a
// store holds only its SQL and the mapping of its rows.
package locrisk
