package hydrology

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// fixture is the module loaded once on the hand-written fixture world.
var fixture = datatest.Once(datatest.Fixture, Load)

// Fixture sites, at the real places.
var (
	miami    = hazard.Site{Lat: 25.7617, Lon: -80.1918, CountyFIPS: "12086", StateFIPS: "12", StateCode: "FL", Conus: true}
	denver   = hazard.Site{Lat: 39.7392, Lon: -104.9903, CountyFIPS: "08031", StateFIPS: "08", StateCode: "CO", Conus: true}
	chicago  = hazard.Site{Lat: 41.8781, Lon: -87.6298, CountyFIPS: "17031", StateFIPS: "17", StateCode: "IL", Conus: true}
	okc      = hazard.Site{Lat: 35.4676, Lon: -97.5164, CountyFIPS: "40109", StateFIPS: "40", StateCode: "OK", Conus: true}
	seattle  = hazard.Site{Lat: 47.6062, Lon: -122.3321, CountyFIPS: "53033", StateFIPS: "53", StateCode: "WA", Conus: true}
	sf       = hazard.Site{Lat: 37.7749, Lon: -122.4194, CountyFIPS: "06075", StateFIPS: "06", StateCode: "CA", Conus: true}
	boston   = hazard.Site{Lat: 42.3601, Lon: -71.0589, CountyFIPS: "25025", StateFIPS: "25", StateCode: "MA", Conus: true}
	honolulu = hazard.Site{Lat: 21.3069, Lon: -157.8583, CountyFIPS: "15003", StateFIPS: "15", StateCode: "HI"}
	sanJuan  = hazard.Site{Lat: 18.4655, Lon: -66.1057, CountyFIPS: "72127", StateFIPS: "72", StateCode: "PR"}
	guam     = hazard.Site{Lat: 13.4443, Lon: 144.7937, CountyFIPS: "66010", StateFIPS: "66", StateCode: "GU"}
	adak     = hazard.Site{Lat: 51.82, Lon: -179.99, CountyFIPS: "02016", StateFIPS: "02", StateCode: "AK"}
	cedar    = hazard.Site{Lat: 41.9779, Lon: -91.6656, CountyFIPS: "19113", StateFIPS: "19", StateCode: "IA", Conus: true}
	keyWest  = hazard.Site{Lat: 24.5551, Lon: -81.7800, CountyFIPS: "12087", StateFIPS: "12", StateCode: "FL", Conus: true}
	phoenix  = hazard.Site{Lat: 33.4484, Lon: -112.0740, CountyFIPS: "04013", StateFIPS: "04", StateCode: "AZ", Conus: true}
)

// allSites are every fixture site above.
var allSites = []hazard.Site{miami, denver, chicago, okc, seattle, sf, boston, honolulu, sanJuan, guam, adak, cedar, keyWest, phoenix}

// northOf is the point km north of p along its meridian.
func northOf(p geo.Point, km float64) geo.Point {
	return geo.Point{Lat: p.Lat + km/geo.KmPerDegLat, Lon: p.Lon}
}

// eastOf is the point km east of p along its parallel, in the local
// projection the segment index measures in.
func eastOf(p geo.Point, km float64) geo.Point {
	return geo.Point{Lat: p.Lat, Lon: p.Lon + km/(math.Cos(p.Lat*math.Pi/180)*geo.KmPerDegLat)}
}

func TestFixtureRows(t *testing.T) {
	m := fixture(t)
	want := map[string]int{SrcShorelines: 9, SrcRivers: 3, SrcMinorRivers: 5, SrcNERivers: 6, SrcGauges: 22, SrcNFIP: 11, SrcDeclarations: 23}
	if got := m.Rows(); !reflect.DeepEqual(got, want) {
		t.Errorf("Rows() = %v, want %v", got, want)
	}
	if got, want := m.Sources(), []string{SrcShorelines, SrcRivers, SrcMinorRivers, SrcNERivers, SrcGauges, SrcNFIP, SrcDeclarations}; !reflect.DeepEqual(got, want) {
		t.Errorf("Sources() = %v, want %v", got, want)
	}
	for _, id := range m.Sources() {
		if _, ok := data.SourceByID(id); !ok {
			t.Errorf("source %s is not in the data catalog", id)
		}
	}
	if m.Name() != hazard.Hydrology {
		t.Errorf("Name() = %q", m.Name())
	}
}

func TestCoastDistanceRadii(t *testing.T) {
	m := fixture(t)
	// The fixture shoreline off Miami runs north-south at 80.13 W. The
	// proximity index is exp(-d / 2 km) out to 10 km and 0 beyond; the
	// distance is reported out to 100 km.
	line := geo.Point{Lat: 25.75, Lon: -80.13}
	cases := []struct {
		km        float64 // west of the shoreline
		wantKm    float64
		wantIndex float64
		capped    bool
	}{
		{0.3, 0.3, math.Exp(-0.15), false},
		{2, 2, math.Exp(-1), false},
		{4.9, 4.9, math.Exp(-2.45), false}, // fine grid
		{5.1, 5.1, math.Exp(-2.55), false}, // coarser grid
		{9.9, 9.9, math.Exp(-4.95), false}, // last distance with an index
		{10.1, 10.1, 0, false},             // reported, but no longer exposure
		{19.9, 19.9, 0, false},
		{20.1, 20.1, 0, false},
		{29.9, 29.9, 0, false},
		{30.1, 30.1, 0, false},
		{49.9, 49.9, 0, false},
		{50.1, 50.1, 0, false},
		{99.9, 99.9, 0, false},
		{100.1, coastMaxKm, 0, true}, // beyond the search radius: capped
		{1500, coastMaxKm, 0, true},
	}
	for _, c := range cases {
		p := eastOf(line, -c.km)
		ms := m.Measure(hazard.Site{Lat: p.Lat, Lon: p.Lon, CountyFIPS: "12086", StateCode: "FL", Conus: true})
		d := indicator(t, ms, IndDistanceToCoast)
		if math.Abs(d.Value-c.wantKm) > 1e-6 {
			t.Errorf("%g km west of the shoreline: distance %g, want %g", c.km, d.Value, c.wantKm)
		}
		if got := contains(d.Label, "capped"); got != c.capped {
			t.Errorf("%g km: label %q, capped mention = %v, want %v", c.km, d.Label, got, c.capped)
		}
		if idx := value(t, ms, IndCoastalProximity); math.Abs(idx-c.wantIndex) > 1e-9 {
			t.Errorf("%g km: coastal proximity index %g, want %g", c.km, idx, c.wantIndex)
		}
		if has(ms, IndStormSurge) {
			t.Errorf("%g km: storm surge index present without a storm climate", c.km)
		}
	}
}

