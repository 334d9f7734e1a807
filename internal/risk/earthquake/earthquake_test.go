package earthquake

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

var fixture = datatest.Once(datatest.Fixture, Load)

// Hand-computed from the completeness tables:
// WUS (b=0.8): 50*(10^0.8-1) + 83*(1-10^-0.8) + 163*10^-0.8 = 361.157818
// CEUS (b=1):  38*(100-10) + 83*(10-1) + 213*1 = 4380
const (
	denomWUS  = 361.157818
	denomCEUS = 4380.0
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestDenominators(t *testing.T) {
	if got := wusModel.denominator(); !near(got, denomWUS, 1e-5) {
		t.Errorf("WUS denominator %.6f, want %.6f", got, denomWUS)
	}
	if got := ceusModel.denominator(); !near(got, denomCEUS, 1e-9) {
		t.Errorf("CEUS denominator %.6f, want %.6f", got, denomCEUS)
	}
	// One class with b=1 from M4, 10 years: 10 * 10^-(4-5) = 100 years of
	// M5+ observation; 7 events give 0.07/yr and P30 = 1-exp(-2.1).
	m := rateModel{B: 1, EndYear: 2009, Classes: []completeness{{4, 2000}}}
	if got := m.denominator(); !near(got, 100, 1e-9) {
		t.Errorf("single-class denominator %v, want 100", got)
	}
	if got := poissonProb(7/m.denominator(), 30); !near(got, 0.8775435717470181, 1e-12) {
		t.Errorf("poissonProb = %v, want 1-exp(-2.1) = 0.877544", got)
	}
	if got := poissonProb(0, 30); got != 0 {
		t.Errorf("poissonProb(0) = %v, want 0", got)
	}
}

func TestCompleteness(t *testing.T) {
	tests := []struct {
		model rateModel
		mag   float64
		year  int
		want  bool
	}{
		{wusModel, 3.99, 2000, false}, // below the smallest class
		{wusModel, 4.0, 1963, true},
		{wusModel, 4.9, 1962, false},
		{wusModel, 5.0, 1930, true},
		{wusModel, 5.99, 1929, false},
		{wusModel, 6.0, 1850, true},
		{wusModel, 7.8, 1849, false},
		{ceusModel, 2.99, 2010, false},
		{ceusModel, 3.0, 1975, true},
		{ceusModel, 3.5, 1974, false},
		{ceusModel, 4.0, 1930, true},
		{ceusModel, 4.5, 1929, false},
		{ceusModel, 7.5, 1811, true},
		{ceusModel, 5.9, 1799, false},
	}
	for _, tc := range tests {
		if got := tc.model.counted(tc.mag, tc.year); got != tc.want {
			t.Errorf("b=%v counted(M%.2f, %d) = %v, want %v", tc.model.B, tc.mag, tc.year, got, tc.want)
		}
	}
}

func TestPGAInterpolation(t *testing.T) {
	m := fixture(t)
	tests := []struct {
		name     string
		lat, lon float64
		want     float64
		ok       bool
	}{
		{"on a node", 37.80, -122.45, 0.700, true},
		{"on another node", 34.05, -118.25, 0.850, true},
		{"cell centre", 37.775, -122.425, (0.700 + 0.760 + 0.720 + 0.800) / 4, true},
		// tx = ty = 0.2 from the south-west node (-122.45, 37.75):
		// 0.64*0.720 + 0.16*0.800 + 0.16*0.700 + 0.04*0.760
		{"inside a cell", 37.76, -122.44, 0.7312, true},
		{"on an edge", 37.75, -122.425, (0.720 + 0.800) / 2, true},
		{"north-west grid corner", 50.0, -125.0, 0.003, true},
		{"south-east grid corner", 24.4, -65.0, 0.004, true},
		{"west of the grid", 37.0, -125.01, 0, false},
		{"north of the grid", 50.01, -100.0, 0, false},
		{"no node nearby", 45.0, -100.0, 0, false},
	}
	for _, tc := range tests {
		got, ok := m.pga.at(tc.lat, tc.lon)
		if ok != tc.ok || !near(got, tc.want, 1e-9) {
			t.Errorf("%s: at(%v, %v) = %v, %v; want %v, %v", tc.name, tc.lat, tc.lon, got, ok, tc.want, tc.ok)
		}
	}
}

func TestMeasureConus(t *testing.T) {
	m := fixture(t)
	tests := []struct {
		name     string
		site     hazard.Site
		pga      float64 // 0: no PGA expected
		prob     float64
		probSrc  string
		largest  float64
		largeTxt string
	}{
		{
			// Counted: M4.5 1990 (N* 1), M5.5 1935 (N* 1.1), M7.8 1906 (N* 1);
			// not counted: M5.2 1920, M4.2 1950, M3.8, the event 64 km away
			// and the ComCat lower-48 M6.0 49.8 km away.
			name: "San Francisco", site: hazard.Site{Lat: 37.775, Lon: -122.425, StateCode: "CA", Conus: true},
			pga: 0.745, prob: 1 - math.Exp(-30*3.1/denomWUS), probSrc: "usgs-nshm-2014-wus-catalog",
			largest: 7.8, largeTxt: "M7.8 in 1906, 11 km away",
		},
		{
			// Counted: M3.5 2010 (N* 1.165), M4.3 1952; not counted: M3.2
			// 1970, M4.1 1925, M2.8.
			name: "Oklahoma City", site: hazard.Site{Lat: 35.47, Lon: -97.52, StateCode: "OK", Conus: true},
			prob: 1 - math.Exp(-30*2.165/denomCEUS), probSrc: "usgs-nshm-2014-ceus-catalog",
			largest: 4.3, largeTxt: "M4.3 in 1952, 11 km away",
		},
		{
			// Radius edge: the event 49.9 km north counts, the one 50.1 km
			// north does not.
			name: "radius edge", site: hazard.Site{Lat: 39.0, Lon: -117.0, StateCode: "NV", Conus: true},
			prob: 1 - math.Exp(-30/denomWUS), probSrc: "usgs-nshm-2014-wus-catalog",
			largest: 4.5, largeTxt: "M4.5 in 2005, 50 km away",
		},
		{
			// The CEUS copy of the 1990 M4.6 is dropped; the CEUS M3.5 2005
			// counts with the CEUS weight.
			name: "catalog boundary", site: hazard.Site{Lat: 37.0, Lon: -107.0, StateCode: "CO", Conus: true},
			prob: 1 - math.Exp(-30*(1/denomWUS+1.2/denomCEUS)), probSrc: "usgs-nshm-2014-wus-catalog",
			largest: 4.6, largeTxt: "M4.6 in 1990, 3 km away",
		},
		{
			name: "Chicago", site: hazard.Site{Lat: 41.87, Lon: -87.78, StateCode: "IL", Conus: true},
			// tx = ty = 0.4: 0.36*0.060 + 0.24*0.058 + 0.24*0.061 + 0.16*0.059
			pga: 0.0596, prob: 0, probSrc: "usgs-nshm-2014-ceus-catalog",
			largest: 0, largeTxt: "No M4+ earthquake on record within 100 km",
		},
		{
			// M5.9 1755 is before the CEUS M5 period but is the largest on record.
			name: "Boston", site: hazard.Site{Lat: 42.33, Lon: -71.07, StateCode: "MA", Conus: true},
			// tx = ty = 0.6: 0.16*0.180 + 0.24*0.179 + 0.24*0.182 + 0.36*0.181
			pga: 0.1806, prob: 0, probSrc: "usgs-nshm-2014-ceus-catalog",
			largest: 5.9, largeTxt: "M5.9 in 1755, 75 km away",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.Measure(tc.site)
			pga, hasPGA := indicator(got, IndicatorPGA)
			if hasPGA != (tc.pga > 0) || !near(pga.Value, tc.pga, 1e-9) {
				t.Errorf("PGA %v (present %v), want %v", pga.Value, hasPGA, tc.pga)
			}
			prob, ok := indicator(got, IndicatorM5Prob)
			if !ok {
				t.Fatalf("no %s", IndicatorM5Prob)
			}
			if !near(prob.Value, tc.prob, 1e-6) || prob.Source != tc.probSrc {
				t.Errorf("probability %.6f from %s, want %.6f from %s", prob.Value, prob.Source, tc.prob, tc.probSrc)
			}
			// The annual chance from the same rate: 1 - (1 - p_annual)^30 = p_30.
			annual, ok := indicator(got, IndicatorM5Annual)
			if !ok {
				t.Fatalf("no %s", IndicatorM5Annual)
			}
			if wantA := 1 - math.Pow(1-tc.prob, 1.0/30); !near(annual.Value, wantA, 1e-7) || annual.Source != tc.probSrc {
				t.Errorf("annual chance %.8f from %s, want %.8f from %s", annual.Value, annual.Source, wantA, tc.probSrc)
			}
			wantW := 1.0
			if hasPGA {
				wantW = weightProb
				if !pga.Ranked || pga.Weight != weightPGA || pga.Unit != "g" || pga.Source != "usgs-nshm-2018-pga" {
					t.Errorf("PGA indicator %+v", pga)
				}
				if pga.Peril != hazard.PerilGroundShaking || pga.Resolution.Kind != hazard.ResGrid {
					t.Errorf("PGA peril %q resolution %q, want %q on the grid", pga.Peril, pga.Resolution.Kind, hazard.PerilGroundShaking)
				}
			}
			// The annual chance carries the catalog's weight; the 30-year
			// chance is ranked context.
			if !annual.Ranked || annual.Weight != wantW || !annual.AnnualChance || annual.Unit != "probability" {
				t.Errorf("annual chance indicator %+v, want ranked annual chance with weight %v", annual, wantW)
			}
			if !prob.Ranked || prob.Weight != 0 || prob.AnnualChance || prob.Unit != "probability" {
				t.Errorf("probability indicator %+v, want ranked context without weight", prob)
			}
			for _, in := range []hazard.Indicator{annual, prob} {
				if in.Peril != hazard.PerilGroundShaking || in.Resolution.Kind != hazard.ResReportedEvents {
					t.Errorf("%s peril %q resolution %q, want %q from reported events", in.ID, in.Peril, in.Resolution.Kind, hazard.PerilGroundShaking)
				}
			}
			// The NSHM catalogs are complete and systematic whether or not
			// the PGA grid covers the site; the engine's confidence comes
			// from the resolutions (grid vs. reported events).
			if got.Quality != 1 {
				t.Errorf("quality %v, want 1", got.Quality)
			}
			lg, ok := indicator(got, IndicatorLargestM100)
			if !ok || lg.Value != tc.largest || lg.Text != tc.largeTxt || lg.Ranked || lg.Weight != 0 {
				t.Errorf("largest = %+v, want value %v text %q, unranked", lg, tc.largest, tc.largeTxt)
			}
			if !got.HasHazardData() {
				t.Error("no weighted indicator")
			}
		})
	}
}

