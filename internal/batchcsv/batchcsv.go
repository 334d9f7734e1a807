// Package batchcsv is the batch results CSV as docs/api.md (Batches,
// operation 10) defines it: its columns, how each cell is written, and the
// CRLF record ends. The API's results.csv and `locrisk score` both write
// it, so the two files share one definition of every column they have in
// common.
package batchcsv

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/risk"
)

// moduleKeys are the module columns, in registry order; only ever read.
var moduleKeys = risk.ModuleKeys()

// Header is the header row of results.csv: the item columns, one column
// per module in registry order, then the error columns. It returns a new
// slice on every call, so a caller may append to it.
func Header() []string {
	h := []string{"rowNumber", "externalId", "latitude", "longitude", "status", "reportJobId", "reportId", "score", "riskLevel"}
	h = append(h, moduleKeys...)
	return append(h, "errorCode", "errorMessage")
}

// Record fills rec (reusing its storage) with the cells of one item, in
// Header's order. Text cells pass through Text (the formula-injection
// guard); numeric cells never do, so a negative longitude stays a number.
func Record(it locrisk.BatchItem, rec []string) []string {
	rec = rec[:0]
	rec = append(rec,
		strconv.Itoa(it.RowNumber),
		Text(it.ExternalID),
		Float(it.Latitude),
		Float(it.Longitude),
		Text(it.Status),
		TextPtr(it.JobID),
		TextPtr(it.ReportID),
		Int(it.Score),
		TextPtr(it.RiskLevel),
	)
	for _, k := range moduleKeys {
		rec = append(rec, Int(it.ModuleScores[k]))
	}
	return append(rec, TextPtr(it.ErrorCode), TextPtr(it.ErrorMessage))
}

// Text guards a text cell against spreadsheet formula injection: a value
// starting with =, +, -, @, tab or carriage return gets a leading
// apostrophe, which spreadsheets show as text rather than evaluate
// (docs/api.md, Batches). Quoting of commas, quotes and line breaks is
// encoding/csv's job.
func Text(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// TextPtr is Text of an optional value; nil is an empty cell.
func TextPtr(s *string) string {
	if s == nil {
		return ""
	}
	return Text(*s)
}

// Float writes a coordinate in plain decimal notation (never an exponent,
// which some spreadsheets would misread), shortest exact form; nil is an
// empty cell.
func Float(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// Int writes an optional integer; nil is an empty cell.
func Int(v *int) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(*v)
}

// NewWriter is a csv.Writer for w whose records end in CRLF, as RFC 4180
// asks, with line breaks inside a cell kept exactly as they are.
func NewWriter(w io.Writer) *csv.Writer { return csv.NewWriter(&crlfRecords{w: w}) }

// crlfRecords ends each record with the CRLF that RFC 4180 asks for. The
// csv.Writer's own UseCRLF would also drop every CR inside a cell and turn
// every LF in one into CRLF, changing the data; so the writer runs without
// it and only the LF that ends a record, outside quotes, gains its CR here.
// encoding/csv doubles quotes inside a quoted cell, so a pair toggles the
// state twice and leaves it as it was.
type crlfRecords struct {
	w      io.Writer
	quoted bool
	buf    []byte
}

func (c *crlfRecords) Write(p []byte) (int, error) {
	c.buf = c.buf[:0]
	for _, b := range p {
		switch {
		case b == '"':
			c.quoted = !c.quoted
		case b == '\n' && !c.quoted:
			c.buf = append(c.buf, '\r')
		}
		c.buf = append(c.buf, b)
	}
	if _, err := c.w.Write(c.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}
