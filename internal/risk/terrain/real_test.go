package terrain

import (
	"io/fs"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// realModel loads the model from the real data pack once per test binary.
var realModel = func() func(testing.TB) *Model {
	var (
		once sync.Once
		m    *Model
		err  error
	)
	return func(tb testing.TB) *Model {
		tb.Helper()
		fsys := datatest.Real(tb)
		once.Do(func() {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			t0 := time.Now()
			m, err = Load(fsys)
			d := time.Since(t0)
			runtime.GC()
			runtime.ReadMemStats(&after)
			tb.Logf("Load: %v, %.1f MB retained", d.Round(time.Millisecond), float64(after.HeapAlloc-before.HeapAlloc)/(1<<20))
		})
		if err != nil {
			tb.Fatal(err)
		}
		return m
	}
}()

func TestRepairRealTiles(t *testing.T) {
	m := realModel(t)
	raw := rawMosaic(t, datatest.Real(t))
	_, st := repair(raw, mosaicW, mosaicH, func(x, y int) (float64, bool) {
		return m.etopoElevation(mosaicLat(float64(y)), mosaicLon(float64(x)))
	}, true)
	if st2 := m.RepairStats(); st.Changed != st2.Changed || st.ChangedLand != st2.ChangedLand {
		t.Errorf("repair at Load %+v, measured %+v", st2, st)
	}
	t.Logf("pixels %d, mixed land-sea %d, changed %d (%.2f%%), land %d changed %d (%.2f%%)", st.Pixels, st.Mixed, st.Changed, 100*float64(st.Changed)/float64(st.Pixels), st.Land, st.ChangedLand, 100*float64(st.ChangedLand)/float64(st.Land))
	t.Logf("land pixels > 64 m from 3x3 median: %.2f%% -> %.2f%%; R mid-range: %.2f%% -> %.2f%%", 100*st.OutlierBefore, 100*st.OutlierAfter, 100*st.OutlierMidRBefore, 100*st.OutlierMidRAfter)
	before, after, n := rmseAgainstETOPO(t, m)
	t.Logf("RMSE against ETOPO5 at %d CONUS land grid points: %.1f m -> %.1f m", n, before, after)
	flatBefore, flatAfter, nFlat := flatAgainstETOPO(m, raw)
	t.Logf("land pixels where ETOPO5 is flat (%d): %.2f%% -> %.2f%% more than 64 m from ETOPO5", nFlat, 100*flatBefore, 100*flatAfter)
	// Real relief is most of what stands out from a 3x3 median at 2 km, and
	// it stays; the defect is what stands out where the ground is flat.
	if st.OutlierAfter > 0.8*st.OutlierBefore || st.OutlierMidRAfter > 0.8*st.OutlierMidRBefore {
		t.Errorf("outliers %.2f%% -> %.2f%% (mid-range R %.2f%% -> %.2f%%): the repair should remove a good part of them", 100*st.OutlierBefore, 100*st.OutlierAfter, 100*st.OutlierMidRBefore, 100*st.OutlierMidRAfter)
	}
	if flatAfter > flatBefore/2 {
		t.Errorf("on flat ground %.2f%% -> %.2f%% of pixels more than 64 m from ETOPO5: the repair should at least halve them", 100*flatBefore, 100*flatAfter)
	}
	if after > before {
		t.Errorf("RMSE against ETOPO5 %.1f m -> %.1f m: the repair should not take the tiles away from the independent grid", before, after)
	}
	if share := float64(st.ChangedLand) / float64(st.Land); share > 0.10 {
		t.Errorf("%.1f%% of land pixels changed; the defect touches a few per cent", 100*share)
	}
}

// flatAgainstETOPO is the share of land pixels, where ETOPO5 is flat
// (within 30 m at the pixel and 5 km north, south, east and west of it),
// that read more than 64 m from ETOPO5, raw and repaired: where the
// ground is flat neither 2 km against 9 km cells nor the misregistration
// of ETOPO5 explains such a difference, and the defect does.
func flatAgainstETOPO(m *Model, raw []int32) (before, after float64, n int) {
	var nb, na int
	for y := 1; y < mosaicH-1; y++ {
		lat := mosaicLat(float64(y))
		if lat < 25 || lat > 49 {
			continue
		}
		dLat := 5 / 111.2
		dLon := dLat / math.Cos(lat*math.Pi/180)
		for x := 1; x < mosaicW-1; x++ {
			i := y*mosaicW + x
			if raw[i] <= 0 || raw[i] == rawMixed || raw[i] == rawMissing {
				continue
			}
			lon := mosaicLon(float64(x))
			e, ok := m.etopoElevation(lat, lon)
			if !ok || e <= 0 {
				continue
			}
			lo, hi := e, e
			flat := true
			for _, d := range [4][2]float64{{dLat, 0}, {-dLat, 0}, {0, dLon}, {0, -dLon}} {
				v, ok := m.etopoElevation(lat+d[0], lon+d[1])
				if !ok {
					flat = false
					break
				}
				lo, hi = min(lo, v), max(hi, v)
			}
			if !flat || hi-lo > 30 {
				continue
			}
			n++
			if math.Abs(float64(raw[i])-e) > 64 {
				nb++
			}
			if math.Abs(float64(m.srtm[i])-e) > 64 {
				na++
			}
		}
	}
	return float64(nb) / float64(max(n, 1)), float64(na) / float64(max(n, 1)), n
}

// rmseAgainstETOPO compares the raw and the repaired mosaic (bilinear) with
// ETOPO5 at the ETOPO5 grid points of the conterminous box on land.
func rmseAgainstETOPO(t *testing.T, m *Model) (before, after float64, n int) {
	t.Helper()
	fsys := datatest.Real(t)
	raw := rawMosaic(t, fsys)
	var box *etopoBox
	for i := range m.etopo {
		if m.etopo[i].Region == "conus" {
			box = &m.etopo[i]
		}
	}
	if box == nil {
		t.Fatal("no conus block")
	}
	rawAt := func(r, c int) (float64, bool) {
		v := raw[r*mosaicW+c]
		return float64(v), v != rawMixed && v != rawMissing
	}
	var sb, sa float64
	for r := 0; r < box.Rows; r++ {
		lat := box.latOf(r)
		if lat < 25 || lat > 49 {
			continue
		}
		for c := 0; c < box.Cols; c++ {
			lon := box.lonOf(c)
			e, _ := box.at(r, c)
			if e <= 0 || lon < -124.5 || lon > -67 {
				continue
			}
			x, y := mosaicXY(lat, lon)
			vb, ok1 := bilinear(y, x, mosaicH, mosaicW, rawAt)
			va, ok2 := bilinear(y, x, mosaicH, mosaicW, m.srtmAt)
			if !ok1 || !ok2 || va <= 0 {
				continue
			}
			sb += (vb - e) * (vb - e)
			sa += (va - e) * (va - e)
			n++
		}
	}
	return math.Sqrt(sb / float64(n)), math.Sqrt(sa / float64(n)), n
}

func TestSpotChecks(t *testing.T) {
	m := realModel(t)
	for _, tc := range []struct {
		name   string
		p      geo.Point
		lo, hi float64
		source string
	}{
		{"Denver", geo.Point{Lat: 39.7392, Lon: -104.9903}, 1550, 1660, SourceSRTM},
		{"Chicago", geo.Point{Lat: 41.8781, Lon: -87.6298}, 160, 210, SourceSRTM},
		{"New Orleans", geo.Point{Lat: 29.9511, Lon: -90.0715}, -5, 10, SourceSRTM},
		{"Death Valley floor", geo.Point{Lat: 36.25, Lon: -116.82}, -100, 0, SourceSRTM},
		{"Mt. Whitney", geo.Point{Lat: 36.5785, Lon: -118.2923}, 3300, 4420, SourceSRTM},
		{"Pikes Peak", geo.Point{Lat: 38.8409, Lon: -105.0423}, 3300, 4300, SourceSRTM},
		{"Blowing Rock, NC", geo.Point{Lat: 36.1351, Lon: -81.6779}, 900, 1250, SourceSRTM},
		{"Denali massif", geo.Point{Lat: 63.07, Lon: -151.0}, 2000, 6200, SourceETOPO5},
		{"Mauna Kea", geo.Point{Lat: 19.82, Lon: -155.47}, 1000, 4210, SourceETOPO5},
		{"Fairbanks", geo.Point{Lat: 64.84, Lon: -147.72}, 50, 400, SourceETOPO5},
		{"San Juan, PR", geo.Point{Lat: 18.40, Lon: -66.10}, -50, 100, SourceETOPO5},
		{"Adak, AK (across 180°)", geo.Point{Lat: 51.88, Lon: -176.64}, -2000, 1000, SourceETOPO5},
		{"Guam", geo.Point{Lat: 13.45, Lon: 144.78}, -500, 400, SourceETOPO5},
		{"Pago Pago, AS", geo.Point{Lat: -14.28, Lon: -170.70}, -1500, 700, SourceETOPO5},
	} {
		s, ok := m.Elevation(tc.p)
		r, _ := m.Relief(tc.p, 5)
		sl, _ := m.Slope(tc.p, 5)
		lo, _ := m.Lowest(tc.p, 5)
		t.Logf("%-24s %6.0f m (%s, %.2f km cells), within 5 km: relief %5.0f m, slope %4.1f°, lowest %6.0f m", tc.name, s.Metres, s.Source, s.CellKm, r.Metres, sl.Metres, lo.Metres)
		if !ok || s.Metres < tc.lo || s.Metres > tc.hi || s.Source != tc.source {
			t.Errorf("%s: %.0f m from %s, want %v..%v m from %s", tc.name, s.Metres, s.Source, tc.lo, tc.hi, tc.source)
		}
	}
	// Badwater lies at the foot of a 1,600 m wall: 2 km cells put it on the
	// wall, but the basin floor is within 5 km.
	if lo, ok := m.Lowest(geo.Point{Lat: 36.2297, Lon: -116.7669}, 5); !ok || lo.Metres > -50 {
		t.Errorf("lowest within 5 km of Badwater: %.0f m", lo.Metres)
	}
}

// TestInvariantsReal: at points across the covered area, relief and slope
// are never negative, Lowest never exceeds Elevation, and a wider radius
// never lowers relief or slope nor raises Lowest.
func TestInvariantsReal(t *testing.T) {
	m := realModel(t)
	n := 0
	for lat := -15.0; lat <= 72; lat += 0.37 {
		for lon := -180.0; lon < 180; lon += 0.53 {
			p := geo.Point{Lat: lat, Lon: lon}
			e, ok := m.Elevation(p)
			if !ok {
				continue
			}
			n++
			prev := [3]float64{0, 0, math.Inf(1)}
			for _, r := range []float64{0, 2, 5, 10} {
				rel, ok1 := m.Relief(p, r)
				sl, ok2 := m.Slope(p, r)
				lo, ok3 := m.Lowest(p, r)
				if !ok1 || !ok2 || !ok3 || rel.Source != e.Source || lo.Source != e.Source {
					t.Fatalf("%v radius %v: answers %v %v %v", p, r, ok1, ok2, ok3)
				}
				if rel.Metres < prev[0] || sl.Metres < prev[1] || lo.Metres > prev[2] || lo.Metres > e.Metres+1e-9 || sl.Metres > 90 {
					t.Fatalf("%v radius %v: relief %v slope %v lowest %v (elevation %v), before %v", p, r, rel.Metres, sl.Metres, lo.Metres, e.Metres, prev)
				}
				prev = [3]float64{rel.Metres, sl.Metres, lo.Metres}
			}
		}
	}
	if n < 10000 {
		t.Errorf("only %d points answered", n)
	}
}

func rawMosaic(t *testing.T, fsys fs.FS) []int32 {
	t.Helper()
	zb, err := data.ReadAll(fsys, data.Path(SourceSRTM))
	if err != nil {
		t.Fatal(err)
	}
	raw, have, err := readTiles(zb)
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range have {
		if !ok {
			t.Fatalf("tile %d/%d/%d.png is not in the pack", tileZoom, tileX0+i%tilesX, tileY0+i/tilesX)
		}
	}
	return raw
}

// TestConcurrentReal: queries from several goroutines at once answer as
// they do one at a time (run with -race to check the model is read-only).
func TestConcurrentReal(t *testing.T) {
	m := realModel(t)
	if got := m.Rows(); got[SourceSRTM] != 84 || got[SourceETOPO5] != 476280 {
		t.Errorf("Rows() = %v", got)
	}
	pts := []geo.Point{{Lat: 39.74, Lon: -104.99}, {Lat: 61.2, Lon: -149.9}, {Lat: 34.16, Lon: -118.05}, {Lat: 19.7, Lon: -155.1}}
	want := make([][4]Sample, len(pts))
	for i, p := range pts {
		want[i][0], _ = m.Elevation(p)
		want[i][1], _ = m.Relief(p, 5)
		want[i][2], _ = m.Slope(p, 5)
		want[i][3], _ = m.Lowest(p, 5)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for k := 0; k < 200; k++ {
				i := (g + k) % len(pts)
				e, _ := m.Elevation(pts[i])
				r, _ := m.Relief(pts[i], 5)
				s, _ := m.Slope(pts[i], 5)
				l, _ := m.Lowest(pts[i], 5)
				if [4]Sample{e, r, s, l} != want[i] {
					t.Errorf("%v: concurrent answers differ", pts[i])
					return
				}
			}
		})
	}
	wg.Wait()
}
