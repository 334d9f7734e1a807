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
	"os"
	"path/filepath"
	"strings"
)

// The edits of a pack folder an operator makes to build a changed pack
// (docs/data.md, "Replacing a data set"): one file replaced with its
// manifest entry, or every entry's size and checksum brought up to date
// after hand edits. Either way the manifest is checked as ReadManifest
// checks it before it is written, and written whole or not at all.

// Encode writes the manifest as its file holds it: indented by two spaces,
// without HTML escapes, with a final newline (the form of datapack's).
func (m *Manifest) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeManifest checks m and writes it to the pack folder dir, beside the
// old one first and then renamed over it, so the folder always holds a
// whole manifest.
func writeManifest(dir string, m *Manifest) error {
	b, err := m.Encode()
	if err != nil {
		return err
	}
	if _, err := ParseManifest(b); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, ManifestName), bytes.NewReader(b))
}

// readDirManifest reads the manifest of the pack folder dir, which must be
// a folder holding one.
func readDirManifest(dir string) (*Manifest, error) {
	fsys, err := DirFS(dir)
	if err != nil {
		return nil, err
	}
	m, err := ReadManifest(fsys)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return m, nil
}

// Replacement is a data file to put in a pack in place of one it has,
// and what its manifest entry says of the new file. A new file is a new
// release, so its vintage, origin and row count must be stated; the
// licence, attribution and rows note stay as they were unless given.
type Replacement struct {
	// Entry names the manifest entry: its path in the pack, or its
	// source_id.
	Entry string
	// From is the new file.
	From string
	// As is the path the new file gets in the pack; empty keeps the
	// entry's path. The old file is removed when it changes.
	As string

	Vintage, Origin string
	Rows            int
	// Nil keeps the entry's value.
	RowsNote, Licence, Attribution *string
}

// Replace puts r.From in the pack folder dir in place of the file of
// r.Entry, records its size, SHA-256 and what r states in the manifest,
// and returns the entry before and the manifest after. The new file is
// copied beside its place and renamed into it, then the manifest is
// rewritten, then an old file under another path is removed, so a failure
// at any step leaves a pack that at worst does not verify, never a
// manifest that lies about a file it names as checked.
func Replace(dir string, r Replacement) (old ManifestFile, m *Manifest, err error) {
	m, err = readDirManifest(dir)
	if err != nil {
		return ManifestFile{}, nil, err
	}
	i := -1
	for j, f := range m.Files {
		if f.Path == r.Entry || f.SourceID == r.Entry {
			i = j
			break
		}
	}
	if i < 0 {
		return ManifestFile{}, nil, fmt.Errorf("%s lists no file with the path or source id %q", ManifestName, r.Entry)
	}
	old = m.Files[i]
	entry := old
	if r.As != "" {
		entry.Path = r.As
	}
	for name, v := range map[string]string{"vintage": r.Vintage, "origin": r.Origin} {
		if strings.TrimSpace(v) == "" {
			return ManifestFile{}, nil, fmt.Errorf("the %s of the new file is required: a new file is a new release", name)
		}
	}
	if r.Rows < 0 {
		return ManifestFile{}, nil, fmt.Errorf("rows %d: a count cannot be negative", r.Rows)
	}
	entry.Vintage, entry.Origin, entry.Rows = r.Vintage, r.Origin, r.Rows
	for _, f := range []struct {
		v   *string
		dst *string
	}{{r.RowsNote, &entry.RowsNote}, {r.Licence, &entry.Licence}, {r.Attribution, &entry.Attribution}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	for j, f := range m.Files {
		if j != i && f.Path == entry.Path {
			return ManifestFile{}, nil, fmt.Errorf("%s is already the file of %s", entry.Path, f.SourceID)
		}
	}
	// The entry is checked as the whole manifest will be, before any file
	// is touched (a bad path, an empty field).
	probe := &Manifest{Files: append([]ManifestFile(nil), m.Files...)}
	entry.Bytes, entry.SHA256 = 1, strings.Repeat("0", 64)
	probe.Files[i] = entry
	if err := probe.check(); err != nil {
		return ManifestFile{}, nil, err
	}

	src, err := os.Open(r.From)
	if err != nil {
		return ManifestFile{}, nil, err
	}
	defer src.Close()
	if st, err := src.Stat(); err != nil {
		return ManifestFile{}, nil, err
	} else if !st.Mode().IsRegular() || st.Size() == 0 {
		return ManifestFile{}, nil, fmt.Errorf("%s is not a file with data in it", r.From)
	}
	h := sha256.New()
	counted := &countWriter{}
	target := filepath.Join(dir, filepath.FromSlash(entry.Path))
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return ManifestFile{}, nil, err
	}
	if err := writeFileAtomic(target, io.TeeReader(src, io.MultiWriter(h, counted))); err != nil {
		return ManifestFile{}, nil, err
	}
	entry.Bytes, entry.SHA256 = counted.n, hex.EncodeToString(h.Sum(nil))
	m.Files[i] = entry
	if err := writeManifest(dir, m); err != nil {
		return ManifestFile{}, nil, err
	}
	if entry.Path != old.Path {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(old.Path))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return old, m, fmt.Errorf("the pack is updated, but the old file could not be removed (the engine does not read it): %w", err)
		}
	}
	return old, m, nil
}

// Rehash brings the size and SHA-256 of every entry of the manifest of
// the pack folder dir up to date with its file, after hand edits of the
// files or the manifest, and returns the manifest before and after. A
// listed file that is missing is refused, naming every one, and nothing is
// written.
func Rehash(dir string) (before, after *Manifest, err error) {
	before, err = readDirManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	fsys := os.DirFS(dir)
	if missing := before.Missing(fsys); len(missing) > 0 {
		return nil, nil, MismatchError(missing)
	}
	after = &Manifest{Files: append([]ManifestFile(nil), before.Files...)}
	for i, f := range after.Files {
		size, sum, err := fileSum(fsys, f.Path)
		if err != nil {
			return nil, nil, err
		}
		after.Files[i].Bytes, after.Files[i].SHA256 = size, sum
	}
	if err := writeManifest(dir, after); err != nil {
		return nil, nil, err
	}
	return before, after, nil
}

// writeFileAtomic writes the bytes of r to a hidden file beside path and
// renames it over path, readable by everyone (docs/data.md: installed
// files are 0644).
func writeFileAtomic(path string, r io.Reader) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := io.Copy(tmp, r); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	return nil
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
