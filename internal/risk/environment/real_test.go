package environment

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// The tests in this file run against the real data sets,
// datatest.Real: the data built into the binary.

var realModule = datatest.Once(datatest.Real, Load)

func TestRealLoad(t *testing.T) {
	m := realModule(t)
	if n := m.Rows()[SrcNPL]; n != 1825 {
		t.Errorf("%d rows, want 1,825 (PROVENANCE.md)", n)
	}
	count := map[status]int{}
	for _, s := range m.sites {
		count[s.status]++
		if s.name == "" || s.state == "" {
			t.Errorf("site without name or state: %+v", s)
		}
		for _, f := range []string{s.name, s.city, s.state} {
			for _, bad := range []string{"<", "&ntilde;", "&amp;", "\ufeff"} {
				if contains(f, bad) {
					t.Errorf("site field %q still holds %q", f, bad)
				}
			}
		}
	}
	if count[final] != 1334 || count[deleted] != 452 || count[proposed] != 39 {
		t.Errorf("statuses %v, want 1,334 final, 452 deleted, 39 proposed", count)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestRealKnownSite(t *testing.T) {
	m := realModule(t)
	// NL Industries/Taracorp Lead Smelter, Granite City IL, a final NPL
	// site at 38.695, -90.158331 in the file; 200 m off its centroid.
	ms := m.Measure(hazard.Site{Lat: 38.6968, Lon: -90.1583, CountyFIPS: "17119", StateCode: "IL", Conus: true})
	if got := indicator(t, ms, "nearest_npl_site").Text; got != "NL Industries/Taracorp Lead Smelter (final), Granite City, Illinois" {
		t.Errorf("nearest %q", got)
	}
	if d := value(t, ms, "nearest_npl_site_km"); d > 1 {
		t.Errorf("nearest at %g km, want < 1", d)
	}
	if len(ms.Flags) == 0 || ms.Flags[0].Code != "near_superfund_site" {
		t.Errorf("flags %+v, want near_superfund_site", ms.Flags)
	}
	// Peñuelas, PR: the HTML entity in the file is decoded.
	pr := m.Measure(hazard.Site{Lat: 18.0152, Lon: -66.7003, CountyFIPS: "72111", StateCode: "PR"})
	if got := indicator(t, pr, "nearest_npl_site").Text; got != "PROTECO (final), Peñuelas, Puerto Rico" {
		t.Errorf("nearest %q", got)
	}
}

// TestRealReferenceDistribution checks how the ranked index spreads over the
// engine's reference points: EJScreen's formula gives every place a value
// (1/500 per km at the least, never 0); most places have no final or
// proposed site within 5 km and score below 1/5, and a final site 500 m
// away must rank near the top.
func TestRealReferenceDistribution(t *testing.T) {
	m := realModule(t)
	var vals []float64
	for _, s := range datatest.GazetteerSites(t, datatest.Real(t)) {
		vals = append(vals, value(t, m.Measure(s), IndProximity))
	}
	sort.Float64s(vals)
	far := sort.SearchFloat64s(vals, 1/indexKm)
	t.Logf("%s over %d reference points: %.0f%% below 1/5 km, p50 %.3g, p90 %.3g, p95 %.3g, p99 %.3g, max %.3g",
		IndProximity, len(vals), 100*float64(far)/float64(len(vals)), vals[len(vals)/2], vals[len(vals)*90/100], vals[len(vals)*95/100], vals[len(vals)*99/100], vals[len(vals)-1])
	if vals[0] < 1/farCapKm {
		t.Errorf("smallest index %g, want at least 1/%g", vals[0], farCapKm)
	}
	if far < len(vals)/2 {
		t.Errorf("only %d of %d reference points score below 1/5 km", far, len(vals))
	}
	// Share of reference values strictly below a final site 500 m away,
	// as the engine ranks.
	v := value(t, m.Measure(hazard.Site{Lat: 38.695 + 0.5/111.195, Lon: -90.158331}), IndProximity)
	below := sort.SearchFloat64s(vals, v)
	if pct := 100 * float64(below) / float64(len(vals)); pct < 95 {
		t.Errorf("a final site 500 m away ranks at the %.1fth percentile, want >= 95", pct)
	}
}

// TestRealHanford checks the proximity beyond 5 km: at the Hanford 200 Area
// the final site's point is about 5.2 km away, so the old 5 km sum gave 0;
// in Richland the nearest site is the deleted 1100 Area (4.2 km), which
// weighs nothing, so the index is 1/distance to the final 300 Area.
func TestRealHanford(t *testing.T) {
	m := realModule(t)
	richland := geo.Point{Lat: 46.2857, Lon: -119.2845}
	tests := []struct {
		name     string
		site     hazard.Site
		nearest  string  // nearest site of any status
		activeKm float64 // distance to the nearest final or proposed site
		deleted5 float64
	}{
		{"Hanford 200 Area", hazard.Site{Lat: 46.5500, Lon: -119.5400, CountyFIPS: "53005", StateCode: "WA", Conus: true},
			"Hanford 200-Area (USDOE) (final), Benton County, Washington", geo.DistanceKm(geo.Point{Lat: 46.55, Lon: -119.54}, geo.Point{Lat: 46.563331, Lon: -119.6049}), 0},
		{"Richland", hazard.Site{Lat: richland.Lat, Lon: richland.Lon, CountyFIPS: "53005", StateCode: "WA", Conus: true},
			"Hanford 1100-Area (USDOE) (deleted), Benton County, Washington", geo.DistanceKm(richland, geo.Point{Lat: 46.3703, Lon: -119.2752}), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms := m.Measure(tc.site)
			if tc.activeKm <= indexKm {
				t.Fatalf("test setup: the nearest active site is %g km away, want beyond %g km", tc.activeKm, indexKm)
			}
			idx := value(t, ms, IndProximity)
			if idx <= 0 || math.Abs(idx-1/tc.activeKm) > 1e-3 {
				t.Errorf("proximity %g, want 1/%.2f km = %g", idx, tc.activeKm, 1/tc.activeKm)
			}
			if got := indicator(t, ms, "nearest_npl_site").Text; got != tc.nearest {
				t.Errorf("nearest %q, want %q", got, tc.nearest)
			}
			if n := value(t, ms, "npl_sites_5km"); n != 0 {
				t.Errorf("active sites within 5 km %g, want 0", n)
			}
			if n := value(t, ms, "npl_deleted_sites_5km"); n != tc.deleted5 {
				t.Errorf("deleted sites within 5 km %g, want %g", n, tc.deleted5)
			}
		})
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
	datatest.BenchmarkReferenceMeasure(b, realModule(b))
}
