package webhook

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

func signedHeader(secret string, ts int64, body []byte) http.Header {
	h := http.Header{}
	h.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	h.Set(HeaderSignature, Sign(secret, ts, body))
	return h
}

func TestVerify(t *testing.T) {
	const secret = "whsec_test"
	body := []byte(`{"id":"evt_1","type":"report.job.completed"}`)
	now := time.Unix(1700000000, 0)
	ts := now.Unix()
	good := Sign(secret, ts, body)
	other := Sign("whsec_rotated_out", ts, body)

	tests := []struct {
		name    string
		header  func() http.Header
		body    []byte
		now     time.Time
		wantErr error
	}{
		{"valid", func() http.Header { return signedHeader(secret, ts, body) }, body, now, nil},
		{"valid at edge of past tolerance", func() http.Header { return signedHeader(secret, ts, body) }, body, now.Add(5 * time.Minute), nil},
		{"valid at edge of future tolerance", func() http.Header { return signedHeader(secret, ts, body) }, body, now.Add(-5 * time.Minute), nil},
		{"tampered body", func() http.Header { return signedHeader(secret, ts, body) },
			[]byte(strings.Replace(string(body), "completed", "failed", 1)), now, ErrSignatureMismatch},
		{"body with trailing newline", func() http.Header { return signedHeader(secret, ts, body) },
			append(append([]byte{}, body...), '\n'), now, ErrSignatureMismatch},
		{"stale timestamp", func() http.Header { return signedHeader(secret, ts, body) }, body, now.Add(5*time.Minute + time.Second), ErrTimestampOutsideTolerance},
		{"very stale timestamp", func() http.Header { return signedHeader(secret, ts, body) }, body, now.Add(24 * time.Hour), ErrTimestampOutsideTolerance},
		{"future timestamp", func() http.Header { return signedHeader(secret, ts, body) }, body, now.Add(-5*time.Minute - time.Second), ErrTimestampOutsideTolerance},
		{"wrong secret", func() http.Header { return signedHeader("whsec_wrong", ts, body) }, body, now, ErrSignatureMismatch},
		{"timestamp changed after signing", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Set(HeaderTimestamp, strconv.FormatInt(ts+1, 10))
			return h
		}, body, now, ErrSignatureMismatch},
		{"missing timestamp", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Del(HeaderTimestamp)
			return h
		}, body, now, ErrMissingHeaders},
		{"missing signature", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Del(HeaderSignature)
			return h
		}, body, now, ErrMissingHeaders},
		{"empty signature", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Set(HeaderSignature, " ")
			return h
		}, body, now, ErrMissingHeaders},
		{"no headers", func() http.Header { return http.Header{} }, body, now, ErrMissingHeaders},
		{"timestamp not a number", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Set(HeaderTimestamp, "yesterday")
			return h
		}, body, now, ErrBadTimestamp},
		{"timestamp with sign", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Set(HeaderTimestamp, "+"+strconv.FormatInt(ts, 10))
			return h
		}, body, now, ErrBadTimestamp},
		{"timestamp in milliseconds is outside tolerance", func() http.Header {
			return signedHeader(secret, ts*1000, body)
		}, body, now, ErrTimestampOutsideTolerance},
		{"two timestamps", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Add(HeaderTimestamp, strconv.FormatInt(ts, 10))
			return h
		}, body, now, ErrBadTimestamp},
		{"signature without scheme", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Set(HeaderSignature, strings.TrimPrefix(good, "v1="))
			return h
		}, body, now, ErrBadSignatureHeader},
		{"signature of other scheme only", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Set(HeaderSignature, "v0="+strings.TrimPrefix(good, "v1="))
			return h
		}, body, now, ErrBadSignatureHeader},
		{"signature not hex", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Set(HeaderSignature, "v1="+strings.Repeat("zz", 32))
			return h
		}, body, now, ErrBadSignatureHeader},
		{"signature truncated", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Set(HeaderSignature, good[:len(good)-2])
			return h
		}, body, now, ErrBadSignatureHeader},
		{"several v1 values, comma separated, match second", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Set(HeaderSignature, other+","+good)
			return h
		}, body, now, nil},
		{"several v1 values, space separated, match first", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Set(HeaderSignature, good+" "+other)
			return h
		}, body, now, nil},
		{"several values with junk and another scheme", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Set(HeaderSignature, "v0=abc, junk ,"+good)
			return h
		}, body, now, nil},
		{"several v1 values, none matches", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Set(HeaderSignature, other+", "+Sign("whsec_x", ts, body))
			return h
		}, body, now, ErrSignatureMismatch},
		{"signature header repeated", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Set(HeaderSignature, other)
			h.Add(HeaderSignature, good)
			return h
		}, body, now, nil},
		{"uppercase hex accepted", func() http.Header {
			h := signedHeader(secret, ts, body)
			h.Set(HeaderSignature, "v1="+strings.ToUpper(strings.TrimPrefix(good, "v1=")))
			return h
		}, body, now, nil},
		{"stale timestamp with bad signature reports the signature", func() http.Header {
			return signedHeader("whsec_wrong", ts, body)
		}, body, now.Add(time.Hour), ErrSignatureMismatch},
	}
	sentinels := []error{ErrMissingHeaders, ErrBadTimestamp, ErrBadSignatureHeader, ErrSignatureMismatch, ErrTimestampOutsideTolerance}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(secret, tc.header(), tc.body, tc.now)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Verify: unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Verify error = %v, want %v", err, tc.wantErr)
			}
			for _, s := range sentinels {
				if s != tc.wantErr && errors.Is(err, s) {
					t.Errorf("error %v also matches %v; errors must be distinct", err, s)
				}
			}
		})
	}
}

