package severeweather

import (
	"io/fs"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// gazetteer is the Census county table the coverage layer also reads; the
// tests take land areas and interior points from it, and each county's
// residents from the 2020 tract centres (the engine counts block groups;
// the totals are the same census).
type gazCounty struct {
	fips, usps string
	lat, lon   float64
}

func readGazetteer(tb testing.TB, fsys fs.FS) (map[string]County, []gazCounty) {
	tb.Helper()
	t, err := data.OpenTableSep(fsys, data.Path("census-gazetteer-2019"), '\t', "USPS", "GEOID", "ALAND", "INTPTLAT", "INTPTLONG")
	if err != nil {
		tb.Fatal(err)
	}
	defer t.Close()
	areas := make(map[string]County, 3300)
	var pts []gazCounty
	for t.Scan() {
		aland, err := t.Float("ALAND")
		if err != nil {
			tb.Fatal(err)
		}
		lat, err := t.Float("INTPTLAT")
		if err != nil {
			tb.Fatal(err)
		}
		lon, err := t.Float("INTPTLONG")
		if err != nil {
			tb.Fatal(err)
		}
		fips := t.String("GEOID")
		areas[fips] = County{LandKm2: aland / 1e6, Point: geo.Point{Lat: lat, Lon: lon}}
		pts = append(pts, gazCounty{fips: fips, usps: t.String("USPS"), lat: lat, lon: lon})
	}
	if err := t.Err(); err != nil {
		tb.Fatal(err)
	}
	tracts, err := coverage.ReadTracts(fsys)
	if err != nil {
		tb.Fatal(err)
	}
	for _, tr := range tracts {
		if c, ok := areas[tr.CountyFIPS]; ok {
			c.Residents += tr.Population
			areas[tr.CountyFIPS] = c
		}
	}
	return areas, pts
}

var (
	realOnce  sync.Once
	realMod   *Module
	realErr   error
	realPts   []gazCounty
	realAreas map[string]County
)

func loadReal(tb testing.TB) *Module {
	tb.Helper()
	dir := datatest.Real(tb)
	realOnce.Do(func() {
		realAreas, realPts = readGazetteer(tb, dir)
		realMod, realErr = Load(dir, realAreas)
	})
	if realErr != nil {
		tb.Fatal(realErr)
	}
	return realMod
}

func indicator(tb testing.TB, m hazard.Measurement, id string) hazard.Indicator {
	tb.Helper()
	for _, in := range m.Indicators {
		if in.ID == id {
			return in
		}
	}
	tb.Fatalf("indicator %s missing; have %+v", id, m.Indicators)
	return hazard.Indicator{}
}

func TestRealData(t *testing.T) {
	m := loadReal(t)
	okc := m.Measure(datatest.Site(35.47, -97.52, "40109", "OK"))
	sea := m.Measure(datatest.Site(47.61, -122.33, "53033", "WA"))
	mia := m.Measure(datatest.Site(25.76, -80.19, "12086", "FL"))
	den := m.Measure(datatest.Site(39.74, -104.99, "08031", "CO"))
	chi := m.Measure(datatest.Site(41.88, -87.63, "17031", "IL"))
	for i, ms := range []hazard.Measurement{okc, sea, mia, den, chi} {
		t.Logf("%s: %v", []string{"Oklahoma City", "Seattle", "Miami", "Denver", "Chicago"}[i], ms.Notes)
	}

	pOKC := indicator(t, okc, IndTornadoProb).Value
	pSEA := indicator(t, sea, IndTornadoProb).Value
	if !(pOKC > 0.5 && pSEA < 0.2 && pOKC > 5*pSEA) {
		t.Errorf("tornado probability: central Oklahoma %.3f, Seattle %.3f; want Oklahoma far above", pOKC, pSEA)
	}
	if n := indicator(t, okc, IndSigTornadoes).Value; n < 10 {
		t.Errorf("central Oklahoma: %v EF2+ tornadoes within 25 miles; want at least 10", n)
	}

	hMIA := indicator(t, mia, IndHurricaneRate).Value
	hDEN := indicator(t, den, IndHurricaneRate).Value
	hCHI := indicator(t, chi, IndHurricaneRate).Value
	if hDEN != 0 || !(hMIA > hCHI) || hMIA < 0.1 {
		t.Errorf("hurricane rate: Miami %.3f, Denver %.3f (want 0), Chicago %.3f", hMIA, hDEN, hCHI)
	}
	if c := indicator(t, mia, IndStrongestCategory).Value; c < 4 {
		t.Errorf("Miami strongest category within 100 km = %v, want >= 4 (1926, 1992 storms)", c)
	}

	if hd, hs := indicator(t, den, IndHailDensity).Value, indicator(t, sea, IndHailDensity).Value; !(hd > 10*hs) {
		t.Errorf("hail density: Denver %.2f, Seattle area %.2f; want Denver far above", hd, hs)
	}
	if okc.Quality != qualityConus {
		t.Errorf("Oklahoma quality %v, want %v", okc.Quality, qualityConus)
	}
}

func TestRealDataTerritories(t *testing.T) {
	m := loadReal(t)
	// Iniki (1992) crossed Kauai; Honolulu, about 170 km from its track,
	// has had no hurricane centre within 100 km in the record.
	lih := m.Measure(datatest.Site(21.98, -159.37, "15007", "HI"))
	if lih.Quality != qualityOther || !lih.HasHazardData() {
		t.Errorf("Lihue: %+v", lih)
	}
	if indicator(t, lih, IndHurricanes).Value < 1 {
		t.Errorf("Lihue: want at least one hurricane within 100 km: %v", lih.Notes)
	}
	hnl := m.Measure(datatest.Site(21.31, -157.86, "15003", "HI"))
	if indicator(t, hnl, IndHurricaneRate).Value >= indicator(t, lih, IndHurricaneRate).Value {
		t.Errorf("Honolulu hurricane rate should be below Lihue's: %v / %v", hnl.Notes, lih.Notes)
	}
	sju := m.Measure(datatest.Site(18.47, -66.11, "72127", "PR"))
	if indicator(t, sju, IndHurricanes).Value < 3 {
		t.Errorf("San Juan: want several hurricanes within 100 km: %v", sju.Notes)
	}
	// Alaska's county tallies use obsolete codes: no hail or wind value,
	// rather than a zero from a code that matches no row.
	anc := m.Measure(datatest.Site(61.2181, -149.9003, "02020", "AK"))
	for _, in := range anc.Indicators {
		if in.ID == IndHailDensity || in.ID == IndWindDensity {
			t.Errorf("Anchorage: %s = %v measured", in.ID, in.Value)
		}
	}
	if !anc.HasHazardData() || anc.Quality != qualityOther {
		t.Errorf("Anchorage: has data %v, quality %v; want tornado data and %v", anc.HasHazardData(), anc.Quality, qualityOther)
	}
	gu := m.Measure(hazard.Site{Lat: 13.47, Lon: 144.75, CountyFIPS: "66010", StateFIPS: "66", StateCode: "GU"})
	if gu.HasHazardData() || len(gu.Notes) == 0 {
		t.Errorf("Guam: want no weighted indicators and a note, got %+v", gu)
	}
}

// TestRealDataRows pins the row counts documented in PROVENANCE.md.
func TestRealDataRows(t *testing.T) {
	m := loadReal(t)
	rows := m.Rows()
	want := map[string]int{
		srcTornadoTracks:  63645 - 1, // one exact duplicate row
		srcTornado2019:    4837,
		srcHurdatAtlantic: 51840 - 34,
		srcHurdatPacific:  29048 - 31,
		srcHail:           3133,
		srcWind:           3134,
	}
	for id, n := range want {
		if rows[id] != n {
			t.Errorf("rows[%s] = %d, want %d", id, rows[id], n)
		}
	}
	t.Logf("tornado stats %+v; hurdat %+v; %d hurricane segments, %d tornado index entries, %d hurricane index entries",
		m.tstats, m.hstats, len(m.hsegs), m.tornIx.Entries(), m.hurrIx.Entries())
}

// TestRealDataReferenceSpeed measures at every Gazetteer interior point, as
// the engine does to build its percentile tables.
func TestRealDataReferenceSpeed(t *testing.T) {
	m := loadReal(t)
	start := time.Now()
	for _, p := range realPts {
		m.Measure(hazard.Site{Lat: p.lat, Lon: p.lon, CountyFIPS: p.fips, StateFIPS: p.fips[:2], StateCode: p.usps})
	}
	el := time.Since(start)
	t.Logf("%d reference points in %v (%v per point)", len(realPts), el, el/time.Duration(len(realPts)))
}

func BenchmarkMeasureReal(b *testing.B) {
	m := loadReal(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := realPts[i%len(realPts)]
		m.Measure(hazard.Site{Lat: p.lat, Lon: p.lon, CountyFIPS: p.fips, StateFIPS: p.fips[:2], StateCode: p.usps})
	}
}

func BenchmarkMeasureRealOklahoma(b *testing.B) {
	m := loadReal(b)
	s := datatest.Site(35.47, -97.52, "40109", "OK")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Measure(s)
	}
}

