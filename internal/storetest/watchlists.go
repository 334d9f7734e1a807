package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

// The watchlists (docs/api.md, Watchlists): creation with the quota, the
// items' first jobs, adding and removing, the paged item list and its
// changed filter, the final transition that moves an item's reports on,
// the re-score lane planned once per version change and started once per
// plan, the on-demand throttle, and the purge that keeps what an item
// names.
var watchlistTests = []test{
	{"Create", createWatchlist},
	{"CreateInvalid", createWatchlistInvalid},
	{"QuotaAllOrNothing", watchlistQuotaAllOrNothing},
	{"AddRemove", watchItemsAddRemove},
	{"ListPaging", watchlistsPaging},
	{"Reports", watchItemReports},
	{"PlanOnce", rescorePlanOnce},
	{"ClaimVerdicts", rescoreClaimVerdicts},
	{"RequestThrottle", rescoreRequestThrottle},
	{"Delete", deleteWatchlist},
	{"PurgeKeepsWatched", purgeKeepsWatched},
	{"RescoreOnceConcurrently", rescoreOnceConcurrently},
}

// servingV1 and servingV2 are the versions of two data releases.
var (
	servingV1 = locrisk.ScoreVersions{Data: "data-aaaaaaaaaaaa", Methodology: "m-1", Engine: "e-1"}
	servingV2 = locrisk.ScoreVersions{Data: "data-bbbbbbbbbbbb", Methodology: "m-1", Engine: "e-1"}
)

func watchItems(n int) []locrisk.NewWatchItem {
	out := make([]locrisk.NewWatchItem, n)
	for i := range out {
		out[i] = locrisk.NewWatchItem{ExternalID: fmt.Sprintf("prop-%d", i+1), Latitude: 30 + float64(i)/10, Longitude: -90}
	}
	return out
}

// newWatchlist creates a list of n items for the account.
func newWatchlist(t testing.TB, s locrisk.Store, acct string, n int, now time.Time) (locrisk.Watchlist, []locrisk.WatchItem) {
	t.Helper()
	w, items, err := s.CreateWatchlist(context.Background(), locrisk.NewWatchlist{AccountID: acct, Name: "Book", Items: watchItems(n)}, now)
	if err != nil {
		t.Fatalf("create watchlist: %v", err)
	}
	return w, items
}

// scoredReport is a report made with v whose scores are overall, one
// module at score.
func scoredReport(v locrisk.ScoreVersions, overall, module int) locrisk.Report {
	return locrisk.Report{DataVersion: v.Data, MethodologyVersion: v.Methodology, EngineVersion: v.Engine,
		Body: []byte(fmt.Sprintf(`{"summary":{"overallScore":%d}}`, overall)),
		Scores: &locrisk.ReportScores{Overall: overall, RiskLevel: "low",
			Modules: []locrisk.ModuleScore{{Module: "hydrology", Score: &module}, {Module: "wildfire"}}}}
}

// completeWith claims the queued job and completes it with rep at now.
func completeWith(t testing.TB, s locrisk.Store, jobID string, rep locrisk.Report, now time.Time) locrisk.Job {
	t.Helper()
	ClaimJob(t, s, jobID, now)
	j, err := s.CompleteJob(context.Background(), jobID, "tw", rep, now)
	if err != nil {
		t.Fatalf("complete %s: %v", jobID, err)
	}
	return j
}

