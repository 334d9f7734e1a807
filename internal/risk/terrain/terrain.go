// Package terrain is the elevation model of the risk engine: ground height,
// local relief, slope and the lowest ground near a site, from two public
// grids in the data pack:
//
//   - SRTM30_PLUS v9 (Scripps) as zoom 6 web-map tiles over the conterminous
//     US (129.4-61.9°W, 21.9-52.5°N): one 3072 x 1792 mosaic, tiles bounded
//     in web Mercator with rows even in latitude inside each tile (read as
//     Mercator rows, features stood up to 4 km north of their places; see
//     mosaicLat), about 79 arc-seconds a pixel (1.9 km at 40°N, 1.6 km at
//     50°N). The tiles carry a byte-averaging defect, repaired at Load
//     (below).
//   - ETOPO5 (NOAA/NGDC 1993), 5 arc-minutes (9.3 km N-S), clipped to the
//     covered area: the only terrain for Alaska, Hawaii and the territories,
//     and the fallback outside the tiles.
//
// Heights are metres above sea level; sea floor is negative. Relief and
// slope count every cell below 0 m as 0 m (sea level), so coastal
// bathymetry never makes relief or slope; Elevation and Lowest return true
// values, negative over the sea and in the few land depressions (Death
// Valley floor reads -80 m). Each answer says which grid it came from
// and that grid's cell size: 2 km of terrain tells a mountain town from a
// plain, not a bluff from the floodplain below it.
//
// # The repair
//
// The tiles were made by averaging each colour byte of finer tiles on its
// own (elevation = R + 256 G): where averaged cells straddle a multiple of
// 256 m the rounded G is off by a fraction of a step, so the pixel is off by
// up to about ±128 m per averaging step (±256 m seen) with R mid-range, and
// at coasts the sign byte B is averaged too. repair.go says how each pixel
// is mended: the multiple of 256 m next to the reading, where the pixel
// stands out more than rough ground explains, that multiple lies within
// 64 m of its neighbours' median, and no unsuspected neighbour shares the
// reading; once, by at most 256 m. At 2 km a ridge 2-3 km wide or a canyon
// is a line of lone pixels far from their neighbours' median, so real
// relief, not the defect, is most of what still stands out from a 3x3
// median after the repair, and the repair leaves it. Measured on the real
// tiles (TestRepairRealTiles, TestKnownElevations,
// TestRepairRestoresByteAveragedRamp):
//
//	land pixels changed                                3.7% (of 3.53 M)
//	mixed land-sea pixels replaced                     53,305
//	land pixels > 64 m from their 3x3 median           7.3% before, 5.4% after
//	  of them with R mid-range (64-191)                10.5% before, 7.9% after
//	flat ground (ETOPO5 within 30 m over 10 km):
//	  pixels > 64 m from ETOPO5                        3.9% before, 1.8% after
//	RMSE against ETOPO5, CONUS land grid points        95.8 m before, 94.9 m after
//	median error at 56 known town elevations           31 m before, 31 m after
//	a byte-averaged ramp across 256 and 512 m          ±128 m before, ≤ 2.2 m after
//
// The RMSE against ETOPO5 is mostly resolution and ETOPO5's own
// north-south registration (TestRegistrationReal). The repair of earlier
// versions, which also took readings a whole 256 m step away and
// median-filtered what still stood out, changed 10.5% of land pixels and
// made the known elevations worse (median 38 m, worse by more than 50 m at
// 15 of 56 places): it took Lookout Mountain's ridge (584-631 m) down to
// its valleys (256-359 m) and filled the valleys of Aspen, Durango and
// Telluride by 150-250 m.
//
// Spot checks (TestSpotChecks): Denver 1,605 m, Chicago 186 m, New Orleans
// 6 m, Death Valley floor -80 m, Mt. Whitney 3,922 m and Pikes Peak
// 3,828 m (2 km cells round summits off by several hundred metres).
//
// # ETOPO5 registration
//
// This copy of ETOPO5 lies 1.5 columns (7.5 arc-minutes) west of where it
// belongs; the clip in the pack is shifted back (cmd/terrainpack), which
// brought it from 163 m to 62 m RMSE against the tiles read as Mercator
// rows (94 m against the tiles as now read: ETOPO5 itself fits best half a
// row or more south of where it stands, not corrected; TestRegistrationReal).
// ETOPO5 is coarse: coastal and small-island sites often fall on sea cells
// (Hagåtña, Pago Pago and Adak read below 0 m), peaks are cut low (Mauna Kea
// about 2,100 m), and a radius under about 5 km sees a single cell, so its
// relief is 0.
//
// A Model is immutable after Load and safe for concurrent use.
package terrain

