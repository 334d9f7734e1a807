package landslide

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
	"github.com/locrisk/locrisk/internal/risk/nri"
	"github.com/locrisk/locrisk/internal/risk/population"
	"github.com/locrisk/locrisk/internal/risk/terrain"
)

// fakeGround is a terrain with the same slope and relief everywhere, on a
// grid of cellKm; ok false is a site outside every grid.
type fakeGround struct {
	slope, relief, cellKm float64
	elevation             float64 // 0 reads as 500 m
	ok                    bool
	radii                 *radii // the relief radii asked for, when set
}

// radii records relief radii; Load asks from several goroutines.
type radii struct {
	mu   sync.Mutex
	last float64
}

func (f fakeGround) Elevation(p geo.Point) (terrain.Sample, bool) {
	e := f.elevation
	if e == 0 {
		e = 500
	}
	return terrain.Sample{Metres: e, Source: "fake-grid", CellKm: f.cellKm}, f.ok
}

func (f fakeGround) Slope(p geo.Point, r float64) (terrain.Sample, bool) {
	return terrain.Sample{Metres: f.slope, Source: "fake-grid", CellKm: f.cellKm}, f.ok
}

func (f fakeGround) Relief(p geo.Point, r float64) (terrain.Sample, bool) {
	if f.radii != nil {
		f.radii.mu.Lock()
		f.radii.last = r
		f.radii.mu.Unlock()
	}
	return terrain.Sample{Metres: f.relief, Source: "fake-grid", CellKm: f.cellKm}, f.ok
}

// steepGround is the fixtures' terrain: a mountain front everywhere.
var steepGround = fakeGround{slope: 12, relief: 600, cellKm: 1.9, ok: true}

// loadExposure reads what the module needs beside the catalog from dir:
// the county boundaries (to place events), the block-group residents and
// the NRI table; the terrain is the real one when ground is nil.
func loadExposure(fsys fs.FS, ground Terrain) (Exposure, error) {
	cov, err := coverage.Load(fsys)
	if err != nil {
		return Exposure{}, err
	}
	x, err := population.Load(fsys)
	if err != nil {
		return Exposure{}, err
	}
	countyOf := func(p geo.Point) (string, bool) {
		c, _, ok := cov.Locate(p)
		if !ok {
			return "", false
		}
		return c.FIPS, true
	}
	tab, err := nri.Load(fsys)
	if err != nil {
		return Exposure{}, err
	}
	if ground == nil {
		m, err := terrain.Load(fsys)
		if err != nil {
			return Exposure{}, err
		}
		ground = m
	}
	return Exposure{Residents: population.BuildProfiles(x, countyOf), CountyOf: countyOf, NRI: tab, Terrain: ground}, nil
}

var fixtureExposure = datatest.Once(datatest.Fixture, func(fsys fs.FS) (Exposure, error) {
	return loadExposure(fsys, steepGround)
})

func fixture(t *testing.T) *Module {
	t.Helper()
	m, err := Load(datatest.Fixture(t), fixtureExposure(t))
	if err != nil {
		t.Fatalf("Load(fixtures): %v", err)
	}
	return m
}

func indicator(m hazard.Measurement, id string) (hazard.Indicator, bool) {
	for _, in := range m.Indicators {
		if in.ID == id {
			return in, true
		}
	}
	return hazard.Indicator{}, false
}

func TestLoadFixture(t *testing.T) {
	m := fixture(t)
	// 14 rows: 2 without usable coordinates, 1 snow avalanche and 1 placed
	// only to within 100 km are not indexed.
	if got := m.Rows(); len(got) != 1 || got["nasa-glc"] != 14 {
		t.Errorf("Rows() = %v, want nasa-glc: 14", got)
	}
	if m.Skipped() != 2 || m.Events() != 10 {
		t.Errorf("skipped %d, indexed %d; want 2 and 10", m.Skipped(), m.Events())
	}
	for _, id := range m.Sources() {
		if _, ok := data.SourceByID(id); !ok {
			t.Errorf("Sources() = %v: %s is not in the catalog", m.Sources(), id)
		}
	}
	if m.Name() != hazard.Landslide {
		t.Errorf("Name() = %q", m.Name())
	}
}

