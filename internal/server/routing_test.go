package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestUnknownPathsAndWrongMethods(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(100, 1000))
	tests := []struct {
		method, path string
		status       int
		code         string
		allow        string
	}{
		{"GET", "/", 404, "not_found", ""},
		{"GET", "/api/v1", 404, "not_found", ""},
		{"GET", "/api/v1/", 404, "not_found", ""},
		{"GET", "/api/v2/location-risk/report-jobs", 404, "not_found", ""},
		{"GET", "/api/v1/location-risk/report-jobs/", 404, "not_found", ""},
		{"GET", "/api/v1/location-risk/report-jobs/job_x/", 404, "not_found", ""},
		{"GET", "/api/v1/location-risk/report-jobs/job_x/retry/more", 404, "not_found", ""},
		{"GET", "/api/v1/location-risk/reports", 404, "not_found", ""},
		{"GET", "/api/v1/usage", 404, "not_found", ""},
		{"GET", "/API/V1/location-risk/report-jobs", 404, "not_found", ""},
		{"GET", "/api/v1/location-risk//report-jobs", 404, "not_found", ""},
		{"POST", "/api/v1/location-risk/./report-jobs", 404, "not_found", ""},
		{"GET", "/api/v1/usage/../location-risk/report-jobs", 404, "not_found", ""},
		{"DELETE", "/api/v1/location-risk/report-jobs", 405, "method_not_allowed", "GET, HEAD, POST"},
		{"PUT", "/api/v1/location-risk/report-jobs", 405, "method_not_allowed", "GET, HEAD, POST"},
		{"POST", "/api/v1/location-risk/report-jobs/job_x", 405, "method_not_allowed", "GET, HEAD"},
		{"GET", "/api/v1/location-risk/report-jobs/job_x/retry", 405, "method_not_allowed", "POST"},
		{"POST", "/api/v1/location-risk/reports/00000000-0000-0000-0000-000000000000", 405, "method_not_allowed", "GET, HEAD"},
		{"DELETE", "/api/v1/location-risk/reports/x/pdf", 405, "method_not_allowed", "GET, HEAD"},
		{"PATCH", "/api/v1/location-risk/batches", 405, "method_not_allowed", "GET, HEAD, POST"},
		{"POST", "/api/v1/location-risk/batches/bat_x/results.csv", 405, "method_not_allowed", "GET, HEAD"},
		{"POST", "/api/v1/usage/current", 405, "method_not_allowed", "GET, HEAD"},
		{"DELETE", "/api/v1/observability/current", 405, "method_not_allowed", "GET, HEAD"},
		{"PUT", "/api/v1/webhooks", 405, "method_not_allowed", "GET, HEAD, POST"},
		{"GET", "/api/v1/webhooks/we_x", 405, "method_not_allowed", "DELETE"},
		{"POST", "/api/v1/webhooks/deliveries", 405, "method_not_allowed", "DELETE, GET, HEAD"},
		{"OPTIONS", "/api/v1/webhooks", 405, "method_not_allowed", "GET, HEAD, POST"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			// With and without a key: routing errors do not depend on auth.
			for _, k := range []string{"", key} {
				rec := e.do(tc.method, tc.path, k, "")
				wantError(t, rec, tc.status, tc.code)
				if got := rec.Header().Get("Allow"); got != tc.allow {
					t.Errorf("Allow = %q, want %q", got, tc.allow)
				}
			}
		})
	}
}

func TestRequestIDsAreUnique(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(100, 1000))
	seen := map[string]bool{}
	for _, p := range []string{jobsPath, jobsPath, "/nope", "/api/v1/usage/current"} {
		for _, k := range []string{"", key} {
			rec := e.do("GET", p, k, "")
			id := rec.Header().Get("X-Request-Id")
			if seen[id] {
				t.Fatalf("X-Request-Id %s repeated", id)
			}
			seen[id] = true
		}
	}
}

func TestPanicBecomes500(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(100, 1000))
	rec := e.do("POST", jobsPath, key, `{"latitude": 13.5, "longitude": -100}`)
	wantError(t, rec, http.StatusInternalServerError, "internal_error")
	if !strings.Contains(e.logs.String(), "deliberate panic") {
		t.Errorf("panic not logged; logs:\n%s", e.logs)
	}
	// The server keeps serving.
	rec = e.do("GET", jobsPath, key, "")
	if rec.Code != http.StatusOK {
		t.Errorf("after panic: status %d", rec.Code)
	}
}

func TestInternalErrorHidesCause(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(100, 1000))
	rec := e.do("POST", jobsPath, key, `{"latitude": 12.5, "longitude": -100}`)
	wantError(t, rec, http.StatusInternalServerError, "internal_error")
	if strings.Contains(rec.Body.String(), errLocatorBroken.Error()) {
		t.Errorf("500 body reveals the cause: %s", rec.Body)
	}
	if !strings.Contains(e.logs.String(), errLocatorBroken.Error()) {
		t.Errorf("cause not logged")
	}
}

func TestLogLinePerRequestWithoutSecrets(t *testing.T) {
	e := newEnv(t)
	acct := e.account(100, 1000)
	key := e.allScopesKey(acct)
	e.do("GET", jobsPath+"/job_abcdefghijklmnopqrstuvwx", key, "")
	e.do("GET", jobsPath, "lrk_notarealkeynotarealkeynotarealkey", "")
	e.do("GET", jobsPath, "", "", withHeader("X-API-Key", key))
	e.do("GET", "/nowhere", "", "")

	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(e.logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line not JSON: %q", l)
		}
		if m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 4 {
		t.Fatalf("got %d request log lines, want 4:\n%s", len(lines), e.logs)
	}
	want := []struct {
		pattern string
		status  float64
		account string
	}{
		{"/api/v1/location-risk/report-jobs/{jobId}", 404, acct.ID},
		{"/api/v1/location-risk/report-jobs", 401, ""},
		{"/api/v1/location-risk/report-jobs", 200, acct.ID},
		{"", 404, ""},
	}
	for i, w := range want {
		l := lines[i]
		if l["method"] != "GET" || l["pattern"] != w.pattern || l["status"] != w.status || l["account_id"] != w.account {
			t.Errorf("log line %d = %v, want pattern %q status %v account %q", i, l, w.pattern, w.status, w.account)
		}
		if id, _ := l["request_id"].(string); !strings.HasPrefix(id, "req_") {
			t.Errorf("log line %d request_id = %v", i, l["request_id"])
		}
		if _, ok := l["duration_ms"].(float64); !ok {
			t.Errorf("log line %d lacks duration_ms", i)
		}
	}
	if logs := e.logs.String(); strings.Contains(logs, key) || strings.Contains(logs, "notarealkey") {
		t.Errorf("a key secret reached the log")
	}
}

func TestRealListener(t *testing.T) {
	e := newEnv(t)
	acct := e.account(100, 1000)
	key, _ := e.key(acct, keyAllowing(t, "127.0.0.0/8,::1/128"))
	ts := httptest.NewServer(e.checked(e.h))
	defer ts.Close()
	req, _ := http.NewRequest("GET", ts.URL+jobsPath, nil)
	req.Header.Set("X-API-Key", key)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("over a real connection from loopback: status %d", resp.StatusCode)
	}
	if resp.Header.Get("RateLimit-Limit") != "1000" {
		t.Errorf("RateLimit-Limit = %q", resp.Header.Get("RateLimit-Limit"))
	}
}
