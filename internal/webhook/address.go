package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Address classes returned by AddressClass. They name why a destination is
// refused and appear in error messages (never the address itself in
// messages meant for API callers).
const (
	ClassInvalid         = "invalid"
	ClassUnspecified     = "unspecified"
	ClassLoopback        = "loopback"
	ClassPrivate         = "private"
	ClassLinkLocal       = "link-local"
	ClassSharedCGNAT     = "shared address space (CGNAT)"
	ClassMulticast       = "multicast"
	ClassThisNetwork     = "this-network"
	ClassReserved        = "reserved"
	ClassBroadcast       = "broadcast"
	ClassDocumentation   = "documentation"
	ClassBenchmarking    = "benchmarking"
	ClassProtocol        = "IETF protocol assignment"
	ClassNonGlobalIPv6   = "non-global IPv6"
	ClassTunnel          = "tunnel (Teredo/ORCHID/local NAT64)"
	ClassDeprecatedRelay = "6to4 relay anycast"
)

type prefixClass struct {
	p     netip.Prefix
	class string
}

// v4Refused lists IPv4 ranges that the netip.Addr predicates do not cover.
// Order matters only in that the more specific broadcast comes before 240/4.
var v4Refused = [...]prefixClass{
	{netip.MustParsePrefix("0.0.0.0/8"), ClassThisNetwork},
	{netip.MustParsePrefix("100.64.0.0/10"), ClassSharedCGNAT},
	{netip.MustParsePrefix("192.0.0.0/24"), ClassProtocol},
	{netip.MustParsePrefix("192.0.2.0/24"), ClassDocumentation},
	{netip.MustParsePrefix("198.51.100.0/24"), ClassDocumentation},
	{netip.MustParsePrefix("203.0.113.0/24"), ClassDocumentation},
	{netip.MustParsePrefix("198.18.0.0/15"), ClassBenchmarking},
	{netip.MustParsePrefix("192.88.99.0/24"), ClassDeprecatedRelay},
	{netip.MustParsePrefix("255.255.255.255/32"), ClassBroadcast},
	{netip.MustParsePrefix("240.0.0.0/4"), ClassReserved},
}

// v6Refused lists ranges inside global unicast 2000::/3 that are still not
// reachable destinations.
var v6Refused = [...]prefixClass{
	{netip.MustParsePrefix("2001::/32"), ClassTunnel},    // Teredo
	{netip.MustParsePrefix("2001:10::/28"), ClassTunnel}, // ORCHID (deprecated)
	{netip.MustParsePrefix("2001:20::/28"), ClassTunnel}, // ORCHIDv2
	{netip.MustParsePrefix("2001:2::/48"), ClassBenchmarking},
	{netip.MustParsePrefix("2001:db8::/32"), ClassDocumentation},
	{netip.MustParsePrefix("3fff::/20"), ClassDocumentation},
}

var (
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour      = netip.MustParsePrefix("2002::/16")
)

// Disallowed reports whether addr may not be a webhook destination (unless
// the operator allows private destinations). See the package comment for the
// classes covered.
func Disallowed(addr netip.Addr) bool { return AddressClass(addr) != "" }

