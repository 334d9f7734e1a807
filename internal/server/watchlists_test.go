package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/jobs"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/view"
)

const watchlistsPath = "/api/v1/location-risk/watchlists"

// createWatchlist posts a watchlist and insists on 201.
func (e *env) createWatchlist(key, body string) view.CreatedWatchlist {
	e.t.Helper()
	rec := e.do("POST", watchlistsPath, key, body)
	if rec.Code != http.StatusCreated {
		e.t.Fatalf("create watchlist: %d %s", rec.Code, rec.Body)
	}
	return decode[view.CreatedWatchlist](e.t, rec)
}

// watchItems lists a list's items through the API (one page of 100).
func (e *env) watchItems(key, id, query string) []view.WatchItem {
	e.t.Helper()
	rec := e.do("GET", view.WatchItemsPath(id)+"?limit=100"+query, key, "")
	if rec.Code != http.StatusOK {
		e.t.Fatalf("list items: %d %s", rec.Code, rec.Body)
	}
	return decode[view.WatchItemList](e.t, rec).Items
}

func TestWatchlistLifecycle(t *testing.T) {
	e := newEnv(t)
	acct := e.account(100, 100000)
	key := e.allScopesKey(acct)

	rec := e.do("POST", watchlistsPath, key, `{"name": "Coastal book", "minScoreChange": 8, "items": [
		{"externalId": "p-1", "latitude": 29.95, "longitude": -90.07},
		{"externalId": "p-2", "latitude": 95, "longitude": -90},
		{"externalId": "p-3", "latitude": -33.9, "longitude": 18.4},
		{"externalId": 7, "latitude": 30, "longitude": -90},
		{"externalId": "p-5", "latitude": 30.1, "longitude": -91}], "extra": true}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	created := decode[view.CreatedWatchlist](t, rec)
	wl := created.Watchlist
	if rec.Header().Get("Location") != view.WatchlistPath(wl.WatchlistID) || !ids.HasPrefix(wl.WatchlistID, ids.Watchlist) {
		t.Errorf("Location %q for %s", rec.Header().Get("Location"), wl.WatchlistID)
	}
	if *wl.Name != "Coastal book" || wl.MinScoreChange != 8 || wl.ItemCount != 2 || wl.ChangedCount != 0 || wl.RescoreRequestedUTC != nil ||
		wl.ItemsURL != view.WatchItemsPath(wl.WatchlistID) || wl.RescoreURL != view.WatchRescorePath(wl.WatchlistID) {
		t.Errorf("watchlist %+v", wl)
	}
	var rejected []string
	for _, r := range created.Rejected {
		rejected = append(rejected, fmt.Sprintf("%d:%s", r.RowNumber, r.Error.Code))
	}
	if want := []string{"2:invalid_latitude", "3:unsupported_location", "4:invalid_external_id"}; !slices.Equal(rejected, want) {
		t.Errorf("rejected %v, want %v", rejected, want)
	}
	if len(created.Items) != 2 || *created.Items[0].ExternalID != "p-1" || *created.Items[0].Status != locrisk.StatusQueued ||
		created.Items[0].ReportID != nil || created.Items[0].ReportJobID == nil {
		t.Fatalf("items %+v", created.Items)
	}
	if got := e.quotaCharged(acct.ID); got != 2 {
		t.Errorf("quota charged %d, want 2 (the items added)", got)
	}
	if e.notified.Load() == 0 {
		t.Error("the scheduler was not woken for the items' jobs")
	}

	// The first job completes: its item shows the report.
	reportID := e.complete(*created.Items[0].ReportJobID)
	items := e.watchItems(key, wl.WatchlistID, "")
	if len(items) != 2 {
		t.Fatalf("%d items", len(items))
	}
	var scored view.WatchItem
	for _, it := range items {
		if it.ItemID == created.Items[0].ItemID {
			scored = it
		}
	}
	if scored.ReportID == nil || *scored.ReportID != reportID || *scored.Status != locrisk.StatusCompleted || *scored.Score != 64 ||
		*scored.RiskLevel != "high" || *scored.ModuleScores["earthquake"] != 95 || scored.ModuleScores["environmentalExposure"] != nil ||
		scored.Versions == nil || scored.Versions.DataVersion != "dv-test" || scored.ScoredUTC == nil || scored.PreviousReportID != nil || scored.Changed {
		t.Errorf("scored item %+v", scored)
	}
	rec = e.do("GET", jobsPath+"/"+*scored.ReportJobID, key, "")
	if j := decode[view.Job](t, rec); j.WatchItemID == nil || *j.WatchItemID != scored.ItemID {
		t.Errorf("the item's job %+v does not name its item", j)
	}

	// Read, list, add, remove, delete.
	rec = e.do("GET", view.WatchlistPath(wl.WatchlistID), key, "")
	if rec.Code != 200 || decode[view.Watchlist](t, rec).ItemCount != 2 {
		t.Errorf("get: %d %s", rec.Code, rec.Body)
	}
	e.clock.Advance(time.Second)
	second := e.createWatchlist(key, `{}`)
	if second.Watchlist.ItemCount != 0 || second.Watchlist.Name != nil || second.Watchlist.MinScoreChange != locrisk.DefaultMinScoreChange ||
		len(second.Items) != 0 || len(second.Rejected) != 0 {
		t.Errorf("empty list %+v", second)
	}
	rec = e.do("GET", watchlistsPath+"?limit=1", key, "")
	page := decode[view.WatchlistList](t, rec)
	if rec.Code != 200 || len(page.Watchlists) != 1 || page.Watchlists[0].WatchlistID != second.Watchlist.WatchlistID || page.NextCursor == nil {
		t.Fatalf("list page 1: %d %s", rec.Code, rec.Body)
	}
	rec = e.do("GET", watchlistsPath+"?limit=1&cursor="+*page.NextCursor, key, "")
	if page := decode[view.WatchlistList](t, rec); len(page.Watchlists) != 1 || page.Watchlists[0].WatchlistID != wl.WatchlistID || page.NextCursor != nil {
		t.Errorf("list page 2: %s", rec.Body)
	}
	rec = e.do("POST", view.WatchItemsPath(wl.WatchlistID), key, `{"items": [{"latitude": 31, "longitude": -92}, {"latitude": 0, "longitude": 10}]}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("add: %d %s", rec.Code, rec.Body)
	}
	added := decode[view.AddedWatchItems](t, rec)
	if len(added.Items) != 1 || len(added.Rejected) != 1 || added.Rejected[0].RowNumber != 2 || added.Rejected[0].Error.Code != codeUnsupportedLocation {
		t.Errorf("added %+v", added)
	}
	rec = e.do("DELETE", view.WatchItemsPath(wl.WatchlistID), key,
		fmt.Sprintf(`{"itemIds": [%q, "wli_unknownunknownunknown", "nonsense", %q]}`, added.Items[0].ItemID, added.Items[0].ItemID))
	if rec.Code != http.StatusOK {
		t.Fatalf("remove: %d %s", rec.Code, rec.Body)
	}
	removed := decode[view.RemovedWatchItems](t, rec)
	if !slices.Equal(removed.Removed, []string{added.Items[0].ItemID}) ||
		!slices.Equal(removed.NotFound, []string{"wli_unknownunknownunknown", "nonsense"}) {
		t.Errorf("removed %+v", removed)
	}
	if n := len(e.watchItems(key, wl.WatchlistID, "")); n != 2 {
		t.Errorf("%d items after add and remove, want 2", n)
	}
	if rec := e.do("DELETE", view.WatchlistPath(wl.WatchlistID), key, ""); rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	wantError(t, e.do("GET", view.WatchlistPath(wl.WatchlistID), key, ""), 404, codeWatchlistNotFound)
	wantError(t, e.do("DELETE", view.WatchlistPath(wl.WatchlistID), key, ""), 404, codeWatchlistNotFound)
	// The report stays, as an ordinary one.
	if rec := e.do("GET", "/api/v1/location-risk/reports/"+reportID, key, ""); rec.Code != 200 {
		t.Errorf("report of a deleted list's item: %d", rec.Code)
	}
}

