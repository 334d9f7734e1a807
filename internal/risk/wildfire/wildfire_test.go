package wildfire

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/futurerisk"
	"github.com/locrisk/locrisk/internal/risk/hazard"
	"github.com/locrisk/locrisk/internal/risk/nri"
)

// Fixture file paths: the future datasheet is stored uncompressed.
var (
	wrcFile     = data.Path(SourceWRC)
	whp2020File = data.Path(SourceWHP2020)
	whp2014File = data.Path(SourceWHP2014)
	futureFile  = strings.TrimSuffix(data.Path(SourceFuture), ".gz")
)

// load reads the Future Risk table of fsys, as the engine does once, then
// the module.
func load(fsys fs.FS, alloc Allocator) (*Module, error) {
	future, err := futurerisk.Load(fsys)
	if err != nil {
		return nil, err
	}
	return Load(fsys, alloc, future)
}

func loadFixture(t testing.TB) *Module {
	t.Helper()
	m, err := load(datatest.Fixture(t), nil)
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

// Indicator sets: the three scored WRC measures, then the context.
var (
	scored  = []string{IDBurnProbability, IDHomesExposedShare, IDRelativeRiskToHome}
	whps    = []string{IDWHP2020HighShare, IDWHP2014HighShare}
	futures = []string{IDFutureMidLower, IDFutureMidHigher, IDFutureLateLower, IDFutureLateHigher}
)

func join(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// near compares hand-computed values with a relative tolerance.
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-15+1e-9*math.Abs(want) }

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
	// Every wildfire file of the catalog is read, so `data check` counts it.
	for _, s := range data.Catalog() {
		if s.Module == hazard.Wildfire && !slices.Contains(m.Sources(), s.ID) {
			t.Errorf("catalog source %s (module wildfire) is not read", s.ID)
		}
	}
	want := map[string]int{SourceWRC: 11, SourceWHP2020: 11, SourceWHP2014: 9}
	if got := m.Rows(); !reflect.DeepEqual(got, want) {
		t.Errorf("Rows() = %v, want %v", got, want)
	}
}

