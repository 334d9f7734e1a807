package severeweather

import (
	"errors"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// fixtureCounties are invented land areas (km²), residents and interior
// points for some fixture counties, each more than regionKm from every
// other, so each is its own region and its rate is its reports over its
// exposure. 02016 and 66010 are here so the territory cases reach the
// coverage rules rather than a missing area; 00000 has no land.
var fixtureCounties = map[string]County{
	"40109": {1800, 800000, geo.Point{Lat: 35.55, Lon: -97.41}},
	"08031": {400, 715000, geo.Point{Lat: 39.76, Lon: -104.88}},
	"53033": {5500, 2270000, geo.Point{Lat: 47.49, Lon: -121.83}},
	"17031": {2450, 5275000, geo.Point{Lat: 41.84, Lon: -87.82}},
	"12086": {5000, 2700000, geo.Point{Lat: 25.61, Lon: -80.50}},
	"06075": {120, 873000, geo.Point{Lat: 37.76, Lon: -122.69}},
	"15003": {1550, 1016000, geo.Point{Lat: 21.46, Lon: -158.01}},
	"72127": {120, 342000, geo.Point{Lat: 18.41, Lon: -66.06}},
	"25025": {150, 797000, geo.Point{Lat: 42.33, Lon: -71.02}},
	"02016": {11000, 5000, geo.Point{Lat: 51.95, Lon: -178.34}},
	"66010": {540, 153000, geo.Point{Lat: 13.44, Lon: 144.77}},
	"00000": {0, 0, geo.Point{Lat: 0, Lon: 0}},
}

func loadFixture(t testing.TB) *Module {
	t.Helper()
	m, err := Load(datatest.Fixture(t), fixtureCounties)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestLoadFixtureRows(t *testing.T) {
	m := loadFixture(t)
	if m.Name() != hazard.SevereWeather {
		t.Errorf("Name() = %q", m.Name())
	}
	for _, id := range m.Sources() {
		if _, ok := data.SourceByID(id); !ok {
			t.Errorf("source %q is not in the data catalog", id)
		}
	}
	want := map[string]int{
		srcTornadoTracks:  23, // 24 rows, one an exact duplicate
		srcTornado2019:    4,  // rows of 2019-2022 only
		srcHurdatAtlantic: 24, // 26 fixes, 2 without longitude
		srcHurdatPacific:  8,  // 9 fixes, 1 without longitude
		srcHail:           9,
		srcWind:           9,
	}
	if got := m.Rows(); !reflect.DeepEqual(got, want) {
		t.Errorf("Rows() = %v, want %v", got, want)
	}
	if m.tstats.duplicates != 1 || m.tstats.badEnd != 1 || m.tstats.pointOnly != 3 {
		t.Errorf("tornado stats %+v: want 1 duplicate, 1 bad end, 3 point-only tracks", m.tstats)
	}
	a, p := m.hstats[atlantic], m.hstats[pacific]
	if a.lonFixed != 3 || a.noLon != 2 || p.noLon != 1 {
		t.Errorf("hurdat stats %+v %+v: want 3 Beulah longitudes fixed, 2+1 empty longitudes dropped", a, p)
	}
	if a.storms != 8 || a.early != 1 || p.storms != 3 {
		t.Errorf("storms: Atlantic %d (early %d), Pacific %d; want 8 (1 before 1900), 3", a.storms, a.early, p.storms)
	}
}

func TestTornadoWeight(t *testing.T) {
	for _, c := range []struct {
		mag  int
		want float32
	}{{-9, 1}, {0, 1}, {1, 1}, {2, 2}, {3, 2}, {4, 3}, {5, 3}} {
		if got := tornadoWeight(c.mag); got != c.want {
			t.Errorf("tornadoWeight(%d) = %v, want %v", c.mag, got, c.want)
		}
	}
}

// TestTornadoRadiusEdge: of two tracks at 39 and 41 km, only the nearer
// counts, even though the farther one is an EF4.
func TestTornadoRadiusEdge(t *testing.T) {
	p := geo.Point{Lat: 38, Lon: -99}
	// The fixture tracks are meant to lie at these distances; check the
	// fixture itself so the test cannot pass on a mis-drawn track.
	for _, c := range []struct {
		seg  geo.Segment
		want float64
	}{
		{geo.Segment{A: geo.Point{Lat: 37.8, Lon: -98.5549}, B: geo.Point{Lat: 38.2, Lon: -98.5549}}, 39},
		{geo.Segment{A: geo.Point{Lat: 37.8, Lon: -99.4679}, B: geo.Point{Lat: 38.2, Lon: -99.4679}}, 41},
	} {
		if d := geo.PointSegmentKm(p, c.seg); math.Abs(d-c.want) > 0.05 {
			t.Fatalf("fixture track %v is %.3f km from %v, want %v", c.seg, d, p, c.want)
		}
	}
	m := loadFixture(t)
	r := m.tornadoAt(p.Lat, p.Lon)
	if r.count != 1 || r.sig != 0 || r.weighted != 1 {
		t.Errorf("tornadoAt(38,-99) = %+v, want only the EF0 at 39 km", r)
	}
}

func TestTornadoAt(t *testing.T) {
	m := loadFixture(t)
	for _, c := range []struct {
		name             string
		lat, lon         float64
		count, sig, days int
		weighted         float64
	}{
		// 1999 F5 and 2013 EF5 tracks, an EF1 and an EF0 on one day in
		// 2010, a 2020 EF1 start point; the 1975 track 150 km away and the
		// 2003 start point (before 2019) do not count.
		{"Oklahoma County", 35.47, -97.52, 5, 2, 4, 3 + 3 + 1 + 1},
		// One tornado of each rating on separate days, unknown (-9) as EF0,
		// plus an exact duplicate row of the EF5 dropped.
		{"EF weighting", 33, -88, 7, 4, 7, 1 + 1 + 1 + 2 + 2 + 3 + 3},
		// Three tornadoes on 1974-04-03 (EF1, EF4, EF0) weigh as one EF4
		// day; the EF0 of the next day adds 1.
		{"outbreak day", 34, -86, 4, 1, 2, 3 + 1},
		// Start points of 2019, 2021 (unrated) and 2022 (EF2) count; the
		// 1995 and 2018 rows of the start-points file do not.
		{"2019-2022 start points", 40, -89, 3, 1, 3, 1 + 2 + 1},
		// A track whose end is 0,0 is its start point, 11 km away...
		{"unknown end", 36, -95, 1, 0, 1, 1},
		// ...and does not run towards 0,0: this point lies on the line
		// from the second such track's start to 0,0.
		{"not a line to 0,0", 35.625, -89.3, 0, 0, 0, 0},
		// A 0.5 mile track with an end 111 km away keeps its start only.
		{"bad end, on the chord", 37, -100, 0, 0, 0, 0},
		{"bad end, near the start", 36.5, -100.2, 1, 0, 1, 1},
		{"Seattle", 47.61, -122.33, 0, 0, 0, 0},
		{"Guam", 13.47, 144.75, 0, 0, 0, 0},
	} {
		r := m.tornadoAt(c.lat, c.lon)
		if r.count != c.count || r.sig != c.sig || r.days != c.days || r.weighted != c.weighted {
			t.Errorf("%s: got count %d sig %d days %d weighted %v; want %d %d %d %v",
				c.name, r.count, r.sig, r.days, r.weighted, c.count, c.sig, c.days, c.weighted)
		}
		wantP := 1 - math.Exp(-c.weighted/73)
		if !near(r.prob(), wantP) {
			t.Errorf("%s: probability %v, want %v", c.name, r.prob(), wantP)
		}
	}
}

func TestCategory(t *testing.T) {
	for _, c := range []struct {
		kt   float64
		want int
	}{{0, 0}, {63.9, 0}, {64, 1}, {82.9, 1}, {83, 2}, {95, 2}, {96, 3}, {112, 3}, {113, 4}, {136, 4}, {137, 5}, {185, 5}} {
		if got := category(c.kt); got != c.want {
			t.Errorf("category(%v) = %d, want %d", c.kt, got, c.want)
		}
	}
}

func TestHurricaneAt(t *testing.T) {
	m := loadFixture(t)
	for _, c := range []struct {
		name             string
		lat, lon         float64
		count, strongest int
		rate             float64
	}{
		// ABLE (1950, Category 3) passes 51 km south; an 1880 hurricane
		// straight over the city is before the rated period; BAKER (1965)
		// crosses the city as a tropical storm and was a hurricane only
		// 500 km away.
		{"Miami", 25.76, -80.19, 1, 3, 3.0 / 120},
		// CARLA's two fixes are 200 km away but the track between them
		// passes 56 km north.
		{"between fixes", 27, -70, 1, 2, 2.0 / 120},
		// EASY (Category 1) at 95 km counts, FOX (Category 5) at 105 km not.
		{"radius edge", 30, -60, 1, 1, 1.0 / 120},
		// DELTA's middle fix has no longitude: the track joins its
		// neighbours rather than running to longitude 0.
		{"empty longitude, joined", 21, -61, 1, 1, 1.0 / 120},
		{"empty longitude, not at lon 0", 20.5, -30, 0, 0, 0},
		// Beulah's longitudes of -351..-359 are 9..1 degrees east.
		{"Beulah", 55.5, 5, 1, 1, 1.0 / 120},
		// HANA crosses the date line at 85 kt, Category 2.
		{"date line west", 20.4, -179.9, 1, 2, 2.0 / 71},
		{"date line east", 20.4, 179.9, 1, 2, 2.0 / 71},
		// IKAIKA passes about 40 km west at 120 kt.
		{"Honolulu", 21.31, -157.86, 1, 4, 4.0 / 71},
		// GEORGE, a depression with no wind value, near San Juan.
		{"San Juan", 18.47, -66.11, 0, 0, 0},
		{"Denver", 39.74, -104.99, 0, 0, 0},
		{"Chicago", 41.88, -87.63, 0, 0, 0},
	} {
		r := m.hurricaneAt(c.lat, c.lon)
		if r.count != c.count || r.strongest != c.strongest || !near(r.rate(), c.rate) {
			t.Errorf("%s: got count %d strongest %d rate %v; want %d %d %v", c.name, r.count, r.strongest, r.rate(), c.count, c.strongest, c.rate)
		}
	}
}

func TestDiscSpan(t *testing.T) {
	f := newFrame(0, 0)
	kx := f.kx
	deg := func(km float64) float32 { return float32(km / kx) }
	for _, c := range []struct {
		name      string
		ax, bx, y float64 // segment from (y, ax) to (y, bx), km
		ok        bool
		t0, t1    float64
	}{
		{"through the centre", -200, 200, 0, true, 0.25, 0.75},
		{"starts inside", 0, 200, 0, true, 0, 0.5},
		{"misses", -200, 200, 120, false, 0, 0},
		{"stops short", -300, -150, 0, false, 0, 0},
		{"point inside", 50, 50, 0, true, 0, 0},
	} {
		t0, t1, ok := f.discSpan(deg(c.y), deg(c.ax), deg(c.y), deg(c.bx), 100)
		if ok != c.ok || (ok && (math.Abs(t0-c.t0) > 1e-4 || math.Abs(t1-c.t1) > 1e-4)) {
			t.Errorf("%s: got %v %v %v, want %v %v %v", c.name, t0, t1, ok, c.t0, c.t1, c.ok)
		}
	}
}

func TestCountyReports(t *testing.T) {
	m := loadFixture(t)
	// Each fixture county is alone in its region, so its rate is its
	// reports over its exposure, per 1,000 km² a year.
	rate := func(reports float64, fips string) float64 {
		c := fixtureCounties[fips]
		return reports / (math.Max(c.LandKm2, minAreaKm2) * detection(c.Residents/c.LandKm2)) * 1000 / 61
	}
	for _, c := range []struct {
		name, fips         string
		ok                 bool
		hailRaw, windRaw   float64
		hailRate, windRate float64
	}{
		{"Oklahoma County", "40109", true, 800.0 / 1800 * 1000, 600.0 / 1800 * 1000, rate(800, "40109"), rate(600, "40109")},
		// Reports filed under Dade's old code 12025 belong to 12086.
		{"Miami-Dade with old code", "12086", true, 170.0 / 5000 * 1000, 280.0 / 5000 * 1000, rate(170, "12086"), rate(280, "12086")},
		// 120 km² of land counts as the 250 km² floor.
		{"absent from the hail table, small", "06075", true, 0, 3.0 / 250 * 1000, 0, rate(3, "06075")},
		{"absent from both tables", "72127", true, 0, 0, 0, 0},
		{"no land area given", "99003", false, 0, 0, 0, 0},
		{"zero land area", "00000", false, 0, 0, 0, 0},
	} {
		cr, ok := m.county[c.fips]
		if ok != c.ok || !near(cr.hailRaw, c.hailRaw) || !near(cr.windRaw, c.windRaw) || !near(cr.hailRate, c.hailRate) || !near(cr.windRate, c.windRate) {
			t.Errorf("%s: got %+v %v, want raw %v/%v rates %v/%v ok %v", c.name, cr, ok, c.hailRaw, c.windRaw, c.hailRate, c.windRate, c.ok)
		}
	}
}

// TestReportingCorrection checks the correction for who reports: counties
// that see the same storms but hold different numbers of people come out
// alike, a region's rate pulls a county with few reports toward it, and a
// county's own reports outweigh the region once they are many.
func TestReportingCorrection(t *testing.T) {
	for _, c := range []struct {
		d, want float64
	}{
		{refDensity, 1},
		{0, math.Pow(reportingFloor/(refDensity+reportingFloor), reportingExponent)},
		// A downtown of 1,800 residents per km² files about 3.7 times
		// the reports of an average county for the same storms.
		{1800, math.Pow(1802/(refDensity+reportingFloor), reportingExponent)},
	} {
		if got := detection(c.d); !near(got, c.want) {
			t.Errorf("detection(%v) = %v, want %v", c.d, got, c.want)
		}
	}
	if !(detection(1800) > 3.5 && detection(1800) < 4) || !(detection(1) < 0.4) {
		t.Errorf("detection: 1,800/km² %v, 1/km² %v", detection(1800), detection(1))
	}

	for _, c := range []struct {
		name                string
		o                   int
		e, regionN, regionE float64
		want                float64
	}{
		{"no reports in the region", 0, 1000, 0, 5000, 0},
		{"the region's own rate", 20, 1000, 100, 5000, 0.02},
		// 10 reports on 1,000 km² where the region logs 0.02 per km²:
		// (10 + 50) / (1000 + 2500).
		{"few reports: pulled toward the region", 10, 1000, 100, 5000, 60.0 / 3500},
		// 1,000 reports: its own rate, 1.0, moves 4% toward the
		// region's 0.55.
		{"many reports", 1000, 1000, 1100, 2000, 1050 / (1000 + 50/0.55)},
	} {
		if got := shrunkRate(c.o, c.e, c.regionN, c.regionE); !near(got, c.want) {
			t.Errorf("%s: shrunkRate = %v, want %v", c.name, got, c.want)
		}
	}

	// Two neighbouring counties of one region see the same storms: the
	// dense one logs as many more reports as its detection says. Their
	// rates agree; by raw density the dense one reads 3.4 times higher.
	dense := County{LandKm2: 400, Residents: 400 * 1800, Point: geo.Point{Lat: 39.75, Lon: -104.9}}
	plain := County{LandKm2: 4000, Residents: 4000 * 5, Point: geo.Point{Lat: 40.2, Lon: -103.8}}
	const truth = 0.2 // reports per km² over the record at the reference density
	n := func(c County) int { return int(math.Round(truth * c.LandKm2 * detection(c.Residents/c.LandKm2))) }
	counts := map[string]int{"1": n(dense), "2": n(plain)}
	got := buildCounty(counts, counts, map[string]County{"1": dense, "2": plain})
	a, b := got["1"], got["2"]
	if r := a.hailRate / b.hailRate; r < 0.97 || r > 1.03 {
		t.Errorf("dense %v vs plain %v per 1,000 km² a year: ratio %v, want 1", a.hailRate, b.hailRate, r)
	}
	if !(a.hailRaw > 3*b.hailRaw) {
		t.Errorf("raw densities %v and %v: the dense county should log far more", a.hailRaw, b.hailRaw)
	}
	if want := truth * 1000 / 61; math.Abs(a.hailRate-want) > 0.03*want {
		t.Errorf("rate %v, want about %v", a.hailRate, want)
	}
}

func ids(m hazard.Measurement) []string {
	var out []string
	for _, in := range m.Indicators {
		out = append(out, in.ID)
	}
	return out
}

// attribution is the peril and resolution kind of every indicator the module
// gives: tornado indicators and the hurricane pass counts count reported
// events around the site, the hurricane wind field is read from its grid
// cell, hail and wind are county tallies.
var attribution = map[string][2]string{
	IndTornadoStrikeSig:  {hazard.PerilTornado, hazard.ResReportedEvents},
	IndTornadoStrikeAny:  {hazard.PerilTornado, hazard.ResReportedEvents},
	IndHurricaneWind:     {hazard.PerilHurricaneWind, hazard.ResGrid},
	IndMajorWind:         {hazard.PerilHurricaneWind, hazard.ResGrid},
	IndTornadoProb:       {hazard.PerilTornado, hazard.ResReportedEvents},
	IndSigTornadoes:      {hazard.PerilTornado, hazard.ResReportedEvents},
	IndHurricaneRate:     {hazard.PerilHurricaneWind, hazard.ResReportedEvents},
	IndHurricanes:        {hazard.PerilHurricaneWind, hazard.ResReportedEvents},
	IndStrongestCategory: {hazard.PerilHurricaneWind, hazard.ResReportedEvents},
	IndHailDensity:       {hazard.PerilHail, hazard.ResCounty},
	IndWindDensity:       {hazard.PerilStraightLineWind, hazard.ResCounty},
}

var resolutionKinds = map[string]bool{hazard.ResSite: true, hazard.ResGrid: true, hazard.ResReportedEvents: true, hazard.ResCounty: true}

var modulePerils = map[string]bool{hazard.PerilTornado: true, hazard.PerilHurricaneWind: true, hazard.PerilHail: true, hazard.PerilStraightLineWind: true}

func TestMeasure(t *testing.T) {
	m := loadFixture(t)
	all := []string{IndTornadoStrikeSig, IndTornadoStrikeAny, IndTornadoProb, IndSigTornadoes,
		IndHurricaneWind, IndMajorWind, IndHurricaneRate, IndHurricanes, IndStrongestCategory, IndHailDensity, IndWindDensity}
	tornado := all[:4]
	for _, c := range []struct {
		name    string
		site    hazard.Site
		ids     []string
		quality float64
		notes   int // tornado days, strike, [wind field, hurricane passes | no basin], [tally | Alaska]
	}{
		{"Oklahoma County", datatest.Site(35.47, -97.52, "40109", "OK"), all, qualityConus, 5},
		{"Honolulu", datatest.Site(21.31, -157.86, "15003", "HI"), all, qualityOther, 5},
		{"San Juan (no reports)", datatest.Site(18.47, -66.11, "72127", "PR"), all, qualityOther, 5},
		{"county without area", datatest.Site(40, -89, "17999", "IL"), all[:9], qualityConus, 4},
		// Neither basin file covers Alaska: its storms are extratropical
		// or former western Pacific typhoons. Its hail and wind tallies use
		// obsolete codes; a note stands in for each.
		{"Adak", datatest.Site(51.88, -176.64, "02016", "AK"), tornado, qualityOther, 4},
		// West of the date line only the western Pacific typhoon record,
		// which we lack, could speak to hurricanes.
		{"western Aleutians", datatest.Site(52.9, 173.2, "02016", "AK"), tornado, qualityOther, 4},
		{"Guam", datatest.Site(13.47, 144.75, "66010", "GU"), nil, 0, 1},
		{"Saipan by state FIPS only", hazard.Site{Lat: 15.18, Lon: 145.75, CountyFIPS: "69110", StateFIPS: "69"}, nil, 0, 1},
	} {
		got := m.Measure(c.site)
		if !reflect.DeepEqual(ids(got), c.ids) {
			t.Errorf("%s: indicators %v, want %v", c.name, ids(got), c.ids)
		}
		if got.Quality != c.quality || len(got.Notes) != c.notes {
			t.Errorf("%s: quality %v notes %q; want %v and %d notes", c.name, got.Quality, got.Notes, c.quality, c.notes)
		}
		if got.HasHazardData() != (c.ids != nil) {
			t.Errorf("%s: HasHazardData() = %v", c.name, got.HasHazardData())
		}
		weighted := map[string]int{}
		for _, in := range got.Indicators {
			if in.Weight > 0 && !in.Ranked {
				t.Errorf("%s: %s weighted but not ranked", c.name, in.ID)
			}
			if in.Weight > 0 {
				weighted[in.Peril]++
			}
			if in.AnnualChance && (in.Weight == 0 || in.Unit != "probability" || in.Value < 0 || in.Value >= 1) {
				t.Errorf("%s: %s marked as an annual chance: %+v", c.name, in.ID, in)
			}
			if _, ok := data.SourceByID(in.Source); !ok {
				t.Errorf("%s: %s cites unknown source %q", c.name, in.ID, in.Source)
			}
			if math.IsNaN(in.Value) || math.IsInf(in.Value, 0) {
				t.Errorf("%s: %s = %v", c.name, in.ID, in.Value)
			}
		}
		// Each peril measured is ranked on exactly one indicator.
		for p, n := range weighted {
			if n != 1 {
				t.Errorf("%s: peril %s has %d weighted indicators, want 1", c.name, p, n)
			}
		}
	}
}

// TestWeightedIndicators: each peril is ranked on the one indicator that
// states its physical hazard at the site, with weight 1; the rest are
// context. The tornado and hurricane indicators weighted are annual
// chances.
func TestWeightedIndicators(t *testing.T) {
	m := loadFixture(t)
	want := map[string]struct {
		peril        string
		annualChance bool
	}{
		IndTornadoStrikeSig: {hazard.PerilTornado, true},
		IndHurricaneWind:    {hazard.PerilHurricaneWind, true},
		IndHailDensity:      {hazard.PerilHail, false},
		IndWindDensity:      {hazard.PerilStraightLineWind, false},
	}
	for _, site := range []hazard.Site{
		datatest.Site(35.47, -97.52, "40109", "OK"),
		datatest.Site(25.76, -80.19, "12086", "FL"),
		datatest.Site(21.31, -157.86, "15003", "HI"),
	} {
		seen := 0
		for _, in := range m.Measure(site).Indicators {
			w, ok := want[in.ID]
			switch {
			case ok:
				seen++
				if in.Weight != 1 || !in.Ranked || in.Peril != w.peril || in.AnnualChance != w.annualChance {
					t.Errorf("%s at %s: weight %v ranked %v peril %q annual chance %v; want 1, ranked, %q, %v",
						in.ID, site.CountyFIPS, in.Weight, in.Ranked, in.Peril, in.AnnualChance, w.peril, w.annualChance)
				}
			case in.Weight != 0 || in.AnnualChance:
				t.Errorf("%s at %s: context indicator with weight %v, annual chance %v", in.ID, site.CountyFIPS, in.Weight, in.AnnualChance)
			}
		}
		if seen != len(want) {
			t.Errorf("%s: %d of the %d weighted indicators present", site.CountyFIPS, seen, len(want))
		}
	}
}

// TestIndicatorAttribution checks at the fixture sites that every weighted
// indicator names one of the module's perils and one of the four resolution
// kinds, and that each indicator has the peril and kind it should: hail and
// wind are county tallies, the hurricane wind field is a grid, tornado
// indicators and hurricane passes are reported events around the site.
func TestIndicatorAttribution(t *testing.T) {
	m := loadFixture(t)
	for _, c := range []struct {
		name string
		site hazard.Site
	}{
		{"Oklahoma County", datatest.Site(35.47, -97.52, "40109", "OK")},
		{"Miami", datatest.Site(25.76, -80.19, "12086", "FL")},
		{"Honolulu", datatest.Site(21.31, -157.86, "15003", "HI")},
		{"San Juan", datatest.Site(18.47, -66.11, "72127", "PR")},
		{"San Francisco", datatest.Site(37.77, -122.42, "06075", "CA")},
		{"county without area", datatest.Site(40, -89, "17999", "IL")},
		{"Adak", datatest.Site(51.88, -176.64, "02016", "AK")},
		{"western Aleutians", datatest.Site(52.9, 173.2, "02016", "AK")},
		{"Guam", datatest.Site(13.47, 144.75, "66010", "GU")},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := m.Measure(c.site)
			for _, in := range got.Indicators {
				if in.Weight > 0 {
					if in.Peril == "" || !modulePerils[in.Peril] {
						t.Errorf("%s: weighted, peril %q is not a severe-weather peril", in.ID, in.Peril)
					}
					if !resolutionKinds[in.Resolution.Kind] {
						t.Errorf("%s: weighted, resolution kind %q is not one of the four", in.ID, in.Resolution.Kind)
					}
				}
				want, ok := attribution[in.ID]
				if !ok {
					t.Errorf("%s: unexpected indicator", in.ID)
					continue
				}
				if in.Peril != want[0] || in.Resolution.Kind != want[1] {
					t.Errorf("%s: peril %q kind %q, want %q %q", in.ID, in.Peril, in.Resolution.Kind, want[0], want[1])
				}
				if in.Resolution.Detail == "" {
					t.Errorf("%s: resolution %+v has no detail", in.ID, in.Resolution)
				}
			}
		})
	}
}

