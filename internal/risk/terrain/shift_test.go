package terrain

import (
	"math"
	"testing"
)

// TestRegistrationReal: the ETOPO5 clip and the SRTM mosaic agree best
// where they stand, not shifted by a fraction of an ETOPO5 column either
// way (the clip corrects this ETOPO5 copy by 1.5 columns; see
// cmd/terrainpack). North-south the two agree best with ETOPO5 about a
// quarter row (2-3 km) south of where it stands; coastlines show the SRTM
// rows right to a pixel, and 9 km cells cannot place it better, so no
// correction is made.
func TestRegistrationReal(t *testing.T) {
	m := realModel(t)
	rmse := func(dr, dc float64) float64 {
		box := &m.etopo[0]
		var s float64
		n := 0
		for r := 0; r < box.Rows; r += 2 {
			lat := box.latOf(r)
			if lat < 25 || lat > 49 {
				continue
			}
			for c := 0; c < box.Cols; c += 2 {
				lon := box.lonOf(c)
				e, _ := box.at(r, c)
				if e <= 0 || lon < -124.5 || lon > -67 {
					continue
				}
				x, y := mosaicXY(lat-dr*box.Step, lon+dc*box.Step)
				if v, ok := bilinear(y, x, mosaicH, mosaicW, m.srtmAt); ok && v > 0 {
					s += (v - e) * (v - e)
					n++
				}
			}
		}
		return math.Sqrt(s / float64(n))
	}
	at := rmse(0, 0)
	for _, dc := range []float64{-0.5, -0.25, 0.25, 0.5} {
		if r := rmse(0, dc); r < at {
			t.Errorf("shifted %v columns east: RMSE %.1f m, below %.1f m unshifted", dc, r, at)
		}
	}
	t.Logf("RMSE SRTM - ETOPO5 at CONUS land grid points: %.1f m; a quarter row south %.1f m, half a row %.1f m", at, rmse(0.25, 0), rmse(0.5, 0))
}
