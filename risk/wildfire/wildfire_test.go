package wildfire

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"locrisk/risk/data"
	"locrisk/risk/data/datatest"
	"locrisk/risk/hazard"
	"locrisk/risk/nri"
)

// Fixture file paths: the future datasheet is stored uncompressed.
var (
	wrcFile    = data.Path(SourceWRC)
	whpFile    = data.Path(SourceWHP)
	futureFile = strings.TrimSuffix(data.Path(SourceFuture), ".gz")
)

func loadFixture(t testing.TB) *Module {
	t.Helper()
	m, err := Load(datatest.FixtureDir(t))
	if err != nil {
		t.Fatalf("Load(fixture): %v", err)
	}
	return m
}

func site(fips string) hazard.Site {
	return hazard.Site{CountyFIPS: fips, StateFIPS: fips[:2]}
}

func indicator(m hazard.Measurement, id string) (hazard.Indicator, bool) {
	for _, in := range m.Indicators {
		if in.ID == id {
			return in, true
		}
	}
	return hazard.Indicator{}, false
}

func ids(m hazard.Measurement) []string {
	var out []string
	for _, in := range m.Indicators {
		out = append(out, in.ID)
	}
	return out
}

func TestModuleInterface(t *testing.T) {
	var m hazard.Module = loadFixture(t)
	if m.Name() != hazard.Wildfire {
		t.Errorf("Name() = %q, want %q", m.Name(), hazard.Wildfire)
	}
	for _, id := range m.Sources() {
		if _, ok := data.SourceByID(id); !ok {
			t.Errorf("Sources() lists %q, which is not in the catalog", id)
		}
	}
	want := map[string]int{SourceWRC: 11, SourceWHP: 9, SourceFuture: 9}
	if got := m.Rows(); !reflect.DeepEqual(got, want) {
		t.Errorf("Rows() = %v, want %v", got, want)
	}
}

func TestFixtureIndicatorSets(t *testing.T) {
	m := loadFixture(t)
	all := []string{IDBurnProbability, IDRiskToHomes, IDWHPHighShare, IDFutureMidLower, IDFutureMidHigher, IDFutureLateLower, IDFutureLateHigher}
	ranked := all[:3]
	tests := []struct {
		name, fips string
		ids        []string
		quality    float64
		hazardData bool
		noteHas    []string
	}{
		{"all three sources", "06037", all, 1, true, []string{"0.16%", "1-in-630", "40% of the county's land"}},
		{"no future row", "12086", ranked, 1, true, []string{"0.098%", "63% of the county's land"}},
		{"low county", "25025", all, 1, true, []string{"0.0014%", "1-in-71,000", "None of the county's land"}},
		{"DC: WHP only", "11001", append([]string{IDWHPHighShare}, all[3:]...), 0.75, true, []string{"1% of the county's land"}},
		{"Hawaii: no WHP", "15003", append([]string{IDBurnProbability, IDRiskToHomes}, all[3:]...), 1, true, []string{"0.14%"}},
		{"zero burn probability", "02016", append([]string{IDBurnProbability, IDRiskToHomes}, all[3:]...), 1, true, []string{"burn probability is zero"}},
		// An older county standing in costs 0.15.
		{"Connecticut planning region", "09110", all, 0.85, true, []string{"former Hartford County"}},
		{"Chugach from Valdez-Cordova", "02063", []string{IDBurnProbability, IDRiskToHomes}, 0.85, true, []string{"former Valdez-Cordova Census Area"}},
		{"territory with NA projections", "72127", nil, 0, false, []string{"No USFS wildfire hazard data"}},
		{"county in no table", "66010", nil, 0, false, []string{"No USFS wildfire hazard data"}},
		{"planning region with no fixture row", "09150", nil, 0, false, nil},
		{"malformed FIPS", "6037", nil, 0, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.Measure(site(tc.fips))
			if !reflect.DeepEqual(ids(got), tc.ids) {
				t.Errorf("indicators %v, want %v", ids(got), tc.ids)
			}
			if math.Abs(got.Quality-tc.quality) > 1e-12 {
				t.Errorf("Quality = %v, want %v", got.Quality, tc.quality)
			}
			if got.HasHazardData() != tc.hazardData {
				t.Errorf("HasHazardData() = %v, want %v", got.HasHazardData(), tc.hazardData)
			}
			// Every indicator is a county aggregate of the wildfire peril.
			kinds := map[string]bool{hazard.ResSite: true, hazard.ResGrid: true, hazard.ResReportedEvents: true, hazard.ResCounty: true}
			for _, in := range got.Indicators {
				if in.Peril != hazard.PerilWildfire {
					t.Errorf("%s: peril %q, want %q", in.ID, in.Peril, hazard.PerilWildfire)
				}
				if !kinds[in.Resolution.Kind] {
					t.Errorf("%s: resolution kind %q is not one of the four", in.ID, in.Resolution.Kind)
				}
				if in.Weight > 0 && in.Resolution.Kind != hazard.ResCounty {
					t.Errorf("%s: weighted, resolution kind %q, want %q", in.ID, in.Resolution.Kind, hazard.ResCounty)
				}
				if in.Weight > 0 && !in.Ranked {
					t.Errorf("%s: weighted but not ranked", in.ID)
				}
			}
			notes := strings.Join(got.Notes, " | ")
			for _, w := range tc.noteHas {
				if !strings.Contains(notes, w) {
					t.Errorf("notes %q lack %q", notes, w)
				}
			}
		})
	}
}