// TestAlaskaOmitsCountyTallies: the SPC hail and wind tallies file Alaska
// under obsolete codes, so an Alaska borough's tally would read as zero
// reports. The module must leave hail and wind out, with a note, rather
// than report that zero, while still measuring tornadoes. Hurricane wind
// is not measured in Alaska either, on either side of the date line:
// neither basin file holds its storms.
func TestAlaskaOmitsCountyTallies(t *testing.T) {
	m := loadFixture(t)
	// The borough has a land area, so a county row exists (all zeros): the
	// omission comes from the Alaska rule, not from missing data.
	if cr, ok := m.county["02016"]; !ok || cr.hailRate != 0 || cr.windRate != 0 {
		t.Fatalf("fixture county 02016 = %+v, %v; want a zero row", cr, ok)
	}
	for _, c := range []struct {
		name string
		site hazard.Site
	}{
		{"Adak, east of the date line", datatest.Site(51.88, -176.64, "02016", "AK")},
		{"western Aleutians", datatest.Site(52.9, 173.2, "02016", "AK")},
		{"by state FIPS only", hazard.Site{Lat: 51.88, Lon: -176.64, CountyFIPS: "02016", StateFIPS: "02"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := m.Measure(c.site)
			for _, in := range got.Indicators {
				if in.ID == IndHailDensity || in.ID == IndWindDensity || in.Peril == hazard.PerilHail || in.Peril == hazard.PerilStraightLineWind {
					t.Errorf("%s (%s) = %v measured in Alaska", in.ID, in.Peril, in.Value)
				}
			}
			if has := slices.Contains(ids(got), IndTornadoStrikeSig); !has || !got.HasHazardData() {
				t.Errorf("indicators %v: want the tornado indicators still measured", ids(got))
			}
			for _, in := range got.Indicators {
				if in.Peril == hazard.PerilHurricaneWind {
					t.Errorf("%s = %v measured in Alaska", in.ID, in.Value)
				}
			}
			var alaska, tally, basin int
			for _, n := range got.Notes {
				if strings.Contains(n, "Alaska") && strings.Contains(n, "hail") && strings.Contains(n, "not measured") {
					alaska++
				}
				if strings.Contains(n, "hail reports") {
					tally++
				}
				if strings.Contains(n, "hurricane wind is not measured") {
					basin++
				}
			}
			if alaska != 1 || tally != 0 || basin != 1 {
				t.Errorf("notes %q: want one note that Alaska's hail and wind are not measured, one that hurricane wind is not, and no county tally note", got.Notes)
			}
			if got.Quality != qualityOther {
				t.Errorf("quality %v, want %v", got.Quality, qualityOther)
			}
		})
	}
	// The hurricane rule also holds for a site known by its state code
	// alone.
	anc := m.Measure(hazard.Site{Lat: 61.2181, Lon: -149.9003, CountyFIPS: "02020", StateCode: "AK"})
	for _, in := range anc.Indicators {
		if in.Peril == hazard.PerilHurricaneWind {
			t.Errorf("Anchorage by state code: %s = %v measured", in.ID, in.Value)
		}
	}
	// Outside Alaska the note does not appear.
	for _, n := range m.Measure(datatest.Site(35.47, -97.52, "40109", "OK")).Notes {
		if strings.Contains(n, "Alaska") {
			t.Errorf("Oklahoma note mentions Alaska: %q", n)
		}
	}
}

