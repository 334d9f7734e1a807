package data

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyFixture copies the fixture pack to a new folder.
func copyFixture(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pack")
	if err := os.CopyFS(dir, os.DirFS(fixtureDir(t))); err != nil {
		t.Fatal(err)
	}
	return dir
}

const nplPath = "environmental/epa_superfund_npl_sites_2022-09.csv"

// The manifest's own form survives a decode and Encode byte for byte, for
// the built-in pack and the fixture pack.
func TestManifestEncode(t *testing.T) {
	for _, path := range []string{"../../../datapack/manifest.json", filepath.Join(fixtureDir(t), ManifestName)} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseManifest(b)
		if err != nil {
			t.Fatal(err)
		}
		out, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, b) {
			t.Errorf("%s: Encode does not give the file back", path)
		}
	}
}

// Replace puts a new file in a pack and states it in the manifest: the
// pack verifies, under a new data version; the entry says what was
// given, keeps what was not, and no other entry changes.
func TestReplace(t *testing.T) {
	note := "records after the header line"
	tests := []struct {
		name  string
		r     Replacement
		path  string // where the new file must be
		gone  string // a file that must be gone
		notes string // the rows note expected
	}{
		{"by path", Replacement{Entry: nplPath, Vintage: "2026-10", Origin: "EPA, October 2026", Rows: 18}, nplPath, "", ""},
		{"by source id", Replacement{Entry: "epa-superfund-npl", Vintage: "2026-10", Origin: "EPA", Rows: 18, RowsNote: &note}, nplPath, "", note},
		{"under a new name", Replacement{Entry: "epa-superfund-npl", As: "environmental/npl_2026-10.csv", Vintage: "2026-10", Origin: "EPA", Rows: 18},
			"environmental/npl_2026-10.csv", nplPath, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyFixture(t)
			before, err := ReadManifest(os.DirFS(dir))
			if err != nil {
				t.Fatal(err)
			}
			oldEntry, _ := before.Entry("epa-superfund-npl")
			b, err := os.ReadFile(filepath.Join(dir, nplPath))
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, "Added Site,50,CAD0,9,9,California,X,Y,NPL Site,37.7,-122.4,,,,,,,,,,,,,,No,,\r\n"...)
			from := filepath.Join(t.TempDir(), "new.csv")
			writeFile(t, from, b)
			tt.r.From = from

			old, m, err := Replace(dir, tt.r)
			if err != nil {
				t.Fatal(err)
			}
			if old != oldEntry {
				t.Errorf("old entry %+v, want %+v", old, oldEntry)
			}
			checked, err := CheckPack(os.DirFS(dir))
			if err != nil {
				t.Fatalf("the pack does not verify: %v", err)
			}
			if checked.Manifest.Version() == before.Version() || checked.Manifest.Version() != m.Version() {
				t.Errorf("version %s, before %s, returned %s", checked.Manifest.Version(), before.Version(), m.Version())
			}
			got, _ := checked.Manifest.Entry("epa-superfund-npl")
			want := oldEntry
			want.Path, want.Vintage, want.Origin, want.Rows = tt.path, tt.r.Vintage, tt.r.Origin, tt.r.Rows
			want.Bytes, want.SHA256 = int64(len(b)), sum(b)
			if tt.notes != "" {
				want.RowsNote = tt.notes
			}
			if got != want {
				t.Errorf("entry\n%+v\nwant\n%+v", got, want)
			}
			for i, f := range checked.Manifest.Files {
				if f.SourceID != "epa-superfund-npl" && f != before.Files[i] {
					t.Errorf("entry %s changed", f.SourceID)
				}
			}
			if tt.gone != "" {
				if _, err := os.Stat(filepath.Join(dir, tt.gone)); !os.IsNotExist(err) {
					t.Errorf("the old file %s is still there: %v", tt.gone, err)
				}
			}
			if unlisted, _ := checked.Manifest.Unlisted(os.DirFS(dir)); len(unlisted) > 0 {
				t.Errorf("files left over: %v", unlisted)
			}
		})
	}
}

