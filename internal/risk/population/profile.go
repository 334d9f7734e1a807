package population

import (
	"sort"

	"github.com/locrisk/locrisk/internal/risk/geo"
)

// Profiles ranks local population density inside each county: for every
// county, the densities at its block groups' centres with their residents.
// A site's place in that ranking says whether it sits in the county's dense
// core or at its thinly settled edge (docs/methodology.md, "Local
// population density"). Read-only after BuildProfiles.
type Profiles struct {
	x        *Index
	counties map[string]*profile
	// Per block group (Index order): the county its centre located in
	// ("" for none) and the local density there.
	bgFIPS []string
	bgDens []float64
}

// profile is one county's block groups, in ascending order of density.
type profile struct {
	dens   []float64 // ascending
	prefix []float64 // prefix[k] = residents of dens[0..k-1]
	total  float64
}

// CountyOf resolves a point to its county's 5-digit FIPS code.
type CountyOf func(p geo.Point) (fips string, ok bool)

// BuildProfiles assigns every block group to the county countyOf puts its
// centre in and measures the local density there. A centre that locates in
// no county (on water just off a generalised shore) is left out of every
// profile; it is still counted in the densities around it.
func BuildProfiles(x *Index, countyOf CountyOf) *Profiles {
	n := x.Len()
	fips := make([]string, n)
	dens := make([]float64, n)
	Parallel(n, func(i int) {
		p := x.pts[i]
		if f, ok := countyOf(p); ok {
			fips[i] = f
			dens[i] = x.Density(p)
		}
	})

	return &Profiles{x: x, counties: rankCounties(x, fips, dens), bgFIPS: fips, bgDens: dens}
}

// rankCounties builds each county's ascending profile of value over its
// block groups (fips "" is left out).
func rankCounties(x *Index, fips []string, value []float64) map[string]*profile {
	type bg struct{ d, pop float64 }
	groups := map[string][]bg{}
	for i, f := range fips {
		if f != "" {
			groups[f] = append(groups[f], bg{value[i], x.pop[i]})
		}
	}
	out := make(map[string]*profile, len(groups))
	for f, g := range groups {
		sort.Slice(g, func(a, b int) bool { return g[a].d < g[b].d || (g[a].d == g[b].d && g[a].pop < g[b].pop) })
		p := &profile{dens: make([]float64, len(g)), prefix: make([]float64, len(g)+1)}
		for k, b := range g {
			p.dens[k] = b.d
			p.prefix[k+1] = p.prefix[k] + b.pop
		}
		p.total = p.prefix[len(g)]
		out[f] = p
	}
	return out
}

// BlockGroup is block group i's (Index order) county, as BuildProfiles
// located its centre ("" for none), and the local density at its centre.
func (ps *Profiles) BlockGroup(i int) (fips string, density float64) {
	return ps.bgFIPS[i], ps.bgDens[i]
}

// Ranking ranks any measure taken at every block group's centre inside
// each county, the way Profiles ranks local density: a site measured the
// same way is placed among its county's residents by HigherShare.
type Ranking struct {
	counties map[string]*profile
}

// RankBy ranks value (one per block group, Index order) inside each
// county the profiles located block groups in.
func (ps *Profiles) RankBy(value []float64) *Ranking {
	return &Ranking{counties: rankCounties(ps.x, ps.bgFIPS, value)}
}

// HigherShare is the share of county fips's residents whose block group
// has a higher value than v, those at exactly v counting half (as
// DenserShare); ok is false for a county without ranked residents.
func (r *Ranking) HigherShare(fips string, v float64) (float64, bool) {
	return higherShare(r.counties[fips], v)
}

// Residents is the number of residents ranked in county fips.
func (r *Ranking) Residents(fips string) float64 {
	if p := r.counties[fips]; p != nil {
		return p.total
	}
	return 0
}

// Density is the local population density at p (Index.Density).
func (ps *Profiles) Density(p geo.Point) float64 { return ps.x.Density(p) }

// DenserShare is the share of county fips's residents (0..1) who live at a
// higher local density than d, counting those at exactly d as half above
// and half below, so a block group's own centre gets the midpoint of its
// residents' span and the county's residents split at any share to within
// one block group. ok is false for a county without profiled residents.
func (ps *Profiles) DenserShare(fips string, d float64) (share float64, ok bool) {
	return higherShare(ps.counties[fips], d)
}

func higherShare(p *profile, d float64) (float64, bool) {
	if p == nil || p.total <= 0 {
		return 0, false
	}
	lo := sort.SearchFloat64s(p.dens, d) // first >= d
	hi := lo
	for hi < len(p.dens) && p.dens[hi] == d {
		hi++
	}
	above := p.total - p.prefix[hi]
	equal := p.prefix[hi] - p.prefix[lo]
	return (above + equal/2) / p.total, true
}

// Counties lists the profiled counties' FIPS codes, sorted.
func (ps *Profiles) Counties() []string {
	out := make([]string, 0, len(ps.counties))
	for f := range ps.counties {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// Residents is the number of residents profiled in county fips.
func (ps *Profiles) Residents(fips string) float64 {
	if p := ps.counties[fips]; p != nil {
		return p.total
	}
	return 0
}

// Index is the block-group index the profiles were built on.
func (ps *Profiles) Index() *Index { return ps.x }