func TestFixtureIndicatorSets(t *testing.T) {
	m := loadFixture(t)
	tests := []struct {
		name, fips string
		ids        []string
		quality    float64
		hazardData bool
		noteHas    []string
	}{
		{"every source", "06037", join(scored, whps, futures), 1, true,
			[]string{"homes exposed to wildfire (25% of its homes)", "0.16%", "1-in-630", "about 1 in 2,500", "52% of the county's area", "does not drive the score"}},
		{"no future row", "12086", join(scored, whps), 1, true, []string{"(30% of its homes)", "0.10%", "1-in-1,000", "about 1 in 3,300", "33% of the county's area"}},
		{"low county", "25025", join(scored, whps, futures), 1, true, []string{"(6% of its homes)", "0.0014%", "1-in-71,000", "about 1 in 1,200,000", "None of the county's area"}},
		{"Hawaii: no WHP", "15003", join(scored, futures), 1, true, []string{"(70% of its homes)", "0.14%", "1-in-710", "about 1 in 1,000"}},
		{"zero burn probability", "02016", join(scored, futures), 1, true, []string{"burn probability of the county's homes is zero"}},
		// DC has no WRC row: context only, nothing scored, the engine falls
		// back to the NRI.
		{"DC: no WRC row", "11001", join(whps, futures), 0, false, []string{"gives no figures for this county's homes", "Less than 1% of the county's area"}},
		{"WHP 2020 only", "06081", []string{IDWHP2020HighShare}, 0, false, []string{"gives no figures", "14% of the county's area"}},
		// An older county standing in costs 0.15.
		{"Connecticut planning region", "09110", join(scored, whps[1:], futures), 0.85, true, []string{"former Hartford County"}},
		{"Chugach from Valdez-Cordova", "02063", scored, 0.85, true, []string{"(all of its homes)", "0.021%", "1-in-4,800", "former Valdez-Cordova Census Area"}},
		{"territory with NA projections", "72127", nil, 0, false, []string{"No USFS wildfire data"}},
		{"county in no table", "66010", nil, 0, false, []string{"No USFS wildfire data"}},
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
			// Every indicator is a county value of the wildfire peril.
			for _, in := range got.Indicators {
				if in.Peril != hazard.PerilWildfire {
					t.Errorf("%s: peril %q, want %q", in.ID, in.Peril, hazard.PerilWildfire)
				}
				if in.Resolution.Kind != hazard.ResCounty || in.Resolution.Detail == "" {
					t.Errorf("%s: resolution %+v, want county with a detail", in.ID, in.Resolution)
				}
				if in.Weight > 0 && (!in.Ranked || in.Resolution != resHousing) {
					t.Errorf("%s: weighted, so it must be ranked and housing-unit weighted: %+v", in.ID, in)
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

// TestFixtureValues checks values computed by hand from the fixture rows:
// share of homes reached = exposed HUs x Mean BP / HUs, relative risk per
// home = exposed HUs x Mean RPS / HUs.
func TestFixtureValues(t *testing.T) {
	m := loadFixture(t)
	tests := []struct {
		fips, id string
		want     float64
	}{
		// Los Angeles: 4,000,000 homes, 1,000,000 exposed, BP 0.0016, RPS 0.08.
		{"06037", IDBurnProbability, 0.0016},
		{"06037", IDHomesExposedShare, 1e6 * 0.0016 / 4e6},
		{"06037", IDRelativeRiskToHome, 1e6 * 0.08 / 4e6},
		// Miami-Dade: 1,000,000 homes, 300,000 exposed, BP 0.001, RPS 0.06.
		{"12086", IDBurnProbability, 0.001},
		{"12086", IDHomesExposedShare, 3e-4},
		{"12086", IDRelativeRiskToHome, 0.018},
		// Suffolk: 300,000 homes, 18,000 exposed; the file's rounded totals
		// (0.25 and 8) are checked, not used.
		{"25025", IDBurnProbability, 1.4e-05},
		{"25025", IDHomesExposedShare, 18000 * 1.4e-05 / 300000},
		{"25025", IDRelativeRiskToHome, 18000 * 0.00046 / 300000},
		// Honolulu: 400,000 homes, 280,000 exposed.
		{"15003", IDHomesExposedShare, 280000 * 0.0014 / 400000},
		{"15003", IDRelativeRiskToHome, 280000 * 0.1 / 400000},
		// Aleutians West: zero burn probability, empty published totals.
		{"02016", IDBurnProbability, 0},
		{"02016", IDHomesExposedShare, 0},
		{"02016", IDRelativeRiskToHome, 0},
		// Every home exposed: the share equals the mean (Valdez-Cordova).
		{"02066", IDBurnProbability, 0.00021},
		{"02066", IDHomesExposedShare, 0.00021},
		{"02066", IDRelativeRiskToHome, 0.004},
		{"09110", IDHomesExposedShare, 38000 * 3e-05 / 380000}, // Hartford County
		// WHP 2020: 100 x (class 4 + class 5 cells) / all cells, water included.
		{"06037", IDWHP2020HighShare, 100 * 1100.0 / 2100},
		{"12086", IDWHP2020HighShare, 100 * 600.0 / 1800},
		{"11001", IDWHP2020HighShare, 100 * 10.0 / 2400},
		{"06081", IDWHP2020HighShare, 100 * 150.0 / 1100},
		{"25025", IDWHP2020HighShare, 0},
		// WHP 2014: (risk_4 + risk_5) / (1 - risk_7), the share of land.
		{"06037", IDWHP2014HighShare, 100 * 0.40 / 0.99},
		{"12086", IDWHP2014HighShare, 100 * 0.60 / 0.95},
		{"11001", IDWHP2014HighShare, 100 * 0.005 / 0.90},
		{"25025", IDWHP2014HighShare, 0},
		{"06037", IDFutureMidLower, 99.84},
		{"06037", IDFutureMidHigher, 99.83},
		{"06037", IDFutureLateLower, 99.86},
		{"06037", IDFutureLateHigher, 99.81},
		{"02016", IDFutureLateHigher, 0.03},
		{"09110", IDFutureLateHigher, 44.0},
	}
	for _, tc := range tests {
		in, ok := indicator(m.Measure(site(tc.fips)), tc.id)
		if !ok {
			t.Errorf("%s: no %s indicator", tc.fips, tc.id)
			continue
		}
		if !near(in.Value, tc.want) {
			t.Errorf("%s %s = %v, want %v", tc.fips, tc.id, in.Value, tc.want)
		}
	}
}

func TestIndicatorRoles(t *testing.T) {
	m := loadFixture(t)
	got := m.Measure(site("06037"))
	weights := map[string]float64{}
	sum := 0.0
	for _, in := range got.Indicators {
		if in.Label == "" || in.Unit == "" || in.Source == "" {
			t.Errorf("%s: empty label, unit or source: %+v", in.ID, in)
		}
		if _, ok := data.SourceByID(in.Source); !ok {
			t.Errorf("%s: source %q not in the catalog", in.ID, in.Source)
		}
		switch in.ID {
		case IDBurnProbability, IDHomesExposedShare, IDRelativeRiskToHome:
			if !in.Ranked || in.Weight <= 0 || in.Percentile != nil || in.Source != SourceWRC {
				t.Errorf("%s should be a ranked, weighted WRC measure with no preset percentile: %+v", in.ID, in)
			}
			if in.Resolution.Detail != "county, housing-unit weighted" {
				t.Errorf("%s: resolution detail %q", in.ID, in.Resolution.Detail)
			}
		case IDWHP2020HighShare, IDWHP2014HighShare:
			// Context: ranked so the report shows its percentile, never weighted.
			if !in.Ranked || in.Weight != 0 || in.Percentile != nil {
				t.Errorf("%s should be ranked, unweighted context: %+v", in.ID, in)
			}
		default:
			if in.Ranked || in.Weight != 0 || in.Percentile == nil || *in.Percentile != in.Value {
				t.Errorf("%s should be unranked context with percentile = value: %+v", in.ID, in)
			}
			if !strings.Contains(in.Label, "FEMA NRI Future Risk") || in.Source != SourceFuture {
				t.Errorf("%s is not labelled as an NRI Future Risk projection: %q", in.ID, in.Label)
			}
		}
		weights[in.ID] = in.Weight
		sum += in.Weight
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("weights sum to %v, want 1", sum)
	}
	// The expected share of all homes reached leads, then risk, then the
	// exposed homes' burn probability (docs/methodology.md).
	if !(weights[IDHomesExposedShare] > weights[IDRelativeRiskToHome] && weights[IDRelativeRiskToHome] > weights[IDBurnProbability]) {
		t.Errorf("weights %v are not in the documented order", weights)
	}
	units := map[string]string{IDBurnProbability: "probability", IDHomesExposedShare: "probability", IDRelativeRiskToHome: "index",
		IDWHP2020HighShare: "percent", IDWHP2014HighShare: "percent"}
	for id, u := range units {
		if in, _ := indicator(got, id); in.Unit != u {
			t.Errorf("%s unit %q, want %q", id, in.Unit, u)
		}
	}
	// Only the burn probability is the annual chance the report shows as
	// "about 1 in N years".
	for _, in := range got.Indicators {
		if in.AnnualChance != (in.ID == IDBurnProbability) {
			t.Errorf("%s: AnnualChance = %v", in.ID, in.AnnualChance)
		}
	}
}

// TestContextIndicators: the land-area shares are reported with their own
// resolution but never score, so a county whose wild land lies far from its
// homes is not scored on that land.
func TestContextIndicators(t *testing.T) {
	m := loadFixture(t)
	for _, fips := range []string{"06037", "12086", "11001", "06081", "25025"} {
		got := m.Measure(site(fips))
		for _, id := range whps {
			in, ok := indicator(got, id)
			if !ok {
				continue
			}
			if in.Weight != 0 || !in.Ranked {
				t.Errorf("%s %s: weight %v ranked %v, want context (0, ranked)", fips, id, in.Weight, in.Ranked)
			}
			want := map[string]string{IDWHP2020HighShare: "county area share (270 m cells, water included)", IDWHP2014HighShare: "county land area share"}[id]
			if in.Resolution.Detail != want {
				t.Errorf("%s %s: detail %q, want %q", fips, id, in.Resolution.Detail, want)
			}
		}
	}
	// Miami-Dade's large high-hazard area does not lift it above Los Angeles
	// on any scored measure, while on land it is not far behind.
	la, md := m.Measure(site("06037")), m.Measure(site("12086"))
	for _, id := range scored {
		a, _ := indicator(la, id)
		b, _ := indicator(md, id)
		if !(a.Value > b.Value) {
			t.Errorf("%s: Los Angeles %v not above Miami-Dade %v", id, a.Value, b.Value)
		}
	}
	// Context alone never makes hazard data.
	if got := m.Measure(site("06081")); got.HasHazardData() || got.Quality != 0 {
		t.Errorf("WHP-only county: HasHazardData %v, Quality %v", got.HasHazardData(), got.Quality)
	}
}

// TestMissingWRC: without a usable WRC row the peril has no weighted
// indicator at all (the engine then reports it as null or falls back to the
// NRI), never a made-up zero.
func TestMissingWRC(t *testing.T) {
	tests := []struct {
		name, fips string
		edit       func([]string) []string
		want       []string
	}{
		{"row removed", "12086", func(l []string) []string { return slices.Delete(l, 4, 5) }, whps},
		{"no housing units", "17031", func(l []string) []string {
			l = setCol(l, 6, "Total number of Housing Units (HUs)", "0")
			return setCol(l, 6, "Total number of exposed HUs", "0")
		}, join(whps, futures)},
		{"housing units empty", "17031", func(l []string) []string { return setCol(l, 6, "Total number of Housing Units (HUs)", "") }, join(whps, futures)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := load(os.DirFS(variant(t, wrcFile, tc.edit)), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := m.Measure(site(tc.fips))
			if !reflect.DeepEqual(ids(got), tc.want) {
				t.Errorf("indicators %v, want %v", ids(got), tc.want)
			}
			for _, in := range got.Indicators {
				if in.Weight > 0 {
					t.Errorf("%s weighted without WRC", in.ID)
				}
			}
			if got.HasHazardData() || got.Quality != 0 {
				t.Errorf("HasHazardData %v, Quality %v; want false, 0", got.HasHazardData(), got.Quality)
			}
			if !strings.Contains(strings.Join(got.Notes, " "), "gives no figures for this county's homes") {
				t.Errorf("notes %q do not say WRC is missing", got.Notes)
			}
		})
	}
	// A missing mean drops only the measures made from it.
	m, err := load(os.DirFS(variant(t, wrcFile, func(l []string) []string { return setCol(l, 8, "Mean BP", "") })), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Measure(site("40109"))
	if _, ok := indicator(got, IDBurnProbability); ok {
		t.Error("Oklahoma County has a burn probability with Mean BP empty")
	}
	if _, ok := indicator(got, IDHomesExposedShare); ok {
		t.Error("Oklahoma County has a share of homes reached with Mean BP empty")
	}
	if in, ok := indicator(got, IDRelativeRiskToHome); !ok || !near(in.Value, 150000*0.011/300000) {
		t.Errorf("Oklahoma County relative risk %+v, want %v", in, 150000*0.011/300000)
	}
}

func TestRanking(t *testing.T) {
	m := loadFixture(t)
	for _, id := range append(scored, whps...) {
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
	const cite = " (USFS Wildfire Risk to Communities, 2020)."
	tests := []struct{ got, want string }{
		{burnProbabilityNote(wrcRow{bp: 0.00495526, exposedFrac: 0.732, homesShare: 0.00362592}),
			"Across the county's homes exposed to wildfire (73% of its homes), the mean annual burn probability is 0.50%, about a 1-in-200 chance each year; averaged over all its homes, exposed or not, about 1 in 280" + cite},
		{burnProbabilityNote(wrcRow{bp: 0.017, exposedFrac: 1, homesShare: 0.017}),
			"Across the county's homes exposed to wildfire (all of its homes), the mean annual burn probability is 1.7%, about a 1-in-59 chance each year" + cite},
		{burnProbabilityNote(wrcRow{bp: 3.66e-05, exposedFrac: 0.042, homesShare: 1.5462e-06}),
			"Across the county's homes exposed to wildfire (4% of its homes), the mean annual burn probability is 0.0037%, about a 1-in-27,000 chance each year; averaged over all its homes, exposed or not, about 1 in 650,000" + cite},
		{burnProbabilityNote(wrcRow{bp: 0.001, exposedFrac: 0.003, homesShare: 3e-6}),
			"Across the county's homes exposed to wildfire (less than 1% of its homes), the mean annual burn probability is 0.10%, about a 1-in-1,000 chance each year; averaged over all its homes, exposed or not, about 1 in 330,000" + cite},
		{burnProbabilityNote(wrcRow{}), "The modelled annual burn probability of the county's homes is zero" + cite},
		{whpNote(27.66), "28% of the county's area is rated high or very high Wildfire Hazard Potential (USFS, 2020); that share counts wild land anywhere in the county, not only where its homes are, and does not drive the score."},
		{whpNote(0.02), "Less than 1% of the county's area is rated high or very high Wildfire Hazard Potential (USFS, 2020); that share counts wild land anywhere in the county, not only where its homes are, and does not drive the score."},
		{whpNote(0), "None of the county's area is rated high or very high Wildfire Hazard Potential (USFS, 2020); that share counts wild land anywhere in the county, not only where its homes are, and does not drive the score."},
		{homesPhrase(0.996), "nearly all of its homes"},
		{hazard.ReturnPeriodText(1234567), "1,200,000"},
		{hazard.ReturnPeriodText(999), "1,000"},
		{sigFigs(0.1, 2), "0.10"},
		{sigFigs(12.34, 2), "12"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got  %q\nwant %q", tc.got, tc.want)
		}
	}
}

// variant copies the four fixture tables into a temporary data directory,
// applying edit to the lines (0 = header) of the one named rel.
func variant(t *testing.T, rel string, edit func(lines []string) []string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{wrcFile, whp2020File, whp2014File, futureFile} {
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
		{"no exposed HU column", wrcFile, func(l []string) []string { return setCol(l, 0, "Total number of exposed HUs", "exposed") }, []string{wrcFile, "line 1", `"Total number of exposed HUs"`}},
		{"negative housing units", wrcFile, func(l []string) []string { return setCol(l, 7, "Total number of Housing Units (HUs)", "-5") }, []string{wrcFile, "line 8", "outside"}},
		{"more exposed than homes", wrcFile, func(l []string) []string { return setCol(l, 7, "Total number of exposed HUs", "3000000") }, []string{wrcFile, "line 8", "exceed"}},
		// The published totals must be exposed HUs x the mean: a shifted or
		// swapped column shows here.
		{"expected HUs exposed off", wrcFile, func(l []string) []string { return setCol(l, 5, "Expected Annual HU Exposed", "3000") }, []string{wrcFile, "line 6", "Expected Annual HU Exposed", "exposed HUs x mean"}},
		{"expected relative risk off", wrcFile, func(l []string) []string { return setCol(l, 2, "Expected Annual Relative HU Risk", "800") }, []string{wrcFile, "line 3", "Expected Annual Relative HU Risk"}},
		{"expected risk not a number", wrcFile, func(l []string) []string { return setCol(l, 9, "Expected Annual Relative HU Risk", "n/a") }, []string{wrcFile, "line 10", "not a number"}},
		{"WHP 2020 counts do not add up", whp2020File, func(l []string) []string { return setCol(l, 5, "px_whp_cls1", "81") }, []string{whp2020File, "line 6", "sum to"}},
		{"WHP 2020 share disagrees", whp2020File, func(l []string) []string { return setCol(l, 7, "frac_hi_vhi", "0.59475") }, []string{whp2020File, "line 8", "frac_hi_vhi"}},
		{"WHP 2020 fractional count", whp2020File, func(l []string) []string { return setCol(l, 3, "px_whp_cls3", "10.5") }, []string{whp2020File, "line 4", "cell count"}},
		{"WHP 2020 negative count", whp2020File, func(l []string) []string { return setCol(l, 2, "px_whp_cls1", "-200") }, []string{whp2020File, "line 3", "cell count"}},
		{"WHP 2020 zero cells", whp2020File, func(l []string) []string {
			for _, c := range []string{"px_NA_nonburnable_or_water", "px_whp_cls1", "px_whp_cls2", "px_total"} {
				l = setCol(l, 5, c, "0")
			}
			return l
		}, []string{whp2020File, "line 6", "sum to"}},
		{"WHP 2020 duplicate county", whp2020File, func(l []string) []string { return append(l, l[2]) }, []string{whp2020File, "line 13", "twice"}},
		{"WHP 2020 empty", whp2020File, func(l []string) []string { return l[:1] }, []string{whp2020File, "no county rows"}},
		{"WHP 2014 fractions do not sum to 1", whp2014File, func(l []string) []string { return setCol(l, 4, "risk_4", "0.5") }, []string{whp2014File, "line 5", "sum to"}},
		{"WHP 2014 fraction not a number", whp2014File, func(l []string) []string { return setCol(l, 2, "risk_5", `"high"`) }, []string{whp2014File, "line 3", "risk_5"}},
		{"WHP 2014 fraction above 1", whp2014File, func(l []string) []string { return setCol(l, 2, "risk_1", "1.2") }, []string{whp2014File, "line 3", "not a fraction"}},
		{"WHP 2014 empty", whp2014File, func(l []string) []string { return l[:1] }, []string{whp2014File, "no county rows"}},
		{"future score above 100", futureFile, func(l []string) []string { return setCol(l, 6, "WFIR_LATE_HIGHER_PRISKS", `"100.7"`) }, []string{futureFile, "line 7", "WFIR_LATE_HIGHER_PRISKS"}},
		{"future score text", futureFile, func(l []string) []string { return setCol(l, 1, "WFIR_MID_LOWER_PRISKS", "Very High") }, []string{futureFile, "line 2", "not a number"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(os.DirFS(variant(t, tc.file, tc.edit)), nil)
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
	for _, f := range []string{wrcFile, whp2020File, whp2014File, futureFile} {
		dir := variant(t, "", nil)
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			t.Fatal(err)
		}
		_, err := load(os.DirFS(dir), nil)
		if !errors.Is(err, data.ErrMissing) || !strings.Contains(err.Error(), filepath.Base(f)) {
			t.Errorf("without %s: error %v, want data.ErrMissing naming the file", f, err)
		}
	}
}

// loadReal loads the real tables once per test binary.
var loadReal = datatest.Once(datatest.Real, func(dir fs.FS) (*Module, error) { return load(dir, nil) })

func TestRealData(t *testing.T) {
	m := loadReal(t)
	want := map[string]int{SourceWRC: 3141, SourceWHP2020: 3108, SourceWHP2014: 3108}
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
		for _, id := range scored {
			if a, b := value(fips, id), value("25025", id); a < 100*b {
				t.Errorf("%s %s = %v, not 100x Suffolk's %v", id, fips, a, b)
			}
		}
		if a := value(fips, IDWHP2020HighShare); a < 20 {
			t.Errorf("WHP 2020 high share %s = %.1f%%, want > 20%%", fips, a)
		}
	}
	if v := value("25025", IDWHP2014HighShare); v > 1 {
		t.Errorf("Suffolk WHP 2014 high share = %.2f%%, want < 1%%", v)
	}
	if v := value("06005", IDWHP2014HighShare); v < 75 {
		t.Errorf("Amador WHP 2014 high share = %.1f%%, want > 75%% (PROVENANCE: 0.79 of all cells)", v)
	}
	if v := value("06037", IDFutureLateHigher); v < 99 {
		t.Errorf("Los Angeles late-century higher-warming projection = %v, want >= 99", v)
	}
	// PROVENANCE spot checks of WHP 2020 (classes 4 + 5, share of all cells).
	for fips, want := range map[string]float64{"41033": 85, "06073": 56, "06037": 37, "17031": 0} {
		if v := value(fips, IDWHP2020HighShare); math.Abs(v-want) > 0.5 {
			t.Errorf("WHP 2020 high share %s = %.2f%%, PROVENANCE says %.0f%%", fips, v, want)
		}
	}
}

// TestRealHomesNotLand: the measures that score are taken where the homes
// are. Butte County's homes (Paradise, Chico) burn far more often than
// Miami-Dade's or Manhattan's, although Miami-Dade has the larger share of
// high-hazard land (the Everglades).
func TestRealHomesNotLand(t *testing.T) {
	m := loadReal(t)
	value := func(fips, id string) float64 {
		t.Helper()
		in, ok := indicator(m.Measure(site(fips)), id)
		if !ok {
			t.Fatalf("%s: no %s indicator", fips, id)
		}
		return in.Value
	}
	const butte, miami, newYork = "06007", "12086", "36061"
	for _, id := range scored {
		for _, other := range []string{miami, newYork} {
			if a, b := value(butte, id), value(other, id); !(a > b) {
				t.Errorf("%s: Butte %v not above %s %v", id, a, other, b)
			}
		}
	}
	if a, b := value(butte, IDWHP2020HighShare), value(miami, IDWHP2020HighShare); !(b > a) {
		t.Errorf("WHP 2020: Miami-Dade %.1f%% not above Butte %.1f%% (the Everglades)", b, a)
	}
	// Manhattan's homes: below 1 in 10,000 a year, exposed or all.
	if v := value(newYork, IDBurnProbability); !(v < 1e-4) {
		t.Errorf("New York County burn probability %v, want below 1 in 10,000", v)
	}
	if v := value(newYork, IDHomesExposedShare); !(v < 1e-5) {
		t.Errorf("New York County share of homes reached %v, want below 1 in 100,000", v)
	}
	// Exposed HUs never exceed all HUs, so the share of all homes reached is
	// never above the exposed homes' mean, and both are annual
	// probabilities.
	for n := 1000; n < 57000; n++ {
		fips := twoDigits(n/1000) + threeDigits(n%1000)
		got := m.Measure(site(fips))
		bp, okB := indicator(got, IDBurnProbability)
		sh, okS := indicator(got, IDHomesExposedShare)
		if okB != okS {
			t.Errorf("%s: burn probability %v but share of homes %v", fips, okB, okS)
			continue
		}
		if okB && (sh.Value > bp.Value*(1+1e-12) || bp.Value > 0.05) {
			t.Errorf("%s: share of homes reached %v, exposed homes' burn probability %v", fips, sh.Value, bp.Value)
		}
	}
}

// TestRealCoverage: every state county of the 2023 geography (as keyed by
// NRI v1.20) is scored from WRC, except the District of Columbia, which
// WRC v1 omits and which keeps only context; every territory falls back.
func TestRealCoverage(t *testing.T) {
	dir := datatest.Real(t)
	m := loadReal(t)
	tests := []struct {
		fips       string
		has, lacks []string
	}{
		{"11001", []string{IDWHP2020HighShare, IDWHP2014HighShare, IDFutureMidLower}, scored}, // DC: no WRC row
		{"15003", []string{IDBurnProbability, IDFutureMidLower}, whps},                        // HI: WHP is CONUS only
		{"02020", scored, whps}, // AK
		{"09170", join(scored, whps, []string{IDFutureLateHigher}), nil},                       // CT planning region
		{"02066", []string{IDBurnProbability, IDFutureLateLower}, whps},                        // Copper River
		{"46102", join(scored, whps), nil},                                                     // Oglala Lakota (WHP 2014: Shannon)
		{"72127", nil, join(scored, whps, []string{IDFutureMidLower})},                         // PR: NA everywhere
		{"66010", nil, join(scored, whps, []string{IDFutureMidLower})},                         // Guam
		{"02013", []string{IDBurnProbability, IDHomesExposedShare, IDRelativeRiskToHome}, nil}, // Aleutians East: empty totals
		{"51019", join(scored, whps), nil},                                                     // Bedford VA (absorbed Bedford city)
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
			switch {
			case st >= 60:
				territories++
				if has {
					t.Errorf("territory %s has wildfire hazard data", fips)
				}
			case fips == "11001":
				if has {
					t.Error("DC has wildfire hazard data, but WRC v1 has no row for it")
				}
			default:
				if !has {
					t.Errorf("county %s has no wildfire hazard data", fips)
				}
				covered++
			}
		}
	}
	if covered != 3143 || territories != 88 {
		t.Errorf("checked %d state counties and %d territory units, want 3143 and 88", covered, territories)
	}
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }
func threeDigits(n int) string {
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}

func BenchmarkLoad(b *testing.B) {
	dir := datatest.Real(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := load(dir, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMeasure(b *testing.B) {
	m, err := load(datatest.Real(b), nil)
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
