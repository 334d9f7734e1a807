package geo

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestBoxPad(t *testing.T) {
	dLat := 100 / KmPerDegLat
	eq := lonSpanDeg(dLat, 100) // at the grown box's edge, not the equator
	tests := []struct {
		name string
		b    Box
		km   float64
		want Box
	}{
		{"no padding", Box{10, 11, 20, 21}, 0, Box{10, 11, 20, 21}},
		{"equator", Box{0, 0, 0, 0}, 100, Box{-dLat, dLat, -eq, eq}},
		{"60N: longitude grows at the poleward edge",
			Box{60, 60, 10, 10}, 100,
			Box{60 - dLat, 60 + dLat, 10 - lonSpanDeg(60+dLat, 100), 10 + lonSpanDeg(60+dLat, 100)}},
		{"southern hemisphere uses the southern edge",
			Box{-60, -59, 10, 11}, 100,
			Box{-60 - dLat, -59 + dLat, 10 - lonSpanDeg(60+dLat, 100), 11 + lonSpanDeg(60+dLat, 100)}},
		{"across the antimeridian keeps Lon1 beyond 180",
			Box{0, 0, 179.5, 180.5}, 100, Box{-dLat, dLat, 179.5 - eq, 180.5 + eq}},
		{"reaching a pole spans every longitude", Box{89.5, 89.5, 10, 10}, 100, Box{89.5 - dLat, 90, -180, 180}},
		{"south pole likewise", Box{-89.99, -89.99, -170, -170}, 5, Box{-90, -89.99 + 5/KmPerDegLat, -180, 180}},
		{"near but not at a pole", Box{-89.9, -89.9, -170, -170}, 5,
			Box{-89.9 - 5/KmPerDegLat, -89.9 + 5/KmPerDegLat, -170 - lonSpanDeg(89.9+5/KmPerDegLat, 5), -170 + lonSpanDeg(89.9+5/KmPerDegLat, 5)}},
		{"half way round spans every longitude", Box{0, 0, 0, 0}, 20100, Box{-90, 90, -180, 180}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.b.Pad(tc.km)
			for _, d := range []float64{got.Lat0 - tc.want.Lat0, got.Lat1 - tc.want.Lat1, got.Lon0 - tc.want.Lon0, got.Lon1 - tc.want.Lon1} {
				if math.Abs(d) > 1e-9 {
					t.Fatalf("%+v.Pad(%g) = %+v, want %+v", tc.b, tc.km, got, tc.want)
				}
			}
		})
	}
}

func TestSegmentBox(t *testing.T) {
	tests := []struct {
		name string
		s    Segment
		want Box
	}{
		{"ordinary", Segment{Point{1, 5}, Point{-1, 3}}, Box{-1, 1, 3, 5}},
		{"across the antimeridian", Segment{Point{51, 179.5}, Point{52, -179.5}}, Box{51, 52, 179.5, 180.5}},
		{"unnormalised ends", Segment{Point{0, 190}, Point{0, 200}}, Box{0, 0, -170, -160}},
	}
	for _, tc := range tests {
		if got := SegmentBox(tc.s); got != tc.want {
			t.Errorf("%s: SegmentBox(%+v) = %+v, want %+v", tc.name, tc.s, got, tc.want)
		}
	}
}

