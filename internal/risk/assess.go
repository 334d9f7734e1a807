package risk

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// Thresholds of the scoring method (docs/methodology.md).
const (
	minAnnualChance = 1e-5          // below this no return period is shown
	countyLineKm    = 2.0           // closer than this to another county's boundary raises near_county_line
	topRiskMinimum  = scoreModerate // modules below moderate are not listed as top risks
)

// moduleResult is one module's outcome before it is written into the report.
type moduleResult struct {
	spec       *ModuleSpec
	meas       hazard.Measurement
	os         []obs
	shares     []float64     // per obs
	perils     []perilResult // per spec peril, shares filled
	driver     int           // index of the peril with the highest share; -1
	share      float64       // module share below; NaN without a score
	score      *int
	basis      string
	bench      float64 // NRI benchmark share below (bench distribution); NaN
	confidence float64
	divergent  bool
	countyOnly bool
	indicators []Indicator
	perilOut   []Peril
	narrative  string
	keyReason  string
	evidence   string // what the leading peril rests on (evidence(r, driver))
	evidenceID string // the indicator evidence names
	sources    []string
	// benchHigh, per peril, names the FEMA NRI rating that agrees with a
	// high priority ("Very High" for tornado), or is empty.
	benchHigh []string
}

// Assess scores the point on every registered module. It returns
// ErrUnsupportedLocation for coordinates outside coverage.
func (e *Engine) Assess(ctx context.Context, lat, lon float64) (*Assessment, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if lat < -90 || lat > 90 || lon < -180 || lon > 180 || math.IsNaN(lat) || math.IsNaN(lon) {
		return nil, ErrUnsupportedLocation
	}
	p := geo.Point{Lat: lat, Lon: lon}
	county, borderKm, ok := e.coverage.Locate(p)
	if !ok {
		return nil, ErrUnsupportedLocation
	}
	results := e.scoreAll(siteFor(p, county), county)
	prov := e.provenance
	a := &Assessment{
		Location:    locationOf(lat, lon, county),
		DataVersion: e.dataVersion,
		Provenance:  &prov,
	}
	e.summarise(a, results, county, borderKm)
	return a, nil
}

// scoreAll scores every module at site.
func (e *Engine) scoreAll(site hazard.Site, county *coverage.County) []moduleResult {
	results := make([]moduleResult, len(e.modules))
	for i := range e.modules {
		results[i] = e.scoreModule(i, site, county)
	}
	return results
}

// overall is the score of the overall hazard index of module results.
func (e *Engine) overall(results []moduleResult) int {
	shares := make([]float64, len(results))
	for i := range results {
		shares[i] = results[i].share
	}
	h := overallValue(shares)
	if math.IsNaN(h) {
		return 0
	}
	return scoreOf(e.ref.overall.below(h))
}

// scoreModule measures one module and scores its perils and itself along
// the same chain the reference was built with (reference.go).
func (e *Engine) scoreModule(mi int, site hazard.Site, county *coverage.County) moduleResult {
	spec := &e.specs[mi]
	r := moduleResult{spec: spec, meas: e.modules[mi].Measure(site), driver: -1, bench: math.NaN()}
	r.os = observations(spec, &r.meas, nil)
	r.shares = e.ref.indicatorShares(mi, r.os, nil)
	r.perils = perilValues(len(spec.Perils), r.os, r.shares, nil)
	for pi := range r.perils {
		r.perils[pi].share = e.ref.perilShare(mi, pi, r.perils[pi].value)
	}
	value, driver := moduleValue(r.perils)
	benchValue := e.ref.benchValue(e.nri, spec, site.CountyFIPS)
	if !math.IsNaN(benchValue) && !e.ref.bench[mi].empty() {
		r.bench = e.ref.bench[mi].below(benchValue)
	}
	r.share, r.basis = e.moduleShare(mi, value, benchValue)
	quality := r.meas.Quality
	switch r.basis {
	case basisHazard:
		s := scoreOf(r.share)
		r.score, r.driver = &s, driver
		if s >= scoreHigh {
			// Only a high score can earn a high priority, which is
			// where coarse evidence asks whether the benchmark agrees.
			r.benchHigh = e.benchHigh(spec, site.CountyFIPS)
		}
		r.confidence = r.perils[driver].conf * quality
		r.countyOnly = countyOnly(r.os)
		if !math.IsNaN(r.bench) {
			gap := math.Abs(float64(s - scoreOf(r.bench)))
			r.divergent = gap > e.ref.divergence[mi]
		}
	case basisFallback:
		s := scoreOf(r.share)
		r.score = &s
		r.confidence = nriFallbackConfidence
	}
	r.confidence = round2(r.confidence)
	r.indicators, r.sources = e.indicatorsOut(mi, &r, site.CountyFIPS)
	r.perilOut = e.perilsOut(&r)
	r.evidence, r.evidenceID = evidence(&r, r.driver)
	r.narrative = e.narrative(&r, county)
	r.keyReason = keyReason(&r)
	return r
}

