package risk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// The types below are the engine's output and, field for field, the body of
// a report as docs/api.md (Reports) describes it. The server stores an
// Assessment as JSON once, when the job completes, and serves it from there.

// Location is where the assessed point is.
type Location struct {
	Latitude   float64 `json:"latitude"`
	Longitude  float64 `json:"longitude"`
	StateCode  string  `json:"stateCode"`
	StateName  string  `json:"stateName"`
	CountyFIPS string  `json:"countyFips"`
	CountyName string  `json:"countyName"`
}

// Assessment is everything a report needs.
type Assessment struct {
	Location    Location `json:"location"`
	DataVersion string   `json:"dataVersion"`
	Summary     Summary  `json:"summary"`
	Report      Full     `json:"report"`
	// Provenance is nil in the bodies of reports stored before it was
	// recorded.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// Provenance records what made an assessment, so that a report can say it
// and be recomputed (docs/verification.md): the engine's version (the
// binary's, internal/version), the methodology's, and the data's with the
// digest of its manifest (data.Manifest.Digest).
type Provenance struct {
	EngineVersion      string `json:"engineVersion"`
	MethodologyVersion string `json:"methodologyVersion"`
	DataVersion        string `json:"dataVersion"`
	DataManifestSHA256 string `json:"dataManifestSha256"`
}

// Summary is the compact decision output (detail=summary).
type Summary struct {
	OverallScore int    `json:"overallScore"`
	RiskLevel    string `json:"riskLevel"`
	// OverallDriver names the module whose score drives the overall index
	// (the highest), so one severe peril is not read as low risk overall.
	OverallDriver string       `json:"overallDriver,omitempty"`
	Confidence    Confidence   `json:"confidence"`
	ModuleScores  ModuleScores `json:"moduleScores"`
	// Perils are each module's perils with their scores and, where known,
	// annual probabilities (an additive field).
	Perils          ByModule[[]Peril] `json:"perils"`
	TopRisks        []TopRisk         `json:"topRisks"`
	Recommendations []Recommendation  `json:"recommendations"`
	ReviewFlags     []ReviewFlag      `json:"reviewFlags"`
	Links           Links             `json:"links"`
	// Outlook is the brief outlook (outlook.go): absent from reports made
	// before methodology 4.1, null where the outlook's data have no row
	// for the county, and OutlookUnavailable then says why.
	Outlook            Recorded[OutlookBrief] `json:"outlook,omitzero"`
	OutlookUnavailable *OutlookUnavailable    `json:"outlookUnavailable,omitempty"`
}

// Confidence is a level (low, medium, high) with its score in 0..1.
type Confidence struct {
	Level string  `json:"level"`
	Score float64 `json:"score"`
}

// ModuleScores has exactly the registry's module keys; a nil score means no
// data covers that module at the location.
type ModuleScores = ByModule[*int]

// Peril is one peril's result inside a module.
type Peril struct {
	Peril      string      `json:"peril"`
	Title      string      `json:"title"`
	Score      *int        `json:"score"` // null where no data covers the peril
	RiskLevel  *string     `json:"riskLevel"`
	Confidence *Confidence `json:"confidence"`
	// Resolution is the resolution kind of the peril's weighted indicators
	// (site, grid, reported_events, county), or mixed.
	Resolution string `json:"resolution,omitempty"`
	// AnnualProbability of the peril's damaging event where the data give
	// one, with ReturnPeriodYears = 1/AnnualProbability and what it measures.
	AnnualProbability *float64 `json:"annualProbability"`
	ReturnPeriodYears *float64 `json:"returnPeriodYears"`
	ProbabilityBasis  string   `json:"probabilityBasis,omitempty"`
	// ChanceOf names the event the probability is the chance of, in a few
	// words ("an M5+ earthquake within 50 km").
	ChanceOf string `json:"chanceOf,omitempty"`
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

// ReviewFlag asks a human to look at something. Module is the key of the
// module it concerns (as in moduleScores), so a program need not read the
// message to learn it; it is absent from flags about the location or
// about several modules.
type ReviewFlag struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Module  string `json:"module,omitempty"`
}

// Links are API paths; package view fills them in, the engine leaves them
// empty.
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
	// Outlook is the outlook (outlook.go), absent or null as the
	// summary's is.
	Outlook            Recorded[Outlook]   `json:"outlook,omitzero"`
	OutlookUnavailable *OutlookUnavailable `json:"outlookUnavailable,omitempty"`
}