func BenchmarkLoadReal(b *testing.B) {
	dir := datatest.Real(b)
	areas, _ := readGazetteer(b, dir)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Load(dir, areas); err != nil {
			b.Fatal(err)
		}
	}
}

// realSites are places with published tornado and hurricane climatologies.
var realSites = map[string]hazard.Site{
	"Moore":         datatest.Site(35.3395, -97.4867, "40027", "OK"),
	"Tuscaloosa":    datatest.Site(33.2098, -87.5692, "01125", "AL"),
	"Ellicott City": datatest.Site(39.2673, -76.7983, "24027", "MD"),
	"Newark":        datatest.Site(40.7357, -74.1724, "34013", "NJ"),
	"Miami":         datatest.Site(25.7617, -80.1918, "12086", "FL"),
	"Key West":      datatest.Site(24.5551, -81.7800, "12087", "FL"),
	"Marathon":      datatest.Site(24.7136, -81.0903, "12087", "FL"),
	"San Juan":      datatest.Site(18.4655, -66.1057, "72127", "PR"),
	"Boston":        datatest.Site(42.3601, -71.0589, "25025", "MA"),
	"Chicago":       datatest.Site(41.8781, -87.6298, "17031", "IL"),
	"Buffalo":       datatest.Site(42.8864, -78.8784, "36029", "NY"),
}

