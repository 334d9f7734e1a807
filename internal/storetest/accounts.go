package storetest

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

var accountTests = []test{
	{"Management", accountManagement},
	{"KeyNamesAndLastUse", keyNamesAndLastUse},
}

var keyTests = []test{
	{"CreateReturnsSecretOnce", createKeyReturnsSecretOnce},
	{"CreateValidation", createKeyValidation},
	{"RevokeAndExpiry", revokeAndExpiry},
	{"List", listKeys},
}

func accountManagement(t testing.TB, h Harness) {
	ctx := context.Background()
	now := t0
	s := h.Open(t, Config{Now: func() time.Time { return now }})
	a := newAccount(t, s, 10)
	now = now.Add(time.Second)
	b, err := s.CreateAccount(ctx, "Second", 5, 60)
	if err != nil {
		t.Fatal(err)
	}

	list, err := s.ListAccounts(ctx)
	if err != nil || len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID || list[0].Disabled() {
		t.Fatalf("ListAccounts = %+v, %v; want a then b, enabled", list, err)
	}

	ptr := func(n int) *int { return &n }
	name := "  Renamed  "
	up, err := s.UpdateAccount(ctx, a.ID, locrisk.AccountUpdate{Name: &name, MonthlyQuota: ptr(0), RateLimit: ptr(7)})
	if err != nil || up.Name != "Renamed" || up.MonthlyQuota != 0 || up.RateLimitPerMinute != 7 || up.CreatedUTC != a.CreatedUTC {
		t.Fatalf("UpdateAccount = %+v, %v", up, err)
	}
	// Fields left nil stay as they are; nothing at all is a read.
	if up, err = s.UpdateAccount(ctx, a.ID, locrisk.AccountUpdate{RateLimit: ptr(9)}); err != nil || up.Name != "Renamed" || up.RateLimitPerMinute != 9 {
		t.Errorf("partial update = %+v, %v", up, err)
	}
	if up, err = s.UpdateAccount(ctx, a.ID, locrisk.AccountUpdate{}); err != nil || up.RateLimitPerMinute != 9 {
		t.Errorf("empty update = %+v, %v", up, err)
	}

	blank := " "
	bad := []struct {
		name string
		id   string
		u    locrisk.AccountUpdate
		want error
	}{
		{"blank name", a.ID, locrisk.AccountUpdate{Name: &blank}, locrisk.ErrInvalid},
		{"negative quota", a.ID, locrisk.AccountUpdate{MonthlyQuota: ptr(-1)}, locrisk.ErrInvalid},
		{"zero rate", a.ID, locrisk.AccountUpdate{RateLimit: ptr(0)}, locrisk.ErrInvalid},
		{"unknown", "acct_nope", locrisk.AccountUpdate{RateLimit: ptr(5)}, locrisk.ErrNotFound},
	}
	for _, tt := range bad {
		if _, err := s.UpdateAccount(ctx, tt.id, tt.u); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
	if got, _ := s.GetAccount(ctx, a.ID); got.RateLimitPerMinute != 9 || got.MonthlyQuota != 0 {
		t.Errorf("a refused update changed the account: %+v", got)
	}

	// Disable, twice (the first time stays), seen through the key lookup;
	// enable again.
	_, secret, err := s.CreateKey(ctx, locrisk.NewKey{AccountID: b.ID, Scopes: []string{locrisk.ScopeReportsRead}})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	first := now.Truncate(time.Millisecond)
	d, err := s.SetAccountDisabled(ctx, b.ID, true)
	if err != nil || !d.Disabled() || !d.DisabledUTC.Equal(first) {
		t.Fatalf("disable = %+v, %v", d, err)
	}
	now = now.Add(time.Minute)
	if d, err = s.SetAccountDisabled(ctx, b.ID, true); err != nil || !d.DisabledUTC.Equal(first) {
		t.Errorf("second disable = %+v, %v; want the first time kept", d, err)
	}
	if _, acct, err := s.KeyBySecret(ctx, secret); err != nil || !acct.Disabled() {
		t.Errorf("KeyBySecret of a disabled account: %+v, %v", acct, err)
	}
	if list, _ := s.ListAccounts(ctx); !list[1].Disabled() || list[0].Disabled() {
		t.Errorf("ListAccounts after disable: %+v", list)
	}
	if d, err = s.SetAccountDisabled(ctx, b.ID, false); err != nil || d.Disabled() {
		t.Errorf("enable = %+v, %v", d, err)
	}
	if _, acct, _ := s.KeyBySecret(ctx, secret); acct.Disabled() {
		t.Error("KeyBySecret still sees the account disabled after enable")
	}
	if _, err := s.SetAccountDisabled(ctx, "acct_nope", true); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("disable unknown: %v, want ErrNotFound", err)
	}
}

