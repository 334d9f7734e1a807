package hydrology

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
	"github.com/locrisk/locrisk/internal/risk/terrain"
)

// The tests in this file run against the real data sets,
// datatest.Real: the data built into the binary.

var realModule = datatest.Once(datatest.Real, Load)

func TestRealRows(t *testing.T) {
	m := realModule(t)
	want := map[string]int{SrcShorelines: 18268, SrcRivers: 2099, SrcMinorRivers: 1894, SrcGauges: 11793, SrcNFIP: 3162, SrcDeclarations: 48555}
	got := m.Rows()
	for id, n := range want {
		if got[id] != n {
			t.Errorf("Rows()[%s] = %d, want %d (PROVENANCE.md row count)", id, got[id], n)
		}
	}
	// 6,085 in-service gauges with a flood stage measure a river (5,955
	// river stage HG, 113 tailwater HT, 17 discharge QR and QT), less 15
	// Canadian ones and 13 tide stations coded HG.
	if n := len(m.gauge); n != 6057 {
		t.Errorf("%d river gauges with a flood stage kept, want 6,057", n)
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

	if mi, de := value(t, miami, IndCoastalProximity), value(t, denver, IndCoastalProximity); !(mi > de) {
		t.Errorf("coastal proximity Miami %g, Denver %g: want Miami higher", mi, de)
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
	if v := value(t, denver, IndCoastalProximity); v != 0 {
		t.Errorf("Denver coastal proximity = %g, want 0", v)
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
	if g := indicator(t, nola, "nearest_river_gauge"); !contains(g.Text, "NORL1") {
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

// TestRealFloodSites checks the flood measures at well-known places that
// tell the indicators apart: a downtown on a river the major-river layer
// lacks, an island with tide gauges but no river, a barrier beach, and a
// plateau town inland.
func TestRealFloodSites(t *testing.T) {
	m := realModule(t)
	cedar := m.Measure(hazard.Site{Lat: 41.9779, Lon: -91.6656, CountyFIPS: "19113", StateCode: "IA", Conus: true})
	keyWest := m.Measure(hazard.Site{Lat: 24.5551, Lon: -81.7800, CountyFIPS: "12087", StateCode: "FL", Conus: true})
	miamiBeach := m.Measure(hazard.Site{Lat: 25.7907, Lon: -80.1300, CountyFIPS: "12086", StateCode: "FL", Conus: true})
	wahiawa := m.Measure(hazard.Site{Lat: 21.5028, Lon: -158.0236, CountyFIPS: "15003", StateCode: "HI"})

	// Downtown Cedar Rapids lies on the Cedar River (WDBII level 4), which
	// the major-river layer lacks.
	if d := indicator(t, cedar, IndDistanceToRiver); d.Value > NearWaterKm || d.Source != SrcMinorRivers {
		t.Errorf("Cedar Rapids: nearest river %g km from %s, want within %g km from the levels 4-11 layer", d.Value, d.Source, NearWaterKm)
	}
	if idx := value(t, cedar, IndRiverProximity); idx < math.Exp(-1) {
		t.Errorf("Cedar Rapids: river proximity %g, want at least exp(-1)", idx)
	}
	if g := indicator(t, cedar, "nearest_river_gauge"); !contains(g.Text, "CIDI4") {
		t.Errorf("Cedar Rapids: nearest river gauge %q, want Cedar River at Cedar Rapids (CIDI4)", g.Text)
	}

	// Key West has tide gauges with flood stages (KYWF1, 2.9 km) but no
	// river gauge and no river: every riverine indicator is at its floor.
	for _, id := range []string{IndRiverProximity, IndRiverGaugeProximity, "river_gauges_with_flood_stage_10km"} {
		if v := value(t, keyWest, id); v != 0 {
			t.Errorf("Key West: %s = %g, want 0", id, v)
		}
	}
	if g, ok := find(keyWest, "nearest_river_gauge"); ok {
		t.Errorf("Key West: nearest river gauge %q, want none within 25 km (its gauges are tide gauges)", g.Text)
	}
	for _, g := range m.gauge {
		if contains(g.label, "(KYWF1)") || contains(g.label, "(VAKF1)") || contains(g.label, "Tide Gauge") || contains(g.label, "Tide Station") {
			t.Errorf("tide gauge %q kept as a river gauge", g.label)
		}
	}

	// Coastal proximity decays quickly inland: Wahiawa, on Oahu's plateau
	// 13 km from the sea, is far below the island coasts. Key West's point
	// is 0.6 km from the GSHHG shoreline (exp(-0.31) = 0.74), Miami
	// Beach's under 0.1 km.
	if v := value(t, wahiawa, IndCoastalProximity); v >= 0.05 {
		t.Errorf("Wahiawa: coastal proximity %g, want below 0.05", v)
	}
	if v := value(t, miamiBeach, IndCoastalProximity); v <= 0.9 {
		t.Errorf("Miami Beach: coastal proximity %g, want above 0.9", v)
	}
	if v := value(t, keyWest, IndCoastalProximity); v <= 0.7 {
		t.Errorf("Key West: coastal proximity %g, want above 0.7", v)
	}
	for name, ms := range map[string]hazard.Measurement{"Key West": keyWest, "Miami Beach": miamiBeach} {
		if d := value(t, ms, IndDistanceToCoast); d > NearWaterKm {
			t.Errorf("%s: %g km from the ocean shoreline, want within %g km", name, d, NearWaterKm)
		}
	}
}

// TestRealReferenceSpread checks that the ranked indicators separate the
// reference points instead of piling them on one value.
func TestRealReferenceSpread(t *testing.T) {
	m := realModule(t)
	sites := datatest.GazetteerSites(t, datatest.Real(t))
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
	dir := datatest.Real(b)
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
	dir := datatest.Real(t)
	for _, id := range []string{SrcShorelines, SrcRivers, SrcMinorRivers} {
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
	for _, s := range datatest.GazetteerSites(t, datatest.Real(t)) {
		pts = append(pts, geo.Point{Lat: s.Lat, Lon: s.Lon})
		for _, d := range []float64{-0.37, 0.21, 0.6} {
			pts = append(pts, geo.Point{Lat: s.Lat + d, Lon: geo.NormalizeLon(s.Lon - d*1.3)})
		}
	}
	checkReach(t, "coast", m.coast, pts)
	checkReach(t, "lakes", m.lakes, pts)
	for lv, tl := range m.majorLevel {
		checkReach(t, fmt.Sprintf("rivers, level %d", lv+1), tl, pts)
	}
	checkReach(t, "Natural Earth rivers", m.neRivers, pts)
	checkReach(t, "Natural Earth minor rivers", m.neMinor, pts)
	checkReach(t, "minor rivers", m.minorRivers, pts)
}

// TestRealMemory reports the heap the loaded module keeps.
func TestRealMemory(t *testing.T) {
	dir := datatest.Real(t)
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

// realWithGround is the real module with the real terrain, measured at s.
func realWithGround(t *testing.T) func(s hazard.Site) hazard.Measurement {
	t.Helper()
	m := realModule(t)
	g, err := realTerrain(t)
	if err != nil {
		t.Fatal(err)
	}
	return func(s hazard.Site) hazard.Measurement {
		m.UseGround(g)
		defer m.UseGround(nil)
		return m.Measure(s)
	}
}

var realTerrain = func() func(*testing.T) (*terrain.Model, error) {
	var (
		once sync.Once
		g    *terrain.Model
		err  error
	)
	return func(t *testing.T) (*terrain.Model, error) {
		dir := datatest.Real(t)
		once.Do(func() { g, err = terrain.Load(dir) })
		return g, err
	}
}()

// TestRealRiverPlaces: towns whose flood record is public, where the
// river layers and the terrain must agree with it (a ridge town far from
// any river, a town beyond its river's reach, a downtown beside its
// river, rivers only Natural Earth names, canyon towns that flooded), and
// riverbank/high-ground pairs in one county, on the real data and terrain.
func TestRealRiverPlaces(t *testing.T) {
	measure := realWithGround(t)
	site := func(lat, lon float64, fips, st string) hazard.Site {
		return hazard.Site{Lat: lat, Lon: lon, CountyFIPS: fips, StateCode: st, Conus: true}
	}
	// Blowing Rock, NC: a ridge town on the Eastern Continental Divide; the
	// nearest major river (South Fork New River) is 8.6 km away, beyond a
	// level-3 river's 5 km reach, and the nearest gauge (Watauga River
	// near Foscoe) 7.4 km, beyond the gauges' 6 km.
	br := measure(site(36.1351, -81.6779, "37189", "NC"))
	if r, g := value(t, br, IndRiverProximity), value(t, br, IndRiverGaugeProximity); r != 0 || g != 0 {
		t.Errorf("Blowing Rock: river proximity %g, gauge proximity %g, want 0 and 0", r, g)
	}
	// Moore, OK: the Canadian River (WDBII level 3) 6.6 km away.
	moore := measure(site(35.3395, -97.4867, "40027", "OK"))
	if d, r := value(t, moore, IndDistanceToRiver), value(t, moore, IndRiverProximity); d < 6 || r != 0 {
		t.Errorf("Moore: nearest river %g km, river proximity %g, want over 6 km and 0", d, r)
	}
	// Downtown Denver: the South Platte 1.4 km away and Cherry Creek's
	// gauge 0.9 km away, a few metres above both on the 2 km grid: the
	// evidence stands, weighed as a level-3 river (0.8 × exp(-d / 1.5 km)).
	den := measure(site(39.7392, -104.9903, "08031", "CO"))
	if h := value(t, den, IndHeightAboveRiver); h > 30 {
		t.Errorf("Denver: %g m above the South Platte on the grid, want under 30", h)
	}
	if d, r := value(t, den, IndDistanceToRiver), value(t, den, IndRiverProximity); math.Abs(r-0.8*math.Exp(-d/1.5)) > 1e-9 {
		t.Errorf("Denver: river proximity %g at %g km, want the untempered level-3 value", r, d)
	}
	// Named rivers the Natural Earth layer adds.
	for _, c := range []struct {
		name, river string
		s           hazard.Site
		maxKm       float64
	}{
		{"Guerneville, CA", "Russian", site(38.5019, -123.0011, "06097", "CA"), 1},
		{"Kerrville, TX", "Guadalupe", site(30.0474, -99.1403, "48265", "TX"), 1},
		{"Tarboro, NC", "Tar", site(35.8968, -77.5358, "37065", "NC"), 1.5},
	} {
		ms := measure(c.s)
		d := indicator(t, ms, IndDistanceToRiver)
		if d.Value > c.maxKm || d.Source != SrcNERivers || !strings.Contains(d.Label, c.river) {
			t.Errorf("%s: nearest river %g km %q (%s), want the %s within %g km", c.name, d.Value, d.Label, d.Source, c.river, c.maxKm)
		}
		if value(t, ms, IndRiverProximity) == 0 {
			t.Errorf("%s: river proximity 0 beside the %s", c.name, c.river)
		}
	}
	// Riverbank above high ground in the same county, on both indices.
	for _, c := range []struct {
		bank, high       string
		bankSite, hiSite hazard.Site
	}{
		{"Guerneville", "Occidental", site(38.5019, -123.0011, "06097", "CA"), site(38.4074, -122.9489, "06097", "CA")},
		{"Harpers Ferry", "Charles Town", site(39.3245, -77.7300, "54037", "WV"), site(39.2890, -77.8597, "54037", "WV")},
		{"Gauley Bridge", "Fayetteville", site(38.1668, -81.1951, "54019", "WV"), site(38.0529, -81.1040, "54019", "WV")},
		{"Oroville", "Paradise", site(39.5138, -121.5564, "06007", "CA"), site(39.7596, -121.6219, "06007", "CA")},
		{"Johnstown", "Westmont", site(40.3267, -78.9220, "42021", "PA"), site(40.3162, -78.9525, "42021", "PA")},
	} {
		b, h := measure(c.bankSite), measure(c.hiSite)
		sum := func(ms hazard.Measurement) float64 {
			return 2*value(t, ms, IndRiverProximity) + value(t, ms, IndRiverGaugeProximity)
		}
		if !(sum(b) > sum(h)) {
			t.Errorf("%s (%g) must be above %s (%g) on river and gauge proximity", c.bank, sum(b), c.high, sum(h))
		}
	}
	// Canyon towns that flooded in 2013 keep their gauge: the 2 km grid
	// cannot see a narrow valley floor, so it must not clear them.
	for _, c := range []struct {
		name string
		s    hazard.Site
	}{
		{"Lyons, CO", site(40.2247, -105.2714, "08013", "CO")},
		{"Jamestown, CO", site(40.1155, -105.3886, "08013", "CO")},
	} {
		if g := value(t, measure(c.s), IndRiverGaugeProximity); g == 0 {
			t.Errorf("%s: gauge proximity 0; a flood-struck canyon town cleared by a 2 km grid", c.name)
		}
	}
}
