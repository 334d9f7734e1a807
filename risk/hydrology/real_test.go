package hydrology

import (
	"reflect"
	"runtime"
	"sort"
	"testing"

	"locrisk/risk/data"
	"locrisk/risk/data/datatest"
	"locrisk/risk/geo"
	"locrisk/risk/hazard"
)

// The tests in this file run against the real data sets named by
// LOCRISK_DATA_DIR and are skipped without it.

var realModule = datatest.Once(datatest.RealDir, Load)

func TestRealRows(t *testing.T) {
	m := realModule(t)
	want := map[string]int{SrcShorelines: 18268, SrcRivers: 2099, SrcGauges: 11793, SrcNFIP: 3162, SrcDeclarations: 48555}
	got := m.Rows()
	for id, n := range want {
		if got[id] != n {
			t.Errorf("Rows()[%s] = %d, want %d (PROVENANCE.md row count)", id, got[id], n)
		}
	}
	if n := len(m.gauge); n < 6500 || n > 7000 {
		t.Errorf("%d flood-stage gauges kept, want about 6,700 (6,972 with a flood stage, less out of service and Canadian)", n)
	}
	for _, fips := range []string{"51810", "51710", "24510", "29510", "32510", "46102", "02158", "02063"} {
		if _, ok := m.decl[fips]; !ok {
			t.Errorf("county %s has no declaration count; the place-code and renamed-county mapping missed it", fips)
		}
	}
	if _, ok := m.decl["09110"]; ok {
		t.Errorf("Connecticut planning region 09110 has a declaration count, but the file uses the legacy counties")
	}
}

func TestRealPlaces(t *testing.T) {
	m := realModule(t)
	miami := m.Measure(hazard.Site{Lat: 25.7617, Lon: -80.1918, CountyFIPS: "12086", StateCode: "FL", Conus: true})
	denver := m.Measure(hazard.Site{Lat: 39.7392, Lon: -104.9903, CountyFIPS: "08031", StateCode: "CO", Conus: true})
	nola := m.Measure(hazard.Site{Lat: 29.9511, Lon: -90.0715, CountyFIPS: "22071", StateCode: "LA", Conus: true})
	chicago := m.Measure(hazard.Site{Lat: 41.8781, Lon: -87.6298, CountyFIPS: "17031", StateCode: "IL", Conus: true})

	if mi, de := value(t, miami, "coastal_exposure_index"), value(t, denver, "coastal_exposure_index"); !(mi > de) {
		t.Errorf("coastal exposure Miami %g, Denver %g: want Miami higher", mi, de)
	}
	if d := value(t, miami, "distance_to_coast_km"); d > 5 {
		t.Errorf("Miami is %g km from the ocean shoreline, want under 5 km", d)
	}
	if d := value(t, denver, "distance_to_coast_km"); d != coastMaxKm {
		t.Errorf("Denver coast distance = %g, want the %g km cap", d, coastMaxKm)
	}
	if l := indicator(t, denver, "distance_to_coast_km").Label; !contains(l, "capped") {
		t.Errorf("Denver coast label %q does not say the value is capped", l)
	}
	if v := value(t, denver, "coastal_exposure_index"); v != 0 {
		t.Errorf("Denver coastal exposure = %g, want 0", v)
	}
	if n := value(t, nola, "flood_disaster_declarations"); n < 12 {
		t.Errorf("Orleans Parish flood declarations = %g, want at least 12", n)
	}
	if r := value(t, nola, "nfip_penetration_rate"); r < 50 {
		t.Errorf("Orleans Parish NFIP take-up = %g%%, want over 50%% (60%% in May 2025)", r)
	}
	if d := value(t, nola, "distance_to_major_river_km"); d > 3 {
		t.Errorf("New Orleans is %g km from a major river (the Mississippi), want under 3 km", d)
	}
	if g := indicator(t, nola, "nearest_flood_gauge"); !contains(g.Text, "NORL1") {
		t.Errorf("nearest flood gauge to New Orleans is %q, want Mississippi River at New Orleans (NORL1)", g.Text)
	}
	// Chicago: Lake Michigan is a GSHHG lake (level 2), not ocean.
	if d := value(t, chicago, "distance_to_lake_shore_km"); d > 3 {
		t.Errorf("Chicago Loop is %g km from a lake shore, want under 3 km (Lake Michigan)", d)
	}
	if d := value(t, chicago, "distance_to_coast_km"); d != coastMaxKm {
		t.Errorf("Chicago ocean distance = %g, want the cap", d)
	}
}

// TestRealReferenceSpread checks that the ranked indicators separate the
// reference points instead of piling them on one value.
func TestRealReferenceSpread(t *testing.T) {
	m := realModule(t)
	sites := datatest.GazetteerSites(t, datatest.RealDir(t))
	vals := map[string][]float64{}
	for _, s := range sites {
		for _, in := range m.Measure(s).Indicators {
			if in.Ranked {
				vals[in.ID] = append(vals[in.ID], in.Value)
			}
		}
	}
	for id, v := range vals {
		sort.Float64s(v)
		zeros := 0
		for _, x := range v {
			if x == 0 {
				zeros++
			}
		}
		t.Logf("%-30s n=%d zeros=%.0f%% p50=%.4g p90=%.4g max=%.4g", id, len(v), 100*float64(zeros)/float64(len(v)), v[len(v)/2], v[len(v)*9/10], v[len(v)-1])
		if zeros > len(v)*95/100 {
			t.Errorf("%s is 0 at %d of %d reference points", id, zeros, len(v))
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	dir := datatest.RealDir(b)
	for b.Loop() {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMeasure(b *testing.B) {
	datatest.BenchmarkReferenceMeasure(b, realModule(b))
}

func TestRealParserMatchesEncodingJSON(t *testing.T) {
	dir := datatest.RealDir(t)
	for _, id := range []string{SrcShorelines, SrcRivers} {
		raw, err := data.ReadAll(dir, data.Path(id))
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseLines(data.Path(id), raw)
		if err != nil {
			t.Fatal(err)
		}
		want := decodeWithStdlib(t, raw)
		if len(got) != len(want) {
			t.Fatalf("%s: %d features, encoding/json %d", id, len(got), len(want))
		}
		for i := range got {
			if got[i].level != want[i].level || !reflect.DeepEqual(got[i].pts, want[i].pts) {
				t.Fatalf("%s feature %d differs from encoding/json", id, i+1)
			}
		}
	}
}

func TestRealReachMapSkipsOnlyEmptyRings(t *testing.T) {
	m := realModule(t)
	var pts []geo.Point
	for _, s := range datatest.GazetteerSites(t, datatest.RealDir(t)) {
		pts = append(pts, geo.Point{Lat: s.Lat, Lon: s.Lon})
		for _, d := range []float64{-0.37, 0.21, 0.6} {
			pts = append(pts, geo.Point{Lat: s.Lat + d, Lon: geo.NormalizeLon(s.Lon - d*1.3)})
		}
	}
	checkReach(t, "coast", m.coast, pts)
	checkReach(t, "lakes", m.lakes, pts)
	checkReach(t, "rivers", m.rivers, pts)
}

// TestRealMemory reports the heap the loaded module keeps.
func TestRealMemory(t *testing.T) {
	dir := datatest.RealDir(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	kept := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("loaded module keeps %.1f MB of heap", float64(kept)/(1<<20))
	if kept > 60<<20 {
		t.Errorf("module keeps %d MB, more than the 60 MB share of the 150 MB budget", kept>>20)
	}
	runtime.KeepAlive(m)
}