func TestMeasureComCat(t *testing.T) {
	m := fixture(t)
	tests := []struct {
		name    string
		site    hazard.Site
		events  int     // declustered M4+ events within 50 km
		largest float64 // largest M4+ within 100 km
		pga     float64 // place-table PGA, 0 for none
		note    string  // the sparse-record note, "" when not sparse
		akFault bool    // Alaska fault context expected
	}{
		// The M7.1 2018 mainshock, M4.2 2000, M4.6 2005 and M4.0 2010; its
		// M5.0 and M4.5 aftershocks are declustered away. The listed
		// Anchorage place (two rows, merged) gives the PGA.
		{"Anchorage", hazard.Site{Lat: 61.2181, Lon: -149.9003, StateCode: "AK", StateFIPS: "02"}, 4, 7.1, 0.5, "", true},
		// Fewer than three events: no probability at all (the engine falls
		// back to the NRI benchmark or null, never 0). Events on both sides
		// of the antimeridian.
		{"Aleutians", hazard.Site{Lat: 51.80, Lon: -179.90, StateCode: "AK", StateFIPS: "02"}, 2, 4.4, 0,
			"The ComCat record (1996-2018) counts 2 M4+ events within 50 km, too few to estimate how often damaging shaking comes; this is not evidence of low hazard.", true},
		// A sparse record beside a listed place: the PGA alone.
		{"Honolulu", hazard.Site{Lat: 21.31, Lon: -157.86, StateCode: "HI", StateFIPS: "15"}, 1, 4.1, 0.27,
			"The ComCat record (1996-2018) counts 1 M4+ event within 50 km, too few to estimate how often damaging shaking comes; this is not evidence of low hazard.", false},
		{"Kauai (no events)", hazard.Site{Lat: 22.05, Lon: -159.5, StateCode: "HI", StateFIPS: "15"}, 0, 0, 0,
			"The ComCat record (1996-2018) counts 0 M4+ events within 50 km, too few to estimate how often damaging shaking comes; this is not evidence of low hazard.", false},
		// By state FIPS only.
		{"Anchorage by FIPS", hazard.Site{Lat: 61.2181, Lon: -149.9003, StateFIPS: "02"}, 4, 7.1, 0.5, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.Measure(tc.site)
			pga, hasPGA := indicator(got, IndicatorPGA)
			if hasPGA != (tc.pga > 0) || (hasPGA && (!near(pga.Value, tc.pga, 1e-9) || pga.Resolution.Kind != hazard.ResPlaceTable || pga.Source != placeSource)) {
				t.Errorf("PGA %+v (present %v), want %v from the place table", pga, hasPGA, tc.pga)
			}
			if f, ok := indicator(got, IndicatorFaultKm); ok != tc.akFault || (ok && f.Source != akSource) {
				t.Errorf("fault distance %+v (present %v), want Alaska's: %v", f, ok, tc.akFault)
			}
			if got.Quality != 1 {
				t.Errorf("quality %v, want 1", got.Quality)
			}
			if lg, ok := indicator(got, IndicatorLargestM100); !ok || lg.Value != tc.largest || lg.Weight != 0 {
				t.Errorf("largest %+v, want %v without weight", lg, tc.largest)
			}
			annual, hasAnnual := indicator(got, IndicatorM5Annual)
			prob, hasProb := indicator(got, IndicatorM5Prob)
			if tc.note != "" {
				if hasAnnual || hasProb || got.HasHazardData() != hasPGA {
					t.Errorf("sparse record: indicators %+v, want no probability", got.Indicators)
				}
				if hasPGA && pga.Weight != 1 {
					t.Errorf("PGA weight %v, want 1 without a rate", pga.Weight)
				}
				if !slices.Contains(got.Notes, tc.note) {
					t.Errorf("notes %q, want one %q", got.Notes, tc.note)
				}
				return
			}
			if !hasAnnual || !hasProb {
				t.Fatalf("indicators %+v, want %s and %s", got.Indicators, IndicatorM5Annual, IndicatorM5Prob)
			}
			wantW := 1.0
			if hasPGA {
				wantW = weightProb
				if pga.Weight != weightPGA {
					t.Errorf("PGA weight %v, want %v beside the rate", pga.Weight, weightPGA)
				}
			}
			// 10^-(5-4) scales M4+ to M5+, over the 23 years 1996-2018.
			rate := float64(tc.events) / 230
			if want := 1 - math.Exp(-rate); !near(annual.Value, want, 1e-12) || annual.Source != "usgs-comcat-m4-1996-2018" ||
				annual.Weight != wantW || !annual.Ranked || !annual.AnnualChance {
				t.Errorf("annual chance %+v, want %.6f from ComCat, ranked, weight %v", annual, want, wantW)
			}
			if want := 1 - math.Exp(-30*rate); !near(prob.Value, want, 1e-12) || prob.Source != "usgs-comcat-m4-1996-2018" || prob.Weight != 0 || !prob.Ranked {
				t.Errorf("30-year probability %+v, want %.6f from ComCat, ranked context", prob, want)
			}
			if !got.HasHazardData() {
				t.Error("no weighted indicator")
			}
		})
	}
}

