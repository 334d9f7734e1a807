package reportdiff_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/jobs"
	"github.com/locrisk/locrisk/internal/reportdiff"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/view"
)

// A new Superfund site beside a point, in an otherwise unchanged fixture
// pack, changes that point's environmental exposure and nothing else; the
// comparison of the two real reports, as the API serves them, says so
// with the new data version and the Superfund indicators, and agrees with
// the engine's own scores.
func TestCompareRealReports(t *testing.T) {
	const lat, lon = 37.77, -122.42 // San Francisco, in the fixture world
	dir := datatest.EditedFixture(t, datatest.NPLFixture, func(b []byte) []byte { return append(b, datatest.NewNPLSite...) })

	before := assess(t, datatest.FixtureDir(t), lat, lon)
	after := assess(t, dir, lat, lon)
	prevDoc := fullDocument(t, before, "0193a0f0-0000-7000-8000-00000000000a")
	curDoc := fullDocument(t, after, "0193a0f0-0000-7000-8000-00000000000b")

	c, err := reportdiff.Compare(prevDoc, curDoc)
	if err != nil {
		t.Fatal(err)
	}
	if c.PreviousReportID != "0193a0f0-0000-7000-8000-00000000000a" || c.CurrentReportID != "0193a0f0-0000-7000-8000-00000000000b" {
		t.Errorf("report ids %q, %q", c.PreviousReportID, c.CurrentReportID)
	}
	if c.Previous.Data == c.Current.Data || c.Previous.Data != before.DataVersion || c.Current.Data != after.DataVersion {
		t.Errorf("data versions %q -> %q, want %q -> %q", c.Previous.Data, c.Current.Data, before.DataVersion, after.DataVersion)
	}
	if c.Current.Methodology == nil || *c.Current.Methodology != risk.MethodologyVersion || c.Current.Engine == nil {
		t.Errorf("current versions %+v, want methodology %s and an engine version", c.Current, risk.MethodologyVersion)
	}
	var modules []string
	for _, m := range c.Changes {
		modules = append(modules, m.Module)
		sb, _ := before.Summary.ModuleScores.Get(m.Module)
		sa, _ := after.Summary.ModuleScores.Get(m.Module)
		if !sameInt(m.ScoreBefore, sb) || !sameInt(m.ScoreAfter, sa) {
			t.Errorf("%s: scores %v -> %v, the engine's %v -> %v", m.Module, m.ScoreBefore, m.ScoreAfter, sb, sa)
		}
	}
	if want := []string{"environmentalExposure"}; !slices.Equal(modules, want) {
		t.Fatalf("changed modules %v, want %v", modules, want)
	}
	env := c.Changes[0]
	if *env.ScoreAfter <= *env.ScoreBefore {
		t.Errorf("environmental exposure %d -> %d, want higher beside a new site", *env.ScoreBefore, *env.ScoreAfter)
	}
	if len(env.Indicators) == 0 || !strings.HasPrefix(env.Indicators[0].ID, "npl_") {
		t.Errorf("indicators %+v, want the Superfund indicators first", env.Indicators)
	}
	if c.Overall.ScoreBefore != before.Summary.OverallScore || c.Overall.ScoreAfter != after.Summary.OverallScore {
		t.Errorf("overall %+v, the engine's %d -> %d", c.Overall, before.Summary.OverallScore, after.Summary.OverallScore)
	}

	same, err := reportdiff.Compare(curDoc, curDoc)
	if err != nil {
		t.Fatal(err)
	}
	if len(same.Changes) != 0 || same.IsMaterial(1) {
		t.Errorf("a report against itself: %+v", same)
	}
}

// assess loads the engine on the pack in dir and assesses a point.
func assess(t *testing.T, dir string, lat, lon float64) *risk.Assessment {
	t.Helper()
	eng, err := risk.Load(context.Background(), os.DirFS(dir), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := eng.Assess(context.Background(), lat, lon)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// fullDocument is the assessment as GET .../reports/{id}?detail=full
// serves it (without the signature, which Compare does not read).
func fullDocument(t *testing.T, a *risk.Assessment, id string) []byte {
	t.Helper()
	rep, err := jobs.ReportOf(a)
	if err != nil {
		t.Fatal(err)
	}
	rep.ID, rep.JobID, rep.GeneratedUTC = id, "job_test", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	v, err := view.NewReport(rep, view.DetailFull)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sameInt(a, b *int) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