// TestCellIndexAt checks the single-cell lookup: padded boxes, boxes across
// the antimeridian (stored either side of it), items added with several
// boxes, and the ascending, once-each order of candidates.
func TestCellIndexAt(t *testing.T) {
	b := NewCellIndexBuilder(0.25)
	b.Add(0, Box{40, 40.1, -100, -99.9})          // Kansas
	b.Add(1, Box{40, 40.1, -100, -99.9}.Pad(50))  // Kansas, padded
	b.Add(2, Box{51, 52, 179.5, 180.5})           // Aleutians, east of 180
	b.Add(3, Box{51, 52, -180.5, -179.5}.Pad(20)) // the same, west of -180, padded
	b.Add(4, Box{10, 20, -80, -70})               // two boxes for one item,
	b.Add(4, Box{15, 25, -75, -65})               // overlapping
	b.Add(5, Box{-89.99, -89.99, 0, 0}.Pad(5))    // at the south pole
	b.Add(6, Box{20, 20, 170, 170}.Pad(20000))    // everywhere
	b.Add(7, Box{40.05, 40.05, -99.95, -99.95})   // a point
	b.Add(8, Box{-10, -10, -180, -180})           // on the antimeridian
	ix := b.Build()
	tests := []struct {
		name string
		p    Point
		want []int32
	}{
		{"inside the box", Point{40.05, -99.95}, []int32{0, 1, 6, 7}},
		{"inside only the padding", Point{40.3, -99.5}, []int32{1, 6}},
		{"beyond the padding", Point{42, -99.95}, []int32{6}},
		{"Aleutians east of 180", Point{51.5, 179.7}, []int32{2, 3, 6}},
		{"Aleutians west of 180", Point{51.5, -179.7}, []int32{2, 3, 6}},
		{"unnormalised longitude", Point{51.5, 180.3}, []int32{2, 3, 6}},
		{"padding across the antimeridian", Point{51.5, -179.2}, []int32{3, 6}},
		{"overlap of one item's boxes: once", Point{17, -72}, []int32{4, 6}},
		{"south pole, any longitude", Point{-89.99, 123}, []int32{5, 6}},
		{"antimeridian point, either side", Point{-10, 180}, []int32{6, 8}},
		{"open sea", Point{-40, 30}, []int32{6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ix.At(tc.p); !slices.Equal(got, tc.want) {
				t.Errorf("At(%v) = %v, want %v", tc.p, got, tc.want)
			}
			if got := ix.Cell(ix.Row(tc.p.Lat), ix.Col(tc.p.Lon)); !slices.Equal(got, tc.want) {
				t.Errorf("Cell(Row, Col) of %v = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
	if got := ix.Cell(-1, 0); got != nil {
		t.Errorf("Cell(-1, 0) = %v, want nil", got)
	}
	if c := ix.Col(-180); c != 0 || ix.Col(180) != 0 || ix.Col(179.99) != ix.Cols()-1 {
		t.Errorf("columns do not wrap: Col(-180)=%d Col(180)=%d Col(179.99)=%d", c, ix.Col(180), ix.Col(179.99))
	}
}

// TestCellIndexAtCoversPadding checks on random boxes that every item within
// the padding of a point is a candidate of its cell, candidates ascend, and
// none repeats.
func TestCellIndexAtCoversPadding(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	boxes := make([]Box, 300)
	for i := range boxes {
		lat, lon := r.Float64()*170-85, r.Float64()*360-180
		if i%3 == 0 {
			lon = 179 + r.Float64()*2
		}
		boxes[i] = Box{lat, math.Min(lat+r.Float64(), 90), lon, lon + r.Float64()*2}
	}
	for _, cell := range []float64{0.1, 0.5, 2} {
		for _, km := range []float64{0, 40, 100} {
			b := NewCellIndexBuilder(cell)
			for i, bx := range boxes {
				b.Add(int32(i), bx.Pad(km))
			}
			ix := b.Build()
			for q := 0; q < 2000; q++ {
				p := Point{Lat: r.Float64()*180 - 90, Lon: r.Float64()*360 - 180}
				if q%2 == 0 {
					p.Lon = NormalizeLon(178 + r.Float64()*4)
				}
				got := ix.At(p)
				for k := 1; k < len(got); k++ {
					if got[k] <= got[k-1] {
						t.Fatalf("cell %g km %g: candidates of %v not ascending and unique: %v", cell, km, p, got)
					}
				}
				for i, bx := range boxes {
					// Distance from p to the box in its own local projection.
					dy := math.Max(0, math.Max(bx.Lat0-p.Lat, p.Lat-bx.Lat1)) * KmPerDegLat
					dLon := math.Inf(1)
					for _, lon := range []float64{p.Lon - 360, p.Lon, p.Lon + 360} {
						dLon = math.Min(dLon, math.Max(0, math.Max(bx.Lon0-lon, lon-bx.Lon1)))
					}
					dx := dLon * KmPerDegLat * math.Cos(p.Lat*math.Pi/180)
					if math.Hypot(dx, dy) <= km && !slices.Contains(got, int32(i)) {
						t.Fatalf("cell %g km %g: box %d %+v within reach of %v but not a candidate", cell, km, i, bx, p)
					}
				}
			}
		}
	}
}

// TestCellIndexNearPoles checks radius visits: every point within the
// radius is visited, near the poles too, where a visit takes every
// longitude, and the visiting order is the same on every call.
func TestCellIndexNearPoles(t *testing.T) {
	pts := []Point{{89.9, 0}, {89.9, 90}, {89.9, -179.9}, {90, 45}, {-89.95, 10}, {-89.95, -170}, {85, 179.9}, {85, -179.9}, {0, 0}}
	b := NewCellIndexBuilder(0.5)
	for i, p := range pts {
		b.Add(int32(i), PointBox(p))
	}
	ix := b.Build()
	tests := []struct {
		name string
		p    Point
		km   float64
		want []int32 // the points within km
	}{
		{"north pole", Point{90, 0}, 20, []int32{0, 1, 2, 3}},
		{"just off the north pole, far side", Point{89.95, 180}, 20, []int32{0, 1, 2, 3}},
		{"south pole", Point{-90, 0}, 10, []int32{4, 5}},
		{"85N across the antimeridian", Point{85, 180}, 5, []int32{6, 7}},
		{"equator finds only its own", Point{0, 0.1}, 20, []int32{8}},
		{"nothing near", Point{45, 45}, 100, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var seen, again []int32
			ix.Near(tc.p, tc.km, func(i int32) { seen = append(seen, i) })
			ix.Near(tc.p, tc.km, func(i int32) { again = append(again, i) })
			if !slices.Equal(seen, again) {
				t.Fatalf("visits differ between calls: %v then %v", seen, again)
			}
			var got []int32
			for _, i := range seen {
				if DistanceKm(tc.p, pts[i]) <= tc.km && !slices.Contains(got, i) {
					got = append(got, i)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Near(%v, %g) found %v within range (visited %v), want %v", tc.p, tc.km, got, seen, tc.want)
			}
		})
	}
}

func TestCellIndexEmptyAndMisuse(t *testing.T) {
	ix := NewCellIndexBuilder(1).Build()
	if got := ix.At(Point{10, 10}); got != nil {
		t.Errorf("empty index: At = %v", got)
	}
	if got := ix.Cell(100, 10); got != nil {
		t.Errorf("empty index: Cell = %v", got)
	}
	ix.Near(Point{10, 10}, 1000, func(i int32) { t.Errorf("empty index visited %d", i) })
	if ix.Entries() != 0 {
		t.Errorf("empty index has %d entries", ix.Entries())
	}
	panics := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	panics("cell 0.7", func() { NewCellIndexBuilder(0.7) })
	panics("cell 0", func() { NewCellIndexBuilder(0) })
	panics("items out of order", func() {
		b := NewCellIndexBuilder(1)
		b.Add(2, Box{})
		b.Add(1, Box{})
	})
}

// TestNearCellsVisitsWhatNearVisits: NearCells hands over, cell by cell,
// exactly the items Near calls back with, in the same order, also where
// the last block column is partial and across the antimeridian.
func TestNearCellsVisitsWhatNearVisits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, cell := range []float64{0.02, 0.25, 7.2} {
		b := NewCellIndexBuilder(cell)
		var pts []Point
		for i := 0; i < 4000; i++ {
			p := Point{Lat: -60 + 120*r.Float64(), Lon: -180 + 360*r.Float64()}
			if i%2 == 0 {
				p = Point{Lat: 52 + r.Float64(), Lon: NormalizeLon(179.5 + r.Float64())}
			}
			pts = append(pts, p)
			b.Add(int32(i), PointBox(p))
		}
		ix := b.Build()
		order := ix.ItemOrder()
		for q := 0; q < 300; q++ {
			p, km := pts[r.IntN(len(pts))], 1+r.Float64()*400
			var want, got []int32
			ix.Near(p, km, func(it int32) { want = append(want, it) })
			ix.NearCells(p, km, func(c Box, lo, hi int) {
				if math.Abs(c.Lat1-c.Lat0-cell) > 1e-9 || math.Abs(c.Lon1-c.Lon0-cell) > 1e-9 {
					t.Fatalf("cell %+v", c)
				}
				for _, it := range order[lo:hi] {
					if q := pts[it]; q.Lat < c.Lat0-1e-9 || q.Lat > c.Lat1+1e-9 || math.Abs(math.Mod(q.Lon-c.Lon0+720, 360)) > cell+1e-9 {
						t.Fatalf("item %d at %v outside its cell %+v", it, q, c)
					}
				}
				got = append(got, order[lo:hi]...)
			})
			if !slices.Equal(got, want) {
				t.Fatalf("cell %v, %v within %v km: NearCells %d items, Near %d", cell, p, km, len(got), len(want))
			}
		}
	}
}

// TestCellIndexWideBlocks: a block holding more entries than 16-bit
// offsets reach keeps 32-bit positions, and both layouts answer alike.
func TestCellIndexWideBlocks(t *testing.T) {
	for _, n := range []int{1000, 100_000} {
		b := NewCellIndexBuilder(0.25)
		for i := range n {
			// Most items in one cell, the rest spread over its block and
			// the next one east.
			box := PointBox(Point{40.1, -100.1})
			if i%3 == 0 {
				box = PointBox(Point{40 + float64(i%4)*0.25 + 0.1, -100 + float64(i%8)*0.25 + 0.1})
			}
			b.Add(int32(i), box)
		}
		ix := b.Build()
		if wide := ix.off == nil; wide != (n > math.MaxUint16) {
			t.Errorf("%d items: wide layout %v", n, wide)
		}
		total := 0
		var near []int32
		ix.Near(Point{40.5, -99.5}, 200, func(i int32) { near = append(near, i) })
		var cells []int32
		ix.NearCells(Point{40.5, -99.5}, 200, func(_ Box, lo, hi int) {
			cells = append(cells, ix.ItemOrder()[lo:hi]...)
		})
		for r := ix.Row(39); r <= ix.Row(42); r++ {
			for c := ix.Col(-101); c <= ix.Col(-97); c++ {
				got := ix.Cell(r, c)
				if !slices.IsSorted(got) {
					t.Errorf("%d items: cell (%d, %d) not in ascending order", n, r, c)
				}
				total += len(got)
			}
		}
		if total != n || len(near) != n || !slices.Equal(near, cells) {
			t.Errorf("%d items: cells hold %d, Near visits %d, NearCells %d", n, total, len(near), len(cells))
		}
		if got := ix.At(Point{40.1, -100.1}); len(got) != n-(n+2)/3 {
			t.Errorf("%d items: the crowded cell holds %d, want %d", n, len(got), n-(n+2)/3)
		}
	}
}