// AddressClass returns why addr is refused as a destination, or "" when it is
// an ordinary public address. IPv4-mapped IPv6 is judged as the IPv4 address
// it maps; NAT64 (64:ff9b::/96) and 6to4 (2002::/16) by the IPv4 address they
// embed, since that is where the packets end up.
func AddressClass(addr netip.Addr) string {
	if !addr.IsValid() {
		return ClassInvalid
	}
	addr = addr.WithZone("").Unmap()
	if addr.Is4() {
		return class4(addr)
	}
	switch {
	case nat64Local.Contains(addr):
		return ClassTunnel
	case nat64WellKnown.Contains(addr):
		b := addr.As16()
		return class4(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	case sixToFour.Contains(addr):
		b := addr.As16()
		return class4(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	if c := classCommon(addr); c != "" {
		return c
	}
	// Everything outside 2000::/3 is reserved, local or special-purpose:
	// ::/8 (IPv4-compatible, SIIT), 100::/64 discard, fec0::/10 and so on.
	if !globalUnicast6.Contains(addr) {
		return ClassNonGlobalIPv6
	}
	for _, r := range v6Refused {
		if r.p.Contains(addr) {
			return r.class
		}
	}
	return ""
}

func class4(addr netip.Addr) string {
	if c := classCommon(addr); c != "" {
		return c
	}
	for _, r := range v4Refused {
		if r.p.Contains(addr) {
			return r.class
		}
	}
	return ""
}

// classCommon applies the netip predicates shared by both families.
func classCommon(addr netip.Addr) string {
	switch {
	case addr.IsUnspecified():
		return ClassUnspecified
	case addr.IsLoopback():
		return ClassLoopback
	case addr.IsPrivate():
		return ClassPrivate
	case addr.IsLinkLocalUnicast():
		return ClassLinkLocal
	case addr.IsMulticast():
		return ClassMulticast
	}
	return ""
}

// ErrAddressNotAllowed is wrapped by every refusal of a destination address,
// at endpoint creation and at connect time.
var ErrAddressNotAllowed = errors.New("webhook: destination address not allowed")

// AddressError is a refused destination. Its Error text names the address,
// so it is for logs; messages shown to API callers use Class only (the
// service's resolver may see internal names a caller must not learn about).
type AddressError struct {
	Addr  netip.Addr
	Class string
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("webhook: destination address %s (%s) is not allowed", e.Addr, e.Class)
}

func (e *AddressError) Unwrap() error { return ErrAddressNotAllowed }

// ErrInvalidURL is wrapped by every CheckURL refusal; the server maps it to
// 400 invalid_url.
var ErrInvalidURL = errors.New("invalid webhook url")

// ReasonNotPublic is the one Reason of every refusal of a host for not
// being public: an internal name, a numeric shorthand, a refused literal
// address, or a name that resolves to a refused address. One text for all
// of them, so that an API caller cannot tell from the answer whether, or to
// what kind of address, the server's resolver maps a name (docs/api.md,
// Webhooks). The cause, for logs, is in URLError.Err.
const ReasonNotPublic = "host must be a public name or a public IP address (private and loopback hosts are accepted only when the server runs with --webhook-allow-private, for testing)"

// notPublic is the refusal of a non-public host; cause is the refused
// address, or nil for a name refused by its form.
func notPublic(cause *AddressError) *URLError {
	if cause == nil {
		return &URLError{Reason: ReasonNotPublic}
	}
	return &URLError{Reason: ReasonNotPublic, Err: cause}
}

// URLError is a CheckURL refusal. Reason is safe to show to the API caller:
// it never contains a resolved address, nor which class of address a name
// resolved to (ReasonNotPublic).
type URLError struct {
	Reason string
	Err    error // the underlying cause, if any (e.g. an *AddressError), for logs
}

func (e *URLError) Error() string { return "url " + e.Reason }

// Unwrap exposes ErrInvalidURL and the cause (an *AddressError wraps
// ErrAddressNotAllowed).
func (e *URLError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidURL}
	}
	return []error{ErrInvalidURL, e.Err}
}

// MaxURLLength is the longest endpoint URL accepted (docs/api.md, Webhooks).
const MaxURLLength = 2048

// Resolver looks host names up. *net.Resolver implements it; tests fake it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CheckURL validates an endpoint URL at creation. It requires an absolute
// https URL (http too when allowPrivate) of at most MaxURLLength bytes, with a
// host, without credentials and without a fragment (a fragment is never sent
// to the receiver, so one is almost certainly a mistake). Any port is
// accepted. Unless allowPrivate, it normalises the host as the delivery
// client will (NormalizeHost; a host with an empty label, such as "vm.." or
// ".example.com", is malformed), refuses internal names (InternalName) and
// numeric shorthands of addresses without resolving them, then resolves the
// host (resolver nil means net.DefaultResolver) and refuses the URL if ANY
// address is disallowed: the dialer may pick any of them. Every one of these
// refusals of a non-public host has the one Reason ReasonNotPublic. Any
// other host that does not resolve (within resolveTimeout) is accepted: it
// resolves to nothing refused, and the dial-time check of NewClient still
// guards every delivery.
//
// Refusals are *URLError wrapping ErrInvalidURL; a done ctx returns the
// context's error instead.
func CheckURL(ctx context.Context, raw string, allowPrivate bool, resolver Resolver) error {
	if len(raw) > MaxURLLength {
		return &URLError{Reason: fmt.Sprintf("must be at most %d characters", MaxURLLength)}
	}
	if strings.TrimSpace(raw) != raw || raw == "" {
		return &URLError{Reason: "must be an absolute https URL without surrounding spaces"}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return &URLError{Reason: "is not a valid URL"}
	}
	if !u.IsAbs() || u.Opaque != "" {
		return &URLError{Reason: "must be an absolute https URL"}
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !allowPrivate {
			return &URLError{Reason: "must use https (plain http, like private and loopback hosts, is accepted only when the server runs with --webhook-allow-private, for testing)"}
		}
	default:
		return &URLError{Reason: "must use https"}
	}
	if u.User != nil {
		return &URLError{Reason: "must not contain credentials"}
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return &URLError{Reason: "must not contain a fragment"}
	}
	host := u.Hostname()
	if host == "" {
		return &URLError{Reason: "must have a host"}
	}
	if p := u.Port(); p != "" {
		if n, ok := parsePort(p); !ok || n == 0 {
			return &URLError{Reason: "has an invalid port"}
		}
	}
	if allowPrivate {
		return nil
	}

	// Judge the host the delivery client will dial, not its spelling:
	// "１２７.０.０.１", "127。0。0。1" and "127.0.0.1." all reach 127.0.0.1.
	dialName, name, ok := NormalizeHost(host)
	if !ok {
		return &URLError{Reason: "host is not a valid domain name"}
	}
	literal, err := netip.ParseAddr(name)
	if err == nil {
		if c := AddressClass(literal); c != "" {
			return notPublic(&AddressError{Addr: literal, Class: c})
		}
		return nil
	}
	// Names that are internal by construction are refused however they
	// resolve, and before any lookup: another resolver (the one at delivery
	// time, or after a network change) reads them as local, and a numeric
	// shorthand such as 127.1 or 2130706433 (inet_aton forms) as an
	// address. Refusing them unresolved also keeps the answer for "vm" the
	// same whether or not this server's resolver knows a machine "vm".
	if InternalName(name) || numericHost(name) {
		return notPublic(nil)
	}
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	lookupCtx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := resolver.LookupNetIP(lookupCtx, "ip", dialName)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("webhook: resolving url host: %w", ctxErr)
	}
	if err != nil {
		// A name that does not resolve now (no DNS here, a record
		// published later) is not one that resolves to a refused address:
		// every delivery dials through NewClient, which refuses the
		// address actually connected to.
		return nil
	}
	for _, a := range addrs {
		if c := AddressClass(a); c != "" {
			return notPublic(&AddressError{Addr: a, Class: c})
		}
	}
	return nil
}

