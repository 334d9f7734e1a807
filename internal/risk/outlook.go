package risk

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/futurerisk"
)

// The outlook (docs/methodology.md, "Outlook"; docs/api.md, Reports):
// FEMA's NRI Future Risk projections for the site's county, shown beside
// the scores as context. Nothing in it enters a score, level,
// recommendation or review flag.

// Recorded holds a report member added after reports were first stored.
// Its zero value, the member of a report made before it existed, leaves
// the member out of the JSON, so such a report is served as it was
// stored; once recorded, a nil Value is written as null.
type Recorded[T any] struct {
	Set   bool
	Value *T
}

// Record returns v recorded (nil: recorded as null).
func Record[T any](v *T) Recorded[T] { return Recorded[T]{Set: true, Value: v} }

// IsZero reports whether the member was not recorded (the omitzero option).
func (r Recorded[T]) IsZero() bool { return !r.Set }

// MarshalJSON writes the value, or null.
func (r Recorded[T]) MarshalJSON() ([]byte, error) { return json.Marshal(r.Value) }

// UnmarshalJSON reads a present member: null or a value.
func (r *Recorded[T]) UnmarshalJSON(b []byte) error {
	r.Set, r.Value = true, nil
	if string(b) == "null" {
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	r.Value = &v
	return nil
}

// Outlook is the full report's outlook.
type Outlook struct {
	Source    string `json:"source"` // catalog id
	Name      string `json:"name"`
	Publisher string `json:"publisher"`
	Vintage   string `json:"vintage"` // as the data pack's manifest states it
	// Withdrawal notes that FEMA no longer publishes the product.
	Withdrawal string `json:"withdrawal"`
	Resolution string `json:"resolution"` // "county"
	// CountyFIPS and CountyName name the county row used, as the file
	// names it; CountyNote says when it is an older county standing in
	// for the site's (Connecticut's planning regions), else null.
	CountyFIPS string         `json:"countyFips"`
	CountyName string         `json:"countyName"`
	CountyNote *string        `json:"countyNote"`
	Note       string         `json:"note"`
	Hazards    OutlookHazards `json:"hazards"`
}

// OutlookHazards has one entry per hazard of the source, in its order.
type OutlookHazards struct {
	CoastalFlooding OutlookHazard `json:"coastalFlooding"`
	Drought         OutlookHazard `json:"drought"`
	ExtremeHeat     OutlookHazard `json:"extremeHeat"`
	Hurricane       OutlookHazard `json:"hurricane"`
	Wildfire        OutlookHazard `json:"wildfire"`
}

// OutlookHazardEntry is one hazard with its key ("coastalFlooding").
type OutlookHazardEntry struct {
	Key    string
	Hazard *OutlookHazard
}

// All lists the hazards in order with their keys.
func (h *OutlookHazards) All() []OutlookHazardEntry {
	ptrs := [futurerisk.NumHazards]*OutlookHazard{&h.CoastalFlooding, &h.Drought, &h.ExtremeHeat, &h.Hurricane, &h.Wildfire}
	keys := futurerisk.Hazards()
	out := make([]OutlookHazardEntry, len(ptrs))
	for i, p := range ptrs {
		out[i] = OutlookHazardEntry{keys[i].Key, p}
	}
	return out
}

// OutlookHazard is one hazard's projections in the county.
type OutlookHazard struct {
	Title   string `json:"title"`
	NRICode string `json:"nriCode"`
	// Module is the key of the module whose peril the hazard matches
	// (coastal flooding: hydrology), or null for a hazard no module
	// scores (drought, extreme heat).
	Module *string `json:"module"`
	// Projection names the one projection shown where FEMA gives
	// several (extreme heat: "LOCA 95th"), else null.
	Projection *string           `json:"projection"`
	Current    OutlookCurrent    `json:"current"`
	Scenarios  *OutlookScenarios `json:"scenarios"`
	// Reason is null when Scenarios is given, else why not:
	// not_applicable, insufficient_data or no_projection.
	Reason *string `json:"reason"`
}

// OutlookCurrent is the hazard's current-period values in the same file.
type OutlookCurrent struct {
	RiskScore        *float64 `json:"riskScore"`
	RiskRating       string   `json:"riskRating"`
	AnnualLossRating string   `json:"annualLossRating"`
}

// OutlookScenarios are the four scenarios, in the source's order.
type OutlookScenarios struct {
	MidCenturyLowerWarming   OutlookScenario `json:"midCenturyLowerWarming"`
	MidCenturyHigherWarming  OutlookScenario `json:"midCenturyHigherWarming"`
	LateCenturyLowerWarming  OutlookScenario `json:"lateCenturyLowerWarming"`
	LateCenturyHigherWarming OutlookScenario `json:"lateCenturyHigherWarming"`
}

// OutlookScenarioEntry is one scenario with its key and title.
type OutlookScenarioEntry struct {
	Key, Title string
	Scenario   *OutlookScenario
}

// All lists the scenarios in order with their keys and titles.
func (s *OutlookScenarios) All() []OutlookScenarioEntry {
	ptrs := [futurerisk.NumScenarios]*OutlookScenario{&s.MidCenturyLowerWarming, &s.MidCenturyHigherWarming, &s.LateCenturyLowerWarming, &s.LateCenturyHigherWarming}
	sc := futurerisk.Scenarios()
	out := make([]OutlookScenarioEntry, len(ptrs))
	for i, p := range ptrs {
		out[i] = OutlookScenarioEntry{sc[i].Key, sc[i].Title, p}
	}
	return out
}

// OutlookScenario is one hazard under one scenario. A number FEMA does not
// give is null, and the rating beside it says why in FEMA's words.
type OutlookScenario struct {
	// HazardMultiplier is FEMA's hazard multiplier: the factor on the
	// county's current expected annual loss from the hazard.
	HazardMultiplier *float64 `json:"hazardMultiplier"`
	MultiplierRating string   `json:"multiplierRating"`
	// RiskScore is FEMA's projected risk index score, 0-100: where the
	// county's projected risk ranks among counties in the same scenario.
	RiskScore        *float64 `json:"riskScore"`
	RiskRating       string   `json:"riskRating"`
	AnnualLossRating string   `json:"annualLossRating"`
}

// OutlookBrief is the summary's outlook: one scenario's hazard
// multipliers, the rest being in the full report.
type OutlookBrief struct {
	Source            string             `json:"source"`
	Resolution        string             `json:"resolution"`
	Scenario          string             `json:"scenario"`
	HazardMultipliers OutlookMultipliers `json:"hazardMultipliers"`
}

// OutlookMultipliers has one multiplier per hazard, null where FEMA
// gives none.
type OutlookMultipliers struct {
	CoastalFlooding *float64 `json:"coastalFlooding"`
	Drought         *float64 `json:"drought"`
	ExtremeHeat     *float64 `json:"extremeHeat"`
	Hurricane       *float64 `json:"hurricane"`
	Wildfire        *float64 `json:"wildfire"`
}

// OutlookUnavailable says why a report's outlook is null.
type OutlookUnavailable struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Texts of every outlook.
const (
	outlookWithdrawal = "FEMA took the NRI Future Risk product off its website in February 2025; these are the figures of its December 2024 release, saved before then."
	outlookNote       = "Context, not a score: FEMA's projections for the county, which change no score, level, recommendation or review flag of this report."
	// outlookScenario is the scenario the summary's brief outlook shows:
	// the furthest and warmest, the bound of what the source projects.
	outlookScenario = futurerisk.LateHigher
)

// Reasons a hazard has no scenarios.
const (
	reasonNotApplicable    = "not_applicable"
	reasonInsufficientData = "insufficient_data"
	reasonNoProjection     = "no_projection"
)

// outlooks is what an assessment records of the outlook.
type outlooks struct {
	full        Recorded[Outlook]
	brief       Recorded[OutlookBrief]
	unavailable *OutlookUnavailable
}

// outlook builds the outlook of a site in county.
func (e *Engine) outlook(county *coverage.County) outlooks {
	src, _ := data.SourceByID(futurerisk.SourceID)
	row, standIn, ok := e.future.ForCounty(county.FIPS)
	if !ok {
		u := &OutlookUnavailable{Code: "county_not_in_data", Message: fmt.Sprintf(
			"FEMA's NRI Future Risk table has no row for %s (%s), so this report has no outlook.", county.Name, county.FIPS)}
		return outlooks{full: Record[Outlook](nil), brief: Record[OutlookBrief](nil), unavailable: u}
	}
	o := &Outlook{Source: src.ID, Name: src.Name, Publisher: src.Publisher, Vintage: e.vintage(src.ID),
		Withdrawal: outlookWithdrawal, Resolution: src.Resolution, CountyFIPS: row.FIPS, CountyName: row.Name, Note: outlookNote}
	if standIn {
		old, _ := data.OlderCountyOf(county.FIPS)
		note := fmt.Sprintf("The table predates the current county boundaries: the row shown is that of the former %s (%s), which covers most of the site's county (%s, %s).", old.OldName, row.FIPS, county.Name, county.FIPS)
		o.CountyNote = &note
	}
	b := &OutlookBrief{Source: src.ID, Resolution: src.Resolution, Scenario: futurerisk.Scenarios()[outlookScenario].Key}
	multipliers := [futurerisk.NumHazards]**float64{&b.HazardMultipliers.CoastalFlooding, &b.HazardMultipliers.Drought,
		&b.HazardMultipliers.ExtremeHeat, &b.HazardMultipliers.Hurricane, &b.HazardMultipliers.Wildfire}
	hazards := futurerisk.Hazards()
	for i, entry := range o.Hazards.All() {
		h := &row.Hazards[i]
		*entry.Hazard = e.outlookHazard(hazards[i], h)
		if s := entry.Hazard.Scenarios; s != nil {
			*multipliers[i] = s.All()[outlookScenario].Scenario.HazardMultiplier
		}
	}
	return outlooks{full: Record(o), brief: Record(b)}
}

// outlookHazard is one hazard's entry from its row.
func (e *Engine) outlookHazard(hz futurerisk.Hazard, h *futurerisk.HazardRow) OutlookHazard {
	out := OutlookHazard{Title: hz.Title, NRICode: hz.Code, Module: e.moduleOfNRI(hz.Code),
		Current: OutlookCurrent{RiskScore: optValue(h.Current.Score, h.Current.HasScore), RiskRating: h.Current.Rating, AnnualLossRating: h.Current.LossRating}}
	if hz.Code == futurerisk.Hazards()[futurerisk.ExtremeHeat].Code {
		p := futurerisk.ExtremeHeatProjection
		out.Projection = &p
	}
	var sc OutlookScenarios
	given := false
	for i, entry := range sc.All() {
		p := &h.Scenarios[i]
		*entry.Scenario = OutlookScenario{HazardMultiplier: optValue(p.Multiplier, p.HasMultiplier), MultiplierRating: p.MultiplierRating,
			RiskScore: optValue(p.Score, p.HasScore), RiskRating: p.Rating, AnnualLossRating: p.LossRating}
		given = given || p.HasMultiplier || p.HasScore
	}
	if given {
		out.Scenarios = &sc
		return out
	}
	reason := reasonNoProjection
	switch h.Current.Rating {
	case "Not Applicable":
		reason = reasonNotApplicable
	case "Insufficient Data":
		reason = reasonInsufficientData
	}
	out.Reason = &reason
	return out
}

// moduleOfNRI is the key of the module one of whose perils is benchmarked
// against NRI hazard code, or nil.
func (e *Engine) moduleOfNRI(code string) *string {
	for _, m := range e.specs {
		for _, p := range m.Perils {
			if slices.Contains(p.NRI, code) {
				k := m.Key
				return &k
			}
		}
	}
	return nil
}

// optValue is v rounded as indicator values are, or nil.
func optValue(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	r := roundValue(v)
	return &r
}
