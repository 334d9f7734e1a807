package webhook

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestKnownEvent(t *testing.T) {
	tests := map[string]bool{
		"report.job.completed": true,
		"report.job.failed":    true,
		"report.job.created":   false,
		"Report.Job.Completed": false,
		"":                     false,
		"*":                    false,
	}
	for name, want := range tests {
		if got := KnownEvent(name); got != want {
			t.Errorf("KnownEvent(%q) = %v, want %v", name, got, want)
		}
	}
	for _, name := range EventTypes() {
		if !KnownEvent(name) {
			t.Errorf("EventTypes lists %q, which KnownEvent refuses", name)
		}
	}
}

func TestMarshalEvent(t *testing.T) {
	job := json.RawMessage(`{"id":"job_abc","status":"completed","attempts":1}`)
	created := time.Date(2026, 11, 22, 10, 0, 0, 987654321, time.FixedZone("X", 3600))
	e := NewEvent("evt_abc", EventJobCompleted, created, job)
	b, err := MarshalEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"evt_abc","type":"report.job.completed","apiVersion":"v1","createdUtc":"2026-11-22T09:00:00Z","data":{"job":{"id":"job_abc","status":"completed","attempts":1}}}`
	if string(b) != want {
		t.Errorf("MarshalEvent =\n%s\nwant\n%s", b, want)
	}

	bad := []struct {
		name string
		mod  func(*Event)
		want string
	}{
		{"no prefix", func(e *Event) { e.ID = "abc" }, "evt_"},
		{"unknown type", func(e *Event) { e.Type = "report.job.created" }, "unknown event type"},
		{"no version", func(e *Event) { e.APIVersion = "" }, "apiVersion"},
		{"no created", func(e *Event) { e.CreatedUTC = "" }, "createdUtc"},
		{"nil job", func(e *Event) { e.Data.Job = nil }, "not a JSON object"},
		{"null job", func(e *Event) { e.Data.Job = json.RawMessage("null") }, "not a JSON object"},
		{"array job", func(e *Event) { e.Data.Job = json.RawMessage("[1]") }, "not a JSON object"},
		{"broken job", func(e *Event) { e.Data.Job = json.RawMessage(`{"id":`) }, "not a JSON object"},
	}
	for _, tc := range bad {
		ev := e
		tc.mod(&ev)
		if _, err := MarshalEvent(ev); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
