package futurerisk

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
)

// fixtureFile is the hand-written six-county table in testdata, stored
// uncompressed.
var fixtureFile = strings.TrimSuffix(data.Path(SourceID), ".gz")

func loadFixture(t *testing.T) *Table {
	t.Helper()
	tab, err := Load(os.DirFS("testdata"))
	if err != nil {
		t.Fatalf("Load(testdata): %v", err)
	}
	return tab
}

func county(t *testing.T, tab *Table, fips string) *County {
	t.Helper()
	c, ok := tab.Lookup(fips)
	if !ok {
		t.Fatalf("no row for %s", fips)
	}
	return c
}

func TestFixtureValues(t *testing.T) {
	tab := loadFixture(t)
	if tab.Rows() != 6 || len(tab.Counties()) != 6 {
		t.Fatalf("Rows() = %d, want 6", tab.Rows())
	}
	la := county(t, tab, "06037")
	if la.Name != "Los Angeles" || la.State != "CA" || la.FIPS != "06037" {
		t.Errorf("row %+v", la)
	}
	cf := la.Hazards[CoastalFlooding]
	if !cf.Current.HasScore || cf.Current.Score != 61.25 || cf.Current.Rating != "Relatively Moderate" || cf.Current.LossRating != "Relatively Moderate (932K - 5.96M)" {
		t.Errorf("coastal flooding now %+v", cf.Current)
	}
	// Every scenario reads its own columns.
	wantHM := [NumScenarios]float64{2.5, 4.25, 9, 12.125}
	wantScore := [NumScenarios]float64{62.1, 63.4, 70.2, 75.5}
	for s := range NumScenarios {
		p := cf.Scenarios[s]
		if !p.HasMultiplier || p.Multiplier != wantHM[s] || !p.HasScore || p.Score != wantScore[s] {
			t.Errorf("coastal flooding %s: %+v", scenarios[s].Key, p)
		}
	}
	if p := cf.Scenarios[LateHigher]; p.Rating != "Relatively High" || p.LossRating != "Relatively High (5.96M - 29.4M)" || p.MultiplierRating != "Relatively Moderate (8.21x - 17.2x)" {
		t.Errorf("coastal flooding late, higher ratings %+v", p)
	}
	// A multiplier of 1 is no change, a real value.
	if p := la.Hazards[Drought].Scenarios[MidLower]; !p.HasMultiplier || p.Multiplier != 1 {
		t.Errorf("drought mid, lower %+v: a multiplier of 1 is kept", p)
	}
	// Extreme heat is the LOCA 95th projection; the other three (9.5 in
	// the fixture) are not read.
	for s, want := range [NumScenarios]float64{1.25, 1.75, 1.5, 3.5} {
		if p := la.Hazards[ExtremeHeat].Scenarios[s]; p.Multiplier != want || p.Score == 99.1 {
			t.Errorf("extreme heat %s: %+v, want the LOCA 95th multiplier %v", scenarios[s].Key, p, want)
		}
	}
	// Hurricane is not applicable: no numbers, FEMA's words kept. Its
	// multipliers are 0 rated "No Rating", which is no multiplier.
	for s, p := range la.Hazards[Hurricane].Scenarios {
		if p.HasMultiplier || p.HasScore || p.Rating != "Not Applicable" || p.MultiplierRating != "No Rating" {
			t.Errorf("hurricane %s: %+v", scenarios[s].Key, p)
		}
	}
	if h := la.Hazards[Hurricane].Current; h.HasScore || h.Rating != "Not Applicable" {
		t.Errorf("hurricane now %+v", h)
	}
}

func TestFixtureMissingValues(t *testing.T) {
	tab := loadFixture(t)
	// Cook: coastal flooding has scores but no multiplier (0, "No Rating").
	cook := county(t, tab, "17031")
	for s, p := range cook.Hazards[CoastalFlooding].Scenarios {
		if p.HasMultiplier || p.Multiplier != 0 || !p.HasScore {
			t.Errorf("Cook coastal flooding %s: %+v, want a score and no multiplier", scenarios[s].Key, p)
		}
	}
	// A current score of 0 ("No Rating") is a value, not a gap.
	if d := cook.Hazards[Drought].Current; !d.HasScore || d.Score != 0 || d.Rating != "No Rating" {
		t.Errorf("Cook drought now %+v", d)
	}
	// A multiplier of 0 that FEMA rates is kept as it is: only FEMA's "No
	// Rating" marks a missing multiplier.
	autauga := county(t, tab, "01001") // written 1001 in the file
	if p := autauga.Hazards[Drought].Scenarios[MidLower]; !p.HasMultiplier || p.Multiplier != 0 {
		t.Errorf("Autauga drought mid, lower %+v: a rated 0 is kept", p)
	}
	if p := autauga.Hazards[Hurricane].Scenarios[LateHigher]; p.HasMultiplier || p.HasScore || p.Rating != "Not Applicable" {
		t.Errorf("Autauga hurricane late, higher %+v: NA is missing", p)
	}
	// A territory: multipliers without scores; hurricane with neither.
	sj := county(t, tab, "72127")
	for _, h := range []int{CoastalFlooding, Drought, ExtremeHeat, Wildfire} {
		for s, p := range sj.Hazards[h].Scenarios {
			if !p.HasMultiplier || p.HasScore || p.Rating != "Not Applicable" {
				t.Errorf("San Juan %s %s: %+v", hazards[h].Key, scenarios[s].Key, p)
			}
		}
		if c := sj.Hazards[h].Current; c.HasScore || c.Rating != "Insufficient Data" {
			t.Errorf("San Juan %s now %+v", hazards[h].Key, c)
		}
	}
	for s, p := range sj.Hazards[Hurricane].Scenarios {
		if p.HasMultiplier || p.HasScore || p.LossRating != "Very High (>191M)" {
			t.Errorf("San Juan hurricane %s: %+v", scenarios[s].Key, p)
		}
	}
}

