package portfolio

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/batchcsv"
	"github.com/locrisk/locrisk/internal/jobs"
	"github.com/locrisk/locrisk/internal/risk"
)

// Error codes of a row that is not scored. The first three are the codes a
// batch item gets for the same fault (docs/api.md, Batches); the others
// belong to the file itself.
const (
	CodeInvalidLatitude  = "invalid_latitude"
	CodeInvalidLongitude = "invalid_longitude"
	CodeUnsupported      = jobs.CodeUnsupported
	// CodeInvalidRow: the row has another number of fields than the
	// header, or is not valid CSV (a stray quote).
	CodeInvalidRow = "invalid_row"
	// CodeGeneration: the engine failed on the row (status failed, not
	// rejected); the code a report job gets for the same fault.
	CodeGeneration = jobs.CodePermanent
)

// The required input columns, matched without regard to case or the
// spaces around them.
const (
	colExternalID = "externalId"
	colLatitude   = "latitude"
	colLongitude  = "longitude"
)

// HeaderError is a file that cannot be scored at all: no header row, a
// required column missing or given twice, or a header that is not CSV.
type HeaderError struct{ Msg string }

func (e *HeaderError) Error() string { return e.Msg }

// layout is what the header says: where the required columns are, which
// input columns pass through, and the output header.
type layout struct {
	inFields    int   // fields in the input header
	externalID  int   // input index of each required column
	latitude    int   //
	longitude   int   //
	passthrough []int // input indices copied after our columns, in input order
	dropped     []string
	header      []string // the output header
	outlook     bool     // the outlook columns are written (Columns.Outlook)
}

// Columns chooses the optional output columns.
type Columns struct {
	// Outlook adds, after the peril columns, the county row of the
	// report's outlook and FEMA's hazard multiplier and projected risk
	// score for every hazard and scenario of it (docs/portfolio.md).
	Outlook bool
}

// ownColumns are the output columns this package writes before the
// passthrough ones: the batch CSV's (docs/api.md, Batches, operation 10),
// then the location and one score and one level column per peril, in
// registry order, then with c.Outlook the outlook's.
func ownColumns(c Columns) []string {
	h := batchcsv.Header()
	h = append(h, "state", "countyFips", "county")
	for _, m := range risk.Registry() {
		for _, p := range m.Perils {
			name := m.Key + "." + p.Key
			h = append(h, name, name+".riskLevel")
		}
	}
	if c.Outlook {
		h = append(h, outlookColumns()...)
	}
	return h
}

// outlookColumns are the outlook's columns: the county row it shows, then
// per hazard and scenario, in the report's order, the multiplier and the
// projected score, named outlook.<hazard>.<scenario>.<field>.
func outlookColumns() []string {
	h := []string{"outlook.countyFips"}
	var hz risk.OutlookHazards
	var sc risk.OutlookScenarios
	for _, z := range hz.All() {
		for _, s := range sc.All() {
			name := "outlook." + z.Key + "." + s.Key
			h = append(h, name+".hazardMultiplier", name+".riskScore")
		}
	}
	return h
}

