package locrisk

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Scope names (docs/api.md, Authentication, scopes and check order), in the
// order of its scope table.
const (
	ScopeReportsCreate = "reports:create"
	ScopeReportsRead   = "reports:read"
	ScopeReportsPDF    = "reports:pdf"
	ScopeBulkCreate    = "bulk:create"
	ScopeBulkRead      = "bulk:read"
	ScopeUsageRead     = "usage:read"
	ScopeWebhooksRead  = "webhooks:read"
	ScopeWebhooksWrite = "webhooks:write"
	// The watchlist scopes came after the scope versions: no key holds
	// them unless it was made with them, so a key made before they
	// existed opens no watchlist operation (docs/api.md, Authentication,
	// scopes and check order).
	ScopeWatchlistsRead  = "watchlists:read"
	ScopeWatchlistsWrite = "watchlists:write"
)

// AllScopes returns every scope name in the scope table's order (a fresh
// slice).
func AllScopes() []string {
	return []string{ScopeReportsCreate, ScopeReportsRead, ScopeReportsPDF, ScopeBulkCreate,
		ScopeBulkRead, ScopeUsageRead, ScopeWebhooksRead, ScopeWebhooksWrite, ScopeWatchlistsRead, ScopeWatchlistsWrite}
}

// ValidScope reports whether name is one of the scopes of AllScopes.
func ValidScope(name string) bool { return slices.Contains(AllScopes(), name) }

// Scope versions: keys made before usage:read existed are version 1, and
// their reports:read also grants the usage endpoints (docs/api.md,
// Authentication, scopes and check order).
const (
	ScopeVersionLegacy  = 1
	ScopeVersionCurrent = 2
)

// APIKey is a key as stored: never the secret, only a hint for listings.
type APIKey struct {
	ID           string
	AccountID    string
	Name         string // the operator's label; "" when none was given
	SecretHint   string // "lrk_" + the first 4 characters of the random part
	Scopes       []string
	ScopeVersion int
	AllowedCIDRs []netip.Prefix // empty: any address
	ExpiresUTC   *time.Time
	RevokedUTC   *time.Time
	CreatedUTC   time.Time
	// LastUsedUTC is when the key last authenticated a request, to the
	// minute (RecordKeyUse); nil when it has not been used.
	LastUsedUTC *time.Time
}

// HasScope reports whether the key holds scope.
func (k APIKey) HasScope(scope string) bool { return slices.Contains(k.Scopes, scope) }

// Usable reports whether the key is neither revoked nor expired at now.
func (k APIKey) Usable(now time.Time) bool {
	if k.RevokedUTC != nil {
		return false
	}
	return k.ExpiresUTC == nil || now.Before(*k.ExpiresUTC)
}

// AllowsIP reports whether addr is inside the key's allowlist (an empty list
// allows every address). IPv4-mapped IPv6 addresses are compared as IPv4.
func (k APIKey) AllowsIP(addr netip.Addr) bool {
	if len(k.AllowedCIDRs) == 0 {
		return true
	}
	addr = addr.Unmap()
	for _, p := range k.AllowedCIDRs {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// NewKey describes a key to create.
type NewKey struct {
	AccountID    string
	Name         string   // optional label (CheckKeyName)
	Scopes       []string // at least one; each a known scope name
	ScopeVersion int      // 0 means ScopeVersionCurrent
	AllowedCIDRs []netip.Prefix
	ExpiresIn    time.Duration // 0: never expires
}

// Normalized checks k and returns what a store keeps of it: its scopes
// in AllScopes order, its scope version (0 becomes ScopeVersionCurrent) and
// its allowlist, each network unmapped, masked and listed once. Values out
// of range are ErrInvalid.
func (k NewKey) Normalized() (scopes []string, version int, cidrs []netip.Prefix, err error) {
	if len(k.Scopes) == 0 {
		return nil, 0, nil, fmt.Errorf("%w: a key needs at least one scope (known: %s)", ErrInvalid, strings.Join(AllScopes(), ", "))
	}
	for _, sc := range k.Scopes {
		if !ValidScope(sc) {
			return nil, 0, nil, fmt.Errorf("%w: unknown scope %q (known: %s)", ErrInvalid, sc, strings.Join(AllScopes(), ", "))
		}
	}
	for _, sc := range AllScopes() {
		if slices.Contains(k.Scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	if err := CheckKeyName(k.Name); err != nil {
		return nil, 0, nil, err
	}
	version = k.ScopeVersion
	if version == 0 {
		version = ScopeVersionCurrent
	}
	if version != ScopeVersionLegacy && version != ScopeVersionCurrent {
		return nil, 0, nil, fmt.Errorf("%w: scope version %d (want %d or %d)", ErrInvalid, k.ScopeVersion, ScopeVersionLegacy, ScopeVersionCurrent)
	}
	if k.ExpiresIn < 0 {
		return nil, 0, nil, fmt.Errorf("%w: negative expiry %s", ErrInvalid, k.ExpiresIn)
	}
	cidrs = make([]netip.Prefix, 0, len(k.AllowedCIDRs))
	for _, p := range k.AllowedCIDRs {
		if !p.IsValid() {
			return nil, 0, nil, fmt.Errorf("%w: invalid CIDR in allowlist", ErrInvalid)
		}
		p = UnmapPrefix(p).Masked()
		if !slices.Contains(cidrs, p) {
			cidrs = append(cidrs, p)
		}
	}
	return scopes, version, cidrs, nil
}

// MaxKeyNameLen is the longest key label, in characters (Unicode code
// points): the rule of the API's other names (docs/api.md, "Create an
// endpoint").
const MaxKeyNameLen = 100

// CheckKeyName applies the names' free-text rule to a key label: at most
// MaxKeyNameLen characters and no control characters (a label is printed in
// listings and logs, where a line break or a terminal escape would forge
// lines). "" is allowed: a label is optional.
func CheckKeyName(name string) error {
	if n := utf8.RuneCountInString(name); n > MaxKeyNameLen {
		return fmt.Errorf("%w: key name is %d characters long; at most %d are allowed", ErrInvalid, n, MaxKeyNameLen)
	}
	if !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return fmt.Errorf("%w: key name holds control characters or invalid UTF-8", ErrInvalid)
	}
	return nil
}

// ParseCIDRs parses a list of networks separated by commas and/or spaces. A
// bare address means that single address (/32 or /128). Host bits are
// cleared ("10.1.2.3/8" is 10.0.0.0/8). An empty string gives an empty list.
func ParseCIDRs(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		p, err := parseCIDR(f)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// KeyUse is one key's use as the server records it.
type KeyUse struct {
	KeyID string
	At    time.Time
}

func parseCIDR(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%w: bad CIDR %q: %v", ErrInvalid, s, err)
		}
		if p.Addr().Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%w: bad CIDR %q: zones are not allowed", ErrInvalid, s)
		}
		return UnmapPrefix(p).Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%w: bad IP address %q: %v", ErrInvalid, s, err)
	}
	if a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%w: bad IP address %q: zones are not allowed", ErrInvalid, s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// UnmapPrefix turns ::ffff:10.0.0.0/104 into 10.0.0.0/8, because request
// addresses are unmapped before the comparison.
func UnmapPrefix(p netip.Prefix) netip.Prefix {
	a := p.Addr()
	if !a.Is4In6() {
		return p
	}
	bits := p.Bits() - 96
	if bits < 0 {
		bits = 0
	}
	return netip.PrefixFrom(a.Unmap(), bits)
}
