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
)

// JobPath is the path of one report job (operation 3).
func JobPath(id string) string { return JobsPath + "/" + id }

// JobRetryPath is the path that retries a failed job (operation 4).
func JobRetryPath(id string) string { return JobPath(id) + "/retry" }

// ReportPath is the path of one report (operation 5).
func ReportPath(id string) string { return ReportsPath + "/" + id }

// ReportPDFPath is the path of a report's PDF (operation 6).
func ReportPDFPath(id string) string { return ReportPath(id) + "/pdf" }

// BatchPath is the path of one batch (operation 8).
func BatchPath(id string) string { return BatchesPath + "/" + id }

// BatchItemsPath is the path of a batch's items (operation 9).
func BatchItemsPath(id string) string { return BatchPath(id) + "/items" }

// BatchCSVPath is the path of a batch's results file (operation 10).
func BatchCSVPath(id string) string { return BatchPath(id) + "/results.csv" }

// WebhookPath is the path of one webhook endpoint (operation 16).
func WebhookPath(id string) string { return WebhooksPath + "/" + id }
