// Package geo holds the spherical geometry the risk engine needs: great-circle
// distances, a grid index over points for radius queries, and a grid index
// over line segments for nearest-distance queries (coastlines, rivers).
//
// Longitudes are degrees in [-180, 180); queries near the antimeridian look
// at cells on both sides of it. Distances are kilometres on a sphere of radius
// 6371.0088 km (the IUGG mean radius), good to about 0.5% everywhere, which
// is far below the accuracy of the data sets.
package geo

import (
	"math"
	"sort"
)

// EarthRadiusKm is the IUGG mean Earth radius.
const EarthRadiusKm = 6371.0088

// KmPerDegLat is the length of one degree of latitude on that sphere.
const KmPerDegLat = EarthRadiusKm * math.Pi / 180

// Point is a WGS84 / NAD83 coordinate in degrees.
type Point struct {
	Lat, Lon float64
}

// NormalizeLon maps any longitude into [-180, 180).
func NormalizeLon(lon float64) float64 {
	lon = math.Mod(lon+180, 360)
	if lon < 0 {
		lon += 360
	}
	return lon - 180
}

// DistanceKm is the great-circle (haversine) distance between a and b.
func DistanceKm(a, b Point) float64 {
	const rad = math.Pi / 180
	dLat := (b.Lat - a.Lat) * rad
	dLon := (b.Lon - a.Lon) * rad
	s1 := math.Sin(dLat / 2)
	s2 := math.Sin(dLon / 2)
	h := s1*s1 + math.Cos(a.Lat*rad)*math.Cos(b.Lat*rad)*s2*s2
	if h > 1 {
		h = 1
	}
	return 2 * EarthRadiusKm * math.Asin(math.Sqrt(h))
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

// grid maps degree cells to item numbers. It is built by add, then frozen
// by freeze into one items array grouped by cell, with a map from each
// occupied cell to its span: memory follows the data, not the globe, so fine
// cells (0.05 degree) stay cheap.
type grid struct {
	cell        float64
	ncols, nrow int
	pairs       []cellItem // (cell, item) while building; nil after freeze
	spans       map[int32]span
	items       []int32
}

type span struct{ from, to int32 }

type cellItem struct{ cell, item int32 }

func newGrid(cellDeg float64) grid {
	return grid{cell: cellDeg, ncols: int(math.Ceil(360 / cellDeg)), nrow: int(math.Ceil(180/cellDeg)) + 1}
}

func (g *grid) row(lat float64) int {
	r := int(math.Floor((lat + 90) / g.cell))
	return max(0, min(g.nrow-1, r))
}

func (g *grid) key(row, col int) int {
	col %= g.ncols
	if col < 0 {
		col += g.ncols
	}
	return row*g.ncols + col
}

// add puts item into every cell of the box lat0..lat1, lon0..lon1 (lon1 may
// exceed 180 for boxes that cross the antimeridian).
func (g *grid) add(item int32, lat0, lon0, lat1, lon1 float64) {
	r0, r1 := g.row(lat0), g.row(lat1)
	c0 := int(math.Floor((lon0 + 180) / g.cell))
	c1 := int(math.Floor((lon1 + 180) / g.cell))
	if c1-c0 >= g.ncols {
		c0, c1 = 0, g.ncols-1
	}
	for r := r0; r <= r1; r++ {
		for c := c0; c <= c1; c++ {
			g.pairs = append(g.pairs, cellItem{int32(g.key(r, c)), item})
		}
	}
}

// freeze turns the collected pairs into the compressed-row arrays. Items of
// a cell keep their insertion order, so queries visit them deterministically.
func (g *grid) freeze() {
	sort.SliceStable(g.pairs, func(i, j int) bool { return g.pairs[i].cell < g.pairs[j].cell })
	g.spans = make(map[int32]span)
	g.items = make([]int32, len(g.pairs))
	for i, p := range g.pairs {
		g.items[i] = p.item
		sp, ok := g.spans[p.cell]
		if !ok {
			sp.from = int32(i)
		}
		sp.to = int32(i + 1)
		g.spans[p.cell] = sp
	}
	g.pairs = nil
}

// visit calls fn with the items of every cell within km of p. An item may be
// visited more than once when it spans several cells.
func (g *grid) visit(p Point, km float64, fn func(int32)) {
	dLat := km / KmPerDegLat
	latLo, latHi := math.Max(p.Lat-dLat, -90), math.Min(p.Lat+dLat, 90)
	// The widest longitude span is at the box edge nearest a pole.
	dLon := lonSpanDeg(math.Max(math.Abs(latLo), math.Abs(latHi)), km)
	r0, r1 := g.row(latLo), g.row(latHi)
	var c0, c1 int
	if dLon >= 180 {
		c0, c1 = 0, g.ncols-1
	} else {
		lon := NormalizeLon(p.Lon)
		c0 = int(math.Floor((lon - dLon + 180) / g.cell))
		c1 = int(math.Floor((lon + dLon + 180) / g.cell))
	}
	for r := r0; r <= r1; r++ {
		for c := c0; c <= c1; c++ {
			if sp, ok := g.spans[int32(g.key(r, c))]; ok {
				for _, it := range g.items[sp.from:sp.to] {
					fn(it)
				}
			}
		}
	}
}

// PointIndex finds indexed points within a radius of a query point.
type PointIndex struct {
	pts []Point
	g   grid
}

// NewPointIndex indexes pts with square cells of cellDeg degrees; pick a cell
// near the typical query radius (0.5 degree suits 25-100 km queries).
func NewPointIndex(pts []Point, cellDeg float64) *PointIndex {
	ix := &PointIndex{pts: pts, g: newGrid(cellDeg)}
	for i, p := range pts {
		lon := NormalizeLon(p.Lon)
		ix.g.add(int32(i), p.Lat, lon, p.Lat, lon)
	}
	ix.g.freeze()
	return ix
}

// Len is the number of indexed points.
func (ix *PointIndex) Len() int { return len(ix.pts) }

// Within calls fn once for every indexed point within km of p, with its index
// in the slice given to NewPointIndex and its distance.
func (ix *PointIndex) Within(p Point, km float64, fn func(i int, distKm float64)) {
	ix.g.visit(p, km, func(i int32) {
		if d := DistanceKm(p, ix.pts[i]); d <= km {
			fn(int(i), d)
		}
	})
}

// Nearest returns the index and distance of the nearest point within maxKm,
// or -1 when there is none.
func (ix *PointIndex) Nearest(p Point, maxKm float64) (int, float64) {
	best, bestD := -1, math.Inf(1)
	ix.Within(p, maxKm, func(i int, d float64) {
		if d < bestD || (d == bestD && i < best) {
			best, bestD = i, d
		}
	})
	return best, bestD
}

// Segment is a great-circle-short line piece between two points.
type Segment struct {
	A, B Point
}

// SegmentIndex finds the nearest indexed segment to a query point.
type SegmentIndex struct {
	segs []Segment
	tags []int32
	g    grid
}

// NewSegmentIndex indexes segs with cells of cellDeg degrees. tags, if not
// nil, carries one caller-defined value per segment (a feature number or a
// level) returned by Nearest.
func NewSegmentIndex(segs []Segment, tags []int32, cellDeg float64) *SegmentIndex {
	ix := &SegmentIndex{segs: segs, tags: tags, g: newGrid(cellDeg)}
	for i, s := range segs {
		a, b := NormalizeLon(s.A.Lon), NormalizeLon(s.B.Lon)
		lo, hi := math.Min(a, b), math.Max(a, b)
		if hi-lo > 180 { // crosses the antimeridian
			lo, hi = hi, lo+360
		}
		ix.g.add(int32(i), math.Min(s.A.Lat, s.B.Lat), lo, math.Max(s.A.Lat, s.B.Lat), hi)
	}
	ix.g.freeze()
	return ix
}

// Len is the number of indexed segments.
func (ix *SegmentIndex) Len() int { return len(ix.segs) }

// Nearest returns the distance in km from p to the nearest segment within
// maxKm, and that segment's tag (or its index when no tags were given).
// ok is false when no segment is that close. It is safe for concurrent use.
func (ix *SegmentIndex) Nearest(p Point, maxKm float64) (distKm float64, tag int, ok bool) {
	best := math.Inf(1)
	bestI := int32(-1)
	ix.g.visit(p, maxKm, func(i int32) {
		d := PointSegmentKm(p, ix.segs[i])
		if d < best || (d == best && i < bestI) {
			best, bestI = d, i
		}
	})
	if bestI < 0 || best > maxKm {
		return 0, 0, false
	}
	if ix.tags != nil {
		return best, int(ix.tags[bestI]), true
	}
	return best, int(bestI), true
}

// PointSegmentKm is the distance from p to segment s, computed in a local
// equirectangular projection centred on p. It is accurate to well under 1%
// for segments within a few hundred kilometres, which is all the engine asks.
func PointSegmentKm(p Point, s Segment) float64 {
	cosLat := math.Cos(p.Lat * math.Pi / 180)
	proj := func(q Point) (x, y float64) {
		dLon := NormalizeLon(q.Lon - p.Lon)
		return dLon * cosLat * KmPerDegLat, (q.Lat - p.Lat) * KmPerDegLat
	}
	ax, ay := proj(s.A)
	bx, by := proj(s.B)
	dx, dy := bx-ax, by-ay
	l2 := dx*dx + dy*dy
	t := 0.0
	if l2 > 0 {
		t = -(ax*dx + ay*dy) / l2
		t = math.Max(0, math.Min(1, t))
	}
	x, y := ax+t*dx, ay+t*dy
	return math.Hypot(x, y)
}