func TestMeasureValuesAndNotes(t *testing.T) {
	m := loadFixture(t)
	okc := m.Measure(datatest.Site(35.47, -97.52, "40109", "OK"))
	// The engine takes each peril's weighted mean: one weight of 1 each.
	wsum := map[string]float64{}
	for _, in := range okc.Indicators {
		wsum[in.Peril] += in.Weight
	}
	if want := map[string]float64{hazard.PerilTornado: 1, hazard.PerilHurricaneWind: 1, hazard.PerilHail: 1, hazard.PerilStraightLineWind: 1}; !reflect.DeepEqual(wsum, want) {
		t.Errorf("weights per peril %v, want %v", wsum, want)
	}
	if p := indicator(t, okc, IndTornadoProb).Value; !near(p, 1-math.Exp(-8.0/73)) {
		t.Errorf("tornado probability %v", p)
	}
	if n := indicator(t, okc, IndSigTornadoes); n.Value != 2 || n.Weight != 0 || !n.Ranked {
		t.Errorf("significant tornadoes %+v", n)
	}
	if p := indicator(t, okc, IndTornadoProb); p.Weight != 0 || !p.Ranked {
		t.Errorf("tornado-day probability should be ranked context: %+v", p)
	}
	if s := indicator(t, okc, IndTornadoStrikeSig); s.Weight != 1 || !s.AnnualChance || s.Value <= 0 || s.Source != srcTornadoTracks ||
		s.Label != "Annual chance that an EF2+ tornado path crosses the site (SPC paths 1950-2018)" {
		t.Errorf("EF2+ strike %+v", s)
	}
	if a := indicator(t, okc, IndTornadoStrikeAny); a.Weight != 0 || a.AnnualChance || !a.Ranked || a.Value <= indicator(t, okc, IndTornadoStrikeSig).Value {
		t.Errorf("any-rating strike %+v: want ranked context above the EF2+ chance", a)
	}
	if h := indicator(t, okc, IndHurricaneWind); h.Value != 0 || h.Weight != 1 {
		t.Errorf("Oklahoma hurricane wind %+v", h)
	}
	for _, id := range []string{IndHurricaneRate, IndHurricanes} {
		if h := indicator(t, okc, id); h.Weight != 0 || !h.Ranked {
			t.Errorf("%s should be ranked context: %+v", id, h)
		}
	}
	if s := indicator(t, okc, IndStrongestCategory); s.Ranked || s.Weight != 0 {
		t.Errorf("strongest category should be context only: %+v", s)
	}
	wantNotes := []string{
		"A tornado came within 25 miles on 4 days in 1950-2022 (5 tornadoes, 2 rated EF2 or stronger): an annual chance of about 5.3% (about 10% on an index that weights each day by its strongest rating).",
		// EF2+ path area about 96 km² in 69 years, any rating about 98 km²
		// in 24, over the 5,077 km² disc (TestTornadoAtPathArea).
		"From the tornado path area recorded within 25 miles: a tornado of any rating crosses a given point here about once in 1,200 years; an EF2+ tornado about once in 3,700 years.",
		"No hurricane-force winds reached this site in the modelled wind fields of the Atlantic best tracks 1900-2019 (120 years).",
		"No hurricane-strength storm passed within 100 km in the Atlantic (1900-2019) or eastern and central Pacific (1949-2019) records.",
		"The county logged 800 hail reports and 600 damaging-wind reports in 1955-2015 (444.4 and 333.3 per 1,000 km² of land); read as a county of average population density (43 residents per km²) would log them and pooled with the counties within 150 km, that is 3.26 hail and 2.45 damaging-wind reports per 1,000 km² a year.",
	}
	if !reflect.DeepEqual(okc.Notes, wantNotes) {
		t.Errorf("notes:\n%q\nwant\n%q", okc.Notes, wantNotes)
	}

	mia := m.Measure(datatest.Site(25.76, -80.19, "12086", "FL"))
	if h := indicator(t, mia, IndHurricaneRate); !near(h.Value, 3.0/120) || h.Source != srcHurdatAtlantic {
		t.Errorf("Miami hurricane rate %+v", h)
	}
	if want := "Hurricane-force winds (64 kt+) reached this site in 1 storm of the Atlantic best tracks 1900-2019, about once in 120 years; major-hurricane winds (96 kt+) in none of them."; mia.Notes[2] != want {
		t.Errorf("Miami wind-field note %q, want %q", mia.Notes[2], want)
	}
	if !strings.Contains(mia.Notes[3], "1 hurricane has passed within 100 km since 1900 (through 2019), strongest Category 3.") {
		t.Errorf("Miami hurricane note %q", mia.Notes[3])
	}
	hnl := m.Measure(datatest.Site(21.31, -157.86, "15003", "HI"))
	for _, id := range []string{IndHurricaneWind, IndMajorWind, IndHurricaneRate, IndHurricanes, IndStrongestCategory} {
		if h := indicator(t, hnl, id); h.Source != srcHurdatPacific {
			t.Errorf("Honolulu %s source %q", id, h.Source)
		}
	}
	if !strings.Contains(hnl.Notes[2], "eastern and central Pacific best tracks 1949-2019, about once in 72 years") {
		t.Errorf("Honolulu wind-field note %q", hnl.Notes[2])
	}
	if !strings.Contains(hnl.Notes[3], "since 1949") {
		t.Errorf("Honolulu hurricane note %q", hnl.Notes[3])
	}

	// Same input, same output.
	if again := m.Measure(datatest.Site(35.47, -97.52, "40109", "OK")); !reflect.DeepEqual(again, okc) {
		t.Error("Measure is not deterministic")
	}
}

