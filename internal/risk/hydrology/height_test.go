package hydrology

import (
	"math"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
	"github.com/locrisk/locrisk/internal/risk/terrain"
)

// fakeGround is a terrain for tests: elev gives the ground at a point
// (ok false where it returns NaN), relief is the relief everywhere, and
// Lowest samples elev on a 0.1 km lattice within the radius.
type fakeGround struct {
	elev   func(geo.Point) float64
	relief float64
}

func (g fakeGround) Elevation(p geo.Point) (GroundSample, bool) {
	v := g.elev(p)
	return GroundSample{Metres: v, Source: terrain.SourceSRTM, CellKm: 1.9}, !math.IsNaN(v)
}

func (g fakeGround) Lowest(p geo.Point, radiusKm float64) (GroundSample, bool) {
	lo := math.Inf(1)
	for dy := -radiusKm; dy <= radiusKm; dy += 0.1 {
		for dx := -radiusKm; dx <= radiusKm; dx += 0.1 {
			if dx*dx+dy*dy > radiusKm*radiusKm {
				continue
			}
			if v := g.elev(eastOf(northOf(p, dy), dx)); v < lo {
				lo = v
			}
		}
	}
	return GroundSample{Metres: lo, Source: terrain.SourceSRTM, CellKm: 1.9}, !math.IsInf(lo, 1) && !math.IsNaN(lo)
}

func (g fakeGround) Relief(p geo.Point, radiusKm float64) (GroundSample, bool) {
	return GroundSample{Metres: g.relief, Source: terrain.SourceSRTM, CellKm: 1.9}, !math.IsNaN(g.elev(p))
}

// withGround measures s on the fixture module with the ground g, restoring
// the module afterwards (the fixture module is shared; the tests in this
// file do not run in parallel).
func withGround(t *testing.T, g Ground, s hazard.Site) hazard.Measurement {
	t.Helper()
	m := fixture(t)
	m.UseGround(g)
	defer m.UseGround(nil)
	return m.Measure(s)
}

func TestHeightFactor(t *testing.T) {
	cases := []struct {
		h, free, want float64
	}{
		{-50, 0, 1}, // below the river
		{0, 0, 1},
		{heightFreeM, 0, 1}, // small heights change nothing
		{heightFreeM + heightScaleM, 0, math.Exp(-1)},
		{heightFreeM + 3*heightScaleM, 0, math.Exp(-3)},
		{100, 150, 1}, // a gauge far downstream: the stream's fall is free
		{180, 150, math.Exp(-30 / heightScaleM)},
		{10, 5, 1}, // the free height is never below heightFreeM
	}
	for _, c := range cases {
		if got := heightFactor(c.h, c.free); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("heightFactor(%g, %g) = %g, want %g", c.h, c.free, got, c.want)
		}
	}
	// Continuous at the free height and falling above it.
	if a, b := heightFactor(heightFreeM, 0), heightFactor(heightFreeM+1e-9, 0); math.Abs(a-b) > 1e-9 {
		t.Errorf("heightFactor jumps at the free height: %g, %g", a, b)
	}
	prev := 1.0
	for h := heightFreeM; h < 300; h += 5 {
		f := heightFactor(h, 0)
		if f > prev {
			t.Errorf("heightFactor rises at %g m", h)
		}
		prev = f
	}
	if got := tempered(0.5, 0.01); got != 0 {
		t.Errorf("tempered(0.5, 0.01) = %g, want 0 (below the floor %g)", got, indexFloor)
	}
	if got := tempered(0.5, 1); got != 0.5 {
		t.Errorf("tempered(0.5, 1) = %g", got)
	}
	if got := heightAllowance(200); got != 200 {
		t.Errorf("heightAllowance(200) = %g, want the stream's fall", got)
	}
	if got := heightAllowance(5); got != heightFreeM {
		t.Errorf("heightAllowance(5) = %g, want at least %g", got, heightFreeM)
	}
}

