package terrain

import (
	"math"
	"runtime"
	"sync"
)

// The repair of the SRTM30_PLUS tiles (see the package comment for why and
// for the measured effect).
//
// How the defect arises: the zoom 6 tiles were made from finer ones by
// averaging each colour byte on its own. Where the cells averaged into a
// pixel lie on both sides of a multiple of 256 m, say 256k, the low bytes R
// are a mix of values near 255 and near 0 and the high bytes G a mix of k-1
// and k; the average G is rounded, so the pixel reads R' + 256 G' while the
// true mean is R' + 256 mean(G): wrong by up to 128 m per averaging step,
// and R' lands in the middle of its range. When the averaged cells lie
// close to 256k (the usual case: a pixel spans a few hundred metres of
// relief at most away from steep walls), the true mean is close to 256k
// itself: the multiple of 256 next to the reading, below or above.
//
// Real relief at 2 km looks much the same to a 3x3 window: a ridge 2-3 km
// wide (Lookout Mountain, 600 m above valleys at 200 m) is a line of lone
// pixels far above their neighbours, a canyon a line far below. What sets
// the defect apart is where the truth lies: near a multiple of 256 that
// the neighbours themselves stand near. So the repair, per pixel, with m
// the median of its eight neighbours and spread the range of the
// neighbours less the highest and the lowest:
//  1. a pixel whose B byte is neither 0 nor 255 mixed land and sea: it takes
//     the median of its unmixed neighbours (ETOPO5 where there are none);
//  2. a pixel farther from m than repairMinDeviation and than spread/2 (what
//     rough ground explains) is a suspect. Its only candidates are the two
//     multiples of 256 next to it (256 floor(v/256), 256 ceil(v/256)): it
//     takes the one closest to m when that lies within repairNear of m,
//     at least halves its distance to m and gains repairGain, unless two
//     of its neighbours that are not suspects read within corroboration
//     of it, and nearer to it than to the candidate (relief that runs on).
//     A pixel changes at most once, by at most 256 m. Two passes, the
//     second on the first's result, since defects come in runs along
//     256 m contours and spoil each other's medians.
//
// What the repair no longer does, and why (measured at the known
// elevations of TestKnownElevations): a reading one whole high byte up or
// down (v ± 256) and a last 3x3 median filter of what still stood out
// took ridge tops down to their valleys (Lookout Mountain 631 m to 256 m)
// and filled valleys (Aspen, Durango and Telluride by 100-230 m), and
// leaving isolated spikes, or pixels ETOPO5 sides with, to the filter
// did not stop that.
//
// Pixels below 0 m (sea floor, and the few land depressions, whose
// defect would show as a mixed B byte) are left alone.
const (
	repairMinDeviation = 24
	repairGain         = 16
	repairPasses       = 2
	repairNear         = 64
	corroboration      = 64
	// deepSea: pixels below this are left as they are (but for mixed
	// ones): relief and slope count them as 0 m, and the defect they can
	// carry (sea floor straddling -256 m) is out at sea.
	deepSea = 0
)

// RepairStats measures the repair on a mosaic.
type RepairStats struct {
	Pixels, Mixed, Changed int // pixels of the tiles held; land-sea mixed; changed
	Land, ChangedLand      int // pixels above 0 m before or after, and how many of them changed
	// Share of land pixels (above 0 m) that differ from the median of their
	// 3x3 block by more than 64 m, before and after; and the same among
	// pixels whose low byte R is mid-range (64-191), where the defect lives.
	OutlierBefore, OutlierAfter         float64
	OutlierMidRBefore, OutlierMidRAfter float64
}

