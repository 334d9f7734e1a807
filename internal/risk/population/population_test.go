package population

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

func TestDensityCountsResidentsWithinTwoKm(t *testing.T) {
	// Three block groups along a meridian, 1, 1.9 and 2.1 km north of the
	// query point (a degree of latitude is geo.KmPerDegLat km).
	north := func(km float64) geo.Point { return geo.Point{Lat: 40 + km/geo.KmPerDegLat, Lon: -105} }
	x := New([]geo.Point{north(1), north(1.9), north(2.1)}, []float64{100, 200, 400})
	area := math.Pi * DensityRadiusKm * DensityRadiusKm
	tests := []struct {
		name string
		at   geo.Point
		want float64
	}{
		{"two inside, one outside", north(0), 300 / area},
		{"all three within 2 km", north(1.5), 700 / area},
		{"none", geo.Point{Lat: 45, Lon: -105}, 0},
	}
	for _, tt := range tests {
		if got := x.Density(tt.at); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: density %g, want %g", tt.name, got, tt.want)
		}
	}
	if got := x.Within(north(0), 2); got != 300 {
		t.Errorf("Within 2 km: %g, want 300", got)
	}
}

// Across the antimeridian the disc wraps: Aleutian block groups on both
// sides of 180 degrees count.
func TestDensityAcrossTheAntimeridian(t *testing.T) {
	x := New([]geo.Point{{Lat: 52, Lon: 179.99}, {Lat: 52, Lon: -179.99}}, []float64{10, 20})
	if got := x.Within(geo.Point{Lat: 52, Lon: 180 - 1e-9}, 2) * 1; got != 30 {
		t.Errorf("Within: %g, want 30", got)
	}
	if got, want := x.Density(geo.Point{Lat: 52, Lon: -179.999}), 30/(math.Pi*4); math.Abs(got-want) > 1e-9 {
		t.Errorf("Density: %g, want %g", got, want)
	}
}

// DenserShare splits a county's residents at any share to within one block
// group: every block group's centre gets the midpoint of its residents'
// span of the ranking, densest first.
func TestDenserShare(t *testing.T) {
	// Four isolated block groups (over 2 km apart), so each one's density
	// is its own residents: 400 > 300 > 200 > 100 residents.
	pts := []geo.Point{{Lat: 40, Lon: -105}, {Lat: 40.1, Lon: -105}, {Lat: 40.2, Lon: -105}, {Lat: 40.3, Lon: -105}}
	pop := []float64{100, 200, 300, 400}
	x := New(pts, pop)
	ps := BuildProfiles(x, func(geo.Point) (string, bool) { return "08041", true })
	total := 1000.0
	for i, p := range pts {
		var above float64
		for _, q := range pop {
			if q > pop[i] {
				above += q
			}
		}
		want := (above + pop[i]/2) / total
		got, ok := ps.DenserShare("08041", x.Density(p))
		if !ok || math.Abs(got-want) > 1e-12 {
			t.Errorf("block group %d: denser share %v %v, want %v", i, got, ok, want)
		}
	}
	if got, _ := ps.DenserShare("08041", 0); got != 1 {
		t.Errorf("an empty place: denser share %v, want 1 (least dense)", got)
	}
	if got, _ := ps.DenserShare("08041", 1e9); got != 0 {
		t.Errorf("denser than all: %v, want 0", got)
	}
	if _, ok := ps.DenserShare("06037", 10); ok {
		t.Error("a county without block groups has a profile")
	}
	if ps.Residents("08041") != total || len(ps.Counties()) != 1 {
		t.Errorf("residents %v, counties %v", ps.Residents("08041"), ps.Counties())
	}
}

func TestLoadFixtureAndReal(t *testing.T) {
	x, err := Load(datatest.Fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	if x.Rows() != x.Len()+1 { // one fixture block group has no residents
		t.Errorf("rows %d, with residents %d", x.Rows(), x.Len())
	}
	dir := datatest.Real(t)
	x, err = Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	// PROVENANCE.md: 242,335 block groups, 334,735,155 residents, 1,393
	// without residents.
	if x.Rows() != 242335 || x.Total() != 334735155 || x.Rows()-x.Len() != 1393 {
		t.Errorf("rows %d, residents %.0f, empty %d", x.Rows(), x.Total(), x.Rows()-x.Len())
	}
	// Spot values listed there: residents within 1 km and 2 km.
	for _, c := range []struct {
		name     string
		p        geo.Point
		km1, km2 float64
	}{
		{"downtown San Diego", geo.Point{Lat: 32.7157, Lon: -117.1611}, 32123, 54845},
		{"Paradise CA", geo.Point{Lat: 39.7596, Lon: -121.6219}, 350, 1388},
	} {
		if a, b := x.Within(c.p, 1), x.Within(c.p, 2); a != c.km1 || b != c.km2 {
			t.Errorf("%s: %v within 1 km, %v within 2 km; want %v, %v", c.name, a, b, c.km1, c.km2)
		}
	}
}

// BenchmarkLoad reads the 242,335 real block-group centres, as every start
// does, and builds the counties' density profiles (with a county lookup
// that costs nothing, to time this package alone).
func BenchmarkLoad(b *testing.B) {
	dir := datatest.Real(b)
	for b.Loop() {
		x, err := Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		BuildProfiles(x, func(geo.Point) (string, bool) { return "00000", true })
	}
}

// TestDensitiesWithinMatchesDensityWithin: the measure taken together,
// with whole cells added at once, is DensityWithin bit for bit, also on
// points packed at cell edges and across the antimeridian.
func TestDensitiesWithinMatchesDensityWithin(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var pts []geo.Point
	var pop []float64
	for _, c := range []geo.Point{{Lat: 40, Lon: -105}, {Lat: 61.2, Lon: -149.9}, {Lat: 51.8, Lon: 179.97}, {Lat: 52.0, Lon: -179.98}, {Lat: 21.3, Lon: -157.8}} {
		for k := 0; k < 3000; k++ {
			p := geo.Point{Lat: c.Lat + (r.Float64()-0.5)*0.3, Lon: c.Lon + (r.Float64()-0.5)*0.3}
			if k%3 == 0 { // on a cell edge, or a hair off it
				p.Lat = math.Round(p.Lat/0.02)*0.02 + float64(k%5-2)*1e-12
				p.Lon = math.Round(p.Lon/0.02)*0.02 + float64(k%7-3)*1e-12
			}
			p.Lon = geo.NormalizeLon(p.Lon)
			pts = append(pts, p)
			pop = append(pop, float64(1+r.IntN(3000)))
		}
	}
	x := New(pts, pop)
	for _, km := range []float64{2, 5} {
		got := x.DensitiesWithin(km, func(i int) bool { return i%4 != 1 })
		for i, p := range pts {
			want := x.DensityWithin(p, km)
			if i%4 == 1 {
				want = 0
			}
			if math.Float64bits(got[i]) != math.Float64bits(want) {
				t.Fatalf("km %v, point %d %v: %v, want %v", km, i, p, got[i], want)
			}
		}
	}
}
