package data

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ManifestName is the manifest's file name at the top of a data pack
// (docs/data.md).
const ManifestName = "manifest.json"

// Manifest describes a data pack: every file the engine reads, where it
// came from, under which licence, and its size and SHA-256, so that a pack
// can be verified byte for byte and its version derived from its content.
type Manifest struct {
	Files []ManifestFile `json:"files"`
}

// ManifestFile is one data file of a pack.
type ManifestFile struct {
	Path        string `json:"path"` // relative to the pack, as in the catalog (or without .gz)
	SourceID    string `json:"source_id"`
	Publisher   string `json:"publisher"`
	Dataset     string `json:"dataset"`
	Vintage     string `json:"vintage"`
	Licence     string `json:"licence"`
	Attribution string `json:"attribution"` // what the licence or publisher asks to be kept; may be empty
	Origin      string `json:"origin"`      // where the copy came from and how it was converted
	Rows        int    `json:"rows"`
	RowsNote    string `json:"rows_note,omitempty"`
	Bytes       int64  `json:"bytes"`
	SHA256      string `json:"sha256"`
}

// ErrNoManifest reports a data directory without a manifest.
var ErrNoManifest = errors.New("no " + ManifestName)

// ReadManifest reads and checks dir's manifest: one entry for every
// catalog source, each with a catalog path, its provenance and licence
// stated, and a well-formed size and SHA-256.
func ReadManifest(dir string) (*Manifest, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoManifest)
	}
	if err != nil {
		return nil, err
	}
	return ParseManifest(b)
}

// ParseManifest decodes and checks a manifest (ReadManifest).
func ParseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestName, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestName, err)
	}
	return &m, nil
}

// check tells what is wrong with the manifest, all at once.
func (m *Manifest) check() error {
	var errs []error
	seen := map[string]bool{}
	for i, f := range m.Files {
		name := fmt.Sprintf("entry %d (%s)", i+1, f.Path)
		s, ok := SourceByID(f.SourceID)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: unknown source_id %q", name, f.SourceID))
		case f.Path != s.Path && f.Path != strings.TrimSuffix(s.Path, ".gz"):
			errs = append(errs, fmt.Errorf("%s: source %s is read from %s", name, f.SourceID, s.Path))
		case seen[f.SourceID]:
			errs = append(errs, fmt.Errorf("%s: source %s is listed twice", name, f.SourceID))
		}
		seen[f.SourceID] = true
		for _, field := range [][2]string{{"publisher", f.Publisher}, {"dataset", f.Dataset}, {"vintage", f.Vintage}, {"licence", f.Licence}, {"origin", f.Origin}} {
			if strings.TrimSpace(field[1]) == "" {
				errs = append(errs, fmt.Errorf("%s: %s is empty", name, field[0]))
			}
		}
		if b, err := hex.DecodeString(f.SHA256); err != nil || len(b) != sha256.Size {
			errs = append(errs, fmt.Errorf("%s: sha256 %q is not 64 hex digits", name, f.SHA256))
		}
		if f.Bytes <= 0 || f.Rows < 0 {
			errs = append(errs, fmt.Errorf("%s: bytes %d, rows %d", name, f.Bytes, f.Rows))
		}
	}
	for _, s := range catalog {
		if !seen[s.ID] {
			errs = append(errs, fmt.Errorf("source %s (%s) is not listed", s.ID, s.Path))
		}
	}
	return errors.Join(errs...)
}

// Version is the data version of the pack, derived from its files'
// paths and checksums only, so two binaries or folders with the same data
// say the same version whatever else differs.
func (m *Manifest) Version() string {
	files := slices.Clone(m.Files)
	slices.SortFunc(files, func(a, b ManifestFile) int { return strings.Compare(a.Path, b.Path) })
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s %s\n", f.Path, f.SHA256)
	}
	return "data-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// Entry returns the manifest's entry for a catalog source.
func (m *Manifest) Entry(sourceID string) (ManifestFile, bool) {
	for _, f := range m.Files {
		if f.SourceID == sourceID {
			return f, true
		}
	}
	return ManifestFile{}, false
}

// Mismatch is a file of a pack that does not match its manifest entry.
type Mismatch struct {
	Path    string
	Problem string // "missing", "size 123, manifest 456", "sha256 ab12..., manifest cd34..."
}

// Verify reads every file the manifest lists in dir and returns those that
// are missing or differ from the manifest in size or SHA-256, in manifest
// order; none means the folder holds exactly the pack. It reads every
// byte (about 25 MB for the full pack).
func (m *Manifest) Verify(dir string) ([]Mismatch, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("data directory %s is not a directory", dir)
	}
	var out []Mismatch
	for _, f := range m.Files {
		// The engine opens a file's .gz copy when both are there (Open),
		// so a second copy beside the listed one would be read unchecked.
		twin := f.Path + ".gz"
		if strings.HasSuffix(f.Path, ".gz") {
			twin = strings.TrimSuffix(f.Path, ".gz")
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(twin))); err == nil {
			out = append(out, Mismatch{f.Path, "a second copy, " + twin + ", is beside it; a pack holds each file once"})
			continue
		}
		size, sum, err := fileSum(filepath.Join(dir, filepath.FromSlash(f.Path)))
		switch {
		case errors.Is(err, os.ErrNotExist):
			out = append(out, Mismatch{f.Path, "missing"})
		case err != nil:
			return nil, err
		case size != f.Bytes:
			out = append(out, Mismatch{f.Path, fmt.Sprintf("size %d bytes, manifest %d", size, f.Bytes)})
		case sum != f.SHA256:
			out = append(out, Mismatch{f.Path, fmt.Sprintf("sha256 %s, manifest %s", sum, f.SHA256)})
		}
	}
	return out, nil
}

// fileSum is a file's size and SHA-256 (hex).
func fileSum(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", fmt.Errorf("%s: %w", path, err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}
