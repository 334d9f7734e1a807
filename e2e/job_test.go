package e2e

import (
	"bytes"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var requestIDRe = regexp.MustCompile(`^req_[0-9A-Za-z_-]{20,}$`)

var moduleNames = []string{"hydrology", "severeWeather", "wildfire", "earthquake", "landslide", "environmentalExposure"}

// TestJobEndToEnd takes report jobs at several fixture places from create
// to completed and reads their reports as JSON (summary and full) and PDF;
// a place outside coverage is refused with 422.
func TestJobEndToEnd(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "job.db")
	_, key := newAccountKey(t, db, "reports:create,reports:read,reports:pdf")
	srv := startServer(t, nil, serveArgs(db, "--workers", "2")...)

	for _, p := range []point{fixturePoints[0], fixturePoints[2], fixturePoints[5]} {
		t.Run(p.name, func(t *testing.T) {
			r := srv.do(t, key, http.MethodPost, jobsPath, map[string]float64{"latitude": p.lat, "longitude": p.lon})
			checkRequestID(t, r)
			if r.status != http.StatusAccepted {
				t.Fatalf("create: %d %s", r.status, r.body)
			}
			created := r.object(t)
			id := str(created["jobId"])
			if !strings.HasPrefix(id, "job_") || created["status"] != "queued" || r.header.Get("Location") != jobsPath+"/"+id ||
				created["statusUrl"] != jobsPath+"/"+id {
				t.Errorf("create: Location %q, body %s", r.header.Get("Location"), r.body)
			}

			j := srv.waitJob(t, key, id, 10*time.Second)
			if j.Status != "completed" || j.Result == nil {
				t.Fatalf("job ended %s (error %+v)", j.Status, j.Error)
			}
			if !strings.HasPrefix(j.Result.ReportURL, "/api/v1/location-risk/reports/") || j.Result.PDFURL != j.Result.ReportURL+"/pdf" {
				t.Errorf("result %+v", j.Result)
			}

			r = srv.do(t, key, http.MethodGet, j.Result.ReportURL, nil)
			checkRequestID(t, r)
			if r.status != http.StatusOK {
				t.Fatalf("summary: %d %s", r.status, r.body)
			}
			sum := r.object(t)
			checkReportHead(t, sum, "summary", j.Result.ReportID, id, p)
			if _, ok := sum["report"]; ok {
				t.Errorf("summary report carries the full report")
			}

			r = srv.do(t, key, http.MethodGet, j.Result.ReportURL+"?detail=full", nil)
			if r.status != http.StatusOK {
				t.Fatalf("full: %d %s", r.status, r.body)
			}
			full := r.object(t)
			checkReportHead(t, full, "full", j.Result.ReportID, id, p)
			rep, _ := full["report"].(map[string]any)
			modules, _ := rep["modules"].(map[string]any)
			if !sameSet(keys(modules), moduleNames) {
				t.Errorf("report.modules keys %v, want %v", keys(modules), moduleNames)
			}
			for _, f := range []string{"sources", "methodology"} {
				if rep[f] == nil {
					t.Errorf("full report lacks report.%s", f)
				}
			}
			// The stored report is read back, never recomputed: twice the
			// same bytes.
			if again := srv.do(t, key, http.MethodGet, j.Result.ReportURL+"?detail=full", nil); !bytes.Equal(again.body, r.body) {
				t.Errorf("reading the full report twice gave different bodies")
			}

			r = srv.do(t, key, http.MethodGet, j.Result.PDFURL, nil)
			checkRequestID(t, r)
			if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(r.body, []byte("%PDF-")) {
				t.Fatalf("pdf: %d %q %.40q", r.status, r.header.Get("Content-Type"), r.body)
			}
			if cd, want := r.header.Get("Content-Disposition"), `inline; filename="location-risk-`+j.Result.ReportID+`.pdf"`; cd != want {
				t.Errorf("pdf Content-Disposition %q, want %q", cd, want)
			}
		})
	}

	t.Run("errors", func(t *testing.T) {
		tests := []struct {
			name, key, method, path string
			body                    any
			status                  int
			code                    string
		}{
			{"Toronto", key, http.MethodPost, jobsPath, map[string]float64{"latitude": 43.65, "longitude": -79.38}, 422, "unsupported_location"},
			{"latitude as a string", key, http.MethodPost, jobsPath, map[string]any{"latitude": "37.77", "longitude": -122.42}, 400, "invalid_latitude"},
			{"no key", "", http.MethodGet, jobsPath, nil, 401, "invalid_api_key"},
			{"unknown path", key, http.MethodGet, "/api/v1/nope", nil, 404, "not_found"},
			{"unknown job", key, http.MethodGet, jobsPath + "/job_doesnotexist000000000000", nil, 404, "report_job_not_found"},
		}
		for _, tt := range tests {
			r := srv.do(t, tt.key, tt.method, tt.path, tt.body)
			checkRequestID(t, r)
			if r.status != tt.status {
				t.Errorf("%s: %d %s, want %d", tt.name, r.status, r.body, tt.status)
				continue
			}
			e, _ := r.object(t)["error"].(map[string]any)
			if e == nil || e["code"] != tt.code || str(e["message"]) == "" || e["requestId"] != r.header.Get("X-Request-Id") {
				t.Errorf("%s: body %s, want error code %s with the X-Request-Id", tt.name, r.body, tt.code)
			}
		}
	})
}

