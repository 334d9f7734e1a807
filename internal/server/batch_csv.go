package server

import (
	"encoding/csv"
	"net/http"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/batchcsv"
)

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
	header := batchcsv.Header()
	rc := http.NewResponseController(w)
	// A network deadline, so real time rather than the server's clock; a
	// writer that has no deadlines (a test recorder) is fine without one.
	_ = rc.SetWriteDeadline(time.Now().Add(csvWriteTimeout))
	start := func() error {
		h := w.Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", `attachment; filename="batch-`+id+`.csv"`)
		w.WriteHeader(http.StatusOK)
		cw = batchcsv.NewWriter(w)
		return cw.Write(header)
	}
	rows := 0
	rec := make([]string, len(header))
	err = s.store.BatchItems(r.Context(), p.account.ID, id, func(it locrisk.BatchItem) error {
		if cw == nil {
			if err := start(); err != nil {
				return err
			}
		}
		if err := cw.Write(batchcsv.Record(it, rec)); err != nil {
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