// countyOnly reports whether every weighted indicator is a county value,
// a mean or allocated to the site.
func countyOnly(os []obs) bool {
	found := false
	for _, o := range os {
		if o.weight <= 0 {
			continue
		}
		// A county's figures allocated to the site are still county
		// data: finer than a mean, not a measurement at the site.
		if o.res != hazard.ResCounty && o.res != hazard.ResCountyAllocated {
			return false
		}
		found = true
	}
	return found
}

// pct1 is a share as a percentile with one decimal, rounded down so the
// stated "more than X%" holds.
func pct1(share float64) float64 {
	return math.Floor(share*1000+1e-7) / 10
}

// indicatorsOut writes the module's indicators, then its NRI benchmarks, and
// collects the sources they cite.
func (e *Engine) indicatorsOut(mi int, r *moduleResult, fips string) ([]Indicator, []string) {
	out := make([]Indicator, 0, len(r.meas.Indicators)+len(r.spec.Perils))
	sourceSet := map[string]bool{}
	k := 0
	for _, in := range r.meas.Indicators {
		o := Indicator{ID: in.ID, Label: in.Label, Unit: in.Unit, Source: in.Source,
			Peril: in.Peril, Resolution: in.Resolution.Kind, ResolutionDetail: in.Resolution.Detail, Vintage: e.vintage(in.Source)}
		// A name has no number; any other value keeps its number beside
		// its wording ("none within 100 km" is the capped distance).
		if in.Unit != "name" {
			v := roundIndicator(in.Value, in.Unit)
			o.Value = &v
		}
		if in.Text != "" {
			t := in.Text
			o.Text = &t
		}
		switch {
		case in.Percentile != nil:
			p := round1(*in.Percentile)
			o.Percentile = &p
		case in.Ranked:
			if s := r.shares[k]; !math.IsNaN(s) {
				p := pct1(s)
				o.Percentile = &p
			}
			k++
		}
		sourceSet[in.Source] = true
		out = append(out, o)
	}
	for _, p := range r.spec.Perils {
		for _, code := range p.NRI {
			s := e.nri.Hazard(fips, code)
			label := fmt.Sprintf("FEMA NRI %s risk score for the county (expected-annual-loss benchmark, rating: %s)", e.nri.HazardName(code), s.Rating)
			in := Indicator{ID: "nri_" + strings.ToLower(code) + "_score", Label: label, Unit: "score 0-100", Source: "fema-nri-v1.20",
				Peril: p.Key, Resolution: hazard.ResCounty, ResolutionDetail: "county", Vintage: e.vintage("fema-nri-v1.20")}
			if s.OK {
				v := round1(s.Score)
				in.Value = &v
				if d := e.ref.nri[code]; !d.empty() {
					pc := pct1(d.below(s.Score))
					in.Percentile = &pc
				}
			} else {
				// No score ("Not Applicable", "Insufficient Data"): null,
				// with FEMA's rating as the wording.
				rating := s.Rating
				in.Text = &rating
			}
			out = append(out, in)
			sourceSet["fema-nri-v1.20"] = true
		}
	}
	var sources []string
	for id := range sourceSet {
		if id != "" {
			sources = append(sources, id)
		}
	}
	sort.Strings(sources)
	return out, sources
}

// perilsOut writes each peril's score, probability and resolution.
func (e *Engine) perilsOut(r *moduleResult) []Peril {
	out := make([]Peril, len(r.spec.Perils))
	for pi, ps := range r.spec.Perils {
		p := Peril{Peril: ps.Key, Title: ps.Title}
		pr := r.perils[pi]
		if !math.IsNaN(pr.share) {
			s := scoreOf(pr.share)
			if len(r.spec.Perils) == 1 && r.basis == basisHazard && r.score != nil {
				// A module of one peril shows one number: its peril's
				// value is the module's, and the module's score (any cap
				// included) is the one both state (docs/methodology.md,
				// "The scoring chain").
				s = *r.score
			}
			lvl := RiskLevel(s)
			c := confidenceOf(round2(pr.conf * r.meas.Quality))
			p.Score, p.RiskLevel, p.Confidence = &s, &lvl, &c
			p.Resolution = perilResolution(r.os, pi)
			if in, ok := annualChance(r.meas.Indicators, ps.Key); ok && in.Value > 0 {
				prob := roundValue(in.Value)
				p.AnnualProbability = &prob
				p.ProbabilityBasis = in.Label
				p.ChanceOf = ps.ChanceOf
				// Past 1 in 100,000 years a return period drawn from a
				// record of decades says nothing: it is left out.
				if in.Value >= minAnnualChance {
					rp := returnPeriod(in.Value)
					p.ReturnPeriodYears = &rp
				}
			}
		}
		out[pi] = p
	}
	return out
}

