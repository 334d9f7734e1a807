package view

// APIPrefix starts every path of the API and every path in its responses.
const APIPrefix = "/api/v1"

// Collection paths of the API. The server's route table is built from these
// and the builders below, so a path a response links to is the path the
// server routes.
const (
	JobsPath              = APIPrefix + "/location-risk/report-jobs"
	ReportsPath           = APIPrefix + "/location-risk/reports"
	BatchesPath           = APIPrefix + "/location-risk/batches"
	UsageCurrentPath      = APIPrefix + "/usage/current"
	UsageHistoryPath      = APIPrefix + "/usage/history"
	ObservabilityPath     = APIPrefix + "/observability/current"
	WebhooksPath          = APIPrefix + "/webhooks"
	WebhookDeliveriesPath = WebhooksPath + "/deliveries"
	OpenAPIPath           = APIPrefix + "/openapi.json"
	// SigningKeysPath publishes the report signing keys, outside the API
	// prefix at a well-known path (RFC 8615; docs/verification.md).
	SigningKeysPath = "/.well-known/locrisk-signing-keys"
)

// JobPath is the path of one report job (docs/api.md, Report jobs).
func JobPath(id string) string { return JobsPath + "/" + id }

// JobRetryPath is the path that retries a failed job (docs/api.md, Report
// jobs).
func JobRetryPath(id string) string { return JobPath(id) + "/retry" }

// ReportPath is the path of one report (docs/api.md, Reports).
func ReportPath(id string) string { return ReportsPath + "/" + id }

// ReportPDFPath is the path of a report's PDF (docs/api.md, Reports).
func ReportPDFPath(id string) string { return ReportPath(id) + "/pdf" }

// ReportChangesRoute is the path of the comparison of a report with an
// earlier one, without its query (docs/api.md, Report changes).
func ReportChangesRoute(id string) string { return ReportPath(id) + "/changes" }

// BatchPath is the path of one batch (docs/api.md, Batches).
func BatchPath(id string) string { return BatchesPath + "/" + id }

// BatchItemsPath is the path of a batch's items (docs/api.md, Batches).
func BatchItemsPath(id string) string { return BatchPath(id) + "/items" }

// BatchCSVPath is the path of a batch's results file (docs/api.md, Batches).
func BatchCSVPath(id string) string { return BatchPath(id) + "/results.csv" }

// WebhookPath is the path of one webhook endpoint (docs/api.md, Webhooks).
func WebhookPath(id string) string { return WebhooksPath + "/" + id }

// WebhookTestPath is the path that sends a test event to endpoint id.
func WebhookTestPath(id string) string { return WebhookPath(id) + "/test" }

// RedeliverPath is the path that queues failed delivery id again.
func RedeliverPath(id string) string { return WebhookDeliveriesPath + "/" + id + "/redeliver" }
