package risk

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"locrisk/risk/coverage"
	"locrisk/risk/data"
	"locrisk/risk/geo"
	"locrisk/risk/hazard"
	"locrisk/risk/nri"
)

// Thresholds and weights of the scoring method (docs/methodology.md).
const (
	countyLineKm         = 2.0  // closer than this to another county's boundary raises near_county_line
	benchmarkGap         = 50.0 // |own score - NRI score| at or above this raises benchmark_divergence
	countyLevelFactor    = 0.85 // confidence multiplier when a module rests on county aggregates only
	nriFallbackScore     = 0.35 // confidence of a module scored from the NRI benchmark alone
	topRiskMinimum       = 20   // modules below this (very_low) are not listed as top risks
	overallWeightTop     = 0.4  // overall = 0.4*highest + 0.2*second highest + 0.4*mean of all
	overallWeightSecond  = 0.2
	overallWeightAverage = 0.4
)

// moduleInfo is the fixed per-module text and NRI benchmark mapping.
type moduleInfo struct {
	title string   // "Severe weather"
	noun  string   // "severe weather hazard"
	nri   []string // NRI hazard codes shown as benchmarks, in order
}

var modulesInfo = map[string]moduleInfo{
	hazard.Hydrology:             {"Hydrology", "flood hazard", []string{"IFLD", "CFLD"}},
	hazard.SevereWeather:         {"Severe weather", "severe weather hazard", []string{"TRND", "HRCN", "HAIL", "SWND"}},
	hazard.Wildfire:              {"Wildfire", "wildfire hazard", []string{"WFIR"}},
	hazard.Earthquake:            {"Earthquake", "earthquake hazard", []string{"ERQK"}},
	hazard.Landslide:             {"Landslide", "landslide hazard", []string{"LNDS"}},
	hazard.EnvironmentalExposure: {"Environmental exposure", "environmental exposure", nil},
}

// ModuleTitle is a module's display name ("Severe weather").
func ModuleTitle(module string) string { return modulesInfo[module].title }

// moduleResult is one module's outcome before it is written into the report.
type moduleResult struct {
	name        string
	score       *int
	basis       string
	confidence  float64
	countyLevel bool
	indicators  []Indicator
	narrative   string
	keyReason   string
	benchmarks  []nri.Score
	sources     []string
	flags       []hazard.Flag
}

// Assess scores the point on all six modules. It returns
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
	site := siteFor(p, county)
	results := make([]moduleResult, len(e.modules))
	for i, m := range e.modules {
		results[i] = e.scoreModule(m, site, county)
	}
	a := &Assessment{
		Location:    locationOf(lat, lon, county),
		DataVersion: e.dataVersion,
	}
	e.summarise(a, results, county, borderKm)
	return a, nil
}

// scoreModule measures one module and turns its indicators into a score.
func (e *Engine) scoreModule(m hazard.Module, site hazard.Site, county *coverage.County) moduleResult {
	info := modulesInfo[m.Name()]
	meas := m.Measure(site)
	r := moduleResult{name: m.Name(), flags: meas.Flags, countyLevel: meas.CountyLevelOnly}
	sourceSet := map[string]bool{}
	var weighted, weightSum float64
	bestPct, bestLine := -1.0, ""
	for _, in := range meas.Indicators {
		out := Indicator{ID: in.ID, Label: in.Label, Unit: in.Unit, Source: in.Source, Value: roundValue(in.Value)}
		if in.Text != "" {
			out.Value = in.Text
		}
		switch {
		case in.Percentile != nil:
			p := round1(*in.Percentile)
			out.Percentile = &p
		case in.Ranked:
			if p, ok := percentile(e.reference[refKey(m.Name(), in.ID)], in.Value); ok {
				p = round1(p)
				out.Percentile = &p
				if in.Weight > 0 {
					weighted += in.Weight * p
					weightSum += in.Weight
					if p > bestPct {
						bestPct = p
						bestLine = fmt.Sprintf("%s: %s (higher than %s%% of US places)", in.Label, formatValue(in.Value, in.Unit), formatNumber(p))
					}
				}
			}
		}
		sourceSet[in.Source] = true
		r.indicators = append(r.indicators, out)
	}

	// NRI benchmarks, shown beside the module's own indicators.
	for _, code := range info.nri {
		s := e.nri.Hazard(site.CountyFIPS, code)
		r.benchmarks = append(r.benchmarks, s)
		label := fmt.Sprintf("FEMA NRI %s risk score for the county (expected-annual-loss benchmark, rating: %s)", e.nri.HazardName(code), s.Rating)
		in := Indicator{ID: "nri_" + strings.ToLower(code) + "_score", Label: label, Unit: "score 0-100", Source: "fema-nri-v1.20"}
		if s.OK {
			v := round1(s.Score)
			in.Value, in.Percentile = v, &v
		} else {
			in.Value = s.Rating
		}
		r.indicators = append(r.indicators, in)
		sourceSet["fema-nri-v1.20"] = true
	}

	switch {
	case weightSum > 0:
		s := clampScore(weighted / weightSum)
		r.score, r.basis = &s, "hazard_data"
		r.confidence = meas.Confidence
		if meas.CountyLevelOnly {
			r.confidence *= countyLevelFactor
		}
		r.keyReason = bestLine
	case e.nriFallback(r.benchmarks) >= 0:
		s := clampScore(e.nriFallback(r.benchmarks))
		r.score, r.basis = &s, "nri_fallback"
		r.confidence = nriFallbackScore
		r.countyLevel = true
		r.keyReason = "FEMA NRI county benchmark used because no hazard layer covers this location"
	default:
		r.basis = "no_data"
	}
	r.confidence = round2(r.confidence)
	for id := range sourceSet {
		if id != "" {
			r.sources = append(r.sources, id)
		}
	}
	sort.Strings(r.sources)
	r.narrative = narrative(info, r, meas.Notes, county)
	return r
}