// AllWatchItems lists every item of the list, paging; only the changed
// ones, or the others, when changed is set.
func AllWatchItems(t testing.TB, s locrisk.Store, acct, id string, changed *bool) []locrisk.WatchItem {
	t.Helper()
	var all []locrisk.WatchItem
	cursor := ""
	for {
		page, next, err := s.ListWatchItems(context.Background(), acct, id, changed, 3, cursor)
		if err != nil {
			t.Fatalf("list watch items: %v", err)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		cursor = next
	}
}

func itemByID(t testing.TB, items []locrisk.WatchItem, id string) locrisk.WatchItem {
	t.Helper()
	for _, it := range items {
		if it.ID == id {
			return it
		}
	}
	t.Fatalf("item %s not listed", id)
	return locrisk.WatchItem{}
}

func createWatchlist(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 10)
	w, items, err := s.CreateWatchlist(ctx, locrisk.NewWatchlist{AccountID: a.ID, Name: "Book", Items: watchItems(3)}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if w.MinScoreChange != locrisk.DefaultMinScoreChange || w.ItemCount != 3 || w.Name != "Book" || !w.CreatedUTC.Equal(t0) {
		t.Errorf("created %+v", w)
	}
	got, err := s.GetWatchlist(ctx, a.ID, w.ID)
	if err != nil || got.ItemCount != 3 || got.ChangedCount != 0 || got.RescoreRequestedUTC != nil {
		t.Errorf("GetWatchlist = %+v, %v", got, err)
	}
	if _, err := s.GetWatchlist(ctx, newAccount(t, s, 1).ID, w.ID); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("another account's list: %v, want ErrNotFound", err)
	}
	// Every item has a queued bulk job at its coordinate, charged.
	jobs := listJobs(t, s, a.ID, "")
	if len(jobs) != 3 {
		t.Fatalf("%d jobs, want 3", len(jobs))
	}
	for _, it := range items {
		if it.JobID == nil || it.JobStatus == nil || *it.JobStatus != locrisk.StatusQueued || it.Current != nil {
			t.Errorf("new item %+v", it)
			continue
		}
		j, err := s.GetJob(ctx, a.ID, *it.JobID)
		if err != nil || j.Bucket != locrisk.BucketBulk || j.WatchItemID == nil || *j.WatchItemID != it.ID ||
			j.Latitude != it.Latitude || j.Longitude != it.Longitude || j.BatchID != nil {
			t.Errorf("item %s job %+v, %v", it.ID, j, err)
		}
	}
	u, err := s.PeriodUsage(ctx, a.ID, t0)
	if err != nil || u.Created != 3 || u.Charged != 3 {
		t.Errorf("period usage %+v, %v; want 3 created and charged", u, err)
	}
	listed := AllWatchItems(t, s, a.ID, w.ID, nil)
	if len(listed) != 3 || listed[0].ExternalID == "" {
		t.Errorf("listed %+v", listed)
	}
	// An empty list may be made and filled later.
	e, none, err := s.CreateWatchlist(ctx, locrisk.NewWatchlist{AccountID: a.ID, MinScoreChange: 20}, t0)
	if err != nil || len(none) != 0 || e.ItemCount != 0 || e.MinScoreChange != 20 {
		t.Errorf("empty list %+v %v %v", e, none, err)
	}
}

func createWatchlistInvalid(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 1000)
	for name, nw := range map[string]locrisk.NewWatchlist{
		"min below 1":   {AccountID: a.ID, MinScoreChange: -1},
		"min above 100": {AccountID: a.ID, MinScoreChange: 101},
		"no account":    {},
		"too many":      {AccountID: a.ID, Items: watchItems(locrisk.MaxWatchItemsPerRequest + 1)},
		"bad latitude":  {AccountID: a.ID, Items: []locrisk.NewWatchItem{{Latitude: 91, Longitude: 0}}},
	} {
		if _, _, err := s.CreateWatchlist(ctx, nw, t0); !errors.Is(err, locrisk.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if _, _, err := s.CreateWatchlist(ctx, locrisk.NewWatchlist{AccountID: "acct_unknown000000000000000"}, t0); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("unknown account: %v, want ErrNotFound", err)
	}
	w, _ := newWatchlist(t, s, a.ID, 1, t0)
	if _, err := s.AddWatchItems(ctx, a.ID, w.ID, nil, t0); !errors.Is(err, locrisk.ErrInvalid) {
		t.Errorf("adding nothing: %v, want ErrInvalid", err)
	}
}