// repair returns the repaired mosaic (metres) from the raw one (decodeRGB
// values); etopo, when not nil, gives ETOPO5 at a mosaic pixel, used where
// a mixed pixel has no unmixed neighbour and for tiles the pack lacks.
//
// With measure, it also measures the outliers before and after (two more
// sweeps over the mosaic, left out at Load). The sweeps run on row bands in
// parallel.
func repair(raw []int32, w, h int, etopo func(x, y int) (float64, bool), measure bool) ([]int16, RepairStats) {
	var st RepairStats
	cur := make([]int16, w*h) // becomes the result
	mixed := make([]bool, w*h)
	for i, v := range raw {
		switch v {
		case rawMixed:
			mixed[i] = true
			st.Mixed++
		case rawMissing: // a tile not in the pack: never served; ETOPO5 keeps its neighbours' medians sane
			e, _ := etopoAt(etopo, i%w, i/w)
			cur[i] = clamp16(math.Round(e))
			continue
		default:
			cur[i] = clamp16(float64(v))
		}
		st.Pixels++
	}
	var buf [9]int32
	// 1. mixed land-sea pixels.
	for i := range cur {
		if !mixed[i] {
			continue
		}
		x, y := i%w, i/w
		k := 0
		for dy := -1; dy <= 1; dy++ {
			for dx := -1; dx <= 1; dx++ {
				xx, yy := x+dx, y+dy
				if xx >= 0 && xx < w && yy >= 0 && yy < h && !mixed[yy*w+xx] {
					buf[k] = int32(cur[yy*w+xx])
					k++
				}
			}
		}
		if k > 0 {
			cur[i] = int16(median(buf[:k]))
		} else if v, ok := etopoAt(etopo, x, y); ok {
			cur[i] = clamp16(math.Round(v))
		}
	}
	if measure {
		st.OutlierBefore, st.OutlierMidRBefore = outliers(cur, raw, w, h)
	}
	// 2. suspects take the multiple of 256 m next to them that agrees with
	// their neighbours, once.
	src := make([]int16, w*h)
	suspect := make([]bool, w*h)
	changed := make([]bool, w*h)
	for pass := 0; pass < repairPasses; pass++ {
		copy(src, cur)
		inBands(h, func(y0, y1 int) {
			var buf [9]int32
			for y := y0; y < y1; y++ {
				for x := 0; x < w; x++ {
					i := y*w + x
					suspect[i] = false
					if v := int32(src[i]); v >= deepSea && !calm(src, w, h, x, y, repairMinDeviation) {
						m, spread := neighbours(src, w, h, x, y, &buf)
						suspect[i] = abs32(v-m) > max(repairMinDeviation, spread/2)
					}
				}
			}
		})
		inBands(h, func(y0, y1 int) {
			var buf [9]int32
			for y := y0; y < y1; y++ {
				for x := 0; x < w; x++ {
					i := y*w + x
					if !suspect[i] || changed[i] {
						continue
					}
					v := int32(src[i])
					m, spread := neighbours(src, w, h, x, y, &buf)
					if c, ok := reading(v, m, spread); ok && !corroborated(src, suspect, w, h, x, y, c) {
						cur[i] = clamp16(float64(c))
						changed[i] = true
					}
				}
			}
		})
	}
	for i := range cur {
		if raw[i] == rawMissing {
			continue
		}
		land := cur[i] > 0 || raw[i] > 0
		if mixed[i] || int32(cur[i]) != raw[i] {
			st.Changed++
			if land {
				st.ChangedLand++
			}
		}
		if land {
			st.Land++
		}
	}
	if measure {
		st.OutlierAfter, st.OutlierMidRAfter = outliers(cur, raw, w, h)
	}
	return cur, st
}

// reading is the repair of a suspect pixel reading v whose neighbours'
// median is m and whose neighbours spread over spread metres (second
// highest minus second lowest): the multiple of 256 next to v (below or
// above) closest to m, if it lies within repairNear of m, at least halves
// the distance to m and gains repairGain. Nothing farther: a reading whose
// neighbours stand near neither multiple (a ridge above its valleys, a
// valley below its walls) is relief, whatever its low byte.
func reading(v, m, spread int32) (int32, bool) {
	dev := abs32(v - m)
	if dev <= max(repairMinDeviation, spread/2) {
		return v, false
	}
	lo := v &^ 255 // 256 floor(v/256), for negative v too (two's complement)
	best, bestDev := v, dev
	for _, c := range [2]int32{lo, lo + 256} {
		if d := abs32(c - m); d < bestDev {
			best, bestDev = c, d
		}
	}
	return best, bestDev <= repairNear && bestDev <= dev-repairGain && bestDev <= dev/2
}

// corroborated tells that the suspect pixel (x, y) is real relief: at
// least two of its neighbours that are not suspects themselves read within
// corroboration metres of it (a ridge or a valley runs on; the defect
// makes lone pixels and runs of suspects along a 256 m contour).
func corroborated(z []int16, suspect []bool, w, h, x, y int, c int32) bool {
	v, n := int32(z[y*w+x]), 0
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			xx, yy := x+dx, y+dy
			if (dx == 0 && dy == 0) || xx < 0 || xx >= w || yy < 0 || yy >= h {
				continue
			}
			if j := yy*w + xx; !suspect[j] && abs32(int32(z[j])-v) <= corroboration && abs32(int32(z[j])-v) < abs32(int32(z[j])-c) {
				n++
			}
		}
	}
	return n >= 2
}

// neighbours is the median and the spread (second highest minus second
// lowest) of the neighbours of pixel (x, y): eight, fewer at the edges.
func neighbours(z []int16, w, h, x, y int, buf *[9]int32) (m, spread int32) {
	if x > 0 && y > 0 && x < w-1 && y < h-1 {
		i := y*w + x
		s := [8]int32{int32(z[i-w-1]), int32(z[i-w]), int32(z[i-w+1]), int32(z[i-1]), int32(z[i+1]), int32(z[i+w-1]), int32(z[i+w]), int32(z[i+w+1])}
		sort8(&s)
		return (s[3] + s[4]) >> 1, s[6] - s[1]
	}
	k := 0
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			xx, yy := x+dx, y+dy
			if xx >= 0 && xx < w && yy >= 0 && yy < h && (dx != 0 || dy != 0) {
				buf[k] = int32(z[yy*w+xx])
				k++
			}
		}
	}
	m = median(buf[:k]) // sorts buf[:k]
	if k >= 4 {
		spread = buf[k-2] - buf[1]
	} else {
		spread = buf[k-1] - buf[0]
	}
	return m, spread
}