// A replacement that cannot be made changes nothing: not the file, not
// the manifest.
func TestReplaceRefuses(t *testing.T) {
	tmp := t.TempDir()
	good := filepath.Join(tmp, "good.csv")
	writeFile(t, good, []byte("Site Name\r\nx\r\n"))
	empty := filepath.Join(tmp, "empty.csv")
	writeFile(t, empty, nil)
	ok := Replacement{Entry: nplPath, From: good, Vintage: "v", Origin: "o", Rows: 1}
	with := func(f func(*Replacement)) Replacement { r := ok; f(&r); return r }
	tests := []struct {
		name string
		r    Replacement
		want string
	}{
		{"unknown entry", with(func(r *Replacement) { r.Entry = "nope" }), `no file with the path or source id "nope"`},
		{"no vintage", with(func(r *Replacement) { r.Vintage = " " }), "vintage of the new file is required"},
		{"no origin", with(func(r *Replacement) { r.Origin = "" }), "origin of the new file is required"},
		{"negative rows", with(func(r *Replacement) { r.Rows = -1 }), "cannot be negative"},
		{"another entry's path", with(func(r *Replacement) { r.As = "flood/openfema_nfip_residential_penetration_rates_2025-05-15.csv" }), "already the file of fema-nfip-penetration"},
		{"a path outside the pack", with(func(r *Replacement) { r.As = "../x.csv" }), "path must be relative"},
		{"the manifest", with(func(r *Replacement) { r.As = ManifestName }), "cannot be the manifest"},
		{"no such file", with(func(r *Replacement) { r.From = filepath.Join(tmp, "missing.csv") }), "no such file"},
		{"an empty file", with(func(r *Replacement) { r.From = empty }), "not a file with data"},
		{"a folder", with(func(r *Replacement) { r.From = tmp }), "not a file with data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyFixture(t)
			manifest, _ := os.ReadFile(filepath.Join(dir, ManifestName))
			file, _ := os.ReadFile(filepath.Join(dir, nplPath))
			_, _, err := Replace(dir, tt.r)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, ManifestName)); !bytes.Equal(b, manifest) {
				t.Error("the manifest changed")
			}
			if b, _ := os.ReadFile(filepath.Join(dir, nplPath)); !bytes.Equal(b, file) {
				t.Error("the file changed")
			}
			// No temporary file is left beside the others. (Hidden
			// files are not listed by Unlisted, so look for them too.)
			if extra, _ := mustManifest(t, dir).Unlisted(os.DirFS(dir)); len(extra) > 0 {
				t.Errorf("left over: %v", extra)
			}
			if hidden, _ := filepath.Glob(filepath.Join(dir, "*", ".*.tmp")); len(hidden) > 0 {
				t.Errorf("left over: %v", hidden)
			}
		})
	}
}

func mustManifest(t *testing.T, dir string) *Manifest {
	t.Helper()
	m, err := ReadManifest(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Rehash records the files as they are after hand edits: the edited
// entries get their new sizes and checksums, the others stay, and the
// pack verifies; a missing file is refused and nothing is written.
func TestRehash(t *testing.T) {
	dir := copyFixture(t)
	edited := []string{nplPath, "flood/openfema_nfip_residential_penetration_rates_2025-05-15.csv"}
	for _, p := range edited {
		f, err := os.OpenFile(filepath.Join(dir, p), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("\r\n")
		f.Close()
	}
	if _, err := CheckPack(os.DirFS(dir)); err == nil {
		t.Fatal("the edited pack verifies before Rehash")
	}
	before, after, err := Rehash(dir)
	if err != nil {
		t.Fatal(err)
	}
	var changed []string
	for i := range before.Files {
		if before.Files[i] != after.Files[i] {
			changed = append(changed, after.Files[i].Path)
		}
	}
	if strings.Join(changed, " ") != strings.Join(edited, " ") && strings.Join(changed, " ") != edited[1]+" "+edited[0] {
		t.Errorf("changed entries %v, want %v", changed, edited)
	}
	checked, err := CheckPack(os.DirFS(dir))
	if err != nil {
		t.Fatalf("after Rehash: %v", err)
	}
	if checked.Manifest.Version() != after.Version() || after.Version() == before.Version() {
		t.Errorf("versions %s -> %s, pack %s", before.Version(), after.Version(), checked.Manifest.Version())
	}
	// Nothing to do the second time.
	if b2, a2, err := Rehash(dir); err != nil || b2.Version() != a2.Version() {
		t.Errorf("a second Rehash: %v, %s -> %s", err, b2.Version(), a2.Version())
	}

	if err := os.Remove(filepath.Join(dir, nplPath)); err != nil {
		t.Fatal(err)
	}
	manifest, _ := os.ReadFile(filepath.Join(dir, ManifestName))
	if _, _, err := Rehash(dir); err == nil || !strings.Contains(err.Error(), nplPath+": missing") {
		t.Errorf("a missing file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ManifestName)); !bytes.Equal(b, manifest) {
		t.Error("the manifest changed")
	}
}
