package view

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/risk"
)

// APIVersion is the apiVersion field of report, usage and operations
// summary responses.
const APIVersion = "v1"

// Report detail levels (docs/api.md, Reports).
const (
	DetailSummary = "summary"
	DetailFull    = "full"
)

// Report is the response of GET /location-risk/reports/{reportId}
// (docs/api.md, Reports), and what `locrisk report --json` prints.
type Report struct {
	APIVersion   string        `json:"apiVersion"`
	Detail       string        `json:"detail"`
	ReportID     string        `json:"reportId"`
	JobID        string        `json:"jobId"`
	GeneratedUTC string        `json:"generatedUtc"`
	Location     risk.Location `json:"location"`
	DataVersion  string        `json:"dataVersion"`
	Summary      risk.Summary  `json:"summary"`
	Report       *risk.Full    `json:"report,omitempty"`
	Provenance   Provenance    `json:"provenance"`
}

// Provenance is the report's provenance member (docs/api.md, Reports;
// docs/verification.md): what made the report, from what, and when. A
// report stored before this was recorded has null for what it did not
// record, named in unrecorded.
type Provenance struct {
	EngineVersion      *string `json:"engineVersion"`
	MethodologyVersion *string `json:"methodologyVersion"`
	DataVersion        string  `json:"dataVersion"`
	DataManifestSHA256 *string `json:"dataManifestSha256"`
	Inputs             Inputs  `json:"inputs"`
	GeneratedUTC       string  `json:"generatedUtc"`
	// ReportSHA256 is the SHA-256 of the engine's output as the service
	// stored it when the job completed (the assessment's JSON, before the
	// links and this member are added): replay recomputes it.
	ReportSHA256 string   `json:"reportSha256"`
	Unrecorded   []string `json:"unrecorded,omitempty"`
}

// Inputs are what the report was asked for: the coordinate as the job
// gave it, and the detail of this document.
type Inputs struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Detail    string  `json:"detail"`
}

// NewReport renders the stored report at detail (DetailSummary or
// DetailFull). The stored body is the engine's Assessment; the links are
// added here, and absent lists become empty ones, so clients always get
// arrays, never null.
func NewReport(rep locrisk.Report, detail string) (Report, error) {
	if detail != DetailSummary && detail != DetailFull {
		return Report{}, fmt.Errorf("report %s: unknown detail %q", rep.ID, detail)
	}
	a, err := assessment(rep)
	if err != nil {
		return Report{}, err
	}
	self := ReportPath(rep.ID)
	a.Summary.Links = risk.Links{Self: self, Full: self + "?detail=" + DetailFull, PDF: ReportPDFPath(rep.ID), Job: JobPath(rep.JobID)}
	normaliseSummary(&a.Summary)
	v := Report{
		APIVersion:   APIVersion,
		Detail:       detail,
		ReportID:     rep.ID,
		JobID:        rep.JobID,
		GeneratedUTC: Time(rep.GeneratedUTC),
		Location:     a.Location,
		DataVersion:  rep.DataVersion,
		Summary:      a.Summary,
	}
	if v.DataVersion == "" {
		v.DataVersion = a.DataVersion
	}
	if detail == DetailFull {
		normaliseFull(&a.Report)
		v.Report = &a.Report
	}
	v.Provenance = provenanceOf(rep, &a, v.DataVersion, detail)
	return v, nil
}

// provenanceOf is the provenance of the stored report rep, whose body is a.
func provenanceOf(rep locrisk.Report, a *risk.Assessment, dataVersion, detail string) Provenance {
	sum := sha256.Sum256(rep.Body)
	p := Provenance{
		DataVersion:  dataVersion,
		Inputs:       Inputs{Latitude: a.Location.Latitude, Longitude: a.Location.Longitude, Detail: detail},
		GeneratedUTC: Time(rep.GeneratedUTC),
		ReportSHA256: hex.EncodeToString(sum[:]),
	}
	if ap := a.Provenance; ap != nil {
		p.EngineVersion, p.MethodologyVersion, p.DataManifestSHA256 = &ap.EngineVersion, &ap.MethodologyVersion, &ap.DataManifestSHA256
		return p
	}
	// A body stored before provenance was recorded still names its
	// methodology in its full section.
	if v := a.Report.Methodology.Version; v != "" {
		p.MethodologyVersion = &v
	} else {
		p.Unrecorded = append(p.Unrecorded, "methodologyVersion")
	}
	p.Unrecorded = append(p.Unrecorded, "engineVersion", "dataManifestSha256")
	return p
}

// assessment decodes the stored body of rep, the engine's Assessment.
func assessment(rep locrisk.Report) (risk.Assessment, error) {
	var a risk.Assessment
	if err := json.Unmarshal(rep.Body, &a); err != nil {
		return risk.Assessment{}, fmt.Errorf("report %s: stored body: %w", rep.ID, err)
	}
	return a, nil
}

// normaliseSummary turns absent lists into empty ones.
func normaliseSummary(s *risk.Summary) {
	if s.TopRisks == nil {
		s.TopRisks = []risk.TopRisk{}
	}
	if s.Recommendations == nil {
		s.Recommendations = []risk.Recommendation{}
	}
	if s.ReviewFlags == nil {
		s.ReviewFlags = []risk.ReviewFlag{}
	}
}

// normaliseFull turns absent lists of the full report into empty ones.
func normaliseFull(f *risk.Full) {
	if f.Sources == nil {
		f.Sources = []risk.SourceRef{}
	}
	for i := range f.Modules {
		m := &f.Modules[i].Value
		if m.Indicators == nil {
			m.Indicators = []risk.Indicator{}
		}
		if m.Perils == nil {
			m.Perils = []risk.Peril{}
		}
	}
}