func TestReportTallyCovers(t *testing.T) {
	for _, c := range []struct {
		site hazard.Site
		want bool
	}{
		{datatest.Site(35.47, -97.52, "40109", "OK"), true},
		{datatest.Site(21.31, -157.86, "15003", "HI"), true},
		{datatest.Site(18.47, -66.11, "72127", "PR"), true},
		{datatest.Site(61.22, -149.90, "02020", "AK"), false},
		{hazard.Site{Lat: 51.88, Lon: -176.64, CountyFIPS: "02016", StateFIPS: "02"}, false},
	} {
		if got := reportTallyCovers(c.site); got != c.want {
			t.Errorf("reportTallyCovers(%s) = %v, want %v", c.site.CountyFIPS, got, c.want)
		}
	}
}

// copyFixtures copies the severe-weather fixtures to a temporary data
// directory, replacing line `line` (1-based) of file `name` with `text`.
func copyFixtures(t *testing.T, name string, line int, text string) string {
	t.Helper()
	dir := t.TempDir()
	sub := filepath.Join(dir, "severe_weather")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(datatest.FixtureDir(t), "severe_weather")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == name {
			lines := strings.Split(string(b), "\n")
			if line > len(lines) {
				t.Fatalf("%s has no line %d", name, line)
			}
			lines[line-1] = text
			b = []byte(strings.Join(lines, "\n"))
		}
		if err := os.WriteFile(filepath.Join(sub, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestMalformedFiles(t *testing.T) {
	const (
		tracks = "spc_tornado_tracks_1950_2018.csv"
		starts = "spc_tornado_startpoints_1950_2022_reduced.csv"
		al     = "hurdat2_atlantic_1851_2019.csv"
		ep     = "hurdat2_nepac_1949_2019.csv"
		hail   = "spc_hail_1955_2015_county_counts.csv"
		wind   = "spc_wind_1955_2015_county_counts.csv"
	)
	for _, c := range []struct {
		name, file string
		line       int
		text, want string
	}{
		{"tornado latitude", tracks, 3, "12,1961,6,1,1961-06-01,17:45:00,3,KS,20,9,4,12,1,6,0,abc,-99.4679,38.2,-99.4679,27.6,800,0", `"slat"`},
		{"tornado rating", tracks, 4, "21,1955,4,2,1955-04-02,15:00:00,3,MS,28,1,7,0,0,1,0,33.02,-88.01,33.03,-88.0,0.9,30,0", "rating 7"},
		{"tornado month", tracks, 4, "21,1955,13,2,1955-04-02,15:00:00,3,MS,28,1,1,0,0,1,0,33.02,-88.01,33.03,-88.0,0.9,30,0", "not a date"},
		{"tornado header", tracks, 1, "om,yr,mo,dy,date,time,tz,st,stf,stn,mag,inj,fat,loss,closs,slat,slon,elat,elon,wid,fc", `"len"`},
		{"start point date", starts, 9, "620003,2020,2020-04-22,OK,1,35.55,-97.45", `"date"`},
		{"start point year", starts, 9, "620003,20x0,22/04/2020,OK,1,35.55,-97.45", `"yr"`},
		{"hurdat latitude", al, 5, "AL031950,ABLE,1950-09-10T00:00Z,,HU,north,-77.0,100.0,960,,,,,,,,,,,,", `"Lat"`},
		{"hurdat wind", al, 5, "AL031950,ABLE,1950-09-10T00:00Z,,HU,25.3,-77.0,999,960,,,,,,,,,,,,", `"Wind"`},
		{"hurdat key", ep, 3, "XX,UNNAMED,1954-07-01T06:00Z,,TS,13.8,-101.0,45,,,,,,,,,,,,,", `"Key"`},
		{"hurdat time", al, 5, "AL031950,ABLE,1950-09-10 00:00,,HU,25.3,-77.0,100.0,960,,,,,,,,,,,,", `"DateTime"`},
		{"hurdat radius", al, 5, "AL031950,ABLE,1950-09-10T00:00Z,,HU,25.3,-77.0,100.0,960,,,,,,,,,-5,,,", `"NE64"`},
		{"hurdat radius text", ep, 8, "CP031992,IKAIKA,1992-09-11T00:00Z,,HU,19.0,-158.5,110,945,,,,,,,,,,,,wide", `"NW64"`},
		{"hurdat storm split", al, 6, "AL021880,UNNAMED,1950-09-10T06:00Z,,HU,25.3,-79.0,100.0,958,,,,,,,,,,,,", "appears again"},
		{"hail count", hail, 4, `"12","086",many,130`, `"n_storms"`},
		{"wind county", wind, 2, `"06","75",3,150`, "FIPS"},
		{"wind duplicate county", wind, 3, `"06","075",3,150`, "twice"},
	} {
		dir := copyFixtures(t, c.file, c.line, c.text)
		_, err := Load(os.DirFS(dir), fixtureCounties)
		if err == nil {
			t.Errorf("%s: Load accepted a malformed file", c.name)
			continue
		}
		msg := err.Error()
		wantWhere := "severe_weather/" + strings.TrimSuffix(c.file, ".csv")
		if !strings.Contains(msg, wantWhere) || !strings.Contains(msg, "line "+strconv.Itoa(c.line)) || !strings.Contains(msg, c.want) {
			t.Errorf("%s: error %q should name %s, line %d and %s", c.name, msg, wantWhere, c.line, c.want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(datatest.Fixture(t), nil); err == nil {
		t.Error("Load without county areas should fail")
	}
	dir := t.TempDir()
	if _, err := Load(os.DirFS(dir), fixtureCounties); !errors.Is(err, data.ErrMissing) {
		t.Errorf("Load from an empty directory: %v, want data.ErrMissing", err)
	}
}

// TestPadIndexMatchesBruteForce checks the one-cell lookup against testing
// every segment, including segments across the antimeridian and near the
// poles' side of the data.
func TestPadIndexMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	const n = 400
	segs := make([]hseg, n)
	for i := range segs {
		lat := -10 + rng.Float64()*80
		lon := -180 + rng.Float64()*360
		dlat, dlon := rng.NormFloat64()*1.5, rng.NormFloat64()*2
		segs[i] = hseg{alat: float32(lat), alon: float32(lon), blat: float32(math.Max(-89, math.Min(89, lat+dlat))), blon: float32(geo.NormalizeLon(lon + dlon))}
	}
	for _, radius := range []float64{40.2, 100} {
		for _, cell := range []float64{0.25, 1} {
			ix := newPadIndex(hsegBoxes(segs), radius, cell)
			for q := 0; q < 3000; q++ {
				lat := -12 + rng.Float64()*84
				lon := geo.NormalizeLon(-180 + rng.Float64()*360)
				if q%4 == 0 { // crowd the antimeridian
					lon = geo.NormalizeLon(179 + rng.Float64()*2)
				}
				f := newFrame(lat, lon)
				inIndex := map[int32]bool{}
				prev := int32(-1)
				for _, i := range ix.At(geo.Point{Lat: lat, Lon: lon}) {
					if i <= prev {
						t.Fatalf("candidates not in ascending order")
					}
					prev = i
					inIndex[i] = true
				}
				for i, s := range segs {
					if f.segKm2(s.alat, s.alon, s.blat, s.blon) <= radius*radius && !inIndex[int32(i)] {
						t.Fatalf("r=%v cell=%v: segment %d (%+v) within range of (%v,%v) but not a candidate", radius, cell, i, s, lat, lon)
					}
				}
			}
		}
	}
}

func BenchmarkMeasureFixture(b *testing.B) {
	m := loadFixture(b)
	s := datatest.Site(35.47, -97.52, "40109", "OK")
	b.ReportAllocs()
	for b.Loop() {
		m.Measure(s)
	}
}

func BenchmarkLoadFixture(b *testing.B) {
	dir := datatest.FixtureDir(b)
	for b.Loop() {
		if _, err := Load(os.DirFS(dir), fixtureCounties); err != nil {
			b.Fatal(err)
		}
	}
}