func TestCoastPlaces(t *testing.T) {
	m := fixture(t)
	cases := []struct {
		name   string
		site   hazard.Site
		maxKm  float64 // distance_to_coast_km must be at most this
		capped bool
	}{
		{"Miami", miami, 6.3, false},
		{"San Francisco", sf, 8.5, false},
		{"Honolulu", honolulu, 3.2, false},
		{"Guam", guam, 6, false},
		{"Adak, east of the antimeridian", adak, 2.23, false},
		{"Adak, west of the antimeridian", hazard.Site{Lat: 51.82, Lon: 179.99, CountyFIPS: "02016", StateCode: "AK"}, 2.23, false},
		{"Denver", denver, coastMaxKm, true},
		{"Chicago (Lake Michigan is a lake, not ocean)", chicago, coastMaxKm, true},
	}
	for _, c := range cases {
		ms := m.Measure(c.site)
		d := value(t, ms, "distance_to_coast_km")
		if d > c.maxKm {
			t.Errorf("%s: coast distance %g km, want at most %g", c.name, d, c.maxKm)
		}
		if idx := value(t, ms, IndCoastalProximity); (idx == 0) != (d > coastIndexKm) {
			t.Errorf("%s: coastal proximity %g at %g km", c.name, idx, d)
		}
		if c.capped && d != coastMaxKm {
			t.Errorf("%s: coast distance %g, want the %g km cap", c.name, d, coastMaxKm)
		}
	}
	// Miami's distance is the exact perpendicular distance to the line.
	want := 0.0618 * math.Cos(miami.Lat*math.Pi/180) * geo.KmPerDegLat
	if d := value(t, m.Measure(miami), "distance_to_coast_km"); math.Abs(d-want) > 1e-6 {
		t.Errorf("Miami coast distance %g, want %g", d, want)
	}
	if mi, de := value(t, m.Measure(miami), IndCoastalProximity), value(t, m.Measure(denver), IndCoastalProximity); !(mi > de) {
		t.Errorf("coastal proximity Miami %g not above Denver %g", mi, de)
	}
}

func TestLakeShore(t *testing.T) {
	m := fixture(t)
	// Lake Michigan (level 2) at 87.60 W.
	want := 0.0298 * math.Cos(chicago.Lat*math.Pi/180) * geo.KmPerDegLat
	if d := value(t, m.Measure(chicago), "distance_to_lake_shore_km"); math.Abs(d-want) > 1e-6 {
		t.Errorf("Chicago lake distance %g, want %g", d, want)
	}
	// A level-3 shore (island in a lake) counts; a level-4 pond does not.
	if d := value(t, m.Measure(okc), "distance_to_lake_shore_km"); d >= lakeMaxKm {
		t.Errorf("OKC lake distance %g: the level-3 shore 14 km away was not used", d)
	}
	ms := m.Measure(denver)
	if d := indicator(t, ms, "distance_to_lake_shore_km"); d.Value != lakeMaxKm || !contains(d.Label, "capped") {
		t.Errorf("Denver lake distance %g (%q): the level-4 pond must be ignored and the value capped", d.Value, d.Label)
	}
	for _, in := range ms.Indicators {
		if in.ID == "distance_to_lake_shore_km" && (in.Ranked || in.Weight != 0) {
			t.Errorf("lake distance is context only, got ranked=%v weight=%g", in.Ranked, in.Weight)
		}
	}
}

