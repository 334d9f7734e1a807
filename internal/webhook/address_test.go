package webhook

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// These addresses are parsed and classified only; nothing is contacted.
func TestAddressClass(t *testing.T) {
	tests := []struct {
		addr  string
		class string // "" = allowed
	}{
		// Loopback.
		{"127.0.0.1", ClassLoopback},
		{"127.255.255.254", ClassLoopback},
		{"::1", ClassLoopback},
		{"::ffff:127.0.0.1", ClassLoopback},
		// Private.
		{"10.0.0.1", ClassPrivate},
		{"10.255.255.255", ClassPrivate},
		{"172.16.0.1", ClassPrivate},
		{"172.31.255.255", ClassPrivate},
		{"192.168.1.1", ClassPrivate},
		{"::ffff:10.0.0.1", ClassPrivate},
		{"::ffff:192.168.0.1", ClassPrivate},
		{"fc00::1", ClassPrivate},
		{"fd12:3456:789a::1", ClassPrivate},
		// Link-local (cloud metadata lives at 169.254.169.254).
		{"169.254.169.254", ClassLinkLocal},
		{"169.254.0.1", ClassLinkLocal},
		{"::ffff:169.254.169.254", ClassLinkLocal},
		{"fe80::1", ClassLinkLocal},
		{"fe80::1%eth0", ClassLinkLocal},
		{"febf:ffff::1", ClassLinkLocal},
		// Shared address space / CGNAT.
		{"100.64.0.1", ClassSharedCGNAT},
		{"100.127.255.254", ClassSharedCGNAT},
		{"::ffff:100.64.0.1", ClassSharedCGNAT},
		// Multicast.
		{"224.0.0.1", ClassMulticast},
		{"239.255.255.250", ClassMulticast},
		{"ff02::1", ClassMulticast},
		{"ff0e::1", ClassMulticast},
		// Unspecified.
		{"0.0.0.0", ClassUnspecified},
		{"::", ClassUnspecified},
		{"::ffff:0.0.0.0", ClassUnspecified},
		// Other IPv4 special ranges.
		{"0.1.2.3", ClassThisNetwork},
		{"255.255.255.255", ClassBroadcast},
		{"240.0.0.1", ClassReserved},
		{"250.1.2.3", ClassReserved},
		{"192.0.0.8", ClassProtocol},
		{"192.0.2.10", ClassDocumentation},
		{"198.51.100.7", ClassDocumentation},
		{"203.0.113.200", ClassDocumentation},
		{"198.18.0.1", ClassBenchmarking},
		{"198.19.255.255", ClassBenchmarking},
		{"192.88.99.1", ClassDeprecatedRelay},
		// NAT64 and 6to4 judged by the embedded IPv4 address.
		{"64:ff9b::7f00:1", ClassLoopback},
		{"64:ff9b::a00:1", ClassPrivate},
		{"64:ff9b::a9fe:a9fe", ClassLinkLocal},
		{"64:ff9b::808:808", ""},
		{"64:ff9b:1::1", ClassTunnel},
		{"2002:7f00:1::1", ClassLoopback},
		{"2002:c0a8:101::1", ClassPrivate},
		{"2002:808:808::1", ""},
		// Other IPv6 special ranges.
		{"::127.0.0.1", ClassNonGlobalIPv6},                   // IPv4-compatible (deprecated)
		{"::ffff:0:a00:1", ClassNonGlobalIPv6},                // SIIT IPv4-translated
		{"100::1", ClassNonGlobalIPv6},                        // discard-only
		{"fec0::1", ClassNonGlobalIPv6},                       // site-local (deprecated)
		{"4000::1", ClassNonGlobalIPv6},                       // unassigned
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", ClassTunnel}, // Teredo
		{"2001:10::1", ClassTunnel},
		{"2001:20::1", ClassTunnel},
		{"2001:2::1", ClassBenchmarking},
		{"2001:db8::1", ClassDocumentation},
		{"3fff::1", ClassDocumentation},
		// Public.
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"172.15.255.255", ""},
		{"172.32.0.0", ""},
		{"169.253.255.255", ""},
		{"223.255.255.255", ""},
		{"::ffff:8.8.8.8", ""},
		{"2606:4700::1111", ""},
		{"2001:4860:4860::8888", ""},
		{"2a00:1450:4001::1", ""},
	}
	for _, tc := range tests {
		a, err := netip.ParseAddr(tc.addr)
		if err != nil {
			t.Fatalf("bad test address %q: %v", tc.addr, err)
		}
		if got := AddressClass(a); got != tc.class {
			t.Errorf("AddressClass(%s) = %q, want %q", tc.addr, got, tc.class)
		}
		if got := Disallowed(a); got != (tc.class != "") {
			t.Errorf("Disallowed(%s) = %v, want %v", tc.addr, got, tc.class != "")
		}
	}
	if !Disallowed(netip.Addr{}) {
		t.Error("Disallowed(zero Addr) = false; an invalid address must be refused")
	}
}

