package risk

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/coverage"
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
	// The outlook is context beside what summarise decided, built from
	// its own table, so it changes none of it.
	o := e.outlook(county)
	a.Summary.Outlook, a.Summary.OutlookUnavailable = o.brief, o.unavailable
	a.Report.Outlook, a.Report.OutlookUnavailable = o.full, o.unavailable
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
// the same chain the reference was built with (reference_build.go).
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

func indicatorByID(ins []hazard.Indicator, id string) (hazard.Indicator, bool) {
	for _, in := range ins {
		if in.ID == id {
			return in, true
		}
	}
	return hazard.Indicator{}, false
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

func (e *Engine) moduleIndex(key string) int {
	for i, s := range e.specs {
		if s.Key == key {
			return i
		}
	}
	return -1
}
