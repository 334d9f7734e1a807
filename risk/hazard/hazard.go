// Package hazard defines what a hazard module measures at a site. Each module
// package (earthquake, severeweather, hydrology, wildfire, landslide,
// environment) loads its data sets and turns a Site into a Measurement of raw
// hazard indicators; the risk package ranks those against a national
// reference set, scores, and writes the report.
//
// Modules hold no mutable state after loading and are safe for concurrent use.
package hazard

// Module names, exactly as the report's moduleScores keys.
const (
	Hydrology             = "hydrology"
	SevereWeather         = "severeWeather"
	Wildfire              = "wildfire"
	Earthquake            = "earthquake"
	Landslide             = "landslide"
	EnvironmentalExposure = "environmentalExposure"
)

// Modules lists the module names in report order.
var Modules = []string{Hydrology, SevereWeather, Wildfire, Earthquake, Landslide, EnvironmentalExposure}

// Site is a point resolved to its county by the coverage layer.
type Site struct {
	Lat, Lon   float64
	CountyFIPS string // 5 digits, e.g. "06075"
	StateFIPS  string // 2 digits
	StateCode  string // USPS code, e.g. "CA"
	Conus      bool   // in the 48 conterminous states or DC
}

// Indicator is one measured quantity at a site.
type Indicator struct {
	ID     string  // stable id, e.g. "pga_2pct_50yr"
	Label  string  // plain-language label for reports
	Value  float64 // the measured value
	Unit   string  // "g", "km", "per year", "probability", "count", "percent", "score", ...
	Source string  // data.Source id
	// Ranked indicators get a national percentile: the engine ranks Value
	// against the same indicator measured at every reference point. Context
	// indicators (names, benchmark scores that are already percentiles) are
	// not ranked.
	Ranked bool
	// Weight of this indicator's percentile in the module score; 0 means it
	// is reported but does not drive the score. Only ranked indicators can
	// carry weight.
	Weight float64
	// Percentile, when set by the module itself (a value that is already a
	// national percentile, such as an NRI score), is reported as is.
	Percentile *float64
	// Text carries a non-numeric value (a site name, a status) for display.
	Text string
}

// Measurement is what a module found at a site.
type Measurement struct {
	Indicators []Indicator
	// Confidence in the module's own hazard data at this site, 0..1, before
	// the engine's adjustments (county-level only, fallbacks).
	Confidence float64
	// CountyLevelOnly is true when every weighted indicator is a county
	// aggregate rather than a site measurement.
	CountyLevelOnly bool
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
	// Name is one of the module names above.
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
