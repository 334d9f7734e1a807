package storetest

import (
	"context"
	"crypto/ed25519"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

var signingKeyTests = []test{
	{"NoKeyAtFirst", func(t testing.TB, h Harness) {
		s := h.open(t)
		ctx := context.Background()
		if _, err := s.CurrentSigningKey(ctx); !errors.Is(err, locrisk.ErrNotFound) {
			t.Errorf("current key of a new store: %v, want ErrNotFound", err)
		}
		if keys, err := s.ListSigningKeys(ctx); err != nil || len(keys) != 0 {
			t.Errorf("keys of a new store: %v %v", keys, err)
		}
	}},
	{"EnsureKeepsTheFirst", func(t testing.TB, h Harness) {
		s := h.open(t)
		ctx := context.Background()
		first := newSigningKey(t, t0)
		cur, created, err := s.EnsureSigningKey(ctx, first)
		if err != nil || !created || cur.ID != first.ID {
			t.Fatalf("first ensure: %s %v %v", cur.ID, created, err)
		}
		// The private half comes back whole: it signs what the public
		// half verifies.
		if !ed25519.Verify(first.PublicKey, []byte("m"), ed25519.Sign(cur.PrivateKey, []byte("m"))) {
			t.Error("the stored private key does not match the public key")
		}
		cur, created, err = s.EnsureSigningKey(ctx, newSigningKey(t, t0.Add(time.Hour)))
		if err != nil || created || cur.ID != first.ID {
			t.Errorf("second ensure: %s created %v %v; want the first key kept", cur.ID, created, err)
		}
	}},
	{"EnsureConcurrentlyMakesOneKey", func(t testing.TB, h Harness) {
		s := h.open(t)
		ctx := context.Background()
		var wg sync.WaitGroup
		ids := make([]string, 8)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k, _, err := s.EnsureSigningKey(ctx, newSigningKey(t, t0))
				if err != nil {
					t.Errorf("ensure: %v", err)
				}
				ids[i] = k.ID
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("concurrent ensures returned different keys: %v", ids)
			}
		}
		if keys, _ := s.ListSigningKeys(ctx); len(keys) != 1 {
			t.Errorf("%d keys after concurrent ensures, want 1", len(keys))
		}
	}},
	{"RotateRetiresAndKeepsPublicKeys", func(t testing.TB, h Harness) {
		s := h.open(t)
		ctx := context.Background()
		first := newSigningKey(t, t0)
		if _, _, err := s.EnsureSigningKey(ctx, first); err != nil {
			t.Fatal(err)
		}
		second := newSigningKey(t, t0.Add(24*time.Hour))
		if err := s.RotateSigningKey(ctx, second); err != nil {
			t.Fatal(err)
		}
		cur, err := s.CurrentSigningKey(ctx)
		if err != nil || cur.ID != second.ID || !cur.Current() || cur.PrivateKey == nil {
			t.Fatalf("current after rotation: %+v %v", cur, err)
		}
		keys, err := s.ListSigningKeys(ctx)
		if err != nil || len(keys) != 2 {
			t.Fatalf("keys after rotation: %v %v", keys, err)
		}
		if keys[0].ID != second.ID || keys[1].ID != first.ID {
			t.Errorf("order %s, %s; want newest first", keys[0].ID, keys[1].ID)
		}
		old := keys[1]
		if old.Current() || !old.RetiredUTC.Equal(second.CreatedUTC) {
			t.Errorf("retired key: retired %v, want %v", old.RetiredUTC, second.CreatedUTC)
		}
		if !old.PublicKey.Equal(first.PublicKey) || !old.CreatedUTC.Equal(first.CreatedUTC) {
			t.Error("the retired key's public half or creation time changed")
		}
		for _, k := range keys {
			if k.PrivateKey != nil {
				t.Errorf("key %s listed with its private half", k.ID)
			}
		}
	}},
	{"RotateWithoutKey", func(t testing.TB, h Harness) {
		s := h.open(t)
		ctx := context.Background()
		k := newSigningKey(t, t0)
		if err := s.RotateSigningKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		if cur, err := s.CurrentSigningKey(ctx); err != nil || cur.ID != k.ID {
			t.Errorf("current: %s %v", cur.ID, err)
		}
		if err := s.RotateSigningKey(ctx, locrisk.SigningKey{ID: "x", CreatedUTC: t0}); err == nil {
			t.Error("a key without its private half was stored")
		}
		if cur, err := s.CurrentSigningKey(ctx); err != nil || cur.ID != k.ID {
			t.Errorf("a failed rotation changed the current key: %s %v", cur.ID, err)
		}
	}},
}

// newSigningKey makes a signing key created at now.
func newSigningKey(t testing.TB, now time.Time) locrisk.SigningKey {
	t.Helper()
	k, err := locrisk.NewSigningKey(now)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
