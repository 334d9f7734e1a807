package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

// TestCodeStatus pins the status of every code docs/api.md (Errors) lists.
func TestCodeStatus(t *testing.T) {
	want := map[int][]string{
		400: {"invalid_request", "invalid_latitude", "invalid_longitude", "invalid_idempotency_key", "invalid_limit",
			"invalid_cursor", "invalid_status", "invalid_detail", "invalid_report_id", "invalid_name", "invalid_items", "invalid_external_id",
			"too_many_items", "invalid_days", "invalid_bucket", "invalid_hours", "invalid_url", "invalid_events",
			"endpoint_limit_reached", "invalid_since", "invalid_min_score_change", "invalid_item_ids", "invalid_changed",
			"watchlist_full"},
		401: {"invalid_api_key"},
		403: {"insufficient_scope"},
		404: {"report_job_not_found", "report_not_found", "batch_not_found", "webhook_endpoint_not_found",
			"webhook_delivery_not_found", "not_found", "watchlist_not_found"},
		405: {"method_not_allowed"},
		409: {"idempotency_conflict", "job_not_retryable", "webhook_endpoint_disabled", "delivery_not_failed"},
		413: {"payload_too_large"},
		415: {"unsupported_media_type"},
		422: {"unsupported_location", "coordinate_mismatch"},
		431: {"headers_too_large"},
		429: {"quota_exceeded", "rate_limit_exceeded", "too_many_requests_in_flight", "rescore_too_soon"},
		500: {"internal_error"},
		503: {"server_busy", "database_busy", "storage_full", "database_unavailable"},
	}
	n := 0
	for status, codes := range want {
		for _, c := range codes {
			n++
			if got, ok := codeStatus[c]; !ok || got != status {
				t.Errorf("codeStatus[%q] = %d, %v; want %d", c, got, ok, status)
			}
		}
	}
	if len(codeStatus) != n {
		t.Errorf("codeStatus has %d codes, the test knows %d: pin the new ones here", len(codeStatus), n)
	}
}

func TestStoreError(t *testing.T) {
	now := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	other := errors.New("disk on fire")
	tests := []struct {
		err        error
		code       string
		retryAfter time.Duration
	}{
		{fmt.Errorf("job x: %w", locrisk.ErrNotFound), "report_job_not_found", 0},
		{fmt.Errorf("create job: %w", locrisk.ErrIdempotencyConflict), "idempotency_conflict", 0},
		{fmt.Errorf("retry: %w", locrisk.ErrNotRetryable), "job_not_retryable", 0},
		{fmt.Errorf("list: %w", locrisk.ErrBadCursor), "invalid_cursor", 0},
		{fmt.Errorf("test: %w", locrisk.ErrEndpointDisabled), "webhook_endpoint_disabled", 0},
		{fmt.Errorf("redeliver: %w", locrisk.ErrDeliveryNotFailed), "delivery_not_failed", 0},
		{fmt.Errorf("create job: %w", &locrisk.QuotaError{Limit: 1, Used: 1, ResetsAt: locrisk.NextMonthStart(now)}), "quota_exceeded", time.Hour},
		{locrisk.ErrQuotaExceeded, "quota_exceeded", 0},
		{fmt.Errorf("create job: %w", locrisk.ErrStorageFull), "storage_full", 30 * time.Second},
		{fmt.Errorf("create job: %w", locrisk.ErrUnavailable), "database_unavailable", 5 * time.Second},
	}
	for _, tc := range tests {
		got := storeError(tc.err, codeReportJobNotFound, now)
		var ae *Error
		if !errors.As(got, &ae) || ae.Code != tc.code || ae.RetryAfter != tc.retryAfter {
			t.Errorf("storeError(%v) = %v (%+v), want %s retry %v", tc.err, got, ae, tc.code, tc.retryAfter)
		}
	}
	if got := storeError(other, codeReportNotFound, now); got != other {
		t.Errorf("unknown error mapped to %v; want it unchanged (a 500)", got)
	}
	if storeError(nil, codeReportNotFound, now) != nil {
		t.Errorf("nil error mapped to non-nil")
	}
}

func TestWriteErrorUnknownCodeIs500(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	rec := httptest.NewRecorder()
	s.writeError(rec, httptest.NewRequest("GET", "/", nil), &Error{Code: "made_up", Message: "x"})
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status %d, want 500", rec.Code)
	}
}

func TestCeilSeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{{0, 1}, {-time.Second, 1}, {time.Nanosecond, 1}, {time.Second, 1}, {time.Second + 1, 2}, {59500 * time.Millisecond, 60}} {
		if got := ceilSeconds(tc.d); got != tc.want {
			t.Errorf("ceilSeconds(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

func TestRequestHashCanonical(t *testing.T) {
	parse := func(s string) float64 {
		v, ok := coordinate([]byte(s), 180)
		if !ok {
			t.Fatalf("coordinate(%s) refused", s)
		}
		return v
	}
	same := [][2]string{{"10", "10.0"}, {"10", "1e1"}, {"-0", "0"}, {"0.1", "1e-1"}, {"-74.006", "-74.0060"}}
	for _, p := range same {
		if jobRequestHash(parse(p[0]), 0) != jobRequestHash(parse(p[1]), 0) {
			t.Errorf("%s and %s hash differently", p[0], p[1])
		}
	}
	if jobRequestHash(1, 2) == jobRequestHash(2, 1) {
		t.Errorf("swapped coordinates hash the same")
	}
	if jobRequestHash(10, 0) == jobRequestHash(10.000000001, 0) {
		t.Errorf("different coordinates hash the same")
	}
}
