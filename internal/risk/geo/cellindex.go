package geo

import "math"

// Box is a latitude/longitude box in degrees. Lon1 >= Lon0; either may lie
// outside [-180, 180) for a box that crosses the antimeridian (Lon0 = 179,
// Lon1 = 181 and Lon0 = -181, Lon1 = -179 are the same two-degree box).
type Box struct {
	Lat0, Lat1, Lon0, Lon1 float64
}

// PointBox is the empty box at p, its longitude normalised.
func PointBox(p Point) Box {
	lon := NormalizeLon(p.Lon)
	return Box{Lat0: p.Lat, Lat1: p.Lat, Lon0: lon, Lon1: lon}
}

// SegmentBox is the bounding box of s the short way round: a segment whose
// ends are more than 180 degrees of longitude apart crosses the antimeridian.
func SegmentBox(s Segment) Box {
	a, b := NormalizeLon(s.A.Lon), NormalizeLon(s.B.Lon)
	lo, hi := math.Min(a, b), math.Max(a, b)
	if hi-lo > 180 {
		lo, hi = hi, lo+360
	}
	return Box{Lat0: math.Min(s.A.Lat, s.B.Lat), Lat1: math.Max(s.A.Lat, s.B.Lat), Lon0: lo, Lon1: hi}
}

// Pad grows b by km in every direction. Latitudes are capped at the poles.
// The longitude growth is taken at the grown box's most poleward latitude,
// so the result holds every point within km of b, whether km is measured
// on the sphere or in a local equirectangular projection scaled at the
// point's own latitude. Where that growth reaches half way round (near a
// pole, or for a large km) the box spans every longitude, [-180, 180].
func (b Box) Pad(km float64) Box {
	dLat := km / KmPerDegLat
	p := Box{Lat0: math.Max(b.Lat0-dLat, -90), Lat1: math.Min(b.Lat1+dLat, 90)}
	dLon := lonSpanDeg(math.Max(math.Abs(p.Lat0), math.Abs(p.Lat1)), km)
	if dLon >= 180 {
		p.Lon0, p.Lon1 = -180, 180
	} else {
		p.Lon0, p.Lon1 = b.Lon0-dLon, b.Lon1+dLon
	}
	return p
}

// lonSpanDeg is how many degrees of longitude span km at latitude lat,
// capped at 360 near the poles.
func lonSpanDeg(lat, km float64) float64 {
	c := math.Cos(lat * math.Pi / 180)
	if c < 1e-6 {
		return 360
	}
	d := km / (KmPerDegLat * c)
	if d > 360 {
		return 360
	}
	return d
}

// CellIndex maps square cells of the globe to lists of item numbers. It
// serves two kinds of query:
//
//   - At: the items of the one cell holding a point. Built from boxes padded
//     by a search radius (Box.Pad), that cell lists every item that can lie
//     within the radius of any point of it, each once and in ascending item
//     order, so a caller can group consecutive items without sorting or
//     de-duplicating.
//   - Near: the items of every cell within a radius of a point, for indexes
//     built from unpadded boxes. An item spanning several cells is seen once
//     per cell.
//
// Cells are cellDeg degrees square; row 0 starts at the south pole (a last
// row holds latitude 90 exactly) and column 0 at longitude -180. Columns
// wrap, so boxes and queries across the antimeridian need no special
// handling.
//
// The layout follows the data, not the globe: a table of blocks (about one
// degree square, at least 4x4 cells) over the rows the items reach points at
// the cells of the blocks that hold anything, and those cells index one flat
// item array. A lookup is two array reads; an empty block costs one int32.
//
// A CellIndex is immutable and safe for concurrent use.
type CellIndex struct {
	cell         float64
	ncols, nrows int // cells around the world, pole to pole
	k            int // cells per block side
	bcols        int // blocks around the world
	brow0, brows int // block rows covered by blocks
	blocks       []int32
	// Where each cell's items begin in items, per cell of the occupied
	// blocks (k*k each, in block order): base holds each block's first
	// position (and one past the last block's end) and off each cell's
	// position from its block's base, which fits 16 bits unless a block
	// holds more than 65,535 entries; then starts holds the positions
	// themselves (one past the last cell's end included) and base and off
	// are nil. Most indexes are sparse (many empty cells per entry), so
	// the narrow form halves what the cell table costs.
	base   []uint32
	off    []uint16
	starts []uint32
	items  []int32
}

