package earthquake

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// TestRateCeiling checks the ceiling formula and the catalog's share of its
// weight on either side of it (docs/methodology.md, "When the catalog
// outruns the USGS model").
func TestRateCeiling(t *testing.T) {
	for _, tc := range []struct{ pga, want float64 }{
		{0.1, 7e-4},
		{0.2, 7e-4 * 16},
		{0.05, 7e-4 / 16},
		{0, 0},
		{-0.1, 0},
	} {
		if got := rateCeiling(tc.pga); !near(got, tc.want, 1e-15) {
			t.Errorf("rateCeiling(%v) = %v, want %v", tc.pga, got, tc.want)
		}
	}
	c := rateCeiling(0.1)
	for _, tc := range []struct{ rate, pga, want float64 }{
		{0, 0.1, 1},
		{c, 0.1, 1},                // at the ceiling: full weight
		{math.Sqrt2 * c, 0.1, 0.5}, // half way in log2
		{1.5 * c, 0.1, 1 - math.Log2(1.5)},
		{2 * c, 0.1, 0},  // twice the ceiling: none
		{10 * c, 0.1, 0}, // far beyond: none
		{0.05, 0.75, 1},  // an active western site: the ceiling (2.2/yr) never binds
		{1e-4, 0, 0},     // no ground motion: any rate is beyond it
		{0, 0, 1},        // nothing counted and nothing supported
	} {
		if got := catalogTrust(tc.rate, tc.pga); !near(got, tc.want, 1e-12) {
			t.Errorf("catalogTrust(%v, %v) = %v, want %v", tc.rate, tc.pga, got, tc.want)
		}
	}
}

// swarmFixture is the fixture world with a swarm added to the CEUS catalog
// 10-25 km from the Chicago fixture site (PGA 0.0596 g): six M4.2-4.6
// events in 1963-1967, months apart, like the Rocky Mountain Arsenal
// sequence under Denver.
func swarmFixture(t *testing.T) *Module {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(datatest.FixtureDir(t), strings.TrimSuffix(data.Path(sourceIDs[srcCEUS]), ".gz")))
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	sb.Write(b)
	for i, d := range []struct {
		lat, lon, mag float64
		y, mo         int
	}{
		{41.95, -87.65, 4.3, 1963, 7}, {41.98, -87.70, 4.2, 1965, 2}, {41.96, -87.62, 4.4, 1965, 9},
		{42.00, -87.66, 4.6, 1966, 1}, {41.94, -87.60, 4.5, 1967, 4}, {41.99, -87.64, 4.2, 1967, 8},
	} {
		fmt.Fprintf(&sb, "%.2f,%.3f,%.3f,5,%d,%02d,%02d,0,0,0.,0.300,1.000,FIX|swarm %d\n", d.mag, d.lon, d.lat, d.y, d.mo, 10+i, i+1)
	}
	m, err := Load(os.DirFS(copyFixtures(t, sourceIDs[srcCEUS], sb.String())))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSwarmUnderLowGroundMotion: where the 2018 PGA is light (0.06 g), six
// counted swarm events (an M5+ rate of 6/4380 a year, 16 times the
// ceiling) take no weight; the PGA carries the whole peril, the annual
// chance is still reported but not as the peril's, and a note says why.
// Without the check the catalog would weigh 0.6.
func TestSwarmUnderLowGroundMotion(t *testing.T) {
	m := swarmFixture(t)
	chicago := hazard.Site{Lat: 41.87, Lon: -87.78, StateCode: "IL", Conus: true}
	got := m.Measure(chicago)
	pga, _ := indicator(got, IndicatorPGA)
	annual, ok := indicator(got, IndicatorM5Annual)
	if !ok {
		t.Fatalf("no %s", IndicatorM5Annual)
	}
	wantRate := 6 / denomCEUS
	if !near(annual.Value, 1-math.Exp(-wantRate), 1e-9) {
		t.Errorf("annual chance %.6f, want %.6f from six counted events", annual.Value, 1-math.Exp(-wantRate))
	}
	if ratio := wantRate / rateCeiling(pga.Value); ratio < 2 {
		t.Fatalf("fixture: rate is %.1f times the ceiling at %.4f g, want at least 2", ratio, pga.Value)
	}
	if pga.Weight != 1 || annual.Weight != 0 {
		t.Errorf("weights: PGA %v, annual chance %v; want 1 and 0 (the catalog outruns the USGS model)", pga.Weight, annual.Weight)
	}
	if annual.AnnualChance || !annual.Ranked {
		t.Errorf("annual chance indicator %+v: want ranked, not marked as the peril's annual chance", annual)
	}
	note := ""
	for _, n := range got.Notes {
		if strings.Contains(n, "long-term model") {
			note = n
		}
	}
	if !strings.Contains(note, "about once in 730 years") || !strings.Contains(note, "0.060 g") || !strings.Contains(note, "ground motion alone") {
		t.Errorf("notes %q: want one naming the catalog rate (1 in 730 years), the PGA and the PGA-alone score", got.Notes)
	}
	if !got.HasHazardData() {
		t.Error("no weighted indicator")
	}

	// The same swarm under an active western site changes nothing: San
	// Francisco's fixture rate (3.1/361 a year) is far below its ceiling.
	sf := m.Measure(hazard.Site{Lat: 37.775, Lon: -122.425, StateCode: "CA", Conus: true})
	sfPGA, _ := indicator(sf, IndicatorPGA)
	sfAnnual, _ := indicator(sf, IndicatorM5Annual)
	if sfPGA.Weight != weightPGA || sfAnnual.Weight != weightProb || !sfAnnual.AnnualChance {
		t.Errorf("San Francisco: weights %v / %v, annual chance %v; want %v / %v and marked", sfPGA.Weight, sfAnnual.Weight, sfAnnual.AnnualChance, weightPGA, weightProb)
	}
	for _, n := range sf.Notes {
		if strings.Contains(n, "long-term model") {
			t.Errorf("San Francisco: unexpected note %q", n)
		}
	}
}

// TestCeilingPartialWeight: between the ceiling and twice it the catalog
// keeps part of its weight and the PGA takes the rest, so the two weights
// still sum to one.
func TestCeilingPartialWeight(t *testing.T) {
	for _, tc := range []struct{ rate, pga float64 }{
		{1.2e-3, 0.1}, {7e-4, 0.1}, {2e-3, 0.1}, {0.01, 0.2},
	} {
		f := catalogTrust(tc.rate, tc.pga)
		wp, wr := 1-weightProb*f, weightProb*f
		if !near(wp+wr, 1, 1e-12) || wr < 0 || wr > weightProb {
			t.Errorf("rate %v at %v g: weights %v + %v", tc.rate, tc.pga, wp, wr)
		}
		note := ceilingNote(tc.rate, tc.pga, f)
		switch {
		case f >= 1:
		case f > 0 && !strings.Contains(note, fmt.Sprintf("keeps %.0f%% of its weight", 100*f)):
			t.Errorf("rate %v at %v g: note %q, want the share kept", tc.rate, tc.pga, note)
		case f == 0 && !strings.Contains(note, "ground motion alone"):
			t.Errorf("rate %v at %v g: note %q, want the PGA-alone wording", tc.rate, tc.pga, note)
		}
	}
}
