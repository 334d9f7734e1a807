package data

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
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

// ErrNoManifest reports a data folder without a manifest.
var ErrNoManifest = errors.New("no " + ManifestName + " (a data folder must carry its manifest; `locrisk data export DIR` writes the embedded pack with its manifest as a starting point)")

// ReadManifest reads and checks the manifest at the top of the pack fsys:
// one entry for every catalog source, each with its provenance and licence
// stated, and a well-formed path, size and SHA-256.
func ReadManifest(fsys fs.FS) (*Manifest, error) {
	b, err := fs.ReadFile(fsys, ManifestName)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := fs.Stat(fsys, "."); serr != nil {
			return nil, serr
		}
		return nil, ErrNoManifest
	}
	if err != nil {
		return nil, err
	}
	return ParseManifest(b)
}

// ParseManifest decodes and checks a manifest (ReadManifest).
func ParseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			line := 1 + bytes.Count(b[:min(int(syn.Offset), len(b))], []byte("\n"))
			return nil, fmt.Errorf("%s line %d: %w", ManifestName, line, err)
		}
		return nil, fmt.Errorf("%s: %w", ManifestName, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestName, err)
	}
	return &m, nil
}

// check tells what is wrong with the manifest, all at once. A file's path
// is free (a newer vintage may carry its date in its name); the engine finds
// each source through the manifest (FS), so a data update edits the manifest
// and the files, never the code.
func (m *Manifest) check() error {
	var errs []error
	seen := map[string]bool{}
	paths := map[string]bool{}
	for i, f := range m.Files {
		name := fmt.Sprintf("entry %d (%s)", i+1, f.Path)
		_, ok := SourceByID(f.SourceID)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: unknown source_id %q", name, f.SourceID))
		case seen[f.SourceID]:
			errs = append(errs, fmt.Errorf("%s: source %s is listed twice", name, f.SourceID))
		}
		seen[f.SourceID] = true
		switch {
		case !fs.ValidPath(f.Path) || f.Path == "." || strings.Contains(f.Path, "\\"):
			errs = append(errs, fmt.Errorf("%s: path must be relative, with forward slashes and no . or .. parts", name))
		case f.Path == ManifestName:
			errs = append(errs, fmt.Errorf("%s: a data file cannot be the manifest", name))
		case paths[f.Path]:
			errs = append(errs, fmt.Errorf("%s: path is listed twice", name))
		}
		paths[f.Path] = true
		for _, field := range [][2]string{{"publisher", f.Publisher}, {"dataset", f.Dataset}, {"vintage", f.Vintage}, {"licence", f.Licence}, {"origin", f.Origin}} {
			if strings.TrimSpace(field[1]) == "" {
				errs = append(errs, fmt.Errorf("%s: %s is empty", name, field[0]))
			}
		}
		if b, err := hex.DecodeString(f.SHA256); err != nil || len(b) != sha256.Size {
			errs = append(errs, fmt.Errorf("%s: sha256 %q is not 64 hex digits", name, f.SHA256))
		}
		if f.Bytes <= 0 {
			errs = append(errs, fmt.Errorf("%s: bytes %d; a file's size must be positive", name, f.Bytes))
		}
		if f.Rows < 0 {
			errs = append(errs, fmt.Errorf("%s: rows %d; a count cannot be negative", name, f.Rows))
		}
	}
	for _, s := range catalog {
		if !seen[s.ID] {
			errs = append(errs, fmt.Errorf("source %s is not listed", s.ID))
		}
	}
	return errors.Join(errs...)
}

// Version is the data version of the pack, derived from its files'
// paths and checksums only, so two binaries or folders with the same data
// say the same version whatever else differs: "data-" and the first 12
// hex digits of Digest.
func (m *Manifest) Version() string { return "data-" + m.Digest()[:12] }

