// Package futurerisk reads FEMA's National Risk Index Future Risk master
// datasheet (December 2024) once, for the two parts of the engine that use
// it: the wildfire module cites its projected wildfire scores as context,
// and every report's outlook shows all of it (docs/methodology.md,
// "Outlook").
//
// For each county and each of five hazards (coastal flooding, drought,
// extreme heat, hurricane, wildfire) the table gives the current-period
// risk index score and ratings, and for four scenarios (mid and late
// century, each under a lower and a higher mean global temperature) FEMA's
// hazard multiplier, projected risk index score and rating, projected
// annual loss rating, and the rating of the multiplier (its "delta
// rating"). The column names and meanings are those of FEMA's data
// dictionary (version 1.0.0, 2024-12-02). Ratings are kept as FEMA wrote
// them, the bands in parentheses included.
//
// Two readings of the file are decisions of this package, checked on the
// real data by its tests:
//
//   - A hazard multiplier of 0 that FEMA rates "No Rating" is no
//     multiplier, not a loss that vanishes: the projected annual loss
//     rating of those rows keeps the current band (hurricane in Hawaii,
//     coastal flooding on the Great Lakes). It reads as missing.
//   - Extreme heat comes in four projections, which FEMA's dictionary names
//     "LOCA 95th", "LOCA 99th", "NEX 95th" and "NEX 99th". The table keeps
//     the first FEMA lists, LOCA 95th, and says so (ExtremeHeatProjection).
//
// Counties are keyed as the file keys them: Connecticut by its eight
// legacy counties. ForCounty maps the counties of the 2023 boundaries that
// the file lacks to their older stand-in (data.OlderCountyOf).
package futurerisk

import (
	"fmt"
	"io/fs"
	"math"

	"github.com/locrisk/locrisk/internal/risk/data"
)

// SourceID is the catalog id of the datasheet.
const SourceID = "fema-nri-future-2024"

// ExtremeHeatProjection names the extreme heat projection the table keeps,
// in the words of FEMA's data dictionary ("Extreme Heat (LOCA 95th)").
const ExtremeHeatProjection = "LOCA 95th"

// The five hazards, in the file's order.
const (
	CoastalFlooding = iota
	Drought
	ExtremeHeat
	Hurricane
	Wildfire
	NumHazards
)

// The four scenarios, in the file's order.
const (
	MidLower = iota
	MidHigher
	LateLower
	LateHigher
	NumScenarios
)

// Hazard describes one hazard of the file.
type Hazard struct {
	Code  string // FEMA's code: the prefix of the current-period columns
	Key   string // the report's key, e.g. "coastalFlooding"
	Title string // e.g. "Coastal flooding"
	// cols is the prefix of the projection columns: the code, or for
	// extreme heat the code and the projection kept.
	cols string
}

var hazards = [NumHazards]Hazard{
	{"CFLD", "coastalFlooding", "Coastal flooding", "CFLD"},
	{"DRGT", "drought", "Drought", "DRGT"},
	{"EXHT", "extremeHeat", "Extreme heat", "EXHT_L95"},
	{"HRCN", "hurricane", "Hurricane", "HRCN"},
	{"WFIR", "wildfire", "Wildfire", "WFIR"},
}

// Hazards returns the five hazards in the file's order (a copy).
func Hazards() [NumHazards]Hazard { return hazards }

// Scenario describes one projection period and warming level.
type Scenario struct {
	Key   string // the report's key, e.g. "midCenturyLowerWarming"
	Title string // e.g. "Mid-century, lower warming"
	cols  string // the column infix, e.g. "MID_LOWER"
}

var scenarios = [NumScenarios]Scenario{
	{"midCenturyLowerWarming", "Mid-century, lower warming", "MID_LOWER"},
	{"midCenturyHigherWarming", "Mid-century, higher warming", "MID_HIGHER"},
	{"lateCenturyLowerWarming", "Late century, lower warming", "LATE_LOWER"},
	{"lateCenturyHigherWarming", "Late century, higher warming", "LATE_HIGHER"},
}

// Scenarios returns the four scenarios in the file's order (a copy).
func Scenarios() [NumScenarios]Scenario { return scenarios }

// Projection is one hazard under one scenario in one county. A number the
// file does not give has its Has flag false; the rating beside it then
// says why, in FEMA's words ("Not Applicable", "No Rating").
type Projection struct {
	// Multiplier is FEMA's hazard multiplier (column *_HM).
	Multiplier    float64
	HasMultiplier bool
	// MultiplierRating is FEMA's delta rating of the multiplier (*_DELTAR),
	// e.g. "Relatively High (2.8x - 4.58x)".
	MultiplierRating string
	// Score is FEMA's projected risk index score, 0-100 (*_PRISKS).
	Score    float64
	HasScore bool
	// Rating is FEMA's projected risk rating (*_PRISKR).
	Rating string
	// LossRating is FEMA's projected annual loss rating (*_PALR), e.g.
	// "Relatively Low (21.9K - 292K)".
	LossRating string
}

// Current is a hazard's current-period values in the same file.
type Current struct {
	Score      float64 // risk index score, 0-100 (*_RISKS)
	HasScore   bool
	Rating     string // risk index rating (*_RISKR)
	LossRating string // expected annual loss rating (*_EALR)
}

// HazardRow is one hazard in one county.
type HazardRow struct {
	Current   Current
	Scenarios [NumScenarios]Projection
}

// County is one row of the file.
type County struct {
	FIPS    string
	Name    string // as the file writes it, e.g. "Los Angeles"
	State   string // USPS code
	Hazards [NumHazards]HazardRow
}

