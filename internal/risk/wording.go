package risk

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// evidence describes what a peril rests on at the site, with its value and
// where it was measured: for a peril with one measured weighted indicator,
// the registry's cited evidence (a physical quantity); for one with
// several, the indicator that contributes most, or the quantity it is
// computed from (its Basis).
func evidence(r *moduleResult, peril int) (string, string) {
	if peril < 0 || peril >= len(r.spec.Perils) {
		return "", ""
	}
	top, topC, n := -1, -1.0, 0
	for i, o := range r.os {
		if o.peril != peril || o.weight <= 0 || math.IsNaN(r.shares[i]) {
			continue
		}
		n++
		if c := o.weight * r.shares[i]; c > topC {
			top, topC = i, c
		}
	}
	if top < 0 {
		return "", ""
	}
	id := r.os[top].id
	if in, ok := indicatorByID(r.meas.Indicators, id); ok && in.Basis != "" {
		id = in.Basis
	}
	if ev := r.spec.Perils[peril].Evidence; n == 1 && ev != "" {
		if _, ok := indicatorByID(r.meas.Indicators, ev); ok {
			id = ev
		}
	}
	in, ok := indicatorByID(r.meas.Indicators, id)
	if !ok {
		return "", ""
	}
	value := formatValue(in.Value, in.Unit)
	if in.Text != "" && in.Unit != "name" {
		value = in.Text
	}
	return fmt.Sprintf("%s: %s (%s)", lowerFirst(shortLabel(in.Label)), value, resolutionWords(in.Resolution)), in.ID
}

// resolutionWords says plainly where a value was measured.
func resolutionWords(r hazard.Resolution) string {
	switch r.Kind {
	case hazard.ResSite:
		return "measured at the site"
	case hazard.ResGrid:
		return "model grid, " + r.Detail
	case hazard.ResReportedEvents:
		return "reported events, " + r.Detail
	case hazard.ResCounty:
		return "county average"
	case hazard.ResCountyAllocated:
		return "county figures allocated to the site, " + r.Detail
	case hazard.ResPlaceTable:
		return "interpolated between listed places, " + r.Detail
	}
	return r.Detail
}

// stripParen drops a trailing parenthesis from a label, for a sentence
// that names the source itself.
func stripParen(s string) string {
	if i := strings.LastIndex(s, " ("); i > 0 && strings.HasSuffix(s, ")") {
		return s[:i]
	}
	return s
}

// shortLabel is an indicator's name without its definition, for a
// sentence that already sits beside the indicator table: the label up to
// its first colon outside parentheses ("Relief above the plains: the local
// relief within 5 km less 100 m, ..."), and without a trailing source in
// parentheses. A colon right after a parenthesis introduces what the
// parenthesis names ("FEMA NRI Future Risk projection (2024): wildfire
// risk score, ..."), so the label is kept whole there.
func shortLabel(s string) string {
	depth := 0
	for i := 0; i+1 < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ':':
			if depth == 0 && s[i+1] == ' ' && i > 0 && s[i-1] != ')' {
				return stripParen(s[:i])
			}
		}
	}
	return stripParen(s)
}