// Digest is the SHA-256 (64 hex digits) of the manifest's file list: one
// line "<path> <sha256>\n" per file, sorted by path. Each report records
// it (docs/verification.md), so an auditor can check which files made a
// report from the pack's manifest alone.
func (m *Manifest) Digest() string {
	files := slices.Clone(m.Files)
	slices.SortFunc(files, func(a, b ManifestFile) int { return strings.Compare(a.Path, b.Path) })
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s %s\n", f.Path, f.SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))
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

// Vintage is the vintage the manifest states for a catalog source, which
// reports cite; "" for a source it does not list.
func (m *Manifest) Vintage(sourceID string) string {
	f, _ := m.Entry(sourceID)
	return f.Vintage
}

// FS presents the pack fsys as the engine reads it: a source's catalog path
// (Source.Path, which the loaders open) leads to the file the manifest lists
// for it, whatever its name; other names are opened as they are.
func (m *Manifest) FS(fsys fs.FS) fs.FS {
	paths := make(map[string]string, len(m.Files))
	for _, f := range m.Files {
		if s, ok := SourceByID(f.SourceID); ok {
			paths[s.Path] = f.Path
		}
	}
	return catalogFS{fsys, paths}
}

type catalogFS struct {
	fsys  fs.FS
	paths map[string]string // catalog path -> manifest path
}

func (c catalogFS) Open(name string) (fs.File, error) {
	if p, ok := c.paths[name]; ok {
		name = p
	}
	return c.fsys.Open(name)
}

// Mismatch is a file of a pack that does not match its manifest entry.
type Mismatch struct {
	Path    string
	Problem string // "missing", "size 123, manifest 456", "sha256 ab12..., manifest cd34..."
}

// Unlisted returns the files in fsys that the manifest does not list
// (other than the manifest itself and hidden files), which the engine
// never reads, in path order.
func (m *Manifest) Unlisted(fsys fs.FS) ([]string, error) {
	listed := map[string]bool{ManifestName: true}
	for _, f := range m.Files {
		listed[f.Path] = true
	}
	var out []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.IsDir() && !listed[p] {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// Missing returns the manifest entries whose files are not in fsys, only
// looking for them (Verify reads them).
func (m *Manifest) Missing(fsys fs.FS) []Mismatch {
	var out []Mismatch
	for _, f := range m.Files {
		if _, err := fs.Stat(fsys, f.Path); err != nil {
			out = append(out, Mismatch{f.Path, "missing"})
		}
	}
	return out
}

// Verify reads every file the manifest lists in fsys and returns those that
// are missing or differ from the manifest in size or SHA-256, in manifest
// order; none means the pack holds exactly the files listed. It reads every
// byte (about 23 MB for the full pack).
func (m *Manifest) Verify(fsys fs.FS) ([]Mismatch, error) {
	var out []Mismatch
	for _, f := range m.Files {
		size, sum, err := fileSum(fsys, f.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, Mismatch{f.Path, "missing"})
		case err != nil:
			return nil, err
		case size != f.Bytes:
			out = append(out, Mismatch{f.Path, fmt.Sprintf("size %d bytes and sha256 %s; the manifest says %d bytes", size, sum, f.Bytes)})
		case sum != f.SHA256:
			out = append(out, Mismatch{f.Path, fmt.Sprintf("sha256 %s, manifest %s", sum, f.SHA256)})
		}
	}
	return out, nil
}

// Checked is a pack whose every file has been read and found to match its
// manifest (CheckPack), read as the loaders read it: by catalog path
// (Manifest.FS). The engine takes it as it is rather than read the whole
// pack a second time, so a command can check its data before it creates
// anything (docs/data.md, "Checking a pack") and then load them.
type Checked struct {
	fs.FS
	Manifest *Manifest
}

// CheckPack reads the manifest of the pack fsys and checks every file
// against it; a pack already checked is returned as it is.
func CheckPack(fsys fs.FS) (*Checked, error) {
	if c, ok := fsys.(*Checked); ok {
		return c, nil
	}
	m, err := ReadManifest(fsys)
	if err != nil {
		return nil, err
	}
	bad, err := m.Verify(fsys)
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, MismatchError(bad)
	}
	return &Checked{FS: m.FS(fsys), Manifest: m}, nil
}

// MismatchError describes a pack that does not match its manifest, one
// line per file, so the operator can fix the files or the manifest.
func MismatchError(bad []Mismatch) error {
	var b strings.Builder
	fmt.Fprintf(&b, "the data do not match their %s (%d file(s)):", ManifestName, len(bad))
	for _, x := range bad {
		fmt.Fprintf(&b, "\n  %s: %s", x.Path, x.Problem)
	}
	return errors.New(b.String())
}

// fileSum is a file's size and SHA-256 (hex).
func fileSum(fsys fs.FS, path string) (int64, string, error) {
	f, err := fsys.Open(path)
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