func TestWatchlistErrors(t *testing.T) {
	e := newEnv(t)
	acct := e.account(3, 100000)
	key := e.allScopesKey(acct)
	other := e.allScopesKey(e.account(100, 100000))
	wl := e.createWatchlist(key, `{"items": [{"latitude": 30, "longitude": -90}]}`).Watchlist
	foreign := e.createWatchlist(other, `{}`).Watchlist
	hundredAndOne := `{"items": [` + strings.Repeat(`{"latitude": 30, "longitude": -90},`, 100) + `{"latitude": 30, "longitude": -90}]}`
	idsBody := `{"itemIds": [` + strings.Repeat(`"wli_x",`, 100) + `"wli_x"]}`
	items := view.WatchItemsPath(wl.WatchlistID)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"create: not an object", "POST", watchlistsPath, `[1]`, 400, codeInvalidRequest},
		{"create: long name", "POST", watchlistsPath, `{"name": "` + strings.Repeat("n", 201) + `"}`, 400, codeInvalidName},
		{"create: minScoreChange 0", "POST", watchlistsPath, `{"minScoreChange": 0}`, 400, codeInvalidMinScoreChange},
		{"create: minScoreChange 101", "POST", watchlistsPath, `{"minScoreChange": 101}`, 400, codeInvalidMinScoreChange},
		{"create: minScoreChange a string", "POST", watchlistsPath, `{"minScoreChange": "5"}`, 400, codeInvalidMinScoreChange},
		{"create: minScoreChange a fraction", "POST", watchlistsPath, `{"minScoreChange": 2.5}`, 400, codeInvalidMinScoreChange},
		{"create: items an object", "POST", watchlistsPath, `{"items": {}}`, 400, codeInvalidItems},
		{"create: too many items", "POST", watchlistsPath, hundredAndOne, 400, codeTooManyItems},
		{"create: over the quota", "POST", watchlistsPath, `{"items": [{"latitude": 30, "longitude": -90}, {"latitude": 30, "longitude": -90}, {"latitude": 30, "longitude": -90}]}`, 429, codeQuotaExceeded},
		{"get: not one of our ids", "GET", watchlistsPath + "/bat_xxxxxxxxxxxxxxxxxxxxxxxx", "", 404, codeWatchlistNotFound},
		{"get: another account's", "GET", view.WatchlistPath(foreign.WatchlistID), "", 404, codeWatchlistNotFound},
		{"list: bad limit", "GET", watchlistsPath + "?limit=0", "", 400, codeInvalidLimit},
		{"list: bad cursor", "GET", watchlistsPath + "?cursor=abc", "", 400, codeInvalidCursor},
		{"delete: another account's", "DELETE", view.WatchlistPath(foreign.WatchlistID), "", 404, codeWatchlistNotFound},
		{"add: no items", "POST", items, `{"items": []}`, 400, codeInvalidItems},
		{"add: items missing", "POST", items, `{"item": [{"latitude": 30, "longitude": -90}]}`, 400, codeInvalidItems},
		{"add: too many", "POST", items, hundredAndOne, 400, codeTooManyItems},
		{"add: another account's list", "POST", view.WatchItemsPath(foreign.WatchlistID), `{"items": [{"latitude": 30, "longitude": -90}]}`, 404, codeWatchlistNotFound},
		{"add: over the quota", "POST", items, `{"items": [{"latitude": 30, "longitude": -90}, {"latitude": 30, "longitude": -90}, {"latitude": 30, "longitude": -90}]}`, 429, codeQuotaExceeded},
		{"add: form body", "POST", items, "", 415, codeUnsupportedMediaType},
		{"remove: no itemIds", "DELETE", items, `{"items": ["wli_x"]}`, 400, codeInvalidItemIDs},
		{"remove: empty", "DELETE", items, `{"itemIds": []}`, 400, codeInvalidItemIDs},
		{"remove: not strings", "DELETE", items, `{"itemIds": [1]}`, 400, codeInvalidItemIDs},
		{"remove: too many", "DELETE", items, idsBody, 400, codeTooManyItems},
		{"remove: another account's list", "DELETE", view.WatchItemsPath(foreign.WatchlistID), `{"itemIds": ["wli_x"]}`, 404, codeWatchlistNotFound},
		{"items: changed=yes", "GET", items + "?changed=yes", "", 400, codeInvalidChanged},
		{"items: bad limit", "GET", items + "?limit=101", "", 400, codeInvalidLimit},
		{"items: a list's cursor", "GET", items + "?cursor=" + listCursor(t, e, key), "", 400, codeInvalidCursor},
		{"items: another account's list", "GET", view.WatchItemsPath(foreign.WatchlistID), "", 404, codeWatchlistNotFound},
		{"rescore: another account's list", "POST", view.WatchRescorePath(foreign.WatchlistID), "", 404, codeWatchlistNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []reqOpt
			body := tc.body
			if tc.status == 415 {
				body = "items=1"
				opts = []reqOpt{func(r *http.Request) { r.Header.Set("Content-Type", "application/x-www-form-urlencoded") }}
			}
			wantError(t, e.do(tc.method, tc.path, key, body, opts...), tc.status, tc.code)
		})
	}
	if n := e.quotaCharged(acct.ID); n != 1 {
		t.Errorf("quota charged %d after the refusals, want 1", n)
	}
}