// TestRiverHeight: the fixture's level-1 river runs along 35.45 N at
// Oklahoma City; the fake ground rises north of it with a constant slope,
// from 300 m at the water.
func TestRiverHeight(t *testing.T) {
	river := geo.Point{Lat: 35.45, Lon: -97.5164}
	site := func(km float64) hazard.Site {
		p := northOf(river, km)
		return hazard.Site{Lat: p.Lat, Lon: p.Lon, CountyFIPS: "40109", StateCode: "OK", Conus: true}
	}
	// A valley floor at 300 m reaching 0.8 km either side of the river,
	// and a plateau h m higher beyond it.
	plateau := func(h, relief float64) fakeGround {
		return fakeGround{relief: relief, elev: func(p geo.Point) float64 {
			if math.Abs(p.Lat-river.Lat)*geo.KmPerDegLat <= 0.8 {
				return 300
			}
			return 300 + h
		}}
	}
	// A hollow 5 m below the river level around the site 2.5 km north.
	hollow := fakeGround{relief: 20, elev: func(p geo.Point) float64 {
		if geo.DistanceKm(p, northOf(river, 2.5)) < 0.3 {
			return 295
		}
		return 300
	}}
	noCover := fakeGround{elev: func(geo.Point) float64 { return math.NaN() }}
	untempered := math.Exp(-2.0 / 3) // WDBII level 1, 2 km away
	cases := []struct {
		name       string
		g          Ground
		km         float64
		wantIdx    float64
		wantH      float64 // NaN: no height indicator
		wantGrid   bool    // the index's resolution is the terrain grid
		wantInNote string
	}{
		{"no terrain", nil, 2, untempered, math.NaN(), false, ""},
		{"outside the grids", noCover, 2, untempered, math.NaN(), false, "do not cover the site"},
		{"10 m up", plateau(10, 20), 2, untempered, 10, false, "change nothing"},
		{"14 m up: still free", plateau(14, 20), 2, untempered, 14, false, "change nothing"},
		{"30 m up on open ground", plateau(30, 20), 2, untempered * math.Exp(-1), 30, true, "lowers its river proximity"},
		{"60 m up on open ground", plateau(60, 20), 2, untempered * math.Exp(-3), 60, true, "lowers"},
		{"100 m up on open ground: no exposure", plateau(100, 20), 2, 0, 100, true, "lowers"},
		{"100 m up in a gorge 400 m deep: the grid cannot tell", plateau(100, 400), 2, untempered, 100, false, "not trusted"},
		{"100 m up but 0.9 km from the river: the same cells", plateau(100, 20), 0.9, math.Exp(-0.9 / 3), 100, false, "not trusted"},
		{"on the valley floor, whatever the plateau", plateau(300, 20), 0.3, math.Exp(-0.1), 0, false, "change nothing"},
		{"below the river (behind a levee)", hollow, 2.5, math.Exp(-2.5 / 3), -5, false, "change nothing"},
	}
	for _, c := range cases {
		ms := withGround(t, c.g, site(c.km))
		idx := indicator(t, ms, IndRiverProximity)
		if math.Abs(idx.Value-c.wantIdx) > 1e-9 {
			t.Errorf("%s: river proximity %g, want %g", c.name, idx.Value, c.wantIdx)
		}
		if (idx.Resolution.Kind == hazard.ResGrid) != c.wantGrid {
			t.Errorf("%s: river proximity resolution %+v, want grid = %v", c.name, idx.Resolution, c.wantGrid)
		}
		h, ok := find(ms, IndHeightAboveRiver)
		switch {
		case math.IsNaN(c.wantH) && ok:
			t.Errorf("%s: height %g m reported without terrain (want none, never 0)", c.name, h.Value)
		case !math.IsNaN(c.wantH) && !ok:
			t.Errorf("%s: no height above the river", c.name)
		case ok:
			if math.Abs(h.Value-c.wantH) > 1.5 {
				t.Errorf("%s: height %g m, want about %g", c.name, h.Value, c.wantH)
			}
			if h.Unit != "m" || h.Resolution.Kind != hazard.ResGrid || !strings.Contains(h.Resolution.Detail, "1.9 km") || h.Source != terrain.SourceSRTM || h.Ranked || h.Weight != 0 {
				t.Errorf("%s: height indicator %+v", c.name, h)
			}
		}
		if c.wantInNote != "" && !strings.Contains(strings.Join(ms.Notes, " "), c.wantInNote) {
			t.Errorf("%s: notes %q do not say %q", c.name, ms.Notes, c.wantInNote)
		}
	}
}

