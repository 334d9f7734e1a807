package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/jobs"
	"github.com/locrisk/locrisk/internal/reportdiff"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/view"
)

// completeBy runs the scheduler's side for a queued job with the engine
// eng, as the worker stores its report (the data version the engine's),
// and returns the report id.
func (e *env) completeBy(jobID string, eng *risk.Engine) string {
	e.t.Helper()
	j := e.claim(jobID)
	a, err := eng.Assess(context.Background(), j.Latitude, j.Longitude)
	if err != nil {
		e.t.Fatal(err)
	}
	rep, err := jobs.ReportOf(a)
	if err != nil {
		e.t.Fatal(err)
	}
	done, err := e.st.CompleteJob(context.Background(), jobID, "test-worker", rep, e.clock.Now())
	if err != nil {
		e.t.Fatalf("complete job: %v", err)
	}
	return *done.ReportID
}

func changesPath(id, query string) string {
	return reportsPath + id + "/changes" + query
}

// Two real reports of one coordinate, made by the engine on the fixture
// pack and on a copy with a new Superfund site beside the point: the
// comparison names the environmental exposure module, with both data
// versions, and is exactly reportdiff's comparison of the two reports as
// operation 5 serves them in full; in the other direction the scores swap,
// and a report compared with itself has no changes.
func TestReportChanges(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	ctx := context.Background()
	before, err := risk.Load(ctx, datatest.Fixture(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := datatest.EditedFixture(t, datatest.NPLFixture, func(b []byte) []byte { return append(b, datatest.NewNPLSite...) })
	after, err := risk.Load(ctx, os.DirFS(dir), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	const lat, lon = 37.77, -122.42
	prev := e.completeBy(e.createJob(key, lat, lon).JobID, before)
	cur := e.completeBy(e.createJob(key, lat, lon).JobID, after)

	rec := e.do("GET", changesPath(cur, "?since="+prev), key, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d %s", rec.Code, rec.Body)
	}
	got := decode[view.ReportChanges](t, rec)
	if got.PreviousReportID != prev || got.CurrentReportID != cur || got.APIVersion != "v1" || got.MinScoreChange != 5 {
		t.Errorf("ids %s -> %s, apiVersion %q, minScoreChange %d", got.PreviousReportID, got.CurrentReportID, got.APIVersion, got.MinScoreChange)
	}
	if got.Previous.Data != before.DataVersion() || got.Current.Data != after.DataVersion() || before.DataVersion() == after.DataVersion() {
		t.Errorf("data versions %q -> %q, want %q -> %q", got.Previous.Data, got.Current.Data, before.DataVersion(), after.DataVersion())
	}
	var modules []string
	for _, c := range got.Changes {
		modules = append(modules, c.Module)
		if !c.Material {
			t.Errorf("%s: not material: %+v", c.Module, c)
		}
	}
	if want := []string{"environmentalExposure"}; !slices.Equal(modules, want) {
		t.Fatalf("changed modules %v, want %v", modules, want)
	}
	if !got.Material || got.Links.Previous != view.ReportPath(prev) || got.Links.Current != view.ReportPath(cur) || got.Links.Self != changesPath(cur, "?since="+prev) {
		t.Errorf("material %v, links %+v", got.Material, got.Links)
	}

	// The comparison is reportdiff's of the two documents operation 5
	// serves.
	full := func(id string) []byte {
		rec := e.do("GET", reportsPath+id+"?detail=full", key, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("report %s: %d", id, rec.Code)
		}
		return rec.Body.Bytes()
	}
	want, err := reportdiff.Compare(full(prev), full(cur))
	if err != nil {
		t.Fatal(err)
	}
	var gotDiff []reportdiff.ModuleChange
	for _, c := range got.Changes {
		gotDiff = append(gotDiff, c.ModuleChange)
	}
	if !reflect.DeepEqual(gotDiff, want.Changes) || got.Overall.Overall != want.Overall || !reflect.DeepEqual(got.Current, want.Current) {
		t.Errorf("changes %+v overall %+v, want %+v %+v", gotDiff, got.Overall, want.Changes, want.Overall)
	}

	// The other way round: the scores swap.
	back := decode[view.ReportChanges](t, e.do("GET", changesPath(prev, "?since="+strings.ToUpper(cur)), key, ""))
	if len(back.Changes) != 1 || *back.Changes[0].ScoreBefore != *got.Changes[0].ScoreAfter || *back.Changes[0].ScoreAfter != *got.Changes[0].ScoreBefore {
		t.Errorf("reversed: %+v", back.Changes)
	}
	if back.PreviousReportID != cur {
		t.Errorf("an uppercase since is the report %s, got %s", cur, back.PreviousReportID)
	}

	// Itself: nothing changed, nothing material.
	same := decode[view.ReportChanges](t, e.do("GET", changesPath(cur, "?since="+cur+"&minScoreChange=1"), key, ""))
	if len(same.Changes) != 0 || same.Material || same.Overall.Material || same.MinScoreChange != 1 {
		t.Errorf("a report against itself: %+v", same)
	}
	if same.Changes == nil {
		t.Error("changes is null, want []")
	}

	// HEAD answers as GET does (net/http leaves the body out).
	head := e.do("HEAD", changesPath(cur, "?since="+prev), key, "")
	if head.Code != http.StatusOK || head.Header().Get("Content-Length") != rec.Header().Get("Content-Length") {
		t.Errorf("HEAD: status %d, Content-Length %q, GET's %q", head.Code, head.Header().Get("Content-Length"), rec.Header().Get("Content-Length"))
	}
}

// Which changes are material follows minScoreChange: a level change
// always is, a score move from the threshold up.
func TestReportChangesMaterial(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	lvl := func(s string) *string { return &s }
	const lat, lon = 40.7, -74
	assessWith := func(hydrology, wildfire int) func(lat, lon float64) *risk.Assessment {
		return func(lat, lon float64) *risk.Assessment {
			a := sampleAssessment(lat, lon)
			for _, m := range []struct {
				key   string
				score int
			}{{"hydrology", hydrology}, {"wildfire", wildfire}} {
				a.Summary.ModuleScores.Set(m.key, intp(m.score))
				a.Report.Modules.Set(m.key, risk.ModuleReport{Score: intp(m.score), RiskLevel: lvl(risk.RiskLevel(m.score)), Basis: "hazard_data"})
			}
			return &a
		}
	}
	// hydrology moves 3 points across a level boundary (38 low -> 41
	// moderate); wildfire 7 points within one (60 -> 67, high).
	prev := e.completeWith(e.createJob(key, lat, lon).JobID, assessWith(38, 60))
	cur := e.completeWith(e.createJob(key, lat, lon).JobID, assessWith(41, 67))
	tests := []struct {
		query    string
		min      int
		material []string
	}{
		{"", 5, []string{"hydrology", "wildfire"}},
		{"&minScoreChange=7", 7, []string{"hydrology", "wildfire"}},
		{"&minScoreChange=8", 8, []string{"hydrology"}},
		{"&minScoreChange=100", 100, []string{"hydrology"}},
		{"&minScoreChange=1", 1, []string{"hydrology", "wildfire"}},
	}
	for _, tt := range tests {
		rec := e.do("GET", changesPath(cur, "?since="+prev+tt.query), key, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: status %d %s", tt.query, rec.Code, rec.Body)
		}
		v := decode[view.ReportChanges](t, rec)
		var all, material []string
		for _, c := range v.Changes {
			all = append(all, c.Module)
			if c.Material {
				material = append(material, c.Module)
			}
		}
		if !slices.Equal(all, []string{"hydrology", "wildfire"}) || !slices.Equal(material, tt.material) || v.MinScoreChange != tt.min || !v.Material {
			t.Errorf("%q: changes %v, material %v (min %d, %v); want material %v", tt.query, all, material, v.MinScoreChange, v.Material, tt.material)
		}
	}
}

// The refusals, in the check order of docs/api.md: the path's id, since,
// minScoreChange, then either report unknown or another account's (404
// exactly as operation 5), then two coordinates (422); a key without
// reports:read is 403.
func TestReportChangesErrors(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 100000)
	key := e.allScopesKey(acct)
	other := e.allScopesKey(e.account(1000, 100000))
	pdfOnly, _ := e.key(acct, locrisk.NewKey{Scopes: []string{locrisk.ScopeReportsPDF}})

	here := e.complete(e.createJob(key, 40.7, -74).JobID)
	again := e.complete(e.createJob(key, 40.7, -74).JobID)
	elsewhere := e.complete(e.createJob(key, 40.71, -74).JobID)
	foreign := e.complete(e.createJob(other, 40.7, -74).JobID)
	unknown := ids.NewReportID()

	tests := []struct {
		name    string
		key     string
		path    string
		status  int
		code    string
		message string
	}{
		{"no since", key, changesPath(here, ""), 400, codeInvalidSince, "since is required"},
		{"empty since", key, changesPath(here, "?since="), 400, codeInvalidSince, "UUID"},
		{"since not a UUID", key, changesPath(here, "?since=job_1"), 400, codeInvalidSince, "UUID"},
		{"path id checked first", key, changesPath("nope", "?since=x"), 400, codeInvalidReportID, ""},
		{"malformed query", key, changesPath(here, "?since=%zz"), 400, codeInvalidRequest, ""},
		{"minScoreChange 0", key, changesPath(here, "?since="+again+"&minScoreChange=0"), 400, codeInvalidMinScoreChange, "1 to 100"},
		{"minScoreChange 101", key, changesPath(here, "?since="+again+"&minScoreChange=101"), 400, codeInvalidMinScoreChange, ""},
		{"minScoreChange empty", key, changesPath(here, "?since="+again+"&minScoreChange="), 400, codeInvalidMinScoreChange, ""},
		{"minScoreChange signed", key, changesPath(here, "?since="+again+"&minScoreChange=+5"), 400, codeInvalidMinScoreChange, ""},
		{"since before minScoreChange", key, changesPath(here, "?since=x&minScoreChange=0"), 400, codeInvalidSince, ""},
		{"400 before 404", key, changesPath(unknown, "?since=x"), 400, codeInvalidSince, ""},
		{"unknown report", key, changesPath(unknown, "?since="+here), 404, codeReportNotFound, "no report with this id"},
		{"unknown since", key, changesPath(here, "?since="+unknown), 404, codeReportNotFound, "since:"},
		{"another account's report", key, changesPath(foreign, "?since="+here), 404, codeReportNotFound, "no report with this id"},
		{"another account's since", key, changesPath(here, "?since="+foreign), 404, codeReportNotFound, "since:"},
		{"the owner's view of the same pair", other, changesPath(foreign, "?since="+here), 404, codeReportNotFound, "since:"},
		{"404 before 422", key, changesPath(elsewhere, "?since="+unknown), 404, codeReportNotFound, ""},
		{"another coordinate", key, changesPath(here, "?since="+elsewhere), 422, codeCoordinateMismatch, "another coordinate"},
		{"no reports:read", pdfOnly, changesPath(here, "?since="+again), 403, codeInsufficientScope, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do("GET", tt.path, tt.key, "")
			wantError(t, rec, tt.status, tt.code)
			if !strings.Contains(rec.Body.String(), tt.message) {
				t.Errorf("message %s lacks %q", rec.Body, tt.message)
			}
		})
	}
	// The same pair of the account's own reports compares.
	if rec := e.do("GET", changesPath(here, "?since="+again), key, ""); rec.Code != http.StatusOK {
		t.Errorf("own reports: status %d %s", rec.Code, rec.Body)
	}
	var body map[string]json.RawMessage
	_ = json.Unmarshal(e.do("GET", changesPath(here, "?since="+again), key, "").Body.Bytes(), &body)
	if string(body["changes"]) != "[]" {
		t.Errorf("two reports of one assessment: changes %s, want []", body["changes"])
	}
}
