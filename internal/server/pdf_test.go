package server

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

func TestGetReportPDF(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 100000)
	key := e.allScopesKey(acct)
	// A key with only reports:pdf may download the PDF but not the JSON.
	pdfOnly, _ := e.key(acct, locrisk.NewKey{Scopes: []string{"reports:pdf"}})
	job := e.createJob(key, 37.77, -122.42)
	id := e.complete(job.JobID)
	path := reportsPath + id + "/pdf"

	first := e.do("GET", path, pdfOnly, "")
	if first.Code != http.StatusOK {
		t.Fatalf("status %d, body %s", first.Code, first.Body)
	}
	h := first.Header()
	if ct := h.Get("Content-Type"); ct != "application/pdf" {
		t.Errorf("Content-Type %q", ct)
	}
	if cd, want := h.Get("Content-Disposition"), `inline; filename="location-risk-`+id+`.pdf"`; cd != want {
		t.Errorf("Content-Disposition %q, want %q", cd, want)
	}
	body := first.Body.Bytes()
	if !bytes.HasPrefix(body, []byte("%PDF-")) || !bytes.Contains(body[len(body)-64:], []byte("%%EOF")) {
		t.Fatalf("body is not a PDF (%d bytes)", len(body))
	}
	etag := h.Get("ETag")
	if !strings.HasPrefix(etag, `"`) || strings.HasPrefix(etag, "W/") || len(etag) < 10 {
		t.Fatalf("ETag %q is not a strong tag", etag)
	}
	if h.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}

	second := e.do("GET", path, key, "")
	if !bytes.Equal(second.Body.Bytes(), body) || second.Header().Get("ETag") != etag {
		t.Fatal("the same report rendered different bytes or ETag")
	}

	for _, inm := range []string{etag, `"other", ` + etag, "W/" + etag, "*"} {
		rec := e.do("GET", path, key, "", withHeader("If-None-Match", inm))
		if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 || rec.Header().Get("ETag") != etag {
			t.Errorf("If-None-Match %s: status %d, %d body bytes", inm, rec.Code, rec.Body.Len())
		}
	}
	if rec := e.do("GET", path, key, "", withHeader("If-None-Match", `"stale"`)); rec.Code != http.StatusOK {
		t.Errorf("stale If-None-Match: status %d", rec.Code)
	}

	// The JSON needs reports:read, which the PDF-only key lacks.
	wantError(t, e.do("GET", reportsPath+id, pdfOnly, ""), http.StatusForbidden, "insufficient_scope")
}

func TestGetReportPDFErrors(t *testing.T) {
	e := newEnv(t)
	owner := e.allScopesKey(e.account(1000, 100000))
	other := e.allScopesKey(e.account(1000, 100000))
	id := e.complete(e.createJob(owner, 37.77, -122.42).JobID)
	tests := []struct {
		name, path, key string
		status          int
		code            string
	}{
		{"unknown report", reportsPath + ids.NewReportID() + "/pdf", owner, 404, "report_not_found"},
		{"another account's report", reportsPath + id + "/pdf", other, 404, "report_not_found"},
		{"not a UUID", reportsPath + "nope/pdf", owner, 400, "invalid_report_id"},
		{"a job id", reportsPath + ids.New(ids.Job) + "/pdf", owner, 400, "invalid_report_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.do("GET", tc.path, tc.key, ""), tc.status, tc.code)
		})
	}
	rec := e.do("POST", reportsPath+id+"/pdf", owner, "")
	wantError(t, rec, http.StatusMethodNotAllowed, "method_not_allowed")
}
