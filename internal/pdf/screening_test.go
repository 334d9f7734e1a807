package pdf

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
)

// maxScreeningPages is the most pages a screening report may take at the
// default detail: seven US Letter pages, as docs/api.md promises (six
// before the climate outlook's table).
const maxScreeningPages = 7

// TestScreeningReportFits renders the hand-made sample and real reports
// for places across the US, as the server does (the engine's assessment
// stored as JSON and read back), and checks what a reader of the printed
// report needs: at most maxScreeningPages pages, every top risk with its
// whole reason on page 1, and no text cut short anywhere.
func TestScreeningReportFits(t *testing.T) {
	needTools(t)
	cases := []struct {
		name     string
		lat, lon float64
	}{
		{"sample", 0, 0},
		{"los_angeles", 34.0522, -118.2437},
		{"miami", 25.7617, -80.1918},
		{"houston", 29.7604, -95.3698},
		{"anchorage", 61.2181, -149.9003},
		{"san_juan", 18.4655, -66.1057},
		{"rural_kansas", 38.9, -100.48},      // Gove County
		{"rural_georgia", 34.6905, -84.4546}, // Gilmer County: among the longest reports
		{"seattle", 47.6062, -122.3321},
		{"new_york", 40.7128, -74.0060},
	}
	var e *risk.Engine
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := sampleInput()
			if tc.name != "sample" {
				if e == nil {
					var err error
					if e, err = risk.Load(context.Background(), datatest.Real(t), nil, nil); err != nil {
						t.Fatalf("loading the engine: %v", err)
					}
				}
				in = realInput(t, e, tc.lat, tc.lon)
			}
			b := render(t, in)
			keep(t, "screening_"+tc.name, b)
			path := writeTemp(t, b)
			checkInside(t, path)
			n := pages(t, path)
			if n > maxScreeningPages {
				t.Errorf("%d pages, want at most %d", n, maxScreeningPages)
			}
			all := text(t, path, 0, 0)
			checkNoEllipsis(t, all)
			checkUnitsRead(t, all)
			checkWhole(t, in.Assessment, all)

			// The top risks, whole, are on page 1, the third included.
			a := in.Assessment
			p1 := text(t, path, 1, 1)
			for i, tr := range a.Summary.TopRisks {
				reason := strings.Join(strings.Fields(clean(tr.Reason, false)), " ")
				if !strings.Contains(p1, moduleTitle(tr.Module)) || !strings.Contains(p1, reason) {
					t.Errorf("top risk %d (%s) is not on page 1 in full: %q", i+1, tr.Module, reason)
				}
			}
			// Every peril's chance reads in full, never cut short as
			// "fire reachi…" once was.
			for _, mod := range a.Report.Modules {
				for _, p := range mod.Value.Perils {
					if c := clean(chanceText(p), false); c != "" && !strings.Contains(all, c) {
						t.Errorf("peril %s/%s: %q is not in the text in full", mod.Module, p.Peril, c)
					}
				}
			}
			t.Logf("%s, %s: %d pages", a.Location.CountyName, a.Location.StateCode, n)
		})
	}
}

// realInput is the report the server would render for a point: the
// engine's assessment after a round trip through its stored JSON, with
// the coverage layer's outlines.
func realInput(t *testing.T, e *risk.Engine, lat, lon float64) Input {
	t.Helper()
	a, err := e.Assess(context.Background(), lat, lon)
	if err != nil {
		t.Fatalf("assessing %v, %v: %v", lat, lon, err)
	}
	body, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var stored risk.Assessment
	if err := json.Unmarshal(body, &stored); err != nil {
		t.Fatal(err)
	}
	state, county := e.Outlines(stored.Location.CountyFIPS)
	return Input{
		ReportID: "5f0c2d3e-8a41-4b7e-9c55-1d2e3f4a5b6c", JobID: "job_Q3vK9xLm2Pz7Rt5Wn8Ya4Bc",
		Generated: sampleGenerated, Assessment: &stored, StateOutline: state, CountyOutline: county,
	}
}

// badUnit is what reads badly in the text: a unit after its number
// that a reader says before it or not at all ("5 category", "0.61 index",
// but "42 magnitude 4+ earthquakes" is fine), and a power without its
// superscript ("residents per km2").
var badUnit = regexp.MustCompile(`\d (category|class|index)\b|\d magnitude(\s*$|\s+[^\s\d]|[^\s\w])|\b(km|m|mi|ft)[23]\b`)

// checkUnitsRead fails on a value whose unit reads badly.
func checkUnitsRead(t *testing.T, all string) {
	t.Helper()
	for _, loc := range badUnit.FindAllStringIndex(all, -1) {
		t.Errorf("a unit reads badly: ...%s...", all[max(loc[0]-60, 0):min(loc[1]+10, len(all))])
	}
}

// checkNoEllipsis fails on any ellipsis in the text: the renderer wraps
// every text whole, and report texts carry none of their own.
func checkNoEllipsis(t *testing.T, all string) {
	t.Helper()
	for _, mark := range []string{"…", "..."} {
		if i := strings.Index(all, mark); i >= 0 {
			t.Errorf("the text has an ellipsis: ...%s...", all[max(i-60, 0):min(i+20, len(all))])
		}
	}
}

// checkWhole fails when a word of the report's texts is missing from the
// PDF's text: a text cut short, or a number or note left out.
func checkWhole(t *testing.T, a *risk.Assessment, all string) {
	t.Helper()
	// Words are compared without the punctuation around them, which
	// depends on what precedes or follows them on the page.
	word := func(w string) string { return strings.Trim(w, ",.;:()[]\"“”‘’") }
	have := map[string]bool{}
	for _, w := range strings.Fields(all) {
		have[word(w)] = true
	}
	var texts []string
	add := func(s ...string) { texts = append(texts, s...) }
	add(a.Location.CountyName, a.Location.StateName, a.DataVersion,
		a.Report.Methodology.Version, withoutRepositoryPaths(a.Report.Methodology.Description))
	for _, tr := range a.Summary.TopRisks {
		add(tr.Reason)
	}
	for _, rec := range a.Summary.Recommendations {
		add(rec.Text)
	}
	for _, fl := range a.Summary.ReviewFlags {
		add(fl.Code, fl.Message)
	}
	for _, m := range a.Report.Modules {
		add(m.Value.Narrative)
		for _, p := range m.Value.Perils {
			add(p.Title, chanceText(p), risk.ResolutionText(p.Resolution))
		}
		for _, in := range m.Value.Indicators {
			add(in.Label, indicatorValue(in))
		}
	}
	for _, s := range a.Report.Sources {
		add("["+s.ID+"]", s.Name, s.Publisher, s.Version, s.Resolution)
	}
	if o := a.Report.Outlook.Value; o != nil {
		add(outlookIntro(o))
		for _, h := range o.Hazards.All() {
			add(h.Hazard.Title)
			if s := h.Hazard.Scenarios; s != nil {
				for _, sc := range s.All() {
					add(sc.Title, outlookCell(sc.Scenario))
				}
			}
		}
	} else if u := a.Report.OutlookUnavailable; u != nil {
		add(u.Message)
	}
	missing := map[string]bool{}
	for _, s := range texts {
		for _, w := range strings.Fields(clean(s, false)) {
			if w = word(w); !have[w] && !missing[w] {
				missing[w] = true
				t.Errorf("%q (from %.80q) is not in the PDF's text", w, s)
			}
		}
	}
}
