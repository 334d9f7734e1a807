// Package earthquake measures earthquake hazard at a site from public USGS
// data (docs/methodology.md, "Earthquake"):
//
//   - the 2018 National Seismic Hazard Model (NSHM) peak ground acceleration
//     with a 2% chance of exceedance in 50 years, site class B/C, bilinearly
//     interpolated on its 0.05-degree grid (conterminous states only): how
//     hard the ground can shake;
//   - the annual chance of an M5+ earthquake within 50 km, from the
//     historical rate of earthquakes within 50 km: the declustered NSHM
//     2014 catalogs (through 2012) in the conterminous states, and ComCat
//     M4+ events 1996-2018, declustered here, in Alaska and Hawaii, scaled
//     to M5+ with a Gutenberg-Richter b-value (Poisson model): how often
//     damaging shaking comes;
//   - the distance to the nearest mapped active fault section of the NSHM
//     2023 fault database (western states), named in the narrative.
//
// Limits: the PGA is a rock-site (B/C) value that ignores local soil, and the
// 2018 model is not the 2023 update; the catalog estimate reflects only
// where earthquakes happened in the record and counts epicentres regardless
// of depth. Where Alaska's or Hawaii's 23-year record counts fewer than
// three events nearby, that is no evidence of low hazard: the module then
// gives no weighted indicator, and the engine falls back to the labelled NRI
// benchmark. Puerto Rico and the other territories, and the Aleutians west
// of 180 degrees, are not covered by any of these data sets.
package earthquake

import (
	"fmt"
	"maps"
	"math"

	"locrisk/risk/data"
	"locrisk/risk/geo"
	"locrisk/risk/hazard"
)

// Indicator ids.
const (
	IndicatorPGA         = "pga_2pct_50yr"
	IndicatorM5Annual    = "m5_annual_probability_50km"
	IndicatorM5Prob      = "m5_30yr_probability_50km"
	IndicatorFault       = "fault_proximity_index"
	IndicatorFaultKm     = "nearest_fault_km"
	IndicatorFaultName   = "nearest_fault"
	IndicatorLargestM100 = "largest_magnitude_100km"
)

const (
	rateRadiusKm    = 50
	largestRadiusKm = 100
	probYears       = 30
	largestMinMag   = 4.0

	// Weights inside the ground-shaking peril (docs/methodology.md,
	// "Earthquake"): the 2,475-year ground motion says how hard the ground
	// can shake in a rare event; the M5+ rate how often damaging shaking
	// comes, which is where most losses come from, so it weighs more.
	// The fault distance is context named in the narrative: the fault
	// database maps the West only, and a weight there would rank a western
	// site against fewer indicators than an eastern one.
	weightPGA  = 0.4
	weightProb = 0.6

	// Fewer counted ComCat events than this within the radius makes the
	// 23-year rate little more than a guess.
	sparseEvents = 3
)

const pgaSource = "usgs-nshm-2018-pga"

// Resolutions of the module's indicators.
var (
	resPGA     = hazard.Resolution{Kind: hazard.ResGrid, Detail: "0.05-degree cells, about 5 km"}
	resCatalog = hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "catalog events within 50 km"}
	resLargest = hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "catalog events within 100 km"}
	resFault   = hazard.Resolution{Kind: hazard.ResSite, Detail: "distance to mapped fault traces, USGS NSHM 2023"}
)

// Module is the loaded earthquake module. It is immutable and safe for
// concurrent use.
type Module struct {
	pga       *pgaGrid
	nshm      rateSet // NSHM 2014 WUS + CEUS counted events
	nshmBig   bigSet
	comcat    rateSet // ComCat Alaska + Hawaii, declustered
	comcatBig bigSet
	faults    *faultLayer
	rows      map[string]int
}

