// Package nri reads FEMA's National Risk Index (v1.20, December 2025) county
// table: for each county, the composite risk score and the risk score and
// rating of each of the 18 NRI hazards.
//
// An NRI risk score is a national percentile (0-100) of a county's expected
// annual loss from a hazard, adjusted for social vulnerability and
// community resilience. It measures what a county stands to lose, which
// grows with its population and building value, not how hazardous a given
// spot in it is. The engine therefore shows these scores beside each hazard
// module as a benchmark and uses them as a module's score only, labelled, when
// no hazard layer covers a location. Scores in the source file carry one
// decimal. Counties are keyed by the 2023 county FIPS codes (Connecticut by
// its planning regions 09110-09190).
package nri

import (
	"fmt"
	"io/fs"
	"math"

	"github.com/locrisk/locrisk/internal/risk/data"
)

// SourceID is the catalog id of the NRI county table.
const SourceID = "fema-nri-v1.20"

// Score is one NRI score and its rating. OK is false when the score is empty
// (the hazard is "Not Applicable" to the county, or FEMA had "Insufficient
// Data"); Rating is still set then. An unknown county or hazard code gives the
// zero Score.
type Score struct {
	Score  float64
	Rating string
	OK     bool
}

// hazards lists the 18 NRI hazard codes in the file's column order, with a
// plain-language name for reports.
var hazards = [...]struct{ code, name string }{
	{"AVLN", "avalanche"},
	{"CFLD", "coastal flooding"},
	{"CWAV", "cold wave"},
	{"DRGT", "drought"},
	{"ERQK", "earthquake"},
	{"HAIL", "hail"},
	{"HWAV", "heat wave"},
	{"HRCN", "hurricane"},
	{"ISTM", "ice storm"},
	{"IFLD", "inland flooding"},
	{"LNDS", "landslide"},
	{"LTNG", "lightning"},
	{"SWND", "strong wind"},
	{"TRND", "tornado"},
	{"TSUN", "tsunami"},
	{"VLCN", "volcanic activity"},
	{"WFIR", "wildfire"},
	{"WNTW", "winter weather"},
}

const (
	nHazards  = len(hazards)
	composite = nHazards // slot of RISK_SCORE / RISK_RATNG in a county row
	nSlots    = nHazards + 1
)

// ratings are FEMA's rating texts; a county row stores an index into this
// list so that a lookup returns a shared string instead of allocating.
var ratings = [...]string{
	"", // never stored: marks an unused slot
	"Very Low",
	"Relatively Low",
	"Relatively Moderate",
	"Relatively High",
	"Very High",
	"No Rating",
	"Not Applicable",
	"Insufficient Data",
}

func ratingIndex(s string) (uint8, bool) {
	for i := 1; i < len(ratings); i++ {
		if ratings[i] == s {
			return uint8(i), true
		}
	}
	return 0, false
}

// Codes returns the 18 hazard codes in NRI column order.
func Codes() []string {
	out := make([]string, nHazards)
	for i, h := range hazards {
		out[i] = h.code
	}
	return out
}

// hazardKeys packs each 4-letter code into a uint32 so that finding a code
// is 18 integer compares rather than 18 string compares.
var hazardKeys = func() (k [nHazards]uint32) {
	for i, h := range hazards {
		k[i] = codeKey(h.code)
	}
	return k
}()

func codeKey(code string) uint32 {
	if len(code) != 4 {
		return 0
	}
	return uint32(code[0])<<24 | uint32(code[1])<<16 | uint32(code[2])<<8 | uint32(code[3])
}

func hazardIndex(code string) int {
	k := codeKey(code)
	if k == 0 {
		return -1
	}
	for i, hk := range hazardKeys {
		if hk == k {
			return i
		}
	}
	return -1
}

// county is one table row. An empty score is NaN.
type county struct {
	score  [nSlots]float64
	rating [nSlots]uint8
}

// Table is the loaded NRI county table. It is read-only after Load and safe
// for concurrent use.
type Table struct {
	// index maps a numeric county FIPS (0..99999) to its row + 1; 0 means
	// absent. A dense slice keeps lookups allocation-free and branch-light.
	index []uint16
	rows  []county
}

