package geo

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDistanceKm(t *testing.T) {
	tests := []struct {
		name string
		a, b Point
		want float64 // km
		tol  float64 // km
	}{
		{"same point", Point{40, -100}, Point{40, -100}, 0, 1e-9},
		{"one degree of latitude", Point{0, 0}, Point{1, 0}, 111.195, 0.01},
		{"one degree of latitude at 60N", Point{60, 10}, Point{61, 10}, 111.195, 0.01},
		{"one degree of longitude at the equator", Point{0, 10}, Point{0, 11}, 111.195, 0.01},
		{"one degree of longitude at 60N is half as long", Point{60, 10}, Point{60, 11}, 55.6, 0.05},
		{"San Francisco to Los Angeles", Point{37.7749, -122.4194}, Point{34.0522, -118.2437}, 559, 2},
		{"across the antimeridian at the equator", Point{0, 179.9}, Point{0, -179.9}, 22.24, 0.01},
		{"across the antimeridian, unnormalised longitude", Point{0, 179.9}, Point{0, 180.1}, 22.24, 0.01},
		{"across the antimeridian in the Aleutians", Point{52, 179.5}, Point{52, -179.5}, 68.5, 0.5},
		{"pole to pole", Point{90, 0}, Point{-90, 0}, math.Pi * EarthRadiusKm, 1e-6},
		{"antipodes on the equator", Point{0, 0}, Point{0, 180}, math.Pi * EarthRadiusKm, 1e-6},
		{"meridians meet at the pole", Point{90, 0}, Point{90, 137}, 0, 1e-6},
		{"over the pole", Point{89, 0}, Point{89, 180}, 2 * KmPerDegLat, 1e-6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DistanceKm(tc.a, tc.b)
			if math.Abs(got-tc.want) > tc.tol {
				t.Errorf("DistanceKm(%v, %v) = %.4f km, want %.4f +- %g", tc.a, tc.b, got, tc.want, tc.tol)
			}
			if back := DistanceKm(tc.b, tc.a); math.Abs(back-got) > 1e-9 {
				t.Errorf("not symmetric: %.12f one way, %.12f the other", got, back)
			}
		})
	}
}

func TestDistanceKmTriangleInequality(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 5000; i++ {
		a, b, c := randGlobe(r), randGlobe(r), randGlobe(r)
		ab, bc, ac := DistanceKm(a, b), DistanceKm(b, c), DistanceKm(a, c)
		if ac > ab+bc+1e-6 {
			t.Fatalf("d(%v,%v)=%g > d(a,b)+d(b,c)=%g", a, c, ac, ab+bc)
		}
		if ab < 0 || ab > math.Pi*EarthRadiusKm+1e-9 || math.IsNaN(ab) {
			t.Fatalf("d(%v,%v)=%g outside [0, half circumference]", a, b, ab)
		}
	}
}

func TestNormalizeLon(t *testing.T) {
	tests := []struct{ in, want float64 }{
		{0, 0},
		{-122.5, -122.5},
		{179.999, 179.999},
		{180, -180},
		{-180, -180},
		{190, -170},
		{-190, 170},
		{359.5, -0.5},
		{360, 0},
		{540, -180},
		{-540, -180},
		{720.25, 0.25},
		{-719.75, 0.25},
	}
	for _, tc := range tests {
		got := NormalizeLon(tc.in)
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("NormalizeLon(%g) = %g, want %g", tc.in, got, tc.want)
		}
		if got < -180 || got >= 180 {
			t.Errorf("NormalizeLon(%g) = %g, outside [-180, 180)", tc.in, got)
		}
	}
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 10000; i++ {
		lon := (r.Float64()*2 - 1) * 2000
		got := NormalizeLon(lon)
		if got < -180 || got >= 180 {
			t.Fatalf("NormalizeLon(%g) = %g, outside [-180, 180)", lon, got)
		}
		// Same meridian: the difference is a whole number of turns.
		turns := (lon - got) / 360
		if math.Abs(turns-math.Round(turns)) > 1e-9 {
			t.Fatalf("NormalizeLon(%g) = %g is not the same meridian", lon, got)
		}
	}
}