// CellIndexBuilder collects the boxes of a CellIndex.
type CellIndexBuilder struct {
	ix    CellIndex
	pairs []cellItem
	last  int32
}

type cellItem struct{ cell, item int32 }

// NewCellIndexBuilder starts an index of cells cellDeg degrees square.
// cellDeg must divide 360 (0.05, 0.1, 0.25, 0.5, 1, 2, 5 ...).
func NewCellIndexBuilder(cellDeg float64) *CellIndexBuilder {
	n := math.Round(360 / cellDeg)
	if !(cellDeg > 0) || n < 1 || math.Abs(360/cellDeg-n) > 1e-6 {
		panic("geo: cell size must divide 360 degrees")
	}
	return &CellIndexBuilder{
		ix: CellIndex{
			cell:  cellDeg,
			ncols: int(n),
			nrows: int(math.Round(180/cellDeg)) + 1,
			// Blocks of about a degree, and at least 4x4 cells so the
			// block table of a coarse index stays small.
			k: max(4, int(math.Round(1/cellDeg))),
		},
		last: math.MinInt32,
	}
}

// Add lists item in every cell that b touches. Items must be added in
// non-decreasing order (an item may be added with several boxes); each cell
// then lists its items in ascending order, once each.
func (b *CellIndexBuilder) Add(item int32, box Box) {
	if item < b.last {
		panic("geo: CellIndexBuilder.Add: items out of order")
	}
	b.last = item
	ix := &b.ix
	r0, r1, c0, c1 := ix.span(box)
	for r := r0; r <= r1; r++ {
		for c := c0; c <= c1; c++ {
			b.pairs = append(b.pairs, cellItem{int32(r*ix.ncols + ix.wrap(c)), item})
		}
	}
}

// Build lays out the index. The builder must not be used afterwards.
func (b *CellIndexBuilder) Build() *CellIndex {
	ix := &b.ix
	pairs := b.pairs
	b.pairs = nil
	if len(pairs) == 0 {
		return ix
	}
	k := ix.k
	ix.bcols = (ix.ncols + k - 1) / k
	rlo, rhi := ix.nrows, -1
	for _, p := range pairs {
		r := int(p.cell) / ix.ncols
		rlo, rhi = min(rlo, r), max(rhi, r)
	}
	ix.brow0 = rlo / k
	ix.brows = rhi/k - ix.brow0 + 1
	ix.blocks = make([]int32, ix.brows*ix.bcols)
	for i := range ix.blocks {
		ix.blocks[i] = -1
	}
	blockOf := func(cell int32) int {
		r, c := int(cell)/ix.ncols, int(cell)%ix.ncols
		return (r/k-ix.brow0)*ix.bcols + c/k
	}
	for _, p := range pairs {
		ix.blocks[blockOf(p.cell)] = 0
	}
	// Blocks are numbered in world order so the layout is the same every run.
	nblocks := int32(0)
	for i, v := range ix.blocks {
		if v == 0 {
			ix.blocks[i] = nblocks
			nblocks++
		}
	}
	fineOf := func(cell int32) int { return ix.fine(int(cell)/ix.ncols, int(cell)%ix.ncols) }
	// A counting sort over the cells keeps each cell's items in the order
	// they were added, which is ascending.
	starts := make([]uint32, int(nblocks)*k*k+1)
	for _, p := range pairs {
		starts[fineOf(p.cell)+1]++
	}
	for i := 1; i < len(starts); i++ {
		starts[i] += starts[i-1]
	}
	items := make([]int32, len(pairs))
	next := append([]uint32(nil), starts[:len(starts)-1]...)
	for _, p := range pairs {
		f := fineOf(p.cell)
		items[next[f]] = p.item
		next[f]++
	}
	// An item added with several boxes may meet a cell more than once; its
	// repeats are adjacent. Keep one, compacting in place.
	ix.starts = make([]uint32, len(starts))
	w := uint32(0)
	for f := 0; f+1 < len(starts); f++ {
		ix.starts[f] = w
		for i := starts[f]; i < starts[f+1]; i++ {
			if w > ix.starts[f] && items[w-1] == items[i] {
				continue
			}
			items[w] = items[i]
			w++
		}
	}
	ix.starts[len(starts)-1] = w
	ix.items = items[:w:w]
	ix.narrow(int(nblocks))
	return ix
}