// Modules has one entry per module, keyed like ModuleScores.
type Modules = ByModule[ModuleReport]

// ModuleReport is one module's full result.
type ModuleReport struct {
	Score      *int        `json:"score"`
	RiskLevel  *string     `json:"riskLevel"`
	Confidence Confidence  `json:"confidence"`
	Basis      string      `json:"basis"` // hazard_data, nri_fallback or no_data
	Perils     []Peril     `json:"perils"`
	Indicators []Indicator `json:"indicators"`
	Narrative  string      `json:"narrative"`
}

// Indicator is one measured quantity with its population-weighted
// percentile among US residents. Value is always a number or null; the
// wording of a value that a number does not say (a site's name, "none
// within 100 km", FEMA's "Not Applicable") is Text (docs/api.md, Reports;
// docs/methodology.md).
type Indicator struct {
	ID         string   `json:"id"`
	Label      string   `json:"label"`
	Value      *float64 `json:"value"`
	Text       *string  `json:"text"`
	Unit       string   `json:"unit"`
	Percentile *float64 `json:"percentile"`
	Source     string   `json:"source"`
	// Peril is the peril the indicator informs; empty for module context.
	Peril string `json:"peril,omitempty"`
	// Resolution is site, grid, reported_events or county, with the
	// detail (cell size, radius) and the data vintage.
	Resolution       string `json:"resolution,omitempty"`
	ResolutionDetail string `json:"resolutionDetail,omitempty"`
	Vintage          string `json:"vintage,omitempty"`
}

// UnmarshalJSON reads an indicator, also as reports stored before Text
// existed wrote it: a text value there (a name, a status) becomes Text
// with a null Value, so an old report reads as a new one would.
func (in *Indicator) UnmarshalJSON(b []byte) error {
	type plain Indicator // without this method
	var raw struct {
		plain
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*in = Indicator(raw.plain)
	in.Value = nil
	switch v := bytes.TrimSpace(raw.Value); {
	case len(v) == 0 || string(v) == "null":
	case v[0] == '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("indicator %s: value: %w", in.ID, err)
		}
		if in.Text == nil {
			in.Text = &s
		}
	default:
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return fmt.Errorf("indicator %s: value: %w", in.ID, err)
		}
		in.Value = &f
	}
	return nil
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

// Level bands: a score from scoreModerate is moderate, from scoreHigh high.
const (
	scoreModerate = 40
	scoreHigh     = 60
)

// RiskLevel maps a 0..100 score to the level names of docs/api.md (Read a
// report, summary.riskLevel).
func RiskLevel(score int) string {
	switch {
	case score < 20:
		return "very_low"
	case score < scoreModerate:
		return "low"
	case score < scoreHigh:
		return "moderate"
	case score < 80:
		return "high"
	default:
		return "very_high"
	}
}

// ResolutionText names a peril's or indicator's resolution for a person:
// "site", "grid", "reported events", "county average", "mixed
// resolutions"; an unknown kind comes back as it is, underscores spaced.
func ResolutionText(kind string) string {
	switch kind {
	case hazard.ResReportedEvents:
		return "reported events"
	case hazard.ResCounty:
		return "county average"
	case hazard.ResCountyAllocated:
		return "county, allocated to the site"
	case hazard.ResPlaceTable:
		return "place table"
	case "mixed":
		return "mixed resolutions"
	}
	return strings.ReplaceAll(kind, "_", " ")
}