func watchlistQuotaAllOrNothing(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 2)
	if _, _, err := s.CreateWatchlist(ctx, locrisk.NewWatchlist{AccountID: a.ID, Items: watchItems(3)}, t0); !errors.Is(err, locrisk.ErrQuotaExceeded) {
		t.Fatalf("3 items on a quota of 2: %v, want quota exceeded", err)
	}
	if ws, _, err := s.ListWatchlists(ctx, a.ID, 10, ""); err != nil || len(ws) != 0 {
		t.Errorf("after a refused creation: %d lists, %v", len(ws), err)
	}
	w, _ := newWatchlist(t, s, a.ID, 2, t0)
	if _, err := s.AddWatchItems(ctx, a.ID, w.ID, watchItems(1), t0); !errors.Is(err, locrisk.ErrQuotaExceeded) {
		t.Errorf("adding past the quota: %v", err)
	}
	if got, _ := s.GetWatchlist(ctx, a.ID, w.ID); got.ItemCount != 2 {
		t.Errorf("item count %d after a refused add, want 2", got.ItemCount)
	}
	if n := len(listJobs(t, s, a.ID, "")); n != 2 {
		t.Errorf("%d jobs, want 2", n)
	}
}

func watchItemsAddRemove(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 100)
	other := newAccount(t, s, 100)
	w, first := newWatchlist(t, s, a.ID, 2, t0)
	w2, foreign := newWatchlist(t, s, a.ID, 1, t0)
	added, err := s.AddWatchItems(ctx, a.ID, w.ID, watchItems(2), t0.Add(time.Second))
	if err != nil || len(added) != 2 {
		t.Fatalf("add: %v %v", added, err)
	}
	if _, err := s.AddWatchItems(ctx, other.ID, w.ID, watchItems(1), t0); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("adding to another account's list: %v", err)
	}
	if got, _ := s.GetWatchlist(ctx, a.ID, w.ID); got.ItemCount != 4 {
		t.Errorf("item count %d, want 4", got.ItemCount)
	}
	if _, err := s.RemoveWatchItems(ctx, other.ID, w.ID, []string{first[0].ID}); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("removing from another account's list: %v", err)
	}
	removed, err := s.RemoveWatchItems(ctx, a.ID, w.ID,
		[]string{added[1].ID, "wli_unknown00000000000000", first[0].ID, added[1].ID, foreign[0].ID})
	if err != nil || !slices.Equal(removed, []string{added[1].ID, first[0].ID}) {
		t.Errorf("removed %v, %v; want %v", removed, err, []string{added[1].ID, first[0].ID})
	}
	left := AllWatchItems(t, s, a.ID, w.ID, nil)
	if len(left) != 2 || left[0].ID != added[0].ID || left[1].ID != first[1].ID {
		t.Errorf("left %v, want the later added one, then the first list's second", left)
	}
	if got, _ := s.GetWatchlist(ctx, a.ID, w.ID); got.ItemCount != 2 {
		t.Errorf("item count %d, want 2", got.ItemCount)
	}
	if n := len(AllWatchItems(t, s, a.ID, w2.ID, nil)); n != 1 {
		t.Errorf("the other list has %d items, want 1 (not removed through this one)", n)
	}
	// A removed item's job is an ordinary job: it completes, and nothing
	// else happens.
	completeWith(t, s, *first[0].JobID, scoredReport(servingV1, 10, 10), t0)
}

