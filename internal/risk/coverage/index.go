package coverage

import (
	"math"

	"github.com/locrisk/locrisk/internal/risk/geo"
)

// seg is one boundary edge of one county, from (ax, ay) to (ax+dx, ay+dy);
// the end may lie beyond 180 for an edge across the antimeridian.
type seg struct {
	ax, ay, dx, dy float64
	county         int32
}

// segIndex answers "nearest county edge within r km", optionally ignoring
// the edges of one county. geo.SegmentIndex has no such filter, and the
// filter is what "distance to another county" needs; one index serves both
// that and the near-shore tolerance.
type segIndex struct {
	g    *geo.CellIndex
	segs []seg
}

func newSegIndex(segs []seg, cellDeg float64) segIndex {
	b := geo.NewCellIndexBuilder(cellDeg)
	for i, s := range segs {
		b.Add(int32(i), geo.Box{
			Lat0: math.Min(s.ay, s.ay+s.dy), Lat1: math.Max(s.ay, s.ay+s.dy),
			Lon0: math.Min(s.ax, s.ax+s.dx), Lon1: math.Max(s.ax, s.ax+s.dx),
		})
	}
	return segIndex{g: b.Build(), segs: segs}
}

// nearest returns the distance in km to the nearest edge within maxKm whose
// county is not exclude, and that county. It visits rings of cells outwards
// from the query cell, skips cells farther than the best edge so far, and
// stops once a whole ring is. Distances are planar in a local
// equirectangular projection around the query point, like
// geo.PointSegmentKm, accurate to well under 1% at these ranges. Ties (to
// rounding) go to the lowest county number, so a point off the end of a
// county line goes to the same county every time. x must be in [-180, 180).
func (ix *segIndex) nearest(x, y, maxKm float64, exclude int32) (float64, int32, bool) {
	g := ix.g
	cell, nrows, ncols := g.CellDeg(), g.Rows(), g.Cols()
	ky := geo.KmPerDegLat
	kx := ky * math.Cos(y*math.Pi/180)
	r0 := g.Row(y)
	c0 := g.Col(x)
	step := math.Min(cell*kx, cell*ky)
	// Rows farther than maxKm are never read; columns as far as maxKm
	// reaches at the query's most poleward latitude (all of them near a
	// pole), so a polar query costs a few rows, not the whole grid.
	kr := int(maxKm/(cell*ky)) + 1
	kc := ncols / 2
	if cw := math.Cos(math.Min(90, math.Abs(y)+maxKm/ky) * math.Pi / 180); cw > 1e-9 {
		kc = min(kc, int(maxKm/(cell*ky*cw))+1)
	}
	kmax := max(kr, kc)
	best, bestSq := maxKm, maxKm*maxKm
	bestC := int32(-1)
	visit := func(r, c int) {
		if r < 0 || r >= nrows {
			return
		}
		// Lower bound: distance from p to the cell's rectangle.
		lat0 := float64(r)*cell - 90
		lon0 := float64(c)*cell - 180
		dy := max(0, lat0-y, y-(lat0+cell)) * ky
		dx := max(0, lon0-x, x-(lon0+cell)) * kx
		if dx*dx+dy*dy > bestSq {
			return
		}
		for _, si := range g.Cell(r, c) {
			s := &ix.segs[si]
			if s.county == exclude {
				continue
			}
			ax := s.ax - x
			if ax >= 180 {
				ax -= 360
			} else if ax < -180 {
				ax += 360
			}
			x1, y1 := ax*kx, (s.ay-y)*ky
			ddx, ddy := s.dx*kx, s.dy*ky
			t := 0.0
			if l2 := ddx*ddx + ddy*ddy; l2 > 0 {
				t = -(x1*ddx + y1*ddy) / l2
				t = max(0, min(1, t))
			}
			px, py := x1+t*ddx, y1+t*ddy
			d := px*px + py*py
			// A shared edge is stored once per county, in opposite
			// directions, so equal distances can differ in the last bits.
			if tie := 1e-9*bestSq + 1e-18; d < bestSq-tie || (d <= bestSq+tie && (bestC < 0 || s.county < bestC)) {
				bestSq, bestC = d, s.county
				best = math.Sqrt(d)
			}
		}
	}
	for k := 0; k <= kmax; k++ {
		// Every cell of ring k is at least k-1 cells away from p.
		if k > 0 && float64(k-1)*step > best {
			break
		}
		if k == 0 {
			visit(r0, c0)
			continue
		}
		if k <= kr {
			for c := c0 - min(k, kc); c <= c0+min(k, kc); c++ {
				visit(r0-k, c)
				visit(r0+k, c)
			}
		}
		if k <= kc {
			for r := r0 - min(k-1, kr); r <= r0+min(k-1, kr); r++ {
				visit(r, c0-k)
				visit(r, c0+k)
			}
		}
	}
	if bestC < 0 {
		return 0, -1, false
	}
	return best, bestC, true
}
