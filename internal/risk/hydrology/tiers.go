package hydrology

import (
	"math"

	"github.com/locrisk/locrisk/internal/risk/geo"
)

// tieredLines finds the nearest line out to a maximum distance by searching
// outwards in rings: exact geometry on a fine grid near the site, simplified
// geometry on coarser grids further away, so that a ring never scans more
// segments than its precision needs.
//
// A coarse reach map records, for every 0.25 degree cell, the first ring
// that can possibly hold a line for a point in that cell. Most places are
// far from the coast, and for them a query is one array lookup instead of
// hundreds of empty grid cells.
type tieredLines struct {
	tiers []tier
	reach reachMap
	names []string // name of each kept feature, by tag ("" when unnamed)
}

// tier is one ring of the search: a segment index good out to radiusKm,
// built from lines simplified within tolKm.
type tier struct {
	radiusKm, tolKm float64
	ix              *lineIndex // over lines, which give the nearest point and the feature's name
	lines           *lineSet
}

// tierSpec describes one ring: its search radius, the grid cell in degrees
// and the simplification tolerance (0 = exact geometry). Radii and
// tolerances must not decrease from one ring to the next.
type tierSpec struct {
	radiusKm, cellDeg, tolKm float64
}

func newTieredLines(fs []lineFeature, keep func(level int) bool, specs []tierSpec) *tieredLines {
	t := &tieredLines{}
	for _, f := range fs {
		if keep(f.level) {
			t.names = append(t.names, f.name)
		}
	}
	src, done := fs, 0.0
	lines := newLineSet(src, keep)
	for i, s := range specs {
		if i > 0 && s.tolKm == done && s.cellDeg == specs[i-1].cellDeg {
			// Same geometry and grid: a wider ring on the same index.
			t.tiers = append(t.tiers, tier{radiusKm: s.radiusKm, tolKm: s.tolKm, ix: t.tiers[i-1].ix, lines: lines})
			continue
		}
		// Each ring simplifies the previous ring's lines, which is much
		// cheaper than starting again from the full geometry; tolerances
		// add up, so the step is the ring's tolerance less what came before.
		// Rings with the same geometry on different grids share one
		// line set.
		if s.tolKm > done {
			src = simplify(src, keep, s.tolKm-done)
			done = s.tolKm
			lines = newLineSet(src, keep)
		}
		t.tiers = append(t.tiers, tier{radiusKm: s.radiusKm, tolKm: s.tolKm, ix: newLineIndex(lines, s.cellDeg), lines: lines})
	}
	t.reach = newReachMap(fs, keep, t.tiers)
	return t
}

// nearest is the distance to the nearest line, ok false when none lies within
// maxKm. A simplified ring may place a line slightly inside the previous
// ring; the result is then clamped to that ring's radius, since the exact
// geometry was shown to be farther.
func (t *tieredLines) nearest(p geo.Point) (float64, bool) {
	h, ok := t.nearestHit(p)
	return h.km, ok
}

// lineHit is the nearest line to a site: its distance, the nearest point
// on it (on the simplified geometry beyond the exact rings, so within
// that ring's tolerance of the line) and its name.
type lineHit struct {
	km   float64
	at   geo.Point
	name string
}

// nearestHit is nearest with the nearest point and the line's name.
func (t *tieredLines) nearestHit(p geo.Point) (lineHit, bool) {
	k := t.reach.first(p)
	if k >= len(t.tiers) {
		return lineHit{}, false
	}
	inner := 0.0
	if k > 0 {
		inner = t.tiers[k-1].radiusKm
	}
	for ; k < len(t.tiers); k++ {
		tr := t.tiers[k]
		if d, i, ok := tr.ix.Nearest(p, tr.radiusKm); ok {
			h := lineHit{km: math.Max(d, inner), at: closestPoint(p, tr.lines.seg(i))}
			if tag := tr.lines.tags[i]; int(tag) < len(t.names) {
				h.name = t.names[tag]
			}
			return h, true
		}
		inner = tr.radiusKm
	}
	return lineHit{}, false
}

// closestPoint is the point of segment s nearest to p, in the local
// equirectangular projection centred on p that geo.PointSegmentKm uses.
func closestPoint(p geo.Point, s geo.Segment) geo.Point {
	cosLat := math.Cos(p.Lat * math.Pi / 180)
	ax, ay := geo.NormalizeLon(s.A.Lon-p.Lon)*cosLat, s.A.Lat-p.Lat
	bx, by := geo.NormalizeLon(s.B.Lon-p.Lon)*cosLat, s.B.Lat-p.Lat
	dx, dy := bx-ax, by-ay
	t := 0.0
	if l2 := dx*dx + dy*dy; l2 > 0 {
		t = math.Max(0, math.Min(1, -(ax*dx+ay*dy)/l2))
	}
	x, y := ax+t*dx, ay+t*dy
	lon := p.Lon
	if cosLat > 0 {
		lon = geo.NormalizeLon(p.Lon + x/cosLat)
	}
	return geo.Point{Lat: p.Lat + y, Lon: lon}
}

// reachCellDeg is the reach map's cell size.
const reachCellDeg = 0.25

// reachMap holds, per grid cell, the first ring that can find a line for a
// point anywhere in the cell (len(tiers) when none can). Rows cover only
// the latitudes near the data.
type reachMap struct {
	row0, rows, cols int
	first8           []uint8
}