func TestMeasure(t *testing.T) {
	m := fixture(t)
	// w is one event's weight in the density at d km, per catalog year.
	w := func(d float64) float64 { return math.Exp(-d/10) / 30 }
	tests := []struct {
		name        string
		site        hazard.Site
		density     float64 // from the distances to 0.1 km, so good to 0.5%
		count       float64
		nearest     float64
		nearestText string
	}{
		// Three events at 3.8, 9.6 and 11.3 km; the avalanche (1 km away),
		// the event placed to 100 km and the two rows with bad
		// coordinates do not count.
		{"King County", hazard.Site{Lat: 47.49, Lon: -121.83, StateCode: "WA", CountyFIPS: "53033"}, w(3.8) + w(9.6) + w(11.3), 3, 3.8, ""},
		// 24.9 km counts, 25.1 km does not; both weigh in the density.
		{"radius edge", hazard.Site{Lat: 40.0, Lon: -100.0, StateCode: "NE", CountyFIPS: "31065"}, w(24.9) + w(25.1), 1, 24.9, ""},
		// An uncoded event across the Canadian border, 21.4 km away.
		{"border", hazard.Site{Lat: 49.0, Lon: -122.26, StateCode: "WA", CountyFIPS: "53073"}, w(21.4), 1, 21.4, ""},
		{"Kansas", hazard.Site{Lat: 39.05, Lon: -95.68, StateCode: "KS", CountyFIPS: "20177"}, 0, 0, 100, "none within 100 km"},
		{"San Juan PR", hazard.Site{Lat: 18.41, Lon: -66.06, StateCode: "PR", CountyFIPS: "72127"}, w(3.5), 1, 3.5, ""},
		{"American Samoa", hazard.Site{Lat: -14.28, Lon: -170.70, StateCode: "AS", CountyFIPS: "60010"}, w(12.3), 1, 12.3, ""},
		// Accuracy "unknown" is kept.
		{"Honolulu", hazard.Site{Lat: 21.46, Lon: -157.97, StateCode: "HI", CountyFIPS: "15003"}, w(20.2), 1, 20.2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.Measure(tc.site)
			// Reported events are context: the ratio (the posterior of
			// the site's counts and its county's prior) where the county's
			// residents are counted, and the density, carry no weight.
			_, counted := m.county[tc.site.CountyFIPS]
			d, ok := indicator(got, IndicatorDensity)
			if !ok || math.Abs(d.Value-tc.density) > 0.005*tc.density || !d.Ranked || d.Weight != 0 || d.Source != "nasa-glc" || d.Unit != "weighted reports per year" {
				t.Errorf("density indicator %+v, want ranked density %.6g without weight", d, tc.density)
			}
			r, ok := indicator(got, IndicatorRatio)
			if !counted {
				if ok {
					t.Errorf("ratio %+v where no residents are counted", r)
				}
				if !slices.Contains(got.Notes, noResidentsNote) {
					t.Errorf("notes %q do not say why the density scores", got.Notes)
				}
			} else {
				o, e := counts(m, geo.Point{Lat: tc.site.Lat, Lon: tc.site.Lon})
				want := Posterior(o, e, m.Prior(tc.site.CountyFIPS), PriorStrength)
				if !ok || r.Value != want || !r.Ranked || r.Weight != 0 || r.Unit != "times the national rate" || r.Resolution.Kind != hazard.ResReportedEvents {
					t.Errorf("ratio indicator %+v, want ranked %v without weight", r, want)
				}
			}
			// The count within 25 km is ranked context: no weight.
			c, ok := indicator(got, IndicatorCount)
			if !ok || c.Value != tc.count || !c.Ranked || c.Weight != 0 || c.Unit != "count" || c.Source != "nasa-glc" {
				t.Errorf("count indicator %+v, want ranked count %v without weight", c, tc.count)
			}
			n, ok := indicator(got, IndicatorNearest)
			if !ok || n.Value != tc.nearest || n.Text != tc.nearestText || n.Ranked || n.Weight != 0 {
				t.Errorf("nearest indicator %+v, want %v km %q, unranked", n, tc.nearest, tc.nearestText)
			}
			if got.Quality != qualityFineGrid || !got.HasHazardData() {
				t.Errorf("quality %v, has data %v; want %v and data", got.Quality, got.HasHazardData(), qualityFineGrid)
			}
			// The terrain scores on the grid (and the county's allocated
			// score); reported events around the site are context.
			for _, in := range got.Indicators {
				if in.Peril != hazard.PerilLandslide {
					t.Errorf("%s: peril %q, want %q", in.ID, in.Peril, hazard.PerilLandslide)
				}
				want, weighted := hazard.ResReportedEvents, false
				switch in.ID {
				case IndicatorSlope, IndicatorRelief:
					want = hazard.ResGrid
				case IndicatorExcess, IndicatorHillside:
					want, weighted = hazard.ResGrid, true
				case IndicatorAllocated:
					want, weighted = hazard.ResCountyAllocated, true
				}
				if in.Resolution.Kind != want || (in.Weight > 0) != weighted {
					t.Errorf("%s: resolution %q weight %v, want %q weighted %v", in.ID, in.Resolution.Kind, in.Weight, want, weighted)
				}
				if in.Weight > 0 && !in.Ranked {
					t.Errorf("%s: weighted but not ranked", in.ID)
				}
			}
		})
	}
}