func watchlistsPaging(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 100)
	var made []string
	for i := range 5 {
		w, _ := newWatchlist(t, s, a.ID, 0, t0.Add(time.Duration(i)*time.Second))
		made = append(made, w.ID)
	}
	var got []string
	cursor := ""
	for {
		page, next, err := s.ListWatchlists(ctx, a.ID, 2, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range page {
			got = append(got, w.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	slices.Reverse(made)
	if !slices.Equal(got, made) {
		t.Errorf("listed %v, want newest first %v", got, made)
	}
	if _, _, err := s.ListWatchlists(ctx, a.ID, 2, "bogus"); !errors.Is(err, locrisk.ErrBadCursor) {
		t.Errorf("bad cursor: %v", err)
	}
	_, jobCursor, err := s.ListJobs(ctx, a.ID, "", 1, "")
	if err != nil || jobCursor == "" {
		t.Skipf("no job cursor to try: %v", err)
	}
	if _, _, err := s.ListWatchlists(ctx, a.ID, 2, jobCursor); !errors.Is(err, locrisk.ErrBadCursor) {
		t.Errorf("a job list's cursor: %v, want ErrBadCursor", err)
	}
}

// markChanged is a final hook that marks every item whose new report's
// overall score differs from its previous one's as changed, as the
// webhook outbox does by its own rule (internal/outbox).
func markChanged(ctx context.Context, tx locrisk.Tx, job locrisk.Job) error {
	c, ok := tx.WatchChange()
	if !ok {
		return nil
	}
	prev, err := tx.ReadReport(ctx, c.Previous.ReportID)
	if err != nil {
		return err
	}
	if len(prev.Body) == 0 || c.Previous.Scores == nil || c.Report.Scores == nil {
		return fmt.Errorf("change without bodies or scores: %+v", c)
	}
	if c.Previous.Scores.Overall != c.Report.Scores.Overall {
		return tx.MarkWatchItemChanged(ctx, c.Item.ID, *job.CompletedUTC)
	}
	return nil
}

func watchItemReports(t testing.TB, h Harness) {
	s := h.Open(t, Config{Now: func() time.Time { return t0 }, OnJobFinal: []locrisk.JobFinalHook{markChanged}})
	ctx := context.Background()
	a := newAccount(t, s, 100)
	w, items := newWatchlist(t, s, a.ID, 2, t0)
	t1 := t0.Add(time.Minute)
	j1 := completeWith(t, s, *items[0].JobID, scoredReport(servingV1, 30, 25), t1)
	ClaimJob(t, s, *items[1].JobID, t1)
	if _, err := s.FailJob(ctx, *items[1].JobID, "tw", "generation_error", "boom", false, t1); err != nil {
		t.Fatal(err)
	}
	listed := AllWatchItems(t, s, a.ID, w.ID, nil)
	it := itemByID(t, listed, items[0].ID)
	if it.Current == nil || it.Current.ReportID != *j1.ReportID || it.Current.JobID != j1.ID ||
		it.Current.Versions != servingV1 || !it.Current.GeneratedUTC.Equal(t1) || it.PreviousReportID != nil ||
		it.Changed || it.LastChangedUTC != nil || *it.JobStatus != locrisk.StatusCompleted {
		t.Fatalf("scored item %+v (current %+v)", it, it.Current)
	}
	if sc := it.Current.Scores; sc == nil || sc.Overall != 30 || len(sc.Modules) != 2 || sc.Modules[0].Module != "hydrology" ||
		*sc.Modules[0].Score != 25 || sc.Modules[1].Score != nil {
		t.Errorf("current scores %+v", it.Current.Scores)
	}
	failed := itemByID(t, listed, items[1].ID)
	if failed.Current != nil || *failed.JobStatus != locrisk.StatusFailed || failed.JobErrorCode == nil || *failed.JobErrorCode != "generation_error" {
		t.Errorf("failed item %+v", failed)
	}

	// A re-score to other data: the first item's reports move on and,
	// its score changed, the hook marks it changed.
	if n, err := s.PlanRescores(ctx, servingV2, t1); err != nil || n != 2 {
		t.Fatalf("planned %d, %v; want both items (one unscored)", n, err)
	}
	t2 := t1.Add(time.Minute)
	var rescored []locrisk.Job
	for {
		j, ok, err := s.ClaimRescore(ctx, "rw", servingV2, time.Hour, t2)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if j.Status != locrisk.StatusProcessing || j.Attempts != 1 || j.WatchItemID == nil || j.Bucket != locrisk.BucketBulk {
			t.Errorf("re-score job %+v", j)
		}
		rescored = append(rescored, j)
	}
	if len(rescored) != 2 {
		t.Fatalf("%d re-scores started, want 2", len(rescored))
	}
	if u, err := s.PeriodUsage(ctx, a.ID, t2); err != nil || u.Created != 4 || u.Charged != 2 || u.Remaining() != 98 {
		t.Errorf("usage %+v %v: the re-scores are jobs (4 created), not charged (2)", u, err)
	}
	for _, j := range rescored {
		rep := scoredReport(servingV2, 30, 25)
		if *j.WatchItemID == items[0].ID {
			rep = scoredReport(servingV2, 45, 25)
		}
		if _, err := s.CompleteJob(ctx, j.ID, "rw", rep, t2); err != nil {
			t.Fatal(err)
		}
	}
	listed = AllWatchItems(t, s, a.ID, w.ID, nil)
	it = itemByID(t, listed, items[0].ID)
	if it.Current == nil || it.Current.Versions != servingV2 || it.PreviousReportID == nil || *it.PreviousReportID != *j1.ReportID ||
		!it.Changed || it.LastChangedUTC == nil || !it.LastChangedUTC.Equal(t2) || it.Current.Scores.Overall != 45 {
		t.Errorf("re-scored item %+v (current %+v)", it, it.Current)
	}
	other := itemByID(t, listed, items[1].ID)
	if other.Current == nil || other.PreviousReportID != nil || other.Changed {
		t.Errorf("first report of the failed item %+v", other)
	}
	yes, no := true, false
	changed := AllWatchItems(t, s, a.ID, w.ID, &yes)
	if len(changed) != 1 || changed[0].ID != items[0].ID {
		t.Errorf("changed items %v, want only %s", changed, items[0].ID)
	}
	if unchanged := AllWatchItems(t, s, a.ID, w.ID, &no); len(unchanged) != 1 || unchanged[0].ID != items[1].ID {
		t.Errorf("unchanged items %v, want only %s", unchanged, items[1].ID)
	}
	if got, _ := s.GetWatchlist(ctx, a.ID, w.ID); got.ChangedCount != 1 {
		t.Errorf("changed count %d, want 1", got.ChangedCount)
	}
	// Planned again at the same versions: nothing, every item follows.
	if n, err := s.PlanRescores(ctx, servingV2, t2); err != nil || n != 0 {
		t.Errorf("planned again %d, %v; want 0", n, err)
	}
	// An unchanged re-score clears the flag and keeps the last change.
	if _, err := s.RequestRescore(ctx, a.ID, w.ID, t2); err != nil {
		t.Fatal(err)
	}
	t3 := t2.Add(time.Minute)
	for {
		j, ok, err := s.ClaimRescore(ctx, "rw", servingV2, time.Hour, t3)
		if err != nil || !ok {
			break
		}
		score := 30
		if *j.WatchItemID == items[0].ID {
			score = 45
		}
		if _, err := s.CompleteJob(ctx, j.ID, "rw", scoredReport(servingV2, score, 25), t3); err != nil {
			t.Fatal(err)
		}
	}
	it = itemByID(t, AllWatchItems(t, s, a.ID, w.ID, nil), items[0].ID)
	if it.Changed || it.LastChangedUTC == nil || !it.LastChangedUTC.Equal(t2) {
		t.Errorf("after an unchanged re-score: changed %v last %v; want false, %v", it.Changed, it.LastChangedUTC, t2)
	}
}

func rescorePlanOnce(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 100)
	_, items := newWatchlist(t, s, a.ID, 3, t0)
	// While the first jobs are queued, nothing is planned: they score at
	// the serving versions.
	if n, err := s.PlanRescores(ctx, servingV2, t0); err != nil || n != 0 {
		t.Errorf("planned %d over queued items, %v", n, err)
	}
	for _, it := range items {
		completeWith(t, s, *it.JobID, scoredReport(servingV1, 10, 10), t0)
	}
	if n, err := s.PlanRescores(ctx, servingV1, t0); err != nil || n != 0 {
		t.Errorf("unchanged versions planned %d, %v", n, err)
	}
	if j, ok, err := s.ClaimRescore(ctx, "rw", servingV1, time.Hour, t0); err != nil || ok {
		t.Errorf("claim with unchanged versions: %+v %v %v", j, ok, err)
	}
	// A disabled account's items wait for it to be enabled again.
	if _, err := s.SetAccountDisabled(ctx, a.ID, true); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PlanRescores(ctx, servingV2, t0); err != nil || n != 0 {
		t.Errorf("planned %d for a disabled account, %v; want 0", n, err)
	}
	if _, err := s.SetAccountDisabled(ctx, a.ID, false); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PlanRescores(ctx, servingV2, t0); err != nil || n != 3 {
		t.Errorf("planned %d, %v; want 3", n, err)
	}
	if n, err := s.PlanRescores(ctx, servingV2, t0.Add(time.Hour)); err != nil || n != 0 {
		t.Errorf("planned again %d, %v; want 0", n, err)
	}
	b, err := s.RescoreBacklog(ctx)
	if err != nil || b.PendingVersion != 3 || b.PendingRequested != 0 || b.Started != 0 || b.Oldest == nil || !b.Oldest.Equal(t0) {
		t.Errorf("backlog %+v, %v", b, err)
	}
	// A node still serving the old versions takes none of them.
	if _, ok, err := s.ClaimRescore(ctx, "old", servingV1, time.Hour, t0); err != nil || ok {
		t.Errorf("claim by an old node: ok=%v %v", ok, err)
	}
	seen := map[string]bool{}
	for {
		j, ok, err := s.ClaimRescore(ctx, "rw", servingV2, time.Hour, t0)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if seen[*j.WatchItemID] {
			t.Errorf("item %s re-scored twice", *j.WatchItemID)
		}
		seen[*j.WatchItemID] = true
	}
	if len(seen) != 3 {
		t.Errorf("%d items re-scored, want 3", len(seen))
	}
	if b, _ := s.RescoreBacklog(ctx); b.PendingVersion != 0 || b.Started != 3 || b.Oldest != nil {
		t.Errorf("backlog after the claims %+v", b)
	}
	// Started re-scores are not planned again, even before they end.
	if n, err := s.PlanRescores(ctx, servingV2, t0.Add(2*time.Hour)); err != nil || n != 0 {
		t.Errorf("planned while started: %d, %v", n, err)
	}
	// A third release drops nothing started, and plans afresh.
	v3 := locrisk.ScoreVersions{Data: servingV2.Data, Methodology: "m-2", Engine: "e-2"}
	if n, err := s.PlanRescores(ctx, v3, t0.Add(3*time.Hour)); err != nil || n != 0 {
		t.Errorf("planned over open re-scores %d, %v; want 0 (their jobs are open)", n, err)
	}
}

func rescoreClaimVerdicts(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 100)
	w, items := newWatchlist(t, s, a.ID, 2, t0)
	// On-demand re-scores of items whose first job is still queued are
	// dropped: that job scores them.
	rr, err := s.RequestRescore(ctx, a.ID, w.ID, t0)
	if err != nil || rr.Items != 2 || rr.WatchlistID != w.ID || !rr.RequestedUTC.Equal(t0) {
		t.Fatalf("request %+v, %v", rr, err)
	}
	if b, _ := s.RescoreBacklog(ctx); b.PendingRequested != 2 {
		t.Errorf("backlog %+v, want 2 requested", b)
	}
	if j, ok, err := s.ClaimRescore(ctx, "rw", servingV1, time.Hour, t0); err != nil || ok {
		t.Errorf("claim over open jobs: %+v %v %v", j, ok, err)
	}
	if b, _ := s.RescoreBacklog(ctx); b.PendingRequested != 0 {
		t.Errorf("backlog %+v, want the plans dropped", b)
	}
	for _, it := range items {
		completeWith(t, s, *it.JobID, scoredReport(servingV1, 10, 10), t0)
	}
	// An on-demand re-score runs whatever the versions.
	t1 := t0.Add(locrisk.RescoreRequestInterval)
	if _, err := s.RequestRescore(ctx, a.ID, w.ID, t1); err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, ok, err := s.ClaimRescore(ctx, "rw", servingV1, time.Hour, t1)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d on-demand re-scores started, want 2", n)
	}
	if _, _, err := s.ClaimRescore(ctx, "", servingV1, time.Hour, t1); !errors.Is(err, locrisk.ErrInvalid) {
		t.Errorf("claim without an owner: %v", err)
	}
	if _, _, err := s.ClaimRescore(ctx, "rw", locrisk.ScoreVersions{}, time.Hour, t1); !errors.Is(err, locrisk.ErrInvalid) {
		t.Errorf("claim without versions: %v", err)
	}
}

