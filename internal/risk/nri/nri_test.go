package nri

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
)

func loadFixture(t testing.TB) *Table {
	t.Helper()
	tab, err := Load(datatest.Fixture(t))
	if err != nil {
		t.Fatalf("Load(fixture): %v", err)
	}
	return tab
}

func TestFixtureLookups(t *testing.T) {
	tab := loadFixture(t)
	if got := tab.Rows(); got != 8 {
		t.Errorf("Rows() = %d, want 8", got)
	}
	tests := []struct {
		name, fips, code string
		want             Score
	}{
		{"scored hazard", "06037", "ERQK", Score{99.8, "Very High", true}},
		{"tornado", "17031", "TRND", Score{99.9, "Very High", true}},
		{"No Rating keeps its 0.0 score", "06037", "HRCN", Score{0, "No Rating", true}},
		{"Not Applicable", "40109", "CFLD", Score{0, "Not Applicable", false}},
		{"Insufficient Data", "17031", "TSUN", Score{0, "Insufficient Data", false}},
		{"territory hazard", "72127", "WFIR", Score{0, "Insufficient Data", false}},
		{"first column", "02016", "AVLN", Score{79.9, "Relatively High", true}},
		{"last column", "17031", "WNTW", Score{99.7, "Very High", true}},
		{"county not in table", "53033", "ERQK", Score{}},
		{"unknown hazard code", "06037", "RFLD", Score{}},
		{"lower-case code is not a code", "06037", "erqk", Score{}},
		{"short FIPS", "6037", "ERQK", Score{}},
		{"non-digit FIPS", "06o37", "ERQK", Score{}},
		{"empty FIPS", "", "ERQK", Score{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tab.Hazard(tc.fips, tc.code); got != tc.want {
				t.Errorf("Hazard(%q, %q) = %+v, want %+v", tc.fips, tc.code, got, tc.want)
			}
		})
	}
}

func TestFixtureComposite(t *testing.T) {
	tab := loadFixture(t)
	tests := []struct {
		fips string
		want Score
	}{
		{"06037", Score{99.9, "Very High", true}},
		{"02016", Score{66.0, "Relatively High", true}},
		{"72127", Score{0, "Insufficient Data", false}},
		{"66010", Score{}},
	}
	for _, tc := range tests {
		if got := tab.Composite(tc.fips); got != tc.want {
			t.Errorf("Composite(%q) = %+v, want %+v", tc.fips, got, tc.want)
		}
	}
	if !tab.Has("72127") || tab.Has("66010") {
		t.Errorf("Has: 72127 -> %v (want true), 66010 -> %v (want false)", tab.Has("72127"), tab.Has("66010"))
	}
}

func TestHazardNames(t *testing.T) {
	var tab *Table // HazardName needs no data
	codes := Codes()
	if len(codes) != 18 {
		t.Fatalf("Codes() has %d codes, want 18", len(codes))
	}
	seen := map[string]bool{}
	for _, c := range codes {
		n := tab.HazardName(c)
		if n == "" || seen[n] {
			t.Errorf("HazardName(%q) = %q: empty or duplicate", c, n)
		}
		seen[n] = true
	}
	for code, want := range map[string]string{"ERQK": "earthquake", "IFLD": "inland flooding", "VLCN": "volcanic activity", "WFIR": "wildfire", "RFLD": "", "": ""} {
		if got := HazardName(code); got != want {
			t.Errorf("HazardName(%q) = %q, want %q", code, got, want)
		}
	}
}

func TestLookupsDoNotAllocate(t *testing.T) {
	tab := loadFixture(t)
	allocs := testing.AllocsPerRun(200, func() {
		_ = tab.Hazard("17031", "TRND")
		_ = tab.Hazard("72127", "WFIR")
		_ = tab.Composite("06037")
	})
	if allocs != 0 {
		t.Errorf("lookups allocate %.1f times per run, want 0", allocs)
	}
}

