package severeweather

import (
	"sync"
	"testing"
	"time"

	"locrisk/risk/data"
	"locrisk/risk/data/datatest"
	"locrisk/risk/hazard"
)

// gazetteer is the Census county table the coverage layer also reads; the
// tests take land areas and interior points from it.
type gazCounty struct {
	fips, usps string
	lat, lon   float64
}

func readGazetteer(tb testing.TB, dir string) (map[string]float64, []gazCounty) {
	tb.Helper()
	t, err := data.OpenTableSep(dir, data.Path("census-gazetteer-2019"), '\t', "USPS", "GEOID", "ALAND", "INTPTLAT", "INTPTLONG")
	if err != nil {
		tb.Fatal(err)
	}
	defer t.Close()
	areas := make(map[string]float64, 3300)
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
		areas[fips] = aland / 1e6
		pts = append(pts, gazCounty{fips: fips, usps: t.String("USPS"), lat: lat, lon: lon})
	}
	if err := t.Err(); err != nil {
		tb.Fatal(err)
	}
	return areas, pts
}

var (
	realOnce  sync.Once
	realMod   *Module
	realErr   error
	realPts   []gazCounty
	realAreas map[string]float64
)

func loadReal(tb testing.TB) *Module {
	tb.Helper()
	dir := datatest.RealDir(tb)
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
		m.tstats, m.hstats, len(m.hsegs), len(m.tornIx.items), len(m.hurrIx.items))
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
	dir := datatest.RealDir(b)
	areas, _ := readGazetteer(b, dir)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Load(dir, areas); err != nil {
			b.Fatal(err)
		}
	}
}
