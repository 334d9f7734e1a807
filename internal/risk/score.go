package risk

import (
	"math"

	"github.com/locrisk/locrisk/internal/risk/hazard"
	"github.com/locrisk/locrisk/internal/risk/nri"
)

// The scoring chain (docs/methodology.md): every ranked indicator's value is
// ranked among US residents; a peril's hazard value is the weighted mean of
// its indicators' shares, ranked again; a module's hazard value is the
// highest of its perils' shares, ranked again; the overall hazard index
// combines the module shares and is ranked once more. Each rank is read from
// the population-weighted reference, so every score is the share of US
// residents whose own value of the same quantity is lower.

// resolutionConfidence is how well an indicator of a resolution describes
// the site itself, before the module's data quality (docs/methodology.md,
// "Confidence").
func resolutionConfidence(kind string) float64 {
	switch kind {
	case hazard.ResSite:
		return 0.9
	case hazard.ResGrid:
		return 0.85
	case hazard.ResPlaceTable:
		return 0.7
	case hazard.ResReportedEvents, hazard.ResCountyAllocated:
		return 0.6
	case hazard.ResCounty:
		return 0.5
	}
	return 0.4
}

// Confidence of a module scored from the FEMA NRI county benchmark alone.
const nriFallbackConfidence = 0.3

// divergenceShare is the share of residents, per module, whose site score
// and NRI benchmark score differ the most: benchmark_divergence fires for
// them only. Over all modules together it fires for about 5% of residents
// (docs/methodology.md, "Review flags").
const divergenceShare = 0.01

// countyFlagMinimum is the module score from which a module resting on
// county averages alone raises county_level_data_only: below moderate the
// coarse evidence changes no decision.
const countyFlagMinimum = scoreModerate

// obs is one ranked indicator as scoring needs it.
type obs struct {
	id     string
	peril  int // index into the module's perils, -1 for module context
	weight float64
	value  float64
	res    string
}

// observations extracts the ranked indicators of a measurement.
func observations(spec *ModuleSpec, meas *hazard.Measurement, buf []obs) []obs {
	out := buf[:0]
	for _, in := range meas.Indicators {
		if !in.Ranked || in.Percentile != nil {
			continue
		}
		out = append(out, obs{id: in.ID, peril: perilIndex(spec, in.Peril), weight: in.Weight, value: in.Value, res: in.Resolution.Kind})
	}
	return out
}

func perilIndex(spec *ModuleSpec, key string) int {
	for i, p := range spec.Perils {
		if p.Key == key {
			return i
		}
	}
	return -1
}

// perilResult is one peril's outcome at a site.
type perilResult struct {
	value float64 // combined hazard value; NaN where no indicator covers the site
	share float64 // population share below; NaN where value is
	conf  float64 // resolution confidence of its weighted indicators
}

// perilValues combines each peril's weighted indicator shares (their
// weighted mean) and its resolution confidence. shares are the indicator
// shares in obs order.
func perilValues(nPerils int, os []obs, shares []float64, out []perilResult) []perilResult {
	out = out[:0]
	for p := 0; p < nPerils; p++ {
		var sum, wsum, csum float64
		for i, o := range os {
			if o.peril != p || o.weight <= 0 || math.IsNaN(shares[i]) {
				continue
			}
			sum += o.weight * shares[i]
			csum += o.weight * resolutionConfidence(o.res)
			wsum += o.weight
		}
		r := perilResult{value: math.NaN(), share: math.NaN()}
		if wsum > 0 {
			r.value, r.conf = sum/wsum, csum/wsum
		}
		out = append(out, r)
	}
	return out
}

// moduleValue is the highest peril share, and the index of that peril
// (the first one on ties); NaN and -1 when no peril has data.
//
// A module whose data cover fewer than half of its perils has no hazard
// value: its highest measured peril would be a floor, not the module's
// hazard (Alaska's severe weather is measured for tornadoes only), so the
// module falls back to the NRI benchmark, or null.
func moduleValue(perils []perilResult) (float64, int) {
	best, at, measured := math.NaN(), -1, 0
	for i, p := range perils {
		if math.IsNaN(p.share) {
			continue
		}
		measured++
		if at < 0 || p.share > best {
			best, at = p.share, i
		}
	}
	if 2*measured < len(perils) {
		return math.NaN(), -1
	}
	return best, at
}

// benchmarkScore reports whether an NRI score can serve as a benchmark:
// it has a score, and the score is not FEMA's "No Rating" (a hazard that
// can occur but is not expected to cause loss), which reads as 0.
func benchmarkScore(s nri.Score) bool {
	return s.OK && s.Rating != "No Rating"
}

// overallValue is the overall hazard index of a site from its module shares
// (NaN entries are modules without a score): one minus the product of the
// shares of residents at or above the site on each module, i.e. the share
// of residents the site exceeds on at least one module if modules were
// independent. The worst module dominates and breadth still counts.
func overallValue(shares []float64) float64 {
	prod, any := 1.0, false
	for _, s := range shares {
		if math.IsNaN(s) {
			continue
		}
		prod *= 1 - s
		any = true
	}
	if !any {
		return math.NaN()
	}
	return 1 - prod
}