func rescoreRequestThrottle(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 100)
	w, _ := newWatchlist(t, s, a.ID, 1, t0)
	if _, err := s.RequestRescore(ctx, a.ID, w.ID, t0); err != nil {
		t.Fatal(err)
	}
	_, err := s.RequestRescore(ctx, a.ID, w.ID, t0.Add(locrisk.RescoreRequestInterval-time.Second))
	var tooSoon *locrisk.RescoreTooSoonError
	if !errors.As(err, &tooSoon) || !tooSoon.Allowed.Equal(t0.Add(locrisk.RescoreRequestInterval)) {
		t.Errorf("second request within the interval: %v", err)
	}
	if got, _ := s.GetWatchlist(ctx, a.ID, w.ID); got.RescoreRequestedUTC == nil || !got.RescoreRequestedUTC.Equal(t0) {
		t.Errorf("rescoreRequested %v, want %v", got.RescoreRequestedUTC, t0)
	}
	if _, err := s.RequestRescore(ctx, a.ID, w.ID, t0.Add(locrisk.RescoreRequestInterval)); err != nil {
		t.Errorf("request after the interval: %v", err)
	}
	if _, err := s.RequestRescore(ctx, newAccount(t, s, 1).ID, w.ID, t0); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("another account's list: %v", err)
	}
}