// TestAnnualAnd30Year checks at every fixture site with a rate that the two
// probabilities come from one Poisson rate: 1 - (1 - p_annual)^30 = p_30.
func TestAnnualAnd30Year(t *testing.T) {
	m := fixture(t)
	sites := []hazard.Site{
		{Lat: 37.775, Lon: -122.425, StateCode: "CA", Conus: true},
		{Lat: 35.47, Lon: -97.52, StateCode: "OK", Conus: true},
		{Lat: 39.0, Lon: -117.0, StateCode: "NV", Conus: true},
		{Lat: 37.0, Lon: -107.0, StateCode: "CO", Conus: true},
		{Lat: 41.87, Lon: -87.78, StateCode: "IL", Conus: true},
		{Lat: 61.2181, Lon: -149.9003, StateCode: "AK", StateFIPS: "02"},
	}
	for _, s := range sites {
		got := m.Measure(s)
		a, ok1 := indicator(got, IndicatorM5Annual)
		p, ok2 := indicator(got, IndicatorM5Prob)
		if !ok1 || !ok2 {
			t.Errorf("%s: annual %v, 30-year %v; want both", s.StateCode, ok1, ok2)
			continue
		}
		if a.Value < 0 || a.Value > p.Value || p.Value > 1 {
			t.Errorf("%s: annual %g, 30-year %g; want 0 <= annual <= 30-year <= 1", s.StateCode, a.Value, p.Value)
		}
		if got := 1 - math.Pow(1-a.Value, 30); !near(got, p.Value, 1e-9) {
			t.Errorf("%s: 1 - (1 - %g)^30 = %.12g, want the 30-year %.12g", s.StateCode, a.Value, got, p.Value)
		}
	}
	for _, rate := range []float64{0, 1e-6, 0.003, 0.05, 0.5, 3} {
		a, p := poissonProb(rate, 1), poissonProb(rate, probYears)
		if got := 1 - math.Pow(1-a, 30); !near(got, p, 1e-9) {
			t.Errorf("rate %g: 1 - (1 - %g)^30 = %.12g, want %.12g", rate, a, got, p)
		}
	}
}