func TestRivers(t *testing.T) {
	m := fixture(t)
	// The fixture major river (level 1) runs east-west along 35.45 N; an
	// additional river (level 4) runs along 35.40 N, 5.6 km south of it.
	major := geo.Point{Lat: 35.45, Lon: -97.5164}
	gap := 0.05 * geo.KmPerDegLat
	okcAt := func(km float64) hazard.Site { // km north of the major river; negative is south
		p := northOf(major, km)
		return hazard.Site{Lat: p.Lat, Lon: p.Lon, CountyFIPS: "40109", StateCode: "OK", Conus: true}
	}
	majorIdx := func(km float64) float64 { return math.Exp(-km / 3) }
	minorIdx := func(km float64) float64 { return 0.8 * math.Exp(-km/1) } // level 4: size weight 0.8
	type riverCase struct {
		name         string
		site         hazard.Site
		riverKm      float64 // distance_to_river_km
		riverCapped  bool
		nearestMajor bool // the nearest river is the major one
		majorKm      float64
		majorCapped  bool
		wantIndex    float64
	}
	cases := []riverCase{
		{"OKC", okc, 0.0176 * geo.KmPerDegLat, false, true, 0.0176 * geo.KmPerDegLat, false, majorIdx(0.0176 * geo.KmPerDegLat)},
		{"2 km south: the major river is nearer", okcAt(-2), 2, false, true, 2, false, majorIdx(2)},
		{"4 km south: the minor river is nearer, the major's decay is larger", okcAt(-4), gap - 4, false, false, 4, false, majorIdx(4)},
		{"5 km south: the minor river's decay is larger", okcAt(-5), gap - 5, false, false, 5, false, minorIdx(gap - 5)},
		{"9.9 km north", okcAt(9.9), 9.9, false, true, 9.9, false, majorIdx(9.9)},
		{"10.1 km north: reported, no exposure", okcAt(10.1), 10.1, false, true, 10.1, false, 0},
		{"24.9 km north", okcAt(24.9), 24.9, false, true, 24.9, false, 0},
		{"25.1 km north: no river of either layer within 25 km", okcAt(25.1), anyRiverMaxKm, true, false, 25.1, false, 0},
		{"49.9 km north", okcAt(49.9), anyRiverMaxKm, true, false, 49.9, false, 0},
		{"50.1 km north: capped", okcAt(50.1), anyRiverMaxKm, true, false, riverMaxKm, true, 0},
	}
	// The fixture Cedar River (level 4) runs along 41.975 N, with no major
	// river within 50 km.
	cedarLine := geo.Point{Lat: 41.975, Lon: -91.6656}
	cedarAt := func(km float64) hazard.Site {
		p := northOf(cedarLine, km)
		return hazard.Site{Lat: p.Lat, Lon: p.Lon, CountyFIPS: "19113", StateCode: "IA", Conus: true}
	}
	for _, km := range []float64{0.03, 1, 2.9, 3.1, 24.9, 25.1} {
		c := riverCase{fmt.Sprintf("%g km north of the Cedar River", km), cedarAt(km), km, false, false, riverMaxKm, true, 0}
		if km <= riverIndexKm {
			c.wantIndex = minorIdx(km)
		}
		if km > anyRiverMaxKm {
			c.riverKm, c.riverCapped = anyRiverMaxKm, true
		}
		cases = append(cases, c)
	}
	cases = append(cases, riverCase{"Cedar Rapids", cedar, (41.9779 - 41.975) * geo.KmPerDegLat, false, false, riverMaxKm, true, minorIdx((41.9779 - 41.975) * geo.KmPerDegLat)})

	for _, c := range cases {
		ms := m.Measure(c.site)
		d := indicator(t, ms, IndDistanceToRiver)
		if math.Abs(d.Value-c.riverKm) > 1e-6 {
			t.Errorf("%s: nearest river %g km, want %g", c.name, d.Value, c.riverKm)
		}
		if contains(d.Label, "capped") != c.riverCapped {
			t.Errorf("%s: label %q, capped = %v", c.name, d.Label, c.riverCapped)
		}
		if !c.riverCapped {
			wantLayer, wantSrc := "additional rivers, level 4", SrcMinorRivers
			if c.nearestMajor {
				wantLayer, wantSrc = "major rivers, levels 1-3", SrcRivers
			}
			if !contains(d.Label, wantLayer) || d.Source != wantSrc {
				t.Errorf("%s: nearest river label %q source %s, want the layer %q (%s)", c.name, d.Label, d.Source, wantLayer, wantSrc)
			}
		}
		mj := indicator(t, ms, IndDistanceToMajorRiver)
		if math.Abs(mj.Value-c.majorKm) > 1e-6 || contains(mj.Label, "capped") != c.majorCapped {
			t.Errorf("%s: major river %g km (%q), want %g capped=%v", c.name, mj.Value, mj.Label, c.majorKm, c.majorCapped)
		}
		idx := indicator(t, ms, IndRiverProximity)
		if math.Abs(idx.Value-c.wantIndex) > 1e-9 {
			t.Errorf("%s: river proximity %g, want %g", c.name, idx.Value, c.wantIndex)
		}
		// The index cites the layer whose decay it took.
		if c.wantIndex > 0 {
			wantSrc := SrcMinorRivers
			if c.wantIndex == majorIdx(c.majorKm) {
				wantSrc = SrcRivers
			}
			if idx.Source != wantSrc {
				t.Errorf("%s: river proximity cites %s, want %s", c.name, idx.Source, wantSrc)
			}
		}
	}
	if d := value(t, m.Measure(cedar), IndDistanceToRiver); d > NearWaterKm {
		t.Errorf("Cedar Rapids: nearest river %g km, want within %g km", d, NearWaterKm)
	}
	// Intermittent rivers (level 6) and canals (level 10) run through the
	// fixture Phoenix site; neither counts.
	ms := m.Measure(phoenix)
	if d := indicator(t, ms, IndDistanceToRiver); d.Value != anyRiverMaxKm || !contains(d.Label, "capped") {
		t.Errorf("Phoenix: nearest river %g km (%q): the intermittent river and the canal must be ignored", d.Value, d.Label)
	}
	if idx := value(t, ms, IndRiverProximity); idx != 0 {
		t.Errorf("Phoenix: river proximity %g, want 0", idx)
	}
	// All three WDBII levels of the major file count: Denver's river is
	// level 3, Seattle's 2.
	for _, s := range []hazard.Site{denver, seattle} {
		if d := value(t, m.Measure(s), IndDistanceToMajorRiver); d > 7 {
			t.Errorf("%s: major river distance %g, want under 7 km", s.CountyFIPS, d)
		}
	}
	// No river layer for Hawaii and the Pacific territories: no indicator,
	// rather than a made-up distance, and lower quality.
	for _, s := range []hazard.Site{honolulu, guam} {
		ms := m.Measure(s)
		if has(ms, IndRiverProximity) || has(ms, IndDistanceToRiver) || has(ms, IndDistanceToMajorRiver) {
			t.Errorf("%s: river indicators present, but the layers do not cover it", s.StateCode)
		}
		if ms.Quality != partialQuality || !(ms.Quality < 1) {
			t.Errorf("%s: quality %g, want %g (below 1)", s.StateCode, ms.Quality, partialQuality)
		}
	}
	if q := m.Measure(miami).Quality; q != 1 {
		t.Errorf("Miami quality %g, want 1", q)
	}
}

