package server

import (
	"encoding/json"
	"fmt"
	"net/http"

	"locrisk/risk"
)

// apiVersion is the apiVersion field of report and usage responses.
const apiVersion = "v1"

// Report detail levels (CONTRACT section 3).
const (
	detailSummary = "summary"
	detailFull    = "full"
)

// ReportView is the response of operation 5 (CONTRACT section 3).
type ReportView struct {
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

// reportIDParam is the {reportId} of the path as a lowercase UUID. Report
// ids are issued in lowercase; an uppercase spelling of the same UUID is
// accepted and normalised, as RFC 9562 says UUIDs compare case-insensitively.
// Other forms (braces, urn:uuid:, no hyphens) are 400 invalid_report_id.
func reportIDParam(r *http.Request) (string, error) {
	id, ok := canonicalUUID(r.PathValue("reportId"))
	if !ok {
		return "", errorf(codeInvalidReportID, "reportId must be a UUID such as 123e4567-e89b-12d3-a456-426614174000")
	}
	return id, nil
}

func canonicalUUID(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	b := []byte(s)
	for i, c := range b {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return "", false
			}
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			b[i] = c + ('a' - 'A')
		default:
			return "", false
		}
	}
	return string(b), true
}

// getReport is operation 5, GET /location-risk/reports/{reportId}. The 400s
// (report id, then detail) come before the 404, as CONTRACT section 5 says.
// The stored body is the engine's Assessment; the links are added here.
func (s *Server) getReport(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := reportIDParam(r)
	if err != nil {
		return err
	}
	q, err := parseQuery(r)
	if err != nil {
		return err
	}
	detail := detailSummary
	if vs, ok := q["detail"]; ok {
		detail = vs[0]
		if detail != detailSummary && detail != detailFull {
			return errorf(codeInvalidDetail, "detail must be summary or full")
		}
	}
	rep, err := s.store.GetReport(r.Context(), p.account.ID, id)
	if err != nil {
		return storeError(err, codeReportNotFound, s.now())
	}
	var a risk.Assessment
	if err := json.Unmarshal(rep.Body, &a); err != nil {
		return fmt.Errorf("report %s: stored body: %w", rep.ID, err)
	}
	self := reportPath(rep.ID)
	a.Summary.Links = risk.Links{Self: self, Full: self + "?detail=full", PDF: self + "/pdf", Job: jobPath(rep.JobID)}
	normaliseSummary(&a.Summary)
	v := ReportView{
		APIVersion:   apiVersion,
		Detail:       detail,
		ReportID:     rep.ID,
		JobID:        rep.JobID,
		GeneratedUTC: apiTime(rep.GeneratedUTC),
		Location:     a.Location,
		DataVersion:  rep.DataVersion,
		Summary:      a.Summary,
	}
	if v.DataVersion == "" {
		v.DataVersion = a.DataVersion
	}
	if detail == detailFull {
		normaliseFull(&a.Report)
		v.Report = &a.Report
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// normaliseSummary turns absent lists into empty ones, so clients always
// get arrays, never null.
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
