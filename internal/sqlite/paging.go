package sqlite

// Cursor paging of the lists ordered newest first by (created_utc DESC,
// id DESC): jobs, batches and webhook endpoints (docs/api.md, Report
// jobs). The page rule and the cursor are the domain's (cursor.go at the
// root), shared with the PostgreSQL store so that a cursor means the same
// in either; this file holds only the keyset query, so a page's cost does
// not grow with how deep it is.

import (
	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// newPage checks cursor ("" = from the newest) and bounds limit
// (locrisk.NewPage). A cursor that is malformed, or was made for a list of
// other ids than idPrefix, is ErrBadCursor.
func newPage(limit int, cursor, idPrefix string) (locrisk.Page, error) {
	return locrisk.NewPage(limit, cursor, func(id string) bool { return ids.HasPrefix(id, idPrefix) })
}

// pageQuery completes q, a SELECT whose WHERE clause is open (more
// conditions may follow with AND) over a table with created_utc and id
// columns, with p's keyset condition, the order and p's fetch limit.
func pageQuery(p locrisk.Page, q string, args []any) (string, []any) {
	if !p.First() {
		// A row value, so the index on (account_id, created_utc, id)
		// seeks to the cursor instead of walking the pages before it.
		q += ` AND (created_utc, id) < (?, ?)`
		args = append(args, FormatTime(p.AfterCreated), p.AfterID)
	}
	q += ` ORDER BY created_utc DESC, id DESC LIMIT ?`
	return q, append(args, p.Fetch())
}
