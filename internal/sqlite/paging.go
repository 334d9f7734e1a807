package sqlite

import (
	"encoding/base64"
	"strings"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// Cursor paging of the lists ordered newest first by (created_utc DESC,
// id DESC): jobs and webhook endpoints (docs/api.md, Report jobs). A page
// is a keyset query, so its cost does not grow with how deep it is.

// page is one page's request: at most limit rows after the cursor's row.
type page struct {
	limit   int
	created string // the cursor's row; "" for the first page
	id      string
}

// newPage checks cursor ("" = from the newest) and bounds limit (<= 0
// means 20; capped at 1000). A cursor that is malformed, or was made for a
// list of other ids than idPrefix, is ErrBadCursor.
func newPage(limit int, cursor, idPrefix string) (page, error) {
	if limit <= 0 {
		limit = 20
	}
	p := page{limit: min(limit, 1000)}
	if cursor != "" {
		var err error
		if p.created, p.id, err = decodeCursor(cursor, idPrefix); err != nil {
			return page{}, err
		}
	}
	return p, nil
}

// query completes q, a SELECT whose WHERE clause is open (more conditions
// may follow with AND) over a table with created_utc and id columns, with
// the keyset condition, the order and the limit.
func (p page) query(q string, args []any) (string, []any) {
	if p.id != "" {
		// A row value, so the index on (account_id, created_utc, id)
		// seeks to the cursor instead of walking the pages before it.
		q += ` AND (created_utc, id) < (?, ?)`
		args = append(args, p.created, p.id)
	}
	q += ` ORDER BY created_utc DESC, id DESC LIMIT ?`
	// One more tells whether a next page exists.
	return q, append(args, p.limit+1)
}

// pageRows trims the rows of p.query to the page and returns the cursor of
// the next page, "" on the last one. key gives a row's created_utc and id.
func pageRows[T any](p page, rows []T, key func(T) (created, id string)) ([]T, string) {
	if len(rows) <= p.limit {
		return rows, ""
	}
	rows = rows[:p.limit]
	return rows, encodeCursor(key(rows[len(rows)-1]))
}

// A cursor is base64url("v1" NUL created_utc NUL id) of the last row shown,
// for every list ordered by (created_utc DESC, id DESC). decodeCursor
// checks the id's prefix, so one list's cursor is refused by another.
const cursorVersion = "v1"

func encodeCursor(created, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + "\x00" + created + "\x00" + id))
}

func decodeCursor(c, idPrefix string) (created, id string, err error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", "", locrisk.ErrBadCursor
	}
	parts := strings.Split(string(b), "\x00")
	if len(parts) != 3 || parts[0] != cursorVersion {
		return "", "", locrisk.ErrBadCursor
	}
	if _, err := ParseTime(parts[1]); err != nil || len(parts[1]) != len(TimeLayout) {
		return "", "", locrisk.ErrBadCursor
	}
	if !ids.HasPrefix(parts[2], idPrefix) {
		return "", "", locrisk.ErrBadCursor
	}
	return parts[1], parts[2], nil
}
