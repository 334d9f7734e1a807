package webhook

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
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

		err := VerifyWithTolerance(secret, h, body, now, tol)

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
	if err := Verify("s", h, []byte("b"), time.Unix(math.MinInt64, 0)); err == nil {
		t.Fatal("Verify accepted a timestamp 2^63 seconds away from now")
	}
}

// FuzzCheckURL validates arbitrary URLs against a resolver that maps the
// URL's host to an address chosen by the fuzzer. CheckURL must never panic,
// must refuse with an *URLError wrapping ErrInvalidURL (never showing a
// resolved address the caller did not write), and when it accepts: the URL
// is absolute https (http only with allowPrivate), with a host, no
// credentials and no fragment, and unless allowPrivate neither an IP-literal
// host nor any resolved address is in a disallowed class.
func FuzzCheckURL(f *testing.F) {
	v4 := func(s string) []byte { a := netip.MustParseAddr(s).As4(); return a[:] }
	v6 := func(s string) []byte { a := netip.MustParseAddr(s).As16(); return a[:] }
	f.Add("https://hooks.example.com/locrisk", false, v4("93.184.216.34"))
	f.Add("https://hooks.example.com/locrisk", false, v4("10.1.2.3"))
	f.Add("https://internal.example.com:8443/x?y=1", false, v6("fe80::1"))
	f.Add("https://internal.example.com/", false, v6("::ffff:127.0.0.1"))
	f.Add("https://127.0.0.1/hook", false, []byte(nil))
	f.Add("https://[::ffff:169.254.169.254]/", false, []byte(nil))
	f.Add("https://[fe80::1%25eth0]:443/", false, []byte(nil))
	f.Add("https://[64:ff9b::a00:1]/", false, []byte(nil))
	f.Add("https://127.0.0.%31/", false, []byte(nil))
	f.Add("HTTPS://8.8.8.8/", false, []byte(nil))
	f.Add("http://127.0.0.1:9000/hook", true, []byte(nil))
	f.Add("http://hooks.example.com/", false, v4("8.8.8.8"))
	f.Add("https://user:pw@hooks.example.com/", false, v4("8.8.8.8"))
	f.Add("https://hooks.example.com/#frag", false, v4("8.8.8.8"))
	f.Add("https://hooks.example.com:0/", false, v4("8.8.8.8"))
	f.Add("https://hooks.example.com:65536/", false, v4("8.8.8.8"))
	f.Add("https:///nohost", false, []byte(nil))
	f.Add("javascript:alert(1)", false, []byte(nil))
	f.Add(" https://hooks.example.com/", false, []byte(nil))
	f.Add("https://%5B::1%5D/", false, []byte(nil))
	f.Add("https://vm./", false, []byte(nil))
	f.Add("https://１２７.０.０.１/", false, []byte(nil))
	f.Add("https://127。0。0。1/", false, []byte(nil))
	f.Add("https://ｈｏｏｋｓ．example．com/", false, v4("10.1.2.3"))
	f.Add("https://db.internal/", false, v4("93.184.216.34"))
	f.Add("https://vm../", false, []byte(nil))
	f.Add("https://foo.local../", false, v4("93.184.216.34"))
	f.Add("https://.hooks.example.com/", false, v4("93.184.216.34"))
	f.Add("https://hooks..example.com/", false, v4("93.184.216.34"))
	f.Add("https://nosuchhost/", false, []byte(nil))
	f.Add("https://vm/", false, v4("10.0.0.7"))
	f.Fuzz(func(t *testing.T, raw string, allowPrivate bool, resolved []byte) {
		var addr netip.Addr
		switch {
		case len(resolved) >= 16:
			addr = netip.AddrFrom16([16]byte(resolved[:16]))
		case len(resolved) >= 4:
			addr = netip.AddrFrom4([4]byte(resolved[:4]))
		}
		res := &fakeResolver{hosts: map[string][]string{}}
		parsed, perr := url.Parse(raw)
		if perr == nil && addr.IsValid() {
			// Keyed by the name the check looks up: the normalised host.
			if dial, _, ok := NormalizeHost(parsed.Hostname()); ok {
				res.hosts[dial] = []string{addr.String()}
			}
		}

		err := CheckURL(context.Background(), raw, allowPrivate, res)

		if allowPrivate && len(res.asked) != 0 {
			t.Fatalf("resolver asked %v with allowPrivate", res.asked)
		}
		if err != nil {
			var ue *URLError
			if !errors.As(err, &ue) || !errors.Is(err, ErrInvalidURL) {
				t.Fatalf("refusal %v (%T) is not a *URLError wrapping ErrInvalidURL", err, err)
			}
			if addr.IsValid() && len(res.asked) > 0 && !strings.Contains(raw, addr.String()) && strings.Contains(err.Error(), addr.String()) {
				t.Fatalf("refusal %q reveals the resolved address %s", err, addr)
			}
			if errors.Is(err, ErrAddressNotAllowed) {
				var ae *AddressError
				if !errors.As(err, &ae) || !Disallowed(ae.Addr) || AddressClass(ae.Addr) != ae.Class {
					t.Fatalf("address refusal %v carries no disallowed address", err)
				}
				// What a name resolves to never shows in the answer.
				if ue.Reason != ReasonNotPublic {
					t.Fatalf("address refusal %q, want the one reason %q", ue.Reason, ReasonNotPublic)
				}
			}
			return
		}

		// Accepted: check every promise independently.
		if len(raw) > MaxURLLength || raw != strings.TrimSpace(raw) {
			t.Fatalf("accepted %q: too long or surrounded by space", raw)
		}
		if perr != nil {
			t.Fatalf("accepted %q, which url.Parse refuses: %v", raw, perr)
		}
		switch strings.ToLower(parsed.Scheme) {
		case "https":
		case "http":
			if !allowPrivate {
				t.Fatalf("accepted plain http %q without allowPrivate", raw)
			}
		default:
			t.Fatalf("accepted scheme %q in %q", parsed.Scheme, raw)
		}
		if parsed.User != nil || strings.Contains(raw, "#") || parsed.Opaque != "" {
			t.Fatalf("accepted %q with credentials, a fragment or an opaque part", raw)
		}
		host := parsed.Hostname()
		if host == "" {
			t.Fatalf("accepted %q without a host", raw)
		}
		if p := parsed.Port(); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				t.Fatalf("accepted %q with port %q", raw, p)
			}
		}
		if allowPrivate {
			return
		}
		_, name, ok := NormalizeHost(host)
		if !ok {
			t.Fatalf("accepted %q, whose host %q has no form the client can dial", raw, host)
		}
		if _, err := netip.ParseAddr(name); err != nil && slices.Contains(strings.Split(name, "."), "") {
			t.Fatalf("accepted %q, whose host %q has an empty label", raw, host)
		}
		if InternalName(name) {
			t.Fatalf("accepted %q, whose host %q is the internal name %q", raw, host, name)
		}
		if lit, err := netip.ParseAddr(name); err == nil {
			if Disallowed(lit) {
				t.Fatalf("accepted %q: literal host %s is %s", raw, lit, AddressClass(lit))
			}
			if len(res.asked) != 0 {
				t.Fatalf("resolver asked %v for a literal address", res.asked)
			}
			return
		}
		if addr.IsValid() && Disallowed(addr) {
			t.Fatalf("accepted %q although %s resolves to %s (%s)", raw, host, addr, AddressClass(addr))
		}
	})
}