// narrow replaces starts by base and off when every block's entries fit
// 16-bit offsets.
func (ix *CellIndex) narrow(nblocks int) {
	kk := ix.k * ix.k
	for b := 0; b < nblocks; b++ {
		if ix.starts[(b+1)*kk]-ix.starts[b*kk] > math.MaxUint16 {
			return
		}
	}
	ix.base = make([]uint32, nblocks+1)
	ix.off = make([]uint16, nblocks*kk)
	for b := 0; b <= nblocks; b++ {
		ix.base[b] = ix.starts[b*kk]
	}
	for f := range ix.off {
		ix.off[f] = uint16(ix.starts[f] - ix.base[f/kk])
	}
	ix.starts = nil
}

// cellRange is where the items of cell j (row%k*k + col%k) of block b lie
// in items.
func (ix *CellIndex) cellRange(b, j int) (lo, hi int) {
	kk := ix.k * ix.k
	if ix.off == nil {
		f := b*kk + j
		return int(ix.starts[f]), int(ix.starts[f+1])
	}
	base := int(ix.base[b])
	lo = base + int(ix.off[b*kk+j])
	if j+1 < kk {
		return lo, base + int(ix.off[b*kk+j+1])
	}
	return lo, int(ix.base[b+1])
}

// span is the rows r0..r1 and columns c0..c1 (to be wrapped) of the cells
// b touches; a box that goes all the way round has columns 0..ncols-1.
func (ix *CellIndex) span(b Box) (r0, r1, c0, c1 int) {
	r0, r1 = ix.Row(b.Lat0), ix.Row(b.Lat1)
	c0 = int(math.Floor((b.Lon0 + 180) / ix.cell))
	c1 = int(math.Floor((b.Lon1 + 180) / ix.cell))
	if c1-c0+1 >= ix.ncols {
		c0, c1 = 0, ix.ncols-1
	}
	return r0, r1, c0, c1
}

func (ix *CellIndex) wrap(c int) int {
	c %= ix.ncols
	if c < 0 {
		c += ix.ncols
	}
	return c
}

// CellDeg is the side of a cell in degrees.
func (ix *CellIndex) CellDeg() float64 { return ix.cell }

// Rows and Cols are the numbers of cell rows (pole to pole) and columns
// (around the world).
func (ix *CellIndex) Rows() int { return ix.nrows }

// Cols is the number of cell columns around the world.
func (ix *CellIndex) Cols() int { return ix.ncols }

// Row is the row of the cell holding latitude lat, clamped to the grid.
func (ix *CellIndex) Row(lat float64) int {
	r := int(math.Floor((lat + 90) / ix.cell))
	return max(0, min(ix.nrows-1, r))
}

// Col is the column of the cell holding longitude lon, which may be any
// value: it wraps.
func (ix *CellIndex) Col(lon float64) int {
	return ix.wrap(int(math.Floor((lon + 180) / ix.cell)))
}

// Entries is the number of (cell, item) entries, a measure of its size.
func (ix *CellIndex) Entries() int { return len(ix.items) }

// fine is the position of cell (row, col) among the cells of the occupied
// blocks (block*k*k + cell), or -1 when its block is empty or outside the
// rows the items reach. col must be in range.
func (ix *CellIndex) fine(row, col int) int {
	b, j := ix.blockCell(row, col)
	if b < 0 {
		return -1
	}
	return b*ix.k*ix.k + j
}

