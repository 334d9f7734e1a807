package risk

import (
	"io/fs"
	"slices"

	"github.com/locrisk/locrisk/internal/risk/earthquake"
	"github.com/locrisk/locrisk/internal/risk/environment"
	"github.com/locrisk/locrisk/internal/risk/futurerisk"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
	"github.com/locrisk/locrisk/internal/risk/hydrology"
	"github.com/locrisk/locrisk/internal/risk/landslide"
	"github.com/locrisk/locrisk/internal/risk/nri"
	"github.com/locrisk/locrisk/internal/risk/population"
	"github.com/locrisk/locrisk/internal/risk/severeweather"
	"github.com/locrisk/locrisk/internal/risk/terrain"
	"github.com/locrisk/locrisk/internal/risk/wildfire"
)

// ModuleSpec is one hazard module as the whole service sees it: the engine
// loads and scores it, the JSON, CSV, PDF, command line and store range over
// it. The registry below is the only list of modules and perils; adding one
// there adds it everywhere.
type ModuleSpec struct {
	Key    string // moduleScores key, e.g. "severeWeather"
	Title  string // display name, e.g. "Severe weather"
	Noun   string // for sentences, e.g. "severe weather hazard"
	Perils []PerilSpec
	Advice Advice
	// Near lists site conditions that earn the module a medium-priority
	// recommendation (NearAdvice) even where its score is low: a flood
	// zone determination for a site by a river or an open coast, since no
	// flood-zone map is used.
	Near       []Threshold
	NearAdvice string
	// load reads the module's data sets.
	load func(fsys fs.FS, env loadEnv) (hazard.Module, error)
}

// PerilSpec is one peril inside a module.
type PerilSpec struct {
	Key   string // e.g. "tornado"
	Title string // e.g. "Tornado"
	// NRI lists the FEMA National Risk Index hazard codes the peril is
	// benchmarked against.
	NRI []string
	// ChanceOf names, in a few words, the event the peril's annual chance
	// is the chance of, so a return period shown alone (PDF, command line)
	// says no more than the data behind it.
	ChanceOf string
	// Evidence is the indicator narratives and reasons cite for the peril,
	// a physical quantity where there is one (a distance rather than the
	// index made from it); empty, or absent at a site, means the peril's
	// heaviest weighted indicator.
	Evidence string
	// Relevant, when set, is a condition without which the peril earns no
	// recommendation at all, whatever its percentile: a Superfund site
	// 9 km away can rank above most residents and still call for no action.
	Relevant *Threshold
	// High is the site- or grid-level evidence a high-priority
	// recommendation needs; nil means the peril's data can never justify
	// one on their own (docs/methodology.md, "Recommendations").
	High *Threshold
	// Negligible lists physical levels that, all met at the site, make the
	// peril's annual chance too small to act on, whatever its percentile:
	// where the peril leads, the module earns a low-priority note saying
	// so instead of its check or action. An indicator the site lacks
	// leaves the chance unproven, so the condition is not met.
	Negligible []Threshold
}

// Threshold is a documented level of one indicator.
type Threshold struct {
	Indicator string  // indicator id
	AtLeast   float64 // the indicator's value must be >= AtLeast ...
	AtMost    float64 // ... or, when AtMost > 0, <= AtMost
	Text      string  // "a 2%-in-50-years PGA of 0.4 g or more"
}

// Met reports whether v passes the threshold.
func (t Threshold) Met(v float64) bool { return t.MetBy(v, 1) }

// MetBy reports whether v passes the threshold by the factor margin (>= 1):
// at least margin times AtLeast, or at most AtMost / margin.
func (t Threshold) MetBy(v, margin float64) bool {
	if t.AtMost > 0 {
		return v <= t.AtMost/margin
	}
	return v >= t.AtLeast*margin
}

// Advice is a module's recommendation texts: the strong action, the check
// for a moderate score, and what to do where no data covers the site.
type Advice struct {
	Act, Check, NoData string
}

