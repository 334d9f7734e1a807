package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
)

// copyPack copies the fixture pack to a new folder.
func copyPack(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pack")
	if err := os.CopyFS(dir, os.DirFS(fixtureData)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func packVersion(t *testing.T, dir string) string {
	t.Helper()
	m, err := data.ReadManifest(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	return m.Version()
}

// TestDataReplace replaces the Superfund list of a pack folder with a
// newer file: the pack verifies under a new version, its manifest states
// the new file, and the engine loads it. The command's mistakes are usage
// errors, and the folder is never taken from LOCRISK_DATA_DIR.
func TestDataReplace(t *testing.T) {
	dir := copyPack(t)
	oldVersion := packVersion(t, dir)
	b, err := os.ReadFile(filepath.Join(fixtureData, datatest.NPLFixture))
	if err != nil {
		t.Fatal(err)
	}
	newFile := filepath.Join(t.TempDir(), "superfund-2026-10.csv")
	if err := os.WriteFile(newFile, append(b, datatest.NewNPLSite...), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cmd(t, nil, "data", "replace", dir, "--file", "epa-superfund-npl", "--with", newFile,
		"--vintage", "2026-10", "--origin", "EPA export of 2026-10-01", "--rows", "19", "--as", "environmental/npl_2026-10.csv")
	if r.code != 0 || !strings.Contains(r.stdout, "replaced epa-superfund-npl ("+datatest.NPLFixture+"): environmental/npl_2026-10.csv") ||
		!strings.Contains(r.stdout, "data version "+oldVersion+" -> data-") || !strings.Contains(r.stdout, "ok: 34 files match") {
		t.Fatalf("data replace: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	newVersion := packVersion(t, dir)
	if newVersion == oldVersion {
		t.Error("the data version did not change")
	}
	r = cmd(t, nil, "data", "info", "--data-dir", dir)
	if !strings.Contains(r.stdout, "version: "+newVersion) || !strings.Contains(r.stdout, "2026-10") || !strings.Contains(r.stdout, "environmental/npl_2026-10.csv") {
		t.Errorf("data info after the replacement:\n%s", r.stdout)
	}
	if r := cmd(t, nil, "data", "check", "--data-dir", dir); r.code != 0 || !strings.Contains(r.stdout, "epa-superfund-npl") {
		t.Errorf("data check after the replacement: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	manifest, _ := os.ReadFile(filepath.Join(dir, data.ManifestName))
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"no folder", nil, []string{"--file", "epa-superfund-npl", "--with", newFile, "--vintage", "v", "--origin", "o", "--rows", "1"}, 2, "give the pack folder"},
		{"no folder, LOCRISK_DATA_DIR set", map[string]string{"LOCRISK_DATA_DIR": dir}, []string{"--file", "epa-superfund-npl", "--with", newFile, "--vintage", "v", "--origin", "o", "--rows", "1"}, 2, "give the pack folder"},
		{"no rows", nil, []string{dir, "--file", "epa-superfund-npl", "--with", newFile, "--vintage", "v", "--origin", "o"}, 2, "--rows are required"},
		{"no with", nil, []string{dir, "--file", "epa-superfund-npl", "--vintage", "v", "--origin", "o", "--rows", "1"}, 2, "--with are required"},
		{"unknown file", nil, []string{dir, "--file", "nope", "--with", newFile, "--vintage", "v", "--origin", "o", "--rows", "1"}, 1, `no file with the path or source id "nope"`},
		{"not a pack", nil, []string{t.TempDir(), "--file", "epa-superfund-npl", "--with", newFile, "--vintage", "v", "--origin", "o", "--rows", "1"}, 1, "no manifest.json"},
	}
	for _, tt := range tests {
		r := cmd(t, tt.env, append([]string{"data", "replace"}, tt.args...)...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", tt.name, r.code, r.stderr, tt.code, tt.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, data.ManifestName)); string(b) != string(manifest) {
		t.Error("a refused replacement changed the manifest")
	}
}

// TestDataManifest rewrites a pack's manifest after a hand edit, so the
// pack verifies again, and refuses a pack with a listed file missing.
func TestDataManifest(t *testing.T) {
	dir := copyPack(t)
	if r := cmd(t, nil, "data", "manifest", dir); r.code != 0 || !strings.Contains(r.stdout, "already matches its files") {
		t.Errorf("data manifest on a sound pack: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	oldVersion := packVersion(t, dir)
	f, err := os.OpenFile(filepath.Join(dir, datatest.NPLFixture), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(datatest.NewNPLSite)
	f.Close()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := cmd(t, nil, "data", "verify", "--data-dir", dir); r.code != 1 {
		t.Fatalf("data verify after a hand edit: exit %d", r.code)
	}
	r := cmd(t, nil, "data", "manifest", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "updated "+datatest.NPLFixture) || !strings.Contains(r.stdout, "1 entry, data version "+oldVersion+" -> data-") ||
		!strings.Contains(r.stdout, "NOT LISTED  notes.txt") || !strings.Contains(r.stdout, "ok: 34 files match") {
		t.Errorf("data manifest: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := cmd(t, nil, "data", "verify", "--data-dir", dir); r.code != 0 {
		t.Errorf("data verify after data manifest: exit %d\n%s", r.code, r.stdout)
	}
	if err := os.Remove(filepath.Join(dir, datatest.NPLFixture)); err != nil {
		t.Fatal(err)
	}
	if r := cmd(t, nil, "data", "manifest", dir); r.code != 1 || !strings.Contains(r.stderr, datatest.NPLFixture+": missing") {
		t.Errorf("data manifest with a file missing: exit %d\n%s", r.code, r.stderr)
	}
	if r := cmd(t, nil, "data", "manifest"); r.code != 2 {
		t.Errorf("data manifest without a folder: exit %d", r.code)
	}
}

// TestDataDiff compares the fixture pack with a copy that has a new
// Superfund site beside the San Francisco point: that row changes
// materially in environmental exposure and is written out; bad rows are
// counted, not compared; the same pack twice changes nothing.
func TestDataDiff(t *testing.T) {
	newPack := datatest.EditedFixture(t, datatest.NPLFixture, func(b []byte) []byte { return append(b, datatest.NewNPLSite...) })
	tmp := t.TempDir()
	in := filepath.Join(tmp, "portfolio.csv")
	if err := os.WriteFile(in, []byte("externalId,latitude,longitude\nSF,37.77,-122.42\nCHI,41.88,-87.63\nMIA,25.76,-80.19\nbad,x,1\nsea,0,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "changed.csv")
	r := cmd(t, nil, "data", "diff", "--from", fixtureData, "--data-dir", newPack, "--in", in, "--out", out, "--workers", "2")
	if r.code != 0 {
		t.Fatalf("data diff: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"from " + fixtureData + " (" + packVersion(t, fixtureData) + ") to " + newPack + " (" + packVersion(t, newPack) + ")",
		"rows: 5 read, 3 compared, 2 rejected, 0 failed, 0 covered by one pack only",
		"a risk level changes, or a score moves by 5 or more", "environmentalExposure", "written to " + out} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var sf map[string]string
	for _, rec := range recs[1:] {
		c := map[string]string{}
		for i, h := range recs[0] {
			c[h] = rec[i]
		}
		if c["externalId"] == "SF" {
			sf = c
		}
	}
	if sf == nil || sf["change"] != "material" || !strings.Contains(sf["materialModules"], "environmentalExposure") ||
		sf["rowNumber"] != "1" || sf["environmentalExposureBefore"] == sf["environmentalExposureAfter"] {
		t.Errorf("the San Francisco row: %v\n%v", sf, recs)
	}
	// The table's environmentalExposure line counts that row.
	for l := range strings.Lines(r.stdout) {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "environmentalExposure" && (f[1] == "0" || f[2] == "0") {
			t.Errorf("environmentalExposure line %q counts no material change", l)
		}
	}

	// --out -: the CSV on standard output, the counts on standard error.
	r = cmd(t, nil, "data", "diff", "--from", fixtureData, "--data-dir", newPack, "--in", in, "--out", "-", "--min-score-change", "100")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "rowNumber,externalId,") || !strings.Contains(r.stdout, "\r\n1,SF,") || !strings.Contains(r.stderr, "moves by 100 or more") {
		t.Errorf("data diff --out -: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	r = cmd(t, map[string]string{"LOCRISK_FROM": fixtureData, "LOCRISK_DATA_DIR": fixtureData}, "data", "diff", "--in", in)
	if r.code != 0 || !strings.Contains(r.stdout, "the two packs hold the same data: no report would change") {
		t.Errorf("the same pack twice: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"--from", fixtureData, "--data-dir", newPack},
		{"--from", fixtureData, "--data-dir", newPack, "--in", in, "--min-score-change", "0"},
		{"--from", fixtureData, "--data-dir", newPack, "--in", in, "--min-score-change", "101"},
	} {
		if r := cmd(t, nil, append([]string{"data", "diff"}, args...)...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
}