// Load reads the PGA grid and the three catalogs from the data directory.
func Load(dir string) (*Module, error) {
	type pgaResult struct {
		g   *pgaGrid
		err error
	}
	pgaCh := make(chan pgaResult, 1)
	go func() {
		g, err := loadPGA(dir, data.Path(pgaSource))
		pgaCh <- pgaResult{g, err}
	}()
	m, err := loadCatalogs(dir)
	var faults *faultLayer
	if err == nil {
		faults, err = loadFaults(dir)
	}
	res := <-pgaCh
	if err != nil {
		return nil, fmt.Errorf("earthquake: %w", err)
	}
	if res.err != nil {
		return nil, fmt.Errorf("earthquake: %w", res.err)
	}
	m.pga = res.g
	m.rows[pgaSource] = res.g.nodes
	m.faults = faults
	m.rows[faultSource] = faults.rows
	return m, nil
}

func loadCatalogs(dir string) (*Module, error) {
	m := &Module{rows: make(map[string]int, 4)}
	wus, n, err := readNSHM(dir, sourceIDs[srcWUS], srcWUS, wusModel)
	if err != nil {
		return nil, err
	}
	m.rows[sourceIDs[srcWUS]] = n
	ceus, n, err := readNSHM(dir, sourceIDs[srcCEUS], srcCEUS, ceusModel)
	if err != nil {
		return nil, err
	}
	m.rows[sourceIDs[srcCEUS]] = n
	ceus = dropDuplicates(wus, ceus)
	all := append(wus, ceus...)
	wWUS, wCEUS := 1/wusModel.denominator(), 1/ceusModel.denominator()
	m.nshm = newRateSet(all, func(e event) float64 {
		model, w := wusModel, wWUS
		if e.Src == srcCEUS {
			model, w = ceusModel, wCEUS
		}
		if !model.counted(e.Mag, e.Year) {
			return 0
		}
		return e.NStar * w
	})
	m.nshmBig = newBigSet(all, largestMinMag)

	cc, n, err := readComCat(dir)
	if err != nil {
		return nil, err
	}
	m.rows[sourceIDs[srcComCat]] = n
	// Every declustered M4+ event counts; 10^(-b) scales the M4+ rate to M5+.
	wCC := math.Pow(10, -comcatB*(5-comcatMinMag)) / comcatYears
	m.comcat = newRateSet(decluster(cc), func(event) float64 { return wCC })
	m.comcatBig = newBigSet(cc, largestMinMag)
	return m, nil
}

// Name implements hazard.Module.
func (m *Module) Name() string { return hazard.Earthquake }

// Sources implements hazard.Module.
func (m *Module) Sources() []string {
	return []string{pgaSource, sourceIDs[srcWUS], sourceIDs[srcCEUS], sourceIDs[srcComCat], faultSource}
}

// Rows implements hazard.Module: PGA grid nodes and catalog rows read.
func (m *Module) Rows() map[string]int { return maps.Clone(m.rows) }

// Measure implements hazard.Module.
func (m *Module) Measure(site hazard.Site) hazard.Measurement {
	p := geo.Point{Lat: site.Lat, Lon: site.Lon}
	switch {
	case site.Conus:
		return m.measureConus(p, site.StateCode)
	case (site.StateCode == "AK" || site.StateFIPS == "02") && geo.NormalizeLon(site.Lon) > 0:
		// The ComCat Alaska extract stops at 180 degrees (its events span
		// -179.15 to -130.06): the Rat and Near Islands, across the
		// antimeridian, are not covered, and an empty count there would
		// wrongly read as a quiet place.
		return noCoverage()
	case site.StateCode == "AK" || site.StateCode == "HI" || site.StateFIPS == "02" || site.StateFIPS == "15":
		return m.measureComCat(p)
	default:
		return noCoverage()
	}
}

// noCoverage is the measurement where none of the module's data sets
// applies; the engine then falls back to the NRI benchmark or reports no
// data.
func noCoverage() hazard.Measurement {
	return hazard.Measurement{
		Notes: []string{"No USGS seismic hazard model or earthquake catalog used here covers this location."},
	}
}