// TestDensity checks the distance-weighted density at points due south of
// the fixture's lone Oahu event (21.37 N, 157.80 W; nothing else within
// 60 km), where the distance is exact: exp(-d/10 km) / 30 years out to
// 60 km, 0 beyond, and no step at the 25 km count radius.
func TestDensity(t *testing.T) {
	m := fixture(t)
	south := func(km float64) hazard.Site {
		return hazard.Site{Lat: 21.37 - km/geo.KmPerDegLat, Lon: -157.80, StateCode: "HI"}
	}
	tests := []struct {
		km      float64
		density float64
		count   float64
	}{
		{0, 1.0 / 30, 1},
		{2, math.Exp(-0.2) / 30, 1},
		{15, math.Exp(-1.5) / 30, 1},
		{24.9, math.Exp(-2.49) / 30, 1},
		{25.1, math.Exp(-2.51) / 30, 0},
		{59.9, math.Exp(-5.99) / 30, 0},
		{60.1, 0, 0},
		{80, 0, 0},
	}
	for _, tc := range tests {
		got := m.Measure(south(tc.km))
		d, _ := indicator(got, IndicatorDensity)
		if math.Abs(d.Value-tc.density) > 1e-12 {
			t.Errorf("%g km: density %.15g, want %.15g", tc.km, d.Value, tc.density)
		}
		if c, _ := indicator(got, IndicatorCount); c.Value != tc.count {
			t.Errorf("%g km: count %g, want %g", tc.km, c.Value, tc.count)
		}
		if !got.HasHazardData() {
			t.Errorf("%g km: no weighted indicator; a density of 0 is a measurement", tc.km)
		}
	}
	// Across the 25 km count radius the count steps from 1 to 0, the
	// density falls by only (e^-2.49 - e^-2.51) / 30, about 5.5e-5.
	in, out := m.Measure(south(24.9)), m.Measure(south(25.1))
	a, _ := indicator(in, IndicatorDensity)
	b, _ := indicator(out, IndicatorDensity)
	if diff := a.Value - b.Value; diff <= 0 || diff > 6e-5 {
		t.Errorf("density %g at 24.9 km, %g at 25.1 km: a fall of %g, want a small positive one (< 6e-5)", a.Value, b.Value, diff)
	}
	// Two events: the sum of their weights (radius edge, Nebraska, events
	// 24.9 and 25.1 km due north, the count taking only the first).
	ne := m.Measure(hazard.Site{Lat: 40.0, Lon: -100.0, StateCode: "NE", CountyFIPS: "31065"})
	want := (math.Exp(-(40.22393-40)*geo.KmPerDegLat/10) + math.Exp(-(40.22573-40)*geo.KmPerDegLat/10)) / 30
	if d, _ := indicator(ne, IndicatorDensity); math.Abs(d.Value-want) > 1e-12 {
		t.Errorf("Nebraska: density %.15g, want %.15g", d.Value, want)
	}
}

func TestNotes(t *testing.T) {
	m := fixture(t)
	for _, tc := range []struct {
		site   hazard.Site
		want   string
		second string // the second note's opening
	}{
		{hazard.Site{Lat: 47.49, Lon: -121.83, CountyFIPS: "53033"}, "NASA's catalog lists 3 reported landslides within 25 km (1988-2017); these are media-reported events, not a susceptibility map.", "Distance-weighted reports within 60 km: "},
		{hazard.Site{Lat: 40.0, Lon: -100.0, CountyFIPS: "31065"}, "NASA's catalog lists 1 reported landslide within 25 km (1988-2017); these are media-reported events, not a susceptibility map.", "The Census centres of population used to count the residents"},
	} {
		// The terrain first, then (these fixture counties have no NRI
		// landslide score) why only the terrain scores, then the reports.
		got := m.Measure(tc.site).Notes
		if len(got) != 4 || !strings.HasPrefix(got[0], "Terrain around the site: steep ground") || !strings.HasPrefix(got[1], "FEMA's National Risk Index has no landslide score") || got[2] != tc.want || !strings.HasPrefix(got[3], tc.second) {
			t.Errorf("notes %q, want the terrain, the missing NRI score, %q then %q...", got, tc.want, tc.second)
		}
	}
}