func TestGauges(t *testing.T) {
	m := fixture(t)
	// A site 9.9 km and one 10.1 km north of the Green River gauge near
	// Auburn, the only kept gauge around Seattle.
	auburn := geo.Point{Lat: 47.45, Lon: -122.24}
	auburnAt := func(km float64) hazard.Site {
		p := northOf(auburn, km)
		return hazard.Site{Lat: p.Lat, Lon: p.Lon, CountyFIPS: "53033", StateCode: "WA", Conus: true}
	}
	cases := []struct {
		name       string
		site       hazard.Site
		count      float64
		nearest    string // "" when none lies within 25 km
		nearestKm  float64
		tolerance  float64
		notCovered bool
	}{
		// OKCO2 (1.4 km) and the gauge 9.9 km east count; the one 10.1 km
		// west does not; the gauge without a flood stage and the one out of
		// service are ignored although they are closer.
		{"OKC", okc, 2, "North Canadian River at Oklahoma City (OKCO2)", 1.4385, 1e-3, false},
		{"Denver", denver, 1, "Cherry Creek at Denver (CHDC2)", 0.99, 0.01, false},
		// The Canadian point (LID ending Q2) sits downtown and is dropped.
		{"Seattle", seattle, 0, "Green River near Auburn (AUBW1)", 18.7, 0.05, false},
		{"5.9 km from a gauge", auburnAt(5.9), 1, "Green River near Auburn (AUBW1)", 5.9, 1e-6, false},
		{"6.1 km from a gauge: counted, no exposure", auburnAt(6.1), 1, "Green River near Auburn (AUBW1)", 6.1, 1e-6, false},
		{"9.9 km from a gauge", auburnAt(9.9), 1, "Green River near Auburn (AUBW1)", 9.9, 1e-6, false},
		{"10.1 km from a gauge", auburnAt(10.1), 0, "Green River near Auburn (AUBW1)", 10.1, 1e-6, false},
		// River stage (HG), tailwater stage (HT) and discharge (QR) gauges
		// count; the pool (HP), lake (HL) and uncoded gauges, closer to the
		// site, do not.
		{"Cedar Rapids", cedar, 3, "Cedar River at Cedar Rapids (CIDI4)", 0.7020, 1e-3, false},
		// Tide gauges are not river gauges: Virginia Key (HM) near Miami,
		// and at Key West a coastal water level (HC), a tide height (HM)
		// and a tide gauge coded as river stage (HG) but named a tide gauge.
		{"Miami", miami, 0, "", 0, 0, false},
		{"Key West", keyWest, 0, "", 0, 0, false},
		{"Aleutians", adak, 0, "", 0, 0, false},
		{"Guam has no NWPS gauges", guam, 0, "", 0, 0, true},
	}
	for _, c := range cases {
		ms := m.Measure(c.site)
		if c.notCovered {
			if has(ms, IndRiverGaugeProximity) || has(ms, "river_gauges_with_flood_stage_10km") || has(ms, "nearest_river_gauge_km") {
				t.Errorf("%s: gauge indicators present", c.name)
			}
			continue
		}
		if n := value(t, ms, "river_gauges_with_flood_stage_10km"); n != c.count {
			t.Errorf("%s: %g river gauges within 10 km, want %g", c.name, n, c.count)
		}
		d := indicator(t, ms, "nearest_river_gauge_km")
		idx := value(t, ms, IndRiverGaugeProximity)
		if c.nearest == "" {
			if d.Value != gaugeMaxKm || !contains(d.Label, "capped") || has(ms, "nearest_river_gauge") || idx != 0 {
				t.Errorf("%s: nearest gauge %g km (%q), index %g, want the 25 km cap, no name and index 0", c.name, d.Value, d.Label, idx)
			}
			continue
		}
		if g := indicator(t, ms, "nearest_river_gauge"); g.Text != c.nearest {
			t.Errorf("%s: nearest gauge %q, want %q", c.name, g.Text, c.nearest)
		}
		if math.Abs(d.Value-c.nearestKm) > c.tolerance {
			t.Errorf("%s: nearest gauge %g km, want %g", c.name, d.Value, c.nearestKm)
		}
		// exp(-d / 3 km) out to 6 km, 0 beyond.
		want := 0.0
		if d.Value <= gaugeIndexKm {
			want = math.Exp(-d.Value / 3)
		}
		if math.Abs(idx-want) > 1e-12 {
			t.Errorf("%s: river gauge proximity %g at %g km, want %g", c.name, idx, d.Value, want)
		}
		if (idx > 0) != (d.Value <= gaugeIndexKm) || (idx > 0 && c.count == 0) {
			t.Errorf("%s: index %g with %g gauges within 10 km, the nearest %g km away", c.name, idx, c.count, d.Value)
		}
	}
	kept := map[string]bool{}
	for _, g := range m.gauge {
		kept[g.label[strings.LastIndex(g.label, "(")+1:len(g.label)-1]] = true
	}
	for _, id := range []string{"HMSA2", "SROM5", "BCRQ2", "DFAO2", "CRMO2", "VKYF1", "KYWF1", "KWBF1", "KWHF1", "TRPI4", "TLKI4", "TNEI4"} {
		if kept[id] {
			t.Errorf("gauge %s should have been dropped", id)
		}
	}
	for _, id := range []string{"OKCO2", "CIDI4", "CTDI4", "TCMI4", "AUBW1"} {
		if !kept[id] {
			t.Errorf("river gauge %s should have been kept", id)
		}
	}
}

