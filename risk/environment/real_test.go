package environment

import (
	"sort"
	"strings"
	"testing"

	"locrisk/risk/data/datatest"
	"locrisk/risk/hazard"
)

// The tests in this file run against the real data sets named by
// LOCRISK_DATA_DIR and are skipped without it.

var realModule = datatest.Once(datatest.RealDir, Load)

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
// engine's reference points: most places have no site within 10 km and
// must score exactly 0, and a final site 500 m away must rank near the top.
func TestRealReferenceDistribution(t *testing.T) {
	m := realModule(t)
	var vals []float64
	for _, s := range datatest.GazetteerSites(t, datatest.RealDir(t)) {
		vals = append(vals, value(t, m.Measure(s), "npl_proximity_index"))
	}
	sort.Float64s(vals)
	zeros := sort.SearchFloat64s(vals, 1e-300)
	t.Logf("npl_proximity_index over %d reference points: %.0f%% zero, p90 %.3g, p95 %.3g, p99 %.3g, max %.3g",
		len(vals), 100*float64(zeros)/float64(len(vals)), vals[len(vals)*90/100], vals[len(vals)*95/100], vals[len(vals)*99/100], vals[len(vals)-1])
	if zeros < len(vals)/2 {
		t.Errorf("only %d of %d reference points have a zero index", zeros, len(vals))
	}
	// Share of reference values strictly below a final site 500 m away,
	// as the engine ranks.
	v := value(t, m.Measure(hazard.Site{Lat: 38.695 + 0.5/111.195, Lon: -90.158331}), "npl_proximity_index")
	below := sort.SearchFloat64s(vals, v)
	if pct := 100 * float64(below) / float64(len(vals)); pct < 95 {
		t.Errorf("a final site 500 m away ranks at the %.1fth percentile, want >= 95", pct)
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
	datatest.BenchmarkReferenceMeasure(b, realModule(b))
}