// TestRealDataStrikeAndWind checks the magnitudes of the path-area strike
// probability and the modelled hurricane wind against ranges published
// climatologies support (deliberately wide: they test the order of
// magnitude and the ordering of places, not a tuned value).
//
// Tornado: the annual chance that an EF2+ path crosses a point in central
// Oklahoma is of the order of 1 in 1,000 years (Ashley and Strader's
// point-strike estimates; SPC's EF2+ path climatology), and orders of
// magnitude less in the urban north-east. Hurricane wind: NHC's return
// periods for hurricanes passing within 50 nm put South Florida and the
// Keys at about 1 in 6 to 1 in 8 years, southern New England at about 1 in
// 25 to 40 years for any hurricane, and the Great Lakes outside.
func TestRealDataStrikeAndWind(t *testing.T) {
	m := loadReal(t)
	meas := map[string]hazard.Measurement{}
	for name, s := range realSites {
		meas[name] = m.Measure(s)
	}
	val := func(name, id string) float64 { return indicator(t, meas[name], id).Value }
	for _, name := range []string{"Moore", "Tuscaloosa", "Ellicott City", "Newark", "Miami", "Key West", "Marathon", "San Juan", "Boston", "Chicago", "Buffalo"} {
		sig, any := val(name, IndTornadoStrikeSig), val(name, IndTornadoStrikeAny)
		hw, mw := val(name, IndHurricaneWind), val(name, IndMajorWind)
		t.Logf("%-13s EF2+ strike 1 in %8.0f yr, any 1 in %8.0f yr; 64 kt 1 in %6.1f yr, 96 kt 1 in %6.1f yr", name, 1/sig, 1/any, 1/hw, 1/mw)
		if mw > hw {
			t.Errorf("%s: major-hurricane wind %v more likely than hurricane-force %v", name, mw, hw)
		}
	}

	// (a) Magnitudes.
	if rp := 1 / val("Moore", IndTornadoStrikeSig); !(rp >= 200 && rp <= 5000) {
		t.Errorf("Moore, OK: EF2+ strike once in %.0f years, want 200 to 5,000", rp)
	}
	if p := val("Newark", IndTornadoStrikeSig); p != 0 && 1/p <= 10000 {
		t.Errorf("Newark, NJ: EF2+ strike once in %.0f years, want above 10,000 (or none)", 1/p)
	}
	for _, name := range []string{"Miami", "Key West"} {
		if p := val(name, IndHurricaneWind); !(p >= 1.0/30 && p <= 1.0/4) {
			t.Errorf("%s: hurricane-force winds once in %.1f years, want 1 in 4 to 1 in 30", name, 1/p)
		}
	}
	if b, mia := val("Boston", IndHurricaneWind), val("Miami", IndHurricaneWind); !(b < mia) {
		t.Errorf("hurricane-force winds: Boston %v not rarer than Miami %v", b, mia)
	}
	if p := val("Chicago", IndHurricaneWind); p != 0 {
		t.Errorf("Chicago: hurricane-force wind chance %v, want 0", p)
	}

	// (b) Tornado alley and Dixie Alley above the mid-Atlantic.
	for _, hi := range []string{"Moore", "Tuscaloosa"} {
		for _, lo := range []string{"Ellicott City", "Newark"} {
			if h, l := val(hi, IndTornadoStrikeSig), val(lo, IndTornadoStrikeSig); !(h > l) {
				t.Errorf("EF2+ strike: %s %v not above %s %v", hi, h, lo, l)
			}
		}
	}
	// (c) The Keys and San Juan above the Great Lakes.
	for _, hi := range []string{"Key West", "Marathon", "San Juan"} {
		for _, lo := range []string{"Chicago", "Buffalo"} {
			if h, l := val(hi, IndHurricaneWind), val(lo, IndHurricaneWind); !(h > l) {
				t.Errorf("hurricane-force wind: %s %v not above %s %v", hi, h, lo, l)
			}
		}
	}
}