func TestMeasureTerritories(t *testing.T) {
	m := fixture(t)
	tests := []struct {
		name   string
		site   hazard.Site
		pga    float64 // 0: none
		places int
	}{
		// San Juan is listed twice ("San Juan", "san Juan"): one place.
		{"Puerto Rico", hazard.Site{Lat: 18.41, Lon: -66.06, StateCode: "PR", StateFIPS: "72"}, 0.41, 1},
		{"Virgin Islands", hazard.Site{Lat: 17.73, Lon: -64.75, StateCode: "VI", StateFIPS: "78"}, 0.35, 1},
		// Central Guam and Tamuning are one point under two names: one
		// place, their mean; Saipan is beyond 150 km.
		{"Guam", hazard.Site{Lat: 13.44, Lon: 144.79, StateCode: "GU", StateFIPS: "66"}, 0.935, 1},
		{"Northern Mariana Islands", hazard.Site{Lat: 15.18, Lon: 145.75, StateCode: "MP", StateFIPS: "69"}, 0.57, 1},
		{"American Samoa", hazard.Site{Lat: -14.28, Lon: -170.70, StateCode: "AS", StateFIPS: "60"}, 0.14, 1},
		{"Puerto Rico by FIPS only", hazard.Site{Lat: 18.41, Lon: -66.06, StateFIPS: "72"}, 0.41, 1},
		// Mona Island, 70 km from any listed place in the fixture.
		{"Mona Island", hazard.Site{Lat: 18.08, Lon: -67.90, StateCode: "PR", StateFIPS: "72"}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.Measure(tc.site)
			pga, ok := indicator(got, IndicatorPGA)
			if tc.pga == 0 {
				if ok || got.HasHazardData() {
					t.Errorf("indicators %+v, want none weighted", got.Indicators)
				}
				return
			}
			if !ok || !near(pga.Value, tc.pga, 1e-9) || pga.Weight != 1 || !pga.Ranked || pga.Unit != "g" ||
				pga.Resolution.Kind != hazard.ResPlaceTable || pga.Source != placeSource {
				t.Fatalf("PGA %+v, want %v g from the place table, ranked, weight 1", pga, tc.pga)
			}
			if want := fmt.Sprintf("nearest %s within", plural(tc.places, "USGS design-value place", "USGS design-value places")); !strings.HasPrefix(pga.Resolution.Detail, want) {
				t.Errorf("detail %q, want it to start %q", pga.Resolution.Detail, want)
			}
			if len(got.Indicators) != 1 {
				t.Errorf("indicators %+v, want the PGA alone (no catalog covers the territories)", got.Indicators)
			}
			if !strings.HasPrefix(got.Notes[0], "USGS design values (NEHRP 2015, site class B) at the nearest listed places: ") {
				t.Errorf("notes %q", got.Notes)
			}
		})
	}
	// Aleutians across the antimeridian: the ComCat extract stops at 180
	// and no place is listed near; only the Alaska context is given.
	for _, s := range []hazard.Site{
		{Lat: 52.10, Lon: 177.50, StateCode: "AK", StateFIPS: "02"},
		{Lat: 51.80, Lon: 179.99, StateFIPS: "02"},
	} {
		got := m.Measure(s)
		if got.HasHazardData() {
			t.Errorf("%+v: indicators %+v, want none weighted", s, got.Indicators)
		}
		if in, ok := indicator(got, IndicatorInterface); !ok || in.Text != "Fixture Arc" {
			t.Errorf("%+v: interface %+v, want above the Fixture Arc", s, in)
		}
	}
}

