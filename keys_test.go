package locrisk

import (
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"
)

func TestParseCIDRs(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{"203.0.113.7", []string{"203.0.113.7/32"}, false},
		{"2001:db8::1", []string{"2001:db8::1/128"}, false},
		{"10.0.0.0/8,192.168.1.0/24", []string{"10.0.0.0/8", "192.168.1.0/24"}, false},
		{"10.1.2.3/8 2001:db8::/32", []string{"10.0.0.0/8", "2001:db8::/32"}, false},
		{" 10.0.0.1 , ,fd00::/8 ", []string{"10.0.0.1/32", "fd00::/8"}, false},
		{"::ffff:10.0.0.1", []string{"10.0.0.1/32"}, false},
		{"::ffff:10.0.0.0/104", []string{"10.0.0.0/8"}, false},
		{"0.0.0.0/0", []string{"0.0.0.0/0"}, false},
		{"10.0.0.0/33", nil, true},
		{"300.1.1.1", nil, true},
		{"example.com", nil, true},
		{"fe80::1%eth0", nil, true},
		{"10.0.0.0/8,bogus", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseCIDRs(tt.in)
		if tt.wantErr {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("ParseCIDRs(%q) err = %v, want ErrInvalid", tt.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseCIDRs(%q): %v", tt.in, err)
			continue
		}
		var gs []string
		for _, p := range got {
			gs = append(gs, p.String())
		}
		if !slices.Equal(gs, tt.want) {
			t.Errorf("ParseCIDRs(%q) = %v, want %v", tt.in, gs, tt.want)
		}
	}
}

func TestAllowsIP(t *testing.T) {
	cidrs, err := ParseCIDRs("203.0.113.0/24,2001:db8::/32")
	if err != nil {
		t.Fatal(err)
	}
	k := APIKey{AllowedCIDRs: cidrs}
	tests := []struct {
		addr string
		want bool
	}{
		{"203.0.113.9", true},
		{"203.0.114.9", false},
		{"::ffff:203.0.113.9", true}, // IPv4 on a dual-stack socket
		{"2001:db8:1::5", true},
		{"2001:db9::5", false},
		{"127.0.0.1", false},
	}
	for _, tt := range tests {
		if got := k.AllowsIP(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("AllowsIP(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	if !(APIKey{}).AllowsIP(netip.MustParseAddr("198.51.100.1")) {
		t.Error("a key without an allowlist refused an address")
	}
}

// TestNewKeyNormalized: what every store keeps of a new key.
func TestNewKeyNormalized(t *testing.T) {
	pfx := func(s string) netip.Prefix { return netip.MustParsePrefix(s) }
	scopes, version, cidrs, err := NewKey{
		Scopes:       []string{ScopeReportsRead, ScopeReportsCreate, ScopeReportsRead},
		AllowedCIDRs: []netip.Prefix{pfx("10.1.2.3/8"), pfx("10.0.0.0/8"), pfx("::ffff:192.0.2.1/128")},
	}.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{ScopeReportsCreate, ScopeReportsRead}; !slices.Equal(scopes, want) {
		t.Errorf("scopes %v, want %v", scopes, want)
	}
	if version != ScopeVersionCurrent {
		t.Errorf("version %d", version)
	}
	if want := []netip.Prefix{pfx("10.0.0.0/8"), pfx("192.0.2.1/32")}; !slices.Equal(cidrs, want) {
		t.Errorf("cidrs %v, want %v", cidrs, want)
	}
	for name, k := range map[string]NewKey{
		"no scope":      {},
		"unknown scope": {Scopes: []string{"admin"}},
		"bad version":   {Scopes: []string{ScopeReportsRead}, ScopeVersion: 5},
		"past expiry":   {Scopes: []string{ScopeReportsRead}, ExpiresIn: -time.Second},
		"control name":  {Scopes: []string{ScopeReportsRead}, Name: "a\nb"},
		"invalid cidr":  {Scopes: []string{ScopeReportsRead}, AllowedCIDRs: []netip.Prefix{{}}},
	} {
		if _, _, _, err := k.Normalized(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}
