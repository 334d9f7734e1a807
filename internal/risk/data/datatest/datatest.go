// Package datatest holds helpers for the risk packages' tests: the real
// data (the embedded pack, checked once), the hand-written fixture world,
// loading a data set once per test binary, and reading the Census Gazetteer's
// county interior points as sites. It is for tests only; production code must
// not import it.
package datatest

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/locrisk/locrisk/datapack"
	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// Real returns the real data: the pack embedded in the binary (package
// datapack), or the pack folder named by LOCRISK_DATA_DIR when that is set
// (a relative path is taken from the repository root, where the README's
// test command runs, since `go test` runs each package in its own
// directory). The pack is checked against its manifest once per test
// binary (data.CheckPack), so neither a loader nor risk.Load reads it all
// again.
func Real(tb testing.TB) fs.FS {
	tb.Helper()
	fsys := datapack.FS()
	if dir := os.Getenv("LOCRISK_DATA_DIR"); dir != "" {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(ModuleRoot(tb), dir)
		}
		fsys = os.DirFS(dir)
	}
	pack, err := checkOnce(fsys)
	if err != nil {
		tb.Fatalf("real data: %v", err)
	}
	return pack
}

// checkOnce checks the real pack against its manifest the first time it
// is asked for.
var checkOnce = func() func(fs.FS) (*data.Checked, error) {
	var (
		once sync.Once
		pack *data.Checked
		err  error
	)
	return func(fsys fs.FS) (*data.Checked, error) {
		once.Do(func() { pack, err = data.CheckPack(fsys) })
		return pack, err
	}
}()

// Fixture returns the repository's hand-written fixture world as a pack.
func Fixture(tb testing.TB) fs.FS {
	tb.Helper()
	return os.DirFS(FixtureDir(tb))
}

// FixtureDir returns the repository's testdata/data, the hand-written fixture
// world.
func FixtureDir(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(ModuleRoot(tb), "testdata", "data")
}

// EditedFixture copies the fixture pack to a new folder, changes the file
// at path (a path of the pack's manifest) with edit, records the file's
// new size and SHA-256 in the copy's manifest (data.Rehash, what `locrisk
// data manifest` does), and returns the folder: a
// pack of another data version that verifies, as an operator's changed
// pack would (docs/data.md, "Replacing a data set").
func EditedFixture(tb testing.TB, path string, edit func([]byte) []byte) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "pack")
	if err := os.CopyFS(dir, Fixture(tb)); err != nil {
		tb.Fatal(err)
	}
	name := filepath.Join(dir, filepath.FromSlash(path))
	b, err := os.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	b = edit(b)
	if err := os.WriteFile(name, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	before, after, err := data.Rehash(dir)
	if err != nil {
		tb.Fatal(err)
	}
	if before.Version() == after.Version() {
		tb.Fatalf("edited fixture: %s unchanged", path)
	}
	return dir
}

// NPLFixture is the fixture pack's Superfund list (EPA NPL sites).
const NPLFixture = "environmental/epa_superfund_npl_sites_2022-09.csv"

// NewNPLSite is a CSV record of the fixture's Superfund list: a final NPL
// site about 200 m from the fixture world's San Francisco point (37.77,
// -122.42), for tests that need a pack whose data differ at one place.
const NewNPLSite = "Bay Shore Plating,50.0,CAD000000099,900099,9,California,San Francisco,San Francisco,NPL Site,37.7712,-122.4188,1/1/1990,6/1/1991,,,,,,,,,,,,No,,\r\n"

// ModuleRoot is the directory holding go.mod, found by walking up from the
// working directory (the package under test), so it does not depend on how
// deep the calling package sits.
func ModuleRoot(tb testing.TB) string {
	tb.Helper()
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatalf("module root: %v", err)
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatalf("module root: no go.mod above %s", wd)
		}
		dir = parent
	}
}

// Once returns a loader that calls load on the pack chosen by pack (Real or
// Fixture) the first time it is asked and hands every later caller the
// same value, so a test binary loads a large data set only once. A failed
// load fails every caller.
func Once[T any](pack func(testing.TB) fs.FS, load func(fs.FS) (T, error)) func(testing.TB) T {
	var (
		once sync.Once
		v    T
		err  error
	)
	return func(tb testing.TB) T {
		tb.Helper()
		fsys := pack(tb)
		once.Do(func() { v, err = load(fsys) })
		if err != nil {
			tb.Fatalf("load: %v", err)
		}
		return v
	}
}

// Site builds a Site for a county as the coverage layer would; fips must be
// five digits and usps the state's USPS code.
func Site(lat, lon float64, fips, usps string) hazard.Site {
	conus := true
	switch usps {
	case "AK", "HI", "PR", "VI", "GU", "MP", "AS":
		conus = false
	}
	return hazard.Site{Lat: lat, Lon: lon, CountyFIPS: fips, StateFIPS: fips[:2], StateCode: usps, Conus: conus}
}

// GazetteerSites returns the Census Gazetteer county interior points in
// fsys, the engine's national reference set, in file order.
func GazetteerSites(tb testing.TB, fsys fs.FS) []hazard.Site {
	tb.Helper()
	t, err := data.OpenTableSep(fsys, data.Path("census-gazetteer-2019"), '\t', "USPS", "GEOID", "INTPTLAT", "INTPTLONG")
	if err != nil {
		tb.Fatal(err)
	}
	defer t.Close()
	var out []hazard.Site
	for t.Scan() {
		lat, err := t.Float("INTPTLAT")
		if err != nil {
			tb.Fatal(err)
		}
		lon, err := t.Float("INTPTLONG")
		if err != nil {
			tb.Fatal(err)
		}
		fips := t.String("GEOID")
		if len(fips) != 5 {
			tb.Fatal(t.Errorf("GEOID %q is not a 5-digit county FIPS code", fips))
		}
		out = append(out, Site(lat, lon, fips, t.String("USPS")))
	}
	if err := t.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// BenchmarkReferenceMeasure runs m.Measure over the Gazetteer reference
// points in turn, the work the engine does at start-up, on the real data.
func BenchmarkReferenceMeasure(b *testing.B, m hazard.Module) {
	sites := GazetteerSites(b, Real(b))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.Measure(sites[i%len(sites)])
		i++
	}
}