func TestForCounty(t *testing.T) {
	tab := loadFixture(t)
	tests := []struct {
		fips, row string
		standIn   bool
		ok        bool
	}{
		{"06037", "06037", false, true},
		{"01001", "01001", false, true},
		// Connecticut's Capitol planning region: Hartford County stands in.
		{"09110", "09003", true, true},
		// Oglala Lakota has its own row (the file uses the new code).
		{"46102", "46102", false, true},
		// Windham County has no row in the fixture, so neither has the
		// planning region it stands in for.
		{"09150", "", false, false},
		{"69085", "", false, false},
		{"6037", "", false, false},
		{"", "", false, false},
	}
	for _, tc := range tests {
		c, standIn, ok := tab.ForCounty(tc.fips)
		if ok != tc.ok || standIn != tc.standIn || (ok && c.FIPS != tc.row) {
			t.Errorf("ForCounty(%q) = %v, %v, %v; want row %q, %v, %v", tc.fips, c, standIn, ok, tc.row, tc.standIn, tc.ok)
		}
	}
	// An empty table finds nothing and does not panic.
	if _, _, ok := (&Table{}).ForCounty("06037"); ok {
		t.Error("an empty table found a county")
	}
}

func TestHazardsAndScenarios(t *testing.T) {
	hz, sc := Hazards(), Scenarios()
	keys := []string{}
	for _, h := range hz {
		keys = append(keys, h.Key)
	}
	if strings.Join(keys, ",") != "coastalFlooding,drought,extremeHeat,hurricane,wildfire" {
		t.Errorf("hazard keys %v", keys)
	}
	if sc[MidLower].Key != "midCenturyLowerWarming" || sc[LateHigher].Key != "lateCenturyHigherWarming" {
		t.Errorf("scenarios %+v", sc)
	}
	// The accessors hand out copies.
	hz[0].Key = "changed"
	if Hazards()[0].Key == "changed" {
		t.Error("Hazards returned the package's own table")
	}
}

// variant writes the fixture into a temporary pack with edit applied to
// its lines (0 = header).
func variant(t *testing.T, edit func(lines []string) []string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", fixtureFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	dir := t.TempDir()
	path := filepath.Join(dir, filepath.FromSlash(fixtureFile))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(edit(lines), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// setCol replaces the cell under header name col in line i.
func setCol(lines []string, i int, col, v string) []string {
	header := strings.Split(lines[0], ",")
	f := strings.Split(lines[i], ",")
	for k, h := range header {
		if h == col {
			f[k] = v
			lines[i] = strings.Join(f, ",")
			return lines
		}
	}
	panic("no column " + col)
}

func TestMalformed(t *testing.T) {
	tests := []struct {
		name  string
		edit  func([]string) []string
		wants []string
	}{
		{"score above 100", func(l []string) []string { return setCol(l, 2, "WFIR_LATE_HIGHER_PRISKS", "100.7") }, []string{"line 3", "WFIR_LATE_HIGHER_PRISKS", "outside 0-100"}},
		{"negative current score", func(l []string) []string { return setCol(l, 1, "DRGT_RISKS", "-1") }, []string{"line 2", "DRGT_RISKS"}},
		{"score as text", func(l []string) []string { return setCol(l, 1, "CFLD_MID_LOWER_PRISKS", "Very High") }, []string{"line 2", "not a number"}},
		{"negative multiplier", func(l []string) []string { return setCol(l, 4, "HRCN_MID_HIGHER_HM", "-2") }, []string{"line 5", "HRCN_MID_HIGHER_HM", "not a multiplier"}},
		{"infinite multiplier", func(l []string) []string { return setCol(l, 4, "DRGT_MID_HIGHER_HM", "Inf") }, []string{"line 5", "DRGT_MID_HIGHER_HM"}},
		{"bad county code", func(l []string) []string { return setCol(l, 3, "STCOFIPS", "09-003") }, []string{"line 4", "STCOFIPS"}},
		{"county twice", func(l []string) []string { return append(l, l[2]) }, []string{"line 8", "17031", "twice"}},
		{"county twice, once unpadded", func(l []string) []string { return append(l, setCol(copyLines(l), 1, "STCOFIPS", "6037")[1]) }, []string{"line 8", "06037", "twice"}},
		{"extreme heat column renamed", func(l []string) []string {
			l[0] = strings.Replace(l[0], "EXHT_L95_LATE_HIGHER_HM", "EXHT_LATE_HIGHER_HM", 1)
			return l
		}, []string{"line 1", `"EXHT_L95_LATE_HIGHER_HM"`}},
		{"no rows", func(l []string) []string { return l[:1] }, []string{"no county rows"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(os.DirFS(variant(t, tc.edit)))
			if err == nil {
				t.Fatal("Load succeeded on a malformed table")
			}
			for _, w := range append(tc.wants, fixtureFile) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if _, err := Load(os.DirFS(t.TempDir())); !errors.Is(err, data.ErrMissing) {
		t.Errorf("without the file: %v, want data.ErrMissing", err)
	}
}

// copyLines copies lines, so an edit of the copy leaves the original.
func copyLines(l []string) []string { return append([]string(nil), l...) }