// writeVariant copies the fixture into a temporary data directory after
// applying edit to its lines (line 0 is the header).
func writeVariant(t *testing.T, edit func(lines []string) []string) string {
	t.Helper()
	rel := data.Path(SourceID)
	b, err := os.ReadFile(filepath.Join(datatest.FixtureDir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	lines = edit(lines)
	dir := t.TempDir()
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// setField replaces field col (0-based) of line i.
func setField(lines []string, i, col int, v string) []string {
	f := strings.Split(lines[i], ",")
	f[col] = v
	lines[i] = strings.Join(f, ",")
	return lines
}

func TestMalformedFiles(t *testing.T) {
	file := data.Path(SourceID)
	// Columns: 5 RISK_SCORE, 6 RISK_RATNG, 7 AVLN_RISKS, 15 ERQK_RISKS.
	tests := []struct {
		name  string
		edit  func([]string) []string
		wants []string
	}{
		{"non-numeric score", func(l []string) []string { return setField(l, 2, 15, "high") }, []string{file, "line 3", "ERQK_RISKS", `"high"`}},
		{"score above 100", func(l []string) []string { return setField(l, 4, 5, "100.5") }, []string{file, "line 5", "RISK_SCORE", "outside 0-100"}},
		{"unknown rating", func(l []string) []string { return setField(l, 1, 6, "Extreme") }, []string{file, "line 2", "RISK_RATNG", `"Extreme"`}},
		{"bad FIPS", func(l []string) []string { return setField(l, 3, 0, "IL031") }, []string{file, "line 4", "STCOFIPS"}},
		{"duplicate county", func(l []string) []string { return append(l, l[1]) }, []string{file, "line 10", "06037", "twice"}},
		{"missing column", func(l []string) []string { return setField(l, 0, 15, "ERQK_SCORE") }, []string{file, "line 1", "ERQK_RISKS"}},
		{"header only", func(l []string) []string { return l[:1] }, []string{file, "no county rows"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(os.DirFS(writeVariant(t, tc.edit)))
			if err == nil {
				t.Fatal("Load succeeded on a malformed file")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Load(os.DirFS(t.TempDir()))
	if !errors.Is(err, data.ErrMissing) {
		t.Fatalf("Load(empty dir) error = %v, want data.ErrMissing", err)
	}
}

func TestRealData(t *testing.T) {
	tab, err := Load(datatest.Real(t))
	if err != nil {
		t.Fatal(err)
	}
	if n := tab.Rows(); n != 3232 {
		t.Errorf("Rows() = %d, want 3232 (PROVENANCE)", n)
	}
	tests := []struct {
		name, fips, code string
		want             Score
	}{
		{"Los Angeles earthquake", "06037", "ERQK", Score{100.0, "Very High", true}},
		{"Cook County tornado", "17031", "TRND", Score{100.0, "Very High", true}},
		{"Cook County earthquake", "17031", "ERQK", Score{98.4, "Relatively High", true}},
		{"Miami-Dade hurricane", "12086", "HRCN", Score{100.0, "Very High", true}},
		{"Oklahoma County tornado", "40109", "TRND", Score{99.5, "Very High", true}},
		{"Hawaii County volcano", "15001", "VLCN", Score{100.0, "Very High", true}},
		{"Cook County volcano", "17031", "VLCN", Score{0, "Not Applicable", false}},
	}
	for _, tc := range tests {
		if got := tab.Hazard(tc.fips, tc.code); got != tc.want {
			t.Errorf("%s: Hazard(%q, %q) = %+v, want %+v", tc.name, tc.fips, tc.code, got, tc.want)
		}
	}
	if !tab.Hazard("09110", "IFLD").OK || tab.Has("09001") {
		t.Error("v1.20 should be keyed by the Connecticut planning regions (09110 scored, legacy 09001 absent)")
	}
	for _, fips := range []string{"72127", "78010", "66010", "69110", "60010"} {
		c := tab.Composite(fips)
		if c.OK || c.Rating != "Insufficient Data" {
			t.Errorf("Composite(%s) = %+v, want not OK with Insufficient Data", fips, c)
		}
	}
	if c := tab.Composite("17031"); !c.OK || c.Score < 99 {
		t.Errorf("Composite(17031) = %+v, want a score of at least 99", c)
	}
}

func BenchmarkLoad(b *testing.B) {
	dir := datatest.Real(b)
	for b.Loop() {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHazard(b *testing.B) {
	tab, err := Load(datatest.Real(b))
	if err != nil {
		b.Fatal(err)
	}
	codes := Codes()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = tab.Hazard("17031", codes[i%len(codes)])
		i++
	}
}
