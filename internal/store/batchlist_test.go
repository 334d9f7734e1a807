package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/ids"
)

// ListBatches pages an account's batches newest first, each with the
// counts GetBatch derives, and never shows another account's.
func TestListBatches(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a, other := newAccount(t, s, 1000), newAccount(t, s, 1000)
	var want []string // newest first
	for i := range 7 {
		// Batches 2..4 share a creation time, so the id decides their order.
		at := t0.Add(time.Duration(i) * time.Second)
		if i >= 2 && i <= 4 {
			at = t0.Add(2 * time.Second)
		}
		items := []NewBatchItem{validItem("x", 30, -90), rejectedItem("y", "invalid_latitude", nil, nil)}
		if i == 5 {
			items = items[1:] // all rejected: completed at once
		}
		b, _, err := s.CreateBatch(ctx, NewBatch{AccountID: a.ID, Items: items}, at)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, b.ID)
		if _, _, err := s.CreateBatch(ctx, NewBatch{AccountID: other.ID, Items: items}, at); err != nil {
			t.Fatal(err)
		}
	}
	slices.Reverse(want)
	// Within one creation time, id DESC.
	slices.SortStableFunc(want[2:5], func(x, y string) int { return -strings.Compare(x, y) })

	for _, limit := range []int{1, 3, 7, 20} {
		var got []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatalf("limit %d: too many pages", limit)
			}
			page, next, err := s.ListBatches(ctx, a.ID, limit, cursor)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > limit {
				t.Fatalf("limit %d: page of %d", limit, len(page))
			}
			for _, b := range page {
				one, err := s.GetBatch(ctx, a.ID, b.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !batchesEqual(b, one) {
					t.Errorf("listed %+v, GET shows %+v", b, one)
				}
				got = append(got, b.ID)
			}
			if next == "" {
				break
			}
			cursor = next
		}
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: order %v, want %v", limit, got, want)
		}
	}
	// The all-rejected batch is listed completed.
	page, _, err := s.ListBatches(ctx, a.ID, 20, "")
	if err != nil {
		t.Fatal(err)
	}
	if b := page[1]; b.Status != BatchCompleted || b.Counts.Rejected != 1 || b.CompletedUTC == nil {
		t.Errorf("all-rejected batch listed as %+v", b)
	}
	// A job cursor is refused.
	jobCursor := encodeCursor(FormatTime(t0), ids.New(ids.Job))
	if _, _, err := s.ListBatches(ctx, a.ID, 20, jobCursor); !errors.Is(err, ErrBadCursor) {
		t.Errorf("job cursor: %v, want ErrBadCursor", err)
	}
	// An account without batches: an empty page.
	if page, next, err := s.ListBatches(ctx, newAccount(t, s, 1).ID, 20, ""); err != nil || len(page) != 0 || next != "" {
		t.Errorf("empty account: %v %q %v", page, next, err)
	}
}

func batchesEqual(a, b Batch) bool {
	sameTime := (a.CompletedUTC == nil) == (b.CompletedUTC == nil) &&
		(a.CompletedUTC == nil || a.CompletedUTC.Equal(*b.CompletedUTC))
	a.CompletedUTC, b.CompletedUTC = nil, nil
	return sameTime && a.CreatedUTC.Equal(b.CreatedUTC) && a.ID == b.ID && a.Status == b.Status &&
		a.Counts == b.Counts && a.TotalItems == b.TotalItems && a.Name == b.Name && a.AccountID == b.AccountID
}

// The page is an index seek on batches_by_account, from the cursor on, in
// the index's order: no scan, no sort, no item read, and of the jobs only
// the account's processing ones.
func TestListBatchesQueryPlan(t *testing.T) {
	s := newStore(t, Options{})
	pg, err := newPage(20, encodeCursor(FormatTime(t0), ids.New(ids.Batch)), ids.Batch)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := pg.query(`SELECT `+batchColumns+` FROM batches WHERE account_id = ?`, nil)
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