// randGlobe is a point anywhere, longitude in [-180, 180).
func randGlobe(r *rand.Rand) Point {
	return Point{Lat: r.Float64()*180 - 90, Lon: r.Float64()*360 - 180}
}

// testPoints is a deterministic cloud that stresses the grid's edge cases:
// the whole globe, a band either side of the antimeridian, both polar caps,
// the exact poles and the exact antimeridian, and a dense patch (the US).
func testPoints(r *rand.Rand, n int) []Point {
	pts := make([]Point, 0, n)
	for len(pts) < n {
		var p Point
		switch k := len(pts) % 6; k {
		case 0:
			p = randGlobe(r)
		case 1: // within 2 degrees of the antimeridian, either side
			p = Point{Lat: r.Float64()*160 - 80, Lon: NormalizeLon(178 + r.Float64()*4)}
		case 2: // polar caps
			lat := 80 + r.Float64()*10
			if r.IntN(2) == 0 {
				lat = -lat
			}
			p = Point{Lat: lat, Lon: r.Float64()*360 - 180}
		case 3: // dense US patch
			p = Point{Lat: 25 + r.Float64()*24, Lon: -125 + r.Float64()*58}
		case 4: // Aleutians, straddling 180
			p = Point{Lat: 50 + r.Float64()*5, Lon: NormalizeLon(170 + r.Float64()*20)}
		default: // exact special values
			specials := []Point{{90, 0}, {-90, 45}, {0, -180}, {45, -180}, {89.999, 179.999}, {-89.5, -179.999}, {0, 0}}
			p = specials[r.IntN(len(specials))]
		}
		pts = append(pts, p)
	}
	return pts
}

// testQueries places query points where the edge cases are.
func testQueries(r *rand.Rand, n int) []Point {
	q := testPoints(r, n)
	// Nudge some queries to just either side of the antimeridian and right
	// next to a pole, where the search window wraps or covers every column.
	extra := []Point{{0, 179.99}, {0, -179.99}, {51.9, 179.95}, {51.9, -179.95}, {89.9, 10}, {-89.9, -170}, {88.8, 0.15}, {90, 0}, {-90, 0}}
	return append(q, extra...)
}

func TestPointIndexAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 2024))
	pts := testPoints(r, 3000)
	queries := testQueries(r, 150)
	radii := []float64{1, 10, 50, 120, 500}
	for _, cell := range []float64{0.25, 1, 5} {
		ix := NewPointIndex(pts, cell)
		if ix.Len() != len(pts) {
			t.Fatalf("Len = %d, want %d", ix.Len(), len(pts))
		}
		for _, q := range queries {
			for _, km := range radii {
				var want []int
				bestI, bestD := -1, math.Inf(1)
				for i, p := range pts {
					d := DistanceKm(q, p)
					if d <= km {
						want = append(want, i)
						if d < bestD {
							bestI, bestD = i, d
						}
					}
				}
				var got []int
				ix.Within(q, km, func(i int, d float64) {
					got = append(got, i)
					if d != DistanceKm(q, pts[i]) {
						t.Errorf("cell %g, %v within %g: point %d reported at %g km, true %g", cell, q, km, i, d, DistanceKm(q, pts[i]))
					}
				})
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("cell %g, %v within %g km: index found %d points %v, brute force %d %v",
						cell, q, km, len(got), firstFew(got), len(want), firstFew(want))
				}
				gi, gd := ix.Nearest(q, km)
				if gi != bestI || (gi >= 0 && gd != bestD) {
					t.Fatalf("cell %g, Nearest(%v, %g) = %d at %g, brute force %d at %g", cell, q, km, gi, gd, bestI, bestD)
				}
				if gi < 0 && !math.IsInf(gd, 1) {
					t.Errorf("Nearest with nothing in range returned distance %g, want +Inf", gd)
				}
			}
		}
	}
}

