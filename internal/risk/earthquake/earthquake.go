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
	"io/fs"
	"maps"
	"math"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
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
	IndicatorInterface   = "subduction_interface"
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

// The catalog's check against the USGS long-term model (docs/methodology.md,
// "Earthquake", "When the catalog outruns the USGS model"): in the
// conterminous states the M5+ rate within 50 km counts in full up to a
// ceiling that rises with the 2018 PGA,
//
//	ceiling(PGA) = ceilingRate * (PGA / ceilingPGA)^ceilingExp   per year,
//
// and beyond it loses weight with the base-2 logarithm of the excess, to none
// at twice the ceiling; the PGA takes the weight the catalog gives up. The
// 2018 model is declustered, leaves induced seismicity out and is the USGS
// long-term hazard: a catalog rate far above what it supports for a site
// comes from a swarm or an induced sequence (the Rocky Mountain Arsenal
// earthquakes of 1962-1967 under Denver, the Raton Basin, central Oklahoma)
// or from a single event in a quiet region, not from a steady rate.
const (
	ceilingRate = 7e-4 // M5+ per year within 50 km at ceilingPGA
	ceilingPGA  = 0.1  // g
	ceilingExp  = 4.0
)

// rateCeiling is the highest M5+ rate within 50 km (per year) that counts in
// full at a site whose 2018 2%-in-50-years PGA is pga.
func rateCeiling(pga float64) float64 {
	return ceilingRate * math.Pow(math.Max(pga, 0)/ceilingPGA, ceilingExp)
}

// catalogTrust is the share (0..1) of its weight the catalog rate keeps at a
// site with 2018 PGA pga: 1 up to the ceiling, 1 - log2(rate/ceiling)
// above it, 0 from twice the ceiling.
func catalogTrust(rate, pga float64) float64 {
	c := rateCeiling(pga)
	switch {
	case rate <= c:
		return 1
	case c <= 0:
		return 0
	}
	return math.Max(0, 1-math.Log2(rate/c))
}

const pgaSource = "usgs-nshm-2018-pga"

// Resolutions of the module's indicators.
var (
	resPGA     = hazard.Resolution{Kind: hazard.ResGrid, Detail: "0.05-degree cells, about 5 km"}
	resCatalog = hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "catalog events within 50 km"}
	resLargest = hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "catalog events within 100 km"}
	resFault   = hazard.Resolution{Kind: hazard.ResSite, Detail: "distance to mapped fault traces, USGS NSHM 2023"}
	resFaultAK = hazard.Resolution{Kind: hazard.ResSite, Detail: "distance to mapped fault traces, USGS NSHM Alaska 2007"}
	// resInterface: the site against the interface's surface projection.
	resInterface = hazard.Resolution{Kind: hazard.ResSite, Detail: "between the interface's upper and lower edge traces, USGS NSHM Alaska 2007"}
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
	places    *placeTable // USGS design values at listed places outside the conterminous states
	ak        *akLayer    // Alaska faults and subduction interfaces
	rows      map[string]int
}