// TestPosterior checks the shrinkage: no data gives the prior, many
// reports the observed ratio, and small counts stay near the prior.
func TestPosterior(t *testing.T) {
	const a = PriorStrength
	tests := []struct {
		name     string
		o, e, mu float64
		want     float64
		lo, hi   float64 // bounds when want is 0
	}{
		{name: "no reports, no residents: the prior", o: 0, e: 0, mu: 2, want: 2},
		{name: "no reports, many residents: toward 0", o: 0, e: 100, mu: 2, want: 3 / (100 + 1.5)},
		{name: "as expected at the national rate", o: 10, e: 10, mu: 1, want: 1},
		{name: "one report where nobody lives", o: 1, e: 0, mu: 2, want: 2 * (1 + a) / a},
		{name: "two reports, 0.01 expected: not 200", o: 2, e: 0.01, mu: 1, lo: 1.6, hi: 1.7},
		{name: "many reports: the observed ratio", o: 10000, e: 1000, mu: 1, lo: 9.9, hi: 10.1},
	}
	for _, tc := range tests {
		got := Posterior(tc.o, tc.e, tc.mu, a)
		if tc.want != 0 && math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: Posterior(%v, %v, %v) = %v, want %v", tc.name, tc.o, tc.e, tc.mu, got, tc.want)
		}
		if tc.want == 0 && (got < tc.lo || got > tc.hi) {
			t.Errorf("%s: Posterior(%v, %v, %v) = %v, want in [%v, %v]", tc.name, tc.o, tc.e, tc.mu, got, tc.lo, tc.hi)
		}
	}
	// However few the residents, k reports move the ratio at most to
	// (k + a) / a times the prior.
	for k := 0.0; k <= 3; k++ {
		for _, e := range []float64{0, 1e-6, 0.01, 0.5} {
			if got, max := Posterior(k, e, 1, a), (k+a)/a; got > max+1e-12 {
				t.Errorf("%v reports, %v expected: ratio %v above %v", k, e, got, max)
			}
		}
	}
}

// TestRateAndPriors checks r0 and the class priors on the fixtures: the
// counted events are those in a county with residents, r0 is their number
// over those counties' residents, and each class prior is its pool's
// ratio shrunk toward 1.
func TestRateAndPriors(t *testing.T) {
	m := fixture(t)
	ex := fixtureExposure(t)
	r0, n, res := m.Rate()
	var want float64
	for _, f := range ex.Residents.Counties() {
		want += ex.Residents.Residents(f)
	}
	if res != want || n < 1 || n > m.Events() || math.Abs(r0-float64(n)/res) > 1e-18 {
		t.Errorf("Rate() = %v, %d, %v; want events / residents with residents %v", r0, n, res, want)
	}
	events := 0
	for _, c := range m.Classes() {
		events += c.Events
		if wantMu := (float64(c.Events) + PriorStrength) / (r0*c.Residents + PriorStrength); math.Abs(c.Mu-wantMu) > 1e-12 || c.Mu <= 0 {
			t.Errorf("class %s: mu %v, want %v", c.Rating, c.Mu, wantMu)
		}
	}
	if events > n {
		t.Errorf("classes hold %d events, more than the %d counted", events, n)
	}
	// A county outside the table gets the national ratio.
	if mu := m.Prior("99999"); mu != 1 {
		t.Errorf("Prior(unknown county) = %v, want 1", mu)
	}
	// Every county's prior is its own reports over its residents shrunk
	// toward its class's prior: between the two, and below the class
	// prior where the county has no report at all.
	for _, f := range ex.Residents.Counties() {
		k, e, class := float64(m.inCounty[f]), r0*ex.Residents.Residents(f), m.classPrior(f)
		mu := m.Prior(f)
		if want := Posterior(k, e, class, PriorStrength); math.Abs(mu-want) > 1e-12 {
			t.Errorf("county %s: prior %v, want %v", f, mu, want)
		}
		if raw := k / e; mu < min(raw, class)-1e-12 || mu > max(raw, class)+1e-12 {
			t.Errorf("county %s: prior %v outside its own ratio %v and its class's %v", f, mu, raw, class)
		}
		if k == 0 && !(mu < class) {
			t.Errorf("county %s without reports: prior %v, class %v", f, mu, class)
		}
	}
	// The pooled resident cells sum to the indexed residents.
	var pooled float64
	for _, p := range m.resPop {
		pooled += p
	}
	if x := ex.Residents.Index(); math.Abs(pooled-x.Total()) > 1e-6*x.Total() {
		t.Errorf("pooled residents %v, indexed %v", pooled, x.Total())
	}
}

