package risk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestAppendJSONMatchesMarshal: AppendJSON writes exactly json.Marshal's
// bytes, for the edge cases a report can take (empty and nil module
// values, no overall driver, text that JSON escapes, an outlook absent,
// null or given) and for assessments of real places across the country
// and beyond it.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	score, level := 7, "very_low"
	mult, note, module := 2.5, "older <county>", "wildfire"
	cases := map[string]*Assessment{
		"zero": {},
		"escaped text and no driver": {
			DataVersion: `<v1> & "2"`,
			Summary: Summary{ModuleScores: ModuleScores{{"hydrology", &score}, {"wildfire", nil}},
				Perils:      ByModule[[]Peril]{{"hydrology", nil}, {"wildfire", []Peril{{Peril: "wildfire", RiskLevel: &level}}}},
				ReviewFlags: []ReviewFlag{{Code: "c", Message: "line\nbreak \u2028 <b>"}}},
			Report: Full{Modules: Modules{{"hydrology", ModuleReport{Narrative: "a & b"}}}},
		},
		"driver": {Summary: Summary{OverallDriver: "earthquake", TopRisks: []TopRisk{}}},
		"outlook recorded null": {
			Summary: Summary{Outlook: Record[OutlookBrief](nil), OutlookUnavailable: &OutlookUnavailable{Code: "county_not_in_data", Message: "no row for <b> & \u2028"}},
			Report:  Full{Outlook: Record[Outlook](nil), OutlookUnavailable: &OutlookUnavailable{Code: "county_not_in_data", Message: "m"}},
		},
		"outlook with escaped text": {
			Summary: Summary{Outlook: Record(&OutlookBrief{Source: "s<", HazardMultipliers: OutlookMultipliers{Drought: &mult}})},
			Report: Full{Outlook: Record(&Outlook{Name: "a & b", CountyNote: &note,
				Hazards: OutlookHazards{Wildfire: OutlookHazard{Module: &module, Scenarios: &OutlookScenarios{LateCenturyHigherWarming: OutlookScenario{HazardMultiplier: &mult, MultiplierRating: "Very High (>2.11x)"}}}}})},
		},
	}
	e := loadReal(t)
	// Places whose outlook is partial or null: a territory, a planning
	// region an older county stands in for, an island the table lacks.
	for _, p := range [][2]float64{{18.4655, -66.1057}, {41.7658, -72.6734}, {18.12, 145.76}, {-14.2756, -170.702}} {
		a, err := e.Assess(context.Background(), p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		cases[fmt.Sprintf("%.4f,%.4f", p[0], p[1])] = a
	}
	r := rand.New(rand.NewPCG(28, 11))
	for len(cases) < 209 {
		lat, lon := 24.5+r.Float64()*24.9, -124.8+r.Float64()*57.9
		a, err := e.Assess(context.Background(), lat, lon)
		if err != nil {
			continue // outside coverage
		}
		cases[fmt.Sprintf("%.4f,%.4f", lat, lon)] = a
	}
	for name, a := range cases {
		want, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.AppendJSON([]byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[len("prefix"):], want) || string(got[:len("prefix")]) != "prefix" {
			t.Errorf("%s: AppendJSON differs from json.Marshal:\n got %.300s\nwant %.300s", name, got, want)
		}
	}
}

// BenchmarkEncodeReport: one real report encoded by json.Marshal and by
// AppendJSON, side by side.
func BenchmarkEncodeReport(b *testing.B) {
	a, err := loadReal(b).Assess(context.Background(), 34.05, -118.25)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(a); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			var err error
			if buf, err = a.AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