func TestRiverElement(t *testing.T) {
	for pedts, want := range map[string]bool{
		"HGIRG": true, "HGIR2": true, "hgirz": true, "HTIRG": true, "QRIRZ": true, "QTIRZ": true,
		"HPIRG": false, "HLIRG": false, "HFIRG": false, "HKIRG": false, "HMIRG": false, "HCIRP": false,
		"HHIRG": false, "HAIRG": false, "": false, "H": false, "QIIRZ": false,
	} {
		if got := riverElement(pedts); got != want {
			t.Errorf("riverElement(%q) = %v, want %v", pedts, got, want)
		}
	}
	for name, want := range map[string]bool{
		"Tide Gauge at Crystal River (in MHHW)":     true,
		"Tide Station (LCH) at Vermilion Bay":       true,
		"St. Johns River at Jacksonville (in MHHW)": false,
		"Alsea River near Tidewater":                false,
	} {
		if got := tideStationName(name); got != want {
			t.Errorf("tideStationName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestCountyIndicators(t *testing.T) {
	m := fixture(t)
	const absent = -1.0
	cases := []struct {
		fips       string
		nfipPct    float64
		nfipCount  float64
		floodDecls float64
	}{
		// Hurricane, flood, "severe storms and flooding" and a hurricane EM
		// count; the duplicate row, the plain severe storm, the Katrina
		// evacuation, the 1965 flood and the fire declaration do not.
		{"12086", 36.5, 180000, 4},
		{"08031", 0.51, 1040, 0}, // only a snow declaration: a known zero
		{"40109", 0.8, 2400, 2},
		{"17031", 0.6, 7400, 1},
		{"51810", absent, absent, 1}, // Virginia Beach, by place code
		{"46102", absent, absent, 1}, // declared as Shannon County, 46113
		{"46113", absent, absent, absent},
		{"09001", absent, absent, 1},
		{"09110", absent, absent, absent}, // CT planning region: unknown, not zero
		{"06075", 0.14, 270, absent},      // not in the declarations file
		{"53033", absent, absent, absent}, // NFIP row without structures
		{"25025", absent, absent, absent}, // in neither table
		{"02016", 0, 0, 0},                // listed with no policies in force
		{"15003", 4.4, 7500, 1},
		{"72127", absent, absent, 1}, // NFIP table covers states and DC only
		{"66010", absent, absent, 1}, // typhoon
	}
	for _, c := range cases {
		ms := m.Measure(hazard.Site{Lat: 40, Lon: -100, CountyFIPS: c.fips, StateCode: "XX"})
		check := func(id string, want float64) {
			t.Helper()
			if want == absent {
				if has(ms, id) {
					t.Errorf("%s: %s = %g, want it omitted", c.fips, id, value(t, ms, id))
				}
				return
			}
			if !has(ms, id) {
				t.Errorf("%s: %s missing, want %g", c.fips, id, want)
				return
			}
			if got := value(t, ms, id); math.Abs(got-want) > 1e-9 {
				t.Errorf("%s: %s = %g, want %g", c.fips, id, got, want)
			}
		}
		check("nfip_penetration_rate", c.nfipPct)
		check("nfip_policies_in_force", c.nfipCount)
		check("flood_disaster_declarations", c.floodDecls)
	}
}

func TestIndicatorContract(t *testing.T) {
	// Ranked indicators and their weights inside their peril. The county
	// NFIP take-up and flood declarations and the river gauge count are
	// ranked for their percentiles but carry no weight.
	ranked := map[string]float64{
		IndCoastalProximity: wCoast, IndStormSurge: wSurge, IndRiverProximity: wRiver, IndRiverGaugeProximity: wGauges,
		"river_gauges_with_flood_stage_10km": 0, "nfip_penetration_rate": 0, "flood_disaster_declarations": 0,
	}
	// Each weighted indicator's peril and resolution kind.
	attribution := map[string][2]string{
		IndCoastalProximity:    {hazard.PerilCoastalFlood, hazard.ResSite},
		IndStormSurge:          {hazard.PerilCoastalFlood, hazard.ResGrid},
		IndRiverProximity:      {hazard.PerilRiverineFlood, hazard.ResSite},
		IndRiverGaugeProximity: {hazard.PerilRiverineFlood, hazard.ResSite},
	}
	perilWeight := map[string]float64{}
	for id, w := range ranked {
		perilWeight[attribution[id][0]] += w
	}
	if perilWeight[hazard.PerilCoastalFlood] <= 0 || perilWeight[hazard.PerilRiverineFlood] <= 0 {
		t.Errorf("weights by peril %v: each hydrology peril needs a weighted indicator", perilWeight)
	}
	perils := map[string]bool{hazard.PerilCoastalFlood: true, hazard.PerilRiverineFlood: true}
	kinds := map[string]bool{hazard.ResSite: true, hazard.ResGrid: true, hazard.ResReportedEvents: true, hazard.ResCounty: true}
	for name, m := range map[string]*Module{"without a storm climate": fixture(t), "with a storm climate": climateFixture(t)} {
		for _, s := range allSites {
			ms := m.Measure(s)
			if !ms.HasHazardData() {
				t.Errorf("%s, %s: no weighted indicator", name, s.CountyFIPS)
			}
			wantQuality := 1.0
			if !riverCovered(s) || !gaugeCovered(s) {
				wantQuality = partialQuality
			}
			if ms.Quality != wantQuality {
				t.Errorf("%s, %s: quality %g, want %g", name, s.CountyFIPS, ms.Quality, wantQuality)
			}
			// The registry's thresholds and evidence read these ids.
			if in := indicator(t, ms, IndDistanceToCoast); in.Peril != hazard.PerilCoastalFlood || in.Resolution.Kind != hazard.ResSite || in.Unit != "km" {
				t.Errorf("%s, %s: %s peril %q resolution %+v unit %s", name, s.CountyFIPS, in.ID, in.Peril, in.Resolution, in.Unit)
			}
			for _, id := range []string{IndDistanceToRiver, IndDistanceToMajorRiver} {
				if has(ms, id) != riverCovered(s) {
					t.Errorf("%s, %s: %s present = %v, river layers cover = %v", name, s.CountyFIPS, id, has(ms, id), riverCovered(s))
				} else if in, ok := find(ms, id); ok && (in.Peril != hazard.PerilRiverineFlood || in.Resolution.Kind != hazard.ResSite || in.Unit != "km") {
					t.Errorf("%s, %s: %s peril %q resolution %+v unit %s", name, s.CountyFIPS, in.ID, in.Peril, in.Resolution, in.Unit)
				}
			}
			siteLevel := false
			seen := map[string]bool{}
			for _, in := range ms.Indicators {
				if seen[in.ID] {
					t.Errorf("%s, %s: indicator %s twice", name, s.CountyFIPS, in.ID)
				}
				seen[in.ID] = true
				if in.Peril != "" && !perils[in.Peril] {
					t.Errorf("%s, %s: %s peril %q is not a hydrology peril", name, s.CountyFIPS, in.ID, in.Peril)
				}
				if in.Resolution.Kind != "" && !kinds[in.Resolution.Kind] {
					t.Errorf("%s, %s: %s resolution kind %q is not one of the four", name, s.CountyFIPS, in.ID, in.Resolution.Kind)
				}
				if in.Weight > 0 {
					if in.Peril == "" || !kinds[in.Resolution.Kind] {
						t.Errorf("%s, %s: weighted %s has peril %q, resolution %+v", name, s.CountyFIPS, in.ID, in.Peril, in.Resolution)
					}
					if want := attribution[in.ID]; in.Peril != want[0] || in.Resolution.Kind != want[1] {
						t.Errorf("%s, %s: %s peril %q kind %q, want %q %q", name, s.CountyFIPS, in.ID, in.Peril, in.Resolution.Kind, want[0], want[1])
					}
					siteLevel = siteLevel || in.Resolution.Kind != hazard.ResCounty
				}
				if w, ok := ranked[in.ID]; in.ID == IndRiverGaugeProximity && !riverCovered(s) {
					// Without the river layers the gauges are context.
					if !in.Ranked || in.Weight != 0 {
						t.Errorf("%s, %s: %s outside the river layers ranked=%v weight=%g, want ranked context", name, s.CountyFIPS, in.ID, in.Ranked, in.Weight)
					}
				} else if ok != in.Ranked || (ok && w != in.Weight) || (!ok && in.Weight != 0) {
					t.Errorf("%s, %s: %s ranked=%v weight=%g", name, s.CountyFIPS, in.ID, in.Ranked, in.Weight)
				}
				if in.Label == "" || in.Unit == "" || in.Source == "" {
					t.Errorf("%s, %s: %s lacks label, unit or source", name, s.CountyFIPS, in.ID)
				}
				if _, ok := data.SourceByID(in.Source); !ok {
					t.Errorf("%s, %s: %s cites source %q, not in the catalog", name, s.CountyFIPS, in.ID, in.Source)
				}
				if math.IsNaN(in.Value) || math.IsInf(in.Value, 0) || in.Value < 0 {
					t.Errorf("%s, %s: %s = %g", name, s.CountyFIPS, in.ID, in.Value)
				}
				if in.Unit == "index" && in.Value > 1 {
					t.Errorf("%s, %s: %s = %g, an index above 1", name, s.CountyFIPS, in.ID, in.Value)
				}
				if in.Percentile != nil {
					t.Errorf("%s, %s: %s sets its own percentile", name, s.CountyFIPS, in.ID)
				}
			}
			// The coastal distance is measured everywhere, so no site is
			// scored from county aggregates alone.
			if !siteLevel {
				t.Errorf("%s, %s: every weighted indicator is county-level, but distances are site-level", name, s.CountyFIPS)
			}
		}
	}
}

// fakeClimate is a hurricane wind climate for tests: a chance per year by
// region, not covered (ok false) north of 50 N and in the eastern
// hemisphere, like Alaska and Guam in the real one.
type fakeClimate struct{}

func (fakeClimate) HurricaneWindChance(lat, lon float64) (float64, bool) {
	switch {
	case lat > 50 || lon > 0:
		return 0, false
	case lat < 31 && lon > -100: // Florida and the Gulf
		return 0.05, true
	case lat < 30: // Hawaii
		return 0.01, true
	}
	return 0, true // covered, no hurricane-force winds on record
}

// badClimate answers values that are not probabilities.
type badClimate struct{ p float64 }

func (c badClimate) HurricaneWindChance(lat, lon float64) (float64, bool) { return c.p, true }

// climateFixture is the fixture module with the fake storm climate, loaded
// separately because UseStormClimate changes the module.
var climateFixture = datatest.Once(datatest.Fixture, func(dir fs.FS) (*Module, error) {
	m, err := Load(dir)
	if err != nil {
		return nil, err
	}
	m.UseStormClimate(fakeClimate{})
	return m, nil
})

func TestStormSurge(t *testing.T) {
	m := climateFixture(t)
	miamiLine := geo.Point{Lat: 25.75, Lon: -80.13}
	sfLine := geo.Point{Lat: 37.77, Lon: -122.509}
	at := func(p geo.Point, fips, st string) hazard.Site {
		return hazard.Site{Lat: p.Lat, Lon: p.Lon, CountyFIPS: fips, StateCode: st, Conus: true}
	}
	cases := []struct {
		name   string
		site   hazard.Site
		chance float64 // the fake climate's chance at the site
	}{
		{"0.5 km from a hurricane coast", at(eastOf(miamiLine, -0.5), "12086", "FL"), 0.05},
		{"9.9 km from a hurricane coast", at(eastOf(miamiLine, -9.9), "12086", "FL"), 0.05},
		{"10.1 km from a hurricane coast: no coastal proximity", at(eastOf(miamiLine, -10.1), "12086", "FL"), 0.05},
		{"Miami", miami, 0.05},
		{"0.5 km from a coast without hurricanes", at(eastOf(sfLine, 0.5), "06075", "CA"), 0},
		{"Honolulu", honolulu, 0.01},
		{"Denver: inland, covered, no hurricanes", denver, 0},
	}
	for _, c := range cases {
		ms := m.Measure(c.site)
		in, ok := find(ms, IndStormSurge)
		if !ok {
			t.Errorf("%s: storm surge index missing where the climate covers the site", c.name)
			continue
		}
		want := value(t, ms, IndCoastalProximity) * c.chance
		if math.Abs(in.Value-want) > 1e-15 {
			t.Errorf("%s: storm surge %g, want proximity × chance = %g", c.name, in.Value, want)
		}
		if in.Peril != hazard.PerilCoastalFlood || in.Resolution.Kind != hazard.ResGrid || in.Weight != wSurge || !in.Ranked {
			t.Errorf("%s: storm surge attribution %+v", c.name, in)
		}
	}
	// Equally close coasts: the hurricane coast has the higher surge index
	// and the same proximity.
	hurr, calm := m.Measure(cases[0].site), m.Measure(cases[4].site)
	if hp, cp := value(t, hurr, IndCoastalProximity), value(t, calm, IndCoastalProximity); math.Abs(hp-cp) > 1e-6 {
		t.Errorf("the two coasts are not equally close: proximity %g and %g", hp, cp)
	}
	if hs, cs := value(t, hurr, IndStormSurge), value(t, calm, IndStormSurge); !(hs > cs) || cs != 0 {
		t.Errorf("storm surge: hurricane coast %g, coast without hurricanes %g", hs, cs)
	}
	// Where the climate does not cover the site, the index is absent, not 0.
	for _, s := range []hazard.Site{adak, guam} {
		if ms := m.Measure(s); has(ms, IndStormSurge) {
			t.Errorf("%s: storm surge index present where the climate does not cover the site", s.CountyFIPS)
		}
	}
	// Without a climate it is absent everywhere.
	for _, s := range allSites {
		if has(fixture(t).Measure(s), IndStormSurge) {
			t.Errorf("%s: storm surge index present without a storm climate", s.CountyFIPS)
		}
	}
	// A climate answering something other than a probability is ignored.
	for _, p := range []float64{math.NaN(), -0.1, 1.5, math.Inf(1)} {
		bad, err := Load(datatest.Fixture(t))
		if err != nil {
			t.Fatal(err)
		}
		bad.UseStormClimate(badClimate{p})
		if has(bad.Measure(miami), IndStormSurge) {
			t.Errorf("chance %g: storm surge index present", p)
		}
	}
}

func TestFlagsAndNotes(t *testing.T) {
	m := fixture(t)
	line := geo.Point{Lat: 25.75, Lon: -80.13}
	near, far := eastOf(line, -0.6), eastOf(line, -1.4)
	msNear := m.Measure(hazard.Site{Lat: near.Lat, Lon: near.Lon, CountyFIPS: "12086", StateCode: "FL"})
	if len(msNear.Flags) != 1 || msNear.Flags[0].Code != "coastal_site" || !contains(msNear.Flags[0].Message, "0.6 km") {
		t.Errorf("0.6 km from the shoreline: flags %+v, want one coastal_site naming 0.6 km", msNear.Flags)
	}
	if fl := m.Measure(hazard.Site{Lat: far.Lat, Lon: far.Lon, CountyFIPS: "12086", StateCode: "FL"}).Flags; len(fl) != 0 {
		t.Errorf("1.4 km from the shoreline: flags %+v, want none", fl)
	}

	okcMajor := geo.Point{Lat: 35.45, Lon: -97.5164}
	south4, north30 := northOf(okcMajor, -4), northOf(okcMajor, 30)
	onCedar := northOf(geo.Point{Lat: 41.975, Lon: -91.6656}, 0.03)
	cases := []struct {
		site hazard.Site
		want []string
	}{
		{miami, []string{
			"The nearest ocean shoreline is 6.2 km away; no mapped river lies within 25 km and no major river within 50 km.",
			"No NWS river gauge with a defined flood stage lies within 25 km.",
			"County NFIP residential take-up: 36% of structures (180,000 policies in force); 4 federal flood-related disaster declarations since 1980.",
		}},
		{okc, []string{
			"No ocean shoreline lies within 100 km; the nearest mapped river, a major one, is 2.0 km away.",
			"2 NWS river gauges with a defined flood stage lie within 10 km; the nearest is North Canadian River at Oklahoma City (OKCO2), 1.4 km away.",
			"County NFIP residential take-up: 0.8% of structures (2,400 policies in force); 2 federal flood-related disaster declarations since 1980.",
		}},
		{hazard.Site{Lat: south4.Lat, Lon: south4.Lon, CountyFIPS: "40109", StateCode: "OK"}, []string{
			"No ocean shoreline lies within 100 km; the nearest mapped river is 1.6 km away and the nearest major river 4.0 km.",
		}},
		{hazard.Site{Lat: north30.Lat, Lon: north30.Lon, CountyFIPS: "40109", StateCode: "OK"}, []string{
			"No ocean shoreline lies within 100 km; no mapped river lies within 25 km; the nearest major river is 30 km away.",
		}},
		{cedar, []string{
			"No ocean shoreline lies within 100 km; the nearest mapped river is 0.3 km away; no major river lies within 50 km.",
			"3 NWS river gauges with a defined flood stage lie within 10 km; the nearest is Cedar River at Cedar Rapids (CIDI4), 0.7 km away.",
		}},
		{hazard.Site{Lat: onCedar.Lat, Lon: onCedar.Lon, CountyFIPS: "19113", StateCode: "IA"}, []string{
			"No ocean shoreline lies within 100 km; the nearest mapped river is under 0.1 km away; no major river lies within 50 km.",
		}},
		{honolulu, []string{
			"The nearest ocean shoreline is 3.1 km away; the river layers do not cover this area.",
			"One NWS river gauge with a defined flood stage lies within 10 km: Ala Wai Canal at Honolulu (ALWH1), 3.8 km away.",
		}},
		{adak, []string{
			"No NWS river gauge with a defined flood stage lies within 25 km.",
			"County NFIP residential take-up: 0% of structures (0 policies in force); no federal flood-related disaster declarations since 1980.",
		}},
		{sanJuan, []string{"1 federal flood-related disaster declaration since 1980."}},
	}
	for _, c := range cases {
		notes := m.Measure(c.site).Notes
		for _, w := range c.want {
			found := false
			for _, n := range notes {
				found = found || n == w
			}
			if !found {
				t.Errorf("%s: notes %q lack %q", c.site.CountyFIPS, notes, w)
			}
		}
	}
	// Every site says plainly that no flood-zone map or elevation data is
	// used, as its last note.
	for _, s := range allSites {
		notes := m.Measure(s).Notes
		if len(notes) == 0 || notes[len(notes)-1] != noFloodMapNote {
			t.Errorf("%s: notes %q do not end with the no-flood-map note", s.CountyFIPS, notes)
		}
	}
	if !contains(noFloodMapNote, "No FEMA flood-zone map") || !contains(noFloodMapNote, "elevation") {
		t.Errorf("note %q", noFloodMapNote)
	}
	if notes := m.Measure(boston).Notes; len(notes) != 3 {
		t.Errorf("Boston (no county rows): notes %q, want only the water, gauge and no-flood-map notes", notes)
	}
}

func TestMeasureDeterministicAndConcurrent(t *testing.T) {
	m := fixture(t)
	sites := allSites
	want := make([]hazard.Measurement, len(sites))
	for i, s := range sites {
		want[i] = m.Measure(s)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, s := range sites {
				if got := m.Measure(s); !reflect.DeepEqual(got, want[i]) {
					t.Errorf("%s: Measure differs between calls", s.CountyFIPS)
				}
			}
		}()
	}
	wg.Wait()
}

// copyFixtures copies the fixture files this module reads into a temporary
// data directory, so a test can break one of them.
func copyFixtures(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, id := range []string{SrcShorelines, SrcRivers, SrcMinorRivers, SrcNERivers, SrcGauges, SrcNFIP, SrcDeclarations} {
		rel := strings.TrimSuffix(data.Path(id), ".gz")
		b, err := os.ReadFile(filepath.Join(datatest.FixtureDir(t), rel))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, rel, string(b))
	}
	return dir
}

func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replaceLine returns content with line n (1-based) replaced.
func replaceLine(t *testing.T, content string, n int, line string) string {
	t.Helper()
	lines := strings.Split(content, "\n")
	if n < 1 || n > len(lines) {
		t.Fatalf("no line %d", n)
	}
	lines[n-1] = line
	return strings.Join(lines, "\n")
}

func TestMalformedFiles(t *testing.T) {
	shore := strings.TrimSuffix(data.Path(SrcShorelines), ".gz")
	minor := strings.TrimSuffix(data.Path(SrcMinorRivers), ".gz")
	ne := strings.TrimSuffix(data.Path(SrcNERivers), ".gz")
	gauges := strings.TrimSuffix(data.Path(SrcGauges), ".gz")
	nfip := data.Path(SrcNFIP)
	decl := strings.TrimSuffix(data.Path(SrcDeclarations), ".gz")
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(datatest.FixtureDir(t), rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cases := []struct {
		name, rel, content string
		want               []string
	}{
		{"truncated GeoJSON", shore, read(shore)[:300], []string{shore, "line 3", "feature 2"}},
		{"polygon feature", shore, replaceLine(t, read(shore), 4,
			`{"type":"Feature","properties":{"level":1},"geometry":{"type":"Polygon","coordinates":[[[-80,25],[-80,26],[-79,26],[-80,25]]]}},`),
			[]string{shore, "line 4", "feature 3", "geometry is Polygon"}},
		{"missing level", shore, replaceLine(t, read(shore), 2,
			`{"type":"Feature","properties":{"region":"CONUS"},"geometry":{"type":"LineString","coordinates":[[-80.13,25.6],[-80.13,25.9]]}},`),
			[]string{shore, "line 2", "feature 1", `"level" is missing`}},
		{"latitude out of range", shore, replaceLine(t, read(shore), 2,
			`{"type":"Feature","properties":{"level":1},"geometry":{"type":"LineString","coordinates":[[-80.13,95.6],[-80.13,25.9]]}},`),
			[]string{shore, "line 2", "not a longitude/latitude pair"}},
		{"one-point line", shore, replaceLine(t, read(shore), 3,
			`{"type":"Feature","properties":{"level":1},"geometry":{"type":"LineString","coordinates":[[-122.51,37.7]]}},`),
			[]string{shore, "line 3", "at least 2"}},
		{"not a FeatureCollection", shore, `{"type":"Feature","features":[]}`, []string{shore, "FeatureCollection"}},
		{"truncated minor rivers", minor, read(minor)[:400], []string{minor, "line 2", "feature 2"}},
		{"minor river without a level", minor, replaceLine(t, read(minor), 3,
			`{"type": "Feature", "properties": {"region": "CONUS", "kind": "additional rivers"}, "geometry": {"type": "LineString", "coordinates": [[-97.8, 35.40], [-97.3, 35.40]]}},`),
			[]string{minor, "line 3", "feature 3", `"level" is missing`}},
		{"Natural Earth river without a featurecla", ne, replaceLine(t, read(ne), 3,
			`{"type":"Feature","properties":{"scalerank":11,"name":"Tar"},"geometry":{"type":"LineString","coordinates":[[-77.60,35.90],[-77.40,35.90]]}},`),
			[]string{ne, "line 3", "feature 2", `"featurecla" is missing`}},
		{"Natural Earth river without a scalerank", ne, replaceLine(t, read(ne), 2,
			`{"type":"Feature","properties":{"featurecla":"River","name":"Russian"},"geometry":{"type":"LineString","coordinates":[[-123.10,38.50],[-122.90,38.50]]}},`),
			[]string{ne, "line 2", "feature 1", `"scalerank" is missing`}},
		{"Natural Earth MultiLineString", ne, replaceLine(t, read(ne), 2,
			`{"type":"Feature","properties":{"featurecla":"River","scalerank":10,"name":"Russian"},"geometry":{"type":"MultiLineString","coordinates":[[[-123.10,38.50],[-122.90,38.50]]]}},`),
			[]string{ne, "line 2", "feature 1", "expected LineString"}},
		{"gauge without the pedts column", gauges, "location name,nws shef id,latitude,longitude,flood stage,in service\nA,AAAA1,1,2,3,TRUE\n", []string{gauges, "line 1", `"pedts"`}},
		{"gauge latitude", gauges, replaceLine(t, read(gauges), 3,
			"Deep Fork near Arcadia,DFAO2,,north,-97.53,OUN,ABRFC,OK,Oklahoma,,,FALSE,,-9999,-9999,-9999,-9999,ft,,,HGIRG,TRUE"),
			[]string{gauges, "line 3", `"latitude"`}},
		{"gauge in service", gauges, replaceLine(t, read(gauges), 2,
			"North Canadian River at Oklahoma City,OKCO2,7241000,35.455,-97.52,OUN,ABRFC,OK,Oklahoma,,,FALSE,,-9999,12,-9999,-9999,ft,,,HGIRG,MAYBE"),
			[]string{gauges, "line 2", "in service"}},
		{"gauge missing column", gauges, "location name,latitude,longitude\nA,1,2\n", []string{gauges, "line 1", `"nws shef id"`}},
		{"NFIP FIPS", nfip, replaceLine(t, read(nfip), 7,
			"Florida,Miami-Dade,0.3650,180000,493150,12O86,2025-05-15T00:00:00.000Z,x"), []string{nfip, "line 7", "fipsCode"}},
		{"NFIP rate", nfip, replaceLine(t, read(nfip), 7,
			"Florida,Miami-Dade,1.3650,180000,493150,12086,2025-05-15T00:00:00.000Z,x"), []string{nfip, "line 7", "outside 0..1"}},
		{"NFIP duplicate", nfip, read(nfip) + "Florida,Miami-Dade,0.3650,180000,493150,12086,2025-05-15T00:00:00.000Z,x\n",
			[]string{nfip, "line 13", "twice"}},
		{"declaration date", decl, replaceLine(t, read(decl), 2,
			"9001,Yes,No,Yes,Yes,FL,24/08/1992,DR,Hurricane,HURRICANE ONE,,,,99086,Miami-Dade (County),92001,12086"),
			[]string{decl, "line 2", "Declaration Date"}},
		{"declaration county", decl, replaceLine(t, read(decl), 3,
			"9002,Yes,No,Yes,Yes,FL,2000/10/04,DR,Flood,FLOODING,,,,99086,Miami-Dade (County),00001,1208"),
			[]string{decl, "line 3", "county_fips"}},
		{"declaration number", decl, replaceLine(t, read(decl), 3,
			"DR-9002,Yes,No,Yes,Yes,FL,2000/10/04,DR,Flood,FLOODING,,,,99086,Miami-Dade (County),00001,12086"),
			[]string{decl, "line 3", "Disaster Number"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyFixtures(t)
			writeFile(t, dir, c.rel, c.content)
			_, err := Load(os.DirFS(dir))
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}

	t.Run("missing file", func(t *testing.T) {
		dir := copyFixtures(t)
		if err := os.Remove(filepath.Join(dir, nfip)); err != nil {
			t.Fatal(err)
		}
		_, err := Load(os.DirFS(dir))
		if !errors.Is(err, data.ErrMissing) || !strings.Contains(err.Error(), nfip) {
			t.Errorf("error %v, want data.ErrMissing naming %s", err, nfip)
		}
	})
}