func TestFixtureValues(t *testing.T) {
	m := loadFixture(t)
	tests := []struct {
		fips, id string
		want     float64
	}{
		{"06037", IDBurnProbability, 0.0016},
		{"25025", IDBurnProbability, 1.4e-05},
		{"02016", IDBurnProbability, 0},
		{"06037", IDRiskToHomes, 0.081},
		{"25025", IDRiskToHomes, 0.00046},
		// (risk_4 + risk_5) / (1 - risk_7): the share of land, not of area.
		{"06037", IDWHPHighShare, 100 * 0.40 / 0.99},
		{"12086", IDWHPHighShare, 100 * 0.60 / 0.95},
		{"11001", IDWHPHighShare, 100 * 0.005 / 0.90},
		{"25025", IDWHPHighShare, 0},
		{"06037", IDFutureMidLower, 99.84},
		{"06037", IDFutureMidHigher, 99.83},
		{"06037", IDFutureLateLower, 99.86},
		{"06037", IDFutureLateHigher, 99.81},
		{"02016", IDFutureLateHigher, 0.03},
		{"09110", IDBurnProbability, 3e-05}, // Hartford County
		{"09110", IDFutureLateHigher, 44.0},
		{"02066", IDRiskToHomes, 0.004}, // Valdez-Cordova
	}
	for _, tc := range tests {
		in, ok := indicator(m.Measure(site(tc.fips)), tc.id)
		if !ok {
			t.Errorf("%s: no %s indicator", tc.fips, tc.id)
			continue
		}
		if math.Abs(in.Value-tc.want) > 1e-9 {
			t.Errorf("%s %s = %v, want %v", tc.fips, tc.id, in.Value, tc.want)
		}
	}
}

