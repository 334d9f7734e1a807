package webhookverify

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The expected values were computed outside Go with
//
//	printf '%s.%s' "$ts" "$body" | openssl dgst -sha256 -hmac "$secret"
func TestSignVectors(t *testing.T) {
	tests := []struct {
		secret string
		ts     int64
		body   string
		want   string
	}{
		{"whsec_test", 1700000000, `{"id":"evt_1"}`,
			"v1=c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925"},
		{"whsec_other", 1700000000, `{"id":"evt_1"}`,
			"v1=d8d091c76b586cff4dbd317fc47ebddff4b86de3ce18d3c03753c3c1901d475a"},
		{"whsec_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB7cDE0fGH3i", 1767225600, "",
			"v1=017c674e251d587e40af96b59443029b34b92fa62520cc4737905669dd8176ef"},
	}
	for _, tc := range tests {
		if got := Sign(tc.secret, tc.ts, []byte(tc.body)); got != tc.want {
			t.Errorf("Sign(%q, %d, %q) = %s, want %s", tc.secret, tc.ts, tc.body, got, tc.want)
		}
	}
}

func TestVerify(t *testing.T) {
	const secret = "whsec_test"
	body := []byte(`{"id":"evt_1","type":"webhook.test"}`)
	now := time.Unix(1700000000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	good := Sign(secret, now.Unix(), body)
	tests := []struct {
		name          string
		ts, signature string
		body          []byte
		now           time.Time
		tolerance     time.Duration
		want          error
	}{
		{"valid", ts, good, body, now, 0, nil},
		{"valid among others", ts, "v0=abc, " + Sign("whsec_old", now.Unix(), body) + " " + good, body, now, 0, nil},
		{"body changed", ts, good, append(append([]byte{}, body...), '\n'), now, 0, ErrSignatureMismatch},
		{"wrong secret", ts, Sign("whsec_wrong", now.Unix(), body), body, now, 0, ErrSignatureMismatch},
		{"timestamp changed", strconv.FormatInt(now.Unix()+1, 10), good, body, now.Add(time.Second), 0, ErrSignatureMismatch},
		{"no timestamp", "", good, body, now, 0, ErrMissingHeaders},
		{"no signature", ts, " ", body, now, 0, ErrMissingHeaders},
		{"signed timestamp", "+" + ts, good, body, now, 0, ErrBadTimestamp},
		{"malformed signature", ts, "v1=xyz", body, now, 0, ErrBadSignatureHeader},
		{"upper-case hex", ts, "v1=" + strings.ToUpper(good[3:]), body, now, 0, nil},
		{"replayed", ts, good, body, now.Add(DefaultTolerance + time.Second), 0, ErrTimestampOutsideTolerance},
		{"from the future", ts, good, body, now.Add(-DefaultTolerance - time.Second), 0, ErrTimestampOutsideTolerance},
		{"at the tolerance", ts, good, body, now.Add(DefaultTolerance), 0, nil},
		{"own tolerance", ts, good, body, now.Add(time.Minute + time.Second), time.Minute, ErrTimestampOutsideTolerance},
		{"negative tolerance is the default", ts, good, body, now.Add(4 * time.Minute), -1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(secret, tc.ts, tc.signature, tc.body, tc.now, tc.tolerance)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestVerifyHeader(t *testing.T) {
	const secret = "whsec_test"
	body := []byte(`{"id":"evt_2"}`)
	now := time.Unix(1700000000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	good := Sign(secret, now.Unix(), body)
	tests := []struct {
		name string
		h    http.Header
		want error
	}{
		{"valid", http.Header{HeaderTimestamp: {ts}, HeaderSignature: {good}}, nil},
		{"signature in a repeated header", http.Header{HeaderTimestamp: {ts}, HeaderSignature: {"v1=" + strings.Repeat("0", 64), good}}, nil},
		{"two timestamps", http.Header{HeaderTimestamp: {ts, ts}, HeaderSignature: {good}}, ErrBadTimestamp},
		{"no headers", http.Header{}, ErrMissingHeaders},
		{"blank signatures", http.Header{HeaderTimestamp: {ts}, HeaderSignature: {"", " "}}, ErrMissingHeaders},
	}
	for _, tc := range tests {
		err := VerifyHeader(secret, tc.h, body, now, DefaultTolerance)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: VerifyHeader = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestMiddleware(t *testing.T) {
	const secret = "whsec_test"
	var got string
	h := Middleware(secret, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
		w.WriteHeader(http.StatusNoContent)
	}))
	send := func(body, sig string) int {
		r := httptest.NewRequest("POST", "/hook", strings.NewReader(body))
		ts := time.Now().Unix()
		r.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
		if sig == "" {
			sig = Sign(secret, ts, []byte(body))
		}
		r.Header.Set(HeaderSignature, sig)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if code := send(`{"ok":true}`, ""); code != http.StatusNoContent || got != `{"ok":true}` {
		t.Errorf("signed request: %d, handler read %q", code, got)
	}
	if code := send(`{"ok":true}`, "v1="+strings.Repeat("0", 64)); code != http.StatusUnauthorized {
		t.Errorf("forged request: %d, want 401", code)
	}
	if code := send(strings.Repeat("x", MaxBody+1), ""); code != http.StatusBadRequest {
		t.Errorf("oversized body: %d, want 400", code)
	}
}
