package pgstore

// Paging of the list operations (jobs, batches, webhook endpoints): the
// page rule and the cursor are the domain's (cursor.go at the root), so a
// cursor means the same on every node and in either store; this file
// holds only the SQL keyset condition.

import (
	"fmt"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// newPage reads limit and cursor, whose id must have idPrefix
// (ErrBadCursor otherwise).
func newPage(limit int, cursor, idPrefix string) (locrisk.Page, error) {
	return locrisk.NewPage(limit, cursor, func(id string) bool { return ids.HasPrefix(id, idPrefix) })
}

// pageQuery completes q, a SELECT whose WHERE clause is open, with args
// its parameters so far: the keyset condition of p on the columns
// created_utc and id (with alias, "b." say), groupBy when the SELECT
// aggregates, the order, and p's fetch limit.
func pageQuery(p locrisk.Page, q string, args []any, alias, groupBy string) (string, []any) {
	if !p.First() {
		args = append(args, p.AfterCreated, p.AfterID)
		q += fmt.Sprintf(` AND (%[1]screated_utc, %[1]sid) < ($%[2]d, $%[3]d)`, alias, len(args)-1, len(args))
	}
	if groupBy != "" {
		q += ` GROUP BY ` + groupBy
	}
	args = append(args, p.Fetch())
	return q + fmt.Sprintf(` ORDER BY %[1]screated_utc DESC, %[1]sid DESC LIMIT $%[2]d`, alias, len(args)), args
}
