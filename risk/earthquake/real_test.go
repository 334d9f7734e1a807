package earthquake

import (
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
)

func TestRealRows(t *testing.T) {
	m := realModule(t)
	want := map[string]int{
		"usgs-nshm-2018-pga":          616113,
		"usgs-nshm-2014-wus-catalog":  21017,
		"usgs-nshm-2014-ceus-catalog": 6273,
		"usgs-comcat-m4-1996-2018":    8972,
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
