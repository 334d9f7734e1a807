package risk

// The types below are the engine's output and, field for field, the body of
// a report as CONTRACT section 3 defines it. The server stores an Assessment
// as JSON once, when the job completes, and serves it from there.

// Location is where the assessed point is.
type Location struct {
	Latitude   float64 `json:"latitude"`
	Longitude  float64 `json:"longitude"`
	StateCode  string  `json:"stateCode"`
	StateName  string  `json:"stateName"`
	CountyFips string  `json:"countyFips"`
	CountyName string  `json:"countyName"`
}

// Assessment is everything a report needs.
type Assessment struct {
	Location    Location `json:"location"`
	DataVersion string   `json:"dataVersion"`
	Summary     Summary  `json:"summary"`
	Report      Full     `json:"report"`
}

// Summary is the compact decision output (detail=summary).
type Summary struct {
	OverallScore    int              `json:"overallScore"`
	RiskLevel       string           `json:"riskLevel"`
	Confidence      Confidence       `json:"confidence"`
	ModuleScores    ModuleScores     `json:"moduleScores"`
	TopRisks        []TopRisk        `json:"topRisks"`
	Recommendations []Recommendation `json:"recommendations"`
	ReviewFlags     []ReviewFlag     `json:"reviewFlags"`
	Links           Links            `json:"links"`
}

// Confidence is a level (low, medium, high) with its score in 0..1.
type Confidence struct {
	Level string  `json:"level"`
	Score float64 `json:"score"`
}

// ModuleScores has exactly the six module keys; a nil score means no data
// covers that module at the location.
type ModuleScores struct {
	Hydrology             *int `json:"hydrology"`
	SevereWeather         *int `json:"severeWeather"`
	Wildfire              *int `json:"wildfire"`
	Earthquake            *int `json:"earthquake"`
	Landslide             *int `json:"landslide"`
	EnvironmentalExposure *int `json:"environmentalExposure"`
}

// TopRisk is one of the up to three highest-scoring modules.
type TopRisk struct {
	Module    string `json:"module"`
	Score     int    `json:"score"`
	RiskLevel string `json:"riskLevel"`
	Reason    string `json:"reason"`
}

// Recommendation is an action for one module.
type Recommendation struct {
	Module   string `json:"module"`
	Priority string `json:"priority"` // high, medium, low
	Text     string `json:"text"`
}

// ReviewFlag asks a human to look at something.
type ReviewFlag struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Links are API paths; the server fills them in, the engine leaves them empty.
type Links struct {
	Self string `json:"self"`
	Full string `json:"full"`
	PDF  string `json:"pdf"`
	Job  string `json:"job"`
}

// Full is the complete module payload (detail=full).
type Full struct {
	Modules     Modules     `json:"modules"`
	Sources     []SourceRef `json:"sources"`
	Methodology Methodology `json:"methodology"`
}

// Modules has one entry per module, keyed like ModuleScores.
type Modules struct {
	Hydrology             ModuleReport `json:"hydrology"`
	SevereWeather         ModuleReport `json:"severeWeather"`
	Wildfire              ModuleReport `json:"wildfire"`
	Earthquake            ModuleReport `json:"earthquake"`
	Landslide             ModuleReport `json:"landslide"`
	EnvironmentalExposure ModuleReport `json:"environmentalExposure"`
}

// ModuleReport is one module's full result.
type ModuleReport struct {
	Score      *int        `json:"score"`
	RiskLevel  *string     `json:"riskLevel"`
	Confidence Confidence  `json:"confidence"`
	Basis      string      `json:"basis"` // hazard_data, nri_fallback or no_data
	Indicators []Indicator `json:"indicators"`
	Narrative  string      `json:"narrative"`
}

// Indicator is one measured quantity with its national percentile.
type Indicator struct {
	ID         string   `json:"id"`
	Label      string   `json:"label"`
	Value      any      `json:"value"` // number, or text for names and statuses
	Unit       string   `json:"unit"`
	Percentile *float64 `json:"percentile"`
	Source     string   `json:"source"`
}

// SourceRef cites one data set used.
type SourceRef struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Publisher  string `json:"publisher"`
	Version    string `json:"version"`
	Resolution string `json:"resolution"`
}

// Methodology names the scoring method version.
type Methodology struct {
	Version     string `json:"version"`
	Description string `json:"description"`
}

// ModuleList returns the module reports in report order with their names.
func (m *Modules) ModuleList() []NamedModule {
	return []NamedModule{
		{"hydrology", &m.Hydrology}, {"severeWeather", &m.SevereWeather}, {"wildfire", &m.Wildfire},
		{"earthquake", &m.Earthquake}, {"landslide", &m.Landslide}, {"environmentalExposure", &m.EnvironmentalExposure},
	}
}

// NamedModule pairs a module name with its report.
type NamedModule struct {
	Name   string
	Report *ModuleReport
}

// RiskLevel maps a 0..100 score to the contract's level names.
func RiskLevel(score int) string {
	switch {
	case score < 20:
		return "very_low"
	case score < 40:
		return "low"
	case score < 60:
		return "moderate"
	case score < 80:
		return "high"
	default:
		return "very_high"
	}
}