// Load reads the NRI county table from the data pack fsys.
func Load(fsys fs.FS) (*Table, error) {
	rel := data.Path(SourceID)
	cols := []string{"STCOFIPS", "RISK_SCORE", "RISK_RATNG"}
	for _, h := range hazards {
		cols = append(cols, h.code+"_RISKS", h.code+"_RISKR")
	}
	t, err := data.OpenTable(fsys, rel, cols...)
	if err != nil {
		return nil, fmt.Errorf("nri: %w", err)
	}
	defer t.Close()

	scoreCol := make([]string, nSlots)
	ratingCol := make([]string, nSlots)
	for i, h := range hazards {
		scoreCol[i], ratingCol[i] = h.code+"_RISKS", h.code+"_RISKR"
	}
	scoreCol[composite], ratingCol[composite] = "RISK_SCORE", "RISK_RATNG"

	tab := &Table{index: make([]uint16, 100000), rows: make([]county, 0, 3300)}
	for t.Scan() {
		raw := t.String("STCOFIPS")
		fips := data.FIPS5(raw)
		if fips == "" {
			return nil, fmt.Errorf("nri: %w", t.Errorf("STCOFIPS %q is not a county FIPS code", raw))
		}
		n := data.FIPSNumber(fips)
		if tab.index[n] != 0 {
			return nil, fmt.Errorf("nri: %w", t.Errorf("county %s appears twice", fips))
		}
		if len(tab.rows) >= math.MaxUint16-1 {
			return nil, fmt.Errorf("nri: %w", t.Errorf("more than %d counties", math.MaxUint16-1))
		}
		var c county
		for s := 0; s < nSlots; s++ {
			v, has, err := t.OptFloat(scoreCol[s])
			if err != nil {
				return nil, fmt.Errorf("nri: %w", err)
			}
			if has && (v < 0 || v > 100) {
				return nil, fmt.Errorf("nri: %w", t.Errorf("column %q: score %g is outside 0-100", scoreCol[s], v))
			}
			if !has {
				v = math.NaN()
			}
			r, known := ratingIndex(t.String(ratingCol[s]))
			if !known {
				return nil, fmt.Errorf("nri: %w", t.Errorf("column %q: unknown rating %q", ratingCol[s], t.String(ratingCol[s])))
			}
			c.score[s], c.rating[s] = v, r
		}
		tab.rows = append(tab.rows, c)
		tab.index[n] = uint16(len(tab.rows))
	}
	if err := t.Err(); err != nil {
		return nil, fmt.Errorf("nri: %w", err)
	}
	if len(tab.rows) == 0 {
		return nil, fmt.Errorf("nri: %s has no county rows", rel)
	}
	return tab, nil
}

func (t *Table) row(fips string) *county {
	n := data.FIPSNumber(fips)
	if n < 0 {
		return nil
	}
	i := t.index[n]
	if i == 0 {
		return nil
	}
	return &t.rows[i-1]
}

func (c *county) get(slot int) Score {
	v := c.score[slot]
	r := ratings[c.rating[slot]]
	if math.IsNaN(v) {
		return Score{Rating: r}
	}
	return Score{Score: v, Rating: r, OK: true}
}

// Hazard returns the risk score and rating of hazard code (AVLN, CFLD, CWAV,
// DRGT, ERQK, HAIL, HWAV, HRCN, ISTM, IFLD, LNDS, LTNG, SWND, TRND, TSUN,
// VLCN, WFIR, WNTW) in county fips.
func (t *Table) Hazard(fips, code string) Score {
	h := hazardIndex(code)
	if h < 0 {
		return Score{}
	}
	c := t.row(fips)
	if c == nil {
		return Score{}
	}
	return c.get(h)
}

// Composite returns the county's overall NRI risk score and rating
// (RISK_SCORE / RISK_RATNG).
func (t *Table) Composite(fips string) Score {
	c := t.row(fips)
	if c == nil {
		return Score{}
	}
	return c.get(composite)
}

// Has reports whether the table has a row for county fips.
func (t *Table) Has(fips string) bool { return t.row(fips) != nil }

// HazardName returns the plain-language name of an NRI hazard code
// ("earthquake", "inland flooding"), or "" for an unknown code.
func (t *Table) HazardName(code string) string { return HazardName(code) }

// HazardName is Table.HazardName without a table.
func HazardName(code string) string {
	if h := hazardIndex(code); h >= 0 {
		return hazards[h].name
	}
	return ""
}

// Rows is the number of county rows loaded.
func (t *Table) Rows() int { return len(t.rows) }