func (m *Module) measureConus(p geo.Point, state string) hazard.Measurement {
	out := hazard.Measurement{
		Indicators: make([]hazard.Indicator, 0, 7),
		Notes:      make([]string, 0, 3),
		Quality:    1,
	}
	probWeight := 1.0
	if pga, ok := m.pga.at(p.Lat, p.Lon); ok {
		out.Indicators = append(out.Indicators, hazard.Indicator{
			ID:         IndicatorPGA,
			Label:      "Peak ground acceleration with a 2% chance of being exceeded in 50 years (USGS 2018 model, firm rock)",
			Value:      pga,
			Unit:       "g",
			Source:     pgaSource,
			Peril:      hazard.PerilGroundShaking,
			Resolution: resPGA,
			Ranked:     true,
			Weight:     weightPGA,
		})
		out.Notes = append(out.Notes, "USGS 2018 model: 2% chance in 50 years of peak ground acceleration exceeding "+formatG(pga)+".")
		probWeight = weightProb
	}
	perSrc, _ := m.nshm.rateWithin(p, rateRadiusKm)
	src := srcCEUS
	switch {
	case perSrc[srcWUS] > perSrc[srcCEUS]:
		src = srcWUS
	case perSrc[srcWUS] == perSrc[srcCEUS] && p.Lon < -104:
		// Nothing counted nearby: cite the catalog that covers most of the
		// West (the NSHM boundary runs near the Rocky Mountain front).
		src = srcWUS
	}
	m.addProb(&out, perSrc[srcWUS]+perSrc[srcCEUS], sourceIDs[src], probWeight)
	m.addFault(&out, p, state)
	m.addLargest(&out, &m.nshmBig, p)
	return out
}

// addFault adds the distance to the nearest mapped active fault section
// where the fault database maps the site's state.
func (m *Module) addFault(out *hazard.Measurement, p geo.Point, state string) {
	if !m.faults.covers(state) {
		out.Notes = append(out.Notes, "The USGS fault section database used here maps the western states only, so no fault distance is given.")
		return
	}
	name, km, ok := m.faults.nearest(p)
	index := 0.0
	label, text := "Distance to the nearest mapped active fault section (USGS NSHM 2023)", ""
	if ok {
		index = math.Exp(-km / faultDecayKm)
	} else {
		km = faultSearchKm
		label = "Distance to the nearest mapped active fault section (USGS NSHM 2023; capped: none within 100 km)"
		text = "none within 100 km"
	}
	out.Indicators = append(out.Indicators,
		hazard.Indicator{ID: IndicatorFault, Label: "Fault proximity index: exp(-distance to the nearest mapped active fault / 10 km)",
			Value: index, Unit: "index", Source: faultSource, Peril: hazard.PerilGroundShaking, Resolution: resFault, Ranked: true},
		hazard.Indicator{ID: IndicatorFaultKm, Label: label, Value: km, Text: text, Unit: "km", Source: faultSource, Peril: hazard.PerilGroundShaking, Resolution: resFault},
	)
	if ok {
		out.Indicators = append(out.Indicators, hazard.Indicator{ID: IndicatorFaultName, Label: "Nearest mapped active fault section", Unit: "name",
			Source: faultSource, Peril: hazard.PerilGroundShaking, Resolution: resFault, Text: name})
		out.Notes = append(out.Notes, fmt.Sprintf("The nearest mapped active fault section is %s, %s away (USGS NSHM 2023 fault database).", name, kmWords(km)))
	} else {
		out.Notes = append(out.Notes, "No mapped active fault section lies within 100 km.")
	}
}

// kmWords writes a distance for a sentence.
func kmWords(km float64) string {
	if km < 1 {
		return "less than 1 km"
	}
	return fmt.Sprintf("%.0f km", km)
}