import (
	"fmt"
	"io/fs"
	"math"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// The data sources (catalog ids).
const (
	SourceSRTM   = "srtm30plus-v9"
	SourceETOPO5 = "noaa-etopo5"
)

// etopoCellKm is the ETOPO5 grid's north-south spacing (5 arc-minutes);
// east-west it is that times cos(latitude).
const etopoCellKm = geo.KmPerDegLat / 12

// MaxRadiusKm bounds the radius of the neighbourhood queries.
const MaxRadiusKm = 100

// Model holds the repaired SRTM mosaic and the ETOPO5 blocks.
type Model struct {
	srtm   []int16               // mosaicW*mosaicH, north row first, metres
	have   [tilesX * tilesY]bool // tiles the pack holds
	etopo  []etopoBox
	repair RepairStats
}

// Sample is an answer of the model.
type Sample struct {
	Metres float64 // metres (degrees for Slope)
	Source string  // source id of the grid used (SourceSRTM or SourceETOPO5)
	CellKm float64 // that grid's cell size at the site: SRTM pixel side, ETOPO5 north-south spacing
}

// Load reads both grids from the pack and repairs the tiles.
func Load(fsys fs.FS) (*Model, error) {
	gb, err := data.ReadAll(fsys, data.Path(SourceETOPO5))
	if err != nil {
		return nil, err
	}
	grids, err := ParseGrids(gb)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", data.Path(SourceETOPO5), err)
	}
	zb, err := data.ReadAll(fsys, data.Path(SourceSRTM))
	if err != nil {
		return nil, err
	}
	raw, have, err := readTiles(zb)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", data.Path(SourceSRTM), err)
	}
	return newModel(raw, have, grids), nil
}

// newModel repairs the raw mosaic (decodeRGB values, the tiles held in
// have) and builds the model over it and the ETOPO5 blocks.
func newModel(raw []int32, have [tilesX * tilesY]bool, grids []Grid) *Model {
	m := &Model{have: have}
	for _, g := range grids {
		m.etopo = append(m.etopo, newEtopoBox(g))
	}
	// The repair asks ETOPO5 at many pixels of few rows: each row's
	// latitude (an arctangent) is worked out once.
	lats := make([]float64, mosaicH)
	for y := range lats {
		lats[y] = mosaicLat(float64(y))
	}
	m.srtm, m.repair = repair(raw, mosaicW, mosaicH, func(x, y int) (float64, bool) {
		return m.etopoElevation(lats[y], mosaicLon(float64(x)))
	}, false)
	return m
}

// Sources lists the catalog sources the model reads.
func (m *Model) Sources() []string { return []string{SourceSRTM, SourceETOPO5} }

// RepairStats is what the repair of the tiles did at Load.
func (m *Model) RepairStats() RepairStats { return m.repair }

// where is the grid a point falls on: the SRTM mosaic when the point lies
// within it, else the ETOPO5 block holding it.
type where struct {
	srtm bool
	box  *etopoBox
	r, c float64 // fractional row and column on that grid
}

func (m *Model) locate(p geo.Point) (where, bool) {
	if !(p.Lat >= -90 && p.Lat <= 90) || math.IsNaN(p.Lon) || math.IsInf(p.Lon, 0) {
		return where{}, false
	}
	lon := normLon(p.Lon)
	if x, y := mosaicXY(p.Lat, lon); x >= 0 && y >= 0 && x <= mosaicW-1 && y <= mosaicH-1 && m.held(int(math.Round(y)), int(math.Round(x))) {
		return where{srtm: true, r: y, c: x}, true
	}
	for i := range m.etopo {
		if r, c, ok := m.etopo[i].rc(p.Lat, lon); ok {
			return where{box: &m.etopo[i], r: r, c: c}, true
		}
	}
	return where{}, false
}

