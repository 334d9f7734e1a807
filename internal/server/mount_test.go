package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestMount: a Mount answers GET and HEAD under its prefix through the
// outer middleware (request id, Server header, the log line) without a key
// or RateLimit-* headers, may replace Cache-Control, gets the server's
// JSON 405 for other methods, and changes nothing of the API beside it.
func TestMount(t *testing.T) {
	var seen []string
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.Path)
		if strings.HasSuffix(r.URL.Path, ".css") {
			w.Header().Set("Cache-Control", "public, max-age=60")
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<p>page</p>"))
	})
	e := newEnvWith(t, Config{Mounts: []Mount{{Prefix: "/console/", Handler: page}}})
	key := e.allScopesKey(e.account(100, 1000))

	tests := []struct {
		method, path string
		status       int
		cache, allow string
	}{
		{"GET", "/console/", 200, "no-store", ""},
		{"HEAD", "/console/", 200, "no-store", ""},
		{"GET", "/console/reports/x", 200, "no-store", ""},
		{"GET", "/console/a.css", 200, "public, max-age=60", ""},
		{"GET", "/console", 307, "no-store", ""},
		{"POST", "/console/", 405, "no-store", "GET, HEAD"},
		{"DELETE", "/console/x", 405, "no-store", "GET, HEAD"},
	}
	for _, tc := range tests {
		rec := e.do(tc.method, tc.path, "", "")
		if rec.Code != tc.status {
			t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.path, rec.Code, tc.status, rec.Body)
			continue
		}
		h := rec.Header()
		if got := h.Get("Cache-Control"); got != tc.cache {
			t.Errorf("%s %s: Cache-Control %q, want %q", tc.method, tc.path, got, tc.cache)
		}
		if got := h.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
		if h.Get("RateLimit-Limit") != "" || !strings.HasPrefix(h.Get("Server"), "locrisk/") {
			t.Errorf("%s %s: RateLimit-Limit %q, Server %q", tc.method, tc.path, h.Get("RateLimit-Limit"), h.Get("Server"))
		}
		if tc.status == 405 && bodyErrorCode(rec.Body.Bytes()) != codeMethodNotAllowed {
			t.Errorf("%s %s: body %s, want the error shape with %s", tc.method, tc.path, rec.Body, codeMethodNotAllowed)
		}
		if tc.status == 307 && rec.Header().Get("Location") != "/console/" {
			t.Errorf("GET /console: Location %q", rec.Header().Get("Location"))
		}
	}
	if want := "GET /console/,HEAD /console/,GET /console/reports/x,GET /console/a.css"; strings.Join(seen, ",") != want {
		t.Errorf("the mount saw %q, want %q", strings.Join(seen, ","), want)
	}

	// The API beside it answers as before: an operation with its key, the
	// unauthenticated document, and a path that is neither.
	if rec := e.do("GET", jobsPath, key, ""); rec.Code != 200 || rec.Header().Get("RateLimit-Limit") == "" {
		t.Errorf("GET %s beside a mount: %d, RateLimit-Limit %q", jobsPath, rec.Code, rec.Header().Get("RateLimit-Limit"))
	}
	wantError(t, e.do("GET", "/consoles", "", ""), 404, codeNotFound)
	wantError(t, e.do("GET", "/", "", ""), 404, codeNotFound)
	if rec := e.do("GET", "/api/v1/openapi.json", "", ""); rec.Code != 200 {
		t.Errorf("GET /api/v1/openapi.json beside a mount: %d", rec.Code)
	}
	// A mount's requests are not the account's: the summary counts none.
	e.srv.FlushStats(t.Context())
	rec := e.do("GET", "/api/v1/observability/current", key, "")
	if !strings.Contains(rec.Body.String(), `"total":1,`) {
		t.Errorf("the summary counts more than the one API request before it: %s", rec.Body)
	}
}

func TestMountPrefixChecked(t *testing.T) {
	h := http.NotFoundHandler()
	for _, tc := range []struct {
		m  Mount
		ok bool
	}{
		{Mount{"/console/", h}, true},
		{Mount{"/ui/app/", h}, true},
		{Mount{"/console/", nil}, false},
		{Mount{"/", h}, false},
		{Mount{"/console", h}, false},
		{Mount{"console/", h}, false},
		{Mount{"/a//b/", h}, false},
		{Mount{"/api/", h}, false},
		{Mount{"/api/v1/", h}, false},
		{Mount{"/api/v1/console/", h}, false},
		{Mount{"/.well-known/", h}, false},
		{Mount{"/healthz/", h}, false},
	} {
		if err := tc.m.check(); (err == nil) != tc.ok {
			t.Errorf("Mount{%q}: check() = %v, want ok %v", tc.m.Prefix, err, tc.ok)
		}
	}
}
