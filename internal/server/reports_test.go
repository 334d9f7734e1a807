package server

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/view"
)

const reportsPath = "/api/v1/location-risk/reports/"

func TestGetReport(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	job := e.createJob(key, 37.77, -122.42)
	id := e.complete(job.JobID)
	links := risk.Links{
		Self: reportsPath + id,
		Full: reportsPath + id + "?detail=full",
		PDF:  reportsPath + id + "/pdf",
		Job:  jobsPath + "/" + job.JobID,
	}
	want := sampleAssessment(37.77, -122.42)
	summaryKeys := []string{"apiVersion", "dataVersion", "detail", "generatedUtc", "jobId", "location", "provenance", "reportId", "signature", "summary"}

	tests := []struct {
		name, query, detail string
		full                bool
	}{
		{"default", "", "summary", false},
		{"summary", "?detail=summary", "summary", false},
		{"full", "?detail=full", "full", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("GET", reportsPath+id+tc.query, key, "")
			if rec.Code != 200 {
				t.Fatalf("status %d %s", rec.Code, rec.Body)
			}
			m := decode[map[string]any](t, rec)
			wantKeys := summaryKeys
			if tc.full {
				wantKeys = slices.Sorted(slices.Values(append(slices.Clone(summaryKeys), "report")))
			}
			if got := keysOf(m); !slices.Equal(got, wantKeys) {
				t.Errorf("keys = %v, want %v", got, wantKeys)
			}
			v := decode[view.Report](t, rec)
			if v.APIVersion != "v1" || v.Detail != tc.detail || v.ReportID != id || v.JobID != job.JobID ||
				v.GeneratedUTC != "2026-11-22T12:00:10Z" || v.DataVersion != "dv-test" || v.Location != want.Location {
				t.Errorf("report header = %+v", v)
			}
			if v.Summary.Links != links {
				t.Errorf("links = %+v, want %+v", v.Summary.Links, links)
			}
			s := v.Summary
			s.Links = risk.Links{}
			wj, _ := json.Marshal(want.Summary)
			gj, _ := json.Marshal(s)
			if string(wj) != string(gj) {
				t.Errorf("summary changed on the way:\n got %s\nwant %s", gj, wj)
			}
			if tc.full {
				if v.Report == nil || v.Report.Methodology.Version != "test-1" || !earthquakeScored(v.Report.Modules, 95) {
					t.Errorf("full report = %+v", v.Report)
				}
				// Absent indicator lists come out as [], not null.
				if strings.Contains(rec.Body.String(), `"indicators":null`) {
					t.Errorf("indicators serialised as null")
				}
			}
			// Module with no data stays null, never 0.
			if !strings.Contains(rec.Body.String(), `"environmentalExposure":null`) {
				t.Errorf("moduleScores.environmentalExposure is not null: %s", rec.Body)
			}
		})
	}

	// Uppercase spelling of the same UUID is the same report.
	rec := e.do("GET", reportsPath+strings.ToUpper(id), key, "")
	if rec.Code != 200 || decode[view.Report](t, rec).ReportID != id {
		t.Errorf("uppercase id: status %d %s", rec.Code, rec.Body)
	}
}

func TestGetReportErrors(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	job := e.createJob(key, 37.77, -122.42)
	id := e.complete(job.JobID)
	unknown := ids.NewReportID()
	tests := []struct {
		path   string
		status int
		code   string
	}{
		{reportsPath + unknown, 404, "report_not_found"},
		{reportsPath + unknown + "?detail=full", 404, "report_not_found"},
		{reportsPath + id + "?detail=compact", 400, "invalid_detail"},
		{reportsPath + id + "?detail=", 400, "invalid_detail"},
		{reportsPath + id + "?detail=FULL", 400, "invalid_detail"},
		{reportsPath + unknown + "?detail=x", 400, "invalid_detail"},
		{reportsPath + "not-a-uuid", 400, "invalid_report_id"},
		{reportsPath + "not-a-uuid?detail=x", 400, "invalid_report_id"},
		{reportsPath + job.JobID, 400, "invalid_report_id"},
		{reportsPath + strings.ReplaceAll(id, "-", ""), 400, "invalid_report_id"},
		{reportsPath + "{" + id[:34] + "}", 400, "invalid_report_id"},
		{reportsPath + id[:35] + "g", 400, "invalid_report_id"},
		{reportsPath + id[:8] + "_" + id[9:], 400, "invalid_report_id"},
		{reportsPath + id + "0", 400, "invalid_report_id"},
		{reportsPath + id + "?detail=%zz", 400, "invalid_request"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			wantError(t, e.do("GET", tc.path, key, ""), tc.status, tc.code)
		})
	}
}

func TestCanonicalUUID(t *testing.T) {
	tests := []struct {
		in, out string
		ok      bool
	}{
		{"123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000", true},
		{"123E4567-E89B-12D3-A456-426614174000", "123e4567-e89b-12d3-a456-426614174000", true},
		{"00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000", true},
		{"123e4567e89b12d3a456426614174000", "", false},
		{"urn:uuid:123e4567-e89b-12d3-a456-426614174000", "", false},
		{"123e4567-e89b-12d3-a456-42661417400", "", false},
		{"123e4567-e89b-12d3-a456-42661417400z", "", false},
		{"123e4567-e89b-12d3-a456+426614174000", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		out, ok := canonicalUUID(tc.in)
		if ok != tc.ok || out != tc.out {
			t.Errorf("canonicalUUID(%q) = %q, %v; want %q, %v", tc.in, out, ok, tc.out, tc.ok)
		}
	}
}

// earthquakeScored reports whether the full report's earthquake module has
// the given score.
func earthquakeScored(m risk.Modules, score int) bool {
	eq, ok := m.Get("earthquake")
	return ok && eq.Score != nil && *eq.Score == score
}
