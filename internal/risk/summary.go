package risk

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/data"
)

// summarise fills the summary and full report from the module results.
func (e *Engine) summarise(a *Assessment, results []moduleResult, county *coverage.County, borderKm float64) {
	s := &a.Summary
	full := &a.Report
	sourceSet := map[string]bool{"census-counties-2023": true, coverage.SourceTracts: true}
	var confSum float64
	var flags []ReviewFlag
	var countyLevel, fallback []string
	for i := range results {
		r := &results[i]
		mr := ModuleReport{Score: r.score, Basis: r.basis, Indicators: r.indicators, Perils: r.perilOut,
			Narrative: r.narrative, Confidence: confidenceOf(r.confidence)}
		for _, id := range r.sources {
			sourceSet[id] = true
		}
		title := r.spec.Title
		s.ModuleScores = append(s.ModuleScores, ModuleEntry[*int]{r.spec.Key, r.score})
		s.Perils = append(s.Perils, ModuleEntry[[]Peril]{r.spec.Key, r.perilOut})
		if r.score == nil {
			full.Modules = append(full.Modules, ModuleEntry[ModuleReport]{r.spec.Key, mr})
			flags = append(flags, ReviewFlag{"module_no_data", fmt.Sprintf("%s: no data covers this location, so the module has no score and the overall score is computed from the other modules.", title), r.spec.Key})
			continue
		}
		lvl := RiskLevel(*r.score)
		mr.RiskLevel = &lvl
		full.Modules = append(full.Modules, ModuleEntry[ModuleReport]{r.spec.Key, mr})
		confSum += r.confidence
		switch {
		case r.basis == basisFallback:
			fallback = append(fallback, title)
		case r.countyOnly && *r.score >= countyFlagMinimum:
			countyLevel = append(countyLevel, title)
		}
		if r.basis == basisHazard {
			var missing []string
			for pi, p := range r.perils {
				if math.IsNaN(p.share) {
					missing = append(missing, strings.ToLower(r.spec.Perils[pi].Title))
				}
			}
			if len(missing) > 0 {
				flags = append(flags, ReviewFlag{"peril_no_data", fmt.Sprintf("%s: no data covers %s at this location; those perils have no score (not a finding of low hazard) and the module is scored from the others.",
					title, joinWords(missing)), r.spec.Key})
			}
		}
		if r.divergent {
			flags = append(flags, ReviewFlag{"benchmark_divergence", fmt.Sprintf("%s: the site score %d and the FEMA NRI benchmark for %s (%d on the same resident scale) differ more than they do for %d%% of US residents; NRI measures the county's expected loss, which grows with its property and population.",
				title, *r.score, county.Name, scoreOf(r.bench), 100-int(divergenceShare*100)), r.spec.Key})
		}
		for _, f := range r.meas.Flags {
			flags = append(flags, ReviewFlag{f.Code, f.Message, r.spec.Key})
		}
	}

	// Location-level flags first, then module flags in module order.
	var lead []ReviewFlag
	if borderKm < countyLineKm {
		lead = append(lead, ReviewFlag{Code: "near_county_line", Message: fmt.Sprintf("The point is %s km from another county's boundary; county-level indicators may belong to the neighbouring county.", formatNumber(round1(borderKm)))})
	}
	if county.Territory {
		lead = append(lead, ReviewFlag{Code: "territory_partial_data", Message: fmt.Sprintf("%s is a US territory; several national hazard data sets do not cover it, so some modules rest on fewer indicators.", county.StateName)})
	}
	if len(countyLevel) > 0 {
		lead = append(lead, ReviewFlag{Code: "county_level_data_only", Message: "Scored moderate or above from county figures only (county averages, or county figures allocated to the site by local density; no site-level layer), so the site itself may differ: " + strings.Join(countyLevel, ", ") + "."})
	}
	if len(fallback) > 0 {
		lead = append(lead, ReviewFlag{Code: "nri_benchmark_fallback", Message: "Scored from the FEMA NRI county benchmark because no hazard layer covers the location: " + strings.Join(fallback, ", ") + "."})
	}
	s.ReviewFlags = append(lead, flags...)

	s.OverallScore = e.overall(results)
	s.RiskLevel = RiskLevel(s.OverallScore)
	s.OverallDriver = overallDriver(results)
	// Modules without data count as zero confidence: the less we cover, the
	// less the overall score can be trusted.
	s.Confidence = confidenceOf(round2(confSum / float64(len(results))))
	s.TopRisks = topRisks(results)
	s.Recommendations = recommendations(results)

	for _, src := range data.Catalog() {
		if sourceSet[src.ID] {
			full.Sources = append(full.Sources, SourceRef{ID: src.ID, Name: src.Name, Publisher: src.Publisher, Version: e.vintage(src.ID), Resolution: src.Resolution})
		}
	}
	full.Methodology = Methodology{Version: MethodologyVersion, Description: methodologyDescription}
}

// topRisks lists the up to three highest modules at moderate or above
// that can be a top risk (canLead).
func topRisks(results []moduleResult) []TopRisk {
	var scored []*moduleResult
	for i := range results {
		if r := &results[i]; r.score != nil && *r.score >= topRiskMinimum && canLead(r) {
			scored = append(scored, r)
		}
	}
	// Stable sort keeps report module order among equal scores.
	sort.SliceStable(scored, func(i, j int) bool { return *scored[i].score > *scored[j].score })
	out := []TopRisk{}
	for i := 0; i < len(scored) && i < 3; i++ {
		r := scored[i]
		out = append(out, TopRisk{Module: r.spec.Key, Score: *r.score, RiskLevel: RiskLevel(*r.score), Reason: r.keyReason})
	}
	return out
}

// canLead reports whether a scored module can be a top risk or name the
// overall score: not one whose leading peril misses its relevance
// condition (a Superfund site 9 km away calls for no action, so it leads
// nothing either).
func canLead(r *moduleResult) bool { return relevant(r) }

// overallDriver names the module that drives the overall score: the one
// with the highest score among those that can lead (canLead), the first in
// report order among equals; where none can, the highest scored module; ""
// where no module is scored. It agrees with the first top risk whenever
// there is one.
func overallDriver(results []moduleResult) string {
	pick := func(eligible func(*moduleResult) bool) string {
		best, key := -1, ""
		for i := range results {
			if r := &results[i]; r.score != nil && *r.score > best && eligible(r) {
				best, key = *r.score, r.spec.Key
			}
		}
		return key
	}
	if key := pick(canLead); key != "" {
		return key
	}
	return pick(func(*moduleResult) bool { return true })
}

const methodologyDescription = "Every score is a population-weighted percentile: the share of US residents (2020 Census tract centres of population) " +
	"whose own value of the same hazard quantity is lower, so a score of 80 means more hazardous than 80% of US residents. " +
	"A peril's hazard value is the weighted mean of its indicators' percentiles; a module's is its highest peril percentile; " +
	"the overall hazard index is one minus the product, over scored modules, of the share of residents at or above the site. Each is ranked again. " +
	"FEMA National Risk Index county scores are shown as expected-annual-loss benchmarks and used as the score only where no hazard layer covers the location. " +
	"Every indicator states its resolution (site, grid, reported events or county), its source and the vintage of its data."
