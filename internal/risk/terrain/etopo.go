package terrain

import "math"

// etopoBox is one block of the ETOPO5 clip, ready for lookups.
type etopoBox struct {
	Grid
	north float64 // latitude of row 0
}

func newEtopoBox(g Grid) etopoBox {
	return etopoBox{Grid: g, north: g.South + g.Step*float64(g.Rows-1)}
}

// rc is the fractional row (from the north) and column of a point, and
// whether it lies within the block.
func (b *etopoBox) rc(lat, lon float64) (r, c float64, ok bool) {
	if !(lat >= b.South && lat <= b.north) {
		return 0, 0, false
	}
	d := math.Mod(lon-b.West, 360)
	if d < 0 {
		d += 360
	}
	c = d / b.Step
	if c > float64(b.Cols-1) {
		return 0, 0, false
	}
	return (b.north - lat) / b.Step, c, true
}

func (b *etopoBox) at(r, c int) (float64, bool) {
	v := b.Z[r*b.Cols+c]
	return float64(v), v != NoData
}

// latOf is the latitude of row r.
func (b *etopoBox) latOf(r int) float64 { return b.north - float64(r)*b.Step }

// lonOf is the longitude of column c in [-180, 180).
func (b *etopoBox) lonOf(c int) float64 { return normLon(b.West + float64(c)*b.Step) }

func normLon(lon float64) float64 {
	lon = math.Mod(lon+180, 360)
	if lon < 0 {
		lon += 360
	}
	return lon - 180
}

// bilinear interpolates the block at fractional (r, c); cells without data
// are left out and the weights renormalised.
func bilinear(r, c float64, rows, cols int, at func(r, c int) (float64, bool)) (float64, bool) {
	r0, c0 := int(math.Floor(r)), int(math.Floor(c))
	r0 = min(max(r0, 0), rows-2)
	c0 = min(max(c0, 0), cols-2)
	fr, fc := r-float64(r0), c-float64(c0)
	fr, fc = min(max(fr, 0), 1), min(max(fc, 0), 1)
	var sum, wsum float64
	for _, k := range [4]struct {
		dr, dc int
		w      float64
	}{{0, 0, (1 - fr) * (1 - fc)}, {0, 1, (1 - fr) * fc}, {1, 0, fr * (1 - fc)}, {1, 1, fr * fc}} {
		if k.w == 0 {
			continue
		}
		if v, ok := at(r0+k.dr, c0+k.dc); ok {
			sum += k.w * v
			wsum += k.w
		}
	}
	if wsum < 0.25 {
		return 0, false
	}
	return sum / wsum, true
}
