package wildfire

import (
	"math"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/population"
)

// exposureWorld is one county ("08013") on a plain, 40 km east-west: a
// dense core at its west end against hills (relief 600 m west of -105.25),
// a plains town of the same density 25 km east, and thin farmland between.
func exposureWorld(t *testing.T, withRelief bool) (*Exposure, *population.Index) {
	t.Helper()
	var pts []geo.Point
	var pop []float64
	grid := func(lat, lon float64, n int, step, each float64) {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				pts = append(pts, geo.Point{Lat: lat + float64(i)*step, Lon: lon + float64(j)*step})
				pop = append(pop, each+float64(7*(i*n+j))) // no two alike
			}
		}
	}
	grid(40.00, -105.24, 5, 0.015, 1500) // core at the hills
	grid(40.00, -104.95, 5, 0.015, 1500) // plains town
	for k := 0; k < 6; k++ {             // farms
		pts = append(pts, geo.Point{Lat: 40.05, Lon: -105.15 + 0.03*float64(k)})
		pop = append(pop, 400)
	}
	x := population.New(pts, pop)
	ps := population.BuildProfiles(x, func(p geo.Point) (string, bool) {
		return "08013", p.Lon > -105.4 && p.Lon < -104.8
	})
	var relief ReliefFunc
	if withRelief {
		relief = func(p geo.Point, km float64) (float64, bool) {
			// Hills begin at -105.25: relief reaches sites within
			// km of them.
			dKm := (p.Lon + 105.25) * 111.32 * math.Cos(p.Lat*math.Pi/180)
			if dKm < km {
				return 600, true
			}
			return 20, true
		}
	}
	return NewExposure(ps, relief), x
}

func TestExposureWeighsTheHills(t *testing.T) {
	core := geo.Point{Lat: 40.008, Lon: -105.232}
	plains := geo.Point{Lat: 40.008, Lon: -104.942}
	e, _ := exposureWorld(t, true)
	uc, dc, ok1 := e.Place("08013", core)
	up, dp, ok2 := e.Place("08013", plains)
	if !ok1 || !ok2 {
		t.Fatal("no ranking")
	}
	if math.Abs(dc-dp) > 1e-9 {
		t.Fatalf("the two towns differ in density: %v, %v", dc, dp)
	}
	// More sheltered residents: fewer above the core at the hills.
	if !(uc > up) {
		t.Errorf("core at the hills: %.3f of residents more sheltered; plains town: %.3f; want the core less sheltered", uc, up)
	}
	if _, _, ok := e.Place("06037", core); ok {
		t.Error("a county without block groups has a ranking")
	}
	// Without terrain the two towns of one density tie.
	flat, _ := exposureWorld(t, false)
	uc, _, _ = flat.Place("08013", core)
	up, _, _ = flat.Place("08013", plains)
	if math.Abs(uc-up) > 0.05 {
		t.Errorf("without relief: %.3f and %.3f, want about equal", uc, up)
	}
}

// Every block group measured at its own centre, as the engine measures a
// site, lands in the county's ranking so that each exposure class gets its
// share of the residents: the county totals are kept.
func TestExposureKeepsCountyTotals(t *testing.T) {
	e, x := exposureWorld(t, true)
	frac := [3]float64{0.5, 0.3, 0.2}
	var got [3]float64
	total := 0.0
	tied := map[float64]float64{} // residents at one shelter value
	largest := 0.0
	for i := 0; i < x.Len(); i++ {
		p, pop := x.Centre(i)
		u, _, ok := e.Place("08013", p)
		if !ok {
			t.Fatal("no ranking")
		}
		w := ClassWeights(frac, u, rankWindow)
		for k := range got {
			got[k] += pop * w[k]
		}
		total += pop
		s, _ := e.Shelter(p)
		tied[s] += pop
		largest = max(largest, tied[s])
	}
	for k := range got {
		// Block groups at one shelter value (the grids' symmetric
		// cells) cannot be told apart and move together: the totals
		// hold to within the largest such group.
		if d := math.Abs(got[k]/total - frac[k]); d > largest/total+1e-9 || largest/total > 0.05 {
			t.Errorf("class %d: %.3f of residents, published %.3f", k, got[k]/total, frac[k])
		}
	}
}

func TestShelterOf(t *testing.T) {
	// Density raises shelter, relief lowers it, up to reliefFullM.
	if !(ShelterOf(2000, 1000, 0) > ShelterOf(1000, 1000, 0)) || !(ShelterOf(1000, 1000, 0) > ShelterOf(1000, 500, 0)) {
		t.Error("shelter does not grow with density")
	}
	if d := ShelterOf(1000, 1000, 0) - ShelterOf(1000, 1000, reliefFullM); math.Abs(d-reliefWeight) > 1e-12 {
		t.Errorf("full relief lowers shelter by %v", d)
	}
	if ShelterOf(1000, 1000, 2*reliefFullM) != ShelterOf(1000, 1000, reliefFullM) {
		t.Error("relief above reliefFullM counts more")
	}
}
