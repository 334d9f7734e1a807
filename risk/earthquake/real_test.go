package earthquake

import (
	"math"
	"strings"
	"testing"

	"locrisk/risk/data/datatest"
	"locrisk/risk/hazard"
)

// realModule loads the module from LOCRISK_DATA_DIR once for all real-data
// tests, or skips.
var realModule = datatest.Once(datatest.RealDir, Load)

var (
	sanFrancisco = hazard.Site{Lat: 37.7749, Lon: -122.4194, StateCode: "CA", Conus: true}
	losAngeles   = hazard.Site{Lat: 34.0522, Lon: -118.2437, StateCode: "CA", Conus: true}
	chicago      = hazard.Site{Lat: 41.8781, Lon: -87.6298, StateCode: "IL", Conus: true}
	memphis      = hazard.Site{Lat: 35.1495, Lon: -90.0490, StateCode: "TN", Conus: true}
	anchorage    = hazard.Site{Lat: 61.2181, Lon: -149.9003, StateCode: "AK", StateFIPS: "02"}
	sanJuan      = hazard.Site{Lat: 18.4655, Lon: -66.1057, StateCode: "PR", StateFIPS: "72"}
	charleston   = hazard.Site{Lat: 32.7765, Lon: -79.9311, StateCode: "SC", Conus: true}
	juneau       = hazard.Site{Lat: 58.3019, Lon: -134.4197, StateCode: "AK", StateFIPS: "02"}
	lahaina      = hazard.Site{Lat: 20.8783, Lon: -156.6825, StateCode: "HI", StateFIPS: "15"}
	lihue        = hazard.Site{Lat: 21.9811, Lon: -159.3711, StateCode: "HI", StateFIPS: "15"}
	hilo         = hazard.Site{Lat: 19.7, Lon: -155.08, StateCode: "HI", StateFIPS: "15"}
)

func TestRealRows(t *testing.T) {
	m := realModule(t)
	want := map[string]int{
		"usgs-nshm-2018-pga":          616113,
		"usgs-nshm-2014-wus-catalog":  21017,
		"usgs-nshm-2014-ceus-catalog": 6273,
		"usgs-comcat-m4-1996-2018":    8972,
		"usgs-nshm-2023-faults":       1016,
	}
	got := m.Rows()
	for id, n := range want {
		if got[id] != n {
			t.Errorf("Rows()[%q] = %d, want %d", id, got[id], n)
		}
	}
}

func TestRealPGA(t *testing.T) {
	m := realModule(t)
	tests := []struct {
		name     string
		site     hazard.Site
		min, max float64
	}{
		// PROVENANCE.md spot checks: SF 0.742, LA 0.847, Memphis 0.744 g.
		{"San Francisco", sanFrancisco, 0.70, 0.78},
		{"Los Angeles", losAngeles, 0.80, 0.90},
		{"Memphis (New Madrid)", memphis, 0.65, 0.85},
		{"Chicago", chicago, 0, 0.12},
	}
	for _, tc := range tests {
		in, ok := indicator(m.Measure(tc.site), IndicatorPGA)
		if !ok {
			t.Errorf("%s: no %s indicator", tc.name, IndicatorPGA)
			continue
		}
		if in.Value < tc.min || in.Value > tc.max {
			t.Errorf("%s: PGA %.3f g, want %.2f..%.2f", tc.name, in.Value, tc.min, tc.max)
		}
	}
}

func TestRealM5Probability(t *testing.T) {
	m := realModule(t)
	prob := func(s hazard.Site) float64 {
		t.Helper()
		in, ok := indicator(m.Measure(s), IndicatorM5Prob)
		if !ok {
			t.Fatalf("no %s at %+v", IndicatorM5Prob, s)
		}
		return in.Value
	}
	sf, chi, anc, la := prob(sanFrancisco), prob(chicago), prob(anchorage), prob(losAngeles)
	t.Logf("30-yr M5+ within 50 km: SF %.3f, LA %.3f, Chicago %.3f, Anchorage %.3f", sf, la, chi, anc)
	if sf <= chi {
		t.Errorf("San Francisco %.3f should exceed Chicago %.3f", sf, chi)
	}
	if sf < 0.3 || la < 0.3 {
		t.Errorf("San Francisco %.3f / Los Angeles %.3f: want at least 0.3", sf, la)
	}
	if chi > 0.05 {
		t.Errorf("Chicago %.3f: want below 0.05", chi)
	}
	if anc < 0.5 {
		t.Errorf("Anchorage %.3f: want at least 0.5", anc)
	}
	am := m.Measure(anchorage)
	if _, ok := indicator(am, IndicatorPGA); ok {
		t.Error("Anchorage: PGA measured outside CONUS")
	}
	if am.Quality != 1 {
		t.Errorf("Anchorage quality %v, want 1 (ComCat is not sparse there)", am.Quality)
	}
}

