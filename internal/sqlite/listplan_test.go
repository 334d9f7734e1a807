package sqlite

import (
	"slices"
	"strings"
	"testing"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// A page of the job list, with or without a status, from the newest or
// from a cursor, is a seek on an index in the list's order: no scan past
// other jobs, no sort.
func TestListJobsQueryPlan(t *testing.T) {
	s := newStore(t, Options{})
	for _, tt := range []struct {
		name, status, cursor, want string
	}{
		{"all, first page", "", "", "SEARCH report_jobs USING INDEX report_jobs_by_account (account_id=?)"},
		{"all, cursor", "", locrisk.EncodeCursor(t0, ids.New(ids.Job)),
			"SEARCH report_jobs USING INDEX report_jobs_by_account (account_id=? AND (created_utc,id)<(?,?))"},
		{"status, first page", locrisk.StatusCompleted, "", "SEARCH report_jobs USING INDEX report_jobs_by_status (account_id=? AND status=?)"},
		{"status, cursor", locrisk.StatusFailed, locrisk.EncodeCursor(t0, ids.New(ids.Job)),
			"SEARCH report_jobs USING INDEX report_jobs_by_status (account_id=? AND status=? AND (created_utc,id)<(?,?))"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q, args := listJobsQuery("acct_x", tt.status)
			pg, err := newPage(100, tt.cursor, ids.Job)
			if err != nil {
				t.Fatal(err)
			}
			q, args = pageQuery(pg, q, args)
			plan := queryPlan(t, s, q, args...)
			if !slices.Equal(plan, []string{tt.want}) {
				t.Errorf("plan:\n%s\nwant %s", strings.Join(plan, "\n"), tt.want)
			}
		})
	}
}