// loadEnv is what module loaders may need beyond the data directory.
type loadEnv struct {
	countyLandKm2 map[string]float64 // county land area by FIPS
	// countyPoint is a point inside each county (the Gazetteer's interior
	// point), for the severe weather module's regional hail and wind rates.
	countyPoint map[string]geo.Point
	// population loads the block-group centres and profiles each county's
	// local density once, for the modules that need it (wildfire,
	// landslide); later calls wait for the first and share its result.
	population func() (*population.Profiles, error)
	// countyOf locates a point to its county (the landslide module places
	// each reported event in one).
	countyOf population.CountyOf
	// nri loads the FEMA NRI county table once; the engine keeps it as the
	// benchmark, the landslide module reads its county ratings as priors.
	nri func() (*nri.Table, error)
	// terrain loads the repaired elevation grids once, for the modules
	// that read the ground (landslide, hydrology, wildfire).
	terrain func() (*terrain.Model, error)
	// future loads the FEMA NRI Future Risk table once; the engine keeps
	// it for the outlook, the wildfire module cites its wildfire scores.
	future func() (*futurerisk.Table, error)
}

// registry is the ordered list of modules: report order, CSV column order,
// PDF order. Read it through Registry.
var registry = [...]ModuleSpec{
	{
		Key: hazard.Hydrology, Title: "Hydrology", Noun: "flood hazard",
		Perils: []PerilSpec{
			{Key: hazard.PerilCoastalFlood, Title: "Coastal flooding", NRI: []string{"CFLD"}, Evidence: hydrology.IndDistanceToCoast,
				High: &Threshold{Indicator: hydrology.IndDistanceToCoast, AtMost: 1, Text: "an ocean shoreline within 1 km of the site"}},
			{Key: hazard.PerilRiverineFlood, Title: "Riverine flooding", NRI: []string{"IFLD"}, Evidence: hydrology.IndDistanceToRiver,
				High: &Threshold{Indicator: hydrology.IndDistanceToRiver, AtMost: 0.3, Text: "a mapped river within 0.3 km of the site"}},
		},
		Advice: Advice{
			Act:    "Obtain a flood zone determination and an elevation certificate for the structure; price flood cover explicitly and check NFIP or private flood insurance is in force.",
			Check:  "Check the FEMA flood map for the parcel and confirm drainage and finished-floor elevation before binding.",
			NoData: "Flood hazard could not be assessed here; obtain the FEMA flood map and local flood history for the parcel.",
		},
		Near: []Threshold{
			{Indicator: hydrology.IndDistanceToCoast, AtMost: 1, Text: "an ocean shoreline within 1 km"},
			{Indicator: hydrology.IndDistanceToRiver, AtMost: 1, Text: "a river within 1 km"},
		},
		NearAdvice: "Order a flood zone determination for the parcel: this report uses no FEMA flood-zone map and only a 2 km elevation grid, and the site is close to open water.",
		// The terrain gives the height of the site above its river and
		// gauge, which tempers their proximity indices.
		load: func(fsys fs.FS, env loadEnv) (hazard.Module, error) {
			m, err := hydrology.Load(fsys)
			if err != nil {
				return nil, err
			}
			ground, err := env.terrain()
			if err != nil {
				return nil, err
			}
			m.UseGround(ground)
			return m, nil
		},
	},
	{
		Key: hazard.SevereWeather, Title: "Severe weather", Noun: "severe weather hazard",
		Perils: []PerilSpec{
			{Key: hazard.PerilTornado, Title: "Tornado", NRI: []string{"TRND"}, ChanceOf: "an EF2+ tornado path crossing the site", Evidence: severeweather.IndTornadoStrikeSig,
				High:       &Threshold{Indicator: severeweather.IndTornadoStrikeSig, AtLeast: 0.0005, Text: "an EF2 or stronger tornado path crossing the site about once in 2,000 years or more often"},
				Negligible: []Threshold{{Indicator: severeweather.IndTornadoStrikeSig, AtMost: 0.00001, Text: "an EF2+ tornado path crossing the site less often than once in 100,000 years"}}},
			{Key: hazard.PerilHurricaneWind, Title: "Hurricane wind", NRI: []string{"HRCN"}, ChanceOf: "hurricane-force winds at the site", Evidence: severeweather.IndHurricaneWind,
				High: &Threshold{Indicator: severeweather.IndHurricaneWind, AtLeast: 0.02, Text: "hurricane-force winds at the site about once in 50 years or more often"}},
			{Key: hazard.PerilHail, Title: "Hail", NRI: []string{"HAIL"}, Evidence: severeweather.IndHailDensity},
			{Key: hazard.PerilStraightLineWind, Title: "Straight-line wind", NRI: []string{"SWND"}, Evidence: severeweather.IndWindDensity},
		},
		Advice: Advice{
			Act:    "Verify roof age, covering and wind-rated construction (hurricane straps, impact-rated openings where hurricanes occur); consider wind and hail deductibles.",
			Check:  "Confirm roof condition and age; note wind and hail exposure in the underwriting file.",
			NoData: "Severe weather could not be assessed here; review local storm history and building-code wind requirements.",
		},
		load: func(fsys fs.FS, env loadEnv) (hazard.Module, error) {
			// Hail and wind reports are read against the residents who
			// file them (docs/methodology.md, "Hail and damaging wind").
			pop, err := env.population()
			if err != nil {
				return nil, err
			}
			counties := make(map[string]severeweather.County, len(env.countyLandKm2))
			for fips, km2 := range env.countyLandKm2 {
				counties[fips] = severeweather.County{LandKm2: km2, Residents: pop.Residents(fips), Point: env.countyPoint[fips]}
			}
			return orNil(severeweather.Load(fsys, counties))
		},
	},
	{
		Key: hazard.Wildfire, Title: "Wildfire", Noun: "wildfire hazard",
		Perils: []PerilSpec{
			{Key: hazard.PerilWildfire, Title: "Wildfire", NRI: []string{"WFIR"}, ChanceOf: "wildfire reaching a home at the site (county figures by shelter from wildland)", Evidence: wildfire.IDBurnProbability,
				Relevant: &Threshold{Indicator: wildfire.IDBurnProbability, AtLeast: 0.0001,
					Text: "a burn probability at the site of 1 in 10,000 a year or more"},
				High: &Threshold{Indicator: wildfire.IDBurnProbability, AtLeast: 0.002,
					Text: "a burn probability at the site, allocated from the county's figures by shelter from wildland, of 1 in 500 a year or more"}},
		},
		Advice: Advice{
			Act:    "Require a defensible-space and ember-resistance inspection (vents, roof class, 0-5 ft zone) and check access for fire engines.",
			Check:  "Ask for vegetation clearance around the structure and a Class A roof; monitor local fire-risk ratings.",
			NoData: "Wildfire hazard could not be assessed here; check state or local wildfire hazard maps for the parcel.",
		},
		load: func(fsys fs.FS, env loadEnv) (hazard.Module, error) {
			pop, err := env.population()
			if err != nil {
				return nil, err
			}
			ground, err := env.terrain()
			if err != nil {
				return nil, err
			}
			relief := func(p geo.Point, km float64) (float64, bool) {
				s, ok := ground.Relief(p, km)
				return s.Metres, ok
			}
			future, err := env.future()
			if err != nil {
				return nil, err
			}
			return orNil(wildfire.Load(fsys, wildfire.NewExposure(pop, relief), future))
		},
	},
	{
		Key: hazard.Earthquake, Title: "Earthquake", Noun: "earthquake hazard",
		Perils: []PerilSpec{
			{Key: hazard.PerilGroundShaking, Title: "Ground shaking", NRI: []string{"ERQK"}, ChanceOf: "an M5+ earthquake within 50 km", Evidence: earthquake.IndicatorPGA,
				High: &Threshold{Indicator: earthquake.IndicatorPGA, AtLeast: 0.4, Text: "a 2%-in-50-years peak ground acceleration of 0.4 g or more"},
				// Light shaking at the 2,475-year level and an M5+ nearby
				// rarer than once in 1,000 years: about a 3% chance over a
				// 30-year mortgage of a moderate earthquake within 50 km,
				// which seldom damages a sound building.
				Negligible: []Threshold{
					{Indicator: earthquake.IndicatorPGA, AtMost: 0.1, Text: "a 2%-in-50-years peak ground acceleration of 0.1 g or less (light shaking)"},
					{Indicator: earthquake.IndicatorM5Annual, AtMost: 0.001, Text: "an M5+ earthquake within 50 km less often than once in 1,000 years"},
				}},
		},
		Advice: Advice{
			Act:    "Obtain a structural review for seismic retrofit needs (soft storey, unreinforced masonry, foundation bolting) and quote earthquake cover separately.",
			Check:  "Check the building's construction type and year against seismic code eras; offer earthquake cover.",
			NoData: "Earthquake hazard could not be assessed here; consult the USGS hazard maps for the region.",
		},
		load: func(fsys fs.FS, _ loadEnv) (hazard.Module, error) { return orNil(earthquake.Load(fsys)) },
	},
	{
		Key: hazard.Landslide, Title: "Landslide", Noun: "landslide hazard",
		Perils: []PerilSpec{
			// Slope and relief on the terrain grid and the county's NRI
			// landslide score allocated by terrain; reported landslides
			// are context (docs/methodology.md, "Landslide module").
			{Key: hazard.PerilLandslide, Title: "Landslide", NRI: []string{"LNDS"}, Evidence: landslide.IndicatorRelief,
				High: &Threshold{Indicator: landslide.IndicatorSlope, AtLeast: landslide.SteepSlopeDeg,
					Text: "a ground slope of 3 degrees or more within 2 km on the 2 km terrain grid (a mountain front or canyon side; about the steepest 3% of residents' sites)"}},
		},
		Advice: Advice{
			Act:    "Commission a geotechnical review of slope stability and drainage before binding; landslide damage is usually excluded from standard policies.",
			Check:  "Inspect the site for slopes, cut banks and drainage problems; note reported landslides nearby.",
			NoData: "Landslide hazard could not be assessed here; check state geological survey landslide maps.",
		},
		load: func(fsys fs.FS, env loadEnv) (hazard.Module, error) {
			pop, err := env.population()
			if err != nil {
				return nil, err
			}
			tab, err := env.nri()
			if err != nil {
				return nil, err
			}
			ground, err := env.terrain()
			if err != nil {
				return nil, err
			}
			return orNil(landslide.Load(fsys, landslide.Exposure{Residents: pop, CountyOf: env.countyOf, NRI: tab, Terrain: ground}))
		},
	},
	{
		Key: hazard.EnvironmentalExposure, Title: "Environmental exposure", Noun: "environmental exposure",
		Perils: []PerilSpec{
			{Key: hazard.PerilSuperfund, Title: "Superfund sites", Evidence: environment.IndNearestActiveKm,
				Relevant: &Threshold{Indicator: environment.IndActiveWithin5Km, AtLeast: 1, Text: "a final or proposed Superfund NPL site within 5 km"},
				High:     &Threshold{Indicator: environment.IndActiveWithin1Km, AtLeast: 1, Text: "a final or proposed Superfund NPL site within 1 km"}},
		},
		Advice: Advice{
			Act:    "Order a Phase I environmental site assessment; a nearby Superfund site can affect the property's value, lending and liability.",
			Check:  "Review the nearby Superfund sites' status and any groundwater or vapour advisories before closing.",
			NoData: "Environmental exposure could not be assessed here; search EPA's site records for the area.",
		},
		load: func(fsys fs.FS, _ loadEnv) (hazard.Module, error) { return orNil(environment.Load(fsys)) },
	},
}

// Registry returns every module in report order (a copy: callers cannot
// change the registry).
func Registry() []ModuleSpec { return slices.Clone(registry[:]) }

// ModuleKeys returns the module keys in report order.
func ModuleKeys() []string {
	keys := make([]string, len(registry))
	for i, m := range registry {
		keys[i] = m.Key
	}
	return keys
}

// ModuleByKey returns the module with the given key.
func ModuleByKey(key string) (ModuleSpec, bool) {
	for _, m := range registry {
		if m.Key == key {
			return m, true
		}
	}
	return ModuleSpec{}, false
}

// ModuleTitle is a module's display name ("Severe weather"), or the key
// itself for an unknown module.
func ModuleTitle(key string) string {
	if m, ok := ModuleByKey(key); ok {
		return m.Title
	}
	return key
}

// nriCodes lists a module's NRI benchmark hazards in peril order.
func (m ModuleSpec) nriCodes() []string {
	var out []string
	for _, p := range m.Perils {
		out = append(out, p.NRI...)
	}
	return out
}
