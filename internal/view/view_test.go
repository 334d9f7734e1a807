package view

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/webhook"
)

// The paths are the contract's; the route table and every link use these.
func TestPaths(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{JobsPath, "/api/v1/location-risk/report-jobs"},
		{JobPath("job_1"), "/api/v1/location-risk/report-jobs/job_1"},
		{JobRetryPath("job_1"), "/api/v1/location-risk/report-jobs/job_1/retry"},
		{ReportPath("r"), "/api/v1/location-risk/reports/r"},
		{ReportPDFPath("r"), "/api/v1/location-risk/reports/r/pdf"},
		{BatchesPath, "/api/v1/location-risk/batches"},
		{BatchPath("bat_1"), "/api/v1/location-risk/batches/bat_1"},
		{BatchItemsPath("bat_1"), "/api/v1/location-risk/batches/bat_1/items"},
		{BatchCSVPath("bat_1"), "/api/v1/location-risk/batches/bat_1/results.csv"},
		{UsageCurrentPath, "/api/v1/usage/current"},
		{UsageHistoryPath, "/api/v1/usage/history"},
		{ObservabilityPath, "/api/v1/observability/current"},
		{WebhooksPath, "/api/v1/webhooks"},
		{WebhookPath("we_1"), "/api/v1/webhooks/we_1"},
		{WebhookDeliveriesPath, "/api/v1/webhooks/deliveries"},
		{Time(time.Unix(1, 9e8)), "1970-01-01T00:00:01Z"},
		{*TimePtr(&time.Time{}), "0001-01-01T00:00:00Z"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 500e6, time.UTC)

func storedReport(t *testing.T, a risk.Assessment, dataVersion string) locrisk.Report {
	t.Helper()
	body, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return locrisk.Report{ID: "rep", JobID: "job_1", AccountID: "acct_1", GeneratedUTC: t0, DataVersion: dataVersion, Body: body}
}

func TestNewReport(t *testing.T) {
	var a risk.Assessment // every list absent
	a.DataVersion = "from-body"
	a.Report.Modules.Set("hydrology", risk.ModuleReport{})
	rep := storedReport(t, a, "")

	v, err := NewReport(rep, DetailSummary)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	for _, want := range []string{
		`"apiVersion":"v1","detail":"summary","reportId":"rep","jobId":"job_1","generatedUtc":"2026-03-01T12:00:00Z"`,
		`"dataVersion":"from-body"`,
		`"topRisks":[],"recommendations":[],"reviewFlags":[]`,
		`"links":{"self":"/api/v1/location-risk/reports/rep","full":"/api/v1/location-risk/reports/rep?detail=full",` +
			`"pdf":"/api/v1/location-risk/reports/rep/pdf","job":"/api/v1/location-risk/report-jobs/job_1"}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary lacks %s:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), `"report":`) {
		t.Errorf("summary has the full report:\n%s", b)
	}

	rep.DataVersion = "stored"
	v, err = NewReport(rep, DetailFull)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(v)
	for _, want := range []string{`"detail":"full"`, `"dataVersion":"stored"`, `"sources":[]`, `"perils":[],"indicators":[]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("full report lacks %s:\n%s", want, b)
		}
	}

	if _, err := NewReport(rep, "brief"); err == nil {
		t.Error("unknown detail accepted")
	}
	rep.Body = []byte("{")
	if _, err := NewReport(rep, DetailSummary); err == nil || !strings.Contains(err.Error(), "report rep: stored body") {
		t.Errorf("broken body: %v", err)
	}
}

func TestNewJobEvent(t *testing.T) {
	done := t0.Add(time.Minute)
	rid := "rep"
	j := locrisk.Job{ID: "job_1", AccountID: "acct_1", Status: locrisk.StatusCompleted, ReportID: &rid, Attempts: 1,
		CreatedUTC: t0, UpdatedUTC: done, CompletedUTC: &done}
	ev, err := NewJobEvent("evt_1", j)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(NewJob(j))
	if ev.ID != "evt_1" || ev.Type != webhook.EventJobCompleted || ev.APIVersion != APIVersion ||
		ev.CreatedUTC != "2026-03-01T12:01:00Z" || string(ev.Data.Job) != string(want) {
		t.Errorf("event %+v, data.job %s; want data.job %s", ev, ev.Data.Job, want)
	}
	if !strings.Contains(string(want), `"result":{"reportId":"rep","reportUrl":"/api/v1/location-risk/reports/rep","pdfUrl":"/api/v1/location-risk/reports/rep/pdf"}`) {
		t.Errorf("job view %s", want)
	}

	j.Status = locrisk.StatusFailed
	if got := JobEventType(j); got != webhook.EventJobFailed {
		t.Errorf("failed job: event type %q", got)
	}
	j.CompletedUTC = nil
	if _, err := NewJobEvent("evt_2", j); err == nil {
		t.Error("event of a final job without completion time")
	}
	for _, st := range []string{locrisk.StatusQueued, locrisk.StatusProcessing} {
		j.Status = st
		if got := JobEventType(j); got != "" {
			t.Errorf("%s job: event type %q", st, got)
		}
		if _, err := NewJobEvent("evt_3", j); err == nil {
			t.Errorf("event of a %s job", st)
		}
	}
}
