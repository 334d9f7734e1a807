package terrain

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// byteAverage makes a coarse grid from a fine one as the tiles were made:
// each coarse pixel averages f x f fine cells, each colour byte of the
// encoding on its own, each average rounded to a whole byte.
func byteAverage(fine []int32, fw, fh, f int) (raw []int32, truth []float64, w, h int) {
	w, h = fw/f, fh/f
	raw, truth = make([]int32, w*h), make([]float64, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var r, g, b, t float64
			for dy := 0; dy < f; dy++ {
				for dx := 0; dx < f; dx++ {
					v := fine[(y*f+dy)*fw+x*f+dx]
					u := uint32(v) & 0xffffff // the encoding: B = 255 for negatives
					r += float64(u & 255)
					g += float64(u >> 8 & 255)
					b += float64(u >> 16 & 255)
					t += float64(v)
				}
			}
			n := float64(f * f)
			raw[y*w+x] = decodeRGB(uint8(math.Round(r/n)), uint8(math.Round(g/n)), uint8(math.Round(b/n)))
			truth[y*w+x] = t / n
		}
	}
	return raw, truth, w, h
}

// TestRepairRestoresByteAveragedRamp: a smooth ramp rising across 256 m and
// 512 m, byte-averaged, reads up to about ±128 m wrong along the two
// contours; the repair restores every pixel within a few metres (2x2
// averaging) or within 20 m (4x4).
func TestRepairRestoresByteAveragedRamp(t *testing.T) {
	for _, tc := range []struct {
		name   string
		factor int
		z      func(x, y float64) float64 // fine cell heights
		tol    float64
	}{
		{"ramp east, 2x2", 2, func(x, y float64) float64 { return 150 + 3.1*x + 0.4*y }, 3},
		{"ramp north-east, 2x2", 2, func(x, y float64) float64 { return 100 + 2.3*x + 1.7*y }, 3},
		// 4x4 averaging leaves errors in steps of 16 m; those below
		// repairMinDeviation stay.
		{"gentle ramp, 4x4", 4, func(x, y float64) float64 { return 180 + 1.2*x + 0.3*y }, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fw, fh := 160*tc.factor/2, 48*tc.factor/2
			fine := make([]int32, fw*fh)
			for y := 0; y < fh; y++ {
				for x := 0; x < fw; x++ {
					fine[y*fw+x] = int32(math.Round(tc.z(float64(x), float64(y))))
				}
			}
			raw, truth, w, h := byteAverage(fine, fw, fh, tc.factor)
			worstBefore := 0.0
			for i, v := range raw {
				worstBefore = max(worstBefore, math.Abs(float64(v)-truth[i]))
			}
			if worstBefore < 64 {
				t.Fatalf("the fixture has no defect (worst %.0f m)", worstBefore)
			}
			got, st := repair(raw, w, h, nil, true)
			worst, at := 0.0, 0
			for i, v := range got {
				if d := math.Abs(float64(v) - truth[i]); d > worst {
					worst, at = d, i
				}
			}
			t.Logf("worst error %.0f m before, %.1f m after (%d of %d pixels changed)", worstBefore, worst, st.Changed, st.Pixels)
			if worst > tc.tol {
				t.Errorf("pixel (%d, %d): %d m after the repair, truth %.1f m (read %d)", at%w, at/w, got[at], truth[at], raw[at])
			}
		})
	}
}

// TestRepairKeepsCleanTerrain: where nothing straddles a multiple of 256 m
// the tiles are exact, and the repair leaves even rough terrain alone.
func TestRepairKeepsCleanTerrain(t *testing.T) {
	const w, h = 64, 64
	raw := make([]int32, w*h)
	for i := range raw {
		// hills and valleys 1300..1499 m (G is 5 throughout), up to about
		// 40 m between neighbouring pixels
		x, y := float64(i%w), float64(i/w)
		raw[i] = int32(math.Round(1400 + 60*math.Sin(x/2.1)*math.Cos(y/3.3) + 35*math.Sin((x+2*y)/1.7)))
	}
	raw[20*w+20] = 1535 // a lone peak
	got, st := repair(raw, w, h, nil, true)
	for i := range raw {
		if int32(got[i]) != raw[i] {
			t.Fatalf("pixel %d changed from %d to %d", i, raw[i], got[i])
		}
	}
	if st.Changed != 0 {
		t.Errorf("Changed = %d", st.Changed)
	}
}

// TestRepairMixedCoast: a pixel whose sign byte mixed land and sea takes
// its unmixed neighbours' median, not the garbage of its R and G.
func TestRepairMixedCoast(t *testing.T) {
	const w, h = 5, 5
	raw := make([]int32, w*h)
	for i := range raw {
		if i%w < 2 {
			raw[i] = -20
		} else {
			raw[i] = 6
		}
	}
	raw[2*w+2] = decodeRGB(120, 128, 127)
	got, st := repair(raw, w, h, nil, true)
	if st.Mixed != 1 || got[2*w+2] < -20 || got[2*w+2] > 6 {
		t.Errorf("mixed pixel became %d m (mixed %d)", got[2*w+2], st.Mixed)
	}
}

func TestDecodeRGB(t *testing.T) {
	for _, tc := range []struct {
		r, g, b uint8
		want    int32
	}{{0, 0, 0, 0}, {67, 6, 0, 1603}, {182, 0, 0, 182}, {176, 255, 255, -80}, {0, 0, 255, -65536}, {1, 2, 128, rawMixed}} {
		if got := decodeRGB(tc.r, tc.g, tc.b); got != tc.want {
			t.Errorf("decodeRGB(%d, %d, %d) = %d, want %d", tc.r, tc.g, tc.b, got, tc.want)
		}
	}
}

// TestSort8 checks the sorting network on every 0-1 input (the 0-1
// principle) and on random values.
func TestSort8(t *testing.T) {
	for mask := 0; mask < 256; mask++ {
		var s [8]int32
		for i := range s {
			s[i] = int32(mask >> i & 1)
		}
		sort8(&s)
		if !slices.IsSorted(s[:]) {
			t.Fatalf("sort8 on mask %08b: %v", mask, s)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		var s [8]int32
		for i := range s {
			s[i] = rng.Int32N(1000) - 500
		}
		want := slices.Clone(s[:])
		slices.Sort(want)
		sort8(&s)
		if !slices.Equal(s[:], want) {
			t.Fatalf("sort8 = %v, want %v", s, want)
		}
	}
}
