package webhookverify

import (
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Bits of FuzzVerify's mode argument.
const (
	modeAppendValid = 1 << iota // add Sign(secret, ts, body) to the signature header
	modeUpperHex                // ... with upper-case hex digits
	modeSecondTS                // send Service-Timestamp twice
	modeNoTS                    // send no Service-Timestamp
	modeSigTwice                // send Service-Signature as two header lines
	modeValidFirst              // put the valid value before the fuzzed one
)

// fuzzTimestamp is the receiver's reading of a Service-Timestamp value,
// written independently of parseTimestamp: surrounding white space, then
// 1 to 18 ASCII digits.
func fuzzTimestamp(v string) (int64, bool) {
	v = strings.TrimSpace(v)
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range []byte(v) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// FuzzVerify feeds arbitrary secrets, headers, bodies, clocks and
// tolerances to VerifyWithTolerance. It must never panic, must return only
// its documented errors, must return nil only when one v1 value in the
// signature header really is Sign(secret, ts, body) for the one timestamp
// header and that timestamp is within the tolerance, and must return nil
// for such a delivery built from the fuzz inputs.
func FuzzVerify(f *testing.F) {
	f.Add("whsec_test", "1700000000", "", []byte(`{"id":"evt_1"}`), int64(1700000000), int64(0), uint8(modeAppendValid))
	f.Add("whsec_test", "1700000000", "v0=abc, v1=zz", []byte(`{}`), int64(1700000301), int64(300), uint8(modeAppendValid|modeUpperHex))
	f.Add("", " 42 ", "v1="+strings.Repeat("0", 64), []byte(nil), int64(42), int64(-5), uint8(modeAppendValid|modeSigTwice|modeValidFirst))
	f.Add("k", "+1700000000", "v1=", []byte("x"), int64(1700000000), int64(60), uint8(modeAppendValid))
	f.Add("k", "1700000000", "v1=ab", []byte("x"), int64(1700000000), int64(60), uint8(modeSecondTS|modeAppendValid))
	f.Add("k", "999999999999999999", "garbage", []byte("x"), int64(0), int64(1), uint8(modeNoTS))
	f.Add("k", "1700000000", "\t,, ", []byte("x"), int64(1700000000), int64(1), uint8(0))
	f.Fuzz(func(t *testing.T, secret, tsHeader, sigHeader string, body []byte, nowUnix, tolSec int64, mode uint8) {
		// Clocks a receiver can have (1970 to year 36812); see
		// TestVerifyExtremeClock for clocks far outside that.
		if nowUnix < 0 {
			nowUnix = -(nowUnix + 1)
		}
		nowUnix %= 1 << 40
		tolSec %= 10_000_000
		now := time.Unix(nowUnix, 0)
		tol := time.Duration(tolSec) * time.Second
		limit := tolSec
		if tol <= 0 {
			limit = int64(DefaultTolerance / time.Second)
		}

		ts, tsOK := fuzzTimestamp(tsHeader)
		sig := sigHeader
		var valid string
		if mode&modeAppendValid != 0 && tsOK {
			valid = Sign(secret, ts, body)
			if mode&modeUpperHex != 0 {
				valid = "v1=" + strings.ToUpper(valid[3:])
			}
			if mode&modeValidFirst != 0 {
				sig = valid + " " + sig
			} else {
				sig = sig + "," + valid
			}
		}
		h := http.Header{}
		if mode&modeNoTS == 0 {
			h.Add(HeaderTimestamp, tsHeader)
			if mode&modeSecondTS != 0 {
				h.Add(HeaderTimestamp, tsHeader)
			}
		}
		if mode&modeSigTwice != 0 {
			if mode&modeValidFirst != 0 {
				h.Add(HeaderSignature, valid)
				h.Add(HeaderSignature, sigHeader)
			} else {
				h.Add(HeaderSignature, sigHeader)
				h.Add(HeaderSignature, valid)
			}
		} else {
			h.Add(HeaderSignature, sig)
		}

		err := VerifyHeader(secret, h, body, now, tol)

		if err != nil {
			known := false
			for _, e := range []error{ErrMissingHeaders, ErrBadTimestamp, ErrBadSignatureHeader, ErrSignatureMismatch, ErrTimestampOutsideTolerance} {
				known = known || errors.Is(err, e)
			}
			if !known {
				t.Fatalf("undocumented error %v", err)
			}
		}

		// Independently: is there a real signature for a single timestamp?
		tsVals := h.Values(HeaderTimestamp)
		single := len(tsVals) == 1 && tsOK
		want := Sign(secret, ts, body)
		signed := false
		if single {
			for _, line := range h.Values(HeaderSignature) {
				for _, v := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
					if strings.HasPrefix(v, "v1=") && strings.EqualFold(v[3:], want[3:]) {
						signed = true
					}
				}
			}
		}
		diff := nowUnix - ts
		inTime := diff <= limit && -diff <= limit

		if err == nil && !(signed && inTime) {
			t.Fatalf("Verify accepted: single timestamp %v (%d), signed %v, within %ds of %d: %v",
				single, ts, signed, limit, nowUnix, inTime)
		}
		if signed && inTime && err != nil {
			t.Fatalf("Verify refused a genuine delivery (ts %d, now %d, limit %ds): %v", ts, nowUnix, limit, err)
		}
		if signed && !inTime && !errors.Is(err, ErrTimestampOutsideTolerance) {
			t.Fatalf("genuine signature, ts %d outside %ds of %d: error %v, want ErrTimestampOutsideTolerance", ts, limit, nowUnix, err)
		}
		if valid != "" && single && !signed {
			t.Fatalf("the appended value %q was not recognised as a signature", valid)
		}
	})
}

// TestVerifyExtremeClock: the tolerance check holds for any clock reading,
// even one 2^63 seconds from the timestamp (it once negated an int64
// difference that could overflow).
func TestVerifyExtremeClock(t *testing.T) {
	h := http.Header{}
	h.Set(HeaderTimestamp, "0")
	h.Set(HeaderSignature, Sign("s", 0, []byte("b")))
	if err := VerifyHeader("s", h, []byte("b"), time.Unix(math.MinInt64, 0), DefaultTolerance); err == nil {
		t.Fatal("Verify accepted a timestamp 2^63 seconds away from now")
	}
}