// TestRealDataOuterDecay (d) recomputes outerDecay from the real best
// tracks: for each fix of 70 kt or more with analysed 64 kt radii (2004 on,
// both basins), the exponent x = ln(V/64)/ln(R64/Rmax) that carries the
// maximum wind from the Willoughby radius of maximum winds out to the mean
// analysed radius of the quadrants that have 64 kt winds, where that radius
// lies beyond 1.05 Rmax. The median must be the constant's 0.67 within 0.05.
func TestRealDataOuterDecay(t *testing.T) {
	dir := datatest.Real(t)
	var xs []float64
	for _, id := range []string{srcHurdatAtlantic, srcHurdatPacific} {
		tb, err := data.OpenTable(dir, data.Path(id), "Lat", "Lon", "Wind", "NE64", "SE64", "SW64", "NW64")
		if err != nil {
			t.Fatal(err)
		}
		for tb.Scan() {
			wind, ok, err := tb.OptFloat("Wind")
			if err != nil {
				t.Fatal(err)
			}
			if _, hasLon, _ := tb.OptFloat("Lon"); !ok || !hasLon || wind < 70 {
				continue
			}
			lat, err := tb.Float("Lat")
			if err != nil {
				t.Fatal(err)
			}
			sum, n := 0.0, 0
			for _, col := range []string{"NE64", "SE64", "SW64", "NW64"} {
				v, ok, err := tb.OptFloat(col)
				if err != nil {
					t.Fatal(err)
				}
				if ok && v > 0 {
					sum += v * 1.852
					n++
				}
			}
			if n == 0 {
				continue
			}
			rmax := 46.4 * math.Exp(-0.0155*wind*0.514444+0.0169*math.Abs(lat))
			if mean := sum / float64(n); mean > 1.05*rmax {
				xs = append(xs, math.Log(wind/64)/math.Log(mean/rmax))
			}
		}
		if err := tb.Err(); err != nil {
			t.Fatal(err)
		}
		tb.Close()
	}
	if len(xs) < 1000 {
		t.Fatalf("only %d fixes with analysed radii", len(xs))
	}
	slices.Sort(xs)
	med := xs[len(xs)/2]
	if len(xs)%2 == 0 {
		med = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	t.Logf("%d fixes: quartiles %.3f, median %.3f, %.3f", len(xs), xs[len(xs)/4], med, xs[3*len(xs)/4])
	if math.Abs(med-outerDecay) > 0.05 {
		t.Errorf("median fitted outer decay %.3f, outerDecay %v: more than 0.05 apart", med, outerDecay)
	}
	if len(xs) != 2336 {
		t.Errorf("%d fixes, the constant's comment says 2,336", len(xs))
	}
}

// TestRealDataHurricaneCoverage (e): Guam and Saipan have no severe-weather
// indicator at all, and Alaska none for hurricane wind.
func TestRealDataHurricaneCoverage(t *testing.T) {
	m := loadReal(t)
	for _, c := range []struct {
		name string
		site hazard.Site
	}{
		{"Guam", datatest.Site(13.4443, 144.7937, "66010", "GU")},
		{"Saipan", datatest.Site(15.1850, 145.7467, "69110", "MP")},
		{"Anchorage", datatest.Site(61.2181, -149.9003, "02020", "AK")},
		{"Adak", datatest.Site(51.88, -176.64, "02016", "AK")},
	} {
		got := m.Measure(c.site)
		for _, in := range got.Indicators {
			if in.Peril == hazard.PerilHurricaneWind || in.ID == IndHurricaneWind || in.ID == IndMajorWind {
				t.Errorf("%s: %s = %v measured", c.name, in.ID, in.Value)
			}
		}
		if len(got.Notes) == 0 {
			t.Errorf("%s: no note", c.name)
		}
	}
	if m.tstats.imputedWidth != 473 {
		t.Errorf("%d tornado widths imputed, the methodology says 473", m.tstats.imputedWidth)
	}
}

// A site outside every wind grid cites the basin on its side of the
// continent, in the label as in the source.
func TestRealWindBasinOutsideGrids(t *testing.T) {
	m := loadReal(t)
	sea := m.Measure(datatest.Site(47.61, -122.33, "53033", "WA"))
	for _, in := range sea.Indicators {
		if in.ID != IndHurricaneWind {
			continue
		}
		if in.Source != srcHurdatPacific || strings.Contains(in.Label, "Atlantic") || in.Value != 0 {
			t.Errorf("Seattle hurricane wind: source %s, label %q, value %v", in.Source, in.Label, in.Value)
		}
		return
	}
	t.Error("Seattle has no hurricane wind indicator")
}

// TestRealDataReportingBias refits the reporting correction on the tallies:
// for each exponent beta (with the floor reportingFloor), every
// conterminous county's count is compared with what its share of its
// 150 km neighbourhood's exposure predicts (Poisson deviance, counties
// whose neighbourhood logged at least 20 reports). The best beta for hail
// and for wind must lie near reportingExponent, and far from 0 (no
// population effect).
func TestRealDataReportingBias(t *testing.T) {
	dir := datatest.Real(t)
	counties, _ := readGazetteer(t, dir)
	type cty struct {
		pt         geo.Point
		area, dens float64
	}
	var fips []string
	cs := map[string]cty{}
	for f, c := range counties {
		if c.LandKm2 <= 0 || !conusFIPS(f) {
			continue
		}
		fips = append(fips, f)
		cs[f] = cty{c.Point, math.Max(c.LandKm2, minAreaKm2), c.Residents / c.LandKm2}
	}
	slices.Sort(fips)
	nb := make(map[string][]string, len(fips))
	for _, f := range fips {
		for _, g := range fips {
			if f != g && math.Abs(cs[f].pt.Lat-cs[g].pt.Lat) < 2 && geo.DistanceKm(cs[f].pt, cs[g].pt) <= regionKm {
				nb[f] = append(nb[f], g)
			}
		}
	}
	for _, src := range []string{srcHail, srcWind} {
		counts, _, err := loadCountyCounts(dir, src)
		if err != nil {
			t.Fatal(err)
		}
		best, bestDev := 0.0, math.Inf(1)
		for beta := 0.0; beta <= 0.6001; beta += 0.02 {
			exp := func(f string) float64 {
				return cs[f].area * math.Pow(cs[f].dens+reportingFloor, beta)
			}
			dev := 0.0
			for _, f := range fips {
				var n, e float64
				for _, g := range nb[f] {
					n += float64(counts[g])
					e += exp(g)
				}
				if n < 20 {
					continue
				}
				o, mu := float64(counts[f]), exp(f)*n/e
				if o > 0 {
					dev += 2 * (o*math.Log(o/mu) - (o - mu))
				} else {
					dev += 2 * mu
				}
			}
			if dev < bestDev {
				best, bestDev = beta, dev
			}
		}
		t.Logf("%s: best reporting exponent %.2f (deviance %.0f)", src, best, bestDev)
		if math.Abs(best-reportingExponent) > 0.06 {
			t.Errorf("%s: best exponent %.2f, the module uses %.2f", src, best, reportingExponent)
		}
	}
}

func conusFIPS(f string) bool {
	switch f[:2] {
	case "02", "15", "60", "66", "69", "72", "78":
		return false
	}
	return true
}

// TestRealDataHailClimatology: corrected for who reports, hail and
// damaging-wind rates follow the climatology rather than the cities. Hail
// alley's plains counties and cities lead Denver's dense core (which raw
// report densities put first), and Chicago's and New York's dense counties
// fall well below the plains.
func TestRealDataHailClimatology(t *testing.T) {
	m := loadReal(t)
	c := func(f string) countyReports {
		cr, ok := m.county[f]
		if !ok {
			t.Fatalf("county %s missing", f)
		}
		return cr
	}
	den := c("08031") // Denver County: the dense core
	if !(den.hailRaw > c("40109").hailRaw) {
		t.Errorf("raw hail density: Denver %.0f should lead Oklahoma County %.0f (the bias corrected for)", den.hailRaw, c("40109").hailRaw)
	}
	for _, f := range []string{"40109", "20173", "20055", "08087", "08121", "48375"} {
		// Oklahoma County, Sedgwick KS (Wichita), Finney KS, Morgan CO,
		// Washington CO, Potter TX (Amarillo).
		if !(c(f).hailRate > den.hailRate) {
			t.Errorf("hail: %s %.2f a year should exceed Denver County %.2f", f, c(f).hailRate, den.hailRate)
		}
	}
	for _, f := range []string{"17031", "36061", "06037", "53033", "12086"} {
		// Cook IL, New York NY, Los Angeles, King WA, Miami-Dade.
		if !(c(f).hailRate < den.hailRate/2) {
			t.Errorf("hail: %s %.2f a year should be well below Denver County %.2f", f, c(f).hailRate, den.hailRate)
		}
	}
	if !(c("40109").windRate > c("17031").windRate) {
		t.Errorf("wind: Oklahoma County %.2f should exceed Cook County %.2f", c("40109").windRate, c("17031").windRate)
	}
	// The 20 highest hail rates are all in the Great Plains.
	type fr struct {
		f string
		r float64
	}
	var all []fr
	for f, cr := range m.county {
		all = append(all, fr{f, cr.hailRate})
	}
	slices.SortFunc(all, func(a, b fr) int {
		if a.r != b.r {
			if a.r > b.r {
				return -1
			}
			return 1
		}
		return strings.Compare(a.f, b.f)
	})
	plains := map[string]bool{"08": true, "20": true, "31": true, "40": true, "48": true, "46": true, "56": true, "35": true, "30": true, "38": true}
	for _, x := range all[:20] {
		if !plains[x.f[:2]] {
			t.Errorf("hail: county %s (%.2f a year) among the 20 highest is outside the Great Plains", x.f, x.r)
		}
	}
}