func checkRequestID(t *testing.T, r response) {
	t.Helper()
	if id := r.header.Get("X-Request-Id"); !requestIDRe.MatchString(id) {
		t.Errorf("X-Request-Id %q on a %d response", id, r.status)
	}
}

// checkReportHead checks the fields every report body has (docs/api.md,
// Reports).
func checkReportHead(t *testing.T, rep map[string]any, detail, reportID, jobID string, p point) {
	t.Helper()
	if rep["apiVersion"] != "v1" || rep["detail"] != detail || rep["reportId"] != reportID || rep["jobId"] != jobID ||
		str(rep["generatedUtc"]) == "" || str(rep["dataVersion"]) == "" {
		t.Errorf("%s report head: apiVersion %v detail %v reportId %v jobId %v generatedUtc %v dataVersion %v",
			detail, rep["apiVersion"], rep["detail"], rep["reportId"], rep["jobId"], rep["generatedUtc"], rep["dataVersion"])
	}
	loc, _ := rep["location"].(map[string]any)
	if loc["countyFips"] != p.fips || loc["latitude"] != p.lat || loc["longitude"] != p.lon {
		t.Errorf("%s report location %v, want county %s at %v,%v", detail, loc, p.fips, p.lat, p.lon)
	}
	for _, f := range []string{"stateCode", "stateName", "countyName"} {
		if str(loc[f]) == "" {
			t.Errorf("%s report location lacks %s: %v", detail, f, loc)
		}
	}
	sum, _ := rep["summary"].(map[string]any)
	scores, _ := sum["moduleScores"].(map[string]any)
	if !sameSet(keys(scores), moduleNames) {
		t.Errorf("%s summary.moduleScores keys %v, want exactly %v", detail, keys(scores), moduleNames)
	}
	// The additive perils object is keyed like moduleScores.
	perils, _ := sum["perils"].(map[string]any)
	if !sameSet(keys(perils), moduleNames) {
		t.Errorf("%s summary.perils keys %v, want exactly %v", detail, keys(perils), moduleNames)
	}
	for m, ps := range perils {
		if list, ok := ps.([]any); !ok || len(list) == 0 {
			t.Errorf("%s summary.perils.%s = %v, want a non-empty array", detail, m, ps)
		}
	}
	for _, f := range []string{"overallScore", "riskLevel", "confidence", "topRisks", "recommendations", "reviewFlags", "links"} {
		if _, ok := sum[f]; !ok {
			t.Errorf("%s summary lacks %s", detail, f)
		}
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
