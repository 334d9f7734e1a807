package severeweather

import (
	"math"

	"locrisk/risk/geo"
)

// padIndex answers "which items could lie within padKm of this point" with a
// single cell lookup: at build time every item is listed in each cell its
// bounding box, grown by padKm, touches. A query therefore reads one cell,
// sees each candidate exactly once (no de-duplication), and in item order,
// which lets callers group consecutive items (the segments of one storm).
//
// Columns cover the whole circle of longitude so boxes that cross the
// antimeridian wrap; rows cover only the latitudes the items reach.
type padIndex struct {
	cell  float64
	lat0  float64 // southern edge of row 0
	nrows int
	ncols int
	start []int32 // CSR offsets, len nrows*ncols+1
	items []int32
}

// box is an item's bounding box in degrees. lon1 >= lon0; either may lie
// outside [-180, 180) for a box that crosses the antimeridian.
type box struct {
	lat0, lat1, lon0, lon1 float64
}

// padded grows b by km in every direction. The longitude growth uses the
// latitude farthest from the equator inside the grown box, so it covers every
// point whose equirectangular distance (scaled by the cosine of the point's
// own latitude, as segKm2 measures it) is within km.
func (b box) padded(km float64) box {
	dLat := km / geo.KmPerDegLat
	p := box{lat0: b.lat0 - dLat, lat1: b.lat1 + dLat}
	maxAbs := math.Min(math.Max(math.Abs(p.lat0), math.Abs(p.lat1)), 89.9)
	dLon := km / (geo.KmPerDegLat * math.Cos(maxAbs*math.Pi/180))
	p.lon0, p.lon1 = b.lon0-dLon, b.lon1+dLon
	return p
}

func newPadIndex(boxes []box, padKm, cellDeg float64) *padIndex {
	ix := &padIndex{cell: cellDeg, ncols: int(math.Round(360 / cellDeg))}
	if len(boxes) == 0 {
		ix.start = []int32{0}
		return ix
	}
	pb := make([]box, len(boxes))
	minLat, maxLat := math.Inf(1), math.Inf(-1)
	for i, b := range boxes {
		pb[i] = b.padded(padKm)
		minLat = math.Min(minLat, pb[i].lat0)
		maxLat = math.Max(maxLat, pb[i].lat1)
	}
	ix.lat0 = math.Floor(minLat/cellDeg) * cellDeg
	ix.nrows = int(math.Floor((maxLat-ix.lat0)/cellDeg)) + 1
	counts := make([]int32, ix.nrows*ix.ncols+1)
	ix.each(pb, func(_ int32, k int) { counts[k+1]++ })
	for k := 1; k < len(counts); k++ {
		counts[k] += counts[k-1]
	}
	ix.items = make([]int32, counts[len(counts)-1])
	fill := append([]int32(nil), counts[:len(counts)-1]...)
	ix.each(pb, func(item int32, k int) {
		ix.items[fill[k]] = item
		fill[k]++
	})
	ix.start = counts
	return ix
}

// each calls fn for every (item, cell) pair covered by the padded boxes, in
// item order.
func (ix *padIndex) each(pb []box, fn func(item int32, k int)) {
	for i, b := range pb {
		r0 := int(math.Floor((b.lat0 - ix.lat0) / ix.cell))
		r1 := int(math.Floor((b.lat1 - ix.lat0) / ix.cell))
		r0 = max(r0, 0)
		r1 = min(r1, ix.nrows-1)
		c0 := int(math.Floor((b.lon0 + 180) / ix.cell))
		c1 := int(math.Floor((b.lon1 + 180) / ix.cell))
		if c1-c0+1 >= ix.ncols {
			c0, c1 = 0, ix.ncols-1
		}
		for r := r0; r <= r1; r++ {
			for c := c0; c <= c1; c++ {
				cc := c % ix.ncols
				if cc < 0 {
					cc += ix.ncols
				}
				fn(int32(i), r*ix.ncols+cc)
			}
		}
	}
}

// candidates returns the items whose padded box covers the cell holding
// (lat, lon), in ascending item order. lon must be in [-180, 180).
func (ix *padIndex) candidates(lat, lon float64) []int32 {
	r := int(math.Floor((lat - ix.lat0) / ix.cell))
	if r < 0 || r >= ix.nrows {
		return nil
	}
	c := int(math.Floor((lon + 180) / ix.cell))
	if c >= ix.ncols {
		c = ix.ncols - 1
	} else if c < 0 {
		c = 0
	}
	k := r*ix.ncols + c
	return ix.items[ix.start[k]:ix.start[k+1]]
}

// frame is a local equirectangular projection centred on a query point, in
// km: x east, y north. Over the 40-100 km radii used here it differs from the
// great-circle distance by well under 1%.
type frame struct {
	lat, lon float64
	kx       float64 // km per degree of longitude at lat
}

func newFrame(lat, lon float64) frame {
	return frame{lat: lat, lon: lon, kx: geo.KmPerDegLat * math.Cos(lat*math.Pi/180)}
}

func wrap180(d float64) float64 {
	if d > 180 {
		return d - 360
	} else if d < -180 {
		return d + 360
	}
	return d
}

// seg projects the segment a-b. b's longitude is taken relative to a's, so
// a segment keeps its shape even when it straddles the meridian opposite the
// frame's centre.
func (f frame) seg(alat, alon, blat, blon float32) (ax, ay, bx, by float64) {
	da := wrap180(float64(alon) - f.lon)
	db := da + wrap180(float64(blon)-float64(alon))
	return da * f.kx, (float64(alat) - f.lat) * geo.KmPerDegLat, db * f.kx, (float64(blat) - f.lat) * geo.KmPerDegLat
}

// segKm2 is the squared distance in km² from the frame's centre to the
// segment a-b.
func (f frame) segKm2(alat, alon, blat, blon float32) float64 {
	ax, ay, bx, by := f.seg(alat, alon, blat, blon)
	dx, dy := bx-ax, by-ay
	l2 := dx*dx + dy*dy
	if l2 > 0 {
		t := -(ax*dx + ay*dy) / l2
		if t > 1 {
			t = 1
		} else if t < 0 {
			t = 0
		}
		ax += t * dx
		ay += t * dy
	}
	return ax*ax + ay*ay
}

// discSpan returns the part [t0, t1] of the segment a-b (parameter t from 0
// at a to 1 at b) that lies within r km of the frame's centre; ok is false
// when the segment stays outside.
func (f frame) discSpan(alat, alon, blat, blon float32, r float64) (t0, t1 float64, ok bool) {
	ax, ay, bx, by := f.seg(alat, alon, blat, blon)
	dx, dy := bx-ax, by-ay
	a := dx*dx + dy*dy
	c := ax*ax + ay*ay - r*r
	if a == 0 {
		return 0, 0, c <= 0
	}
	b := ax*dx + ay*dy // half the linear coefficient
	disc := b*b - a*c
	if disc < 0 {
		return 0, 0, false
	}
	s := math.Sqrt(disc)
	t0, t1 = (-b-s)/a, (-b+s)/a
	t0, t1 = math.Max(t0, 0), math.Min(t1, 1)
	if t0 > t1 {
		return 0, 0, false
	}
	return t0, t1, true
}