// nriFallback is the highest available NRI benchmark score, or -1.
func (e *Engine) nriFallback(bench []nri.Score) float64 {
	best := -1.0
	for _, b := range bench {
		if b.OK && b.Score > best {
			best = b.Score
		}
	}
	return best
}

func narrative(info moduleInfo, r moduleResult, notes []string, county *coverage.County) string {
	var b strings.Builder
	switch r.basis {
	case "hazard_data":
		fmt.Fprintf(&b, "The %s at this location is %s: a score of %d means it is more hazardous than about %d%% of US places.",
			info.noun, levelWords(RiskLevel(*r.score)), *r.score, *r.score)
	case "nri_fallback":
		fmt.Fprintf(&b, "No site-level hazard layer covers this location, so the %s score of %d is FEMA's National Risk Index score for %s, a county measure of expected annual loss rather than of hazard at the site.",
			info.noun, *r.score, county.Name)
	default:
		fmt.Fprintf(&b, "No data set available to locrisk covers the %s at this location, so no score is given; this is not a finding of low hazard.", info.noun)
	}
	for _, n := range notes {
		b.WriteString(" ")
		b.WriteString(n)
	}
	for i, code := range info.nri {
		// One benchmark sentence is enough: the first available NRI score.
		if bm := r.benchmarks[i]; bm.OK && r.basis == "hazard_data" {
			fmt.Fprintf(&b, " For comparison, FEMA's National Risk Index rates %s %s for %s expected annual loss (score %s), which reflects the county's exposed property and population as well as the hazard.",
				county.Name, strconv.Quote(bm.Rating), strings.ToLower(nriHazardWord(code)), formatNumber(round1(bm.Score)))
			break
		}
	}
	return b.String()
}

func nriHazardWord(code string) string {
	switch code {
	case "IFLD":
		return "inland flooding"
	case "CFLD":
		return "coastal flooding"
	case "TRND":
		return "tornado"
	case "HRCN":
		return "hurricane"
	case "HAIL":
		return "hail"
	case "SWND":
		return "strong wind"
	case "WFIR":
		return "wildfire"
	case "ERQK":
		return "earthquake"
	case "LNDS":
		return "landslide"
	}
	return code
}

func levelWords(level string) string {
	return strings.ReplaceAll(level, "_", " ")
}

