package wildfire

import (
	"math"

	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// Resolutions: WRC values are means over the county's housing units; WHP
// shares are shares of the county's 270 m cells.
var (
	resAllocated = hazard.Resolution{Kind: hazard.ResCountyAllocated, Detail: "county's homes by exposure class, allocated by shelter from wildland (density within 2 and 5 km, relief within 5 km)"}
	resDensity   = hazard.Resolution{Kind: hazard.ResSite, Detail: "2020 block-group centres of population within 2 km"}
	resHousing   = hazard.Resolution{Kind: hazard.ResCounty, Detail: "county, housing-unit weighted"}
	resWHP2020   = hazard.Resolution{Kind: hazard.ResCounty, Detail: "county area share (270 m cells, water included)"}
	resWHP2014   = hazard.Resolution{Kind: hazard.ResCounty, Detail: "county land area share"}
	resFuture    = hazard.Resolution{Kind: hazard.ResCounty, Detail: "county"}
)

// Weights of the scored indicators' shares in the peril's hazard value
// (docs/methodology.md, wildfire module). All three are WRC measures taken
// at the county's homes:
//   - the expected share of homes reached by fire each year counts every
//     home, those WRC finds out of reach of wildland fire at zero: it is the
//     county's best single estimate of how likely fire is to reach a home
//     there, so it carries the most;
//   - the relative risk per home adds how destructive fire would be where it
//     reaches homes (intensity and susceptibility), over all homes;
//   - the burn probability of the exposed homes keeps the likelihood that a
//     home at the wildland edge faces where few of the county's homes are
//     exposed; it ignores how many are, the county-to-site leak the module
//     is built to avoid, so it carries the least.
//
// Where one is missing, the engine's weighted mean runs over those present.
const (
	weightHomesExposedShare  = 0.40
	weightRelativeRiskToHome = 0.35
	weightBurnProbability    = 0.25
)

// Weights where the site is allocated to an exposure class
// (docs/methodology.md, "Wildfire at the address"): the class's burn
// probability (how likely fire reaches such a home) and its relative risk
// per home (likelihood times how destructive fire is there) say the same
// thing about one home from two sides, so they weigh alike. The county-wide
// share of homes reached is then context: the class values already
// reproduce it over the county's residents.
const (
	weightClassBurnProbability = 0.5
	weightClassRiskPerHome     = 0.5
)

// Measure returns the county's wildfire indicators. Context indicators'
// Percentile points into the module's read-only tables; callers must not
// write through it. Notes are shared too and have no spare capacity, so an
// append copies them.
func (m *Module) Measure(site hazard.Site) hazard.Measurement {
	out := hazard.Measurement{}
	c := m.lookup(site.CountyFIPS)
	if c == nil {
		out.Notes = m.noData
		return out
	}
	ins := make([]hazard.Indicator, 0, 11)
	notes := c.notes
	if class, weights, density, ok := m.allocate(site, c); ok {
		ins = appendClassIndicators(ins, c, class, weights, density)
		// Written per site rather than kept for every county and class:
		// six sentences for each of 3,141 counties held 11 MB.
		notes = classNotesFor(c, class, weights[class] < 1)
	} else {
		ins = appendCountyIndicators(ins, c)
	}
	if c.has&hasWHP2020 != 0 {
		ins = append(ins, hazard.Indicator{
			ID:         IDWHP2020HighShare,
			Label:      "Share of the county's area rated high or very high Wildfire Hazard Potential (USFS, 2020)",
			Value:      c.whp2020,
			Unit:       "percent",
			Source:     SourceWHP2020,
			Peril:      hazard.PerilWildfire,
			Resolution: resWHP2020,
			Ranked:     true,
		})
	}
	if c.has&hasWHP2014 != 0 {
		ins = append(ins, hazard.Indicator{
			ID:         IDWHP2014HighShare,
			Label:      "Share of the county's land rated high or very high Wildfire Hazard Potential (USFS, 2014)",
			Value:      c.whp2014,
			Unit:       "percent",
			Source:     SourceWHP2014,
			Peril:      hazard.PerilWildfire,
			Resolution: resWHP2014,
			Ranked:     true,
		})
	}
	for i := range futureIDs {
		if !c.hasFuture(i) {
			continue
		}
		ins = append(ins, hazard.Indicator{
			ID:         futureIDs[i],
			Label:      futureLabels[i],
			Value:      c.future[i],
			Unit:       "score",
			Source:     SourceFuture,
			Peril:      hazard.PerilWildfire,
			Resolution: resFuture,
			Percentile: &c.future[i],
		})
	}
	out.Indicators = ins
	out.Quality = c.quality
	out.Notes = notes
	return out
}

// appendClassIndicators appends the scored measures of a site allocated
// to class, with where it stands as context.
func appendClassIndicators(ins []hazard.Indicator, c *county, class int, weights [3]float64, density float64) []hazard.Indicator {
	r := &c.wrc
	var bp, rps float64
	for k, w := range weights {
		bp += w * r.classBP[k]
		rps += w * r.classRPS[k]
	}
	ins = append(ins,
		wrcIndicator(IDBurnProbability, "Annual burn probability of a home at the site: the means of the county's exposure classes, weighted by where its shelter from wildland ranks it (USFS Wildfire Risk to Communities, 2020)",
			bp, "probability", resAllocated, weightClassBurnProbability, true),
		wrcIndicator(IDRelativeRiskToHome, "Expected annual relative wildfire risk per home at the site: the county's exposure classes' means, weighted by where its shelter from wildland ranks it (USFS Wildfire Risk to Communities, 2020)",
			rps, "index", resAllocated, weightClassRiskPerHome, false),
		hazard.Indicator{
			ID:         IDExposureClass,
			Label:      "Wildfire exposure class the site is allocated to among the county's homes (0 not exposed, 1 indirectly, 2 directly exposed)",
			Value:      float64(class),
			Unit:       "class",
			Source:     SourceWRC,
			Peril:      hazard.PerilWildfire,
			Resolution: resAllocated,
			Text:       classWords[class],
		},
		hazard.Indicator{
			ID:         IDLocalDensity,
			Label:      "Residents per square kilometre within 2 km (2020 Census block-group centres of population)",
			Value:      math.Round(density),
			Unit:       "residents per km2",
			Source:     populationSource,
			Peril:      hazard.PerilWildfire,
			Resolution: resDensity,
		})
	if c.has&hasExposed != 0 {
		ins = append(ins, wrcIndicator(IDHomesExposedShare, homesShareLabel, r.homesShare, "probability", resHousing, 0, false))
	}
	return ins
}

// appendCountyIndicators appends the county means every site of a county
// without a class split or density profile gets.
func appendCountyIndicators(ins []hazard.Indicator, c *county) []hazard.Indicator {
	r := &c.wrc
	if c.has&hasBP != 0 {
		ins = append(ins, wrcIndicator(IDBurnProbability, "Annual burn probability, mean over the county's homes exposed to wildfire (USFS Wildfire Risk to Communities, 2020)",
			r.bp, "probability", resHousing, weightBurnProbability, true))
	}
	if c.has&hasExposed != 0 {
		ins = append(ins, wrcIndicator(IDHomesExposedShare, homesShareLabel, r.homesShare, "probability", resHousing, weightHomesExposedShare, false))
	}
	if c.has&hasRisk != 0 {
		ins = append(ins, wrcIndicator(IDRelativeRiskToHome, "Expected annual relative wildfire risk per home, all the county's homes (USFS Wildfire Risk to Communities, 2020)",
			r.riskPerHome, "index", resHousing, weightRelativeRiskToHome, false))
	}
	return ins
}

const homesShareLabel = "Expected share of all the county's homes reached by wildfire each year (USFS Wildfire Risk to Communities, 2020)"

// wrcIndicator is a ranked wildfire indicator read from WRC; weight 0
// makes it context, annual marks the peril's annual chance.
func wrcIndicator(id, label string, v float64, unit string, res hazard.Resolution, weight float64, annual bool) hazard.Indicator {
	in := hazard.Indicator{
		ID:           id,
		Label:        label,
		Value:        v,
		Unit:         unit,
		Source:       SourceWRC,
		Peril:        hazard.PerilWildfire,
		Resolution:   res,
		Ranked:       true,
		Weight:       weight,
		AnnualChance: annual,
	}
	switch {
	case id == IDRelativeRiskToHome:
		// The relative risk multiplies the burn probability by the
		// damage fire would do; narratives cite the probability, which
		// an underwriter can read (hazard.Indicator.Basis).
		in.Basis = IDBurnProbability
	case annual && v == 0:
		// A modelled zero, not a missing record.
		in.Text = "zero: WRC models no wildfire reaching these homes"
	}
	return in
}

// populationSource is the catalog id of the block-group centres
// (internal/risk/population), cited by the density indicator.
const populationSource = "census-cenpop-2020-blockgroups"
