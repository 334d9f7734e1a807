package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/datapack"
	"github.com/locrisk/locrisk/internal/risk/data"
)

// TestDataInfoAndVerify runs `data info` and `data verify` on the fixture
// pack, on a copy with one file changed, and on a folder without a
// manifest.
func TestDataInfoAndVerify(t *testing.T) {
	r := cmd(t, nil, "data", "info", "--data-dir", fixtureData)
	for _, want := range []string{"version: data-", "files: 34", "SOURCE", "LICENCE", "census-cenpop-2020-blockgroups", "usfs-wrc-v1"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("data info: exit %d, output lacks %q:\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	r = cmd(t, map[string]string{"LOCRISK_DATA_DIR": fixtureData}, "data", "verify")
	if r.code != 0 || !strings.Contains(r.stdout, "ok: 34 files match") {
		t.Errorf("data verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A copy with the Superfund file changed by one byte at the end.
	dir := t.TempDir()
	eachFixtureFile(t, func(rel string, b []byte) {
		if strings.HasSuffix(rel, "epa_superfund_npl_sites_2022-09.csv") {
			b = append(b, '\n')
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if err := os.WriteFile(filepath.Join(dir, "old.csv"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = cmd(t, nil, "data", "verify", "--data-dir", dir)
	if r.code != 1 || !strings.Contains(r.stdout, "MISMATCH  environmental/epa_superfund_npl_sites_2022-09.csv: size") ||
		!strings.Contains(r.stdout, "NOT LISTED  old.csv: not in the manifest, so never read") ||
		!strings.Contains(r.stderr, "1 of 34 files do not match") {
		t.Errorf("data verify on a changed copy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	for _, args := range [][]string{{"data", "verify", "--data-dir", t.TempDir()}, {"data", "info", "--data-dir", t.TempDir()}} {
		r = cmd(t, nil, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "no manifest.json") {
			t.Errorf("%v without a manifest: exit %d, stderr %q", args[:2], r.code, r.stderr)
		}
	}
	// Without --data-dir, the built-in pack.
	builtIn, err := data.ReadManifest(datapack.FS())
	if err != nil {
		t.Fatal(err)
	}
	r = cmd(t, nil, "data", "info")
	if r.code != 0 || !strings.Contains(r.stdout, "data pack: the built-in data\nversion: "+builtIn.Version()+"\nfiles: 34") ||
		!strings.Contains(r.stdout, "LGPL-3.0-or-later") || !strings.Contains(r.stdout, "not endorsed by FEMA") {
		t.Errorf("data info on the built-in data: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cmd(t, nil, "data", "verify")
	if r.code != 0 || !strings.Contains(r.stdout, "ok: 34 files match the manifest of the built-in data (version "+builtIn.Version()+")") {
		t.Errorf("data verify on the built-in data: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestDataExport writes the built-in pack to a folder, which then verifies
// as the same version, and refuses a folder that is not empty, leaving it
// as it was.
func TestDataExport(t *testing.T) {
	builtIn, err := data.ReadManifest(datapack.FS())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "pack")
	r := cmd(t, nil, "data", "export", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "exported data pack "+builtIn.Version()+" (34 files and manifest.json) to "+dir) {
		t.Fatalf("data export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cmd(t, nil, "data", "verify", "--data-dir", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "(version "+builtIn.Version()+")") {
		t.Errorf("data verify of the export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("exported folder: %v, mode %v; want 0755", err, st.Mode().Perm())
	}
	// Not empty: refused, nothing written, nothing left beside it.
	r = cmd(t, nil, "data", "export", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "is not empty") {
		t.Errorf("data export into a full folder: exit %d\n%s", r.code, r.stderr)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("beside the pack: %v, want only the pack", entries)
	}
	// An empty folder is filled.
	empty := t.TempDir()
	if r := cmd(t, nil, "data", "export", empty); r.code != 0 {
		t.Errorf("data export into an empty folder: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(empty, data.ManifestName)); err != nil {
		t.Error(err)
	}
}

// TestDataFetch installs the fixture pack from a loopback server, then
// refuses a wrong checksum and leaves the installed pack in place.
func TestDataFetch(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	eachFixtureFile(t, func(rel string, b []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: "pack/" + filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	})
	tw.Close()
	zw.Close()
	archive := buf.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(archive) }))
	defer srv.Close()
	h := sha256.Sum256(archive)
	sum := hex.EncodeToString(h[:])
	dir := filepath.Join(t.TempDir(), "pack")

	r := cmd(t, nil, "data", "fetch", srv.URL+"/pack.tar.gz", "--sha256", sum, "--data-dir", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "installed data pack data-") || !strings.Contains(r.stdout, "(34 files)") {
		t.Fatalf("data fetch: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := cmd(t, nil, "data", "verify", "--data-dir", dir); r.code != 0 {
		t.Errorf("data verify on the fetched pack: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cmd(t, nil, "data", "fetch", srv.URL+"/pack.tar.gz", "--sha256", strings.Repeat("0", 64), "--data-dir", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "nothing was replaced") {
		t.Errorf("data fetch with a wrong checksum: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := cmd(t, nil, "data", "verify", "--data-dir", dir); r.code != 0 {
		t.Errorf("the installed pack after a refused fetch: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"data", "fetch", "--sha256", sum, "--data-dir", dir},
		{"data", "fetch", srv.URL, "--data-dir", dir},
		{"data", "fetch", srv.URL, "--sha256", sum},
	} {
		if r := cmd(t, nil, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", args, r.code)
		}
	}
}

// eachFixtureFile calls fn with every file of the fixture pack, its path
// relative to the pack and its bytes.
func eachFixtureFile(t *testing.T, fn func(rel string, b []byte)) {
	t.Helper()
	err := filepath.WalkDir(fixtureData, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(fixtureData, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fn(rel, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
