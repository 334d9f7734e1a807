package wildfire

import (
	"math"

	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/population"
)

// ReliefFunc is the local relief at p in metres (highest minus lowest
// ground within radiusKm), ok false where no terrain covers p. The engine
// passes the terrain model's Relief; the module works without one.
type ReliefFunc func(p geo.Point, radiusKm float64) (metres float64, ok bool)

// Shelter from wildland (docs/methodology.md, "Wildfire at the address"):
//
//	shelter(p) = ½ ln(1 + d2(p)) + ½ ln(1 + d5(p)) − reliefWeight × min(1, relief5(p) / reliefFullM)
//
// d2 and d5 are the residents per km² within 2 and 5 km (block-group
// centres of population): the site's own settlement, and how much of the
// land around it is settled, so that a core ringed by empty land within a
// few kilometres reads less sheltered than one amid other built-up land of
// the same density. Water holds no centres of population but is not
// wildland; it lowers both densities as it did before, and the 5 km disc
// still finds the city across the water. relief5 is the ground's relief
// within 5 km on the repaired 2 km terrain grid: hills and mountain fronts
// are rarely farmed or built over, and in most of the country they are
// wildland (forest, shrub, grass); plains land around a town is more often
// farmland, which burns little. Relief of reliefFullM or more counts fully.
const (
	wideRadiusKm   = 5.0
	reliefRadiusKm = 5.0
	reliefFullM    = 500.0
	// reliefWeight: full relief counts as much as a factor e^3 ≈ 20 in
	// both densities, about the difference between a city core and its
	// exurbs; a judgement, not a fit (no map of which homes WRC counts as
	// exposed is available to fit it). With half that weight density still
	// decided inside a county: a dense core at the foot of forested hills
	// (Pasadena, Rapid City, Ogden) ranked as more sheltered than a plains
	// exurb of the same county, whose grass and farmland burn less often
	// and less fiercely. It is not enough that relief alone outweighs a
	// hundredfold difference in density.
	reliefWeight = 3.0
)

// Exposure places a site among its county's residents by its shelter
// from wildland, measured at every block group's centre of population and
// ranked inside each county (population.Ranking), so that a site measured
// the same way falls in the same ranking. Read-only after NewExposure.
type Exposure struct {
	x      *population.Index
	relief ReliefFunc
	rank   *population.Ranking
}

// NewExposure measures the shelter at every block group's centre located
// in a county and ranks it inside each county. relief may be nil.
func NewExposure(ps *population.Profiles, relief ReliefFunc) *Exposure {
	e := &Exposure{x: ps.Index(), relief: relief}
	n := e.x.Len()
	located := func(i int) bool { f, _ := ps.BlockGroup(i); return f != "" }
	d5 := e.x.DensitiesWithin(wideRadiusKm, located) // as shelterWith measures it
	value := make([]float64, n)
	population.Parallel(n, func(i int) {
		if fips, d2 := ps.BlockGroup(i); fips != "" {
			p, _ := e.x.Centre(i)
			value[i] = ShelterOf(d2, d5[i], e.reliefAt(p))
		}
	})
	e.rank = ps.RankBy(value)
	return e
}

// Shelter is the site's shelter from wildland and its local density (2 km).
func (e *Exposure) Shelter(p geo.Point) (shelter, density float64) {
	density = e.x.Density(p)
	return e.shelterWith(p, density), density
}

func (e *Exposure) shelterWith(p geo.Point, d2 float64) float64 {
	d5 := e.x.DensityWithin(p, wideRadiusKm)
	return ShelterOf(d2, d5, e.reliefAt(p))
}

// reliefAt is the relief within reliefRadiusKm, 0 without terrain.
func (e *Exposure) reliefAt(p geo.Point) float64 {
	if e.relief == nil {
		return 0
	}
	if r, ok := e.relief(p, reliefRadiusKm); ok && r > 0 {
		return r
	}
	return 0
}

// ShelterOf is the shelter formula for densities within 2 and 5 km
// (residents per km²) and relief within 5 km (m).
func ShelterOf(d2, d5, reliefM float64) float64 {
	return 0.5*math.Log1p(d2) + 0.5*math.Log1p(d5) - reliefWeight*math.Min(1, reliefM/reliefFullM)
}

// Place is the share of county fips's residents more sheltered from
// wildland than a site at p (those as sheltered count half), and the
// site's local density; ok is false for a county without ranked residents.
func (e *Exposure) Place(fips string, p geo.Point) (moreSheltered, density float64, ok bool) {
	s, d := e.Shelter(p)
	share, ok := e.rank.HigherShare(fips, s)
	return share, d, ok
}
