package wildfire

import (
	"math"
	"os"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
	"github.com/locrisk/locrisk/internal/risk/population"
	"github.com/locrisk/locrisk/internal/risk/terrain"
)

func TestClassAt(t *testing.T) {
	frac := [3]float64{0.3, 0.4, 0.3} // not, indirectly, directly exposed
	tests := []struct {
		denser float64
		want   int
	}{
		{0, classNot}, {0.29, classNot}, {0.3, classIndirect}, {0.69, classIndirect}, {0.7, classDirect}, {1, classDirect},
	}
	for _, tt := range tests {
		if got := ClassAt(frac, tt.denser); got != tt.want {
			t.Errorf("denser %v: class %d, want %d", tt.denser, got, tt.want)
		}
	}
	// A county whose homes are all exposed has no "not exposed" class.
	if got := ClassAt([3]float64{0, 0.5, 0.5}, 0); got != classIndirect {
		t.Errorf("densest resident of an all-exposed county: class %d", got)
	}
}

// TestClassWeights checks the rank window: weights sum to 1, a rank deep
// inside a class gives that class alone, the window folds back at either
// end, and over a county's residents (ranks spread evenly over 0..1) each
// class's average weight is its share of the county's homes, so county
// totals are kept exactly.
func TestClassWeights(t *testing.T) {
	frac := [3]float64{0.3, 0.4, 0.3}
	tests := []struct {
		u    float64
		want [3]float64
	}{
		{0.1, [3]float64{1, 0, 0}},
		{0.5, [3]float64{0, 1, 0}},
		{0.3, [3]float64{0.5, 0.5, 0}},
		{0.25, [3]float64{0.75, 0.25, 0}},
		// [0.95, 1.15] folds to [0.95, 1] twice and [0.85, 0.95]: all
		// directly exposed.
		{1, [3]float64{0, 0, 1}},
		// [-0.1, 0.1] folds back onto [0, 0.1].
		{0, [3]float64{1, 0, 0}},
	}
	for _, tt := range tests {
		got := ClassWeights(frac, tt.u, 0.1)
		for k := range got {
			if math.Abs(got[k]-tt.want[k]) > 1e-12 {
				t.Errorf("u %v: weights %v, want %v", tt.u, got, tt.want)
				break
			}
		}
	}
	for _, f := range [][3]float64{{0.3, 0.4, 0.3}, {0.958, 0.03, 0.012}, {0, 0.5, 0.5}, {0.105, 0.506, 0.389}, {1, 0, 0}} {
		const n = 20000
		var mean [3]float64
		for i := 0; i < n; i++ {
			u := (float64(i) + 0.5) / n
			w := ClassWeights(f, u, rankWindow)
			if s := w[0] + w[1] + w[2]; math.Abs(s-1) > 1e-9 {
				t.Fatalf("split %v, u %v: weights %v sum to %v", f, u, w, s)
			}
			for k := range mean {
				mean[k] += w[k] / n
			}
		}
		for k := range mean {
			if math.Abs(mean[k]-f[k]) > 1e-6 {
				t.Errorf("split %v: residents' mean weights %v, want the split", f, mean)
				break
			}
		}
	}
}

// fixedAllocator puts every site at one shelter rank.
type fixedAllocator float64

func (f fixedAllocator) Place(string, geo.Point) (float64, float64, bool) {
	return float64(f), 0, f >= 0
}

// On the fixture, Los Angeles County's homes split 75/15/10 (not,
// indirectly, directly exposed): the densest three quarters are placed in
// the not-exposed class, the least dense tenth in the directly exposed one,
// and a site's values weigh the classes within a tenth of its rank either
// way; without a profile the county means stand.
func TestAllocatedIndicators(t *testing.T) {
	dir := datatest.FixtureDir(t)
	site := hazard.Site{Lat: 34.05, Lon: -118.25, CountyFIPS: "06037"}
	tests := []struct {
		denser    fixedAllocator
		class     string
		bp        float64
		res       string
		allocated bool
	}{
		// The classes within 0.1 of the rank either way, by weight: all
		// not exposed; a quarter not and three quarters indirectly; a
		// quarter indirectly and three quarters directly (the window
		// folded back at the least dense end). Class means 0, 0.0008 and
		// 0.0028.
		{0.1, "not exposed", 0, hazard.ResCountyAllocated, true},
		{0.8, "indirectly exposed", 0.75 * 0.0008, hazard.ResCountyAllocated, true},
		{0.95, "directly exposed", 0.25*0.0008 + 0.75*0.0028, hazard.ResCountyAllocated, true},
		{-1, "", 0.0016, hazard.ResCounty, false},
	}
	for _, tt := range tests {
		m, err := load(os.DirFS(dir), tt.denser)
		if err != nil {
			t.Fatal(err)
		}
		meas := m.Measure(site)
		bp, ok := find(meas, IDBurnProbability)
		if !ok || math.Abs(bp.Value-tt.bp) > 1e-9 || bp.Resolution.Kind != tt.res || !bp.AnnualChance || bp.Weight <= 0 {
			t.Errorf("denser %v: burn probability %+v, want %g at %s", tt.denser, bp, tt.bp, tt.res)
		}
		cls, ok := find(meas, IDExposureClass)
		if ok != tt.allocated || (ok && (cls.Text != tt.class || cls.Weight != 0)) {
			t.Errorf("denser %v: class %+v, want %q", tt.denser, cls, tt.class)
		}
		if share, _ := find(meas, IDHomesExposedShare); tt.allocated && share.Weight != 0 {
			t.Errorf("denser %v: the county share of homes reached still weighs %v", tt.denser, share.Weight)
		}
	}
}

