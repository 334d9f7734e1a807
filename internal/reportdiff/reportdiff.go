// Package reportdiff says what changed between two reports of one
// coordinate: the versions that made each (data, methodology, engine), the
// overall score and level before and after, and every module whose score or
// risk level differs, with the indicators that moved it most
// (docs/api.md, Report changes). It reads the reports as the API serves
// them, so the same comparison serves GET .../reports/{id}/changes, the
// report.changed webhook event and the operator's dry run over a new data
// pack, and it reads only the members it needs, so reports of every
// methodology version compare (docs/api.md, Reports).
package reportdiff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
)

// Errors of Compare, beside a document that is not JSON.
var (
	// ErrDifferentCoordinates is a pair of reports of two coordinates:
	// there is nothing to compare.
	ErrDifferentCoordinates = errors.New("the reports are of different coordinates")
	// ErrNotFullReport is a document without the full module payload
	// (detail=summary), which has no indicators to compare.
	ErrNotFullReport = errors.New("not a full report (detail=full)")
)

// MaxIndicators is how many indicators a module change lists at most.
const MaxIndicators = 3

// Versions are what made a report, from its provenance (docs/api.md,
// Reports; docs/verification.md). Methodology and Engine are nil for a
// report stored before they were recorded (the provenance's unrecorded);
// a report that predates provenance still names its methodology in its
// full section, which is used then.
type Versions struct {
	Data        string  `json:"dataVersion"`
	Methodology *string `json:"methodologyVersion"`
	Engine      *string `json:"engineVersion"`
}

// Overall is the overall score and risk level before and after.
type Overall struct {
	ScoreBefore int    `json:"scoreBefore"`
	ScoreAfter  int    `json:"scoreAfter"`
	LevelBefore string `json:"riskLevelBefore"`
	LevelAfter  string `json:"riskLevelAfter"`
}

// Material reports whether the overall result changed materially: its
// risk level changed, or its score moved by at least minScoreChange (any
// move when minScoreChange is below 1).
func (o Overall) Material(minScoreChange int) bool {
	return o.LevelBefore != o.LevelAfter || scoreMoved(&o.ScoreBefore, &o.ScoreAfter, minScoreChange)
}

// IndicatorMove is one indicator of a module as the two reports give it:
// its value (Before, After) and its population-weighted percentile, each
// null where that report has none (the indicator absent, a name with no
// number, a percentile not ranked).
type IndicatorMove struct {
	ID               string   `json:"id"`
	Label            string   `json:"label"`
	Unit             string   `json:"unit"`
	Peril            string   `json:"peril,omitempty"`
	Before           *float64 `json:"valueBefore"`
	After            *float64 `json:"valueAfter"`
	PercentileBefore *float64 `json:"percentileBefore"`
	PercentileAfter  *float64 `json:"percentileAfter"`
}

// ModuleChange is one module whose score or risk level differs. A score
// and level are null where the report had no data for the module (or,
// for a module one methodology has and the other has not, no such
// module).
type ModuleChange struct {
	Module      string  `json:"module"`
	ScoreBefore *int    `json:"scoreBefore"`
	ScoreAfter  *int    `json:"scoreAfter"`
	LevelBefore *string `json:"riskLevelBefore"`
	LevelAfter  *string `json:"riskLevelAfter"`
	// Indicators are the module's indicators that moved most, at most
	// MaxIndicators, largest move first. The move of an indicator is the
	// change of its percentile, in percentile points, where both reports
	// rank it; after those come the indicators ranked in one report only
	// (added, removed, or measured in one only), then those whose value
	// alone changed, by relative change |after-before|/max(|before|,|after|).
	// An indicator whose value and percentile are the same in both is not
	// listed; equal moves keep the current report's order.
	Indicators []IndicatorMove `json:"indicators"`
}

// Material reports whether the change is material (docs/api.md, Report
// changes): the risk level changed (no data on one side counts as a
// change of level), or the score moved by at least minScoreChange (any
// move when minScoreChange is below 1).
func (m ModuleChange) Material(minScoreChange int) bool {
	return !sameString(m.LevelBefore, m.LevelAfter) || scoreMoved(m.ScoreBefore, m.ScoreAfter, minScoreChange)
}

// Comparison is what changed from the previous report to the current one.
type Comparison struct {
	PreviousReportID string   `json:"previousReportId"`
	CurrentReportID  string   `json:"currentReportId"`
	Previous         Versions `json:"previous"`
	Current          Versions `json:"current"`
	Overall          Overall  `json:"overall"`
	// Changes are every module whose score or level differs, in the
	// current report's module order (the registry's), then any module
	// only the previous report has; empty, never nil, when none does.
	Changes []ModuleChange `json:"changes"`
}

// Material returns the changes that are material at minScoreChange
// (ModuleChange.Material), in order; nil when none is.
func (c Comparison) Material(minScoreChange int) []ModuleChange {
	var out []ModuleChange
	for _, m := range c.Changes {
		if m.Material(minScoreChange) {
			out = append(out, m)
		}
	}
	return out
}