func TestIndicatorRoles(t *testing.T) {
	m := loadFixture(t)
	got := m.Measure(site("06037"))
	sum := 0.0
	for _, in := range got.Indicators {
		if in.Label == "" || in.Unit == "" || in.Source == "" {
			t.Errorf("%s: empty label, unit or source: %+v", in.ID, in)
		}
		if _, ok := data.SourceByID(in.Source); !ok {
			t.Errorf("%s: source %q not in the catalog", in.ID, in.Source)
		}
		switch in.ID {
		case IDBurnProbability, IDRiskToHomes, IDWHPHighShare:
			if !in.Ranked || in.Weight <= 0 || in.Percentile != nil {
				t.Errorf("%s should be ranked and weighted with no preset percentile: %+v", in.ID, in)
			}
		default:
			if in.Ranked || in.Weight != 0 || in.Percentile == nil || *in.Percentile != in.Value {
				t.Errorf("%s should be unranked context with percentile = value: %+v", in.ID, in)
			}
			if !strings.Contains(in.Label, "FEMA NRI Future Risk") || in.Source != SourceFuture {
				t.Errorf("%s is not labelled as an NRI Future Risk projection: %q", in.ID, in.Label)
			}
		}
		sum += in.Weight
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("weights sum to %v, want 1", sum)
	}
	bp, _ := indicator(got, IDBurnProbability)
	if bp.Unit != "probability" {
		t.Errorf("burn probability unit %q, want probability", bp.Unit)
	}
	// Only the burn probability is an annual chance of the peril's event.
	for _, in := range got.Indicators {
		if in.AnnualChance != (in.ID == IDBurnProbability) {
			t.Errorf("%s: AnnualChance = %v", in.ID, in.AnnualChance)
		}
	}
}

func TestRanking(t *testing.T) {
	m := loadFixture(t)
	for _, id := range []string{IDBurnProbability, IDRiskToHomes, IDWHPHighShare} {
		hi, _ := indicator(m.Measure(site("06037")), id)
		lo, _ := indicator(m.Measure(site("25025")), id)
		if !(hi.Value > lo.Value) {
			t.Errorf("%s: Los Angeles %v not above Suffolk %v", id, hi.Value, lo.Value)
		}
	}
}

func TestMeasureDeterministicAndCheap(t *testing.T) {
	m := loadFixture(t)
	a, b := m.Measure(site("06037")), m.Measure(site("06037"))
	if !reflect.DeepEqual(a, b) {
		t.Error("two Measure calls at one site differ")
	}
	allocs := testing.AllocsPerRun(200, func() { _ = m.Measure(site("06037")) })
	if allocs > 1 {
		t.Errorf("Measure allocates %.1f times, want at most 1", allocs)
	}
	// The shared notes must not be extended in place by a caller's append.
	if cap(a.Notes) != len(a.Notes) {
		t.Errorf("notes have spare capacity %d > %d", cap(a.Notes), len(a.Notes))
	}
}

func TestNoteFormatting(t *testing.T) {
	tests := []struct{ got, want string }{
		{burnProbabilityNote(0.00495526), "Across the county's housing, the mean annual burn probability is 0.50%, about a 1-in-200 chance each year (USFS Wildfire Risk to Communities, 2020)."},
		{burnProbabilityNote(0.017), "Across the county's housing, the mean annual burn probability is 1.7%, about a 1-in-59 chance each year (USFS Wildfire Risk to Communities, 2020)."},
		{burnProbabilityNote(1.385e-05), "Across the county's housing, the mean annual burn probability is 0.0014%, about a 1-in-72,000 chance each year (USFS Wildfire Risk to Communities, 2020)."},
		{burnProbabilityNote(0), "Across the county's housing, the modelled annual burn probability is zero (USFS Wildfire Risk to Communities, 2020)."},
		{whpNote(27.66), "28% of the county's land is rated high or very high Wildfire Hazard Potential (USFS, 2014)."},
		{whpNote(0.02), "Less than 1% of the county's land is rated high or very high Wildfire Hazard Potential (USFS, 2014)."},
		{whpNote(0), "None of the county's land is rated high or very high Wildfire Hazard Potential (USFS, 2014)."},
		{withCommas(1234567), "1,234,567"},
		{withCommas(999), "999"},
		{sigFigs(0.1, 2), "0.10"},
		{sigFigs(12.34, 2), "12"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got  %q\nwant %q", tc.got, tc.want)
		}
	}
}

