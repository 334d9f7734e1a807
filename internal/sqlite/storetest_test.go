package sqlite_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/secretbox"
	"github.com/locrisk/locrisk/internal/sqlite"
	"github.com/locrisk/locrisk/internal/storetest"
)

// TestBehaviour runs the behaviour every store must have
// (internal/storetest) against the SQLite store, each test on a fresh file.
func TestBehaviour(t *testing.T) {
	storetest.Run(t, storetest.Harness{Open: openSQLite})
}

// openSQLite opens a fresh SQLite store in the test's temporary directory,
// as serve opens one (signing secrets sealed), with cfg's clock and hooks.
func openSQLite(t testing.TB, cfg storetest.Config) locrisk.Store {
	t.Helper()
	secrets, err := secretbox.New(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.OpenWith(context.Background(), filepath.Join(t.TempDir(), "storetest.db"),
		sqlite.Options{Now: cfg.Now, OnJobFinal: cfg.OnJobFinal, Secrets: secrets})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
