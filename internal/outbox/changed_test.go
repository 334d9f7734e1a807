package outbox

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/view"
	"github.com/locrisk/locrisk/internal/webhook"
)

// A re-score that changed a watch item materially marks it changed and,
// for subscribers, writes report.changed with the material changes at the
// list's minScoreChange; one whose scores are equal reads no report; one
// whose scores moved below the threshold marks and writes nothing.
func TestHookReportChanged(t *testing.T) {
	ctx := context.Background()
	read := func(name string) []byte {
		b, err := os.ReadFile("../reportdiff/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	prevBody, curBody := read("previous.json"), read("current.json")
	score := func(v int) *int { return &v }
	// The scores of the two test reports (their summaries).
	prevScores := &locrisk.ReportScores{Overall: 58, RiskLevel: "moderate", Modules: []locrisk.ModuleScore{
		{Module: "hydrology", Score: score(78)}, {Module: "severeWeather", Score: score(55)}, {Module: "wildfire", Score: score(38)},
		{Module: "earthquake", Score: score(10)}, {Module: "landslide"}, {Module: "environmentalExposure", Score: score(30)}}}
	curScores := &locrisk.ReportScores{Overall: 61, RiskLevel: "moderate", Modules: []locrisk.ModuleScore{
		{Module: "hydrology", Score: score(83)}, {Module: "severeWeather", Score: score(57)}, {Module: "wildfire", Score: score(41)},
		{Module: "earthquake", Score: score(10)}, {Module: "landslide", Score: score(12)}, {Module: "environmentalExposure", Score: score(24)}}}
	done := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	item := "wli_1"
	job := locrisk.Job{ID: "job_2", AccountID: "acct_1", Status: locrisk.StatusCompleted, WatchItemID: &item,
		CreatedUTC: done, UpdatedUTC: done, CompletedUTC: &done}
	change := func(min int, cur []byte) *locrisk.WatchChange {
		return &locrisk.WatchChange{
			Item: locrisk.WatchItemState{WatchItem: locrisk.WatchItem{ID: item, WatchlistID: "wl_1", AccountID: "acct_1",
				ExternalID: "policy-7", Latitude: 29.9511, Longitude: -90.0715}, MinScoreChange: min},
			Previous: locrisk.WatchReport{ReportID: "rep-prev", Scores: prevScores},
			Report:   locrisk.Report{ID: "rep-cur", Body: cur, Scores: curScores},
		}
	}
	reports := map[string]locrisk.Report{"rep-prev": {ID: "rep-prev", Body: prevBody}}
	subs := map[string][]string{webhook.EventReportChanged: {"we_1"}}

	for _, tc := range []struct {
		name        string
		change      *locrisk.WatchChange
		subs        map[string][]string
		wantRead    bool
		wantMarked  bool
		wantModules []string // the material changes of the event; nil: no event
	}{
		{"equal scores", func() *locrisk.WatchChange { c := change(5, curBody); c.Report.Scores = prevScores; return c }(), subs, false, false, nil},
		{"material at 5", change(5, curBody), subs, true, true,
			[]string{"hydrology", "wildfire", "landslide", "environmentalExposure"}},
		{"material at 10: levels only", change(10, curBody), subs, true, true,
			[]string{"hydrology", "wildfire", "landslide"}},
		{"material, no subscriber", change(5, curBody), nil, true, true, nil},
		{"scores moved, bodies the same", change(5, prevBody), subs, true, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := &fakeTx{subscribers: tc.subs, change: tc.change, reports: reports}
			if err := Hook(nil)(ctx, tx, job); err != nil {
				t.Fatal(err)
			}
			if got := len(tx.read) > 0; got != tc.wantRead {
				t.Errorf("read %v, want a read %v", tx.read, tc.wantRead)
			}
			if want := []string{item + " 2026-12-01T09:00:00Z"}; tc.wantMarked != (len(tx.marked) > 0) || (tc.wantMarked && !slices.Equal(tx.marked, want)) {
				t.Errorf("marked %v, want marked %v", tx.marked, tc.wantMarked)
			}
			var changed []locrisk.WebhookEvent
			for _, ev := range tx.events {
				if ev.Type == webhook.EventReportChanged {
					changed = append(changed, ev)
				}
			}
			if tc.wantModules == nil {
				if len(changed) != 0 {
					t.Errorf("events %+v, want none", changed)
				}
				return
			}
			if len(changed) != 1 || changed[0].JobID != job.ID || !changed[0].CreatedUTC.Equal(done) {
				t.Fatalf("events %+v, want one of job %s", changed, job.ID)
			}
			var body struct {
				Type string             `json:"type"`
				Data view.ReportChanged `json:"data"`
			}
			if err := json.Unmarshal(changed[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			d := body.Data
			if body.Type != webhook.EventReportChanged || d.WatchlistID != "wl_1" || d.ItemID != item || *d.ExternalID != "policy-7" ||
				d.Latitude != 29.9511 || d.PreviousReportID != "rep-prev" || d.CurrentReportID != "rep-cur" ||
				d.Previous.Data != "data-aaaaaaaaaaaa" || d.Current.Data == d.Previous.Data || d.Overall.ScoreBefore != 58 || d.Overall.ScoreAfter != 61 {
				t.Errorf("event data %+v", d)
			}
			var modules, material []string
			for _, m := range d.Changes {
				modules = append(modules, m.Module)
				if m.Material {
					material = append(material, m.Module)
				}
			}
			if !slices.Equal(material, tc.wantModules) {
				t.Errorf("material changes %v, want %v", material, tc.wantModules)
			}
			// Every change is listed, as operation 21 lists them.
			if want := []string{"hydrology", "severeWeather", "wildfire", "landslide", "environmentalExposure"}; !slices.Equal(modules, want) {
				t.Errorf("changes %v, want %v", modules, want)
			}
			if d.ChangesURL != view.ReportChangesPath("rep-cur", "rep-prev", d.MinScoreChange) || !d.Overall.Material {
				t.Errorf("changesUrl %s, overall %+v", d.ChangesURL, d.Overall)
			}
		})
	}
}