func deleteWatchlist(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 100)
	w, items := newWatchlist(t, s, a.ID, 2, t0)
	completeWith(t, s, *items[0].JobID, scoredReport(servingV1, 10, 10), t0)
	if _, err := s.PlanRescores(ctx, servingV2, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteWatchlist(ctx, newAccount(t, s, 1).ID, w.ID); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("deleting another account's list: %v", err)
	}
	if err := s.DeleteWatchlist(ctx, a.ID, w.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetWatchlist(ctx, a.ID, w.ID); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("deleted list: %v", err)
	}
	if _, _, err := s.ListWatchItems(ctx, a.ID, w.ID, nil, 10, ""); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("items of a deleted list: %v", err)
	}
	if err := s.DeleteWatchlist(ctx, a.ID, w.ID); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
	if b, _ := s.RescoreBacklog(ctx); b.PendingVersion != 0 {
		t.Errorf("plans of deleted items left: %+v", b)
	}
	// Jobs and reports stay; the queued job completes as an ordinary one.
	completeWith(t, s, *items[1].JobID, scoredReport(servingV1, 10, 10), t0)
	if n := len(listJobs(t, s, a.ID, locrisk.StatusCompleted)); n != 2 {
		t.Errorf("%d completed jobs, want 2", n)
	}
}

