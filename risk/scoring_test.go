package risk

import (
	"context"
	"strings"
	"testing"

	"locrisk/risk/hazard"
)

// fakeModule stands in for one hazard module so the engine's scoring rules
// can be tested on chosen measurements.
type fakeModule struct {
	name string
	meas hazard.Measurement
}

func (f fakeModule) Name() string                           { return f.name }
func (f fakeModule) Measure(hazard.Site) hazard.Measurement { return f.meas }
func (f fakeModule) Sources() []string                      { return []string{"usgs-nshm-2018-pga"} }
func (f fakeModule) Rows() map[string]int                   { return nil }

// withModule returns a copy of the fixture engine whose module name is
// replaced by m, and whose reference for m's ranked indicators is ref.
func withModule(t *testing.T, m fakeModule, ref []float64) *Engine {
	t.Helper()
	e := *loadFixture(t)
	e.modules = append([]hazard.Module(nil), e.modules...)
	for i, old := range e.modules {
		if old.Name() == m.name {
			e.modules[i] = m
		}
	}
	e.reference = map[string][]float64{}
	for k, v := range loadFixture(t).reference {
		e.reference[k] = v
	}
	for _, in := range m.meas.Indicators {
		e.reference[refKey(m.name, in.ID)] = ref
	}
	return &e
}

func flagCodes(a *Assessment) []string {
	var out []string
	for _, f := range a.Summary.ReviewFlags {
		out = append(out, f.Code)
	}
	return out
}

func TestNRIFallbackWhenNoHazardLayer(t *testing.T) {
	// An earthquake module that measures nothing: San Francisco's score then
	// comes from its NRI earthquake benchmark (99.0 in the fixture).
	e := withModule(t, fakeModule{name: hazard.Earthquake, meas: hazard.Measurement{Notes: []string{"No catalog covers this place."}}}, nil)
	a, err := e.Assess(context.Background(), 37.77, -122.42)
	if err != nil {
		t.Fatal(err)
	}
	eq := a.Report.Modules.Earthquake
	if eq.Basis != "nri_fallback" || eq.Score == nil || *eq.Score != 99 {
		t.Fatalf("basis %q score %v; want nri_fallback 99", eq.Basis, eq.Score)
	}
	if eq.Confidence.Level != "low" || eq.Confidence.Score != nriFallbackScore {
		t.Errorf("fallback confidence %+v", eq.Confidence)
	}
	if !hasFlag(a, "nri_benchmark_fallback") {
		t.Errorf("flags %v lack nri_benchmark_fallback", flagCodes(a))
	}
	if !strings.Contains(eq.Narrative, "National Risk Index") || !strings.Contains(eq.Narrative, "No catalog covers this place.") {
		t.Errorf("narrative %q", eq.Narrative)
	}
	checkInvariants(t, a)
}

func TestNoDataGivesNullNotZero(t *testing.T) {
	// Guam has no NRI scores ("Insufficient Data"), so a module without its
	// own layer has no score at all.
	e := withModule(t, fakeModule{name: hazard.Earthquake}, nil)
	a, err := e.Assess(context.Background(), 13.45, 144.78)
	if err != nil {
		t.Fatal(err)
	}
	if a.Summary.ModuleScores.Earthquake != nil {
		t.Fatalf("earthquake score %d, want null", *a.Summary.ModuleScores.Earthquake)
	}
	if a.Report.Modules.Earthquake.Basis != "no_data" || a.Report.Modules.Earthquake.RiskLevel != nil {
		t.Fatalf("module %+v", a.Report.Modules.Earthquake)
	}
	found := false
	for _, f := range a.Summary.ReviewFlags {
		if f.Code == "module_no_data" && strings.HasPrefix(f.Message, "Earthquake:") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no module_no_data flag names Earthquake: %+v", a.Summary.ReviewFlags)
	}
	for _, tr := range a.Summary.TopRisks {
		if tr.Module == hazard.Earthquake {
			t.Fatal("a module without data is listed as a top risk")
		}
	}
	checkInvariants(t, a)
}

