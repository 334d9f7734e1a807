package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestErrorHints: the mistakes a new integrator makes get an answer that
// names the likely cause (docs/api.md, Errors).
func TestErrorHints(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 1000)
	key := e.allScopesKey(acct)
	contentType := func(v string) reqOpt { return func(r *http.Request) { r.Header.Set("Content-Type", v) } }
	tests := []struct {
		name, method, path, body string
		opts                     []reqOpt
		status                   int
		code                     string
		want, notWant            string
	}{
		{"swapped coordinates", "POST", jobsPath, `{"latitude": -74.006, "longitude": 40.7128}`, nil,
			422, "unsupported_location", "latitude and longitude look swapped: latitude 40.7128, longitude -74.006 is covered", ""},
		{"outside coverage, not swapped", "POST", jobsPath, `{"latitude": -33.87, "longitude": 151.21}`, nil,
			422, "unsupported_location", "outside the supported United States coverage", "swapped"},
		{"form-encoded body", "POST", jobsPath, `latitude=40.7&longitude=-74`, []reqOpt{contentType("application/x-www-form-urlencoded")},
			400, "invalid_request", `must be a JSON object (it was sent with Content-Type: application/x-www-form-urlencoded; send a JSON object with Content-Type: application/json)`, ""},
		{"text body", "POST", jobsPath, `40.7,-74`, []reqOpt{contentType("text/plain; charset=utf-8")},
			400, "invalid_request", `Content-Type: text/plain; charset=utf-8;`, ""},
		{"JSON declared, not an object", "POST", jobsPath, `[1]`, nil,
			400, "invalid_request", "must be a JSON object", "Content-Type"},
		{"problem+json declared", "POST", jobsPath, `[1]`, []reqOpt{contentType("application/merge-patch+json")},
			400, "invalid_request", "must be a JSON object", "Content-Type"},
		{"malformed job id", "GET", jobsPath + "/12345", "", nil,
			404, "report_job_not_found", "jobId values are job_ followed by at least 20 letters and digits", ""},
		{"well-formed unknown job id", "GET", jobsPath + "/job_0000000000000000000000", "", nil,
			404, "report_job_not_found", "no report job with this id", "values are"},
		{"malformed batch id", "GET", batchesPath + "/42", "", nil,
			404, "batch_not_found", "batchId values are bat_", ""},
		{"plain http webhook", "POST", webhooksPath, `{"name": "local", "url": "http://127.0.0.1:9000/hook", "events": ["report.completed"]}`, nil,
			400, "invalid_url", "--webhook-allow-private", ""},
		{"private https webhook", "POST", webhooksPath, `{"name": "local", "url": "https://10.0.0.7/hook", "events": ["report.completed"]}`, nil,
			400, "invalid_url", "--webhook-allow-private", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do(tc.method, tc.path, key, tc.body, tc.opts...)
			wantError(t, rec, tc.status, tc.code)
			msg := rec.Body.String()
			if !strings.Contains(msg, tc.want) || (tc.notWant != "" && strings.Contains(msg, tc.notWant)) {
				t.Errorf("message %s, want it to contain %q and not %q", msg, tc.want, tc.notWant)
			}
		})
	}

	// A batch item with swapped coordinates is rejected with the same hint.
	b := e.createBatch(key, batchBody(t, nil, item{"externalId": "swapped", "latitude": -74.006, "longitude": 40.7128}, validItems(1)[0]))
	rec := e.do("GET", batchesPath+"/"+b.BatchID+"/items", key, "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "look swapped: latitude 40.7128, longitude -74.006 is covered") {
		t.Errorf("batch items: %d %s", rec.Code, rec.Body)
	}
}
