package sqlite

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// The page is an index seek on batches_by_account, from the cursor on, in
// the index's order: no scan, no sort, no item read, and of the jobs only
// the account's processing ones.
func TestListBatchesQueryPlan(t *testing.T) {
	s := newStore(t, Options{})
	pg, err := newPage(20, locrisk.EncodeCursor(t0, ids.New(ids.Batch)), ids.Batch)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := pageQuery(pg, `SELECT `+batchColumns+` FROM batches WHERE account_id = ?`, nil)
	rows, err := s.db.QueryxContext(context.Background(), `EXPLAIN QUERY PLAN `+q, "acct_x", FormatTime(t0), "bat_x", 21)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	all := strings.Join(plan, "\n")
	if !slices.Contains(plan, "SEARCH batches USING INDEX batches_by_account (account_id=? AND (created_utc,id)<(?,?))") {
		t.Errorf("the page is not a seek on batches_by_account:\n%s", all)
	}
	for _, p := range plan {
		// The processing items: a range of the account's processing jobs.
		if strings.HasPrefix(p, "SCAN ") || strings.Contains(p, "TEMP B-TREE") ||
			(strings.HasPrefix(p, "SEARCH report_jobs") && p != "SEARCH report_jobs USING INDEX report_jobs_by_status (account_id=? AND status=?)") {
			t.Errorf("plan step %q:\n%s", p, all)
		}
	}
}
