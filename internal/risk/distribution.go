package risk

import (
	"math"
	"slices"
	"sort"
)

// distribution is the population-weighted distribution of one hazard value
// over the reference residents (docs/methodology.md, "Percentiles"). It keeps
// the distinct values in ascending order and, for each, the share of the
// reference population whose value is strictly lower, so that
// "more hazardous than X% of US residents" is read off exactly.
type distribution struct {
	Values []float64 // distinct values, ascending
	Below  []float64 // Below[i]: population share (0..1) with a value < Values[i]
}

// weighted is one observation: a value held by a number of residents.
type weighted struct {
	value, weight float64
}

// newDistribution builds a distribution from observations; NaN values are
// dropped (a resident the layer does not cover).
func newDistribution(obs []weighted) *distribution {
	kept := obs[:0:0]
	total := 0.0
	for _, o := range obs {
		if !math.IsNaN(o.value) && o.weight > 0 {
			kept = append(kept, o)
			total += o.weight
		}
	}
	d := &distribution{}
	if total == 0 {
		return d
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].value < kept[j].value })
	cum := 0.0
	for i := 0; i < len(kept); {
		v := kept[i].value
		d.Values = append(d.Values, v)
		d.Below = append(d.Below, cum/total)
		for ; i < len(kept) && kept[i].value == v; i++ {
			cum += kept[i].weight
		}
	}
	return d
}

// empty reports whether no resident has a value.
func (d *distribution) empty() bool { return d == nil || len(d.Values) == 0 }

// below is the population share (0..1) whose value is strictly lower than v.
// A resident that shares v is not counted: ties are not "more hazardous".
func (d *distribution) below(v float64) float64 {
	i := sort.SearchFloat64s(d.Values, v)
	if i == len(d.Values) {
		return 1
	}
	return d.Below[i]
}

// atOrBelow is the population share whose value is v or lower.
func (d *distribution) atOrBelow(v float64) float64 {
	i := sort.Search(len(d.Values), func(i int) bool { return d.Values[i] > v })
	if i == len(d.Values) {
		return 1
	}
	return d.Below[i]
}

// quantile is the smallest value q whose at-or-below share reaches p.
func (d *distribution) quantile(p float64) float64 {
	// The at-or-below share of Values[i] is Below[i+1] (1 for the last),
	// ascending in i: the first i where it reaches p.
	i := sort.Search(len(d.Values), func(i int) bool {
		return i+1 >= len(d.Values) || d.Below[i+1] >= p
	})
	if i == len(d.Values) {
		return math.NaN()
	}
	return d.Values[i]
}

// scoreOf turns a share below into the 0..100 score: the percentile rounded
// down, so "more hazardous than X% of US residents" holds as stated.
func scoreOf(share float64) int {
	return max(0, min(100, int(math.Floor(share*100+1e-10))))
}

// distributionPool finds equal distributions: the same values and shares,
// bit for bit.
type distributionPool struct {
	byKey map[distributionKey][]*distribution
	all   []*distribution // in the order first seen
}

type distributionKey struct {
	n           int
	first, last uint64 // bits of the first value and of the last share
}

// intern returns the pool's distribution equal to d, adding d when it has
// none; nil stays nil.
func (p *distributionPool) intern(d *distribution) *distribution {
	_, got := p.index(d)
	return got
}

// index is intern with the distribution's place in p.all.
func (p *distributionPool) index(d *distribution) (int, *distribution) {
	if d == nil {
		return -1, nil
	}
	k := distributionKey{n: len(d.Values)}
	if k.n > 0 && len(d.Below) > 0 {
		k.first, k.last = math.Float64bits(d.Values[0]), math.Float64bits(d.Below[len(d.Below)-1])
	}
	if p.byKey == nil {
		p.byKey = map[distributionKey][]*distribution{}
	}
	for _, c := range p.byKey[k] {
		if c == d || (bitsEqual(c.Values, d.Values) && bitsEqual(c.Below, d.Below)) {
			return slices.Index(p.all, c), c
		}
	}
	p.byKey[k] = append(p.byKey[k], d)
	p.all = append(p.all, d)
	return len(p.all) - 1, d
}

func bitsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}