func find(m hazard.Measurement, id string) (hazard.Indicator, bool) {
	for _, in := range m.Indicators {
		if in.ID == id {
			return in, true
		}
	}
	return hazard.Indicator{}, false
}

// TestRealAllocationPreservesCountyTotals measures every 2020 block group
// at its own centre of population, as the engine measures a site (shelter
// from density and the terrain's relief), and
// checks that in every county the residents allocated to each exposure
// class are the county's published share of homes in it, and that the
// expected share of homes reached by fire each year over its residents is
// the county's published figure: to within the largest block group, the
// granularity of the allocation.
func TestRealAllocationPreservesCountyTotals(t *testing.T) {
	dir := datatest.Real(t)
	cov, err := coverage.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	x, err := population.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ps := population.BuildProfiles(x, func(p geo.Point) (string, bool) {
		c, _, ok := cov.Locate(p)
		if !ok {
			return "", false
		}
		return c.FIPS, true
	})
	ground, err := terrain.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ex := NewExposure(ps, func(p geo.Point, km float64) (float64, bool) {
		s, ok := ground.Relief(p, km)
		return s.Metres, ok
	})
	m, err := load(dir, ex)
	if err != nil {
		t.Fatal(err)
	}
	type tally struct {
		pop, largest, reached float64
		byClass               [3]float64
		atDensity             map[float64]float64 // residents at one shelter value
	}
	counties := map[string]*tally{}
	for i := 0; i < x.Len(); i++ {
		p, pop := x.Centre(i)
		c, _, ok := cov.Locate(p)
		if !ok {
			continue
		}
		meas := m.Measure(hazard.Site{Lat: p.Lat, Lon: p.Lon, CountyFIPS: c.FIPS})
		cls, ok := find(meas, IDExposureClass)
		if !ok {
			continue
		}
		bp, _ := find(meas, IDBurnProbability)
		tl := counties[c.FIPS]
		if tl == nil {
			tl = &tally{atDensity: map[float64]float64{}}
			counties[c.FIPS] = tl
		}
		tl.pop += pop
		// Block groups at exactly the same shelter (neighbours within
		// 5 km of each other and of nobody else, on flat ground) cannot
		// be told apart: they move between classes together.
		d, _ := ex.Shelter(p)
		tl.atDensity[d] += pop
		tl.largest = max(tl.largest, tl.atDensity[d])
		tl.byClass[int(cls.Value)] += pop
		tl.reached += pop * bp.Value
	}
	if len(counties) < 3000 {
		t.Fatalf("only %d counties allocated", len(counties))
	}
	var national [3]float64
	var nationalPop float64
	for _, tl := range counties {
		for k := range national {
			national[k] += tl.byClass[k]
		}
		nationalPop += tl.pop
	}
	t.Logf("residents allocated: %.1f%% not exposed, %.1f%% indirectly, %.1f%% directly exposed",
		100*national[classNot]/nationalPop, 100*national[classIndirect]/nationalPop, 100*national[classDirect]/nationalPop)
	var worst float64
	var within1pct int
	for fips, tl := range counties {
		c := m.lookup(fips)
		tol := tl.largest/tl.pop + 1e-9
		for k := range tl.byClass {
			got, want := tl.byClass[k]/tl.pop, c.wrc.classFrac[k]
			if d := math.Abs(got - want); d > tol {
				t.Errorf("%s: %.4f of residents allocated %s, published %.4f (tolerance %.4f)", fips, got, classWords[k], want, tol)
			} else {
				worst = max(worst, d)
			}
		}
		if math.Abs(tl.byClass[classNot]/tl.pop-c.wrc.classFrac[classNot]) <= 0.01 {
			within1pct++
		}
		maxBP := max(c.wrc.classBP[classDirect], c.wrc.classBP[classIndirect])
		if got, want := tl.reached/tl.pop, c.wrc.homesShare; math.Abs(got-want) > tol*maxBP+0.01*want {
			t.Errorf("%s: expected share of homes reached %.3g over the allocated residents, published %.3g", fips, got, want)
		}
	}
	t.Logf("%d counties: class shares within one block group of the published split (largest gap %.4f); not-exposed share within 1 point in %d", len(counties), worst, within1pct)
}
