package terrain

import (
	"math"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// planeGrid is an ETOPO5-like block (1/12 degree) at 40-41°N, 100-99°W,
// rising northward and eastward with slopes of northDeg and eastDeg.
func planeGrid(northDeg, eastDeg float64) Grid {
	g := Grid{Region: "test", West: -100, South: 40, Step: 1.0 / 12, Rows: 13, Cols: 13}
	tn, te := math.Tan(northDeg*math.Pi/180), math.Tan(eastDeg*math.Pi/180)
	for r := 0; r < g.Rows; r++ {
		lat := g.South + g.Step*float64(g.Rows-1-r)
		ny := float64(g.Rows-1-r) * g.Step * geo.KmPerDegLat * 1000
		for c := 0; c < g.Cols; c++ {
			ex := float64(c) * g.Step * geo.KmPerDegLat * math.Cos(lat*math.Pi/180) * 1000
			g.Z = append(g.Z, int16(math.Round(100+tn*ny+te*ex)))
		}
	}
	return g
}

func gridModel(grids ...Grid) *Model {
	m := &Model{}
	for _, g := range grids {
		m.etopo = append(m.etopo, newEtopoBox(g))
	}
	return m
}

func TestSlopeOfPlane(t *testing.T) {
	p := geo.Point{Lat: 40.5, Lon: -99.5}
	for _, tc := range []struct{ north, east, want float64 }{
		{1, 0, 1},
		{0, 1.5, 1.5},
		{0.6, 0.8, math.Atan(math.Hypot(math.Tan(0.6*math.Pi/180), math.Tan(0.8*math.Pi/180))) * 180 / math.Pi},
		{0, 0, 0},
	} {
		m := gridModel(planeGrid(tc.north, tc.east))
		for _, r := range []float64{0, 5, 20} {
			s, ok := m.Slope(p, r)
			if !ok || math.Abs(s.Metres-tc.want) > 0.01 || s.Source != SourceETOPO5 {
				t.Errorf("plane %v°N %v°E, radius %v: slope %.3f° (%v, %s), want %.3f°", tc.north, tc.east, r, s.Metres, ok, s.Source, tc.want)
			}
		}
	}
}

func TestReliefAndLowestOfPlane(t *testing.T) {
	m := gridModel(planeGrid(1, 0)) // 1° northward: 161.7 m a row (9.27 km)
	p := geo.Point{Lat: 40.5, Lon: -99.5}
	if s, ok := m.Relief(p, 0); !ok || s.Metres != 0 {
		t.Errorf("relief at radius 0 = %v, %v; want 0", s.Metres, ok)
	}
	// Within 20 km: rows 2 either side of p's row: 4 rows of 161.7 m.
	s, ok := m.Relief(p, 20)
	if want := 4 * math.Tan(math.Pi/180) * etopoCellKm * 1000; !ok || math.Abs(s.Metres-want) > 2 {
		t.Errorf("relief within 20 km = %.1f m, want %.1f", s.Metres, want)
	}
	e, _ := m.Elevation(p)
	lo, ok := m.Lowest(p, 20)
	if !ok || math.Abs(e.Metres-lo.Metres-2*math.Tan(math.Pi/180)*etopoCellKm*1000) > 2 {
		t.Errorf("lowest within 20 km = %.1f m, elevation %.1f m", lo.Metres, e.Metres)
	}
	if s.CellKm != etopoCellKm || s.Source != SourceETOPO5 {
		t.Errorf("sample %+v", s)
	}
}

// TestSeaCountsAsSeaLevel: sea floor beside a flat shore makes no relief
// or slope, but Lowest tells the true depth.
func TestSeaCountsAsSeaLevel(t *testing.T) {
	g := planeGrid(0, 0)
	for i := range g.Z {
		if i%g.Cols < 6 {
			g.Z[i] = -400
		} else {
			g.Z[i] = 0
		}
	}
	m := gridModel(g)
	p := geo.Point{Lat: 40.5, Lon: -99.5}
	if s, _ := m.Relief(p, 20); s.Metres != 0 {
		t.Errorf("relief = %v, want 0", s.Metres)
	}
	if s, _ := m.Slope(p, 20); s.Metres != 0 {
		t.Errorf("slope = %v, want 0", s.Metres)
	}
	if s, _ := m.Lowest(p, 20); s.Metres != -400 {
		t.Errorf("lowest = %v, want -400", s.Metres)
	}
}

// TestSRTMSlope: a plane on the Mercator mosaic, measured with the true
// spacing of its rows and columns.
func TestSRTMSlope(t *testing.T) {
	m := &Model{srtm: make([]int16, mosaicW*mosaicH)}
	for i := range m.have {
		m.have[i] = true
	}
	p := geo.Point{Lat: 39.74, Lon: -104.99}
	x0, y0 := mosaicXY(p.Lat, p.Lon)
	const want = 2.0 // degrees, rising eastward
	tn := math.Tan(want * math.Pi / 180)
	for y := int(y0) - 20; y <= int(y0)+20; y++ {
		cell := mosaicCellKm(mosaicLat(float64(y))) * 1000
		for x := int(x0) - 20; x <= int(x0)+20; x++ {
			m.srtm[y*mosaicW+x] = int16(math.Round(1600 + tn*cell*float64(x-int(x0))))
		}
	}
	for _, r := range []float64{0, 5} {
		s, ok := m.Slope(p, r)
		if !ok || math.Abs(s.Metres-want) > 0.02 || s.Source != SourceSRTM {
			t.Errorf("radius %v: slope %.3f° (%s), want %v°", r, s.Metres, s.Source, want)
		}
	}
	e, _ := m.Elevation(p)
	rel, _ := m.Relief(p, 5)
	if math.Abs(e.Metres-1600) > 40 || rel.Metres < 250 || rel.Metres > 380 {
		t.Errorf("elevation %.0f m, relief within 5 km %.0f m", e.Metres, rel.Metres)
	}
	if math.Abs(e.CellKm-1.88) > 0.02 {
		t.Errorf("cell %.3f km at Denver, want about 1.88", e.CellKm)
	}
}

func TestOutside(t *testing.T) {
	m := gridModel(planeGrid(1, 0))
	for _, p := range []geo.Point{{Lat: 10, Lon: 10}, {Lat: math.NaN(), Lon: 0}, {Lat: 40.5, Lon: math.Inf(1)}} {
		if _, ok := m.Elevation(p); ok {
			t.Errorf("Elevation(%v) ok", p)
		}
		if _, ok := m.Relief(p, 5); ok {
			t.Errorf("Relief(%v) ok", p)
		}
	}
	if _, ok := m.Slope(geo.Point{Lat: 40.5, Lon: -99.5}, -1); ok {
		t.Error("a negative radius answered")
	}
}

// TestAntimeridian: a block running east past 180° answers on both sides.
func TestAntimeridian(t *testing.T) {
	g := Grid{Region: "aleutians", West: 179, South: 51, Step: 0.5, Rows: 3, Cols: 5}
	for r := 0; r < g.Rows; r++ {
		for c := 0; c < g.Cols; c++ {
			g.Z = append(g.Z, int16(100*c))
		}
	}
	m := gridModel(g)
	for _, tc := range []struct {
		lon, want float64
	}{{179, 0}, {179.5, 100}, {-180, 200}, {180, 200}, {-179.25, 350}, {-179, 400}} {
		s, ok := m.Elevation(geo.Point{Lat: 51.5, Lon: tc.lon})
		if !ok || math.Abs(s.Metres-tc.want) > 1e-6 {
			t.Errorf("lon %v: %v m, %v; want %v", tc.lon, s.Metres, ok, tc.want)
		}
	}
	if _, ok := m.Elevation(geo.Point{Lat: 51.5, Lon: -178.9}); ok {
		t.Error("east of the block answered")
	}
}

// TestFixtureWorld: the repository's fixture pack loads (no tiles, coarse
// grid), so every point answers from the grid.
func TestFixtureWorld(t *testing.T) {
	pack, err := data.CheckPack(datatest.Fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(pack)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := m.Elevation(geo.Point{Lat: 39.74, Lon: -104.99})
	if !ok || s.Source != SourceETOPO5 || s.Metres < 1000 {
		t.Errorf("fixture Denver: %+v, %v", s, ok)
	}
}

func TestMosaicProjection(t *testing.T) {
	for _, p := range []geo.Point{{Lat: 39.74, Lon: -104.99}, {Lat: 25, Lon: -80}, {Lat: 49, Lon: -123}} {
		x, y := mosaicXY(p.Lat, p.Lon)
		if lat, lon := mosaicLat(y), mosaicLon(x); math.Abs(lat-p.Lat) > 1e-9 || math.Abs(lon-p.Lon) > 1e-9 {
			t.Errorf("%v -> (%v, %v) -> %v, %v", p, x, y, lat, lon)
		}
	}
	// The mosaic's corners are the tiles' corners.
	if lon := mosaicLon(-0.5); math.Abs(lon-(-129.375)) > 1e-9 {
		t.Errorf("west edge %v", lon)
	}
	if lat := mosaicLat(-0.5); math.Abs(lat-52.48278) > 1e-4 {
		t.Errorf("north edge %v", lat)
	}
}

func geoPoint(lat, lon float64) geo.Point { return geo.Point{Lat: lat, Lon: lon} }