// IsMaterial reports whether the current report differs materially from
// the previous one: a module change is material, or the overall result
// changed materially (an overall level can change while no module moves
// far, as the overall index weighs every module).
func (c Comparison) IsMaterial(minScoreChange int) bool {
	return c.Overall.Material(minScoreChange) || len(c.Material(minScoreChange)) > 0
}

// Compare compares two full reports, previous and current, as GET
// /location-risk/reports/{reportId}?detail=full serves them (the stored
// engine output, without the API's envelope, compares too). Members it
// does not read are ignored. It fails for a document that is not a full
// report (ErrNotFullReport) and for reports of different coordinates
// (ErrDifferentCoordinates): the latitudes and longitudes must be equal.
func Compare(previous, current []byte) (Comparison, error) {
	prev, err := parse(previous)
	if err != nil {
		return Comparison{}, fmt.Errorf("previous report: %w", err)
	}
	cur, err := parse(current)
	if err != nil {
		return Comparison{}, fmt.Errorf("current report: %w", err)
	}
	if *prev.Location.Latitude != *cur.Location.Latitude || *prev.Location.Longitude != *cur.Location.Longitude {
		return Comparison{}, fmt.Errorf("%w: %v,%v and %v,%v", ErrDifferentCoordinates,
			*prev.Location.Latitude, *prev.Location.Longitude, *cur.Location.Latitude, *cur.Location.Longitude)
	}
	c := Comparison{
		PreviousReportID: prev.ReportID,
		CurrentReportID:  cur.ReportID,
		Previous:         prev.versions(),
		Current:          cur.versions(),
		Overall: Overall{
			ScoreBefore: *prev.Summary.OverallScore, ScoreAfter: *cur.Summary.OverallScore,
			LevelBefore: prev.Summary.RiskLevel, LevelAfter: cur.Summary.RiskLevel,
		},
		Changes: []ModuleChange{},
	}
	for _, key := range moduleOrder(prev.Report.Modules, cur.Report.Modules) {
		before, _ := prev.Report.Modules.get(key)
		after, _ := cur.Report.Modules.get(key)
		if sameInt(before.Score, after.Score) && sameString(before.RiskLevel, after.RiskLevel) {
			continue
		}
		c.Changes = append(c.Changes, ModuleChange{
			Module:      key,
			ScoreBefore: before.Score, ScoreAfter: after.Score,
			LevelBefore: before.RiskLevel, LevelAfter: after.RiskLevel,
			Indicators: movers(before.Indicators, after.Indicators),
		})
	}
	return c, nil
}

// document is what Compare reads of a report.
type document struct {
	ReportID    string `json:"reportId"`
	Detail      string `json:"detail"`
	DataVersion string `json:"dataVersion"`
	Location    struct {
		Latitude  *float64 `json:"latitude"`
		Longitude *float64 `json:"longitude"`
	} `json:"location"`
	Summary struct {
		OverallScore *int   `json:"overallScore"`
		RiskLevel    string `json:"riskLevel"`
	} `json:"summary"`
	Report *struct {
		Modules     modules `json:"modules"`
		Methodology struct {
			Version string `json:"version"`
		} `json:"methodology"`
	} `json:"report"`
	Provenance *struct {
		EngineVersion      *string `json:"engineVersion"`
		MethodologyVersion *string `json:"methodologyVersion"`
		DataVersion        string  `json:"dataVersion"`
	} `json:"provenance"`
}

// parse decodes a report and checks it has what a comparison needs.
func parse(b []byte) (*document, error) {
	var d document
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, err
	}
	switch {
	case d.Detail != "" && d.Detail != "full", d.Report == nil || d.Report.Modules == nil:
		return nil, ErrNotFullReport
	case d.Location.Latitude == nil || d.Location.Longitude == nil:
		return nil, errors.New("no location.latitude and location.longitude")
	case d.Summary.OverallScore == nil:
		return nil, errors.New("no summary.overallScore")
	}
	return &d, nil
}

// versions reads the provenance, falling back on what a report stored
// before it had (docs/api.md, Reports: provenance).
func (d *document) versions() Versions {
	v := Versions{Data: d.DataVersion}
	if p := d.Provenance; p != nil {
		if p.DataVersion != "" {
			v.Data = p.DataVersion
		}
		v.Engine = nonEmpty(p.EngineVersion)
		v.Methodology = nonEmpty(p.MethodologyVersion)
	}
	if v.Methodology == nil && d.Report.Methodology.Version != "" {
		m := d.Report.Methodology.Version
		v.Methodology = &m
	}
	return v
}

func nonEmpty(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}

// module is what Compare reads of one module of the full report.
type module struct {
	Score      *int        `json:"score"`
	RiskLevel  *string     `json:"riskLevel"`
	Indicators []indicator `json:"indicators"`
}

// indicator is what Compare reads of one indicator. Value is read from
// raw JSON, as a report stored before indicators had text wrote a name or
// a status there: anything but a number is no value.
type indicator struct {
	ID         string          `json:"id"`
	Label      string          `json:"label"`
	Unit       string          `json:"unit"`
	Peril      string          `json:"peril"`
	RawValue   json.RawMessage `json:"value"`
	Percentile *float64        `json:"percentile"`
}

