package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/secretbox"
	"github.com/locrisk/locrisk/internal/sqlite"
)

// TestServeSecretsRestoredWithoutKey: a database whose webhook signing
// secrets were sealed with a key that is no longer beside it (restored
// from a backup without its key file) is refused with a message that says
// a new key was generated and cannot open them, and asks for the original;
// the new key is not left behind. With the original key back it opens.
func TestServeSecretsRestoredWithoutKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "e.db")
	keyPath := db + ".key"
	key, err := secretbox.CreateKeyFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	box, err := secretbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.OpenWith(ctx, db, sqlite.Options{Secrets: box})
	if err != nil {
		t.Fatal(err)
	}
	acc, err := st.CreateAccount(ctx, "Acme", 10, 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{AccountID: acc.ID, Name: "hook",
		URL: "https://example.com/hook", Events: []string{"report.job.completed"}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	saved, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(keyPath); err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	be := sqliteBackend{path: db}
	served, err := be.openServe(ctx, serveOptions{log: log})
	if err == nil {
		served.Close()
		t.Fatal("serve opened a database of sealed secrets with a newly generated key")
	}
	if !errors.Is(err, sqlite.ErrSecretKey) {
		t.Errorf("error %v, want ErrSecretKey", err)
	}
	msg := err.Error()
	for _, want := range []string{"new key was generated", "Restore the original key file", keyPath} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "the key was read from") {
		t.Errorf("message says the new key was read from a file: %s", msg)
	}
	if _, err := os.Stat(keyPath); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the generated key file was left beside the database (%v)", err)
	}

	if err := os.WriteFile(keyPath, saved, 0o600); err != nil {
		t.Fatal(err)
	}
	served, err = be.openServe(ctx, serveOptions{log: log})
	if err != nil {
		t.Fatalf("with the original key restored: %v", err)
	}
	served.Close()
}
