package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

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
