package refcache

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "ref.cache")}
	if body, err := f.LoadReference(ctx, "k1"); body != nil || err != nil {
		t.Fatalf("missing file: %q, %v; want nil, nil", body, err)
	}
	body := []byte("binary\n\x00body\nwith lines")
	if err := f.SaveReference(ctx, "k1", body); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		key  string
		want []byte
	}{
		{"same key", "k1", body},
		{"another key", "k2", nil},
		{"a prefix of the key", "k", nil},
	}
	for _, tt := range tests {
		got, err := f.LoadReference(ctx, tt.key)
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	// Another key replaces the first.
	if err := f.SaveReference(ctx, "k2", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.LoadReference(ctx, "k1"); got != nil {
		t.Errorf("k1 still there: %q", got)
	}
	if got, _ := f.LoadReference(ctx, "k2"); string(got) != "two" {
		t.Errorf("k2 = %q", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := f.SaveReference(ctx, "a\nb", nil); err == nil {
		t.Error("a key with a line break was saved")
	}
}

func TestFileNotACache(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"other": "externalId,latitude\n", "cut": magic + "no line end"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if body, err := (File{Path: p}).LoadReference(context.Background(), "k"); body != nil || err == nil || !strings.Contains(err.Error(), "reference cache") {
			t.Errorf("%s: %q, %v; want an error", name, body, err)
		}
	}
	if err := (File{Path: filepath.Join(dir, "no", "dir")}).SaveReference(context.Background(), "k", nil); err == nil {
		t.Error("saved into a missing directory")
	}
}