// summarise fills the summary and full report from the module results.
func (e *Engine) summarise(a *Assessment, results []moduleResult, county *coverage.County, borderKm float64) {
	s := &a.Summary
	full := &a.Report
	mods := full.Modules.ModuleList()
	sourceSet := map[string]bool{"census-counties-2023": true, "census-gazetteer-2019": true}
	var scores []int
	var confSum float64
	var flags []ReviewFlag
	var countyLevel, fallback []string
	for i, r := range results {
		mr := mods[i].Report
		mr.Score = r.score
		mr.Basis = r.basis
		mr.Indicators = r.indicators
		if mr.Indicators == nil {
			mr.Indicators = []Indicator{}
		}
		mr.Narrative = r.narrative
		mr.Confidence = confidenceOf(r.confidence)
		for _, id := range r.sources {
			sourceSet[id] = true
		}
		setModuleScore(&s.ModuleScores, r.name, r.score)
		title := modulesInfo[r.name].title
		if r.score == nil {
			flags = append(flags, ReviewFlag{"module_no_data", fmt.Sprintf("%s: no data covers this location, so the module has no score and the overall score is computed from the other modules.", title)})
			continue
		}
		lvl := RiskLevel(*r.score)
		mr.RiskLevel = &lvl
		scores = append(scores, *r.score)
		confSum += r.confidence
		if r.basis == "nri_fallback" {
			fallback = append(fallback, title)
		} else if r.countyLevel {
			countyLevel = append(countyLevel, title)
		}
		if r.basis == "hazard_data" {
			for j, bm := range r.benchmarks {
				if bm.OK && math.Abs(bm.Score-float64(*r.score)) >= benchmarkGap {
					flags = append(flags, ReviewFlag{"benchmark_divergence", fmt.Sprintf("%s: the site score %d and FEMA's NRI %s score %s for %s differ by %d points or more; NRI measures the county's expected loss, which grows with its property and population.",
						title, *r.score, nriHazardWord(modulesInfo[r.name].nri[j]), formatNumber(round1(bm.Score)), county.Name, int(benchmarkGap))})
					break
				}
			}
		}
		for _, f := range r.flags {
			flags = append(flags, ReviewFlag{f.Code, f.Message})
		}
	}

	// Location-level flags first, then module flags in module order.
	var lead []ReviewFlag
	if borderKm < countyLineKm {
		lead = append(lead, ReviewFlag{"near_county_line", fmt.Sprintf("The point is %s km from another county's boundary; county-level indicators may belong to the neighbouring county.", formatNumber(round1(borderKm)))})
	}
	if county.Territory {
		lead = append(lead, ReviewFlag{"territory_partial_data", fmt.Sprintf("%s is a US territory; several national hazard data sets do not cover it, so some modules rest on fewer indicators.", county.StateName)})
	}
	if len(countyLevel) > 0 {
		lead = append(lead, ReviewFlag{"county_level_data_only", "Scored from county-level data only (no site-level layer): " + strings.Join(countyLevel, ", ") + "."})
	}
	if len(fallback) > 0 {
		lead = append(lead, ReviewFlag{"nri_benchmark_fallback", "Scored from the FEMA NRI county benchmark because no hazard layer covers the location: " + strings.Join(fallback, ", ") + "."})
	}
	s.ReviewFlags = append(lead, flags...)

	s.OverallScore = overallScore(scores)
	s.RiskLevel = RiskLevel(s.OverallScore)
	// Modules without data count as zero confidence: the less we cover, the
	// less the overall score can be trusted.
	s.Confidence = confidenceOf(round2(confSum / float64(len(results))))
	s.TopRisks = topRisks(results)
	s.Recommendations = recommendations(results)

	for _, src := range data.Catalog() {
		if sourceSet[src.ID] {
			full.Sources = append(full.Sources, SourceRef{ID: src.ID, Name: src.Name, Publisher: src.Publisher, Version: src.Version, Resolution: src.Resolution})
		}
	}
	full.Methodology = Methodology{Version: MethodologyVersion, Description: methodologyDescription}
}

const methodologyDescription = "Each module score is the national percentile (0-100) of the module's hazard indicators, " +
	"weighted, against the Census Gazetteer county interior points: a score of 80 means more hazardous than 80% of US places. " +
	"FEMA National Risk Index county scores are shown as expected-annual-loss benchmarks and used as the score only where no hazard layer covers the location. " +
	"The overall score is 0.4 x the highest module score + 0.2 x the second highest + 0.4 x the mean of all scored modules. " +
	"See docs/methodology.md for formulas, radii, data vintages and limitations."

// overallScore weights the worst hazards most, since one severe hazard is
// what drives an underwriting decision, while still rising with breadth.
func overallScore(scores []int) int {
	if len(scores) == 0 {
		return 0
	}
	sorted := append([]int(nil), scores...)
	sort.Sort(sort.Reverse(sort.IntSlice(sorted)))
	sum := 0
	for _, v := range sorted {
		sum += v
	}
	mean := float64(sum) / float64(len(sorted))
	second := float64(sorted[0])
	if len(sorted) > 1 {
		second = float64(sorted[1])
	}
	return clampScore(overallWeightTop*float64(sorted[0]) + overallWeightSecond*second + overallWeightAverage*mean)
}

func topRisks(results []moduleResult) []TopRisk {
	var scored []moduleResult
	for _, r := range results {
		if r.score != nil && *r.score >= topRiskMinimum {
			scored = append(scored, r)
		}
	}
	// Stable sort keeps report module order among equal scores.
	sort.SliceStable(scored, func(i, j int) bool { return *scored[i].score > *scored[j].score })
	out := []TopRisk{}
	for i := 0; i < len(scored) && i < 3; i++ {
		r := scored[i]
		reason := r.keyReason
		if reason == "" {
			reason = modulesInfo[r.name].title + " score from available data"
		}
		out = append(out, TopRisk{Module: r.name, Score: *r.score, RiskLevel: RiskLevel(*r.score), Reason: reason})
	}
	return out
}

func setModuleScore(ms *ModuleScores, name string, score *int) {
	switch name {
	case hazard.Hydrology:
		ms.Hydrology = score
	case hazard.SevereWeather:
		ms.SevereWeather = score
	case hazard.Wildfire:
		ms.Wildfire = score
	case hazard.Earthquake:
		ms.Earthquake = score
	case hazard.Landslide:
		ms.Landslide = score
	case hazard.EnvironmentalExposure:
		ms.EnvironmentalExposure = score
	}
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

func clampScore(v float64) int {
	s := int(math.Round(v))
	return max(0, min(100, s))
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

func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func formatValue(v float64, unit string) string {
	s := formatNumber(roundValue(v))
	switch unit {
	case "", "count", "index", "score 0-100":
		return s
	case "probability":
		return formatNumber(roundValue(v*100)) + "%"
	case "percent":
		return s + "%"
	}
	return s + " " + unit
}
