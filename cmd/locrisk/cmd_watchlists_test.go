package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/sqlite"
)

// The watchlist commands show an account's lists and items, plan the
// re-scores of the pack --data-dir names, once, and show the lane's
// backlog.
func TestWatchlistCommands(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "cli.db")
	env := map[string]string{"LOCRISK_DB": db}
	acct := strings.TrimSpace(cmd(t, env, "accounts", "create", "--name", "Acme").stdout)
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	w, items, err := st.CreateWatchlist(ctx, locrisk.NewWatchlist{AccountID: acct, Name: "Coast",
		Items: []locrisk.NewWatchItem{{ExternalID: "p-1", Latitude: 41.8781, Longitude: -87.6298}, {ExternalID: "p-2", Latitude: 41.9, Longitude: -87.7}}}, now)
	if err != nil {
		t.Fatal(err)
	}
	// One item scored at other data than the fixture pack's.
	j, ok, err := st.ClaimJob(ctx, "w", time.Minute, now)
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	score := 40
	rep := locrisk.Report{DataVersion: "data-000000000000", MethodologyVersion: risk.MethodologyVersion, Body: []byte(`{}`),
		Scores: &locrisk.ReportScores{Overall: score, RiskLevel: "moderate", Modules: []locrisk.ModuleScore{{Module: "hydrology", Score: &score}}}}
	if _, err := st.CompleteJob(ctx, j.ID, "w", rep, now); err != nil {
		t.Fatal(err)
	}
	st.Close()

	r := cmd(t, env, "watchlists", "list", "--account", acct)
	if r.code != 0 || !strings.Contains(r.stdout, w.ID) || !strings.Contains(r.stdout, `"Coast"`) {
		t.Errorf("watchlists list: %+v", r)
	}
	r = cmd(t, env, "watchlists", "list", "--account", acct, "--json")
	var lists []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &lists); err != nil || len(lists) != 1 || lists[0]["itemCount"] != 2.0 {
		t.Errorf("watchlists list --json: %s (%v)", r.stdout, err)
	}
	r = cmd(t, env, "watchlists", "items", "--account", acct, "--watchlist", w.ID, "--json")
	var listed []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || len(listed) != 2 {
		t.Fatalf("watchlists items --json: %s (%v)", r.stdout, err)
	}
	r = cmd(t, env, "watchlists", "items", "--account", acct)
	if r.code != 0 || !strings.Contains(r.stdout, items[0].ID) || !strings.Contains(r.stdout, "data-000000000000") {
		t.Errorf("watchlists items: %+v", r)
	}
	if r := cmd(t, env, "watchlists", "items", "--account", acct, "--changed"); r.code != 0 || strings.Contains(r.stdout, items[0].ID) {
		t.Errorf("watchlists items --changed: %+v", r)
	}
	// The input of locrisk data diff: a header, a row per item (made in
	// the same millisecond, their order is their ids').
	r = cmd(t, env, "watchlists", "items", "--account", acct, "--csv")
	lines := strings.Split(r.stdout, "\r\n")
	if r.code != 0 || len(lines) != 4 || lines[0] != "externalId,latitude,longitude" || lines[3] != "" ||
		!slices.Contains(lines, "p-1,41.8781,-87.6298") || !slices.Contains(lines, "p-2,41.9,-87.7") {
		t.Errorf("watchlists items --csv: %+v", r)
	}

	// The fixture pack's version differs from the scored item's: planned
	// once; the queued item's job scores it at the serving versions.
	fixture, err := data.DirFS(fixtureData)
	if err != nil {
		t.Fatal(err)
	}
	m, err := data.ReadManifest(fixture)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"planned: 1", "planned: 0"} {
		r = cmd(t, env, "watchlists", "plan", "--data-dir", fixtureData)
		if r.code != 0 || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, m.Version()) {
			t.Errorf("plan #%d: %+v, want %q", i+1, r, want)
		}
	}
	r = cmd(t, env, "watchlists", "rescores", "--json")
	var b map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &b); err != nil || b["pendingDataChange"] != 1.0 || b["started"] != 0.0 || b["oldestPendingUtc"] == nil {
		t.Errorf("rescores --json: %s (%v)", r.stdout, err)
	}

	for _, args := range [][]string{
		{"watchlists", "list"},
		{"watchlists", "items"},
		{"watchlists", "list", "--account", acct, "extra"},
		{"watchlists", "items", "--account", acct, "--json", "--csv"},
	} {
		if r := cmd(t, env, args...); r.code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, r.code)
		}
	}
	for _, args := range [][]string{
		{"watchlists", "list", "--account", "acct_unknownunknownunknown"},
		{"watchlists", "items", "--account", acct, "--watchlist", "wl_unknownunknownunknown"},
	} {
		if r := cmd(t, env, args...); r.code != exitError {
			t.Errorf("%v: exit %d, want 1", args, r.code)
		}
	}
}
