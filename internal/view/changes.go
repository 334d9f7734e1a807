package view

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/reportdiff"
)

// DefaultMinScoreChange is the score move that makes a module change
// material when the caller names none (docs/api.md, Report changes).
const DefaultMinScoreChange = 5

// ReportChanges is the response of GET
// /location-risk/reports/{reportId}/changes?since={reportId} (docs/api.md,
// Report changes): the comparison of the report since (previous) with the
// report of the path (current), each change marked material or not at
// minScoreChange.
type ReportChanges struct {
	APIVersion       string              `json:"apiVersion"`
	PreviousReportID string              `json:"previousReportId"`
	CurrentReportID  string              `json:"currentReportId"`
	Previous         reportdiff.Versions `json:"previous"`
	Current          reportdiff.Versions `json:"current"`
	MinScoreChange   int                 `json:"minScoreChange"`
	// Material is true when the overall result or any module changed
	// materially (reportdiff.Comparison.IsMaterial).
	Material bool           `json:"material"`
	Overall  OverallChange  `json:"overall"`
	Changes  []ModuleChange `json:"changes"`
	Links    ChangesLinks   `json:"links"`
}

// OverallChange is the overall score and level before and after, and
// whether that change is material.
type OverallChange struct {
	reportdiff.Overall
	Material bool `json:"material"`
}

// ModuleChange is one module whose score or level differs, and whether
// that change is material.
type ModuleChange struct {
	reportdiff.ModuleChange
	Material bool `json:"material"`
}

// ChangesLinks are the paths of the comparison and of its two reports.
type ChangesLinks struct {
	Self     string `json:"self"`
	Previous string `json:"previous"`
	Current  string `json:"current"`
}

// ReportJSON is the report rep as GET /location-risk/reports/{reportId}
// shows it at detail, without the signature: what reportdiff.Compare
// reads (with DetailFull).
func ReportJSON(rep locrisk.Report, detail string) ([]byte, error) {
	v, err := NewReport(rep, detail)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("report %s: %w", rep.ID, err)
	}
	return b, nil
}

// NewReportChanges compares the stored reports previous and current
// (reportdiff.Compare of their full documents). Reports of two
// coordinates fail with reportdiff.ErrDifferentCoordinates.
func NewReportChanges(previous, current locrisk.Report, minScoreChange int) (ReportChanges, error) {
	prev, err := ReportJSON(previous, DetailFull)
	if err != nil {
		return ReportChanges{}, err
	}
	cur, err := ReportJSON(current, DetailFull)
	if err != nil {
		return ReportChanges{}, err
	}
	c, err := reportdiff.Compare(prev, cur)
	if err != nil {
		return ReportChanges{}, fmt.Errorf("reports %s and %s: %w", previous.ID, current.ID, err)
	}
	v := ReportChanges{
		APIVersion:       APIVersion,
		PreviousReportID: previous.ID,
		CurrentReportID:  current.ID,
		Previous:         c.Previous,
		Current:          c.Current,
		MinScoreChange:   minScoreChange,
		Material:         c.IsMaterial(minScoreChange),
		Overall:          OverallChange{Overall: c.Overall, Material: c.Overall.Material(minScoreChange)},
		Changes:          make([]ModuleChange, len(c.Changes)),
		Links: ChangesLinks{
			Self:     ReportChangesPath(current.ID, previous.ID, minScoreChange),
			Previous: ReportPath(previous.ID),
			Current:  ReportPath(current.ID),
		},
	}
	for i, m := range c.Changes {
		v.Changes[i] = ModuleChange{ModuleChange: m, Material: m.Material(minScoreChange)}
	}
	return v, nil
}

// ReportChangesPath is the path of the comparison of report id with the
// report since, with minScoreChange when it is not the default.
func ReportChangesPath(id, since string, minScoreChange int) string {
	q := url.Values{"since": {since}}
	if minScoreChange != DefaultMinScoreChange {
		q.Set("minScoreChange", strconv.Itoa(minScoreChange))
	}
	return ReportChangesRoute(id) + "?" + q.Encode()
}