func (r *reachMap) first(p geo.Point) int {
	row := int(math.Floor((p.Lat+90)/reachCellDeg)) - r.row0
	if row < 0 || row >= r.rows {
		return math.MaxInt
	}
	col := int(math.Floor((geo.NormalizeLon(p.Lon) + 180) / reachCellDeg))
	if col >= r.cols {
		col = r.cols - 1
	}
	return int(r.first8[row*r.cols+col])
}

// newReachMap marks the cells touched by the exact lines, then gives every
// cell within the last ring's reach of a marked cell the first ring whose
// radius plus tolerance reaches the lower bound of the distance between the
// two cells, in the same local projection PointSegmentKm uses (latitude
// difference, and longitude difference scaled at the query cell's most
// poleward latitude).
func newReachMap(fs []lineFeature, keep func(level int) bool, tiers []tier) reachMap {
	cols := int(math.Round(360 / reachCellDeg))
	last := tiers[len(tiers)-1]
	maxKm := last.radiusKm + last.tolKm
	kmRow := reachCellDeg * geo.KmPerDegLat
	dRows := int(math.Ceil(maxKm/kmRow)) + 1

	// Rows spanned by the data, with room for the reach on both sides.
	latLo, latHi := 90.0, -90.0
	for _, f := range fs {
		if keep(f.level) {
			for _, q := range f.pts {
				latLo, latHi = math.Min(latLo, q.Lat), math.Max(latHi, q.Lat)
			}
		}
	}
	none := uint8(len(tiers))
	if latLo > latHi {
		return reachMap{rows: 0, cols: cols}
	}
	row0 := max(0, int(math.Floor((latLo+90)/reachCellDeg))-dRows)
	rowEnd := min(int(180/reachCellDeg), int(math.Floor((latHi+90)/reachCellDeg))+dRows+1)
	r := reachMap{row0: row0, rows: rowEnd - row0, cols: cols}

	occupied := make([]bool, r.rows*cols)
	colOf := func(lon float64) int {
		return int(math.Floor((geo.NormalizeLon(lon) + 180) / reachCellDeg))
	}
	for _, f := range fs {
		if !keep(f.level) {
			continue
		}
		for j := 1; j < len(f.pts); j++ {
			a, b := f.pts[j-1], f.pts[j]
			ra := int(math.Floor((a.Lat+90)/reachCellDeg)) - row0
			rb := int(math.Floor((b.Lat+90)/reachCellDeg)) - row0
			ca, cb := colOf(a.Lon), colOf(b.Lon)
			if ra > rb {
				ra, rb = rb, ra
			}
			if ca > cb {
				ca, cb = cb, ca
			}
			if cb-ca > cols/2 { // crosses the antimeridian
				ca, cb = cb, ca+cols
			}
			for rr := ra; rr <= rb; rr++ {
				for cc := ca; cc <= cb; cc++ {
					occupied[rr*cols+(cc%cols)] = true
				}
			}
		}
	}

	r.first8 = make([]uint8, r.rows*cols)
	for i := range r.first8 {
		r.first8[i] = none
	}
	ringFor := func(lbKm float64) uint8 {
		for k, t := range tiers {
			if lbKm <= t.radiusKm+t.tolKm {
				return uint8(k)
			}
		}
		return none
	}
	// ring[qr][dr][dc]: the first ring that can reach from query row qr to
	// a line in the cell dr rows and dc columns away. It depends on the
	// query row only through the longitude scale.
	kmCols := make([]float64, r.rows)
	dCols := 1
	for qr := range kmCols {
		latA := float64(qr+row0)*reachCellDeg - 90
		poleward := math.Min(89.9, math.Max(math.Abs(latA), math.Abs(latA+reachCellDeg)))
		kmCols[qr] = reachCellDeg * geo.KmPerDegLat * math.Cos(poleward*math.Pi/180)
		dCols = max(dCols, int(math.Ceil(maxKm/kmCols[qr]))+1)
	}
	dCols = min(dCols, cols/2)
	w := 2*dCols + 1
	h := 2*dRows + 1
	ring := make([]uint8, r.rows*h*w)
	for qr := range kmCols {
		for dr := -dRows; dr <= dRows; dr++ {
			lbY := float64(max(0, abs(dr)-1)) * kmRow
			for dc := -dCols; dc <= dCols; dc++ {
				lbX := float64(max(0, abs(dc)-1)) * kmCols[qr]
				ring[(qr*h+dr+dRows)*w+dc+dCols] = ringFor(math.Hypot(lbX, lbY))
			}
		}
	}
	for or := 0; or < r.rows; or++ {
		for oc := 0; oc < cols; oc++ {
			if !occupied[or*cols+oc] {
				continue
			}
			for dr := -dRows; dr <= dRows; dr++ {
				qr := or - dr
				if qr < 0 || qr >= r.rows {
					continue
				}
				rw := ring[(qr*h+dr+dRows)*w : (qr*h+dr+dRows+1)*w]
				qrow := r.first8[qr*cols : (qr+1)*cols]
				for dc := -dCols; dc <= dCols; dc++ {
					k := rw[dc+dCols]
					qc := oc - dc
					if qc < 0 {
						qc += cols
					} else if qc >= cols {
						qc -= cols
					}
					if k < qrow[qc] {
						qrow[qc] = k
					}
				}
			}
		}
	}
	return r
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