// TestGaugeHeight: the gauge index is tempered by the height above the
// gauge, with the fall a stream may have between them left free.
func TestGaugeHeight(t *testing.T) {
	m := fixture(t)
	// A site 4 km north of the Cedar Rapids gauge (CIDI4); the ground
	// rises by rise metres beyond 2.5 km from the gauge.
	near, _ := m.gauges.Nearest(geo.Point{Lat: cedar.Lat, Lon: cedar.Lon}, 5)
	g0 := m.gaugePts[near]
	const km = 4.0
	p := northOf(g0, km)
	site := hazard.Site{Lat: p.Lat, Lon: p.Lon, CountyFIPS: "19113", StateCode: "IA", Conus: true}
	ground := func(rise float64) fakeGround {
		return fakeGround{relief: 10, elev: func(q geo.Point) float64 {
			if geo.DistanceKm(q, g0) > 2.5 {
				return 200 + rise
			}
			return 200
		}}
	}
	base := value(t, m.Measure(site), IndRiverGaugeProximity)
	if d := value(t, m.Measure(site), IndNearestRiverGaugeKm); math.Abs(d-km) > 0.01 || base == 0 {
		t.Fatalf("the nearest gauge is %g km away, index %g; want CIDI4 %g km away", d, base, km)
	}
	free := gaugeGradientMPerKm * km
	for _, c := range []struct {
		name string
		h    float64
		want float64
	}{
		{"level with the gauge", 0, base},
		{"within the fall a stream may have", free - 1, base},
		{"well above it", free + 2*heightScaleM, base * math.Exp(-2)},
	} {
		ms := withGround(t, ground(c.h), site)
		if got := value(t, ms, IndRiverGaugeProximity); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: gauge proximity %g, want %g", c.name, got, c.want)
		}
		if h := value(t, ms, IndHeightAboveGauge); math.Abs(h-c.h) > 0.5 {
			t.Errorf("%s: height above the gauge %g, want %g", c.name, h, c.h)
		}
	}
}

// TestNaturalEarthRivers: the Natural Earth layer adds named rivers; its
// scalerank sets the size weight; lake centerlines and intermittent
// rivers do not count; a river drawn in both layers counts once.
func TestNaturalEarthRivers(t *testing.T) {
	m := fixture(t)
	at := func(lat, lon, kmNorth float64) hazard.Site {
		p := northOf(geo.Point{Lat: lat, Lon: lon}, kmNorth)
		return hazard.Site{Lat: p.Lat, Lon: p.Lon, StateCode: "XX", Conus: true}
	}
	cases := []struct {
		name   string
		site   hazard.Site
		km     float64
		weight float64
		label  string
		src    string
		capped bool
	}{
		{"Russian River, scalerank 10", at(38.50, -123.0, 0.5), 0.5, 0.8, "Natural Earth rivers: Russian", SrcNERivers, false},
		{"Tar River, scalerank 11", at(35.90, -77.5, 0.4), 0.4, 0.65, "Natural Earth rivers: Tar", SrcNERivers, false},
		{"Tar River 3.1 km away: reported, no exposure", at(35.90, -77.5, 3.1), 3.1, 0, "Natural Earth rivers: Tar", SrcNERivers, false},
		{"intermittent river", at(32.2, -110.0, 0), anyRiverMaxKm, 0, "capped", SrcRivers, true},
		{"lake centerline", at(33.2, -111.0, 0), anyRiverMaxKm, 0, "capped", SrcRivers, true},
		// Natural Earth's Salt River runs along WDBII's intermittent one
		// through Phoenix (0.4 km apart): dry, so left out.
		{"Salt River, intermittent in WDBII", at(33.4484, -112.074, 0), anyRiverMaxKm, 0, "capped", SrcRivers, true},
		// The Cedar River is in WDBII level 4 and in Natural Earth: the
		// index is one river's, not the sum of two.
		{"Cedar River in both layers", at(41.975, -91.6656, 0.5), 0.5, 0.8, "WDBII additional rivers", SrcMinorRivers, false},
	}
	for _, c := range cases {
		ms := m.Measure(c.site)
		d := indicator(t, ms, IndDistanceToRiver)
		if math.Abs(d.Value-c.km) > 1e-6 || !strings.Contains(d.Label, c.label) || d.Source != c.src || strings.Contains(d.Label, "capped") != c.capped {
			t.Errorf("%s: nearest river %g km %q (%s), want %g km %q (%s)", c.name, d.Value, d.Label, d.Source, c.km, c.label, c.src)
		}
		want := c.weight * math.Exp(-c.km)
		if c.km > riverIndexKm {
			want = 0
		}
		if idx := value(t, ms, IndRiverProximity); math.Abs(idx-want) > 1e-9 {
			t.Errorf("%s: river proximity %g, want %g", c.name, idx, want)
		}
	}
}

