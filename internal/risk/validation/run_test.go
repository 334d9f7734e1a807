package validation

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
)

func loadFixture(t *testing.T) *risk.Engine {
	t.Helper()
	e, err := risk.Load(context.Background(), datatest.Fixture(t), nil, nil)
	if err != nil {
		t.Fatalf("Load(fixtures): %v", err)
	}
	return e
}

// TestRunCountsFailuresAndGaps runs a small table on the fixture world,
// with checks made to hold or fail from the places' own scores: a failing
// check is a failure with its reason, a known gap is reported with
// whether it holds now and never counted as a check.
func TestRunCountsFailuresAndGaps(t *testing.T) {
	e := loadFixture(t)
	ctx := context.Background()
	sf := Place{Name: "San Francisco", Lat: 37.77, Lon: -122.42, County: "06075"}
	okc := Place{Name: "Oklahoma City", Lat: 35.47, Lon: -97.52, County: "40109"}
	score := func(p Place) (int, bool) {
		t.Helper()
		a, err := e.Assess(ctx, p.Lat, p.Lon)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := a.Summary.ModuleScores.Get("earthquake")
		if s == nil {
			t.Fatalf("%s has no earthquake score", p.Name)
		}
		high := false
		for _, r := range a.Summary.Recommendations {
			high = high || (r.Module == "earthquake" && r.Priority == "high")
		}
		return *s, high
	}
	hi, lo := sf, okc
	hs, high := score(hi)
	ls, _ := score(lo)
	if hs < ls {
		hi, lo, hs, ls = lo, hi, ls, hs
		_, high = score(hi)
	}
	if hs == ls || hs == 0 {
		t.Fatalf("the fixture places score %d and %d on earthquake: no order to check", hs, ls)
	}
	words := func(high bool) string {
		if high {
			return "high"
		}
		return "not high"
	}
	tab := &Table{
		Places: []Place{sf, okc},
		Orders: []Order{
			{Module: "earthquake", Higher: hi.Name, Lower: lo.Name, Why: "holds"},
			{Module: "earthquake", Higher: lo.Name, Lower: hi.Name, Why: "the lower place is higher"},
			{Module: "earthquake", Higher: lo.Name, Lower: hi.Name, Why: "unused", Gap: "an open gap"},
			{Module: "earthquake", Higher: hi.Name, Lower: lo.Name, Why: "unused", Gap: "a closed gap"},
		},
		Lows: []Low{
			{Module: "earthquake", Place: hi.Name, Max: hs + 1, Why: "holds"},
			{Module: "earthquake", Place: hi.Name, Max: hs, Why: "too high"},
		},
		Priorities: []Priority{
			{Module: "earthquake", Place: hi.Name, High: high, Why: "holds"},
			{Module: "earthquake", Place: hi.Name, High: !high, Why: "the other way"},
		},
	}
	var b strings.Builder
	res, err := tab.Run(ctx, e, &b)
	if err != nil {
		t.Fatal(err)
	}
	pair := func(a, c Place, as, cs int) string {
		return fmt.Sprintf("earthquake: %s > %s (%d vs %d)", a.Name, c.Name, as, cs)
	}
	want := Result{
		Places: 2,
		Checks: 6,
		Failures: []string{
			pair(lo, hi, ls, hs) + ": the lower place is higher",
			fmt.Sprintf("earthquake: %s < %d (%d): too high", hi.Name, hs, hs),
			fmt.Sprintf("earthquake priority: %s %s (%s): the other way", hi.Name, words(!high), words(high)),
		},
		Gaps: []string{
			pair(lo, hi, ls, hs) + ": still open; an open gap",
			pair(hi, lo, hs, ls) + ": now holds; a closed gap",
		},
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("result %#v\nwant %#v", res, want)
	}
	out := b.String()
	for _, s := range []string{
		"\n2 places, 6 checks, 3 failing, 2 known gaps\n",
		"\nFAIL " + want.Failures[0] + "\n",
		"\nGAP  " + want.Gaps[1] + "\n",
		"PLACE", hi.Name,
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}

// TestRunChecksTheCounty: a place that locates in another county than the
// table says is a failure; a place outside coverage or a check naming an
// unlisted place stops the run.
func TestRunChecksTheCounty(t *testing.T) {
	e := loadFixture(t)
	ctx := context.Background()
	res, err := (&Table{Places: []Place{{Name: "San Francisco", Lat: 37.77, Lon: -122.42, County: "06001"}}}).Run(ctx, e, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"San Francisco located in county 06075, want 06001"}; !reflect.DeepEqual(res.Failures, want) {
		t.Errorf("failures %q, want %q", res.Failures, want)
	}
	if _, err := (&Table{Places: []Place{{Name: "Toronto", Lat: 43.65, Lon: -79.38, County: "00000"}}}).Run(ctx, e, nil); err == nil {
		t.Error("a place outside coverage ran")
	}
	tab := &Table{
		Places: []Place{{Name: "San Francisco", Lat: 37.77, Lon: -122.42, County: "06075"}},
		Lows:   []Low{{Module: "earthquake", Place: "Oakland", Max: 50, Why: "why"}},
	}
	if _, err := tab.Run(ctx, e, nil); err == nil || !strings.Contains(err.Error(), "Oakland") {
		t.Errorf("a low naming an unlisted place: %v", err)
	}
}
