package earthquake

import (
	"math"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// realModule loads the module from the real data once for all real-data
// tests, or skips.
var realModule = datatest.Once(datatest.Real, Load)

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
	if pga, ok := indicator(am, IndicatorPGA); !ok || pga.Resolution.Kind != hazard.ResPlaceTable {
		t.Errorf("Anchorage: PGA %+v, want one from the place table", pga)
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
// than three events within 50 km the catalog gives no weighted indicator
// (a quiet record is no evidence of low hazard) and the place-table PGA
// scores alone; where it counts more, the annual M5+ chance weighs 0.6
// beside the PGA's 0.4.
func TestRealComCatSparse(t *testing.T) {
	m := realModule(t)
	tests := []struct {
		name string
		site hazard.Site
		rate bool
	}{
		{"Juneau", juneau, false},
		{"Lahaina", lahaina, false},
		{"Lihue", lihue, false},
		{"Anchorage", anchorage, true},
		{"Hilo", hilo, true},
	}
	for _, tc := range tests {
		got := m.Measure(tc.site)
		if !got.HasHazardData() {
			t.Errorf("%s: no weighted indicator (%+v)", tc.name, got.Indicators)
		}
		pga, _ := indicator(got, IndicatorPGA)
		a, ok := indicator(got, IndicatorM5Annual)
		if tc.rate {
			if !ok || a.Weight != weightProb || pga.Weight != weightPGA || !a.AnnualChance || a.Value <= 0 {
				t.Errorf("%s: annual chance %+v, PGA weight %v; want a positive annual chance with weight %v beside the PGA's %v", tc.name, a, pga.Weight, weightProb, weightPGA)
			}
			continue
		}
		if ok || pga.Weight != 1 {
			t.Errorf("%s: annual chance %+v, PGA weight %v; want no annual chance and the PGA alone", tc.name, a, pga.Weight)
		}
		if !strings.Contains(strings.Join(got.Notes, " "), "not evidence of low hazard") {
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

// TestRealTerritory: a territory gets the place-table PGA alone (no
// catalog covers it); a site beyond every listed place's radius gets none.
func TestRealTerritory(t *testing.T) {
	m := realModule(t)
	got := m.Measure(sanJuan)
	if pga, ok := indicator(got, IndicatorPGA); !ok || pga.Weight != 1 || len(got.Indicators) != 1 {
		t.Errorf("San Juan PR: indicators %+v, want the place-table PGA alone", got.Indicators)
	}
	// Utqiagvik (Barrow), 730 km from the nearest listed place.
	if got := m.Measure(hazard.Site{Lat: 71.29, Lon: -156.79, StateCode: "AK"}); got.HasHazardData() {
		t.Errorf("Utqiagvik: weighted indicators %+v, want none", got.Indicators)
	}
}

func BenchmarkLoad(b *testing.B) {
	dir := datatest.Real(b)
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

// TestRealPlaceTablePGA: outside the conterminous states the PGA comes from
// the USGS design values at listed places (PROVENANCE.md spot checks:
// Anchorage 0.50, Kodiak 0.62-0.64, Fairbanks 0.40, Honolulu 0.266, Hilo
// 0.50, San Juan 0.406, Ponce 0.411, Mayagüez 0.468, Central Guam 0.937,
// Central Tutuila 0.135 g).
func TestRealPlaceTablePGA(t *testing.T) {
	m := realModule(t)
	tests := []struct {
		name     string
		site     hazard.Site
		min, max float64
		withRate bool // the ComCat M5+ chance is weighted beside it
	}{
		{"Anchorage", anchorage, 0.48, 0.55, true},
		{"Kodiak", hazard.Site{Lat: 57.7900, Lon: -152.4072, StateCode: "AK", StateFIPS: "02"}, 0.60, 0.66, true},
		{"Fairbanks", hazard.Site{Lat: 64.8378, Lon: -147.7164, StateCode: "AK", StateFIPS: "02"}, 0.38, 0.42, true},
		{"Juneau", juneau, 0.23, 0.27, false},
		{"Honolulu", hazard.Site{Lat: 21.2793, Lon: -157.8292, StateCode: "HI", StateFIPS: "15"}, 0.25, 0.28, false},
		{"Hilo", hilo, 0.48, 0.60, true},
		{"San Juan", sanJuan, 0.39, 0.42, false},
		{"Ponce", hazard.Site{Lat: 18.0111, Lon: -66.6141, StateCode: "PR", StateFIPS: "72"}, 0.40, 0.42, false},
		{"Mayagüez", hazard.Site{Lat: 18.2013, Lon: -67.1397, StateCode: "PR", StateFIPS: "72"}, 0.45, 0.48, false},
		{"St Thomas (Charlotte Amalie)", hazard.Site{Lat: 18.3419, Lon: -64.9307, StateCode: "VI", StateFIPS: "78"}, 0.47, 0.50, false},
		{"St Croix (Christiansted)", hazard.Site{Lat: 17.7466, Lon: -64.7032, StateCode: "VI", StateFIPS: "78"}, 0.34, 0.37, false},
		{"Hagåtña", hazard.Site{Lat: 13.4757, Lon: 144.7489, StateCode: "GU", StateFIPS: "66"}, 0.88, 0.95, false},
		{"Saipan", hazard.Site{Lat: 15.2069, Lon: 145.7197, StateCode: "MP", StateFIPS: "69"}, 0.55, 0.60, false},
		{"Pago Pago", hazard.Site{Lat: -14.2781, Lon: -170.7025, StateCode: "AS", StateFIPS: "60"}, 0.13, 0.16, false},
	}
	for _, tc := range tests {
		meas := m.Measure(tc.site)
		in, ok := indicator(meas, IndicatorPGA)
		if !ok {
			t.Errorf("%s: no %s; notes %q", tc.name, IndicatorPGA, meas.Notes)
			continue
		}
		if in.Value < tc.min || in.Value > tc.max || in.Resolution.Kind != hazard.ResPlaceTable || in.Source != placeSource {
			t.Errorf("%s: PGA %.3f g (%s, %s), want %.2f..%.2f g from the place table", tc.name, in.Value, in.Resolution.Kind, in.Source, tc.min, tc.max)
		}
		wantW := 1.0
		if tc.withRate {
			wantW = weightPGA
		}
		if _, rate := indicator(meas, IndicatorM5Annual); rate != tc.withRate || in.Weight != wantW {
			t.Errorf("%s: PGA weight %v, M5+ chance present %v; want %v and %v", tc.name, in.Weight, rate, wantW, tc.withRate)
		}
		if !strings.Contains(strings.Join(meas.Notes, " "), "at the nearest listed places: ") {
			t.Errorf("%s: notes %q name no listed place", tc.name, meas.Notes)
		}
	}
	// Guam is far above Tutuila, as the design values say.
	g, _ := indicator(m.Measure(hazard.Site{Lat: 13.4757, Lon: 144.7489, StateCode: "GU"}), IndicatorPGA)
	as, _ := indicator(m.Measure(hazard.Site{Lat: -14.2781, Lon: -170.7025, StateCode: "AS"}), IndicatorPGA)
	if g.Value < 5*as.Value {
		t.Errorf("Guam %.3f g against Tutuila %.3f g, want Guam several times higher", g.Value, as.Value)
	}
}

// TestRealAlaskaContext checks the PROVENANCE.md geometry checks: Anchorage
// above the Eastern Aleutian interface and 40 km from Castle Mountain,
// Kodiak above three interface sources and 15 km from the Kodiak Island
// fault, Fairbanks above none and with no fault source within 100 km (146 km
// from the Denali fault).
func TestRealAlaskaContext(t *testing.T) {
	m := realModule(t)
	tests := []struct {
		name   string
		site   hazard.Site
		fault  string
		km     float64 // 0: none within 100 km
		ifaces string
	}{
		{"Anchorage", anchorage, "Castle Mountain", 40, "Eastern Aleutian Segment"},
		{"Kodiak", hazard.Site{Lat: 57.7900, Lon: -152.4072, StateCode: "AK"}, "Kodiak Island", 15, "Aleutian Arc; Eastern Aleutian Segment; Kodiak Segment"},
		{"Fairbanks", hazard.Site{Lat: 64.8378, Lon: -147.7164, StateCode: "AK"}, "", 0, "none"},
	}
	for _, tc := range tests {
		meas := m.Measure(tc.site)
		km, _ := indicator(meas, IndicatorFaultKm)
		name, hasName := indicator(meas, IndicatorFaultName)
		if tc.km > 0 && (!hasName || name.Text != tc.fault || math.Abs(km.Value-tc.km) > 1.5) {
			t.Errorf("%s: nearest fault %q at %.1f km, want %s at about %v km", tc.name, name.Text, km.Value, tc.fault, tc.km)
		}
		if tc.km == 0 && (hasName || km.Value != faultSearchKm) {
			t.Errorf("%s: nearest fault %q at %.1f km, want none within 100 km", tc.name, name.Text, km.Value)
		}
		if in, _ := indicator(meas, IndicatorInterface); in.Text != tc.ifaces {
			t.Errorf("%s: interfaces %q, want %q", tc.name, in.Text, tc.ifaces)
		}
	}
}

// TestRealPlaceTableRows: NEHRP 2015 site class B-estimated rows merge into
// one place per town (two rows each, San Juan under two spellings; Central
// Guam and Tamuning, and Fagamalo and Faganeanea, are one point each).
func TestRealPlaceTableRows(t *testing.T) {
	m := realModule(t)
	if got := m.Rows()[placeSource]; got != 246 {
		t.Errorf("rows %d, want 246", got)
	}
	if got := m.Rows()[akSource]; got != 511 {
		t.Errorf("Alaska features %d, want 511", got)
	}
	want := map[string]int{regionAK: 21, regionHI: 21, regionPRVI: 14, regionGUMP: 7, regionAS: 3}
	for r, n := range want {
		if got := len(m.places.byRegion[r]); got != n {
			t.Errorf("%s: %d places, want %d", r, got, n)
		}
	}
}

// BenchmarkMeasureOutside measures sites outside the conterminous states,
// where the place table, ComCat and the Alaska layer are all consulted.
func BenchmarkMeasureOutside(b *testing.B) {
	m := realModule(b)
	sites := []hazard.Site{anchorage, juneau, hilo, lahaina, sanJuan,
		{Lat: 57.79, Lon: -152.4072, StateCode: "AK"}, {Lat: 13.4757, Lon: 144.7489, StateCode: "GU"}, {Lat: 52.1, Lon: 177.5, StateCode: "AK"}}
	for b.Loop() {
		for _, s := range sites {
			m.Measure(s)
		}
	}
}