func TestKept(t *testing.T) {
	tests := []struct {
		category, accuracy string
		want               bool
	}{
		{"landslide", "exact", true},
		{"mudslide", "1km", true},
		{"debris_flow", "50km", true},
		{"landslide", "100km", false},
		{"rock_fall", "250km", false},
		{"landslide", "unknown", true},
		{"landslide", "", true},
		{"snow_avalanche", "exact", false},
	}
	for _, tc := range tests {
		if got := kept(tc.category, tc.accuracy); got != tc.want {
			t.Errorf("kept(%q, %q) = %v, want %v", tc.category, tc.accuracy, got, tc.want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	rel := strings.TrimSuffix(data.Path("nasa-glc"), ".gz")
	write := func(t *testing.T, content string) string {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	ex := fixtureExposure(t)
	if _, err := Load(os.DirFS(t.TempDir()), Exposure{}); err == nil {
		t.Error("no exposure: no error")
	}
	if _, err := Load(os.DirFS(write(t, "event_id,lon,lat\n1,-122,47\n")), ex); err == nil || !strings.Contains(err.Error(), "line 1: header lacks") {
		t.Errorf("broken header: error %v", err)
	}
	if _, err := Load(os.DirFS(write(t, "")), ex); err == nil {
		t.Error("empty file: no error")
	}
	if _, err := Load(os.DirFS(t.TempDir()), ex); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: error %v", err)
	}
	m, err := Load(os.DirFS(write(t, "location_accuracy,landslide_category,longitude,latitude\nexact,landslide,abc,47\n1km,landslide,-122,NaN\n1km,landslide,-122,95\n1km,landslide,-122,47\n")), ex)
	if err != nil || m.Skipped() != 3 || m.Events() != 1 {
		t.Errorf("bad coordinates: err %v, skipped %d, events %d; want 3 skipped, 1 event", err, m.Skipped(), m.Events())
	}
}

var realModule = datatest.Once(datatest.Real, func(dir fs.FS) (*Module, error) {
	ex, err := loadExposure(dir, nil)
	if err != nil {
		return nil, err
	}
	return Load(dir, ex)
})

func TestReal(t *testing.T) {
	m := realModule(t)
	if got := m.Rows()["nasa-glc"]; got != 11032 {
		t.Errorf("rows %d, want 11032", got)
	}
	count := func(lat, lon float64) float64 {
		in, _ := indicator(m.Measure(hazard.Site{Lat: lat, Lon: lon}), IndicatorCount)
		return in.Value
	}
	seattle, portland := count(47.6062, -122.3321), count(45.5152, -122.6784)
	wichita, topeka := count(37.6872, -97.3301), count(39.0473, -95.6752)
	t.Logf("reported landslides within 25 km: Seattle %v, Portland %v, Wichita %v, Topeka %v", seattle, portland, wichita, topeka)
	for _, ks := range []float64{wichita, topeka} {
		if seattle <= ks || portland <= ks {
			t.Errorf("Seattle %v / Portland %v should exceed Kansas %v", seattle, portland, ks)
		}
	}
	if seattle < 50 || portland < 50 {
		t.Errorf("Seattle %v, Portland %v: want at least 50 each", seattle, portland)
	}
	// The density (context since the report ratio) orders the same places
	// the same way; the ratio is the only weighted indicator.
	density := func(lat, lon float64, fips string) float64 {
		ms := m.Measure(hazard.Site{Lat: lat, Lon: lon, CountyFIPS: fips})
		in, ok := indicator(ms, IndicatorDensity)
		if !ok || in.Weight != 0 {
			t.Fatalf("(%v, %v): density indicator %+v, want context (weight 0)", lat, lon, in)
		}
		for _, o := range ms.Indicators {
			if o.Resolution.Kind == hazard.ResReportedEvents && o.Weight != 0 {
				t.Errorf("%s carries weight %v, want context only", o.ID, o.Weight)
			}
		}
		return in.Value
	}
	dSea, dPdx := density(47.6062, -122.3321, "53033"), density(45.5152, -122.6784, "41051")
	dWic, dTop := density(37.6872, -97.3301, "20173"), density(39.0473, -95.6752, "20177")
	t.Logf("weighted reports per year: Seattle %.3f, Portland %.3f, Wichita %.4f, Topeka %.4f", dSea, dPdx, dWic, dTop)
	for _, ks := range []float64{dWic, dTop} {
		if dSea <= ks || dPdx <= ks {
			t.Errorf("density Seattle %v / Portland %v should exceed Kansas %v", dSea, dPdx, ks)
		}
	}
	// Every event within 60 km weighs at most 1/30 per year, and at least
	// e^-2.5/30 within 25 km: the density is bounded by the counts.
	if dSea < seattle*math.Exp(-2.5)/30 || dPdx < portland*math.Exp(-2.5)/30 {
		t.Errorf("density Seattle %v, Portland %v below the 25 km counts' floor", dSea, dPdx)
	}
}

// TestRealRatio checks the report ratio on real data: documented slide
// areas above the downtowns of their counties, and flat downtowns whose
// reports follow the people around not above the national rate. (Downtown
// Colorado Springs is above it: El Paso County's residents reported many
// slides, most of them in the city's west side in 2015.)
func TestRealRatio(t *testing.T) {
	m := realModule(t)
	ratio := func(lat, lon float64, fips string) float64 {
		in, _ := indicator(m.Measure(hazard.Site{Lat: lat, Lon: lon, CountyFIPS: fips}), IndicatorRatio)
		return in.Value
	}
	pairs := []struct {
		slide, city            string
		sLat, sLon, cLat, cLon float64
		fips                   string
	}{
		{"Portuguese Bend", "downtown Los Angeles", 33.74, -118.37, 34.05, -118.24, "06037"},
		{"Big Sur", "Salinas", 36.269, -121.79, 36.6777, -121.6555, "06053"},
		{"La Conchita", "Ventura", 34.3636, -119.4469, 34.2805, -119.2945, "06111"},
		{"Bluebird Canyon", "Santa Ana", 33.5355, -117.7717, 33.7455, -117.8677, "06059"},
	}
	for _, p := range pairs {
		s, c := ratio(p.sLat, p.sLon, p.fips), ratio(p.cLat, p.cLon, p.fips)
		t.Logf("%s %.2f, %s %.2f", p.slide, s, p.city, c)
		if s <= c {
			t.Errorf("%s (%.2f) should exceed %s (%.2f)", p.slide, s, p.city, c)
		}
	}
	for _, d := range []struct {
		name     string
		lat, lon float64
		fips     string
	}{
		{"downtown Phoenix", 33.4484, -112.0740, "04013"},
		{"Houston", 29.7604, -95.3698, "48201"},
		{"Chicago", 41.8781, -87.6298, "17031"},
		{"downtown Los Angeles", 34.05, -118.24, "06037"},
		{"Miami", 25.7617, -80.1918, "12086"},
	} {
		if r := ratio(d.lat, d.lon, d.fips); r >= 1 {
			t.Errorf("%s: ratio %.2f, want below the national rate", d.name, r)
		}
	}
	r0, n, res := m.Rate()
	t.Logf("r0 = %d / %.0f = %.3g", n, res, r0)
	if n < 3000 || n > m.Events() || res < 3.3e8 {
		t.Errorf("r0 from %d events over %.0f residents", n, res)
	}
}

func BenchmarkLoad(b *testing.B) {
	dir := datatest.Real(b)
	ex, err := loadExposure(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Load(dir, ex); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMeasure(b *testing.B) {
	m := realModule(b)
	for _, tc := range []struct {
		name     string
		lat, lon float64
	}{{"Portland", 45.5152, -122.6784}, {"Pittsburgh", 40.4406, -79.9959}, {"Wichita", 37.6872, -97.3301}} {
		b.Run(tc.name, func(b *testing.B) {
			site := hazard.Site{Lat: tc.lat, Lon: tc.lon}
			b.ReportAllocs()
			for b.Loop() {
				m.Measure(site)
			}
		})
	}
}

// counts is O, the distance-weighted count of the events counted in the
// ratio, and E, the count expected at the national rate from the residents
// around p (both summed with exp(-d / 10 km) out to 60 km).
func counts(m *Module, p geo.Point) (o, e float64) {
	m.ix.Within(p, densityRadiusKm, func(i int, d float64) {
		if m.counted[i] {
			o += math.Exp(-d / densityScaleKm)
		}
	})
	return o, m.rate * m.weightedResidents(p)
}

// TestTerrainScores checks the scored indicators against grounds whose
// slope and relief are known: the values themselves, the county's NRI
// landslide score allocated by relief above the plains' floor (every
// fixture block group stands on the same ground, so a site there gets the
// county's score itself), nothing allocated to flat ground, the coarse
// grid's wider relief radius and lower quality, and no scored indicator
// where no grid covers the site.
func TestTerrainScores(t *testing.T) {
	base := fixtureExposure(t)
	site := hazard.Site{Lat: 34.05, Lon: -118.24, StateCode: "CA", CountyFIPS: "06037"}
	score := base.NRI.Hazard(site.CountyFIPS, nriCode)
	if !score.OK {
		t.Fatalf("the fixture NRI table has no landslide score for %s", site.CountyFIPS)
	}
	for _, tc := range []struct {
		name                 string
		ground               fakeGround
		slope, relief, alloc float64 // NaN: indicator absent (the excess follows relief)
		quality              float64
		radius               float64 // the last relief radius asked for
	}{
		{"mountain front", fakeGround{slope: 12, relief: 600, cellKm: 1.9, ok: true}, 12, 600, score.Score, qualityFineGrid, reliefRadiusKm},
		{"gentle hills", fakeGround{slope: 3, relief: 160, cellKm: 1.9, ok: true}, 3, 160, score.Score, qualityFineGrid, reliefRadiusKm},
		{"plains", fakeGround{slope: 0.4, relief: 40, cellKm: 1.9, ok: true}, 0.4, 40, 0, qualityFineGrid, reliefRadiusKm},
		// 160 m of relief spread over gentle slopes: rolling land.
		{"rolling land", fakeGround{slope: 0.6, relief: 160, cellKm: 1.9, ok: true}, 0.6, 160, 0, qualityFineGrid, reliefRadiusKm},
		{"coarse grid", fakeGround{slope: 5, relief: 900, cellKm: 9.3, ok: true}, 5, 900, score.Score, qualityCoarseGrid, 1.5 * 9.3},
		{"no grid", fakeGround{}, math.NaN(), math.NaN(), math.NaN(), quality, reliefRadiusKm},
		// ETOPO5 puts the island site at sea: nothing measured, rather
		// than a false "flat".
		{"coarse grid at sea", fakeGround{slope: 0, relief: 0, cellKm: 9.3, elevation: -1100, ok: true}, math.NaN(), math.NaN(), math.NaN(), quality, 1.5 * 9.3},
		// The fine grid is trusted at the shore: a low coast is flat.
		{"fine grid at the shore", fakeGround{slope: 0.1, relief: 5, cellKm: 1.9, elevation: -3, ok: true}, 0.1, 5, 0, qualityFineGrid, reliefRadiusKm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := base
			var asked radii
			g := tc.ground
			g.radii = &asked
			ex.Terrain = g
			m, err := Load(datatest.Fixture(t), ex)
			if err != nil {
				t.Fatal(err)
			}
			got := m.Measure(site)
			for _, want := range []struct {
				id    string
				value float64
				w     float64
			}{
				{IndicatorSlope, tc.slope, 0},
				{IndicatorRelief, tc.relief, 0},
				{IndicatorExcess, excess(tc.slope, tc.relief, tc.ground.cellKm), weightExcess},
				{IndicatorHillside, hillside(tc.slope, tc.relief), weightHillside},
				{IndicatorAllocated, tc.alloc, weightAllocated},
			} {
				in, ok := indicator(got, want.id)
				if math.IsNaN(want.value) {
					if ok {
						t.Errorf("%s = %+v where no grid covers the site", want.id, in)
					}
					continue
				}
				if !ok || math.Abs(in.Value-want.value) > 0.01 || in.Weight != want.w || !in.Ranked {
					t.Errorf("%s = %+v, want %v with weight %v", want.id, in, want.value, want.w)
				}
			}
			if got.Quality != tc.quality || got.HasHazardData() == math.IsNaN(tc.slope) {
				t.Errorf("quality %v, has data %v; want %v", got.Quality, got.HasHazardData(), tc.quality)
			}
			if math.Abs(asked.last-tc.radius) > 1e-9 {
				t.Errorf("relief radius %v km, want %v km", asked.last, tc.radius)
			}
		})
	}
}

// TestAllocationKeepsCountyMean checks the allocation against a ground
// that varies: over the county's residents, the allocated value averages
// to the county's NRI score (the allocation moves the county's figure onto
// its slopes; it does not raise or lower it), and a site on ground flatter
// than the plains' floor gets none of it.
func TestAllocationKeepsCountyMean(t *testing.T) {
	ex := fixtureExposure(t)
	ex.Terrain = slopedGround
	m, err := Load(datatest.Fixture(t), ex)
	if err != nil {
		t.Fatal(err)
	}
	x := ex.Residents.Index()
	sums := map[string][2]float64{}
	for i := 0; i < x.Len(); i++ {
		p, n := x.Centre(i)
		f, ok := ex.CountyOf(p)
		if !ok || !ex.NRI.Hazard(f, nriCode).OK {
			continue
		}
		got := m.Measure(hazard.Site{Lat: p.Lat, Lon: p.Lon, CountyFIPS: f})
		in, ok := indicator(got, IndicatorAllocated)
		if !ok {
			t.Fatalf("%s: no allocated indicator", f)
		}
		if ex, _ := indicator(got, IndicatorExcess); ex.Value == 0 && in.Value != 0 {
			t.Errorf("%s: %v allocated on plains", f, in.Value)
		}
		s := sums[f]
		sums[f] = [2]float64{s[0] + n*in.Value, s[1] + n}
	}
	checked := 0
	for f, s := range sums {
		mean, _ := m.ExcessMean(f)
		if mean == 0 {
			continue
		}
		checked++
		if want := ex.NRI.Hazard(f, nriCode).Score; math.Abs(s[0]/s[1]-want) > 0.01*want+0.02 {
			t.Errorf("county %s: residents' mean allocated score %.3f, want the county's %.3f", f, s[0]/s[1], want)
		}
	}
	if checked == 0 {
		t.Fatal("no county with relief above the floor in the fixture")
	}
	flat, ok := indicator(m.Measure(hazard.Site{Lat: 47.05, Lon: -118.24, CountyFIPS: "06037"}), IndicatorAllocated)
	if !ok || flat.Value != 0 {
		t.Errorf("a site with 50 m of relief gets %+v allocated, want 0", flat)
	}
}

// excess is the relief above the plains the test expects: relief less the
// floor on hilly ground (on the coarse grid relief alone decides).
func excess(slope, relief, cellKm float64) float64 {
	if math.IsNaN(relief) {
		return relief
	}
	if relief <= reliefFloorM || (cellKm <= coarseCellKm && slope < gentleSlopeDeg) {
		return 0
	}
	return relief - reliefFloorM
}

// hillside is the scored slope: the slope on hilly ground, else 0 (NaN
// stays NaN: no grid).
func hillside(slope, relief float64) float64 {
	if (relief > reliefFloorM && slope >= gentleSlopeDeg) || math.IsNaN(relief) {
		return slope
	}
	return 0
}

// reliefGround is hilly ground (a 5-degree slope) whose relief at a point
// the function gives: the allocation tests set the relief per site.
type reliefGround func(p geo.Point) float64

func (reliefGround) Elevation(p geo.Point) (terrain.Sample, bool) {
	return terrain.Sample{Metres: 300, Source: "fake-grid", CellKm: 1.9}, true
}

func (reliefGround) Slope(p geo.Point, r float64) (terrain.Sample, bool) {
	return terrain.Sample{Metres: 5, Source: "fake-grid", CellKm: 1.9}, true
}

func (g reliefGround) Relief(p geo.Point, r float64) (terrain.Sample, bool) {
	return terrain.Sample{Metres: g(p), Source: "fake-grid", CellKm: 1.9}, true
}

// slopedGround's relief rises 100 m per 0.1 degree north of 47 N, 0 south
// of it: only the ratios matter.
var slopedGround = reliefGround(func(p geo.Point) float64 { return max(0, (p.Lat-47)*1000) })

// spikeGround has 150 m of relief everywhere but at 10 N, where it has
// 5,000 m.
var spikeGround = reliefGround(func(p geo.Point) float64 {
	if p.Lat == 10 {
		return 5000
	}
	return 150
})

// TestAllocationCap checks that a site far hillier than its county's
// residents gets at most allocCap times the county's score.
func TestAllocationCap(t *testing.T) {
	ex := fixtureExposure(t)
	ex.Terrain = spikeGround
	m, err := Load(datatest.Fixture(t), ex)
	if err != nil {
		t.Fatal(err)
	}
	score := ex.NRI.Hazard("06037", nriCode).Score
	if mean, _ := m.ExcessMean("06037"); mean != 50 {
		t.Fatalf("county mean %v, want 50 (150 m of relief everywhere)", mean)
	}
	spike, _ := indicator(m.Measure(hazard.Site{Lat: 10, Lon: -118.24, CountyFIPS: "06037"}), IndicatorAllocated)
	plain, _ := indicator(m.Measure(hazard.Site{Lat: 34.05, Lon: -118.24, CountyFIPS: "06037"}), IndicatorAllocated)
	if math.Abs(spike.Value-allocCap*score) > 0.01 || math.Abs(plain.Value-score) > 0.01 {
		t.Errorf("spike %v, plain %v; want %v (capped) and %v", spike.Value, plain.Value, allocCap*score, score)
	}
}