func firstFew(s []int) []int {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

func TestPointIndexAntimeridianAndPoles(t *testing.T) {
	pts := []Point{
		{0, 179.95},  // 0: just west of the antimeridian
		{0, -179.95}, // 1: just east of it, 11 km from point 0
		{89.95, 0},   // 2: 5.6 km from the north pole
		{89.95, 180}, // 3: the other side of the pole, 11 km from point 2
		{-89.99, 90}, // 4: near the south pole
		{40, 540},    // 5: an unnormalised longitude (= 180)
	}
	ix := NewPointIndex(pts, 0.5)
	tests := []struct {
		q    Point
		km   float64
		want []int
	}{
		{Point{0, 180}, 6, []int{0, 1}},
		{Point{0, -180}, 6, []int{0, 1}},
		{Point{0, 179.95}, 12, []int{0, 1}},
		{Point{0, 179.95}, 10, []int{0}},
		{Point{90, 0}, 6, []int{2, 3}},
		{Point{89.95, 0}, 12, []int{2, 3}},
		{Point{-90, -45}, 2, []int{4}},
		{Point{40, -180}, 1, []int{5}},
		{Point{40, 179.999}, 1, []int{5}},
	}
	for _, tc := range tests {
		var got []int
		ix.Within(tc.q, tc.km, func(i int, _ float64) { got = append(got, i) })
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Within(%v, %g) = %v, want %v", tc.q, tc.km, got, tc.want)
		}
	}
}

func TestPointIndexEmpty(t *testing.T) {
	ix := NewPointIndex(nil, 1)
	if i, d := ix.Nearest(Point{40, -100}, 500); i != -1 || !math.IsInf(d, 1) {
		t.Errorf("Nearest on an empty index = %d, %g; want -1, +Inf", i, d)
	}
	ix.Within(Point{40, -100}, 500, func(int, float64) { t.Error("Within called fn on an empty index") })
}

// testSegments makes short segments (up to about 0.6 degree) across the
// globe between 80S and 80N, many crossing the antimeridian. Beyond 80
// degrees PointSegmentKm's local projection is not meant to hold (the
// engine works in the US, up to 72N), so polar segments are left out of the
// brute-force comparison.
func testSegments(r *rand.Rand, n int) []Segment {
	segs := make([]Segment, 0, n)
	for len(segs) < n {
		var a Point
		switch len(segs) % 4 {
		case 0:
			a = Point{Lat: r.Float64()*160 - 80, Lon: r.Float64()*360 - 180}
		case 1: // straddling the antimeridian
			a = Point{Lat: r.Float64()*140 - 70, Lon: NormalizeLon(179.7 + r.Float64()*0.3)}
		case 2:
			a = Point{Lat: 25 + r.Float64()*24, Lon: -125 + r.Float64()*58}
		default:
			a = Point{Lat: 50 + r.Float64()*5, Lon: NormalizeLon(175 + r.Float64()*10)}
		}
		b := Point{
			Lat: math.Max(-80, math.Min(80, a.Lat+(r.Float64()-0.5)*1.2)),
			Lon: NormalizeLon(a.Lon + (r.Float64()-0.3)*1.2),
		}
		segs = append(segs, Segment{a, b})
	}
	return segs
}

// wrapsForQuery reports whether s runs more than half way round the globe
// as seen from q, where PointSegmentKm's per-endpoint longitude difference
// is not meaningful. The grid never offers such a segment for queries within
// 80 degrees of the equator and radii of a few hundred km.
func wrapsForQuery(q Point, s Segment) bool {
	return math.Abs(NormalizeLon(s.A.Lon-q.Lon)-NormalizeLon(s.B.Lon-q.Lon)) > 180
}

func TestSegmentIndexAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(99, 100))
	segs := testSegments(r, 3000)
	tags := make([]int32, len(segs))
	for i := range tags {
		tags[i] = int32(1000 + 7*i)
	}
	var queries []Point
	for i := 0; i < 200; i++ {
		switch i % 3 {
		case 0:
			queries = append(queries, Point{Lat: r.Float64()*156 - 78, Lon: r.Float64()*360 - 180})
		case 1:
			queries = append(queries, Point{Lat: r.Float64()*140 - 70, Lon: NormalizeLon(179 + r.Float64()*2)})
		default:
			queries = append(queries, Point{Lat: 50 + r.Float64()*5, Lon: NormalizeLon(175 + r.Float64()*10)})
		}
	}
	queries = append(queries, Point{51.8, 180}, Point{51.8, -180}, Point{0, 179.999}, Point{0, -179.999})
	for _, cell := range []float64{0.1, 0.5, 2} {
		withTags := NewSegmentIndex(segs, tags, cell)
		noTags := NewSegmentIndex(segs, nil, cell)
		if withTags.Len() != len(segs) {
			t.Fatalf("Len = %d, want %d", withTags.Len(), len(segs))
		}
		for _, q := range queries {
			for _, maxKm := range []float64{1, 5, 25, 100, 500} {
				bestI, bestD := -1, math.Inf(1)
				for i, s := range segs {
					if wrapsForQuery(q, s) {
						continue
					}
					if d := PointSegmentKm(q, s); d <= maxKm && d < bestD {
						bestI, bestD = i, d
					}
				}
				d, tag, ok := withTags.Nearest(q, maxKm)
				if ok != (bestI >= 0) {
					t.Fatalf("cell %g, Nearest(%v, %g): ok=%v (d=%g tag=%d), brute force found %d at %g",
						cell, q, maxKm, ok, d, tag, bestI, bestD)
				}
				if !ok {
					if d != 0 || tag != 0 {
						t.Errorf("ok=false but d=%g tag=%d; want zeros", d, tag)
					}
					continue
				}
				if d != bestD || tag != int(tags[bestI]) {
					t.Fatalf("cell %g, Nearest(%v, %g) = %g km tag %d, brute force %g km tag %d (segment %d %v)",
						cell, q, maxKm, d, tag, bestD, tags[bestI], bestI, segs[bestI])
				}
				if d > maxKm {
					t.Errorf("Nearest returned %g km beyond maxKm %g", d, maxKm)
				}
				d2, idx, ok2 := noTags.Nearest(q, maxKm)
				if !ok2 || d2 != d || idx != bestI {
					t.Fatalf("without tags: Nearest(%v, %g) = %g, %d, %v; want %g, %d, true", q, maxKm, d2, idx, ok2, bestD, bestI)
				}
			}
		}
	}
}

func TestSegmentIndexAntimeridian(t *testing.T) {
	segs := []Segment{
		{Point{51.5, 179.8}, Point{51.5, -179.8}}, // crosses 180 along a parallel
		{Point{10, -179.9}, Point{10.5, 179.9}},   // crosses it the other way
		{Point{40, -100}, Point{41, -100}},        // far away in the US
	}
	ix := NewSegmentIndex(segs, []int32{7, 8, 9}, 0.5)
	tests := []struct {
		q      Point
		maxKm  float64
		wantKm float64
		tag    int
		ok     bool
	}{
		{Point{51.5, 180}, 1, 0, 7, true},
		{Point{51.5, -180}, 1, 0, 7, true},
		{Point{51.6, 179.95}, 20, 0.1 * KmPerDegLat, 7, true},
		{Point{51.6, -179.95}, 20, 0.1 * KmPerDegLat, 7, true},
		{Point{51.5, 179.0}, 60, 0.8 * KmPerDegLat * math.Cos(51.5*math.Pi/180), 7, true},
		{Point{51.5, 179.0}, 40, 0, 0, false},                          // the segment is 55 km away
		{Point{10.25, 180}, 1, 0, 8, true},                             // midpoint of segment 1
		{Point{40.5, -100.1}, 20, 0.1 * KmPerDegLat * 0.7604, 9, true}, // cos(40.5)
		{Point{0, 0}, 500, 0, 0, false},
	}
	for _, tc := range tests {
		d, tag, ok := ix.Nearest(tc.q, tc.maxKm)
		if ok != tc.ok || tag != tc.tag || math.Abs(d-tc.wantKm) > 0.05 {
			t.Errorf("Nearest(%v, %g) = %.3f km tag %d ok %v; want %.3f km tag %d ok %v",
				tc.q, tc.maxKm, d, tag, ok, tc.wantKm, tc.tag, tc.ok)
		}
	}
}

