package view

import (
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
	return v, nil
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
