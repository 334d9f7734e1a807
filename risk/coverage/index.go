package coverage

import (
	"math"

	"locrisk/risk/geo"
)

// cellGrid maps square lon/lat cells (1/perDeg degree) to lists of item
// numbers. Lookups are two array reads: a world table of one-degree blocks
// points at the fine cells of the blocks that hold anything, and the fine
// cells index a flat item slice, so empty ocean costs one int32 per degree.
type cellGrid struct {
	cell   float64 // degrees
	perDeg int     // fine cells per degree
	ncols  int     // fine columns around the world
	nrows  int     // fine rows pole to pole
	blocks []int32 // 180*360 one-degree blocks: block number or -1
	starts []uint32
	items  []int32
}

type gridBuilder struct {
	perDeg int
	cell   float64
	ncols  int
	nrows  int
	pairs  []cellItem
}

type cellItem struct{ cell, item int32 }

func newGridBuilder(perDeg int) *gridBuilder {
	return &gridBuilder{
		perDeg: perDeg,
		cell:   1 / float64(perDeg),
		ncols:  360 * perDeg,
		nrows:  180 * perDeg,
	}
}

func rowOf(lat, cell float64, nrows int) int {
	r := int(math.Floor((lat + 90) / cell))
	return min(max(r, 0), nrows-1)
}

// colOf wraps any longitude (also beyond ±180) onto a column.
func colOf(lon, cell float64, ncols int) int {
	c := int(math.Floor((lon + 180) / cell))
	c %= ncols
	if c < 0 {
		c += ncols
	}
	return c
}

// addBox puts item into every cell the box touches. minX may be anything
// in [-180, 180) and maxX beyond 180 for boxes across the antimeridian.
// Items must be added in increasing order.
func (b *gridBuilder) addBox(item int32, minX, maxX, minY, maxY float64) {
	r0, r1 := rowOf(minY, b.cell, b.nrows), rowOf(maxY, b.cell, b.nrows)
	c0 := int(math.Floor((minX + 180) / b.cell))
	c1 := int(math.Floor((maxX + 180) / b.cell))
	if c1-c0+1 >= b.ncols {
		c0, c1 = 0, b.ncols-1
	}
	for r := r0; r <= r1; r++ {
		for c := c0; c <= c1; c++ {
			cc := c % b.ncols
			if cc < 0 {
				cc += b.ncols
			}
			b.pairs = append(b.pairs, cellItem{int32(r*b.ncols + cc), item})
		}
	}
}

// build lays the pairs out by a counting sort over the fine cells, which
// keeps each cell's items in the order they were added; a repeated item in
// a cell (one county's rings) is kept once.
func (b *gridBuilder) build() cellGrid {
	n := b.perDeg
	g := cellGrid{cell: b.cell, perDeg: n, ncols: b.ncols, nrows: b.nrows, blocks: make([]int32, 180*360)}
	for i := range g.blocks {
		g.blocks[i] = -1
	}
	block := func(cell int32) int { r, c := int(cell)/b.ncols, int(cell)%b.ncols; return (r/n)*360 + c/n }
	for _, p := range b.pairs {
		g.blocks[block(p.cell)] = 0
	}
	// Blocks are numbered in world order so the layout is the same every run.
	nblocks := int32(0)
	for i, v := range g.blocks {
		if v == 0 {
			g.blocks[i] = nblocks
			nblocks++
		}
	}
	fineOf := func(cell int32) int { return g.fine(int(cell)/b.ncols, int(cell)%b.ncols) }
	starts := make([]uint32, int(nblocks)*n*n+1)
	for _, p := range b.pairs {
		starts[fineOf(p.cell)+1]++
	}
	for i := 1; i < len(starts); i++ {
		starts[i] += starts[i-1]
	}
	items := make([]int32, len(b.pairs))
	next := append([]uint32(nil), starts[:len(starts)-1]...)
	for _, p := range b.pairs {
		f := fineOf(p.cell)
		items[next[f]] = p.item
		next[f]++
	}
	// Drop repeats within a cell, compacting in place.
	g.starts = make([]uint32, len(starts))
	w := uint32(0)
	for f := 0; f+1 < len(starts); f++ {
		g.starts[f] = w
		for i := starts[f]; i < starts[f+1]; i++ {
			if w > g.starts[f] && items[w-1] == items[i] {
				continue
			}
			items[w] = items[i]
			w++
		}
	}
	g.starts[len(starts)-1] = w
	g.items = items[:w:w]
	b.pairs = nil
	return g
}

// fine is the position of fine cell (row, col) in starts, or -1 when its
// block is empty. row and col must be in range.
func (g *cellGrid) fine(row, col int) int {
	n := g.perDeg
	b := g.blocks[(row/n)*360+col/n]
	if b < 0 {
		return -1
	}
	return int(b)*n*n + (row%n)*n + col%n
}

func (g *cellGrid) at(row, col int) []int32 {
	f := g.fine(row, col)
	if f < 0 {
		return nil
	}
	return g.items[g.starts[f]:g.starts[f+1]]
}

// lookup returns the items of the cell holding (x, y); x in [-180, 180).
func (g *cellGrid) lookup(x, y float64) []int32 {
	return g.at(rowOf(y, g.cell, g.nrows), colOf(x, g.cell, g.ncols))
}

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
	g    cellGrid
	segs []seg
}

func newSegIndex(segs []seg, perDeg int) segIndex {
	b := newGridBuilder(perDeg)
	for i, s := range segs {
		b.addBox(int32(i), math.Min(s.ax, s.ax+s.dx), math.Max(s.ax, s.ax+s.dx),
			math.Min(s.ay, s.ay+s.dy), math.Max(s.ay, s.ay+s.dy))
	}
	return segIndex{g: b.build(), segs: segs}
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
	g := &ix.g
	ky := geo.KmPerDegLat
	kx := ky * math.Cos(y*math.Pi/180)
	r0 := rowOf(y, g.cell, g.nrows)
	c0 := colOf(x, g.cell, g.ncols)
	step := math.Min(g.cell*kx, g.cell*ky)
	// Rows farther than maxKm are never read; columns as far as maxKm
	// reaches at the query's most poleward latitude (all of them near a
	// pole), so a polar query costs a few rows, not the whole grid.
	kr := int(maxKm/(g.cell*ky)) + 1
	kc := g.ncols / 2
	if cw := math.Cos(math.Min(90, math.Abs(y)+maxKm/ky) * math.Pi / 180); cw > 1e-9 {
		kc = min(kc, int(maxKm/(g.cell*ky*cw))+1)
	}
	kmax := max(kr, kc)
	best, bestSq := maxKm, maxKm*maxKm
	bestC := int32(-1)
	visit := func(r, c int) {
		if r < 0 || r >= g.nrows {
			return
		}
		// Lower bound: distance from p to the cell's rectangle.
		lat0 := float64(r)*g.cell - 90
		lon0 := float64(c)*g.cell - 180
		dy := max(0, lat0-y, y-(lat0+g.cell)) * ky
		dx := max(0, lon0-x, x-(lon0+g.cell)) * kx
		if dx*dx+dy*dy > bestSq {
			return
		}
		cc := c % g.ncols
		if cc < 0 {
			cc += g.ncols
		}
		for _, si := range g.at(r, cc) {
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
