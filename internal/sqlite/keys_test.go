package sqlite

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/locrisk/locrisk"
)

// TestCreateKeyStoresOnlyHash: the secret is kept as its hash only; what
// the key's API shows is storetest's (CreateReturnsSecretOnce).
func TestCreateKeyStoresOnlyHash(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	k, secret, err := s.CreateKey(ctx, locrisk.NewKey{AccountID: a.ID, Scopes: []string{"reports:read"}})
	if err != nil {
		t.Fatal(err)
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
			if col == "secret_hash" && text == locrisk.HashKeySecret(secret) && len(text) == 64 {
				sawHash = true
			}
		}
	}
	if !sawHash {
		t.Error("secret_hash is not the hex SHA-256 of the secret")
	}

	// The hash itself is no secret: presented as one it finds nothing.
	if got, _, err := s.KeyBySecret(ctx, secret); err != nil || got.ID != k.ID {
		t.Fatalf("KeyBySecret = %+v, %v", got, err)
	}
	if _, _, err := s.KeyBySecret(ctx, locrisk.HashKeySecret(secret)); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("KeyBySecret(the hash) err = %v, want ErrNotFound", err)
	}
}