func (in *indicator) value() *float64 {
	var f *float64
	if err := json.Unmarshal(in.RawValue, &f); err != nil {
		return nil
	}
	return f
}

// modules are the full report's modules in document order.
type modules []moduleEntry

type moduleEntry struct {
	key string
	m   module
}

func (ms modules) get(key string) (module, bool) {
	for _, e := range ms {
		if e.key == key {
			return e.m, true
		}
	}
	return module{}, false
}

// UnmarshalJSON reads the modules object keeping its order; a repeated key
// keeps its first place and its last value, as encoding/json would.
func (ms *modules) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*ms = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil {
		return err
	} else if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("report.modules is not a JSON object")
	}
	out := modules{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string) // an object's keys are strings
		var m module
		if err := dec.Decode(&m); err != nil {
			return fmt.Errorf("report.modules.%s: %w", key, err)
		}
		replaced := false
		for i := range out {
			if out[i].key == key {
				out[i].m, replaced = m, true
			}
		}
		if !replaced {
			out = append(out, moduleEntry{key, m})
		}
	}
	*ms = out
	return nil
}

// moduleOrder is the current report's module keys, then those only the
// previous one has.
func moduleOrder(prev, cur modules) []string {
	keys := make([]string, 0, len(cur)+len(prev))
	for _, e := range cur {
		keys = append(keys, e.key)
	}
	for _, e := range prev {
		if _, ok := cur.get(e.key); !ok {
			keys = append(keys, e.key)
		}
	}
	return keys
}

// movers pairs a module's indicators by id (the n-th of an id with the
// n-th) and returns those that moved most, as ModuleChange.Indicators
// says, never nil.
func movers(before, after []indicator) []IndicatorMove {
	type pair struct {
		b, a *indicator
	}
	var pairs []pair
	index := map[string][]int{} // id -> positions in pairs, in order
	for i := range after {
		id := after[i].ID
		index[id] = append(index[id], len(pairs))
		pairs = append(pairs, pair{a: &after[i]})
	}
	seen := map[string]int{}
	for i := range before {
		id := before[i].ID
		n := seen[id]
		seen[id]++
		if n < len(index[id]) {
			pairs[index[id][n]].b = &before[i]
		} else {
			pairs = append(pairs, pair{b: &before[i]})
		}
	}
	type ranked struct {
		move IndicatorMove
		tier int     // 0: percentile change, 1: ranked on one side, 2: value only
		size float64 // within the tier, larger first
		pos  int
	}
	var rs []ranked
	for i, p := range pairs {
		mv := IndicatorMove{}
		if p.b != nil {
			mv.ID, mv.Label, mv.Unit, mv.Peril = p.b.ID, p.b.Label, p.b.Unit, p.b.Peril
			mv.Before, mv.PercentileBefore = p.b.value(), p.b.Percentile
		}
		if p.a != nil {
			mv.ID, mv.Label, mv.Unit, mv.Peril = p.a.ID, p.a.Label, p.a.Unit, p.a.Peril
			mv.After, mv.PercentileAfter = p.a.value(), p.a.Percentile
		}
		r := ranked{move: mv, pos: i}
		pb, pa := mv.PercentileBefore, mv.PercentileAfter
		switch {
		case pb != nil && pa != nil && *pb != *pa:
			r.tier, r.size = 0, math.Abs(*pa-*pb)
		case (pb == nil) != (pa == nil):
			r.tier = 1
		case !sameFloat(mv.Before, mv.After):
			r.tier, r.size = 2, relativeChange(mv.Before, mv.After)
		default:
			continue
		}
		rs = append(rs, r)
	}
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].tier != rs[j].tier {
			return rs[i].tier < rs[j].tier
		}
		if rs[i].size != rs[j].size {
			return rs[i].size > rs[j].size
		}
		return rs[i].pos < rs[j].pos
	})
	out := make([]IndicatorMove, 0, min(len(rs), MaxIndicators))
	for _, r := range rs[:min(len(rs), MaxIndicators)] {
		out = append(out, r.move)
	}
	return out
}

// relativeChange is |a-b| / max(|a|,|b|), 1 when one side has no value.
func relativeChange(b, a *float64) float64 {
	if b == nil || a == nil {
		return 1
	}
	d := math.Abs(*a - *b)
	if m := math.Max(math.Abs(*a), math.Abs(*b)); m > 0 {
		return d / m
	}
	return 0
}

// scoreMoved reports whether a score moved by at least min (or at all, for
// min below 1); a score appearing or disappearing has moved.
func scoreMoved(before, after *int, minChange int) bool {
	if before == nil || after == nil {
		return (before == nil) != (after == nil)
	}
	d := *after - *before
	if d < 0 {
		d = -d
	}
	return d > 0 && d >= minChange
}

func sameInt(a, b *int) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func sameString(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func sameFloat(a, b *float64) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
