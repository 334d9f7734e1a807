package wildfire

import (
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// rankWindow is how roughly a site's density rank places it among its
// county's residents (docs/methodology.md, "Wildfire at the address"):
// local density is a proxy for the exposure class, not a map of burnable
// land, so a site's values weigh the classes of the residents within a
// tenth of the county's residents either way of its own rank, not only its
// own rank's class. The window is reflected at the ends of the ranking,
// which keeps every county's totals exactly: a uniform rank plus a
// symmetric, reflected error is still uniform.
const rankWindow = 0.1

// Exposure classes of WRC v1: a home in burnable cover is directly
// exposed, one within reach of embers from it indirectly exposed, the rest
// not exposed (their burn probability and risk are zero in WRC).
const (
	classNot = iota
	classIndirect
	classDirect
)

var classWords = [3]string{"not exposed", "indirectly exposed", "directly exposed"}

// Allocator places a site among its county's residents by its shelter
// from wildland (Exposure; docs/methodology.md, "Wildfire at the address").
type Allocator interface {
	// Place is the share of county fips's residents more sheltered from
	// wildland than a site at p, and the residents per km² within 2 km of
	// p; ok is false without a ranking for the county.
	Place(fips string, p geo.Point) (moreSheltered, density float64, ok bool)
}

// allocate places the site in one of its county's exposure classes by its
// local population density (docs/methodology.md, "Wildfire at the
// address"): the county's densest residents take the share of its homes
// WRC counts as not exposed, the next the indirectly exposed share, the
// least dense the directly exposed share. ok is false where the county has
// no class split or no density profile; the site then gets county means.
func (m *Module) allocate(site hazard.Site, c *county) (class int, weights [3]float64, density float64, ok bool) {
	if m.alloc == nil || c.wrc.has&hasClasses == 0 {
		return 0, weights, 0, false
	}
	u, density, ok := m.alloc.Place(site.CountyFIPS, geo.Point{Lat: site.Lat, Lon: site.Lon})
	if !ok {
		return 0, weights, 0, false
	}
	return ClassAt(c.wrc.classFrac, u), ClassWeights(c.wrc.classFrac, u, rankWindow), density, true
}

// ClassWeights is how much each exposure class (not, indirectly, directly
// exposed) weighs in the values of a site whose denser share is u, for
// class shares frac summing to 1: the share of the window [u-h, u+h],
// reflected at 0 and 1, that falls in each class's span of the ranking
// (densest first). The weights sum to 1.
func ClassWeights(frac [3]float64, u, h float64) [3]float64 {
	var w [3]float64
	if h <= 0 {
		w[ClassAt(frac, u)] = 1
		return w
	}
	// Class k spans [lo[k], hi[k]) of the ranking.
	lo := [3]float64{0, frac[classNot], frac[classNot] + frac[classIndirect]}
	hi := [3]float64{frac[classNot], frac[classNot] + frac[classIndirect], 1}
	// The window's pieces after reflection: [a, b] inside [0, 1], plus
	// the parts beyond either end folded back.
	a, b := u-h, u+h
	pieces := [][2]float64{{max(a, 0), min(b, 1)}}
	if a < 0 {
		pieces = append(pieces, [2]float64{0, -a})
	}
	if b > 1 {
		pieces = append(pieces, [2]float64{2 - b, 1})
	}
	for k := range w {
		for _, p := range pieces {
			if o := min(p[1], hi[k]) - max(p[0], lo[k]); o > 0 {
				w[k] += o
			}
		}
		w[k] /= 2 * h
	}
	return w
}

// ClassAt is the exposure class of a resident with the share denser of the
// county's residents living more densely, given the county's class shares
// (not exposed, indirectly, directly exposed; summing to 1).
func ClassAt(frac [3]float64, denser float64) int {
	switch {
	case denser < frac[classNot]:
		return classNot
	case denser < frac[classNot]+frac[classIndirect]:
		return classIndirect
	}
	return classDirect
}