// TestRiverSizeReach: WDBII levels 2 and 3 reach less far than level 1.
func TestRiverSizeReach(t *testing.T) {
	m := fixture(t)
	cls := m.riverClasses()
	prevW, prevReach := math.Inf(1), math.Inf(1)
	for i, c := range cls[:3] {
		if c.weight > prevW || c.reachKm > prevReach || !c.major || c.lines == nil {
			t.Errorf("class %d (WDBII level %d): weight %g reach %g after %g %g", i, i+1, c.weight, c.reachKm, prevW, prevReach)
		}
		prevW, prevReach = c.weight, c.reachKm
		// The smallest untempered value at the edge of a reach stays above
		// the floor, so height alone zeroes an index.
		if v := c.weight * math.Exp(-c.reachKm/c.decayKm); v < indexFloor {
			t.Errorf("class %d: %g at the edge of its reach, below the floor %g", i, v, indexFloor)
		}
	}
	for i, c := range cls[3:] {
		if v := c.weight * math.Exp(-c.reachKm/c.decayKm); v < indexFloor {
			t.Errorf("class %d: %g at the edge of its reach, below the floor %g", i+3, v, indexFloor)
		}
	}
	// Denver's fixture river is level 3: 1.5 km decay, weight 0.8.
	d := value(t, m.Measure(denver), IndDistanceToMajorRiver)
	if got, want := value(t, m.Measure(denver), IndRiverProximity), 0.8*math.Exp(-d/1.5); math.Abs(got-want) > 1e-9 {
		t.Errorf("Denver: river proximity %g, want %g (level 3 at %g km)", got, want, d)
	}
}

func TestDropIntermittent(t *testing.T) {
	p := func(lon float64) geo.Point { return geo.Point{Lat: 40, Lon: lon} }
	// A dry stretch crosses the line between -99.5 and -99.3.
	dry := geo.NewSegmentIndex([]geo.Segment{{A: p(-99.5), B: p(-99.3)}}, nil, 0.1)
	line := lineFeature{level: 10, kind: kindRiver, name: "X", pts: []geo.Point{p(-100), p(-99.8), p(-99.6), p(-99.4), p(-99.2), p(-99.0)}}
	got := dropIntermittent([]lineFeature{line}, dry)
	// Segments -99.6..-99.4 and -99.4..-99.2 have their middles on the dry
	// stretch; the line splits into -100..-99.6 and -99.2..-99.0.
	if len(got) != 2 || len(got[0].pts) != 3 || got[0].pts[2] != p(-99.6) || len(got[1].pts) != 2 || got[1].pts[0] != p(-99.2) || got[1].name != "X" {
		t.Errorf("dropIntermittent = %+v", got)
	}
	if got := dropIntermittent([]lineFeature{line}, geo.NewSegmentIndex(nil, nil, 0.1)); len(got) != 1 {
		t.Errorf("without dry rivers the line must stay whole: %+v", got)
	}
}

// TestSmallStreamGaugeReach: a gauge on a mapped river reaches 6 km; one on
// a stream too small for the maps reaches as far only where the site may
// lie on that stream (level with it, or on a valley floor in hill
// country), and otherwise decays like a minor river's index.
func TestSmallStreamGaugeReach(t *testing.T) {
	m := fixture(t)
	near, _ := m.gauges.Nearest(geo.Point{Lat: cedar.Lat, Lon: cedar.Lon}, 5)
	if !m.gauge[near].mapped {
		t.Errorf("%s stands on the mapped Cedar River but is not marked mapped", m.gauge[near].label)
	}
	const km = 3.5
	long, short := math.Exp(-km/gaugeDecayKm), 0.0 // beyond riverIndexKm
	open := height{m: 26, ok: true}
	for _, c := range []struct {
		name   string
		mapped bool
		h      height
		want   float64
	}{
		{"mapped river, high above", true, open, long},
		{"small stream, no height", false, height{}, long},
		{"small stream, level with it", false, height{m: heightFreeM, ok: true}, long},
		{"small stream, valley floor in hills", false, height{m: 240, valley: true, relief: 600, ok: true}, long},
		{"small stream, lower half of gentle ground", false, height{m: 26, valley: true, relief: 50, ok: true}, short},
		{"small stream, open ground above it", false, open, short},
	} {
		if got := (gaugeInfo{mapped: c.mapped}).index(km, c.h); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: index %g, want %g", c.name, got, c.want)
		}
	}
	if got, want := (gaugeInfo{}).index(0.5, open), math.Exp(-0.5/riverDecayKm); math.Abs(got-want) > 1e-12 {
		t.Errorf("small stream 0.5 km away: index %g, want %g", got, want)
	}
}
