// Package geo holds the spherical geometry the risk engine needs: great-circle
// distances, CellIndex (the one grid of cells every spatial lookup in the
// engine is built on), and on it an index over points for radius queries and
// an index over line segments for nearest-distance queries (coastlines,
// rivers).
//
// Longitudes are degrees in [-180, 180); queries near the antimeridian look
// at cells on both sides of it. Distances are kilometres on a sphere of radius
// 6371.0088 km (the IUGG mean radius), good to about 0.5% everywhere, which
// is far below the accuracy of the data sets.
package geo

import (
	"math"
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

// PointIndex finds indexed points within a radius of a query point.
type PointIndex struct {
	pts []Point
	g   *CellIndex
}

// NewPointIndex indexes pts with square cells of cellDeg degrees; pick a cell
// near the typical query radius (0.5 degree suits 25-100 km queries).
func NewPointIndex(pts []Point, cellDeg float64) *PointIndex {
	b := NewCellIndexBuilder(cellDeg)
	for i, p := range pts {
		b.Add(int32(i), PointBox(p))
	}
	return &PointIndex{pts: pts, g: b.Build()}
}

// Len is the number of indexed points.
func (ix *PointIndex) Len() int { return len(ix.pts) }

// Within calls fn once for every indexed point within km of p, with its index
// in the slice given to NewPointIndex and its distance.
func (ix *PointIndex) Within(p Point, km float64, fn func(i int, distKm float64)) {
	ix.g.Near(p, km, func(i int32) {
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
	g    *CellIndex
}

// NewSegmentIndex indexes segs with cells of cellDeg degrees. tags, if not
// nil, carries one caller-defined value per segment (a feature number or a
// level) returned by Nearest.
func NewSegmentIndex(segs []Segment, tags []int32, cellDeg float64) *SegmentIndex {
	b := NewCellIndexBuilder(cellDeg)
	for i, s := range segs {
		b.Add(int32(i), SegmentBox(s))
	}
	return &SegmentIndex{segs: segs, tags: tags, g: b.Build()}
}

// Len is the number of indexed segments.
func (ix *SegmentIndex) Len() int { return len(ix.segs) }

// Nearest returns the distance in km from p to the nearest segment within
// maxKm, and that segment's tag (or its index when no tags were given).
// ok is false when no segment is that close. It is safe for concurrent use.
func (ix *SegmentIndex) Nearest(p Point, maxKm float64) (distKm float64, tag int, ok bool) {
	best := math.Inf(1)
	bestI := int32(-1)
	ix.g.Near(p, maxKm, func(i int32) {
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

// Tangent measures short distances in the plane tangent to the sphere at a
// point: out to 60 km it differs from the great-circle distance by well
// under 0.1%, and it costs no trigonometry per point, which matters where
// one site sums thousands of neighbours (population density, residents
// around a site).
type Tangent struct {
	at Point
	kx float64 // km per degree of longitude at the point's latitude
}

// TangentAt is the tangent plane at p.
func TangentAt(p Point) Tangent {
	return Tangent{at: p, kx: KmPerDegLat * math.Cos(p.Lat*math.Pi/180)}
}

// Km2 is the squared distance in km² from the tangent point to q, with
// longitudes wrapped across the antimeridian.
func (t Tangent) Km2(q Point) float64 {
	dy := (q.Lat - t.at.Lat) * KmPerDegLat
	dl := q.Lon - t.at.Lon
	if dl > 180 {
		dl -= 360
	} else if dl < -180 {
		dl += 360
	}
	dx := dl * t.kx
	return dx*dx + dy*dy
}
