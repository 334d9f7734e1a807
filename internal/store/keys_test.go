package store

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
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

func TestCreateKeyStoresOnlyHash(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	cidrs, _ := ParseCIDRs("10.0.0.0/8 2001:db8::1")
	k, secret, err := s.CreateKey(ctx, NewKey{AccountID: a.ID, Scopes: []string{"reports:read", "reports:create", "reports:read"},
		AllowedCIDRs: cidrs, ExpiresIn: 720 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "lrk_") || len(secret) < 4+32 {
		t.Errorf("secret %q is not lrk_ + >= 32 characters", secret)
	}
	if k.SecretHint != secret[:8] {
		t.Errorf("hint %q, want %q", k.SecretHint, secret[:8])
	}
	if !slices.Equal(k.Scopes, []string{"reports:create", "reports:read"}) {
		t.Errorf("scopes %v, want deduplicated in spec order", k.Scopes)
	}
	if k.ScopeVersion != 2 {
		t.Errorf("scope version %d, want 2", k.ScopeVersion)
	}
	if k.ExpiresUTC == nil || !k.ExpiresUTC.Equal(t0.Add(720*time.Hour)) {
		t.Errorf("expires %v", k.ExpiresUTC)
	}

	// No column of any key row holds the secret or its random part.
	rows, err := s.db.QueryxContext(ctx, `SELECT * FROM api_keys`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	random := strings.TrimPrefix(secret, "lrk_")
	var sawHash bool
	for rows.Next() {
		m := map[string]any{}
		if err := rows.MapScan(m); err != nil {
			t.Fatal(err)
		}
		for col, v := range m {
			var text string
			switch v := v.(type) {
			case string:
				text = v
			case []byte:
				text = string(v)
			}
			if strings.Contains(text, random[4:]) {
				t.Errorf("column %s holds the secret: %q", col, text)
			}
			if col == "secret_hash" && text == HashSecret(secret) && len(text) == 64 {
				sawHash = true
			}
		}
	}
	if !sawHash {
		t.Error("secret_hash is not the hex SHA-256 of the secret")
	}

	got, acct, err := s.KeyBySecret(ctx, secret)
	if err != nil {
		t.Fatalf("KeyBySecret: %v", err)
	}
	if got.ID != k.ID || acct.ID != a.ID || acct.MonthlyQuota != 10 {
		t.Errorf("KeyBySecret = %+v, %+v", got, acct)
	}
	if len(got.AllowedCIDRs) != 2 || got.AllowedCIDRs[1].String() != "2001:db8::1/128" {
		t.Errorf("allowlist read back as %v", got.AllowedCIDRs)
	}
	for _, wrong := range []string{"", "lrk_", secret + "x", strings.ToUpper(secret), k.ID, HashSecret(secret)} {
		if _, _, err := s.KeyBySecret(ctx, wrong); !errors.Is(err, ErrNotFound) {
			t.Errorf("KeyBySecret(%q) err = %v, want ErrNotFound", wrong, err)
		}
	}
}

func TestCreateKeyValidation(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	tests := []struct {
		name    string
		k       NewKey
		wantErr error
		wantVer int
	}{
		{"all scopes", NewKey{AccountID: a.ID, Scopes: AllScopes()}, nil, 2},
		{"legacy", NewKey{AccountID: a.ID, Scopes: []string{"reports:read"}, ScopeVersion: 1}, nil, 1},
		{"explicit current", NewKey{AccountID: a.ID, Scopes: []string{"reports:read"}, ScopeVersion: 2}, nil, 2},
		{"bad version", NewKey{AccountID: a.ID, Scopes: []string{"reports:read"}, ScopeVersion: 3}, ErrInvalid, 0},
		{"unknown scope", NewKey{AccountID: a.ID, Scopes: []string{"reports:read", "reports:delete"}}, ErrInvalid, 0},
		{"case matters", NewKey{AccountID: a.ID, Scopes: []string{"Reports:Read"}}, ErrInvalid, 0},
		{"no scopes", NewKey{AccountID: a.ID}, ErrInvalid, 0},
		{"negative expiry", NewKey{AccountID: a.ID, Scopes: []string{"reports:read"}, ExpiresIn: -time.Hour}, ErrInvalid, 0},
		{"unknown account", NewKey{AccountID: "acct_nope", Scopes: []string{"reports:read"}}, ErrNotFound, 0},
		{"invalid prefix", NewKey{AccountID: a.ID, Scopes: []string{"reports:read"}, AllowedCIDRs: []netip.Prefix{{}}}, ErrInvalid, 0},
	}
	for _, tt := range tests {
		k, secret, err := s.CreateKey(ctx, tt.k)
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("%s: err = %v, want %v", tt.name, err, tt.wantErr)
			}
			if secret != "" {
				t.Errorf("%s: a secret was returned with an error", tt.name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if k.ScopeVersion != tt.wantVer {
			t.Errorf("%s: scope version %d, want %d", tt.name, k.ScopeVersion, tt.wantVer)
		}
		if k.ExpiresUTC != nil {
			t.Errorf("%s: expiry set without ExpiresIn", tt.name)
		}
	}
	var n int
	if err := s.db.GetContext(ctx, &n, `SELECT COUNT(*) FROM api_keys`); err != nil || n != 3 {
		t.Errorf("%d keys stored (err %v), want 3", n, err)
	}
}

func TestRevokeAndExpiry(t *testing.T) {
	now := t0
	s := newStore(t, Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	k, secret, err := s.CreateKey(ctx, NewKey{AccountID: a.ID, Scopes: []string{"reports:read"}, ExpiresIn: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		at   time.Time
		want bool
	}{
		{t0, true},
		{t0.Add(time.Hour - time.Millisecond), true},
		{t0.Add(time.Hour), false},
		{t0.Add(48 * time.Hour), false},
	}
	for _, tt := range tests {
		if got := k.Usable(tt.at); got != tt.want {
			t.Errorf("Usable(%v) = %v, want %v", tt.at, got, tt.want)
		}
	}

	now = t0.Add(time.Minute)
	if err := s.RevokeKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(2 * time.Minute)
	if err := s.RevokeKey(ctx, k.ID); err != nil {
		t.Errorf("second revoke: %v", err)
	}
	got, _, err := s.KeyBySecret(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if got.RevokedUTC == nil || !got.RevokedUTC.Equal(t0.Add(time.Minute)) {
		t.Errorf("revoked at %v, want the first revocation time", got.RevokedUTC)
	}
	if got.Usable(t0) {
		t.Error("a revoked key is usable")
	}
	if err := s.RevokeKey(ctx, "key_unknown"); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoke unknown: %v, want ErrNotFound", err)
	}
}

func TestListKeys(t *testing.T) {
	now := t0
	s := newStore(t, Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	a, b := newAccount(t, s, 1), newAccount(t, s, 1)
	var want []string
	for i, acct := range []string{a.ID, b.ID, a.ID} {
		now = t0.Add(time.Duration(i) * time.Second)
		k, _, err := s.CreateKey(ctx, NewKey{AccountID: acct, Scopes: []string{"usage:read"}})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, k.ID)
	}
	tests := []struct {
		account string
		want    []string
	}{
		{"", want},
		{a.ID, []string{want[0], want[2]}},
		{b.ID, []string{want[1]}},
		{"acct_none", nil},
	}
	for _, tt := range tests {
		keys, err := s.ListKeys(ctx, tt.account)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range keys {
			got = append(got, k.ID)
			if k.SecretHint == "" || len(k.Scopes) != 1 {
				t.Errorf("listed key %+v", k)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("ListKeys(%q) = %v, want %v", tt.account, got, tt.want)
		}
	}
}