func (m *Module) measureComCat(p geo.Point) hazard.Measurement {
	out := hazard.Measurement{
		Indicators: make([]hazard.Indicator, 0, 2),
		Notes:      make([]string, 0, 1),
		Quality:    1,
	}
	perSrc, n := m.comcat.rateWithin(p, rateRadiusKm)
	if n < sparseEvents {
		// A 23-year catalog that shows (almost) nothing is no evidence of
		// low hazard (Hawaii's and Alaska's quiet stretches have had large
		// earthquakes): no weighted indicator, so the engine falls back to
		// the labelled NRI benchmark, or to null.
		out.Notes = append(out.Notes, fmt.Sprintf("The ComCat record (1996-2018) counts %s within 50 km, too few to estimate how often damaging shaking comes; this is not evidence of low hazard.",
			plural(n, "M4+ event", "M4+ events")))
		m.addLargest(&out, &m.comcatBig, p)
		return out
	}
	m.addProb(&out, perSrc[srcComCat], sourceIDs[srcComCat], 1)
	m.addLargest(&out, &m.comcatBig, p)
	return out
}

func (m *Module) addProb(out *hazard.Measurement, rate float64, source string, weight float64) {
	annual := poissonProb(rate, 1)
	prob := poissonProb(rate, probYears)
	out.Indicators = append(out.Indicators,
		hazard.Indicator{
			ID:           IndicatorM5Annual,
			Label:        "Annual chance of an M5+ earthquake within 50 km (from declustered historical seismicity)",
			Value:        annual,
			Unit:         "probability",
			Source:       source,
			Peril:        hazard.PerilGroundShaking,
			Resolution:   resCatalog,
			Ranked:       true,
			Weight:       weight,
			AnnualChance: true,
		},
		hazard.Indicator{
			ID:         IndicatorM5Prob,
			Label:      "Estimated chance of an M5+ earthquake within 50 km in the next 30 years (from historical seismicity)",
			Value:      prob,
			Unit:       "probability",
			Source:     source,
			Peril:      hazard.PerilGroundShaking,
			Resolution: resCatalog,
			Ranked:     true,
		})
	out.Notes = append(out.Notes, "Estimated 30-year chance of an M5+ earthquake within 50 km: "+formatPercent(prob)+".")
}

func (m *Module) addLargest(out *hazard.Measurement, s *bigSet, p geo.Point) {
	in := hazard.Indicator{
		ID:         IndicatorLargestM100,
		Label:      "Largest earthquake on record within 100 km",
		Unit:       "magnitude",
		Source:     sourceIDs[srcComCat],
		Peril:      hazard.PerilGroundShaking,
		Resolution: resLargest,
	}
	if s == &m.nshmBig {
		in.Source = sourceIDs[srcWUS]
		if p.Lon >= -104 {
			in.Source = sourceIDs[srcCEUS]
		}
	}
	if l, ok := s.largestWithin(p, largestRadiusKm); ok {
		in.Value = math.Round(float64(l.Mag)*100) / 100
		in.Source = sourceIDs[l.Src]
		in.Text = fmt.Sprintf("M%.1f in %d, %.0f km away", l.Mag, l.Year, l.Km)
	} else {
		in.Text = "No M4+ earthquake on record within 100 km"
	}
	out.Indicators = append(out.Indicators, in)
}

// formatG writes a PGA for a sentence: two decimals, three below 0.1 g.
func formatG(g float64) string {
	if g < 0.1 {
		return fmt.Sprintf("%.3f g", g)
	}
	return fmt.Sprintf("%.2f g", g)
}

// formatPercent writes a probability as a whole percentage, without
// claiming certainty at either end.
func formatPercent(p float64) string {
	switch {
	case p < 0.005:
		return "less than 1%"
	case p > 0.995:
		return "more than 99%"
	}
	return fmt.Sprintf("%.0f%%", p*100)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