// TestRealFaults checks the fault context on the real NSHM 2023 fault
// sections: San Francisco lies within 20 km of the San Andreas; the
// database maps no fault in South Carolina, so Charleston gets none.
func TestRealFaults(t *testing.T) {
	m := realModule(t)
	sf := m.Measure(sanFrancisco)
	name, ok := indicator(sf, IndicatorFaultName)
	km, _ := indicator(sf, IndicatorFaultKm)
	idx, _ := indicator(sf, IndicatorFault)
	t.Logf("San Francisco: nearest fault %q, %.1f km, index %.3f", name.Text, km.Value, idx.Value)
	if !ok || !strings.Contains(name.Text, "San Andreas") || km.Value > 20 {
		t.Errorf("San Francisco: nearest fault %q at %.1f km, want the San Andreas within 20 km", name.Text, km.Value)
	}
	if !near(idx.Value, math.Exp(-km.Value/10), 1e-12) || idx.Weight != 0 {
		t.Errorf("San Francisco: index %+v, want exp(-%.2f/10) without weight", idx, km.Value)
	}
	ch := m.Measure(charleston)
	for _, id := range []string{IndicatorFault, IndicatorFaultKm, IndicatorFaultName} {
		if in, ok := indicator(ch, id); ok {
			t.Errorf("Charleston: %+v, want no fault indicator", in)
		}
	}
	if !m.faults.covers("CA") || m.faults.covers("SC") {
		t.Errorf("covers: CA %v, SC %v; want true, false", m.faults.covers("CA"), m.faults.covers("SC"))
	}
}

// TestRealComCatSparse checks Alaska and Hawaii: where ComCat counts fewer
// than three events within 50 km there is no weighted indicator (the engine
// falls back to the NRI benchmark or null, never 0); where it counts more,
// the annual M5+ chance carries weight 1.
func TestRealComCatSparse(t *testing.T) {
	m := realModule(t)
	tests := []struct {
		name     string
		site     hazard.Site
		weighted bool
	}{
		{"Juneau", juneau, false},
		{"Lahaina", lahaina, false},
		{"Lihue", lihue, false},
		{"Anchorage", anchorage, true},
		{"Hilo", hilo, true},
	}
	for _, tc := range tests {
		got := m.Measure(tc.site)
		if got.HasHazardData() != tc.weighted {
			t.Errorf("%s: weighted indicator present %v, want %v (%+v)", tc.name, got.HasHazardData(), tc.weighted, got.Indicators)
		}
		a, ok := indicator(got, IndicatorM5Annual)
		if tc.weighted {
			if !ok || a.Weight != 1 || !a.AnnualChance || a.Value <= 0 {
				t.Errorf("%s: annual chance %+v, want a positive annual chance with weight 1", tc.name, a)
			}
			continue
		}
		if ok {
			t.Errorf("%s: annual chance %+v, want none", tc.name, a)
		}
		if len(got.Notes) == 0 || !strings.Contains(got.Notes[0], "not evidence of low hazard") {
			t.Errorf("%s: notes %q, want the sparse-record note", tc.name, got.Notes)
		}
	}
}

// TestRealAnnualChance checks that the weighted annual M5+ chance orders
// San Francisco above Charleston (whose 2018 PGA is the higher of the two
// but whose catalog rate is far lower), and that it agrees with the 30-year
// chance.
func TestRealAnnualChance(t *testing.T) {
	m := realModule(t)
	annual := func(s hazard.Site) float64 {
		t.Helper()
		ms := m.Measure(s)
		a, ok := indicator(ms, IndicatorM5Annual)
		p, _ := indicator(ms, IndicatorM5Prob)
		if !ok || a.Weight != weightProb {
			t.Fatalf("%+v: annual chance %+v, want weight %v", s, a, weightProb)
		}
		if got := 1 - math.Pow(1-a.Value, 30); !near(got, p.Value, 1e-9) {
			t.Errorf("%+v: 1 - (1 - %g)^30 = %g, want the 30-year %g", s, a.Value, got, p.Value)
		}
		return a.Value
	}
	sf, ch := annual(sanFrancisco), annual(charleston)
	t.Logf("annual M5+ within 50 km: San Francisco %.4f, Charleston %.4f", sf, ch)
	if sf <= ch {
		t.Errorf("San Francisco %.4f should exceed Charleston %.4f", sf, ch)
	}
}

func TestRealTerritory(t *testing.T) {
	m := realModule(t)
	if got := m.Measure(sanJuan); got.HasHazardData() {
		t.Errorf("San Juan PR: got weighted indicators %+v", got.Indicators)
	}
}

func BenchmarkLoad(b *testing.B) {
	dir := datatest.RealDir(b)
	for b.Loop() {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMeasure(b *testing.B) {
	m := realModule(b)
	for _, tc := range []struct {
		name string
		site hazard.Site
	}{
		{"SanFrancisco", sanFrancisco}, {"LosAngeles", losAngeles}, {"Chicago", chicago},
		{"Memphis", memphis}, {"Anchorage", anchorage},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.Measure(tc.site)
			}
		})
	}
}