// Load reads the PGA grid and the three catalogs from the data directory.
func Load(fsys fs.FS) (*Module, error) {
	type pgaResult struct {
		g   *pgaGrid
		err error
	}
	pgaCh := make(chan pgaResult, 1)
	go func() {
		g, err := loadPGA(fsys, data.Path(pgaSource))
		pgaCh <- pgaResult{g, err}
	}()
	m, err := loadCatalogs(fsys)
	var faults *faultLayer
	if err == nil {
		faults, err = loadFaults(fsys)
	}
	var places *placeTable
	if err == nil {
		places, err = loadPlaces(fsys)
	}
	var ak *akLayer
	if err == nil {
		ak, err = loadAKFaults(fsys)
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
	places.markOverMega(ak)
	m.places = places
	m.rows[placeSource] = places.rows
	m.ak = ak
	m.rows[akSource] = ak.rows
	return m, nil
}

func loadCatalogs(fsys fs.FS) (*Module, error) {
	m := &Module{rows: make(map[string]int, 4)}
	wus, n, err := readNSHM(fsys, sourceIDs[srcWUS], srcWUS, wusModel)
	if err != nil {
		return nil, err
	}
	m.rows[sourceIDs[srcWUS]] = n
	ceus, n, err := readNSHM(fsys, sourceIDs[srcCEUS], srcCEUS, ceusModel)
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

	cc, n, err := readComCat(fsys)
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
	return []string{pgaSource, sourceIDs[srcWUS], sourceIDs[srcCEUS], sourceIDs[srcComCat], faultSource, placeSource, akSource}
}

// Rows implements hazard.Module: PGA grid nodes and catalog rows read.
func (m *Module) Rows() map[string]int { return maps.Clone(m.rows) }

// Measure implements hazard.Module.
func (m *Module) Measure(site hazard.Site) hazard.Measurement {
	p := geo.Point{Lat: site.Lat, Lon: site.Lon}
	if site.Conus {
		return m.measureConus(p, site.StateCode)
	}
	if region := placeRegion(site.StateCode, site.StateFIPS); region != "" {
		return m.measureOutside(p, region)
	}
	return noCoverage()
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
	perSrc, _ := m.nshm.rateWithin(p, rateRadiusKm)
	rate := perSrc[srcWUS] + perSrc[srcCEUS]
	probWeight, trust := 1.0, 1.0
	pga, havePGA := m.pga.at(p.Lat, p.Lon)
	if havePGA {
		trust = catalogTrust(rate, pga)
		probWeight = weightProb * trust
		out.Indicators = append(out.Indicators, hazard.Indicator{
			ID:         IndicatorPGA,
			Label:      "Peak ground acceleration with a 2% chance of being exceeded in 50 years (USGS 2018 model, firm rock)",
			Value:      pga,
			Unit:       "g",
			Source:     pgaSource,
			Peril:      hazard.PerilGroundShaking,
			Resolution: resPGA,
			Ranked:     true,
			Weight:     1 - probWeight,
		})
		out.Notes = append(out.Notes, "USGS 2018 model: 2% chance in 50 years of peak ground acceleration exceeding "+formatG(pga)+".")
	}
	src := srcCEUS
	switch {
	case perSrc[srcWUS] > perSrc[srcCEUS]:
		src = srcWUS
	case perSrc[srcWUS] == perSrc[srcCEUS] && p.Lon < -104:
		// Nothing counted nearby: cite the catalog that covers most of the
		// West (the NSHM boundary runs near the Rocky Mountain front).
		src = srcWUS
	}
	m.addProb(&out, rate, sourceIDs[src], probWeight)
	if trust < 1 {
		out.Notes = append(out.Notes, ceilingNote(rate, pga, trust))
	}
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
	addFaultIndicators(out, faultSource, "USGS NSHM 2023", resFault, name, km, ok)
	if ok {
		out.Notes = append(out.Notes, fmt.Sprintf("The nearest mapped active fault section is %s, %s away (USGS NSHM 2023 fault database).", name, kmWords(km)))
	} else {
		out.Notes = append(out.Notes, "No mapped active fault section lies within 100 km.")
	}
}

// addFaultIndicators adds the fault proximity index, the distance and, when
// a fault lies within faultSearchKm, its name, from the fault source src
// (model names it in labels).
func addFaultIndicators(out *hazard.Measurement, src, model string, res hazard.Resolution, name string, km float64, ok bool) {
	index := 0.0
	label, text := "Distance to the nearest mapped active fault section ("+model+")", ""
	if ok {
		index = math.Exp(-km / faultDecayKm)
	} else {
		km = faultSearchKm
		label = "Distance to the nearest mapped active fault section (" + model + "; capped: none within 100 km)"
		text = "none within 100 km"
	}
	out.Indicators = append(out.Indicators,
		hazard.Indicator{ID: IndicatorFault, Label: "Fault proximity index: exp(-distance to the nearest mapped active fault / 10 km)",
			Value: index, Unit: "index", Source: src, Peril: hazard.PerilGroundShaking, Resolution: res, Ranked: true},
		hazard.Indicator{ID: IndicatorFaultKm, Label: label, Value: km, Text: text, Unit: "km", Source: src, Peril: hazard.PerilGroundShaking, Resolution: res},
	)
	if ok {
		out.Indicators = append(out.Indicators, hazard.Indicator{ID: IndicatorFaultName, Label: "Nearest mapped active fault section", Unit: "name",
			Source: src, Peril: hazard.PerilGroundShaking, Resolution: res, Text: name})
	}
}

// addAKContext adds Alaska's site context from the USGS Alaska 2007 source
// model: the nearest of its crustal fault sources and whether the site lies
// above a subduction interface (between its upper and lower edge traces).
// Both are context (weight 0); the model file holds geometry, not hazard
// values.
func (m *Module) addAKContext(out *hazard.Measurement, p geo.Point, ifaces []string) {
	name, km, ok := m.ak.nearest(p)
	addFaultIndicators(out, akSource, "USGS Alaska 2007 model", resFaultAK, name, km, ok)
	if ok {
		out.Notes = append(out.Notes, fmt.Sprintf("The nearest crustal fault source of the USGS Alaska 2007 model is %s, %s away.", name, kmWords(km)))
	} else {
		out.Notes = append(out.Notes, "No crustal fault source of the USGS Alaska 2007 model lies within 100 km.")
	}
	in := hazard.Indicator{ID: IndicatorInterface, Label: "Subduction interface beneath the site (USGS Alaska 2007 model)", Unit: "name",
		Source: akSource, Peril: hazard.PerilGroundShaking, Resolution: resInterface}
	if len(ifaces) > 0 {
		in.Text = strings.Join(ifaces, "; ")
		out.Notes = append(out.Notes, "The site lies above the Aleutian megathrust, between the upper and lower edges of the "+
			strings.Join(ifaces, ", ")+" interface sources of the USGS Alaska 2007 model.")
	} else {
		in.Text = "none"
		out.Notes = append(out.Notes, "The site does not lie above the Aleutian megathrust interface of the USGS Alaska 2007 model.")
	}
	out.Indicators = append(out.Indicators, in)
}

// kmWords writes a distance for a sentence.
func kmWords(km float64) string {
	if km < 1 {
		return "less than 1 km"
	}
	return fmt.Sprintf("%.0f km", km)
}

// measureOutside measures a site outside the conterminous states
// (docs/methodology.md, "Earthquake"): the PGA interpolated between the
// USGS design values at listed places, the ComCat M5+ chance in Alaska and
// Hawaii, and in Alaska the fault and subduction-interface context. With
// both weighted indicators they weigh as in the conterminous states (0.4
// PGA, 0.6 M5+ chance); with one, that one alone.
func (m *Module) measureOutside(p geo.Point, region string) hazard.Measurement {
	out := hazard.Measurement{
		Indicators: make([]hazard.Indicator, 0, 7),
		Notes:      make([]string, 0, 4),
		Quality:    1,
	}
	var ifaces []string
	if region == regionAK {
		ifaces = m.ak.interfacesAt(p)
	}
	pp, havePGA := m.places.at(region, p, len(ifaces) > 0)

	// The ComCat extract covers Alaska east of 180 degrees and Hawaii: its
	// Alaska events span -179.15 to -130.06, so across the antimeridian
	// (the Rat and Near Islands) an empty count would wrongly read as a
	// quiet place.
	catalog := region == regionHI || (region == regionAK && geo.NormalizeLon(p.Lon) <= 0)
	var rate float64
	var counted int
	if catalog {
		var perSrc [len(sourceIDs)]float64
		perSrc, counted = m.comcat.rateWithin(p, rateRadiusKm)
		rate = perSrc[srcComCat]
	}
	haveRate := catalog && counted >= sparseEvents
	pgaWeight, rateWeight := 1.0, 1.0
	if havePGA && haveRate {
		pgaWeight, rateWeight = weightPGA, weightProb
	}

	if havePGA {
		out.Indicators = append(out.Indicators, hazard.Indicator{
			ID:     IndicatorPGA,
			Label:  "Peak ground acceleration, 2% in 50 years scale (USGS design values at listed places, site class B, interpolated)",
			Value:  pp.PGA,
			Unit:   "g",
			Source: placeSource,
			Peril:  hazard.PerilGroundShaking,
			Resolution: hazard.Resolution{Kind: hazard.ResPlaceTable,
				Detail: fmt.Sprintf("nearest %s within %.0f km", plural(len(pp.Used), "USGS design-value place", "USGS design-value places"), pp.RadiusKm)},
			Ranked: true,
			Weight: pgaWeight,
		})
		out.Notes = append(out.Notes, placesNote(pp))
	} else {
		out.Notes = append(out.Notes, fmt.Sprintf("No place with a USGS design value is listed within %.0f km, so no peak ground acceleration is given here.", placeRadiusKm[region]))
	}
	switch {
	case haveRate:
		m.addProb(&out, rate, sourceIDs[srcComCat], rateWeight)
	case catalog:
		// A 23-year catalog that shows (almost) nothing is no evidence of
		// low hazard (Hawaii's and Alaska's quiet stretches have had large
		// earthquakes): no weighted indicator from it.
		out.Notes = append(out.Notes, fmt.Sprintf("The ComCat record (1996-2018) counts %s within 50 km, too few to estimate how often damaging shaking comes; this is not evidence of low hazard.",
			plural(counted, "M4+ event", "M4+ events")))
	case region == regionAK:
		out.Notes = append(out.Notes, "The earthquake catalog used here does not extend west of 180 degrees.")
	default:
		out.Notes = append(out.Notes, "No earthquake catalog used here covers this territory.")
	}
	if catalog {
		m.addLargest(&out, &m.comcatBig, p)
	}
	if region == regionAK {
		m.addAKContext(&out, p, ifaces)
	}
	return out
}

// ceilingNote explains why the catalog rate counts for less than its usual
// weight (trust < 1) at a site with 2018 PGA pga.
func ceilingNote(rate, pga, trust float64) string {
	supported := "none"
	if c := rateCeiling(pga); c > 0 {
		supported = "at most about once in " + hazard.ReturnPeriodText(1/c) + " years"
	}
	s := fmt.Sprintf("The catalogs' rate of M5+ earthquakes within 50 km, about once in %s years, is more than the USGS 2018 long-term model supports at %s (%s): "+
		"such a rate usually comes from a swarm, an induced sequence or a lone event in a quiet region, which the long-term model does not count as a steady rate, ",
		hazard.ReturnPeriodText(1/rate), formatG(pga), supported)
	if trust <= 0 {
		return s + "so the score rests on the USGS ground motion alone."
	}
	return s + fmt.Sprintf("so the catalog keeps %.0f%% of its weight in the score.", 100*trust)
}

func (m *Module) addProb(out *hazard.Measurement, rate float64, source string, weight float64) {
	annual := poissonProb(rate, 1)
	prob := poissonProb(rate, probYears)
	out.Indicators = append(out.Indicators,
		hazard.Indicator{
			ID:         IndicatorM5Annual,
			Label:      "Annual chance of an M5+ earthquake within 50 km (from declustered historical seismicity)",
			Value:      annual,
			Unit:       "probability",
			Source:     source,
			Peril:      hazard.PerilGroundShaking,
			Resolution: resCatalog,
			Ranked:     true,
			Weight:     weight,
			// A rate the score disregards (beyond twice the ceiling) is
			// not shown as the peril's annual chance either.
			AnnualChance: weight > 0,
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