// calm tells, cheaply, that pixel (x, y) is within within metres of any
// median of its block: it lies between its neighbours' lowest and highest,
// which are no more than within apart.
func calm(z []int16, w, h, x, y int, within int32) bool {
	if x == 0 || y == 0 || x == w-1 || y == h-1 {
		return false
	}
	i := y*w + x
	up, row, down := z[i-w-1:i-w+2], z[i-1:i+2], z[i+w-1:i+w+2]
	lo := min(up[0], up[1], up[2], row[0], row[2], down[0], down[1], down[2])
	hi := max(up[0], up[1], up[2], row[0], row[2], down[0], down[1], down[2])
	return int32(hi)-int32(lo) <= within && row[1] >= lo && row[1] <= hi
}

func clamp16(v float64) int16 { return int16(min(max(v, math.MinInt16+1), math.MaxInt16)) }

func abs32(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

// block is the median of the 3x3 block around (x, y), the centre left out
// unless self, clipped at the edges (an even count: the lower middle, so
// medians stay whole metres).
func block(z []int16, w, h, x, y int, self bool, buf *[9]int32) int32 {
	if x > 0 && y > 0 && x < w-1 && y < h-1 {
		i := y*w + x
		s := [8]int32{int32(z[i-w-1]), int32(z[i-w]), int32(z[i-w+1]), int32(z[i-1]), int32(z[i+1]), int32(z[i+w-1]), int32(z[i+w]), int32(z[i+w+1])}
		sort8(&s)
		if self {
			return min(max(int32(z[i]), s[3]), s[4]) // the 5th of 9
		}
		return (s[3] + s[4]) >> 1
	}
	k := 0
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			xx, yy := x+dx, y+dy
			if xx >= 0 && xx < w && yy >= 0 && yy < h && (self || dx != 0 || dy != 0) {
				buf[k] = int32(z[yy*w+xx])
				k++
			}
		}
	}
	return median(buf[:k])
}

// sort8 sorts eight values with Batcher's odd-even merge network (19
// compare-exchanges), written out on locals so that each exchange is a
// pair of branch-free min and max (the repair sorts millions of blocks).
func sort8(s *[8]int32) {
	a0, a1, a2, a3, a4, a5, a6, a7 := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
	// pairs
	a0, a1 = min(a0, a1), max(a0, a1)
	a2, a3 = min(a2, a3), max(a2, a3)
	a4, a5 = min(a4, a5), max(a4, a5)
	a6, a7 = min(a6, a7), max(a6, a7)
	// fours
	a0, a2 = min(a0, a2), max(a0, a2)
	a1, a3 = min(a1, a3), max(a1, a3)
	a1, a2 = min(a1, a2), max(a1, a2)
	a4, a6 = min(a4, a6), max(a4, a6)
	a5, a7 = min(a5, a7), max(a5, a7)
	a5, a6 = min(a5, a6), max(a5, a6)
	// eight
	a0, a4 = min(a0, a4), max(a0, a4)
	a1, a5 = min(a1, a5), max(a1, a5)
	a2, a6 = min(a2, a6), max(a2, a6)
	a3, a7 = min(a3, a7), max(a3, a7)
	a2, a4 = min(a2, a4), max(a2, a4)
	a3, a5 = min(a3, a5), max(a3, a5)
	a1, a2 = min(a1, a2), max(a1, a2)
	a3, a4 = min(a3, a4), max(a3, a4)
	a5, a6 = min(a5, a6), max(a5, a6)
	*s = [8]int32{a0, a1, a2, a3, a4, a5, a6, a7}
}

func etopoAt(etopo func(x, y int) (float64, bool), x, y int) (float64, bool) {
	if etopo == nil {
		return 0, false
	}
	return etopo(x, y)
}

// outliers is the share of land pixels farther than 64 m from their 3x3
// median, overall and among raw readings with a mid-range low byte.
func outliers(z []int16, raw []int32, w, h int) (all, midR float64) {
	var n, out, nMid, outMid int
	var buf [9]int32
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			i := y*w + x
			if z[i] <= 0 || raw[i] == rawMixed || raw[i] == rawMissing {
				continue
			}
			o := !calm(z, w, h, x, y, 64) && abs32(int32(z[i])-block(z, w, h, x, y, true, &buf)) > 64
			n++
			if o {
				out++
			}
			if r := raw[i] & 255; r >= 64 && r < 192 {
				nMid++
				if o {
					outMid++
				}
			}
		}
	}
	return float64(out) / float64(max(n, 1)), float64(outMid) / float64(max(nMid, 1))
}

// median of a few values (sorted in place by insertion); the lower middle
// of an even count.
func median(v []int32) int32 {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) >> 1
}

// inBands runs fn on bands of the rows 0..h-1, one per processor, in
// parallel, and waits for them.
func inBands(h int, fn func(y0, y1 int)) {
	n := min(max(runtime.GOMAXPROCS(0), 1), 8, h)
	var wg sync.WaitGroup
	for k := 0; k < n; k++ {
		wg.Go(func() { fn(k*h/n, (k+1)*h/n) })
	}
	wg.Wait()
}
