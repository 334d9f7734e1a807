package server

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/locrisk/locrisk/internal/view"
)

// The usage and operations summary tests were written when these response
// shapes were defined in this package; they now live in package view, the
// one place response shapes are built. The aliases keep the tests' names,
// and since an alias is the same type, the tests still decode into and
// compare against exactly what the handlers send.
type (
	UsageCurrentView  = view.UsageCurrent
	QuotaView         = view.Quota
	APIReportJobsView = view.APIReportJobs
	OpsSummaryView    = view.OpsSummary
	OpsRequests       = view.OpsRequests
	OpsReportJobs     = view.OpsReportJobs
	OpsBatches        = view.OpsBatches
	OpsWebhooks       = view.OpsWebhooks
)

// UsageHistoryItem is defined here rather than aliased: the history test
// writes items as unkeyed literals, which go vet accepts only for a type of
// this package. Its underlying type is view.UsageHistoryItem's, fields and
// tags included, so it decodes the same JSON.
type UsageHistoryItem view.UsageHistoryItem

// UsageHistoryView is view.UsageHistory with its items of that local type:
// the outer Items hides the embedded one, for Go and for encoding/json alike.
type UsageHistoryView struct {
	view.UsageHistory
	Items []UsageHistoryItem `json:"items"`
}

// TestUsageHistoryViewDecodes: every field of a usage history body lands in
// UsageHistoryView, the items in the outer Items.
func TestUsageHistoryViewDecodes(t *testing.T) {
	bucket := "api"
	want := view.UsageHistory{APIVersion: "v1", AccountID: "acct_1", FromUTC: "2026-11-22T00:00:00Z",
		ToUTC: "2026-11-22T12:34:00Z", Days: 1, Bucket: &bucket,
		Items: []view.UsageHistoryItem{{DateUTC: "2026-11-22", Bucket: "api", ReportJobs: 3, Completed: 2, Failed: 1}}}
	body, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got UsageHistoryView
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.UsageHistory.Items != nil {
		t.Errorf("items decoded into the embedded view: %v", got.UsageHistory.Items)
	}
	got.UsageHistory.Items = make([]view.UsageHistoryItem, 0, len(got.Items))
	for _, it := range got.Items {
		got.UsageHistory.Items = append(got.UsageHistory.Items, view.UsageHistoryItem(it))
	}
	again, _ := json.Marshal(got.UsageHistory)
	if !slices.Equal(again, body) {
		t.Errorf("decoded and encoded again:\n%s\nwant\n%s", again, body)
	}
}
