package server

import (
	"net/http"

	"locrisk/store"
)

// apiPrefix starts every path of the API and every path in its responses.
const apiPrefix = "/api/v1"

// route is one operation of specification section 4.
type route struct {
	pattern string // method and path, in ServeMux syntax
	access  access
	handle  handlerFunc
}

// routeTable lists every operation, numbered as in specification section 4.
// It is the one place that says which path, method and scope an operation
// has.
func (s *Server) routeTable() []route {
	return []route{
		// Report jobs and reports (jobs.go, reports.go, pdf.go).
		{"POST " + apiPrefix + "/location-risk/report-jobs", needs(store.ScopeReportsCreate), s.createJob},               // 1
		{"GET " + apiPrefix + "/location-risk/report-jobs", needs(store.ScopeReportsRead), s.listJobs},                   // 2
		{"GET " + apiPrefix + "/location-risk/report-jobs/{jobId}", needs(store.ScopeReportsRead), s.getJob},             // 3
		{"POST " + apiPrefix + "/location-risk/report-jobs/{jobId}/retry", needs(store.ScopeReportsCreate), s.retryJob},  // 4
		{"GET " + apiPrefix + "/location-risk/reports/{reportId}", needs(store.ScopeReportsRead), s.getReport},           // 5
		{"GET " + apiPrefix + "/location-risk/reports/{reportId}/pdf", needs(store.ScopeReportsPDF), s.getReportPDF},     // 6
		{"POST " + apiPrefix + "/location-risk/batches", needs(store.ScopeBulkCreate), s.createBatch},                    // 7
		{"GET " + apiPrefix + "/location-risk/batches/{batchId}", needs(store.ScopeBulkRead), s.getBatch},                // 8
		{"GET " + apiPrefix + "/location-risk/batches/{batchId}/items", needs(store.ScopeBulkRead), s.getBatchItems},     // 9
		{"GET " + apiPrefix + "/location-risk/batches/{batchId}/results.csv", needs(store.ScopeBulkRead), s.getBatchCSV}, // 10
		{"GET " + apiPrefix + "/usage/current", usageAccess(), s.getUsageCurrent},                                        // 11
		{"GET " + apiPrefix + "/usage/history", usageAccess(), s.getUsageHistory},                                        // 12
		{"GET " + apiPrefix + "/observability/current", usageAccess(), s.getObservability},                               // 13
		{"GET " + apiPrefix + "/webhooks", needs(store.ScopeWebhooksRead), s.listWebhooks},                               // 14
		{"POST " + apiPrefix + "/webhooks", needs(store.ScopeWebhooksWrite), s.createWebhook},                            // 15
		{"DELETE " + apiPrefix + "/webhooks/{endpointId}", needs(store.ScopeWebhooksWrite), s.deleteWebhook},             // 16
		{"GET " + apiPrefix + "/webhooks/deliveries", needs(store.ScopeWebhooksRead), s.listDeliveries},                  // 17
	}
}

// routes builds the handler: the operations on a ServeMux, inside the
// middleware that every request, matched or not, goes through.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routeTable() {
		mux.Handle(rt.pattern, s.authed(rt.access, rt.handle))
	}
	return s.serve(mux)
}