// Table is the loaded datasheet. It is read-only after Load and safe for
// concurrent use.
type Table struct {
	index []int32 // numeric county FIPS -> row + 1; 0 = no row
	rows  []County
}

// noMultiplier is FEMA's delta rating where it gives no multiplier.
const noMultiplier = "No Rating"

// columns lists every column Load reads, for the header check.
func columns() []string {
	cols := []string{"STCOFIPS", "COUNTY", "STATEABBRV"}
	for _, h := range hazards {
		cols = append(cols, h.Code+"_RISKS", h.Code+"_RISKR", h.Code+"_EALR")
		for _, s := range scenarios {
			p := h.cols + "_" + s.cols + "_"
			cols = append(cols, p+"HM", p+"PRISKS", p+"PRISKR", p+"PALR", p+"DELTAR")
		}
	}
	return cols
}

// Load reads the datasheet from the data pack fsys. It fails, naming the
// file and line, on a county code that is not one, a county given twice,
// a score outside 0-100 or a multiplier that is negative or not finite.
func Load(fsys fs.FS) (*Table, error) {
	path := data.Path(SourceID)
	t, err := data.OpenTable(fsys, path, columns()...)
	if err != nil {
		return nil, fmt.Errorf("futurerisk: %w", err)
	}
	defer t.Close()
	tab := &Table{index: make([]int32, 100000), rows: make([]County, 0, 3300)}
	// FEMA's ratings repeat across rows; each distinct text is kept once.
	texts := map[string]string{}
	text := func(col string) string {
		s := t.String(col)
		if k, ok := texts[s]; ok {
			return k
		}
		texts[s] = s
		return s
	}
	for t.Scan() {
		raw := t.String("STCOFIPS")
		fips := data.FIPS5(raw)
		n := data.FIPSNumber(fips)
		if n < 0 {
			return nil, fmt.Errorf("futurerisk: %w", t.Errorf("column %q: %q is not a county FIPS code", "STCOFIPS", raw))
		}
		if tab.index[n] != 0 {
			return nil, fmt.Errorf("futurerisk: %w", t.Errorf("county %s appears twice", fips))
		}
		c := County{FIPS: fips, Name: t.String("COUNTY"), State: t.String("STATEABBRV")}
		for hi, h := range hazards {
			r := &c.Hazards[hi]
			if r.Current.Score, r.Current.HasScore, err = score(t, h.Code+"_RISKS"); err != nil {
				return nil, err
			}
			r.Current.Rating, r.Current.LossRating = text(h.Code+"_RISKR"), text(h.Code+"_EALR")
			for si, s := range scenarios {
				p := h.cols + "_" + s.cols + "_"
				x := &r.Scenarios[si]
				if x.Score, x.HasScore, err = score(t, p+"PRISKS"); err != nil {
					return nil, err
				}
				x.Rating, x.LossRating, x.MultiplierRating = text(p+"PRISKR"), text(p+"PALR"), text(p+"DELTAR")
				if x.Multiplier, x.HasMultiplier, err = multiplier(t, p+"HM"); err != nil {
					return nil, err
				}
				if x.HasMultiplier && x.Multiplier == 0 && x.MultiplierRating == noMultiplier {
					x.Multiplier, x.HasMultiplier = 0, false
				}
			}
		}
		tab.rows = append(tab.rows, c)
		tab.index[n] = int32(len(tab.rows))
	}
	if err := t.Err(); err != nil {
		return nil, fmt.Errorf("futurerisk: %w", err)
	}
	if len(tab.rows) == 0 {
		return nil, fmt.Errorf("futurerisk: %s has no county rows", path)
	}
	return tab, nil
}

// score reads an optional 0-100 score.
func score(t *data.Table, col string) (float64, bool, error) {
	v, ok, err := t.OptFloat(col)
	if err != nil {
		return 0, false, fmt.Errorf("futurerisk: %w", err)
	}
	if ok && (v < 0 || v > 100 || math.IsNaN(v)) {
		return 0, false, fmt.Errorf("futurerisk: %w", t.Errorf("column %q: %g is outside 0-100", col, v))
	}
	return v, ok, nil
}

// multiplier reads an optional multiplier: finite and not negative.
func multiplier(t *data.Table, col string) (float64, bool, error) {
	v, ok, err := t.OptFloat(col)
	if err != nil {
		return 0, false, fmt.Errorf("futurerisk: %w", err)
	}
	if ok && (v < 0 || math.IsNaN(v) || math.IsInf(v, 0)) {
		return 0, false, fmt.Errorf("futurerisk: %w", t.Errorf("column %q: %g is not a multiplier", col, v))
	}
	return v, ok, nil
}

// Rows is the number of county rows read.
func (t *Table) Rows() int { return len(t.rows) }

// Counties returns every row in file order. The rows are shared: callers
// must not change them.
func (t *Table) Counties() []County { return t.rows }

// Lookup returns the file's own row for county fips.
func (t *Table) Lookup(fips string) (*County, bool) {
	n := data.FIPSNumber(fips)
	if n < 0 || n >= len(t.index) || t.index[n] == 0 {
		return nil, false
	}
	return &t.rows[t.index[n]-1], true
}

// ForCounty returns the row for county fips of the 2023 boundaries: its
// own, or where the file has none, its older stand-in's (standIn true,
// and the row's FIPS and Name say which county it is). ok is false when
// neither has a row.
func (t *Table) ForCounty(fips string) (c *County, standIn, ok bool) {
	if c, ok := t.Lookup(fips); ok {
		return c, false, true
	}
	if o, found := data.OlderCountyOf(fips); found {
		if c, ok := t.Lookup(o.Old); ok {
			return c, !o.Renamed, true
		}
	}
	return nil, false, false
}
