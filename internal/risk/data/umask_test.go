//go:build unix

package data

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestInstallModesIgnoreUmask: a fetched or exported pack is readable by
// everyone (folders 0755, files 0644) even when whoever installs it has a
// umask of 077 (docs/data.md); an existing folder keeps its own mode.
func TestInstallModesIgnoreUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	good := packArchive(t, "", nil)
	fetched := filepath.Join(t.TempDir(), "fetched")
	if _, _, err := Fetch(context.Background(), nil, serve(t, good, false, 200), sum(good), fetched); err != nil {
		t.Fatal(err)
	}
	exported := filepath.Join(t.TempDir(), "exported")
	if _, err := Export(os.DirFS(fixtureDir(t)), exported); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{fetched, exported} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			st, err := os.Stat(path)
			if err != nil {
				return err
			}
			want := fs.FileMode(0o644)
			if d.IsDir() {
				want = 0o755
			}
			if st.Mode().Perm() != want {
				t.Errorf("%s: mode %v, want %v", path, st.Mode().Perm(), want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// An existing empty folder is filled in place and keeps its mode.
	private := filepath.Join(t.TempDir(), "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(private)
	if _, err := Export(os.DirFS(fixtureDir(t)), private); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(private)
	if err != nil || !os.SameFile(before, after) || after.Mode().Perm() != 0o700 {
		t.Errorf("the existing folder was replaced or its mode changed: %v %v", after.Mode().Perm(), err)
	}
	// Exporting into the working folder itself works in place.
	fixture, err := filepath.Abs(fixtureDir(t))
	if err != nil {
		t.Fatal(err)
	}
	here := t.TempDir()
	t.Chdir(here)
	if _, err := Export(os.DirFS(fixture), "."); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(here, ManifestName)); err != nil {
		t.Errorf("export into the working folder: %v", err)
	}
}