func TestPointSegmentKm(t *testing.T) {
	tests := []struct {
		name string
		p    Point
		s    Segment
		want float64
	}{
		{"on the segment", Point{40, -100}, Segment{Point{39, -100}, Point{41, -100}}, 0},
		{"beside the middle", Point{0, 1}, Segment{Point{-1, 0}, Point{1, 0}}, KmPerDegLat},
		{"beyond an end", Point{3, 0}, Segment{Point{-1, 0}, Point{1, 0}}, 2 * KmPerDegLat},
		{"degenerate segment", Point{1, 0}, Segment{Point{0, 0}, Point{0, 0}}, KmPerDegLat},
		{"across the antimeridian", Point{0, 180}, Segment{Point{-1, 179.9}, Point{1, 179.9}}, 0.1 * KmPerDegLat},
		{"segment crossing the antimeridian", Point{0.5, -179.5}, Segment{Point{0, 179.5}, Point{0, -179}}, 0.5 * KmPerDegLat},
	}
	for _, tc := range tests {
		got := PointSegmentKm(tc.p, tc.s)
		if math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("%s: PointSegmentKm = %.6f, want %.6f", tc.name, got, tc.want)
		}
		// The reversed segment is the same line.
		rev := PointSegmentKm(tc.p, Segment{tc.s.B, tc.s.A})
		if math.Abs(rev-got) > 1e-9 {
			t.Errorf("%s: reversed segment gives %g, want %g", tc.name, rev, got)
		}
	}
	// Short segments: within 1% of the great-circle distance to the nearest
	// of many points sampled along the segment.
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 2000; i++ {
		p := Point{Lat: r.Float64()*140 - 70, Lon: r.Float64()*360 - 180}
		a := Point{p.Lat + (r.Float64()-0.5)*2, NormalizeLon(p.Lon + (r.Float64()-0.5)*2)}
		b := Point{a.Lat + (r.Float64()-0.5)*0.5, NormalizeLon(a.Lon + (r.Float64()-0.5)*0.5)}
		got := PointSegmentKm(p, Segment{a, b})
		dl := NormalizeLon(b.Lon - a.Lon)
		best := math.Inf(1)
		for k := 0; k <= 400; k++ {
			f := float64(k) / 400
			best = math.Min(best, DistanceKm(p, Point{a.Lat + f*(b.Lat-a.Lat), a.Lon + f*dl}))
		}
		if math.Abs(got-best) > 0.01*best+0.5 {
			t.Fatalf("PointSegmentKm(%v, %v-%v) = %g, sampled great-circle minimum %g", p, a, b, got, best)
		}
	}
}

func BenchmarkPointIndexWithin(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	pts := testPoints(r, 50000)
	ix := NewPointIndex(pts, 0.5)
	qs := testQueries(r, 1000)
	n := 0
	i := 0
	for b.Loop() {
		ix.Within(qs[i%len(qs)], 50, func(int, float64) { n++ })
		i++
	}
	_ = n
}

// The tangent plane agrees with the great circle over the short distances
// it is used for, and wraps across the antimeridian.
func TestTangentKm2(t *testing.T) {
	tests := []struct {
		name string
		p, q Point
	}{
		{"2 km north", Point{Lat: 38.8, Lon: -104.8}, Point{Lat: 38.8 + 2/KmPerDegLat, Lon: -104.8}},
		{"40 km east at 61 N", Point{Lat: 61.2, Lon: -149.9}, Point{Lat: 61.2, Lon: -149.9 + 40/(KmPerDegLat*0.4818)}},
		{"60 km diagonal", Point{Lat: 33.4, Lon: -112.1}, Point{Lat: 33.7, Lon: -111.75}},
		{"across 180 degrees", Point{Lat: 52, Lon: 179.99}, Point{Lat: 52.01, Lon: -179.99}},
	}
	for _, tt := range tests {
		got := math.Sqrt(TangentAt(tt.p).Km2(tt.q))
		want := DistanceKm(tt.p, tt.q)
		if math.Abs(got-want) > 0.001*want+1e-9 {
			t.Errorf("%s: tangent %.4f km, great circle %.4f km", tt.name, got, want)
		}
	}
}