// newLayout reads the header row. An input column named like one of ours
// (a file scored before, scored again) is dropped, so the output never has
// two columns of one name; the command names the dropped columns.
func newLayout(rec []string, c Columns) (*layout, error) {
	l := &layout{inFields: len(rec), externalID: -1, latitude: -1, longitude: -1, header: ownColumns(c), outlook: c.Outlook}
	if len(rec) > 0 {
		rec[0] = strings.TrimPrefix(rec[0], "\uFEFF") // a byte order mark, as spreadsheets write
	}
	own := make(map[string]bool, len(l.header))
	for _, h := range l.header {
		own[h] = true
	}
	for i, name := range rec {
		var slot *int
		switch n := strings.TrimSpace(name); {
		case strings.EqualFold(n, colExternalID):
			slot = &l.externalID
		case strings.EqualFold(n, colLatitude):
			slot = &l.latitude
		case strings.EqualFold(n, colLongitude):
			slot = &l.longitude
		case own[n]:
			l.dropped = append(l.dropped, n)
			continue
		default:
			l.passthrough = append(l.passthrough, i)
			continue
		}
		if *slot >= 0 {
			return nil, &HeaderError{fmt.Sprintf("the header has column %q twice (columns %d and %d)", strings.TrimSpace(name), *slot+1, i+1)}
		}
		*slot = i
	}
	var missing []string
	for _, c := range []struct {
		name string
		at   int
	}{{colExternalID, l.externalID}, {colLatitude, l.latitude}, {colLongitude, l.longitude}} {
		if c.at < 0 {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		return nil, &HeaderError{fmt.Sprintf("the header row lacks the column(s) %s (it needs externalId, latitude and longitude, in any order; it has %q)",
			strings.Join(missing, ", "), rec)}
	}
	for _, i := range l.passthrough {
		l.header = append(l.header, rec[i])
	}
	return l, nil
}

// row is one input row, parsed: the batch item as far as the input tells
// (a coordinate to score, or the rejection), and its passthrough cells.
type row struct {
	item  locrisk.BatchItem
	lat   float64 // the coordinate to score, when item.ErrorCode is nil
	lon   float64
	extra []string
}

// parseRow parses data row number (1-based, the header not counted) from
// its fields. A row with another number of fields than the header is
// rejected, keeping what it has of the externalId and passthrough cells so
// it can still be matched up; the coordinate is checked as a batch item's
// is: latitude first, a number in range (a number out of range is kept in
// the output, as the batch CSV keeps it).
func (l *layout) parseRow(number int, rec []string) row {
	r := row{item: locrisk.BatchItem{RowNumber: number}}
	cell := func(i int) string {
		if i < len(rec) {
			return rec[i]
		}
		return ""
	}
	r.item.ExternalID = cell(l.externalID)
	r.extra = make([]string, len(l.passthrough))
	for j, i := range l.passthrough {
		r.extra[j] = cell(i)
	}
	if len(rec) != l.inFields {
		r.reject(CodeInvalidRow, fmt.Sprintf("row %d has %d fields; the header has %d", number, len(rec), l.inFields))
		return r
	}
	lat, latNum, latOK := coordinate(cell(l.latitude), 90)
	lon, lonNum, lonOK := coordinate(cell(l.longitude), 180)
	r.item.Latitude, r.item.Longitude = latNum, lonNum
	switch {
	case !latOK:
		r.reject(CodeInvalidLatitude, coordinateMessage("latitude", cell(l.latitude), 90))
	case !lonOK:
		r.reject(CodeInvalidLongitude, coordinateMessage("longitude", cell(l.longitude), 180))
	default:
		r.lat, r.lon = lat, lon
	}
	return r
}

// badRecord is a row encoding/csv could not read (a stray quote): nothing
// of it is known but where it is.
func (l *layout) badRecord(number int, err error) row {
	r := row{item: locrisk.BatchItem{RowNumber: number}, extra: make([]string, len(l.passthrough))}
	r.reject(CodeInvalidRow, fmt.Sprintf("row %d is not valid CSV: %v", number, err))
	return r
}

// coordinateMessage says what is wrong with a coordinate cell, quoting
// what was there: the output keeps only numbers in its coordinate
// columns, so the message is where a reader finds what to fix.
func coordinateMessage(name, cell string, bound int) string {
	if strings.TrimSpace(cell) == "" {
		return fmt.Sprintf("%s is required: a number from -%d to %d", name, bound, bound)
	}
	const most = 40 // characters of the cell quoted
	if r := []rune(cell); len(r) > most {
		cell = string(r[:most]) + "..."
	}
	return fmt.Sprintf("%s %q is not a number from -%d to %d", name, cell, bound, bound)
}

func (r *row) reject(code, msg string) {
	r.item.Status = locrisk.ItemRejected
	r.item.ErrorCode, r.item.ErrorMessage = &code, &msg
}

func (r *row) fail(msg string) {
	code := CodeGeneration
	r.item.Status = locrisk.StatusFailed
	r.item.ErrorCode, r.item.ErrorMessage = &code, &msg
}

// coordinate parses a coordinate cell: a finite decimal number, spaces
// around it allowed, within [-bound, bound]. num is the value whenever the
// cell is a finite number, in range or not, for the output.
func coordinate(s string, bound float64) (v float64, num *float64, ok bool) {
	s = strings.TrimSpace(s)
	// ParseFloat also takes "Inf", "NaN", hex and underscores; a
	// coordinate is plain decimal, as the API's JSON numbers are.
	if s == "" || strings.ContainsAny(s, "_xXpPnNiI") {
		return 0, nil, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, nil, false
	}
	if v == 0 {
		v = 0 // -0 is 0
	}
	num = &v
	return v, num, v >= -bound && v <= bound
}

// fill completes the row's item from the engine's assessment.
func (r *row) fill(a *risk.Assessment) {
	s := a.Summary
	r.item.Status = locrisk.StatusCompleted
	r.item.Score, r.item.RiskLevel = &s.OverallScore, &s.RiskLevel
	r.item.ModuleScores = make(map[string]*int, len(s.ModuleScores))
	for _, m := range s.ModuleScores {
		r.item.ModuleScores[m.Module] = m.Value
	}
}

// record appends the output cells of the row to rec: the batch CSV's
// cells, the location and peril cells (empty unless scored), the outlook
// cells where l asks for them, then the passthrough cells as they were
// read.
func record(rec []string, r *row, a *risk.Assessment, specs []risk.ModuleSpec, l *layout) []string {
	rec = batchcsv.Record(r.item, rec)
	if a == nil {
		rec = append(rec, "", "", "")
		for _, m := range specs {
			for range m.Perils {
				rec = append(rec, "", "")
			}
		}
		if l.outlook {
			rec = outlookCells(rec, nil)
		}
		return append(rec, r.extra...)
	}
	rec = append(rec, batchcsv.Text(a.Location.StateCode), batchcsv.Text(a.Location.CountyFIPS), batchcsv.Text(a.Location.CountyName))
	for _, m := range specs {
		perils, _ := a.Summary.Perils.Get(m.Key)
		for _, ps := range m.Perils {
			var score *int
			var level *string
			for _, p := range perils {
				if p.Peril == ps.Key {
					score, level = p.Score, p.RiskLevel
					break
				}
			}
			rec = append(rec, batchcsv.Int(score), batchcsv.TextPtr(level))
		}
	}
	if l.outlook {
		rec = outlookCells(rec, a.Report.Outlook.Value)
	}
	return append(rec, r.extra...)
}

// outlookCells appends the outlook's cells in outlookColumns' order: empty
// where the outlook is null or FEMA gives no number, never a 0 for one.
func outlookCells(rec []string, o *risk.Outlook) []string {
	if o == nil {
		for range outlookColumns() {
			rec = append(rec, "")
		}
		return rec
	}
	rec = append(rec, batchcsv.Text(o.CountyFIPS))
	for _, z := range o.Hazards.All() {
		var sc risk.OutlookScenarios
		if z.Hazard.Scenarios != nil {
			sc = *z.Hazard.Scenarios
		}
		for _, s := range sc.All() {
			rec = append(rec, batchcsv.Float(s.Scenario.HazardMultiplier), batchcsv.Float(s.Scenario.RiskScore))
		}
	}
	return rec
}