// blockCell is the occupied block holding cell (row, col) and the cell's
// place in it (cellRange), or block -1 when its block is empty or outside
// the rows the items reach. col must be in range.
func (ix *CellIndex) blockCell(row, col int) (b, j int) {
	k := ix.k
	br := row/k - ix.brow0
	if br < 0 || br >= ix.brows {
		return -1, 0
	}
	b = int(ix.blocks[br*ix.bcols+col/k])
	if b < 0 {
		return -1, 0
	}
	return b, (row%k)*k + col%k
}

// Cell returns the items of cell (row, col) in ascending order; col wraps,
// and a row outside the grid has none. The slice must not be modified.
func (ix *CellIndex) Cell(row, col int) []int32 {
	if row < 0 || row >= ix.nrows || ix.blocks == nil {
		return nil
	}
	b, j := ix.blockCell(row, ix.wrap(col))
	if b < 0 {
		return nil
	}
	lo, hi := ix.cellRange(b, j)
	return ix.items[lo:hi]
}

// At returns the items of the cell holding p, in ascending order, once
// each. The slice must not be modified.
func (ix *CellIndex) At(p Point) []int32 {
	if ix.blocks == nil {
		return nil
	}
	b, j := ix.blockCell(ix.Row(p.Lat), ix.Col(p.Lon))
	if b < 0 {
		return nil
	}
	lo, hi := ix.cellRange(b, j)
	return ix.items[lo:hi]
}

// Near calls fn with the items of every cell that the box around p padded
// by km (PointBox(p).Pad(km)) touches, row by row from the south and west
// to east within a row, each cell's items in ascending order. An item that
// spans several cells is seen once per cell. The same index and query
// always visit the same items in the same order.
func (ix *CellIndex) Near(p Point, km float64, fn func(item int32)) {
	if ix.blocks == nil {
		return
	}
	r0, r1, c0, c1 := ix.span(PointBox(p).Pad(km))
	for r := r0; r <= r1; r++ {
		for c := c0; c <= c1; c++ {
			if b, j := ix.blockCell(r, ix.wrap(c)); b >= 0 {
				lo, hi := ix.cellRange(b, j)
				for _, it := range ix.items[lo:hi] {
					fn(it)
				}
			}
		}
	}
}

// ItemOrder is the items of every cell, cell after cell, as NearCells
// places them. The slice must not be modified.
func (ix *CellIndex) ItemOrder() []int32 { return ix.items }

// NearCells calls fn for every non-empty cell that Near visits, in the
// same order, with the cell's bounds and the position of its items in
// ItemOrder (ItemOrder()[lo:hi]). The bounds' longitudes are those of the
// column before it wraps, so they lie outside [-180, 180] for a query
// across the antimeridian. It lets a caller treat a cell as a whole, for
// instance one that lies wholly within a radius.
func (ix *CellIndex) NearCells(p Point, km float64, fn func(cell Box, lo, hi int)) {
	if ix.blocks == nil {
		return
	}
	r0, r1, c0, c1 := ix.span(PointBox(p).Pad(km))
	k := ix.k
	for r := r0; r <= r1; r++ {
		br := r/k - ix.brow0
		if br < 0 || br >= ix.brows {
			continue
		}
		blocks := ix.blocks[br*ix.bcols : (br+1)*ix.bcols]
		lat0 := float64(r)*ix.cell - 90
		// The cell's block column and place in it, stepped along the row
		// rather than divided out per cell (fine, unrolled).
		cw := ix.wrap(c0)
		bc, ck := cw/k, cw%k
		rk := (r % k) * k
		for c := c0; c <= c1; c++ {
			if b := blocks[bc]; b >= 0 {
				if lo, hi := ix.cellRange(int(b), rk+ck); lo < hi {
					lon0 := float64(c)*ix.cell - 180
					fn(Box{Lat0: lat0, Lat1: lat0 + ix.cell, Lon0: lon0, Lon1: lon0 + ix.cell}, lo, hi)
				}
			}
			if cw++; cw == ix.ncols {
				cw, bc, ck = 0, 0, 0
			} else if ck++; ck == k {
				bc, ck = bc+1, 0
			}
		}
	}
}