// fakeResolver answers from a table and records the names it was asked for.
type fakeResolver struct {
	hosts map[string][]string
	asked []string
}

func (f *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	f.asked = append(f.asked, host)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	raw, ok := f.hosts[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, s := range raw {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func TestCheckURL(t *testing.T) {
	res := &fakeResolver{hosts: map[string][]string{
		"hooks.example.com":  {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
		"mixed.example.com":  {"93.184.216.34", "10.1.2.3", "8.8.8.8"},
		"mapped.example.com": {"::ffff:127.0.0.1"},
		"meta.example.com":   {"169.254.169.254"},
		"v6ll.example.com":   {"fe80::1"},
		"cgnat.example.com":  {"100.64.0.1"},
		"db.internal":        {"93.184.216.34"},
		"empty.example.com":  {},
		"localhost":          {"127.0.0.1", "::1"},
	}}
	long := "https://hooks.example.com/" + strings.Repeat("a", MaxURLLength-len("https://hooks.example.com/"))
	tests := []struct {
		name         string
		url          string
		allowPrivate bool
		wantReason   string // "" = accepted; else a substring of the error
		wantAddrErr  bool
	}{
		{"public host", "https://hooks.example.com/locrisk", false, "", false},
		{"public host with port and query", "https://hooks.example.com:8443/in?x=1", false, "", false},
		{"public IPv4 literal", "https://8.8.8.8/hook", false, "", false},
		{"public IPv6 literal", "https://[2606:4700::1111]/hook", false, "", false},
		{"exactly 2048 characters", long, false, "", false},
		{"one private among several", "https://mixed.example.com/hook", false, ReasonNotPublic, true},
		{"IPv4-mapped loopback via DNS", "https://mapped.example.com/", false, ReasonNotPublic, true},
		{"metadata address via DNS", "https://meta.example.com/", false, ReasonNotPublic, true},
		{"IPv6 link-local via DNS", "https://v6ll.example.com/", false, ReasonNotPublic, true},
		{"CGNAT via DNS", "https://cgnat.example.com/", false, ReasonNotPublic, true},
		{"localhost", "https://localhost/hook", false, ReasonNotPublic, false},
		{"loopback literal", "https://127.0.0.1/hook", false, ReasonNotPublic, true},
		{"mapped loopback literal", "https://[::ffff:127.0.0.1]/hook", false, ReasonNotPublic, true},
		{"IPv6 loopback literal", "https://[::1]:8443/hook", false, ReasonNotPublic, true},
		{"unspecified literal", "https://0.0.0.0/", false, ReasonNotPublic, true},
		{"link-local literal with zone", "https://[fe80::1%25eth0]/", false, ReasonNotPublic, true},
		{"unresolvable host is left to the dial-time check", "https://nowhere.example.com/", false, "", false},
		{"host resolving to nothing", "https://empty.example.com/", false, "", false},
		{"unresolved localhost with a dot", "https://localhost./hook", false, ReasonNotPublic, false},
		{"unresolved localhost subdomain", "https://api.localhost/hook", false, ReasonNotPublic, false},
		{"inet_aton short form", "https://127.1/hook", false, ReasonNotPublic, false},
		{"inet_aton decimal", "https://2130706433/hook", false, ReasonNotPublic, false},
		{"inet_aton hex", "https://0x7f000001/hook", false, ReasonNotPublic, false},
		{"inet_aton octal", "https://0177.0.0.1/hook", false, ReasonNotPublic, false},
		{"numeric-looking label in a name", "https://1.example.com/hook", false, "", false},
		// Hosts are judged as the client dials them (NormalizeHost).
		{"trailing dot, single label", "https://vm./", false, ReasonNotPublic, false},
		{"single label", "https://vm/hook", false, ReasonNotPublic, false},
		{"full-width digits", "https://１２７.０.０.１/", false, ReasonNotPublic, true},
		{"ideographic full stops", "https://127。0。0。1/", false, ReasonNotPublic, true},
		{"full-width full stops", "https://127．0．0．1/", false, ReasonNotPublic, true},
		{"halfwidth ideographic full stops", "https://127｡0｡0｡1/", false, ReasonNotPublic, true},
		{"mathematical digits", "https://𝟏𝟎.𝟎.𝟎.𝟕/", false, ReasonNotPublic, true},
		{"literal with a trailing dot", "https://127.0.0.1./hook", false, ReasonNotPublic, true},
		{"full-width localhost", "https://ｌｏｃａｌｈｏｓｔ/", false, ReasonNotPublic, false},
		{"full-width name resolving to link-local", "https://ｍｅｔａ.example.com/", false, ReasonNotPublic, true},
		{"full-width name resolving to public", "https://ｈｏｏｋｓ．example．com/", false, "", false},
		{"full-width inet_aton form", "https://１２７.１/", false, ReasonNotPublic, false},
		{"upper-case localhost with a dot", "https://LOCALHOST./", false, ReasonNotPublic, false},
		{"internal suffix", "https://db.internal/hook", false, ReasonNotPublic, false},
		{"mDNS name", "https://printer.local/hook", false, ReasonNotPublic, false},
		{"home.arpa", "https://nas.home.arpa/hook", false, ReasonNotPublic, false},
		{"repeated trailing dots", "https://vm../", false, "valid domain name", false},
		{"repeated trailing dots after an internal suffix", "https://foo.local../", false, "valid domain name", false},
		{"repeated trailing dots after a public name", "https://hooks.example.com../", false, "valid domain name", false},
		{"leading dot", "https://.example.com/", false, "valid domain name", false},
		{"empty label inside", "https://hooks..example.com/", false, "valid domain name", false},
		{"full-width repeated trailing dots", "https://ｖｍ。。/", false, "valid domain name", false},
		{"not an IDNA name", "https://a­b‍.example.com/", false, "valid domain name", false},
		{"http refused", "http://hooks.example.com/hook", false, "must use https", false},
		{"http allowed with allowPrivate", "http://hooks.example.com/hook", true, "", false},
		{"private allowed with allowPrivate", "http://127.0.0.1:9000/hook", true, "", false},
		{"ftp refused even with allowPrivate", "ftp://hooks.example.com/", true, "must use https", false},
		{"javascript scheme", "javascript:alert(1)", false, "absolute https", false},
		{"credentials", "https://user:pass@hooks.example.com/", false, "credentials", false},
		{"username only", "https://user@hooks.example.com/", false, "credentials", false},
		{"credentials refused with allowPrivate", "http://user:pass@127.0.0.1/", true, "credentials", false},
		{"too long", long + "a", false, "at most 2048", false},
		{"relative", "/hooks/locrisk", false, "absolute", false},
		{"scheme-relative", "//hooks.example.com/x", false, "absolute", false},
		{"empty", "", false, "absolute", false},
		{"surrounding space", " https://hooks.example.com/", false, "spaces", false},
		{"no host", "https:///path", false, "must have a host", false},
		{"fragment", "https://hooks.example.com/hook#frag", false, "fragment", false},
		{"empty fragment", "https://hooks.example.com/hook#", false, "fragment", false},
		{"bad port", "https://hooks.example.com:99999/", false, "port", false},
		{"port zero", "https://hooks.example.com:0/", false, "port", false},
		{"unparseable", "https://hooks.example.com/%zz", false, "not a valid URL", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckURL(context.Background(), tc.url, tc.allowPrivate, res)
			if tc.wantReason == "" {
				if err != nil {
					t.Fatalf("CheckURL(%q): unexpected error %v", tc.url, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckURL(%q) accepted, want refusal containing %q", tc.url, tc.wantReason)
			}
			if !errors.Is(err, ErrInvalidURL) {
				t.Errorf("error %v does not wrap ErrInvalidURL", err)
			}
			if !strings.Contains(err.Error(), tc.wantReason) {
				t.Errorf("error %q does not contain %q", err, tc.wantReason)
			}
			if got := errors.Is(err, ErrAddressNotAllowed); got != tc.wantAddrErr {
				t.Errorf("errors.Is(err, ErrAddressNotAllowed) = %v, want %v", got, tc.wantAddrErr)
			}
			// Messages go back to API callers: they must not reveal what an
			// internal name resolved to.
			for _, leak := range []string{"10.1.2.3", "169.254.169.254", "100.64.0.1", "fe80::1", "127.0.0.1", "10.0.0.7"} {
				if strings.Contains(err.Error(), leak) && !strings.Contains(tc.url, leak) {
					t.Errorf("error %q reveals resolved address %s", err, leak)
				}
			}
		})
	}
}

// TestCheckURLOneAnswerForNonPublicHosts: whatever the server's resolver
// knows, every non-public host gets the same answer, so the creation error
// does not tell a caller which internal names resolve, nor to what kind of
// address; internal names are not even looked up.
func TestCheckURLOneAnswerForNonPublicHosts(t *testing.T) {
	res := &fakeResolver{hosts: map[string][]string{
		"vm":               {"10.0.0.7"},
		"localhost":        {"127.0.0.1", "::1"},
		"db.internal":      {"93.184.216.34"},
		"meta.example.com": {"169.254.169.254"},
		"lo.example.com":   {"::1"},
		"rfc.example.com":  {"192.168.1.1"},
	}}
	want := "url " + ReasonNotPublic
	for _, u := range []string{
		"https://vm/", "https://vm./", "https://nosuchhost/", "https://localhost/", "https://localhost./",
		"https://db.internal/", "https://nothing.internal/", "https://meta.example.com/", "https://lo.example.com/",
		"https://rfc.example.com/", "https://127.0.0.1/", "https://[::1]/", "https://10.0.0.7/", "https://127.1/",
	} {
		err := CheckURL(context.Background(), u, false, res)
		if err == nil || err.Error() != want {
			t.Errorf("CheckURL(%q) = %v, want %q", u, err, want)
		}
	}
	for _, h := range res.asked {
		if InternalName(h) || InternalName(strings.TrimSuffix(h, ".")) {
			t.Errorf("resolver asked for the internal name %q", h)
		}
	}
}

func TestCheckURLNoLookupWhenPrivateAllowed(t *testing.T) {
	res := &fakeResolver{}
	if err := CheckURL(context.Background(), "https://internal.corp/hook", true, res); err != nil {
		t.Fatalf("CheckURL with allowPrivate: %v", err)
	}
	if len(res.asked) != 0 {
		t.Errorf("resolver was asked %v; with allowPrivate no lookup is needed", res.asked)
	}
}

func TestCheckURLCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := CheckURL(ctx, "https://hooks.example.com/", false, &fakeResolver{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if errors.Is(err, ErrInvalidURL) {
		t.Errorf("a canceled check must not be reported as an invalid URL: %v", err)
	}
}

func TestNormalizeHost(t *testing.T) {
	tests := []struct {
		host, dial, name string
		ok               bool
	}{
		{"hooks.example.com", "hooks.example.com", "hooks.example.com", true},
		{"Hooks.Example.COM.", "Hooks.Example.COM.", "hooks.example.com", true},
		{"vm.", "vm.", "vm", true},
		{"１２７.０.０.１", "127.0.0.1", "127.0.0.1", true},
		{"127。0。0。1", "127.0.0.1", "127.0.0.1", true},
		{"127．0．0．1", "127.0.0.1", "127.0.0.1", true},
		{"127｡0｡0｡1", "127.0.0.1", "127.0.0.1", true},
		{"ＬＯＣＡＬＨＯＳＴ。", "localhost.", "localhost", true},
		{"bücher.example", "xn--bcher-kva.example", "xn--bcher-kva.example", true},
		{"::1", "::1", "::1", true},
		{".", "", "", false},
		{"vm..", "", "", false},
		{"foo.local..", "", "", false},
		{".vm", "", "", false},
		{"a..b", "", "", false},
		{"..", "", "", false},
		{"a b。com", "", "", false},
	}
	for _, tc := range tests {
		dial, name, ok := NormalizeHost(tc.host)
		if dial != tc.dial || name != tc.name || ok != tc.ok {
			t.Errorf("NormalizeHost(%q) = %q, %q, %v; want %q, %q, %v", tc.host, dial, name, ok, tc.dial, tc.name, tc.ok)
		}
	}
}

func TestInternalName(t *testing.T) {
	tests := []struct {
		name     string
		internal bool
	}{
		{"vm", true},
		{"localhost", true},
		{"api.localhost", true},
		{"db.internal", true},
		{"printer.local", true},
		{"nas.home.arpa", true},
		{"router.lan", true},
		{"hooks.example.com", false},
		{"local.example.com", false},
		{"internal.example.com", false},
		{"127.0.0.1", false}, // an address, judged by AddressClass
		{"::1", false},
	}
	for _, tc := range tests {
		if got := InternalName(tc.name); got != tc.internal {
			t.Errorf("InternalName(%q) = %v, want %v", tc.name, got, tc.internal)
		}
	}
}
