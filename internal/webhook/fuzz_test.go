package webhook

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

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