func (w where) sample(v float64, lat float64) Sample {
	if w.srtm {
		return Sample{Metres: v, Source: SourceSRTM, CellKm: mosaicCellKm(lat)}
	}
	return Sample{Metres: v, Source: SourceETOPO5, CellKm: etopoCellKm}
}

// held tells whether the pack holds the tile of mosaic row r, column c.
func (m *Model) held(r, c int) bool { return m.have[(r/tileSize)*tilesX+c/tileSize] }

func (m *Model) srtmAt(r, c int) (float64, bool) { return float64(m.srtm[r*mosaicW+c]), m.held(r, c) }

func (m *Model) etopoElevation(lat, lon float64) (float64, bool) {
	for i := range m.etopo {
		b := &m.etopo[i]
		if r, c, ok := b.rc(lat, lon); ok {
			return bilinear(r, c, b.Rows, b.Cols, b.at)
		}
	}
	return 0, false
}

// Elevation is the ground height at p in metres, interpolated bilinearly
// between the four nearest cells of the repaired SRTM mosaic, or of ETOPO5
// outside it; ok is false outside both grids.
func (m *Model) Elevation(p geo.Point) (Sample, bool) {
	w, ok := m.locate(p)
	if !ok {
		return Sample{}, false
	}
	var v float64
	if w.srtm {
		v, ok = bilinear(w.r, w.c, mosaicH, mosaicW, m.srtmAt)
	} else {
		v, ok = bilinear(w.r, w.c, w.box.Rows, w.box.Cols, w.box.at)
	}
	if !ok {
		return Sample{}, false
	}
	return w.sample(v, p.Lat), true
}

// cells calls fn for every cell of p's grid whose centre lies within
// radiusKm of p, and always for the cell nearest to p (and, with support,
// for the four cells Elevation interpolates between), with the cell's row
// and column on the grid w that p falls on. A cell may come twice.
func (m *Model) cells(p geo.Point, radiusKm float64, support bool, fn func(w *where, r, c int)) (where, bool) {
	w, ok := m.locate(p)
	if !ok || !(radiusKm >= 0) {
		return w, false
	}
	radiusKm = min(radiusKm, MaxRadiusKm)
	rows, cols := mosaicH, mosaicW
	var kmR, kmC float64 // km per row and per column near p
	if w.srtm {
		kmR = mosaicRowKm(p.Lat)
		kmC = mosaicCellKm(p.Lat)
	} else {
		rows, cols = w.box.Rows, w.box.Cols
		kmR = etopoCellKm
		kmC = etopoCellKm * math.Cos(p.Lat*math.Pi/180)
	}
	kmC = max(kmC, 1e-3)
	r0, c0 := int(math.Round(w.r)), int(math.Round(w.c))
	fn(&w, r0, c0)
	if support {
		rs, cs := min(max(int(math.Floor(w.r)), 0), rows-2), min(max(int(math.Floor(w.c)), 0), cols-2)
		fn(&w, rs, cs)
		fn(&w, rs+1, cs)
		fn(&w, rs, cs+1)
		fn(&w, rs+1, cs+1)
	}
	dr, dc := int(math.Ceil(radiusKm/kmR)), int(math.Ceil(radiusKm/kmC))
	for r := max(r0-dr, 0); r <= min(r0+dr, rows-1); r++ {
		y := (float64(r) - w.r) * kmR
		for c := max(c0-dc, 0); c <= min(c0+dc, cols-1); c++ {
			if r == r0 && c == c0 {
				continue
			}
			x := (float64(c) - w.c) * kmC
			if x*x+y*y <= radiusKm*radiusKm {
				fn(&w, r, c)
			}
		}
	}
	return w, true
}

func (w *where) value(m *Model, r, c int) (float64, bool) {
	if w.srtm {
		return m.srtmAt(r, c)
	}
	return w.box.at(r, c)
}