func TestVerifyWithTolerance(t *testing.T) {
	const secret = "whsec_test"
	body := []byte(`{}`)
	ts := int64(1700000000)
	h := signedHeader(secret, ts, body)
	tests := []struct {
		tolerance time.Duration
		age       time.Duration
		wantErr   error
	}{
		{time.Minute, 59 * time.Second, nil},
		{time.Minute, 61 * time.Second, ErrTimestampOutsideTolerance},
		{time.Minute, -61 * time.Second, ErrTimestampOutsideTolerance},
		{time.Hour, 59 * time.Minute, nil},
		{0, 4 * time.Minute, nil},                                   // zero means the default
		{0, 6 * time.Minute, ErrTimestampOutsideTolerance},          // ... not "no check"
		{-time.Hour, 6 * time.Minute, ErrTimestampOutsideTolerance}, // nor does a negative one
	}
	for _, tc := range tests {
		err := VerifyWithTolerance(secret, h, body, time.Unix(ts, 0).Add(tc.age), tc.tolerance)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
			t.Errorf("tolerance %v, age %v: error %v, want %v", tc.tolerance, tc.age, err, tc.wantErr)
		}
	}
}

func TestMiddleware(t *testing.T) {
	const secret = "whsec_test"
	body := []byte(`{"id":"evt_mw"}`)
	var got []byte
	h := Middleware(secret, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	tests := []struct {
		name   string
		secret string
		body   string
		want   int
	}{
		{"valid", secret, string(body), http.StatusNoContent},
		{"wrong secret", "whsec_wrong", string(body), http.StatusUnauthorized},
		{"too large", secret, strings.Repeat("x", MaxVerifiedBody+1), http.StatusBadRequest},
	}
	for _, tc := range tests {
		got = nil
		req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(tc.body))
		ts := time.Now().Unix()
		req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
		req.Header.Set(HeaderSignature, Sign(tc.secret, ts, []byte(tc.body)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, rec.Code, tc.want)
		}
		if tc.want == http.StatusNoContent && string(got) != tc.body {
			t.Errorf("%s: handler read body %q, want %q", tc.name, got, tc.body)
		}
		if tc.want != http.StatusNoContent && got != nil {
			t.Errorf("%s: handler was called for a refused delivery", tc.name)
		}
	}
}
