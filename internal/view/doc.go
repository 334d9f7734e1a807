// Package view is how the service shows its state to clients: the JSON
// bodies of the HTTP API (report jobs, reports and the changes between
// two of them, batches and their items, webhook endpoints and deliveries,
// usage and the operations summary), the webhook event that announces a
// job's final state, the PDF of a report, and the /api/v1 paths that all
// of them link to.
//
// The HTTP server, the `locrisk report` command and the webhook outbox build
// these shapes here and nowhere else, so a job, a report or a path is the
// same in an API response, in a webhook event and on the command line. The
// constructors take the store's types (and, for reports, the engine's
// Assessment as stored; what only the server knows, the rate-limit window
// and the latency histogram's percentiles, it passes in); the package does
// no I/O of its own.
package view