func keyNamesAndLastUse(t testing.TB, h Harness) {
	ctx := context.Background()
	s := h.open(t)
	a := newAccount(t, s, 10)

	names := []struct {
		name string
		ok   bool
	}{
		{"", true},
		{"CI pipeline (prod)", true},
		{"Zürich office ✓", true},
		{strings.Repeat("é", locrisk.MaxKeyNameLen), true},
		{strings.Repeat("é", locrisk.MaxKeyNameLen+1), false},
		{"two\nlines", false},
		{"escape \x1b[31m", false},
		{"bad \xff utf-8", false},
	}
	for _, tt := range names {
		k, _, err := s.CreateKey(ctx, locrisk.NewKey{AccountID: a.ID, Name: tt.name, Scopes: []string{locrisk.ScopeReportsRead}})
		if tt.ok != (err == nil) || (err != nil && !errors.Is(err, locrisk.ErrInvalid)) {
			t.Errorf("CreateKey name %q: err %v, want ok=%v", tt.name, err, tt.ok)
			continue
		}
		if err == nil && k.Name != tt.name {
			t.Errorf("CreateKey name %q returned %q", tt.name, k.Name)
		}
	}
	// Created in the same millisecond, keys list in id order: find them by
	// name.
	byName := func() map[string]locrisk.APIKey {
		t.Helper()
		keys, err := s.ListKeys(ctx, a.ID)
		if err != nil || len(keys) != 4 {
			t.Fatalf("ListKeys = %+v, %v; want 4 keys", keys, err)
		}
		m := map[string]locrisk.APIKey{}
		for _, k := range keys {
			m[k.Name] = k
		}
		return m
	}
	keys := byName()
	ci, plain, other := keys["CI pipeline (prod)"], keys[""], keys["Zürich office ✓"]
	if ci.ID == "" || plain.ID == "" || other.ID == "" || ci.LastUsedUTC != nil {
		t.Fatalf("listed names: %+v", keys)
	}

	t1 := t0.Add(time.Hour)
	if err := s.RecordKeyUse(ctx, []locrisk.KeyUse{{KeyID: plain.ID, At: t1}, {KeyID: ci.ID, At: t1.Add(time.Minute)}, {KeyID: "key_purged", At: t1}}); err != nil {
		t.Fatal(err)
	}
	// An older time (another process's late flush) does not move it back.
	if err := s.RecordKeyUse(ctx, []locrisk.KeyUse{{KeyID: plain.ID, At: t1.Add(-time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	keys = byName()
	if got := keys[""].LastUsedUTC; got == nil || !got.Equal(t1) {
		t.Errorf("last use of the unnamed key = %v, want %v", got, t1)
	}
	if got := keys["CI pipeline (prod)"].LastUsedUTC; got == nil || !got.Equal(t1.Add(time.Minute)) {
		t.Errorf("last use of the CI key = %v, want %v", got, t1.Add(time.Minute))
	}
	if got := keys["Zürich office ✓"].LastUsedUTC; got != nil {
		t.Errorf("unused key has last use %v", got)
	}
	if err := s.RecordKeyUse(ctx, nil); err != nil {
		t.Errorf("RecordKeyUse(nil): %v", err)
	}
}

// createKeyReturnsSecretOnce: the secret comes back once, with its hint;
// the key is found by it and by nothing else (how it is kept is the
// store's own test).
func createKeyReturnsSecretOnce(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 10)
	cidrs, _ := locrisk.ParseCIDRs("10.0.0.0/8 2001:db8::1")
	k, secret, err := s.CreateKey(ctx, locrisk.NewKey{AccountID: a.ID, Scopes: []string{"reports:read", "reports:create", "reports:read"},
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
	for _, wrong := range []string{"", "lrk_", secret + "x", strings.ToUpper(secret), k.ID} {
		if _, _, err := s.KeyBySecret(ctx, wrong); !errors.Is(err, locrisk.ErrNotFound) {
			t.Errorf("KeyBySecret(%q) err = %v, want ErrNotFound", wrong, err)
		}
	}
}

func createKeyValidation(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 10)
	tests := []struct {
		name    string
		k       locrisk.NewKey
		wantErr error
		wantVer int
	}{
		{"all scopes", locrisk.NewKey{AccountID: a.ID, Scopes: locrisk.AllScopes()}, nil, 2},
		{"legacy", locrisk.NewKey{AccountID: a.ID, Scopes: []string{"reports:read"}, ScopeVersion: 1}, nil, 1},
		{"explicit current", locrisk.NewKey{AccountID: a.ID, Scopes: []string{"reports:read"}, ScopeVersion: 2}, nil, 2},
		{"bad version", locrisk.NewKey{AccountID: a.ID, Scopes: []string{"reports:read"}, ScopeVersion: 3}, locrisk.ErrInvalid, 0},
		{"unknown scope", locrisk.NewKey{AccountID: a.ID, Scopes: []string{"reports:read", "reports:delete"}}, locrisk.ErrInvalid, 0},
		{"case matters", locrisk.NewKey{AccountID: a.ID, Scopes: []string{"Reports:Read"}}, locrisk.ErrInvalid, 0},
		{"no scopes", locrisk.NewKey{AccountID: a.ID}, locrisk.ErrInvalid, 0},
		{"negative expiry", locrisk.NewKey{AccountID: a.ID, Scopes: []string{"reports:read"}, ExpiresIn: -time.Hour}, locrisk.ErrInvalid, 0},
		{"unknown account", locrisk.NewKey{AccountID: "acct_nope", Scopes: []string{"reports:read"}}, locrisk.ErrNotFound, 0},
		{"invalid prefix", locrisk.NewKey{AccountID: a.ID, Scopes: []string{"reports:read"}, AllowedCIDRs: []netip.Prefix{{}}}, locrisk.ErrInvalid, 0},
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
	if keys, err := s.ListKeys(ctx, a.ID); err != nil || len(keys) != 3 {
		t.Errorf("%d keys stored (err %v), want the 3 valid ones", len(keys), err)
	}
}

func revokeAndExpiry(t testing.TB, h Harness) {
	now := t0
	s := h.Open(t, Config{Now: func() time.Time { return now }})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	k, secret, err := s.CreateKey(ctx, locrisk.NewKey{AccountID: a.ID, Scopes: []string{"reports:read"}, ExpiresIn: time.Hour})
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
	if err := s.RevokeKey(ctx, "key_unknown"); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("revoke unknown: %v, want ErrNotFound", err)
	}
}

func listKeys(t testing.TB, h Harness) {
	now := t0
	s := h.Open(t, Config{Now: func() time.Time { return now }})
	ctx := context.Background()
	a, b := newAccount(t, s, 1), newAccount(t, s, 1)
	var want []string
	for i, acct := range []string{a.ID, b.ID, a.ID} {
		now = t0.Add(time.Duration(i) * time.Second)
		k, _, err := s.CreateKey(ctx, locrisk.NewKey{AccountID: acct, Scopes: []string{"usage:read"}})
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
