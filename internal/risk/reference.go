package risk

import (
	"math"

	"github.com/locrisk/locrisk/internal/risk/nri"
)

// The reference is where every percentile is read from: the
// population-weighted distributions (distribution.go) of every quantity
// the scoring chain ranks (score.go), looked up here, built from every
// census tract in reference_build.go and kept between runs in
// reference_cache.go.

// indKey names one ranked indicator's distribution.
type indKey struct {
	module int
	id     string
}

// reference holds every distribution scores are read from, built once per
// data version from the census tract centres of population.
type reference struct {
	indicators map[indKey]*distribution
	perils     [][]*distribution // [module][peril]
	modules    []*distribution   // [module]: hazard values, among residents the module's data score
	// scored, per module, ranks the share a module's own basis gives a
	// resident (its hazard value's rank, or its NRI benchmark's where no
	// hazard layer covers it; news cap applied) among every resident with
	// a module score, so a module score is the share of all scored
	// residents whose own module score is lower, whatever each one's basis
	// (docs/methodology.md, "The scoring chain").
	scored     []*distribution // [module]
	nri        map[string]*distribution
	bench      []*distribution // [module]: the module's NRI benchmark value
	overall    *distribution
	divergence []float64 // [module]: a score gap above this raises benchmark_divergence

	tracts     int     // tracts in the reference
	population float64 // residents in the reference
	unlocated  int     // tracts whose centre no county polygon holds (placed by their county code)
}

// Module bases: scored from the module's hazard data, from the NRI county
// benchmark because no layer covers the site, or not at all.
const (
	basisHazard   = "hazard_data"
	basisFallback = "nri_fallback"
	basisNone     = "no_data"
)

// indicatorShares ranks each observation among residents; NaN where the
// reference has no such indicator.
func (r *reference) indicatorShares(module int, os []obs, out []float64) []float64 {
	out = out[:0]
	for _, o := range os {
		d := r.indicators[indKey{module, o.id}]
		if d.empty() {
			out = append(out, math.NaN())
			continue
		}
		out = append(out, d.below(o.value))
	}
	return out
}

func (r *reference) perilShare(module, peril int, v float64) float64 {
	d := r.perils[module][peril]
	if math.IsNaN(v) || d.empty() {
		return math.NaN()
	}
	return d.below(v)
}

// moduleShare ranks a module's hazard value, or where it has none its NRI
// benchmark value, among residents.
func (r *reference) moduleShare(module int, value, bench float64) (float64, string) {
	switch {
	case !math.IsNaN(value) && !r.modules[module].empty():
		return r.modules[module].below(value), basisHazard
	case !math.IsNaN(bench) && !r.bench[module].empty():
		b := r.bench[module].below(bench)
		if d := r.modules[module]; !d.empty() {
			// On the hazard data's scale: the rank a resident measured
			// with hazard data has at the same quantile. Where many
			// residents tie at the hazard's minimum (four in five on
			// landslide terrain), a county benchmark below that quantile
			// ties with them rather than ranking above them all.
			return d.below(d.quantile(b)), basisFallback
		}
		return b, basisFallback
	}
	return math.NaN(), basisNone
}

// benchValue is a module's NRI benchmark value at a county: the highest
// population share below among the module's NRI hazards. NaN where NRI has
// none of them for the county.
func (r *reference) benchValue(t *nri.Table, spec *ModuleSpec, fips string) float64 {
	best := math.NaN()
	for _, p := range spec.Perils {
		for _, code := range p.NRI {
			s := t.Hazard(fips, code)
			d := r.nri[code]
			if !benchmarkScore(s) || d.empty() {
				continue
			}
			if v := d.below(s.Score); math.IsNaN(best) || v > best {
				best = v
			}
		}
	}
	return best
}

// moduleShare is a module's share as Assess and the reference's overall
// index use it: its score is scoreOf(share).
func (e *Engine) moduleShare(mi int, value, bench float64) (float64, string) {
	return e.moduleShareOf(e.ref, mi, value, bench)
}

// moduleRankOf is a module's share on its own basis: its hazard value
// ranked among residents with a hazard value, or its NRI benchmark ranked
// among residents with one. Shares on the two bases rank different populations,
// so moduleShareOf ranks this rank once more among all scored residents.
func (e *Engine) moduleRankOf(ref *reference, mi int, value, bench float64) (float64, string) {
	return ref.moduleShare(mi, value, bench)
}

// moduleShareOf is the population share of residents with a module score
// whose own module rank (moduleRankOf) is lower than the site's: the share
// the module score states, the mass at the minimum and residents scored
// from the NRI benchmark included. Ranking a rank keeps the order of each
// basis.
func (e *Engine) moduleShareOf(ref *reference, mi int, value, bench float64) (float64, string) {
	share, basis := e.moduleRankOf(ref, mi, value, bench)
	if math.IsNaN(share) || ref.scored == nil || ref.scored[mi].empty() {
		return share, basis // while the reference is being built
	}
	return ref.scored[mi].below(share), basis
}
