package server

import (
	"encoding/csv"
	"io"
	"net/http"
	"strconv"
	"time"

	"locrisk/risk"
	"locrisk/store"
)

// csvModuleKeys are the module columns of results.csv, in registry order.
var csvModuleKeys = risk.ModuleKeys()

// csvHeader is the header row of results.csv (docs/api.md, Batches).
var csvHeader = append(append([]string{
	"rowNumber", "externalId", "latitude", "longitude", "status", "reportJobId", "reportId", "score", "riskLevel"},
	csvModuleKeys...), "errorCode", "errorMessage")

// csvFlushRows is how many rows are buffered before they are pushed to the
// client, so a large file starts arriving before it is complete without a
// write per row.
const csvFlushRows = 32

// csvWriteTimeout bounds how long one CSV response may take to send. The
// rows stream from an open database cursor, which holds one of the store's
// few pooled connections until the last row is written, so a client that
// stops reading must not keep it for the server's whole write timeout.
const csvWriteTimeout = 10 * time.Second

// getBatchCSV is GET /location-risk/batches/{batchId}/results.csv
// (docs/api.md, Batches): one RFC 4180 row per item in rowNumber order,
// CRLF line ends, streamed from the database cursor as it is read. It is
// available at any time; a value not known yet is an empty cell.
//
// The status line goes out with the first row, so a missing batch can
// still be answered with the JSON 404. A database error after that cannot
// be reported in the body, so the connection is cut instead: a truncated
// transfer is visibly broken, whereas a cleanly ended short file would
// pass for a complete one.
func (s *Server) getBatchCSV(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := batchIDParam(r)
	if err != nil {
		return err
	}
	var cw *csv.Writer
	rc := http.NewResponseController(w)
	// A network deadline, so real time rather than the server's clock; a
	// writer that has no deadlines (a test recorder) is fine without one.
	_ = rc.SetWriteDeadline(time.Now().Add(csvWriteTimeout))
	start := func() error {
		h := w.Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", `attachment; filename="batch-`+id+`.csv"`)
		w.WriteHeader(http.StatusOK)
		cw = csv.NewWriter(&crlfRecords{w: w})
		return cw.Write(csvHeader)
	}
	rows := 0
	rec := make([]string, len(csvHeader))
	err = s.store.BatchItems(r.Context(), p.account.ID, id, func(it store.BatchItem) error {
		if cw == nil {
			if err := start(); err != nil {
				return err
			}
		}
		if err := cw.Write(csvRecord(it, rec)); err != nil {
			return err
		}
		if rows++; rows%csvFlushRows == 0 {
			cw.Flush()
			if err := cw.Error(); err != nil {
				return err
			}
			_ = rc.Flush() // best effort: not every writer can flush
		}
		return nil
	})
	if err == nil && cw == nil {
		err = start() // a batch always has items, but an empty file is still a file
	}
	if err != nil && cw == nil {
		return storeError(err, codeBatchNotFound, s.now())
	}
	if err == nil {
		cw.Flush()
		err = cw.Error()
	}
	if err != nil {
		s.log.WarnContext(r.Context(), "batch CSV cut short", "request_id", requestID(r), "batch_id", id, "rows", rows, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

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

// csvRecord fills rec with the cells of one item. Text cells pass through
// csvText (the formula-injection guard); numeric cells never do, so a
// negative longitude stays a number.
func csvRecord(it store.BatchItem, rec []string) []string {
	rec = rec[:0]
	rec = append(rec,
		strconv.Itoa(it.RowNumber),
		csvText(it.ExternalID),
		csvFloat(it.Latitude),
		csvFloat(it.Longitude),
		csvText(it.Status),
		csvTextPtr(it.JobID),
		csvTextPtr(it.ReportID),
		csvInt(it.Score),
		csvTextPtr(it.RiskLevel),
	)
	for _, k := range csvModuleKeys {
		rec = append(rec, csvInt(it.ModuleScores[k]))
	}
	return append(rec, csvTextPtr(it.ErrorCode), csvTextPtr(it.ErrorMessage))
}

// csvText guards a text cell against spreadsheet formula injection: a
// value starting with =, +, -, @, tab or carriage return gets a leading
// apostrophe, which spreadsheets show as text rather than evaluate (the
// OWASP "CSV injection" advice). Quoting of commas, quotes and line breaks
// is encoding/csv's job.
func csvText(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

func csvTextPtr(s *string) string {
	if s == nil {
		return ""
	}
	return csvText(*s)
}

// csvFloat writes a coordinate in plain decimal notation (never an
// exponent, which some spreadsheets would misread), shortest exact form.
func csvFloat(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func csvInt(v *int) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(*v)
}
