package data

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateManifest = flag.Bool("update-manifest", false, "rewrite testdata/data/manifest.json's sizes and checksums from the fixture files")

// fixtureDir is the repository's testdata/data (this package cannot use
// datatest, which imports it).
func fixtureDir(t *testing.T) string {
	t.Helper()
	return filepath.Join("..", "..", "..", "testdata", "data")
}

// TestFixtureManifest: the fixture world is a data pack whose manifest
// matches its files byte for byte. After editing a fixture file, run
//
//	go test ./internal/risk/data -run TestFixtureManifest -update-manifest
func TestFixtureManifest(t *testing.T) {
	dir := fixtureDir(t)
	m, err := ReadManifest(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	if *updateManifest {
		for i, f := range m.Files {
			size, sum, err := fileSum(os.DirFS(dir), f.Path)
			if err != nil {
				t.Fatal(err)
			}
			m.Files[i].Bytes, m.Files[i].SHA256 = size, sum
		}
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ManifestName), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	bad, err := m.Verify(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: %s (after editing a fixture: go test ./internal/risk/data -run TestFixtureManifest -update-manifest)", b.Path, b.Problem)
	}
	if !strings.HasPrefix(m.Version(), "data-") || len(m.Version()) != len("data-")+12 {
		t.Errorf("version %q", m.Version())
	}
}

// TestVerifyFindsChangedAndMissingFiles copies the fixture pack, changes
// one file's bytes, truncates another and deletes a third.
func TestVerifyFindsChangedAndMissingFiles(t *testing.T) {
	src := fixtureDir(t)
	m, err := ReadManifest(os.DirFS(src))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range m.Files {
		b, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, filepath.FromSlash(f.Path)), b)
	}
	if bad, err := m.Verify(os.DirFS(dir)); err != nil || len(bad) != 0 {
		t.Fatalf("a faithful copy: %v, %v", bad, err)
	}
	changed, truncated, deleted := m.Files[0].Path, m.Files[1].Path, m.Files[2].Path
	b, _ := os.ReadFile(filepath.Join(dir, changed))
	b[len(b)/2] ^= 1 // same size, other bytes
	writeFile(t, filepath.Join(dir, changed), b)
	writeFile(t, filepath.Join(dir, truncated), []byte("x"))
	if err := os.Remove(filepath.Join(dir, deleted)); err != nil {
		t.Fatal(err)
	}
	bad, err := m.Verify(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{changed: "sha256 ", truncated: "size 1 bytes", deleted: "missing"}
	if len(bad) != len(want) {
		t.Fatalf("mismatches %+v, want %d", bad, len(want))
	}
	for _, b := range bad {
		if !strings.HasPrefix(b.Problem, want[b.Path]) {
			t.Errorf("%s: %q, want it to start %q", b.Path, b.Problem, want[b.Path])
		}
	}
}

// TestParseManifestRejects: a manifest must list every catalog source once,
// under a clean path of its own, with its provenance, licence, size and checksum.
func TestParseManifestRejects(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(fixtureDir(t), ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(fn func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		fn(m)
		b, _ := json.Marshal(m)
		return b
	}
	files := func(m map[string]any) []any { return m["files"].([]any) }
	first := func(m map[string]any) map[string]any { return files(m)[0].(map[string]any) }
	tests := []struct {
		name, want string
		b          []byte
	}{
		{"not JSON", "invalid character", []byte("{x")},
		{"a syntax error names its line", "manifest.json line 3: invalid character", []byte("{\n\"files\": [\n  x\n]}")},
		{"negative size", "a file's size must be positive", edit(func(m map[string]any) { first(m)["bytes"] = -5 })},
		{"negative rows", "a count cannot be negative", edit(func(m map[string]any) { first(m)["rows"] = -1 })},
		{"unknown field", "unknown field", edit(func(m map[string]any) { first(m)["colour"] = "red" })},
		{"a source left out", "is not listed", edit(func(m map[string]any) { m["files"] = files(m)[1:] })},
		{"a source twice", "listed twice", edit(func(m map[string]any) { m["files"] = append(files(m), files(m)[0]) })},
		{"unknown source", "unknown source_id", edit(func(m map[string]any) { first(m)["source_id"] = "nasa-moon" })},
		{"a path outside the pack", "path must be relative", edit(func(m map[string]any) { first(m)["path"] = "../elsewhere.json" })},
		{"an absolute path", "path must be relative", edit(func(m map[string]any) { first(m)["path"] = "/etc/elsewhere.json" })},
		{"a path twice", "path is listed twice", edit(func(m map[string]any) { files(m)[1].(map[string]any)["path"] = first(m)["path"] })},
		{"the manifest as data", "cannot be the manifest", edit(func(m map[string]any) { first(m)["path"] = "manifest.json" })},
		{"no licence", "licence is empty", edit(func(m map[string]any) { first(m)["licence"] = " " })},
		{"no origin", "origin is empty", edit(func(m map[string]any) { first(m)["origin"] = "" })},
		{"short checksum", "is not 64 hex digits", edit(func(m map[string]any) { first(m)["sha256"] = "abc" })},
		{"no size", "bytes 0", edit(func(m map[string]any) { first(m)["bytes"] = 0 })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseManifest(tt.b)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
	if _, err := ReadManifest(os.DirFS(t.TempDir())); !strings.Contains(err.Error(), "no manifest.json") {
		t.Errorf("a folder without a manifest: %v", err)
	}
	if _, err := ReadManifest(os.DirFS(filepath.Join(t.TempDir(), "absent"))); err == nil || !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("a folder that does not exist: %v", err)
	}
}

// TestManifestVersion: the version follows the files' paths and checksums
// only, whatever their order or the prose around them.
func TestManifestVersion(t *testing.T) {
	m, err := ReadManifest(os.DirFS(fixtureDir(t)))
	if err != nil {
		t.Fatal(err)
	}
	v := m.Version()
	other := *m
	other.Files = append([]ManifestFile(nil), m.Files...)
	other.Files[0], other.Files[1] = other.Files[1], other.Files[0]
	other.Files[2].Origin = "a different sentence"
	if got := other.Version(); got != v {
		t.Errorf("reordered and reworded: version %s, want %s", got, v)
	}
	other.Files[3].SHA256 = strings.Repeat("0", 64)
	if got := other.Version(); got == v {
		t.Error("a changed checksum kept the version")
	}
}

// TestManifestDigest: the digest is the SHA-256 of the sorted lines
// "<path> <sha256>\n" (docs/verification.md states it so an auditor can
// compute it by hand), and the version is its first 12 hex digits.
func TestManifestDigest(t *testing.T) {
	m := &Manifest{Files: []ManifestFile{
		{Path: "b/two.csv", SHA256: strings.Repeat("b", 64)},
		{Path: "a/one.csv", SHA256: strings.Repeat("a", 64)},
	}}
	lines := "a/one.csv " + strings.Repeat("a", 64) + "\nb/two.csv " + strings.Repeat("b", 64) + "\n"
	sum := sha256.Sum256([]byte(lines))
	want := hex.EncodeToString(sum[:])
	if got := m.Digest(); got != want {
		t.Errorf("digest %s, want %s", got, want)
	}
	if got := m.Version(); got != "data-"+want[:12] {
		t.Errorf("version %s, want data-%s", got, want[:12])
	}
}
