package server

import (
	"net/http"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/view"
)

// route is one operation of the table in docs/api.md (Operations).
type route struct {
	pattern string // method and path, in ServeMux syntax
	access  access
	handle  handlerFunc
}

// routeTable lists every operation, numbered as in docs/api.md (Operations).
// It is the one place that says which method and scope an operation has;
// its path comes from package view, which also builds the paths responses
// link to.
func (s *Server) routeTable() []route {
	return []route{
		// Report jobs and reports (jobs.go, reports.go, pdf.go).
		{"POST " + view.JobsPath, needs(locrisk.ScopeReportsCreate), s.createJob},                             // 1
		{"GET " + view.JobsPath, needs(locrisk.ScopeReportsRead), s.listJobs},                                 // 2
		{"GET " + view.JobPath("{jobId}"), needs(locrisk.ScopeReportsRead), s.getJob},                         // 3
		{"POST " + view.JobRetryPath("{jobId}"), needs(locrisk.ScopeReportsCreate), s.retryJob},               // 4
		{"GET " + view.ReportPath("{reportId}"), needs(locrisk.ScopeReportsRead), s.getReport},                // 5
		{"GET " + view.ReportPDFPath("{reportId}"), needs(locrisk.ScopeReportsPDF), s.getReportPDF},           // 6
		{"POST " + view.BatchesPath, needs(locrisk.ScopeBulkCreate), s.createBatch},                           // 7
		{"GET " + view.BatchPath("{batchId}"), needs(locrisk.ScopeBulkRead), s.getBatch},                      // 8
		{"GET " + view.BatchItemsPath("{batchId}"), needs(locrisk.ScopeBulkRead), s.getBatchItems},            // 9
		{"GET " + view.BatchCSVPath("{batchId}"), needs(locrisk.ScopeBulkRead), s.getBatchCSV},                // 10
		{"GET " + view.UsageCurrentPath, usageAccess(), s.getUsageCurrent},                                    // 11
		{"GET " + view.UsageHistoryPath, usageAccess(), s.getUsageHistory},                                    // 12
		{"GET " + view.ObservabilityPath, usageAccess(), s.getObservability},                                  // 13
		{"GET " + view.WebhooksPath, needs(locrisk.ScopeWebhooksRead), s.listWebhooks},                        // 14
		{"POST " + view.WebhooksPath, needs(locrisk.ScopeWebhooksWrite), s.createWebhook},                     // 15
		{"DELETE " + view.WebhookPath("{endpointId}"), needs(locrisk.ScopeWebhooksWrite), s.deleteWebhook},    // 16
		{"GET " + view.WebhookDeliveriesPath, needs(locrisk.ScopeWebhooksRead), s.listDeliveries},             // 17
		{"GET " + view.BatchesPath, needs(locrisk.ScopeBulkRead), s.listBatches},                              // 18
		{"POST " + view.WebhookTestPath("{endpointId}"), needs(locrisk.ScopeWebhooksWrite), s.testWebhook},    // 19
		{"POST " + view.RedeliverPath("{deliveryId}"), needs(locrisk.ScopeWebhooksWrite), s.redeliverWebhook}, // 20
		{"GET " + view.ReportChangesRoute("{reportId}"), needs(locrisk.ScopeReportsRead), s.getReportChanges}, // 21
		// Watchlists (watchlists.go).
		{"POST " + view.WatchlistsPath, needs(locrisk.ScopeWatchlistsWrite), s.createWatchlist},                     // 22
		{"GET " + view.WatchlistsPath, needs(locrisk.ScopeWatchlistsRead), s.listWatchlists},                        // 23
		{"GET " + view.WatchlistPath("{watchlistId}"), needs(locrisk.ScopeWatchlistsRead), s.getWatchlist},          // 24
		{"DELETE " + view.WatchlistPath("{watchlistId}"), needs(locrisk.ScopeWatchlistsWrite), s.deleteWatchlist},   // 25
		{"POST " + view.WatchItemsPath("{watchlistId}"), needs(locrisk.ScopeWatchlistsWrite), s.addWatchItems},      // 26
		{"DELETE " + view.WatchItemsPath("{watchlistId}"), needs(locrisk.ScopeWatchlistsWrite), s.removeWatchItems}, // 27
		{"GET " + view.WatchItemsPath("{watchlistId}"), needs(locrisk.ScopeWatchlistsRead), s.listWatchItems},       // 28
		{"POST " + view.WatchRescorePath("{watchlistId}"), needs(locrisk.ScopeWatchlistsWrite), s.rescoreWatchlist}, // 29
	}
}

// openRoute is an answer given without a key: no authentication, no rate
// limit, no RateLimit-* headers.
type openRoute struct {
	pattern string
	handle  http.HandlerFunc
}

// openRoutes are the unauthenticated answers (docs/api.md, OpenAPI
// document). They sit on the same mux, so routing, 404 and 405 work as for
// the operations.
func (s *Server) openRoutes() []openRoute {
	return []openRoute{
		{"GET " + view.OpenAPIPath, s.getOpenAPI},
		// The health endpoints, outside /api/v1 (docs/api.md, Health and
		// version; health.go).
		{"GET " + HealthzPath, s.healthz},
		{"GET " + ReadyzPath, s.readyz},
		// The report signing keys (reports.go; docs/verification.md).
		{"GET " + view.SigningKeysPath, s.getSigningKeys},
	}
}

// routes builds the handler: the operations on a ServeMux, inside the
// middleware that every request, matched or not, goes through.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.openRoutes() {
		mux.Handle(rt.pattern, rt.handle)
	}
	for _, rt := range s.routeTable() {
		mux.Handle(rt.pattern, s.authed(rt.access, rt.handle))
	}
	// What is served beside the API (server.go, Mount): GET and HEAD under
	// each prefix; another method is 405 like a known API path's.
	for _, m := range s.mounts {
		mux.Handle("GET "+m.Prefix, m.Handler)
	}
	return s.serve(mux)
}