func TestWeightedPercentileScoreAndDivergence(t *testing.T) {
	ref := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	m := fakeModule{name: hazard.Earthquake, meas: hazard.Measurement{
		Confidence: 0.8,
		Indicators: []hazard.Indicator{
			{ID: "a", Label: "A", Value: 1, Unit: "g", Source: "usgs-nshm-2018-pga", Ranked: true, Weight: 3}, // 10th percentile
			{ID: "b", Label: "B", Value: 5, Unit: "g", Source: "usgs-nshm-2018-pga", Ranked: true, Weight: 1}, // 50th
			{ID: "c", Label: "C", Value: 9.5, Unit: "g", Source: "usgs-nshm-2018-pga", Ranked: true},          // context
		},
	}}
	e := withModule(t, m, ref)
	a, err := e.Assess(context.Background(), 37.77, -122.42)
	if err != nil {
		t.Fatal(err)
	}
	// (3*10 + 1*50) / 4 = 20.
	if s := a.Summary.ModuleScores.Earthquake; s == nil || *s != 20 {
		t.Fatalf("earthquake score %v, want 20", s)
	}
	var c *Indicator
	for i := range a.Report.Modules.Earthquake.Indicators {
		if a.Report.Modules.Earthquake.Indicators[i].ID == "c" {
			c = &a.Report.Modules.Earthquake.Indicators[i]
		}
	}
	if c == nil || c.Percentile == nil || *c.Percentile != 100 {
		t.Fatalf("context indicator c = %+v; want ranked at 100 without weight", c)
	}
	// NRI rates San Francisco 99.0 for earthquake: 79 points from 20.
	if !hasFlag(a, "benchmark_divergence") {
		t.Fatalf("flags %v lack benchmark_divergence", flagCodes(a))
	}
	checkInvariants(t, a)
}

func TestNearCountyLineFlag(t *testing.T) {
	e := loadFixture(t)
	// San Francisco's fixture box meets San Mateo's at latitude 37.70.
	near, err := e.Assess(context.Background(), 37.705, -122.45)
	if err != nil {
		t.Fatal(err)
	}
	if !hasFlag(near, "near_county_line") {
		t.Errorf("0.5 km from the San Mateo line: flags %v", flagCodes(near))
	}
	far, err := e.Assess(context.Background(), 37.77, -122.44)
	if err != nil {
		t.Fatal(err)
	}
	if hasFlag(far, "near_county_line") {
		t.Errorf("7 km from any county line but flagged: %v", flagCodes(far))
	}
}

func TestRecommendationsByLevel(t *testing.T) {
	score := func(v int) *int { return &v }
	got := recommendations([]moduleResult{
		{name: hazard.Hydrology, score: score(10)},
		{name: hazard.SevereWeather, score: score(45)},
		{name: hazard.Wildfire, score: score(85), confidence: 0.6},
		{name: hazard.Earthquake, score: nil},
		{name: hazard.Landslide, score: score(90), confidence: 0.3},
		{name: hazard.EnvironmentalExposure, score: score(97)},
	})
	want := []struct{ module, priority string }{
		{hazard.Wildfire, "high"},
		{hazard.SevereWeather, "medium"},
		{hazard.Earthquake, "medium"},
		{hazard.Landslide, "medium"},             // low confidence
		{hazard.EnvironmentalExposure, "medium"}, // no active site within 1 km
	}
	if len(got) != len(want) {
		t.Fatalf("recommendations %+v", got)
	}
	for i, w := range want {
		if got[i].Module != w.module || got[i].Priority != w.priority || got[i].Text == "" {
			t.Errorf("recommendation %d = %+v, want %s/%s", i, got[i], w.module, w.priority)
		}
	}
	near := recommendations([]moduleResult{{name: hazard.EnvironmentalExposure, score: score(97), confidence: 0.8, flags: []hazard.Flag{{Code: "near_superfund_site"}}}})
	if len(near) != 1 || near[0].Priority != "high" {
		t.Errorf("active site within 1 km: %+v", near)
	}
}