// listCursor is a cursor of the watchlist list, which the item list
// refuses.
func listCursor(t *testing.T, e *env, key string) string {
	t.Helper()
	e.clock.Advance(time.Second)
	e.createWatchlist(key, `{}`)
	rec := e.do("GET", watchlistsPath+"?limit=1", key, "")
	page := decode[view.WatchlistList](t, rec)
	if page.NextCursor == nil {
		t.Fatal("no cursor")
	}
	return *page.NextCursor
}

// A list that holds MaxWatchlistItems takes no more (400 watchlist_full,
// after the list is found), and nothing is charged.
func TestWatchlistFull(t *testing.T) {
	e := newEnv(t)
	acct := e.account(locrisk.MaxWatchlistItems+10, 100000)
	key := e.allScopesKey(acct)
	wl := e.createWatchlist(key, `{}`).Watchlist
	batch := make([]locrisk.NewWatchItem, locrisk.MaxWatchItemsPerRequest)
	for i := range batch {
		batch[i] = locrisk.NewWatchItem{Latitude: 30, Longitude: -90}
	}
	for range locrisk.MaxWatchlistItems / locrisk.MaxWatchItemsPerRequest {
		if _, err := e.st.AddWatchItems(context.Background(), acct.ID, wl.WatchlistID, batch, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	wantError(t, e.do("POST", view.WatchItemsPath(wl.WatchlistID), key, `{"items": [{"latitude": 30, "longitude": -90}]}`), 400, codeWatchlistFull)
	if n := e.quotaCharged(acct.ID); n != locrisk.MaxWatchlistItems {
		t.Errorf("quota charged %d, want %d", n, locrisk.MaxWatchlistItems)
	}
}

// The watchlist scopes are their own: a key made without them, whatever
// else it holds, opens no watchlist operation, and watchlists:read opens
// only the reads.
func TestWatchlistScopes(t *testing.T) {
	e := newEnv(t)
	acct := e.account(100, 100000)
	all := e.allScopesKey(acct)
	wl := e.createWatchlist(all, `{}`).Watchlist
	var others []string
	for _, s := range locrisk.AllScopes() {
		if !strings.HasPrefix(s, "watchlists:") {
			others = append(others, s)
		}
	}
	without, _ := e.key(acct, locrisk.NewKey{Scopes: others})
	legacy, _ := e.key(acct, locrisk.NewKey{Scopes: others, ScopeVersion: locrisk.ScopeVersionLegacy})
	read, _ := e.key(acct, locrisk.NewKey{Scopes: []string{locrisk.ScopeWatchlistsRead}})
	write, _ := e.key(acct, locrisk.NewKey{Scopes: []string{locrisk.ScopeWatchlistsWrite}})
	type call struct{ method, path, body string }
	reads := []call{{"GET", watchlistsPath, ""}, {"GET", view.WatchlistPath(wl.WatchlistID), ""}, {"GET", view.WatchItemsPath(wl.WatchlistID), ""}}
	writes := []call{{"POST", watchlistsPath, `{}`}, {"POST", view.WatchItemsPath(wl.WatchlistID), `{"items": [{"latitude": 30, "longitude": -90}]}`},
		{"DELETE", view.WatchItemsPath(wl.WatchlistID), `{"itemIds": ["wli_x"]}`}, {"POST", view.WatchRescorePath(wl.WatchlistID), ""},
		{"DELETE", view.WatchlistPath(wl.WatchlistID), ""}}
	for _, k := range []string{without, legacy} {
		for _, c := range append(slices.Clone(reads), writes...) {
			wantError(t, e.do(c.method, c.path, k, c.body), 403, codeInsufficientScope)
		}
	}
	for _, c := range reads {
		if rec := e.do(c.method, c.path, read, c.body); rec.Code != 200 {
			t.Errorf("%s %s with watchlists:read: %d", c.method, c.path, rec.Code)
		}
		wantError(t, e.do(c.method, c.path, write, c.body), 403, codeInsufficientScope)
	}
	for _, c := range writes {
		wantError(t, e.do(c.method, c.path, read, c.body), 403, codeInsufficientScope)
		if rec := e.do(c.method, c.path, write, c.body); rec.Code >= 400 {
			t.Errorf("%s %s with watchlists:write: %d %s", c.method, c.path, rec.Code, rec.Body)
		}
	}
}

// An on-demand re-score plans every item, at most once in ten minutes per
// list (429 rescore_too_soon with Retry-After), and charges nothing.
func TestWatchlistRescoreRequest(t *testing.T) {
	e := newEnv(t)
	acct := e.account(100, 100000)
	key := e.allScopesKey(acct)
	wl := e.createWatchlist(key, `{"items": [{"latitude": 30, "longitude": -90}, {"latitude": 31, "longitude": -90}]}`).Watchlist
	rec := e.do("POST", view.WatchRescorePath(wl.WatchlistID), key, "")
	if rec.Code != http.StatusAccepted {
		t.Fatalf("rescore: %d %s", rec.Code, rec.Body)
	}
	rs := decode[view.Rescore](t, rec)
	now := e.clock.Now()
	if rs.Items != 2 || rs.RequestedUTC != view.Time(now) || rs.NextAllowedUTC != view.Time(now.Add(locrisk.RescoreRequestInterval)) ||
		rec.Header().Get("Location") != view.WatchItemsPath(wl.WatchlistID) {
		t.Errorf("rescore %+v, Location %q", rs, rec.Header().Get("Location"))
	}
	e.clock.Advance(4 * time.Minute)
	rec = e.do("POST", view.WatchRescorePath(wl.WatchlistID), key, "")
	wantError(t, rec, 429, codeRescoreTooSoon)
	if ra := rec.Header().Get("Retry-After"); ra != "360" {
		t.Errorf("Retry-After %q, want 360", ra)
	}
	rec = e.do("GET", view.WatchlistPath(wl.WatchlistID), key, "")
	if got := decode[view.Watchlist](t, rec).RescoreRequestedUTC; got == nil || *got != view.Time(now) {
		t.Errorf("rescoreRequestedUtc %v", got)
	}
	e.clock.Advance(6 * time.Minute)
	if rec := e.do("POST", view.WatchRescorePath(wl.WatchlistID), key, ""); rec.Code != http.StatusAccepted {
		t.Errorf("rescore after ten minutes: %d %s", rec.Code, rec.Body)
	}
	if n := e.quotaCharged(acct.ID); n != 2 {
		t.Errorf("quota charged %d, want 2 (the first jobs only)", n)
	}
}

// A re-score that changes an item materially sends report.changed to the
// endpoints subscribed to it, signed like every delivery and as the
// document's webhooks say, and the item then shows its previous report,
// changed and lastChangedUtc; the changed filter finds it. A re-score
// that changes nothing material sends nothing.
func TestWatchlistReportChanged(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true, schedule: "1s"})
	acct := e.account(100, 100000)
	key := e.allScopesKey(acct)
	rc := newReceiver(t, nil)
	e.createEndpoint(key, "changes", rc.srv.URL, "report.changed")
	e.sync()
	wl := e.createWatchlist(key, `{"minScoreChange": 10, "items": [{"externalId": "a", "latitude": 30, "longitude": -90},
		{"externalId": "b", "latitude": 31, "longitude": -91}]}`)
	v1 := locrisk.ScoreVersions{Data: "dv-test", Methodology: "m-1"}
	v2 := locrisk.ScoreVersions{Data: "dv-test-2", Methodology: "m-1"}
	// Both items scored at v1.
	for _, it := range wl.Items {
		j := e.claim(*it.ReportJobID)
		e.completeAt(j, v1, 95)
	}
	// A re-score to v2: item a's earthquake score falls from 95 to 50
	// (a level change), item b's is the same.
	ctx := context.Background()
	if n, err := e.st.PlanRescores(ctx, v2, e.clock.Now()); err != nil || n != 2 {
		t.Fatalf("planned %d, %v", n, err)
	}
	for {
		j, ok, err := e.st.ClaimRescore(ctx, "test-worker", v2, time.Hour, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		score := 95
		if *j.WatchItemID == wl.Items[0].ItemID {
			score = 50
		}
		e.completeAt(j, v2, score)
	}
	waitFor(t, "one report.changed", func() bool { return len(rc.requests()) >= 1 })
	time.Sleep(200 * time.Millisecond) // a second delivery, were there one, would have come
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("%d deliveries, want 1", len(got))
	}
	var ev struct {
		Type string             `json:"type"`
		Data view.ReportChanged `json:"data"`
	}
	if err := json.Unmarshal(got[0].body, &ev); err != nil {
		t.Fatal(err)
	}
	d := ev.Data
	if ev.Type != "report.changed" || d.ItemID != wl.Items[0].ItemID || d.WatchlistID != wl.Watchlist.WatchlistID || *d.ExternalID != "a" ||
		d.MinScoreChange != 10 || d.Previous.Data != "dv-test" || d.Current.Data != "dv-test-2" || len(d.Changes) != 1 ||
		d.Changes[0].Module != "earthquake" || *d.Changes[0].ScoreBefore != 95 || *d.Changes[0].ScoreAfter != 50 {
		t.Errorf("event %s", got[0].body)
	}
	yes := e.watchItems(key, wl.Watchlist.WatchlistID, "&changed=true")
	if len(yes) != 1 || yes[0].ItemID != wl.Items[0].ItemID || !yes[0].Changed || yes[0].LastChangedUTC == nil ||
		yes[0].PreviousReportID == nil || *yes[0].PreviousReportID != d.PreviousReportID || *yes[0].ReportID != d.CurrentReportID ||
		yes[0].Versions.DataVersion != "dv-test-2" {
		t.Errorf("changed items %+v", yes)
	}
	no := e.watchItems(key, wl.Watchlist.WatchlistID, "&changed=false")
	if len(no) != 1 || no[0].ItemID != wl.Items[1].ItemID || no[0].Changed || no[0].PreviousReportID == nil {
		t.Errorf("unchanged items %+v", no)
	}
	rec := e.do("GET", view.WatchlistPath(wl.Watchlist.WatchlistID), key, "")
	if decode[view.Watchlist](t, rec).ChangedCount != 1 {
		t.Errorf("changedCount: %s", rec.Body)
	}
}

// completeAt completes the claimed job j with a report made at v whose
// earthquake score is quake.
func (e *env) completeAt(j locrisk.Job, v locrisk.ScoreVersions, quake int) {
	e.t.Helper()
	a := sampleAssessment(j.Latitude, j.Longitude)
	a.DataVersion = v.Data
	a.Provenance = &risk.Provenance{DataVersion: v.Data, MethodologyVersion: v.Methodology, EngineVersion: "e-test"}
	a.Summary.ModuleScores.Set("earthquake", &quake)
	m, _ := a.Report.Modules.Get("earthquake")
	lvl := risk.RiskLevel(quake)
	m.Score, m.RiskLevel = &quake, &lvl
	a.Report.Modules.Set("earthquake", m)
	rep, err := jobs.ReportOf(&a)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.st.CompleteJob(context.Background(), j.ID, "test-worker", rep, e.clock.Now()); err != nil {
		e.t.Fatalf("complete %s: %v", j.ID, err)
	}
}
