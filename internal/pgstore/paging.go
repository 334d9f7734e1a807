package pgstore

// Paging of the list operations (jobs, batches, webhook endpoints): newest
// first by creation time and id, after an opaque cursor, as every store
// pages (service.go, ListJobs).

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// cursorVersion starts every page cursor, so that a later format can
// tell the old one apart.
const cursorVersion = "1"

func encodeCursor(created time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + "\x00" + created.UTC().Format(time.RFC3339Nano) + "\x00" + id))
}

func decodeCursor(c, idPrefix string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", locrisk.ErrBadCursor
	}
	parts := strings.Split(string(b), "\x00")
	if len(parts) != 3 || parts[0] != cursorVersion || !ids.HasPrefix(parts[2], idPrefix) {
		return time.Time{}, "", locrisk.ErrBadCursor
	}
	t, err := time.Parse(time.RFC3339Nano, parts[1])
	if err != nil {
		return time.Time{}, "", locrisk.ErrBadCursor
	}
	return t, parts[2], nil
}

// page is one page of a list: its size (20 unless given, at most 1,000)
// and the position after which it starts (zero: the newest).
type page struct {
	limit   int
	created time.Time
	id      string
}

// newPage reads limit and cursor, whose id must have idPrefix
// (ErrBadCursor otherwise).
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

// query completes q, a SELECT whose WHERE clause is open, with args its
// parameters so far: the keyset condition on the columns created_utc and
// id (with alias, "b." say), groupBy when the SELECT aggregates, the
// order, and a limit of one more row than the page, which tells whether a
// next page exists.
func (p page) query(q string, args []any, alias, groupBy string) (string, []any) {
	if p.id != "" {
		args = append(args, p.created, p.id)
		q += fmt.Sprintf(` AND (%[1]screated_utc, %[1]sid) < ($%[2]d, $%[3]d)`, alias, len(args)-1, len(args))
	}
	if groupBy != "" {
		q += ` GROUP BY ` + groupBy
	}
	args = append(args, p.limit+1)
	return q + fmt.Sprintf(` ORDER BY %[1]screated_utc DESC, %[1]sid DESC LIMIT $%[2]d`, alias, len(args)), args
}

// pageRows cuts rows, read by query, to the page, and returns the cursor
// of the next page ("" on the last); key gives a row's creation time and id.
func pageRows[R any](p page, rows []R, key func(R) (time.Time, string)) ([]R, string) {
	if len(rows) <= p.limit {
		return rows, ""
	}
	rows = rows[:p.limit]
	return rows, encodeCursor(key(rows[p.limit-1]))
}