func lowerFirst(s string) string {
	if s == "" || (len(s) > 1 && s[1] >= 'A' && s[1] <= 'Z') {
		return s // an acronym ("NRI", "EF2+") keeps its case
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// residentsPhrase states a share the way every narrative does: "more
// hazardous than X% of US residents", rounded down; at the national
// minimum, how many residents share it.
func residentsPhrase(share float64, d *distribution, v float64) string {
	s := scoreOf(share)
	if s == 0 {
		if share == 0 {
			same := 100 * d.atOrBelow(v)
			if same < 1 {
				return "at the national minimum (no US resident's value is lower)"
			}
			return fmt.Sprintf("at the national minimum, a level about %s%% of US residents share", formatNumber(math.Floor(same)))
		}
		return "more hazardous than less than 1% of US residents"
	}
	return fmt.Sprintf("more hazardous than %d%% of US residents", s)
}

func (e *Engine) narrative(r *moduleResult, county *coverage.County) string {
	var b strings.Builder
	mi := e.moduleIndex(r.spec.Key)
	switch r.basis {
	case basisHazard:
		v, _ := moduleValue(r.perils)
		rank, _ := e.moduleRankOf(e.ref, mi, v, math.NaN())
		fmt.Fprintf(&b, "The %s at this location is %s: by its combined hazard value it is %s.",
			r.spec.Noun, levelWords(RiskLevel(*r.score)), residentsPhrase(r.share, e.ref.scored[mi], rank))
		if len(r.spec.Perils) > 1 {
			dp := r.spec.Perils[r.driver]
			// The peril's own score ranks a different quantity than the
			// module's, so it is not printed beside it (docs/methodology.md,
			// "Top risks, recommendations, review flags").
			fmt.Fprintf(&b, " The leading peril is %s", strings.ToLower(dp.Title))
			if r.evidence != "" {
				fmt.Fprintf(&b, ": %s", r.evidence)
			}
			b.WriteString(".")
		} else if ev := r.evidence; ev != "" {
			fmt.Fprintf(&b, " Main evidence: %s.", ev)
		}
		for pi, p := range r.perilOut {
			if p.AnnualProbability != nil {
				in, _ := annualChance(r.meas.Indicators, p.Peril)
				chance := "below 1 in 100,000"
				if p.ReturnPeriodYears != nil {
					chance = "about 1 in " + hazard.ReturnPeriodText(*p.ReturnPeriodYears)
				}
				if in.ID == r.evidenceID && r.evidence != "" {
					// The sentence before named the indicator, its value
					// and where it was measured.
					fmt.Fprintf(&b, " %s: an annual chance of %s, from that value.", r.spec.Perils[pi].Title, chance)
				} else {
					fmt.Fprintf(&b, " %s: an annual chance of %s, from the %s (%s).", r.spec.Perils[pi].Title,
						chance, lowerFirst(shortLabel(in.Label)), resolutionWords(in.Resolution))
				}
			}
		}
		if r.countyOnly {
			b.WriteString(" Every scored indicator here is a county figure, a county average or the county's figures allocated to the site, not a measurement at the site.")
		}
	case basisFallback:
		fmt.Fprintf(&b, "No hazard layer covers this location, so the %s score of %d ranks FEMA's National Risk Index score for %s among US residents: a county measure of expected annual loss rather than of hazard at the site.",
			r.spec.Noun, *r.score, county.Name)
	default:
		fmt.Fprintf(&b, "No data set available to locrisk covers the %s at this location, so no score is given; this is not a finding of low hazard.", r.spec.Noun)
	}
	for _, n := range r.meas.Notes {
		b.WriteString(" ")
		b.WriteString(n)
	}
	if r.basis == basisHazard {
		// One benchmark sentence is enough: the first available NRI score.
		for _, p := range r.spec.Perils {
			for _, code := range p.NRI {
				if bm := e.nri.Hazard(county.FIPS, code); bm.OK {
					fmt.Fprintf(&b, " For comparison, FEMA's National Risk Index rates %s %s for %s expected annual loss (score %s), which reflects the county's exposed property and population as well as the hazard.",
						county.Name, strconv.Quote(bm.Rating), strings.ToLower(e.nri.HazardName(code)), formatNumber(round1(bm.Score)))
					return b.String()
				}
			}
		}
	}
	return b.String()
}

func keyReason(r *moduleResult) string {
	switch r.basis {
	case basisFallback:
		return "FEMA NRI county benchmark, used because no hazard layer covers this location"
	case basisHazard:
		p := r.spec.Perils[r.driver]
		// The reason stands beside the module's score, so it names the
		// leading peril and its evidence, not the peril's own percentile
		// (a different number for a different quantity).
		reason := "led by " + strings.ToLower(p.Title)
		if r.evidence != "" {
			reason += ": " + r.evidence
		}
		return reason
	}
	return ""
}

func levelWords(level string) string {
	return strings.ReplaceAll(level, "_", " ")
}

func joinWords(w []string) string {
	switch len(w) {
	case 0:
		return ""
	case 1:
		return w[0]
	}
	return strings.Join(w[:len(w)-1], ", ") + " and " + w[len(w)-1]
}
