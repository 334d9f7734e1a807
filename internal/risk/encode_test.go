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
// values, no overall driver, text that JSON escapes) and for assessments
// of real places across the country.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	score, level := 7, "very_low"
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
	}
	e := loadReal(t)
	r := rand.New(rand.NewPCG(28, 11))
	for len(cases) < 203 {
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