// perilResolution is the resolution kind of a peril's weighted indicators,
// or "mixed" when they differ.
func perilResolution(os []obs, peril int) string {
	kind := ""
	for _, o := range os {
		if o.peril != peril || o.weight <= 0 {
			continue
		}
		if kind != "" && kind != o.res {
			return "mixed"
		}
		kind = o.res
	}
	return kind
}

func annualChance(ins []hazard.Indicator, peril string) (hazard.Indicator, bool) {
	for _, in := range ins {
		if in.AnnualChance && in.Peril == peril {
			return in, true
		}
	}
	return hazard.Indicator{}, false
}

// returnPeriod is 1/p in years, to two significant digits.
func returnPeriod(p float64) float64 {
	rp := 1 / p
	f, _ := strconv.ParseFloat(strconv.FormatFloat(rp, 'g', 2, 64), 64)
	return f
}

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

func indicatorByID(ins []hazard.Indicator, id string) (hazard.Indicator, bool) {
	for _, in := range ins {
		if in.ID == id {
			return in, true
		}
	}
	return hazard.Indicator{}, false
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

func (e *Engine) moduleIndex(key string) int {
	for i, s := range e.specs {
		if s.Key == key {
			return i
		}
	}
	return -1
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

func joinWords(w []string) string {
	switch len(w) {
	case 0:
		return ""
	case 1:
		return w[0]
	}
	return strings.Join(w[:len(w)-1], ", ") + " and " + w[len(w)-1]
}

const methodologyDescription = "Every score is a population-weighted percentile: the share of US residents (2020 Census tract centres of population) " +
	"whose own value of the same hazard quantity is lower, so a score of 80 means more hazardous than 80% of US residents. " +
	"A peril's hazard value is the weighted mean of its indicators' percentiles; a module's is its highest peril percentile; " +
	"the overall hazard index is one minus the product, over scored modules, of the share of residents at or above the site. Each is ranked again. " +
	"FEMA National Risk Index county scores are shown as expected-annual-loss benchmarks and used as the score only where no hazard layer covers the location. " +
	"Every indicator states its resolution (site, grid, reported events or county), its source and the vintage of its data."

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

// benchHigh names, per peril of spec, the FEMA NRI rating of the county
// that agrees with a high priority ("Relatively High" or "Very High" for
// one of the peril's benchmark hazards), or "" where none does.
func (e *Engine) benchHigh(spec *ModuleSpec, fips string) []string {
	out := make([]string, len(spec.Perils))
	for pi, p := range spec.Perils {
		for _, code := range p.NRI {
			if s := e.nri.Hazard(fips, code); s.OK && (s.Rating == "Relatively High" || s.Rating == "Very High") {
				out[pi] = "NRI " + strings.ToLower(e.nri.HazardName(code)) + " rated " + strconv.Quote(s.Rating)
				break
			}
		}
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

func confidenceOf(score float64) Confidence {
	level := "low"
	switch {
	case score >= 0.75:
		level = "high"
	case score >= 0.5:
		level = "medium"
	}
	return Confidence{Level: level, Score: score}
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }
func round2(v float64) float64 { return math.Round(v*100) / 100 }

// roundValue keeps indicator values readable without losing small
// probabilities: four significant digits.
func roundValue(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return f
}

// roundIndicator is roundValue except for whole counts, which are shown
// exactly: a county's 65,222 policies in force stay 65,222, as the
// narrative and the source say (docs/methodology.md, Hydrology module).
func roundIndicator(v float64, unit string) float64 {
	if unit == "count" && v == math.Trunc(v) && !math.IsInf(v, 0) {
		return v
	}
	return roundValue(v)
}

func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func formatValue(v float64, unit string) string {
	s := formatNumber(roundIndicator(v, unit))
	switch unit {
	case "", "count", "index", "score 0-100":
		return s
	case "probability":
		if v == 0 {
			return "none on record"
		}
		return formatNumber(roundValue(v*100)) + "%"
	case "percent":
		return s + "%"
	case "km":
		switch {
		case v < 0.01:
			return "under 0.01 km"
		case v < 1:
			return strconv.FormatFloat(v, 'f', 2, 64) + " km"
		}
		return strconv.FormatFloat(v, 'f', 1, 64) + " km"
	}
	return s + " " + unit
}