// variant copies the three fixture tables into a temporary data directory,
// applying edit to the lines (0 = header) of the one named rel.
func variant(t *testing.T, rel string, edit func(lines []string) []string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{wrcFile, whpFile, futureFile} {
		b, err := os.ReadFile(filepath.Join(datatest.FixtureDir(t), f))
		if err != nil {
			t.Fatal(err)
		}
		if f == rel {
			lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
			b = []byte(strings.Join(edit(lines), "\n") + "\n")
		}
		path := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// setCol replaces the cell under header name col in line i.
func setCol(lines []string, i int, col, v string) []string {
	header := strings.Split(lines[0], ",")
	f := strings.Split(lines[i], ",")
	for k, h := range header {
		if strings.Trim(h, `"`) == col {
			f[k] = v
			lines[i] = strings.Join(f, ",")
			return lines
		}
	}
	panic("no column " + col)
}

func TestMalformedFiles(t *testing.T) {
	tests := []struct {
		name, file string
		edit       func([]string) []string
		wants      []string
	}{
		{"non-numeric BP", wrcFile, func(l []string) []string { return setCol(l, 3, "Mean BP", "0.0x1") }, []string{wrcFile, "line 4", "Mean BP", `"0.0x1"`}},
		{"BP above 1", wrcFile, func(l []string) []string { return setCol(l, 2, "Mean BP", "1.5") }, []string{wrcFile, "line 3", "outside"}},
		{"negative RPS", wrcFile, func(l []string) []string { return setCol(l, 5, "Mean RPS", "-0.2") }, []string{wrcFile, "line 6", "Mean RPS"}},
		{"bad GEOID", wrcFile, func(l []string) []string { return setCol(l, 2, "GEOID", "06-75") }, []string{wrcFile, "line 3", "GEOID"}},
		{"duplicate county", wrcFile, func(l []string) []string { return append(l, l[1]) }, []string{wrcFile, "line 13", "twice"}},
		{"renamed column", wrcFile, func(l []string) []string { return setCol(l, 0, "Mean BP", "Mean  BP") }, []string{wrcFile, "line 1", `"Mean BP"`}},
		{"WHP fractions do not sum to 1", whpFile, func(l []string) []string { return setCol(l, 4, "risk_4", "0.5") }, []string{whpFile, "line 5", "sum to"}},
		{"WHP fraction not a number", whpFile, func(l []string) []string { return setCol(l, 2, "risk_5", `"high"`) }, []string{whpFile, "line 3", "risk_5"}},
		{"WHP fraction above 1", whpFile, func(l []string) []string { return setCol(l, 2, "risk_1", "1.2") }, []string{whpFile, "line 3", "not a fraction"}},
		{"WHP empty", whpFile, func(l []string) []string { return l[:1] }, []string{whpFile, "no county rows"}},
		{"future score above 100", futureFile, func(l []string) []string { return setCol(l, 6, "WFIR_LATE_HIGHER_PRISKS", `"100.7"`) }, []string{futureFile, "line 7", "WFIR_LATE_HIGHER_PRISKS"}},
		{"future score text", futureFile, func(l []string) []string { return setCol(l, 1, "WFIR_MID_LOWER_PRISKS", "Very High") }, []string{futureFile, "line 2", "not a number"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(variant(t, tc.file, tc.edit))
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

func TestMissingFiles(t *testing.T) {
	for _, f := range []string{wrcFile, whpFile, futureFile} {
		dir := variant(t, "", nil)
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			t.Fatal(err)
		}
		_, err := Load(dir)
		if !errors.Is(err, data.ErrMissing) || !strings.Contains(err.Error(), filepath.Base(f)) {
			t.Errorf("without %s: error %v, want data.ErrMissing naming the file", f, err)
		}
	}
}

func TestRealData(t *testing.T) {
	dir := datatest.RealDir(t)
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{SourceWRC: 3141, SourceWHP: 3108, SourceFuture: 3231}
	if got := m.Rows(); !reflect.DeepEqual(got, want) {
		t.Errorf("Rows() = %v, want %v (PROVENANCE)", got, want)
	}
	value := func(fips, id string) float64 {
		t.Helper()
		in, ok := indicator(m.Measure(site(fips)), id)
		if !ok {
			t.Fatalf("%s: no %s indicator", fips, id)
		}
		return in.Value
	}
	// Interior and foothill California against Boston.
	for _, fips := range []string{"06065", "06005"} {
		if a, b := value(fips, IDBurnProbability), value("25025", IDBurnProbability); a < 100*b {
			t.Errorf("burn probability %s = %v, not 100x Suffolk's %v", fips, a, b)
		}
		if a, b := value(fips, IDRiskToHomes), value("25025", IDRiskToHomes); a < 100*b {
			t.Errorf("risk to homes %s = %v, not 100x Suffolk's %v", fips, a, b)
		}
		if a := value(fips, IDWHPHighShare); a < 20 {
			t.Errorf("WHP high share %s = %.1f%%, want > 20%%", fips, a)
		}
	}
	if v := value("25025", IDWHPHighShare); v > 1 {
		t.Errorf("Suffolk WHP high share = %.2f%%, want < 1%%", v)
	}
	if v := value("06005", IDWHPHighShare); v < 75 {
		t.Errorf("Amador WHP high share = %.1f%%, want > 75%% (PROVENANCE: 0.79 of all cells)", v)
	}
	if v := value("06037", IDFutureLateHigher); v < 99 {
		t.Errorf("Los Angeles late-century higher-warming projection = %v, want >= 99", v)
	}

	// Coverage gaps and crosswalks.
	tests := []struct {
		fips       string
		has, lacks []string
	}{
		{"11001", []string{IDWHPHighShare, IDFutureMidLower}, []string{IDBurnProbability}},  // DC: no WRC row
		{"15003", []string{IDBurnProbability, IDFutureMidLower}, []string{IDWHPHighShare}},  // HI: WHP is CONUS only
		{"02020", []string{IDBurnProbability, IDRiskToHomes}, []string{IDWHPHighShare}},     // AK
		{"09170", []string{IDBurnProbability, IDWHPHighShare, IDFutureLateHigher}, nil},     // CT planning region
		{"02066", []string{IDBurnProbability, IDFutureLateLower}, []string{IDWHPHighShare}}, // Copper River
		{"46102", []string{IDBurnProbability, IDWHPHighShare}, nil},                         // Oglala Lakota (WHP: Shannon)
		{"72127", nil, []string{IDBurnProbability, IDWHPHighShare, IDFutureMidLower}},       // PR: NA everywhere
		{"66010", nil, []string{IDBurnProbability, IDWHPHighShare, IDFutureMidLower}},       // Guam
	}
	for _, tc := range tests {
		got := m.Measure(site(tc.fips))
		for _, id := range tc.has {
			if _, ok := indicator(got, id); !ok {
				t.Errorf("%s lacks %s (has %v)", tc.fips, id, ids(got))
			}
		}
		for _, id := range tc.lacks {
			if _, ok := indicator(got, id); ok {
				t.Errorf("%s has %s, which its sources do not cover", tc.fips, id)
			}
		}
	}

	// Every state and DC county of the 2023 geography (as keyed by NRI v1.20)
	// gets weighted hazard data; every territory falls back.
	tab, err := nri.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	covered, territories := 0, 0
	for st := 1; st <= 78; st++ {
		for co := 1; co <= 999; co++ {
			fips := twoDigits(st) + threeDigits(co)
			if !tab.Has(fips) {
				continue
			}
			has := m.Measure(site(fips)).HasHazardData()
			if st >= 60 {
				territories++
				if has {
					t.Errorf("territory %s has wildfire hazard data", fips)
				}
				continue
			}
			if !has {
				t.Errorf("county %s has no wildfire hazard data", fips)
			}
			covered++
		}
	}
	if covered != 3144 || territories != 88 {
		t.Errorf("checked %d state counties and %d territory units, want 3144 and 88", covered, territories)
	}
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }
func threeDigits(n int) string {
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}

func BenchmarkLoad(b *testing.B) {
	dir := datatest.RealDir(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMeasure(b *testing.B) {
	m, err := Load(datatest.RealDir(b))
	if err != nil {
		b.Fatal(err)
	}
	sites := []hazard.Site{site("06065"), site("25025"), site("11001"), site("15003"), site("09110"), site("72127")}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = m.Measure(sites[i%len(sites)])
		i++
	}
}
