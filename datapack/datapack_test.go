package datapack

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
)

// TestEmbeddedPackMatchesManifest: every file the manifest lists is built
// in, byte for byte, and nothing else is.
func TestEmbeddedPackMatchesManifest(t *testing.T) {
	m, err := data.ReadManifest(FS())
	if err != nil {
		t.Fatal(err)
	}
	bad, err := m.Verify(FS())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: %s (after changing a data file, update its entry in datapack/%s)", b.Path, b.Problem, data.ManifestName)
	}
	listed := map[string]bool{data.ManifestName: true}
	for _, f := range m.Files {
		listed[f.Path] = true
	}
	err = fs.WalkDir(FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !listed[path] {
			t.Errorf("%s is built in but not in the manifest", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSameFilesAsShared: where the public data mirror (../shared/data
// beside the repository) holds a pack file, it is the same file; a file
// the pack re-encodes names, in its origin, the SHA-256 of the mirror's
// file it was made from. Skipped when the mirror is absent.
func TestSameFilesAsShared(t *testing.T) {
	shared := filepath.Join("..", "..", "shared", "data")
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("need the public data mirror beside the repository (../shared/data): %v", err)
	}
	m, err := data.ReadManifest(FS())
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for _, f := range m.Files {
		if sum, err := fileSHA256(filepath.Join(shared, filepath.FromSlash(f.Path))); err == nil {
			if sum != f.SHA256 {
				t.Errorf("%s: sha256 %s in the mirror, %s in the manifest", f.Path, sum, f.SHA256)
			}
			same++
			continue
		}
		from := data.Path(f.SourceID)
		sum, err := fileSHA256(filepath.Join(shared, filepath.FromSlash(from)))
		if st, serr := os.Stat(filepath.Join(shared, filepath.FromSlash(from))); serr == nil && st.IsDir() {
			// A folder of files packed into one (the SRTM30_PLUS tiles):
			// the origin names the SHA-256 of its sha256sum listing.
			sum, err = listingSHA256(filepath.Join(shared, filepath.FromSlash(from)))
		}
		if err != nil {
			t.Errorf("%s: neither it nor %s is in the mirror: %v", f.Path, from, err)
			continue
		}
		if !strings.Contains(f.Origin, sum) {
			t.Errorf("%s: its origin does not name the sha256 of the mirror's %s (%s)", f.Path, from, sum)
		}
	}
	t.Logf("%d of %d files are the mirror's, byte for byte", same, len(m.Files))
}

func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}

// listingSHA256 is the SHA-256 of what `sha256sum` prints for every file
// under dir, by path relative to dir sorted in the C locale: lines
// "<sha256>  <path>\n".
func listingSHA256(dir string) (string, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, rerr := filepath.Rel(dir, p)
			paths = append(paths, filepath.ToSlash(rel))
			return rerr
		}
		return err
	})
	if err != nil {
		return "", err
	}
	slices.Sort(paths)
	h := sha256.New()
	for _, p := range paths {
		sum, err := fileSHA256(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s  %s\n", sum, p)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
