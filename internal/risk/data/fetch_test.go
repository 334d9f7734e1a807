package data

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// packArchive makes a .tar.gz of the fixture pack, every name prefixed by
// prefix, with change applied to each file's bytes first (nil: none), and
// extra entries appended.
func packArchive(t *testing.T, prefix string, change func(rel string, b []byte) []byte, extra ...string) []byte {
	t.Helper()
	src := fixtureDir(t)
	m, err := ReadManifest(os.DirFS(src))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	add := func(name string, b []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: prefix + name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{ManifestName}
	for _, f := range m.Files {
		names = append(names, f.Path)
	}
	for _, rel := range names {
		b, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if change != nil {
			b = change(rel, b)
		}
		add(rel, b)
	}
	for _, name := range extra {
		add(name, []byte("x"))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// serve answers every request with body, or with the first half of it
// under the whole length when partial is set, then drops the connection.
func serve(t *testing.T, body []byte, partial bool, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		if partial {
			w.Write(body[:len(body)/2])
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
				}
			}
			return
		}
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/pack.tar.gz"
}

func TestFetch(t *testing.T) {
	ctx := context.Background()
	good := packArchive(t, "", nil)
	want, err := ReadManifest(os.DirFS(fixtureDir(t)))
	if err != nil {
		t.Fatal(err)
	}
	// existing is a pack already in place (its manifest, and a file),
	// which a failed fetch must leave as it was.
	existing := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "pack")
		writeFile(t, filepath.Join(dir, ManifestName), []byte(`{"files": []}`))
		writeFile(t, filepath.Join(dir, "keep.txt"), []byte("old"))
		return dir
	}
	untouched := func(t *testing.T, dir string) {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) != 2 || entries[0].Name() != "keep.txt" || entries[1].Name() != ManifestName {
			t.Errorf("the folder changed: %v %v", entries, err)
		}
		siblings, _ := os.ReadDir(filepath.Dir(dir))
		if len(siblings) != 1 {
			t.Errorf("left behind beside it: %v", siblings)
		}
	}

	t.Run("installs and replaces", func(t *testing.T) {
		dir := existing(t)
		before, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		m, leftover, err := Fetch(ctx, nil, serve(t, good, false, 200), strings.ToUpper(sum(good)), dir)
		if err != nil || leftover != "" {
			t.Fatal(err, leftover)
		}
		if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o755 {
			t.Errorf("installed folder mode %v, %v; want 0755 for whoever runs the server", st.Mode().Perm(), err)
		}
		if m.Version() != want.Version() {
			t.Errorf("version %s, want %s", m.Version(), want.Version())
		}
		if _, err := os.Stat(filepath.Join(dir, "keep.txt")); err == nil {
			t.Error("the old folder's file is still there")
		}
		if bad, err := m.Verify(os.DirFS(dir)); err != nil || len(bad) != 0 {
			t.Errorf("installed pack: %v %v", bad, err)
		}
		siblings, _ := os.ReadDir(filepath.Dir(dir))
		if len(siblings) != 1 {
			t.Errorf("left behind beside the pack: %v", siblings)
		}
		// The folder itself stays (a mount point, a shell inside it), and
		// nothing hidden is left in it.
		if after, err := os.Stat(dir); err != nil || !os.SameFile(before, after) {
			t.Errorf("the folder was replaced, not filled: %v", err)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("left inside the pack: %s", e.Name())
			}
		}
	})
	t.Run("a failure in a new folder removes it", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "new")
		if _, _, err := Fetch(ctx, nil, serve(t, good, false, 200), strings.Repeat("ab", 32), dir); err == nil {
			t.Fatal("a wrong checksum was accepted")
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the new folder is left: %v", err)
		}
	})
	t.Run("one top folder", func(t *testing.T) {
		b := packArchive(t, "locrisk-data-2026/", nil)
		dir := filepath.Join(t.TempDir(), "new", "pack")
		if _, _, err := Fetch(ctx, nil, serve(t, b, false, 200), sum(b), dir); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, ManifestName)); err != nil {
			t.Error(err)
		}
	})

	withManifestOff := packArchive(t, "", func(rel string, b []byte) []byte {
		if strings.HasSuffix(rel, "epa_superfund_npl_sites_2022-09.csv") {
			return append(b, '\n')
		}
		return b
	})
	escaping := packArchive(t, "", nil, "../escape.txt")
	twice := packArchive(t, "", nil, ManifestName)
	failures := []struct {
		name, sha, want string
		body            []byte
		partial         bool
		status          int
	}{
		{"wrong checksum", strings.Repeat("ab", 32), "not the abab", good, false, 200},
		{"partial download", sum(good), "download stopped", good, true, 200},
		{"not found", sum(good), "404", good, false, 404},
		{"file unlike its manifest", sum(withManifestOff), "do not match the pack's manifest, the first environmental/epa_superfund_npl_sites_2022-09.csv: size", withManifestOff, false, 200},
		{"entry outside the pack", sum(escaping), "outside the pack", escaping, false, 200},
		{"not an archive", sum([]byte("hello")), "not a .tar.gz", []byte("hello"), false, 200},
		{"malformed checksum", "12", "not 64 hex digits", good, false, 200},
		{"an entry twice", sum(twice), "archive lists \"manifest.json\" twice", twice, false, 200},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			dir := existing(t)
			_, _, err := Fetch(ctx, nil, serve(t, tt.body, tt.partial, tt.status), tt.sha, dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
			untouched(t, dir)
		})
	}
}

// TestFetchRefusesTargets: a file, a symbolic link or a folder that is not
// a data pack is never replaced, and nothing is downloaded for it.
func TestFetchRefusesTargets(t *testing.T) {
	ctx := context.Background()
	good := packArchive(t, "", nil)
	url := serve(t, good, false, 200)
	base := t.TempDir()
	file := filepath.Join(base, "locrisk.db")
	writeFile(t, file, []byte("a database"))
	other := filepath.Join(base, "home")
	writeFile(t, filepath.Join(other, "docs", "thesis.txt"), []byte("years of work"))
	link := filepath.Join(base, "link")
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ dir, want string }{
		{file, "is a file"},
		{other, "not a data pack"},
		{link, "symbolic link"},
	} {
		if _, _, err := Fetch(ctx, nil, url, sum(good), tt.dir); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one saying %q", tt.dir, err, tt.want)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "a database" {
		t.Errorf("the file: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(other, "docs", "thesis.txt")); err != nil || string(b) != "years of work" {
		t.Errorf("the folder: %q %v", b, err)
	}
	entries, _ := os.ReadDir(base)
	if len(entries) != 3 {
		t.Errorf("left beside them: %v", entries)
	}
	// An empty folder, and the current folder given as ".", are fine.
	empty := filepath.Join(base, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Fetch(ctx, nil, url, sum(good), empty); err != nil {
		t.Errorf("an empty folder: %v", err)
	}
	t.Chdir(empty)
	if _, _, err := Fetch(ctx, nil, url, sum(good), "."); err != nil {
		t.Errorf("the current folder, a pack: %v", err)
	}
}
