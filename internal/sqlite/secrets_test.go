package sqlite

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/secretbox"
)

// TestFilesArePrivate: the database file and its -wal and -shm companions
// are created readable by their owner only.
func TestFilesArePrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "private.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	newAccount(t, s, 1) // a write, so the WAL exists
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(p), m)
		}
	}
}

// claimSecret creates an event for acct and returns the signing secret the
// claim of its delivery carries.
func claimSecret(t *testing.T, s *Store, acct string, at time.Time) string {
	t.Helper()
	newEvent(t, s, acct, evCompleted, at)
	task, ok, err := s.ClaimWebhookDelivery(context.Background(), time.Minute, testLimits(), at)
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	return task.Secret
}

// storedSecret is an endpoint's signing_secret column as the file holds it.
func storedSecret(t *testing.T, s *Store, id string) string {
	t.Helper()
	var v string
	if err := s.db.GetContext(context.Background(), &v, `SELECT signing_secret FROM webhook_endpoints WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSigningSecretsSealed: the secret CreateWebhookEndpoint returns is
// the one a claim signs with, and neither the database file nor its WAL
// contains it.
func TestSigningSecretsSealed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sealed.db")
	s, err := OpenWith(ctx, path, Options{Now: func() time.Time { return t0 }, Secrets: testSecrets(t, 1)})
	if err != nil {
		t.Fatal(err)
	}
	a := newAccount(t, s, 100)
	_, secret, err := s.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{
		AccountID: a.ID, Name: "hook", URL: "https://hooks.example.com/x", Events: []string{evCompleted}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := claimSecret(t, s, a.ID, t0); got != secret {
		t.Errorf("claim signs with %q, want %q", got, secret)
	}
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s contains the signing secret", filepath.Base(p))
		}
	}
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(secret)) {
		t.Error("the checkpointed database file contains the signing secret")
	}

	// Without a key, no endpoint is made, and a sealed secret is never
	// handed out in place of the clear one.
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{
		AccountID: a.ID, Name: "hook", URL: "https://hooks.example.com/y", Events: []string{evCompleted}}, t0); !errors.Is(err, ErrNoSecretKey) {
		t.Errorf("create without a key: %v, want ErrNoSecretKey", err)
	}
	newEvent(t, s, a.ID, evCompleted, t0.Add(time.Hour))
	if task, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), t0.Add(time.Hour)); !errors.Is(err, ErrNoSecretKey) {
		t.Errorf("claim without a key = %+v, %v, %v; want ErrNoSecretKey", task, ok, err)
	}
}

// TestSealExistingSecrets: rows written in clear (before sealing existed)
// are sealed when the store is opened with a key, once; a wrong key is
// refused at Open.
func TestSealExistingSecrets(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "legacy.db")
	s, err := OpenWith(ctx, path, Options{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	a := newAccount(t, s, 100)
	const clear = "whsec_legacylegacylegacylegacylegacylegacy"
	if _, err := s.db.ExecContext(ctx, `INSERT INTO webhook_endpoints
		(id, account_id, name, url, events, signing_secret, is_active, created_utc)
		VALUES ('whe_legacy', ?, 'old', 'https://hooks.example.com/old', ?, ?, 1, ?)`,
		a.ID, evCompleted, clear, FormatTime(t0)); err != nil {
		t.Fatal(err)
	}
	// Before any key, the clear row still signs (it is what the receiver
	// holds).
	if got := claimSecret(t, s, a.ID, t0); got != clear {
		t.Errorf("claim of a clear row signs with %q, want %q", got, clear)
	}
	s.Close()

	var sealed string
	for i := range 2 {
		s, err := OpenWith(ctx, path, Options{Now: func() time.Time { return t0 }, Secrets: testSecrets(t, 1)})
		if err != nil {
			t.Fatalf("open #%d with a key: %v", i+1, err)
		}
		v := storedSecret(t, s, "whe_legacy")
		if !secretbox.IsSealed(v) {
			t.Errorf("open #%d: the row holds %q, want it sealed", i+1, v)
		}
		if i == 0 {
			sealed = v
		} else if v != sealed {
			t.Error("a second open sealed the row again")
		}
		if got := claimSecret(t, s, a.ID, t0.Add(time.Duration(i+1)*time.Hour)); got != clear {
			t.Errorf("open #%d: claim signs with %q, want %q", i+1, got, clear)
		}
		s.Close()
	}

	_, err = OpenWith(ctx, path, Options{Secrets: testSecrets(t, 2)})
	if !errors.Is(err, ErrSecretKey) {
		t.Fatalf("open with another key: %v, want ErrSecretKey", err)
	}
}