// Relief is the highest minus the lowest cell elevation within radiusKm of
// p (the cell at p alone for radius 0, so 0 m), cells below 0 m counted as
// 0 m (sea level) so that coastal bathymetry never makes relief.
func (m *Model) Relief(p geo.Point, radiusKm float64) (Sample, bool) {
	hi, lo, n := math.Inf(-1), math.Inf(1), 0
	w, ok := m.cells(p, radiusKm, false, func(w *where, r, c int) {
		if v, ok := w.value(m, r, c); ok {
			v = max(v, 0)
			hi, lo, n = max(hi, v), min(lo, v), n+1
		}
	})
	if !ok || n == 0 {
		return Sample{}, false
	}
	return w.sample(hi-lo, p.Lat), true
}

// Lowest is the lowest cell elevation within radiusKm of p, in metres,
// counting also the four cells Elevation interpolates between, so Lowest
// never exceeds Elevation: the true value, not clamped at 0, so negative
// over the sea (a radius reaching the coast finds the sea floor) and in
// land depressions. The engine uses it as the water level of a river near
// p.
func (m *Model) Lowest(p geo.Point, radiusKm float64) (Sample, bool) {
	lo, n := math.Inf(1), 0
	w, ok := m.cells(p, radiusKm, true, func(w *where, r, c int) {
		if v, ok := w.value(m, r, c); ok {
			lo, n = min(lo, v), n+1
		}
	})
	if !ok || n == 0 {
		return Sample{}, false
	}
	return w.sample(lo, p.Lat), true
}

// Slope is the steepest ground slope in degrees among the cells within
// radiusKm of p (radius 0: the cell at p), each from central differences of
// its four neighbours' heights over the grid's true cell spacing at its
// latitude, heights below 0 m counted as 0 m. Over about 2 km (SRTM) or
// 9 km (ETOPO5) cells a slope is an average: a 30° hillside a few hundred
// metres long reads a few degrees.
func (m *Model) Slope(p geo.Point, radiusKm float64) (Sample, bool) {
	best, n := 0.0, 0
	w, ok := m.cells(p, radiusKm, false, func(w *where, r, c int) {
		if s, ok := m.cellSlope(w, r, c); ok {
			best, n = max(best, s), n+1
		}
	})
	if !ok || n == 0 {
		return Sample{}, false
	}
	return w.sample(best, p.Lat), true
}

// cellSlope is the slope in degrees at a cell of w's grid.
func (m *Model) cellSlope(w *where, r, c int) (float64, bool) {
	rows, cols := mosaicH, mosaicW
	if !w.srtm {
		rows, cols = w.box.Rows, w.box.Cols
	}
	z := func(r, c int) (float64, bool) {
		v, ok := w.value(m, r, c)
		return max(v, 0), ok
	}
	// East-west: neighbours on the same row.
	cw, ce := max(c-1, 0), min(c+1, cols-1)
	rn, rs := max(r-1, 0), min(r+1, rows-1)
	zw, ok1 := z(r, cw)
	ze, ok2 := z(r, ce)
	zn, ok3 := z(rn, c)
	zs, ok4 := z(rs, c)
	if !(ok1 && ok2 && ok3 && ok4) || ce == cw || rn == rs {
		return 0, false
	}
	var dxKm, dyKm float64
	if w.srtm {
		lat := mosaicLat(float64(r))
		dxKm = float64(ce-cw) * mosaicCellKm(lat)
		dyKm = (mosaicLat(float64(rn)) - mosaicLat(float64(rs))) * geo.KmPerDegLat
	} else {
		lat := w.box.latOf(r)
		dxKm = float64(ce-cw) * w.box.Step * geo.KmPerDegLat * math.Cos(lat*math.Pi/180)
		dyKm = float64(rs-rn) * w.box.Step * geo.KmPerDegLat
	}
	if dxKm <= 0 || dyKm <= 0 {
		return 0, false
	}
	gx := (ze - zw) / (dxKm * 1000)
	gy := (zn - zs) / (dyKm * 1000)
	return math.Atan(math.Hypot(gx, gy)) * 180 / math.Pi, true
}
