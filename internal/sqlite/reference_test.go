package sqlite

import (
	"context"
	"path/filepath"
	"testing"
)

// A version 2 file (before reference_cache) is upgraded in place and keeps
// its data.
func TestMigrateV2AddsReferenceCache(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v2.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	a := newAccount(t, s, 10)
	undoMigration7(t, s)
	if _, err := s.db.ExecContext(ctx, `DROP TABLE reference_cache`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `PRAGMA user_version = 2`); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("open v2 file: %v", err)
	}
	defer s.Close()
	if _, err := s.GetAccount(ctx, a.ID); err != nil {
		t.Fatalf("account lost in the upgrade: %v", err)
	}
	if err := s.SaveReference(ctx, "k", []byte("b")); err != nil {
		t.Fatalf("save after upgrade: %v", err)
	}
	if got, err := s.LoadReference(ctx, "k"); err != nil || string(got) != "b" {
		t.Fatalf("load after upgrade: %q err %v", got, err)
	}
}
