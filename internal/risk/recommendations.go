package risk

import (
	"fmt"
	"math"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// recommendations turns module results into actions (docs/methodology.md,
// "Recommendations"). A high or very high module gets its strong action at
// high priority only where a peril at that level has site- or grid-level
// evidence past the peril's documented threshold; county averages, reported
// events and the NRI benchmark earn it at medium priority, worded as
// screening. A moderate module gets a check at medium priority; low scores
// get nothing, since a report that recommends everything recommends nothing.
// Where the leading peril's physical evidence puts its annual chance below
// what is worth acting on (PerilSpec.Negligible), a moderate or high
// percentile earns only a low-priority note that says so.
func recommendations(results []moduleResult) []Recommendation {
	var high, medium, low []Recommendation
	for i := range results {
		r := &results[i]
		key, advice := r.spec.Key, r.spec.Advice
		if r.score != nil && !relevant(r) {
			continue
		}
		if r.score != nil && *r.score >= scoreModerate && r.basis == basisHazard {
			if why, ok := negligible(r); ok {
				low = append(low, Recommendation{Module: key, Priority: "low", Text: fmt.Sprintf(
					"No %s action needed: %s. The score of %d ranks the site above the many residents with less on record; it is not an annual chance worth acting on.",
					strings.ToLower(r.spec.Title), why, *r.score)})
				continue
			}
		}
		switch {
		case r.score == nil:
			medium = append(medium, Recommendation{Module: key, Priority: "medium", Text: advice.NoData})
		case *r.score >= scoreHigh && r.basis == basisFallback:
			medium = append(medium, Recommendation{Module: key, Priority: "medium",
				Text: advice.Act + " " + screening(r)})
		case *r.score >= scoreHigh:
			if ev, ok := strongEvidence(r); ok {
				high = append(high, Recommendation{Module: key, Priority: "high", Text: advice.Act + " Evidence: " + ev + "."})
				continue
			}
			medium = append(medium, Recommendation{Module: key, Priority: "medium", Text: advice.Act + " " + screening(r)})
		case *r.score >= scoreModerate:
			text := advice.Check
			if _, coarse := screeningLead(r); coarse {
				text += " " + screening(r)
			} else if r.evidence != "" {
				text += " Evidence: " + r.evidence + "."
			}
			medium = append(medium, Recommendation{Module: key, Priority: "medium", Text: text})
		default:
			if near, ok := nearCondition(r); ok {
				medium = append(medium, Recommendation{Module: key, Priority: "medium", Text: r.spec.NearAdvice + " Evidence: " + near + "."})
			}
		}
	}
	return append(append(append([]Recommendation{}, high...), medium...), low...)
}

// negligible reports whether the module's leading peril meets every one of
// its Negligible levels at the site, and says with what values.
func negligible(r *moduleResult) (string, bool) {
	if r.driver < 0 || r.driver >= len(r.spec.Perils) {
		return "", false
	}
	levels := r.spec.Perils[r.driver].Negligible
	if len(levels) == 0 {
		return "", false
	}
	parts := make([]string, 0, len(levels))
	for _, t := range levels {
		in, ok := indicatorByID(r.meas.Indicators, t.Indicator)
		if !ok || !t.Met(in.Value) {
			return "", false
		}
		parts = append(parts, fmt.Sprintf("%s: %s (%s; %s)", lowerFirst(shortLabel(in.Label)), negligibleValue(in), resolutionWords(in.Resolution), t.Text))
	}
	return joinWords(parts), true
}

// negligibleValue writes a small value as its level is worded: an annual
// chance as "about 1 in N a year", or "none on record".
func negligibleValue(in hazard.Indicator) string {
	if in.AnnualChance && in.Value <= 0 {
		return "none on record"
	}
	return thresholdValue(in)
}

// strongEvidence finds a peril scored high or above whose threshold
// indicator passes (docs/methodology.md, "Recommendations"): measured at
// the site, on a grid, from a table of places or as the site's allocated
// share of county figures, it must meet the threshold; a record of
// reported events around the site must meet it by coarseMargin, and the
// FEMA NRI benchmark for the peril's hazard must agree (rated relatively
// high or very high for the county). A county average never earns a high
// priority, with or without the benchmark (a county figure beside a county
// figure is still no evidence at the site).
func strongEvidence(r *moduleResult) (string, bool) {
	for pi, ps := range r.spec.Perils {
		if ps.High == nil || math.IsNaN(r.perils[pi].share) || scoreOf(r.perils[pi].share) < 60 {
			continue
		}
		in, ok := indicatorByID(r.meas.Indicators, ps.High.Indicator)
		if !ok {
			continue
		}
		var met bool
		var how string
		switch in.Resolution.Kind {
		case hazard.ResSite, hazard.ResGrid, hazard.ResPlaceTable, hazard.ResCountyAllocated:
			met, how = ps.High.Met(in.Value), "threshold: "+ps.High.Text
		case hazard.ResReportedEvents:
			agrees := ""
			if pi < len(r.benchHigh) {
				agrees = r.benchHigh[pi]
			}
			met = ps.High.MetBy(in.Value, coarseMargin) && agrees != ""
			how = fmt.Sprintf("threshold: %s, met %s-fold as %s evidence needs, and the benchmark agrees: %s",
				ps.High.Text, formatNumber(coarseMargin), ResolutionText(in.Resolution.Kind), agrees)
		}
		if met {
			return fmt.Sprintf("%s, %s: %s (%s; %s)", ps.Title, lowerFirst(shortLabel(in.Label)), thresholdValue(in),
				resolutionWords(in.Resolution), how), true
		}
	}
	return "", false
}

// thresholdValue writes an indicator's value as its threshold is worded:
// an annual chance as "about 1 in N a year", as thresholds and return
// periods are, anything else as formatValue does.
func thresholdValue(in hazard.Indicator) string {
	if in.AnnualChance && in.Value > 0 {
		return "about 1 in " + hazard.ReturnPeriodText(1/in.Value) + " a year"
	}
	if in.Text != "" {
		return in.Text
	}
	return formatValue(in.Value, in.Unit)
}

// coarseMargin is the factor by which county averages and reported events
// must pass a high-priority threshold: they describe the site less well,
// so only a clear exceedance counts.
const coarseMargin = 1.5

// screening closes a recommendation that rests on evidence too coarse or too
// weak for a high priority, naming it: county averages, reported events, or
// site and grid evidence below the peril's documented threshold.
func screening(r *moduleResult) string {
	lead, coarse := screeningLead(r)
	if r.driver < 0 {
		return lead + "."
	}
	// Below a threshold, cite the quantity the threshold is about, so the
	// value sits beside the level it falls short of (the wildfire burn
	// probability, not the risk index that may lead the peril).
	if t := r.spec.Perils[r.driver].High; t != nil && !coarse {
		if in, ok := indicatorByID(r.meas.Indicators, t.Indicator); ok {
			return fmt.Sprintf("%s: %s: %s (%s).", lead, lowerFirst(shortLabel(in.Label)), thresholdValue(in), resolutionWords(in.Resolution))
		}
	}
	if r.evidence == "" {
		return lead + "."
	}
	return fmt.Sprintf("%s: %s.", lead, r.evidence)
}

// screeningLead names the kind of evidence a screening rests on, and
// whether it is coarse (a county benchmark, county averages or reported
// events) rather than site or grid evidence below its threshold.
func screeningLead(r *moduleResult) (string, bool) {
	if r.driver < 0 {
		return "Screening from FEMA's county benchmark only: no hazard layer covers the site", true
	}
	switch perilResolution(r.os, r.driver) {
	case hazard.ResCounty:
		return "County-level screening, not site evidence", true
	case hazard.ResReportedEvents:
		return "Screening from reported events, not site evidence", true
	}
	if t := r.spec.Perils[r.driver].High; t != nil {
		return "Screening below the high-priority threshold (" + t.Text + ")", false
	}
	return "Screening", false
}

// nearCondition reports the first of the module's Near conditions the site
// meets, described.
func nearCondition(r *moduleResult) (string, bool) {
	for _, t := range r.spec.Near {
		in, ok := indicatorByID(r.meas.Indicators, t.Indicator)
		if ok && in.Text == "" && t.Met(in.Value) {
			return fmt.Sprintf("%s: %s (%s)", lowerFirst(shortLabel(in.Label)), formatValue(in.Value, in.Unit), t.Text), true
		}
	}
	return "", false
}

// relevant reports whether a scored module's leading peril meets its
// Relevant condition (or has none).
func relevant(r *moduleResult) bool {
	if r.driver < 0 || r.driver >= len(r.spec.Perils) {
		return true
	}
	t := r.spec.Perils[r.driver].Relevant
	if t == nil {
		return true
	}
	in, ok := indicatorByID(r.meas.Indicators, t.Indicator)
	return ok && t.Met(in.Value)
}
