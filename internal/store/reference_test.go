package store

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

func TestReferenceCache(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})

	// An absent key is no reference and no error: the engine builds one.
	body, err := s.LoadReference(ctx, "dv1/m2/f1")
	if body != nil || err != nil {
		t.Fatalf("absent key: body %q err %v, want nil, nil", body, err)
	}

	// Round trip, byte for byte (the body is binary).
	b1 := []byte{0, 1, 2, 0xff, 'g', 'o', 'b', 0}
	if err := s.SaveReference(ctx, "dv1/m2/f1", b1); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LoadReference(ctx, "dv1/m2/f1"); err != nil || !bytes.Equal(got, b1) {
		t.Fatalf("round trip: %v err %v, want %v", got, err, b1)
	}

	// Saving the same key again replaces its body.
	b1b := []byte("second body")
	if err := s.SaveReference(ctx, "dv1/m2/f1", b1b); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LoadReference(ctx, "dv1/m2/f1"); err != nil || !bytes.Equal(got, b1b) {
		t.Fatalf("resave: %q err %v, want %q", got, err, b1b)
	}

	// A new key (new data version or methodology) drops every other key.
	b2 := []byte("reference for dv2")
	if err := s.SaveReference(ctx, "dv2/m2/f1", b2); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LoadReference(ctx, "dv2/m2/f1"); err != nil || !bytes.Equal(got, b2) {
		t.Fatalf("new key: %q err %v, want %q", got, err, b2)
	}
	if got, err := s.LoadReference(ctx, "dv1/m2/f1"); got != nil || err != nil {
		t.Fatalf("old key after a new save: %q err %v, want nil, nil", got, err)
	}
	var n int
	if err := s.db.GetContext(ctx, &n, `SELECT COUNT(*) FROM reference_cache`); err != nil || n != 1 {
		t.Fatalf("%d cached references (err %v), want 1", n, err)
	}
}

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
