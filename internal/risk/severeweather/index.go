package severeweather

import (
	"math"

	"github.com/locrisk/locrisk/internal/risk/geo"
)

// newPadIndex answers "which items could lie within padKm of this point"
// with a single cell lookup (geo.CellIndex.At): every item is listed in each
// cell its bounding box, grown by padKm, touches. A query therefore reads
// one cell and sees each candidate exactly once, in ascending item order,
// which lets callers group consecutive items (the segments of one storm,
// the tracks of one day). Boxes may cross the antimeridian. Box.Pad grows
// longitudes at the grown box's most poleward latitude, so a cell holds
// every item whose equirectangular distance (scaled by the cosine of the
// query's own latitude, as segKm2 measures it) is within padKm.
func newPadIndex(boxes []geo.Box, padKm, cellDeg float64) *geo.CellIndex {
	b := geo.NewCellIndexBuilder(cellDeg)
	for i, bx := range boxes {
		b.Add(int32(i), bx.Pad(padKm))
	}
	return b.Build()
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