// NormalizeHost maps a URL host (url.URL.Hostname) to the name the delivery
// client looks up and dials, and to the form this package judges. Like the
// HTTP client, which converts a non-ASCII host with the IDNA lookup mapping
// before dialling, it maps full-width letters and digits, the ideographic and
// full-width full stops and other compatibility forms to ASCII, and lower-
// cases. dialName is that ASCII name as the client sends it to the resolver;
// name is also lower-cased without the root's trailing dot, so "VM." and
// "vm" judge alike. ok is false when the host has no such form (the client
// could not resolve it either) or, unless it is an IP address, has an empty
// label: "vm..", ".vm" and "a..b" are not names (only the root's one
// trailing dot may end a name).
func NormalizeHost(host string) (dialName, name string, ok bool) {
	dialName = host
	if !isASCII(host) {
		a, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return "", "", false
		}
		dialName = a
	}
	name = strings.ToLower(strings.TrimSuffix(dialName, "."))
	if name == "" {
		return "", "", false
	}
	if _, err := netip.ParseAddr(name); err != nil && slices.Contains(strings.Split(name, "."), "") {
		return "", "", false
	}
	return dialName, name, true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// internalSuffixes are domains that never name a public host: localhost,
// multicast DNS (.local), home networks (home.arpa), the private-use
// .internal, and defaults of hosts and routers that are never delegated.
var internalSuffixes = [...]string{"localhost", "local", "internal", "home.arpa", "localdomain", "lan", "intranet", "corp", "home"}

// InternalName reports whether name (normalised, see NormalizeHost) is an
// internal name rather than a public one: a single label such as "vm" (a
// machine on the local network or in the resolver's search domains; public
// names have at least two labels), or a name under one of the internal
// suffixes. IP literals are not names and are judged by AddressClass.
func InternalName(name string) bool {
	if _, err := netip.ParseAddr(name); err == nil {
		return false
	}
	if !strings.Contains(name, ".") {
		return true
	}
	for _, s := range internalSuffixes {
		if name == s || strings.HasSuffix(name, "."+s) {
			return true
		}
	}
	return false
}

// numericHost reports a host made only of numeric labels (decimal, octal
// or 0x hex) that is not a plain address: the inet_aton shorthands.
func numericHost(host string) bool {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(labels) > 4 {
		return false
	}
	for _, l := range labels {
		digits := strings.TrimPrefix(strings.TrimPrefix(l, "0x"), "0X")
		if digits == "" && l != "0" {
			return false
		}
		for _, c := range strings.ToLower(digits) {
			if !(c >= '0' && c <= '9' || (digits != l && c >= 'a' && c <= 'f')) {
				return false
			}
		}
	}
	return true
}

// resolveTimeout bounds the DNS lookup of CheckURL, so endpoint creation
// never hangs on a slow resolver.
const resolveTimeout = 3 * time.Second

func parsePort(s string) (int, bool) {
	if len(s) > 5 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n <= 65535
}
