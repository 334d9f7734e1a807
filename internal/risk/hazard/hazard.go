// Package hazard defines what a hazard module measures at a site. Each module
// package (earthquake, severeweather, hydrology, wildfire, landslide,
// environment) loads its data sets and turns a Site into a Measurement of raw
// hazard indicators, each tagged with the peril it informs and the spatial
// resolution it was measured at; the risk package ranks those against the
// population-weighted national reference, scores perils, modules and the
// overall index, and writes the report (docs/methodology.md).
//
// Modules hold no mutable state after loading and are safe for concurrent use.
package hazard

// Module keys, exactly as the report's moduleScores keys. The ordered list of
// modules, with their perils, lives in the risk package's registry.
const (
	Hydrology             = "hydrology"
	SevereWeather         = "severeWeather"
	Wildfire              = "wildfire"
	Earthquake            = "earthquake"
	Landslide             = "landslide"
	EnvironmentalExposure = "environmentalExposure"
)

// Peril keys, as the report's perils are keyed. Each belongs to one module.
const (
	PerilCoastalFlood     = "coastal"
	PerilRiverineFlood    = "riverine"
	PerilTornado          = "tornado"
	PerilHurricaneWind    = "hurricaneWind"
	PerilHail             = "hail"
	PerilStraightLineWind = "straightLineWind"
	PerilWildfire         = "wildfire"
	PerilGroundShaking    = "groundShaking"
	PerilLandslide        = "landslide"
	PerilSuperfund        = "superfund"
)

// Resolution kinds: how closely an indicator describes the site itself. The
// engine's confidence follows them (docs/methodology.md, "Confidence").
const (
	// ResSite is measured at the point from point or line geometry
	// (distance to the shoreline, to a Superfund site).
	ResSite = "site"
	// ResGrid is read from a regular model grid; Detail gives the cell.
	ResGrid = "grid"
	// ResReportedEvents counts or smooths recorded events around the site
	// (tornado tracks, earthquake catalogs, news-reported landslides).
	ResReportedEvents = "reported_events"
	// ResCounty is a value for the whole county the site is in.
	ResCounty = "county"
	// ResCountyAllocated is a county's published figure allocated to the
	// site by a local measure (the county's homes split by exposure class,
	// assigned by local population density): finer than the county, still
	// not a measurement at the site (docs/methodology.md, "Resolution").
	ResCountyAllocated = "county_allocated"
	// ResPlaceTable is interpolated between the values a publisher lists
	// for named places (USGS design values at towns outside the
	// conterminous states): coarser than a grid, finer than a county.
	ResPlaceTable = "place_table"
)

// Site is a point resolved to its county by the coverage layer.
type Site struct {
	Lat, Lon   float64
	CountyFIPS string // 5 digits, e.g. "06075"
	StateFIPS  string // 2 digits
	StateCode  string // USPS code, e.g. "CA"
	Conus      bool   // in the 48 conterminous states or DC
}

// Resolution says at what spatial unit an indicator was measured.
type Resolution struct {
	Kind   string // one of the Res* kinds
	Detail string // "0.05-degree cells, about 5 km", "tracks within 25 miles", ...
}

// Indicator is one measured quantity at a site.
type Indicator struct {
	ID     string  // stable id, e.g. "pga_2pct_50yr"
	Label  string  // plain-language label for reports
	Value  float64 // the measured value
	Unit   string  // "g", "km", "per year", "probability", "count", "percent", "score", ...
	Source string  // data.Source id
	// Peril is the peril key the indicator informs; empty for context that
	// belongs to the module as a whole.
	Peril string
	// Resolution of the measurement.
	Resolution Resolution
	// Ranked indicators get a population-weighted national percentile: the
	// engine ranks Value against the same indicator measured at every
	// reference point. Context indicators (names, benchmark scores that are
	// already percentiles) are not ranked.
	Ranked bool
	// Weight of this indicator's percentile in its peril's hazard value; 0
	// means it is reported but does not drive the score. Only ranked
	// indicators with a Peril can carry weight.
	Weight float64
	// Basis names the indicator, usually a distance, that an index is
	// computed from; narratives cite it in the index's place.
	Basis string
	// AnnualChance marks an indicator whose Value is the annual probability
	// of the peril's damaging event (at the site, or on average over the
	// resolution's unit); the report shows it as "about 1 in N years".
	AnnualChance bool
	// Percentile, when set by the module itself (a value that is already a
	// national percentile, such as an NRI score), is reported as is.
	Percentile *float64
	// Text carries a non-numeric value (a site name, a status) for display.
	Text string
}

// Measurement is what a module found at a site.
type Measurement struct {
	Indicators []Indicator
	// Quality is the module's own judgement of its data at this site, 0..1,
	// a multiplier on the confidence the engine derives from the
	// indicators' resolutions: 1 for a complete, systematic record; less
	// where a layer is partial (a territory, an older county standing in)
	// or the record is unsystematic (news reports).
	Quality float64
	// Notes are short factual sentences for the narrative ("The nearest
	// Superfund NPL site is ... 2.4 km away.").
	Notes []string
	// Flags are review flags the module raises, e.g. near_superfund_site.
	Flags []Flag
}

// Flag is a review flag: a machine code and a sentence for a reviewer.
type Flag struct {
	Code    string
	Message string
}

// HasHazardData reports whether any weighted indicator was measured, i.e.
// whether the module can score the site from its own hazard data.
func (m Measurement) HasHazardData() bool {
	for _, in := range m.Indicators {
		if in.Weight > 0 {
			return true
		}
	}
	return false
}

// Module is one hazard module after its data is loaded.
type Module interface {
	// Name is one of the module keys above.
	Name() string
	// Measure returns the module's indicators at site. It must be fast (the
	// engine's budget for all six modules is 200 microseconds), must not
	// allocate much, and must be deterministic.
	Measure(site Site) Measurement
	// Sources lists the data.Source ids the module read.
	Sources() []string
	// Rows reports how many data rows the module loaded per source id, for
	// `locrisk data check`.
	Rows() map[string]int
}