func purgeKeepsWatched(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 100)
	w, items := newWatchlist(t, s, a.ID, 1, t0)
	first := completeWith(t, s, *items[0].JobID, scoredReport(servingV1, 10, 10), t0)
	if _, err := s.PlanRescores(ctx, servingV2, t0); err != nil {
		t.Fatal(err)
	}
	second, ok, err := s.ClaimRescore(ctx, "rw", servingV2, time.Hour, t0)
	if err != nil || !ok {
		t.Fatal(err)
	}
	if second, err = s.CompleteJob(ctx, second.ID, "rw", scoredReport(servingV2, 20, 10), t0); err != nil {
		t.Fatal(err)
	}
	// A third report pushes the first out of the item's two.
	if _, err := s.RequestRescore(ctx, a.ID, w.ID, t0); err != nil {
		t.Fatal(err)
	}
	third, ok, err := s.ClaimRescore(ctx, "rw", servingV2, time.Hour, t0)
	if err != nil || !ok {
		t.Fatal(err)
	}
	if third, err = s.CompleteJob(ctx, third.ID, "rw", scoredReport(servingV2, 20, 10), t0); err != nil {
		t.Fatal(err)
	}
	plain := EndJob(t, s, a.ID, locrisk.BucketAPI, t0, t0, false)
	policy := locrisk.PurgePolicy{Before: t0.Add(time.Hour), Now: t0.Add(time.Hour), Batch: 10}
	if _, err := s.Purge(ctx, policy); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		job  locrisk.Job
		kept bool
	}{{first, false}, {second, true}, {third, true}, {plain, false}} {
		_, err := s.GetJob(ctx, a.ID, c.job.ID)
		if kept := err == nil; kept != c.kept {
			t.Errorf("job %s kept %v (%v), want %v", c.job.ID, kept, err, c.kept)
		}
		_, err = s.GetReport(ctx, a.ID, *c.job.ReportID)
		if kept := err == nil; kept != c.kept {
			t.Errorf("report of %s kept %v (%v), want %v", c.job.ID, kept, err, c.kept)
		}
	}
	// Once the item goes, its jobs are ordinary ones.
	if _, err := s.RemoveWatchItems(ctx, a.ID, w.ID, []string{items[0].ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Purge(ctx, policy); err != nil {
		t.Fatal(err)
	}
	for _, j := range []locrisk.Job{second, third} {
		if _, err := s.GetJob(ctx, a.ID, j.ID); !errors.Is(err, locrisk.ErrNotFound) {
			t.Errorf("job %s of a removed item after the purge: %v", j.ID, err)
		}
	}
}

// rescoreOnceConcurrently: several planners and claimers at once start one
// re-score per item (the invariant RescoreOnceAcrossNodes checks across
// stores; here on one).
func rescoreOnceConcurrently(t testing.TB, h Harness) {
	s := h.open(t)
	RescoreOnceAcrossNodes(t, []locrisk.Store{s, s, s, s})
}

// RescoreOnceAcrossNodes makes watch items scored at one version on
// nodes[0], then has every node plan the re-scores of a version change
// and claim them, all at once: each item must get exactly one re-score
// job, whichever node made it. A store whose nodes share a database (the
// PostgreSQL store) passes stores opened on it.
func RescoreOnceAcrossNodes(t testing.TB, nodes []locrisk.Store) {
	t.Helper()
	s := nodes[0]
	ctx := context.Background()
	a := newAccount(t, s, 1000)
	const n = 30
	_, items := newWatchlist(t, s, a.ID, n, t0)
	for _, it := range items {
		completeWith(t, s, *it.JobID, scoredReport(servingV1, 10, 10), t0)
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		planned int
		jobs    = map[string][]string{} // item → its re-score jobs
		errs    []error
	)
	for i, node := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := node.PlanRescores(ctx, servingV2, t0)
			mu.Lock()
			planned += p
			if err != nil {
				errs = append(errs, err)
			}
			mu.Unlock()
			for {
				j, ok, err := node.ClaimRescore(ctx, fmt.Sprintf("node-%d", i), servingV2, time.Hour, t0)
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				if !ok {
					return
				}
				mu.Lock()
				jobs[*j.WatchItemID] = append(jobs[*j.WatchItemID], j.ID)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	if planned != n {
		t.Errorf("planned %d in all, want %d (once per item)", planned, n)
	}
	// A planner that ran after a claimer finished sees nothing new; a
	// late claim finds nothing.
	if _, ok, err := s.ClaimRescore(ctx, "late", servingV2, time.Hour, t0); err != nil || ok {
		t.Errorf("late claim ok=%v %v", ok, err)
	}
	if len(jobs) != n {
		t.Errorf("%d items re-scored, want %d", len(jobs), n)
	}
	for item, js := range jobs {
		if len(js) != 1 {
			t.Errorf("item %s has %d re-score jobs %v, want 1", item, len(js), js)
		}
	}
}