func TestNotes(t *testing.T) {
	m := fixture(t)
	got := m.Measure(hazard.Site{Lat: 37.775, Lon: -122.425, StateCode: "CA", Conus: true})
	// 0.745 g is 0.74499... in binary, hence 0.74.
	want := []string{
		"USGS 2018 model: 2% chance in 50 years of peak ground acceleration exceeding 0.74 g.",
		"Estimated 30-year chance of an M5+ earthquake within 50 km: 23%.",
		// The Test Bay Fault trace is 1.74 km away.
		"The nearest mapped active fault section is Test Bay Fault, 2 km away (USGS NSHM 2023 fault database).",
	}
	if strings.Join(got.Notes, "|") != strings.Join(want, "|") {
		t.Errorf("notes %q, want %q", got.Notes, want)
	}
	// Oklahoma: the fault database maps no fault there.
	got = m.Measure(hazard.Site{Lat: 35.47, Lon: -97.52, StateCode: "OK", Conus: true})
	if last := got.Notes[len(got.Notes)-1]; last != "The USGS fault section database used here maps the western states only, so no fault distance is given." {
		t.Errorf("Oklahoma City: notes %q, want the western-states note last", got.Notes)
	}
	for _, tc := range []struct {
		km   float64
		want string
	}{{0, "less than 1 km"}, {0.99, "less than 1 km"}, {1, "1 km"}, {12.3, "12 km"}, {199.6, "200 km"}} {
		if got := kmWords(tc.km); got != tc.want {
			t.Errorf("kmWords(%v) = %q, want %q", tc.km, got, tc.want)
		}
	}
	for _, tc := range []struct {
		p    float64
		want string
	}{{0, "less than 1%"}, {0.0049, "less than 1%"}, {0.12, "12%"}, {0.996, "more than 99%"}} {
		if got := formatPercent(tc.p); got != tc.want {
			t.Errorf("formatPercent(%v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestDecluster(t *testing.T) {
	day := func(d float64) float64 { return 10000 + d }
	evs := []event{
		{Mag: 6.0, Lat: 60, Lon: -150, Time: day(0)},
		{Mag: 4.5, Lat: 60.1, Lon: -150, Time: day(30)},    // 11 km, inside the M6.0 window (499 days, 52 km)
		{Mag: 4.5, Lat: 60.1, Lon: -150, Time: day(800)},   // after both windows (the M6.2's ends at day 740)
		{Mag: 4.2, Lat: 61.0, Lon: -150, Time: day(10)},    // 111 km, outside the distance window
		{Mag: 4.0, Lat: 60, Lon: -150, Time: day(-5)},      // foreshock: kept (aftershock windows only)
		{Mag: 6.2, Lat: 60.2, Lon: -150, Time: day(100)},   // larger than the M6.0: a mainshock of its own (640 days, 56 km)
		{Mag: 4.1, Lat: 60.2, Lon: -150, Time: day(100.5)}, // its aftershock
	}
	got := decluster(evs)
	var mags []float64
	for _, e := range got {
		mags = append(mags, e.Mag)
	}
	want := []float64{4.0, 6.0, 4.2, 6.2, 4.5}
	if len(mags) != len(want) {
		t.Fatalf("kept %v, want %v", mags, want)
	}
	for i := range want {
		if mags[i] != want[i] {
			t.Fatalf("kept %v, want %v", mags, want)
		}
	}
	if km, days := gkWindow(7.1); !near(km, 72.775, 0.001) || !near(days, 924.91, 0.01) {
		t.Errorf("gkWindow(7.1) = %.2f km, %.1f days", km, days)
	}
}

func TestRows(t *testing.T) {
	m := fixture(t)
	want := map[string]int{
		"usgs-nshm-2018-pga":          43,
		"usgs-nshm-2014-wus-catalog":  13,
		"usgs-nshm-2014-ceus-catalog": 12,
		"usgs-comcat-m4-1996-2018":    11,
		"usgs-nshm-2023-faults":       3,
		"usgs-design-values-2015":     17,
		"usgs-nshm-ak-2007-faults":    4,
	}
	got := m.Rows()
	if len(got) != len(want) {
		t.Errorf("Rows() = %v, want %v", got, want)
	}
	for id, n := range want {
		if got[id] != n {
			t.Errorf("Rows()[%q] = %d, want %d", id, got[id], n)
		}
		if _, ok := data.SourceByID(id); !ok {
			t.Errorf("source %q not in the catalog", id)
		}
	}
	if len(m.Sources()) != 7 || m.Name() != hazard.Earthquake {
		t.Errorf("Sources() = %v, Name() = %q", m.Sources(), m.Name())
	}
	for _, id := range m.Sources() {
		if _, ok := got[id]; !ok {
			t.Errorf("source %q has no row count", id)
		}
	}
}

// copyFixtures copies the earthquake fixtures into a temporary data
// directory and overwrites the file of source id with content.
func copyFixtures(t *testing.T, id, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "earthquake"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"usgs-nshm-2018-pga", "usgs-nshm-2014-wus-catalog", "usgs-nshm-2014-ceus-catalog", "usgs-comcat-m4-1996-2018", faultSource, placeSource, akSource} {
		rel := strings.TrimSuffix(data.Path(src), ".gz")
		b, err := os.ReadFile(filepath.Join(datatest.FixtureDir(t), rel))
		if err != nil {
			t.Fatal(err)
		}
		if src == id {
			b = []byte(content)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadErrors(t *testing.T) {
	const nshmHeader = "mw,longitude,latitude,depth_km,year,month,day,hour,minute,second,mw_sigma,nstar,comment\n"
	const ccHeader = "region,id,time,location,latitude,longitude,depth,magnitude,url\n"
	const placeHeader = "reference_document,title,latitude,longitude,region,site_class,risk_category,sms,sm1,pgam\n"
	tests := []struct {
		name, id, content, want string
	}{
		{"PGA header", "usgs-nshm-2018-pga", "x,y,pga\n-125.00,50.00,0.1\n", "line 1: header lacks"},
		{"PGA off grid", "usgs-nshm-2018-pga", "lon,lat,pga_g\n-125.00,50.00,0.1\n-124.97,50.00,0.1\n", "line 3: (-124.97, 50.00) is not a node"},
		{"PGA outside grid", "usgs-nshm-2018-pga", "lon,lat,pga_g\n-130.00,40.00,0.1\n", "line 2: (-130.00, 40.00) is not a node"},
		{"PGA not a number", "usgs-nshm-2018-pga", "lon,lat,pga_g\n-125.00,50.00,abc\n", "line 2: column \"pga_g\""},
		{"PGA negative", "usgs-nshm-2018-pga", "lon,lat,pga_g\n-125.00,50.00,-0.1\n", "line 2: column \"pga_g\""},
		{"PGA duplicate", "usgs-nshm-2018-pga", "lon,lat,pga_g\n-125.00,50.00,0.1\n-125.0,50,0.2\n", "line 3: duplicate grid node"},
		{"PGA short row", "usgs-nshm-2018-pga", "lon,lat,pga_g\n-125.00,50.00\n", "line 2: 2 fields"},
		{"PGA empty", "usgs-nshm-2018-pga", "", "empty file"},
		{"WUS header", "usgs-nshm-2014-wus-catalog", "mw,lon,lat\n", "header lacks"},
		{"WUS bad magnitude", "usgs-nshm-2014-wus-catalog", nshmHeader + "x,-120,35,1,1990,1,1,0,0,0.,0.1,1.0,c\n", "line 2: column \"mw\""},
		{"CEUS after 2012", "usgs-nshm-2014-ceus-catalog", nshmHeader + "4.0,-90,35,1,2015,1,1,0,0,0.,0.1,1.0,c\n", "line 2: year 2015 is after"},
		{"CEUS bad N*", "usgs-nshm-2014-ceus-catalog", nshmHeader + "4.0,-90,35,1,2000,1,1,0,0,0.,0.1,0,c\n", "line 2: column \"nstar\""},
		{"ComCat bad time", "usgs-comcat-m4-1996-2018", ccHeader + "alaska,a,yesterday,x,61,-150,10,4.5,u\n", "line 2: column \"time\""},
		{"ComCat region", "usgs-comcat-m4-1996-2018", ccHeader + "mars,a,2000-01-01 00:00:00,x,61,-150,10,4.5,u\n", "line 2: unknown region"},
		{"ComCat out of period", "usgs-comcat-m4-1996-2018", ccHeader + "alaska,a,2020-01-01 00:00:00,x,61,-150,10,4.5,u\n", "outside the extract period"},
		{"faults not JSON", faultSource, "FaultName,lon,lat\n", "usgs_nshm2023_fault_sections_v3.geojson.gz: invalid character"},
		{"faults empty", faultSource, `{"type":"FeatureCollection","features":[]}`, "no fault trace"},
		{"places header", placeSource, "title,latitude,longitude\n", "header lacks"},
		{"places region", placeSource, placeHeader + "NEHRP-2015,X,10,10,MARS,B-estimated,I,1,1,0.5\n", "line 2: unknown region"},
		{"places bad PGA", placeSource, placeHeader + "NEHRP-2015,X,61,-150,AK,B-estimated,I,1,1,-0.5\n", "line 2: column \"pgam\""},
		{"places none", placeSource, placeHeader + "ASCE7-16,X,61,-150,AK,B-estimated,I,1,1,0.5\n", "no NEHRP-2015 site class B row"},
		{"Alaska faults not JSON", akSource, "name,lon,lat\n", "usgs_nshm_ak2007_faults_interfaces.geojson.gz: invalid character"},
		{"Alaska faults kind", akSource, `{"type":"FeatureCollection","features":[{"properties":{"kind":"volcano","name":"V"},"geometry":{"type":"LineString","coordinates":[[-150,61],[-150,62]]}}]}`, "unknown kind"},
		{"Alaska interface half", akSource, `{"type":"FeatureCollection","features":[{"properties":{"kind":"crustal_fault","name":"F"},"geometry":{"type":"LineString","coordinates":[[-150,61],[-150,62]]}},{"properties":{"kind":"subduction_interface_upper_edge","name":"I","source_file":"i.xml"},"geometry":{"type":"LineString","coordinates":[[-150,59],[-160,55]]}}]}`, "lacks its upper or lower edge"},
		{"faults no name", faultSource, `{"type":"FeatureCollection","features":[{"properties":{"PrimState":"CA"},"geometry":{"type":"LineString","coordinates":[[-122,37],[-122,38]]}}]}`, "feature 0 has no FaultName"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(os.DirFS(copyFixtures(t, tc.id, tc.content)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := Load(os.DirFS(t.TempDir())); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Load(empty dir) error %v, want a missing-file error", err)
	}
	// Every other file present, the fault sections missing.
	dir := copyFixtures(t, "", "")
	if err := os.Remove(filepath.Join(dir, strings.TrimSuffix(data.Path(faultSource), ".gz"))); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(os.DirFS(dir)); err == nil || !strings.Contains(err.Error(), "usgs_nshm2023_fault_sections_v3.geojson.gz") || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Load(no fault file) error %v, want the fault file missing", err)
	}
}

func TestParseFixed(t *testing.T) {
	tests := []struct {
		in    string
		scale int
		want  int64
		ok    bool
	}{
		{"-124.95", 2, -12495, true},
		{"50", 2, 5000, true},
		{"24.4", 2, 2440, true},
		{"-65.000", 2, -6500, true},
		{"0.742", 3, 742, true},
		{"2.866", 3, 2866, true},
		{"+1.5", 3, 1500, true},
		{"-124.951", 2, 0, false},
		{"1.2.3", 2, 0, false},
		{"", 2, 0, false},
		{"-", 2, 0, false},
		{"1e3", 2, 0, false},
	}
	for _, tc := range tests {
		got, ok := parseFixed([]byte(tc.in), tc.scale)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseFixed(%q, %d) = %d, %v; want %d, %v", tc.in, tc.scale, got, ok, tc.want, tc.ok)
		}
	}
}

// TestIndicatorAttribution checks, at every fixture site, that each weighted
// indicator is ranked, names one of the module's perils and carries one of
// the four resolution kinds, and that no indicator names a foreign peril or
// an unknown kind.
func TestIndicatorAttribution(t *testing.T) {
	m := fixture(t)
	perils := map[string]bool{hazard.PerilGroundShaking: true}
	kinds := map[string]bool{hazard.ResSite: true, hazard.ResGrid: true, hazard.ResPlaceTable: true, hazard.ResReportedEvents: true, hazard.ResCounty: true}
	tests := []struct {
		name     string
		site     hazard.Site
		weighted int // weighted indicators expected
	}{
		{"San Francisco (PGA and catalog)", hazard.Site{Lat: 37.775, Lon: -122.425, StateCode: "CA", Conus: true}, 2},
		{"Oklahoma City (catalog only)", hazard.Site{Lat: 35.47, Lon: -97.52, StateCode: "OK", Conus: true}, 1},
		{"Chicago (PGA, no events)", hazard.Site{Lat: 41.87, Lon: -87.78, StateCode: "IL", Conus: true}, 2},
		{"Anchorage (places and ComCat)", hazard.Site{Lat: 61.2181, Lon: -149.9003, StateCode: "AK", StateFIPS: "02"}, 2},
		// A sparse record gives no probability and no listed place is
		// near: nothing weighted.
		{"Kauai (ComCat, no events, no place)", hazard.Site{Lat: 22.05, Lon: -159.5, StateCode: "HI", StateFIPS: "15"}, 0},
		{"San Juan (places)", hazard.Site{Lat: 18.41, Lon: -66.06, StateCode: "PR", StateFIPS: "72"}, 1},
		{"Guam (places)", hazard.Site{Lat: 13.47, Lon: 144.75, StateCode: "GU", StateFIPS: "66"}, 1},
		{"Aleutians west of 180 (nothing)", hazard.Site{Lat: 51.88, Lon: 176.64, StateCode: "AK", StateFIPS: "02"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.Measure(tc.site)
			weighted := 0
			for _, in := range got.Indicators {
				if in.Peril != "" && !perils[in.Peril] {
					t.Errorf("%s: peril %q is not an earthquake peril", in.ID, in.Peril)
				}
				if in.Resolution.Kind != "" && !kinds[in.Resolution.Kind] {
					t.Errorf("%s: unknown resolution kind %q", in.ID, in.Resolution.Kind)
				}
				if in.Weight <= 0 {
					continue
				}
				if in.ID != IndicatorPGA && in.ID != IndicatorM5Annual {
					t.Errorf("%s carries weight %v; only the PGA and the annual M5+ chance are weighted", in.ID, in.Weight)
				}
				weighted++
				if !in.Ranked || in.Peril == "" || in.Resolution.Kind == "" {
					t.Errorf("%s: weight %v, ranked %v, peril %q, resolution %+v; a weighted indicator needs all three",
						in.ID, in.Weight, in.Ranked, in.Peril, in.Resolution)
				}
			}
			if weighted != tc.weighted {
				t.Errorf("%d weighted indicators, want %d", weighted, tc.weighted)
			}
		})
	}
}
