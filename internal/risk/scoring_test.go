package risk

import (
	"context"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// fakeModule stands in for one hazard module so the engine's scoring rules
// can be tested on chosen measurements; measure may depend on the site.
type fakeModule struct {
	name    string
	measure func(hazard.Site) hazard.Measurement
}

func (f fakeModule) Name() string                             { return f.name }
func (f fakeModule) Measure(s hazard.Site) hazard.Measurement { return f.measure(s) }
func (f fakeModule) Sources() []string                        { return []string{"usgs-nshm-2018-pga"} }
func (f fakeModule) Rows() map[string]int                     { return nil }

// withModule returns a copy of the fixture engine whose module m.name is
// replaced by m, with the reference rebuilt over the fixture tracts.
func withModule(t *testing.T, m fakeModule) *Engine {
	t.Helper()
	e := *loadFixture(t)
	e.modules = append([]hazard.Module(nil), e.modules...)
	for i, old := range e.modules {
		if old.Name() == m.name {
			e.modules[i] = m
		}
	}
	tracts, err := coverage.ReadTracts(os.DirFS(datatest.FixtureDir(t)))
	if err != nil {
		t.Fatal(err)
	}
	if e.ref, err = e.buildReference(context.Background(), tracts, slog.New(slog.DiscardHandler), nil); err != nil {
		t.Fatal(err)
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

func moduleReport(t *testing.T, a *Assessment, key string) ModuleReport {
	t.Helper()
	m, ok := a.Report.Modules.Get(key)
	if !ok {
		t.Fatalf("report has no module %s", key)
	}
	return m
}

func TestNRIFallbackWhenNoHazardLayer(t *testing.T) {
	// An earthquake module that measures nothing: San Francisco's score then
	// ranks its NRI earthquake benchmark among the fixture residents.
	e := withModule(t, fakeModule{name: hazard.Earthquake, measure: func(hazard.Site) hazard.Measurement {
		return hazard.Measurement{Notes: []string{"No catalog covers this place."}}
	}})
	a, err := e.Assess(context.Background(), 37.77, -122.42)
	if err != nil {
		t.Fatal(err)
	}
	eq := moduleReport(t, a, hazard.Earthquake)
	if eq.Basis != "nri_fallback" || eq.Score == nil {
		t.Fatalf("basis %q score %v; want an nri_fallback score", eq.Basis, eq.Score)
	}
	if eq.Confidence.Level != "low" || eq.Confidence.Score != nriFallbackConfidence {
		t.Errorf("fallback confidence %+v", eq.Confidence)
	}
	if !hasFlag(a, "nri_benchmark_fallback") {
		t.Errorf("flags %v lack nri_benchmark_fallback", flagCodes(a))
	}
	if !strings.Contains(eq.Narrative, "National Risk Index") || !strings.Contains(eq.Narrative, "No catalog covers this place.") {
		t.Errorf("narrative %q", eq.Narrative)
	}
	for _, r := range a.Summary.Recommendations {
		if r.Module == hazard.Earthquake && r.Priority == "high" {
			t.Errorf("a county benchmark earned a high-priority recommendation: %+v", r)
		}
	}
	checkInvariants(t, a)
}

func TestNoDataGivesNullNotZero(t *testing.T) {
	// Guam has no NRI scores ("Insufficient Data"), so a module without its
	// own layer has no score at all.
	e := withModule(t, fakeModule{name: hazard.Earthquake, measure: func(hazard.Site) hazard.Measurement { return hazard.Measurement{} }})
	a, err := e.Assess(context.Background(), 13.45, 144.78)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := a.Summary.ModuleScores.Get(hazard.Earthquake); s != nil {
		t.Fatalf("earthquake score %d, want null", *s)
	}
	eq := moduleReport(t, a, hazard.Earthquake)
	if eq.Basis != "no_data" || eq.RiskLevel != nil {
		t.Fatalf("module %+v", eq)
	}
	for _, p := range eq.Perils {
		if p.Score != nil {
			t.Fatalf("peril %s scored %d without data", p.Peril, *p.Score)
		}
	}
	found := false
	for _, f := range a.Summary.ReviewFlags {
		if f.Code == "module_no_data" && strings.HasPrefix(f.Message, "Earthquake:") && f.Module == hazard.Earthquake {
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

// latitudeModule measures a severe-weather tornado value that grows with
// latitude, and a hail value that grows to the west; hail is missing where
// the longitude is east of -100.
func latitudeModule() fakeModule {
	return fakeModule{name: hazard.SevereWeather, measure: func(s hazard.Site) hazard.Measurement {
		res := hazard.Resolution{Kind: hazard.ResGrid, Detail: "test"}
		ins := []hazard.Indicator{
			{ID: "t", Label: "T", Value: s.Lat, Unit: "index", Source: "usgs-nshm-2018-pga", Peril: hazard.PerilTornado, Resolution: res, Ranked: true, Weight: 1},
			{ID: "t2", Label: "T2", Value: s.Lat / 2, Unit: "index", Source: "usgs-nshm-2018-pga", Peril: hazard.PerilTornado, Resolution: res, Ranked: true}, // context
		}
		// Straight-line wind is measured everywhere (a constant), so at
		// least half the module's perils have data east of -100 too.
		ins = append(ins, hazard.Indicator{ID: "w", Label: "W", Value: 1, Unit: "index", Source: "usgs-nshm-2018-pga", Peril: hazard.PerilStraightLineWind,
			Resolution: hazard.Resolution{Kind: hazard.ResCounty}, Ranked: true, Weight: 1})
		if s.Lon < -100 {
			ins = append(ins, hazard.Indicator{ID: "h", Label: "H", Value: -s.Lon, Unit: "index", Source: "usgs-nshm-2018-pga", Peril: hazard.PerilHail,
				Resolution: hazard.Resolution{Kind: hazard.ResCounty}, Ranked: true, Weight: 1})
		}
		return hazard.Measurement{Indicators: ins, Quality: 1}
	}}
}

func TestPerilsAreNotDiluted(t *testing.T) {
	e := withModule(t, latitudeModule())
	// Seattle (King County) is the fixture's northernmost resident tract
	// area: the top tornado value. Its module score must be as high as its
	// peril's, not averaged down by hail or straight-line wind.
	a, err := e.Assess(context.Background(), 47.61, -122.33)
	if err != nil {
		t.Fatal(err)
	}
	sw := moduleReport(t, a, hazard.SevereWeather)
	var torn, hail Peril
	for _, p := range sw.Perils {
		switch p.Peril {
		case hazard.PerilTornado:
			torn = p
		case hazard.PerilHail:
			hail = p
		}
	}
	if torn.Score == nil || sw.Score == nil || *sw.Score < *torn.Score-5 {
		t.Fatalf("module %v, tornado peril %v: the module is diluted", sw.Score, torn.Score)
	}
	if hail.Score == nil {
		t.Fatal("hail measured west of -100 but has no score")
	}
	// East of -100 hail is not measured: null, with its flag, never 0.
	a, err = e.Assess(context.Background(), 41.88, -87.63)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range moduleReport(t, a, hazard.SevereWeather).Perils {
		if p.Peril == hazard.PerilHail && p.Score != nil {
			t.Errorf("hail scored %d where it is not measured", *p.Score)
		}
	}
	if !hasFlag(a, "peril_no_data") {
		t.Errorf("flags %v lack peril_no_data", flagCodes(a))
	}
	checkInvariants(t, a)
}

// TestFixturePercentileClaim proves on the fixture reference that every
// peril, module and overall score is the population-weighted share of
// residents whose own value is strictly lower.
func TestFixturePercentileClaim(t *testing.T) {
	var trace referenceTrace
	e, err := load(context.Background(), os.DirFS(datatest.FixtureDir(t)), nil, nil, &trace)
	if err != nil {
		t.Fatal(err)
	}
	checkPercentileClaim(t, e, &trace, len(trace.weights))
}

// checkPercentileClaim assesses up to n located tracts of the trace and
// checks each score against a brute-force count over every tract.
func checkPercentileClaim(t *testing.T, e *Engine, tr *referenceTrace, n int) {
	t.Helper()
	total := 0.0
	for _, w := range tr.weights {
		total += w
	}
	// share is the brute-force share of residents with a value below v.
	share := func(value func(int) float64, v float64) float64 {
		s := 0.0
		for i, w := range tr.weights {
			if x := value(i); !math.IsNaN(x) && x < v {
				s += w
			}
		}
		return s
	}
	covered := func(value func(int) float64) float64 {
		s := 0.0
		for i, w := range tr.weights {
			if !math.IsNaN(value(i)) {
				s += w
			}
		}
		return s
	}
	// Each tract's module rank on its own basis, computed once: the brute
	// force below compares every sampled tract against all of them.
	ranks := make([][]float64, len(e.specs))
	for mi := range e.specs {
		ranks[mi] = make([]float64, len(tr.weights))
		for j := range tr.weights {
			ranks[mi][j], _ = e.moduleRankOf(e.ref, mi, tr.modVals[j][mi], tr.benchVals[j][mi])
		}
	}
	step := max(1, len(tr.weights)/n)
	checked := 0
	for i := 0; i < len(tr.weights); i += step {
		if !tr.located[i] {
			continue
		}
		a, err := e.Assess(context.Background(), tr.points[i].Lat, tr.points[i].Lon)
		if err != nil {
			t.Fatalf("tract %d at %v: %v", i, tr.points[i], err)
		}
		checked++
		ov := func(j int) float64 { return tr.overall[j] }
		if want := scoreOf(share(ov, tr.overall[i]) / covered(ov)); a.Summary.OverallScore != want {
			t.Errorf("tract %d: overall score %d, brute-force percentile %d", i, a.Summary.OverallScore, want)
		}
		for mi, spec := range e.specs {
			mr, _ := a.Report.Modules.Get(spec.Key)
			// A module score ranks every resident with one, whichever
			// basis (hazard data or the NRI benchmark) scores each: the
			// brute force counts each tract's own rank on its basis.
			rank := func(j int) float64 { return ranks[mi][j] }
			if r := rank(i); !math.IsNaN(r) {
				want := scoreOf(share(rank, r) / covered(rank))
				if mr.Score == nil || *mr.Score != want {
					t.Errorf("tract %d %s: score %v, brute-force percentile %d", i, spec.Key, mr.Score, want)
				}
			} else if mr.Score != nil {
				t.Errorf("tract %d %s: score %d without a value", i, spec.Key, *mr.Score)
			}
			if mr.Basis != basisHazard {
				continue
			}
			for pi := range spec.Perils {
				pv := func(j int) float64 { return tr.perilVals[j][mi][pi] }
				v := tr.perilVals[i][mi][pi]
				got := mr.Perils[pi].Score
				if math.IsNaN(v) {
					if got != nil {
						t.Errorf("tract %d %s/%s: score %d without a value", i, spec.Key, spec.Perils[pi].Key, *got)
					}
					continue
				}
				want := scoreOf(share(pv, v) / covered(pv))
				if len(spec.Perils) == 1 {
					// A single peril shows its module's score.
					want = *mr.Score
				}
				if got == nil || *got != want {
					t.Errorf("tract %d %s/%s: score %v, brute-force percentile %d", i, spec.Key, spec.Perils[pi].Key, got, want)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no tract checked")
	}
	t.Logf("percentile claim checked at %d tracts against %d", checked, len(tr.weights))
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

func TestRecommendationsNeedSiteEvidence(t *testing.T) {
	score := func(v int) *int { return &v }
	spec := func(key string) *ModuleSpec { s, _ := ModuleByKey(key); return &s }
	ind := func(id string, v float64, kind string) hazard.Indicator {
		return hazard.Indicator{ID: id, Label: "L", Value: v, Resolution: hazard.Resolution{Kind: kind}}
	}
	one := func(share float64, ins ...hazard.Indicator) moduleResult {
		os := make([]obs, len(ins))
		for i, in := range ins {
			os[i] = obs{id: in.ID, peril: 0, weight: 1, value: in.Value, res: in.Resolution.Kind}
		}
		return moduleResult{perils: []perilResult{{value: share, share: share}}, driver: 0, basis: basisHazard,
			meas: hazard.Measurement{Indicators: ins}, os: os, shares: make([]float64, len(os))}
	}
	eq := func(sc int, pga float64, kind string) moduleResult {
		r := one(float64(sc)/100, ind("pga_2pct_50yr", pga, kind))
		r.spec, r.score = spec(hazard.Earthquake), score(sc)
		return r
	}
	withBench := func(r moduleResult, rating string) moduleResult {
		r.benchHigh = []string{rating}
		return r
	}
	tornado := func(sc int, chance float64, rating string) moduleResult {
		sw := spec(hazard.SevereWeather)
		r := one(float64(sc)/100, ind("tornado_ef2_strike_annual_prob", chance, hazard.ResReportedEvents))
		r.perils = append(r.perils, perilResult{value: math.NaN(), share: math.NaN()}, perilResult{value: math.NaN(), share: math.NaN()}, perilResult{value: math.NaN(), share: math.NaN()})
		r.spec, r.score, r.benchHigh = sw, score(sc), []string{rating, "", "", ""}
		return r
	}
	quake := func(sc int, pga, m5 float64) moduleResult {
		r := eq(sc, pga, hazard.ResGrid)
		m := ind("m5_annual_probability_50km", m5, hazard.ResReportedEvents)
		m.AnnualChance = true
		r.meas.Indicators = append(r.meas.Indicators, m)
		r.os = append(r.os, obs{id: m.ID, peril: 0, weight: 1, value: m5, res: m.Resolution.Kind})
		r.shares = append(r.shares, 0)
		return r
	}
	fire := func(sc int, bp float64, kind string) moduleResult {
		r := one(float64(sc)/100, ind("burn_probability", bp, kind))
		r.spec, r.score = spec(hazard.Wildfire), score(sc)
		return r
	}
	tests := []struct {
		name string
		r    moduleResult
		want string // priority, "" for none
	}{
		{"grid PGA above 0.4 g", eq(95, 0.74, hazard.ResGrid), "high"},
		{"grid PGA below 0.4 g", eq(85, 0.23, hazard.ResGrid), "medium"},
		{"place-table PGA above 0.4 g", eq(99, 0.5, hazard.ResPlaceTable), "high"},
		{"place-table PGA below 0.4 g", eq(90, 0.3, hazard.ResPlaceTable), "medium"},
		{"county value above threshold", eq(95, 0.74, hazard.ResCounty), "medium"},
		{"county value by the margin, benchmark silent", eq(95, 0.74, hazard.ResCounty), "medium"},
		// A county figure beside a county benchmark is still no evidence
		// at the site: never high.
		{"county value by the margin, benchmark agrees", withBench(eq(95, 0.74, hazard.ResCounty), "NRI earthquake rated \"Very High\""), "medium"},
		{"county value short of the margin, benchmark agrees", withBench(eq(95, 0.5, hazard.ResCounty), "NRI earthquake rated \"Very High\""), "medium"},
		{"tornado 1 in 580, benchmark agrees", tornado(99, 0.001726, "NRI tornado rated \"Very High\""), "high"},
		{"tornado 1 in 580, benchmark silent", tornado(99, 0.001726, ""), "medium"},
		{"tornado 1 in 1,900, benchmark agrees (short of the margin)", tornado(92, 0.00053, "NRI tornado rated \"Very High\""), "medium"},
		{"allocated burn probability 1 in 280", fire(98, 0.0036, hazard.ResCountyAllocated), "high"},
		{"allocated burn probability 1 in 900", fire(92, 0.0011, hazard.ResCountyAllocated), "medium"},
		{"county burn probability 1 in 280, benchmark silent", fire(98, 0.0036, hazard.ResCounty), "medium"},
		{"moderate", eq(45, 0.1, hazard.ResGrid), "medium"},
		// Gulfport, MS: 0.056 g and an M5+ within 50 km once in 3,800
		// years rank 48 but are no chance worth acting on.
		{"moderate, negligible chance", quake(48, 0.056, 0.00027), "low"},
		{"moderate, PGA light but M5+ nearby once in 400 years", quake(48, 0.056, 0.0025), "medium"},
		{"moderate, M5+ rare but PGA 0.15 g", quake(48, 0.15, 0.00027), "medium"},
		{"moderate, PGA light, catalog too sparse to say", eq(48, 0.056, hazard.ResGrid), "medium"},
		{"low", eq(25, 0.05, hazard.ResGrid), ""},
		{"no data", moduleResult{spec: spec(hazard.Earthquake), basis: basisNone, driver: -1}, "medium"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := recommendations([]moduleResult{tt.r})
			switch {
			case tt.want == "" && len(got) != 0:
				t.Fatalf("got %+v, want none", got)
			case tt.want != "" && (len(got) != 1 || got[0].Priority != tt.want || got[0].Text == ""):
				t.Fatalf("got %+v, want one %s", got, tt.want)
			}
			if tt.want == "medium" && tt.r.score != nil && *tt.r.score >= 60 && tt.r.meas.Indicators[0].Resolution.Kind == hazard.ResCounty &&
				!strings.Contains(got[0].Text, "County-level screening") {
				t.Errorf("county evidence not worded as screening: %q", got[0].Text)
			}
		})
	}
	// High priority comes first, low last.
	got := recommendations([]moduleResult{quake(48, 0.056, 0.00027), eq(45, 0.1, hazard.ResGrid), eq(95, 0.74, hazard.ResGrid)})
	if len(got) != 3 || got[0].Priority != "high" || got[1].Priority != "medium" || got[2].Priority != "low" {
		t.Errorf("order %+v", got)
	}
	// The low note says why, with the values and the levels.
	if txt := got[2].Text; !strings.Contains(txt, "No earthquake action needed") || !strings.Contains(txt, "0.1 g or less") ||
		!strings.Contains(txt, "1 in 3,700 a year") || strings.Contains(txt, "offer earthquake cover") {
		t.Errorf("negligible note: %q", txt)
	}
}

// TestHighPriorityNamesSiteEvidence sweeps the registry: for every peril,
// evidence far past its High threshold earns a high priority only when it
// is measured at the site, on a grid, from the place table or as the
// site's allocated share of county figures (or from reported events around
// the site, by the margin and with the benchmark agreeing), never from a
// county average or news reports; and the high recommendation names the
// peril, the indicator, its value and the threshold. A peril without a
// High threshold never earns one.
func TestHighPriorityNamesSiteEvidence(t *testing.T) {
	for _, spec := range Registry() {
		for pi, ps := range spec.Perils {
			for _, kind := range []string{hazard.ResSite, hazard.ResGrid, hazard.ResPlaceTable, hazard.ResCountyAllocated, hazard.ResReportedEvents, hazard.ResCounty} {
				id, v := ps.Evidence, 1.0
				if ps.High != nil {
					id, v = ps.High.Indicator, ps.High.AtLeast*10
					if ps.High.AtMost > 0 {
						v = ps.High.AtMost / 10
					}
				}
				ins := []hazard.Indicator{{ID: id, Label: "The evidence", Value: v, Unit: "km", Resolution: hazard.Resolution{Kind: kind, Detail: "d"}}}
				if ps.Relevant != nil {
					ins = append(ins, hazard.Indicator{ID: ps.Relevant.Indicator, Label: "R", Value: ps.Relevant.AtLeast + 1})
				}
				perils := make([]perilResult, len(spec.Perils))
				bench := make([]string, len(spec.Perils))
				for i := range perils {
					perils[i] = perilResult{value: 0.1, share: 0.1}
					bench[i] = "NRI rated \"Very High\""
				}
				perils[pi] = perilResult{value: 0.95, share: 0.95}
				s := 95
				r := moduleResult{spec: &spec, score: &s, basis: basisHazard, driver: pi, perils: perils, benchHigh: bench,
					meas: hazard.Measurement{Indicators: ins}, os: []obs{{id: id, peril: pi, weight: 1, value: v, res: kind}}, shares: []float64{0.95}}
				got := recommendations([]moduleResult{r})
				high := len(got) > 0 && got[0].Priority == "high"
				want := ps.High != nil && kind != hazard.ResCounty
				if high != want {
					t.Errorf("%s/%s from %s evidence: high %v, want %v (%+v)", spec.Key, ps.Key, kind, high, want, got)
					continue
				}
				if high && (!strings.Contains(got[0].Text, "Evidence: "+ps.Title) || !strings.Contains(got[0].Text, "the evidence") ||
					!strings.Contains(got[0].Text, ps.High.Text)) {
					t.Errorf("%s/%s: high priority does not name its evidence and threshold: %q", spec.Key, ps.Key, got[0].Text)
				}
			}
		}
	}
}

// TestSinglePerilShowsModuleScore: a module of one peril states one number,
// the module's (a capped module score included), at every fixture place.
func TestSinglePerilShowsModuleScore(t *testing.T) {
	e := loadFixture(t)
	checked := 0
	for _, p := range [][2]float64{{37.77, -122.44}, {35.47, -97.52}, {39.74, -104.99}, {25.76, -80.19}, {47.6, -122.33}} {
		a, err := e.Assess(context.Background(), p[0], p[1])
		if err != nil {
			continue
		}
		for _, spec := range Registry() {
			if len(spec.Perils) != 1 {
				continue
			}
			mr, _ := a.Report.Modules.Get(spec.Key)
			perils, _ := a.Summary.Perils.Get(spec.Key)
			if mr.Basis != basisHazard || len(perils) != 1 {
				continue
			}
			checked++
			if mr.Score == nil || perils[0].Score == nil || *mr.Score != *perils[0].Score || perils[0].RiskLevel == nil || *perils[0].RiskLevel != *mr.RiskLevel {
				t.Errorf("%v %s: module %v, peril %v", p, spec.Key, scoreText(mr.Score), scoreText(perils[0].Score))
			}
		}
	}
	if checked == 0 {
		t.Fatal("no single-peril module scored at the fixture places")
	}
}

// A Superfund percentile with no active site within 5 km earns no action:
// ranking above residents who live farther away is not a reason for a
// Phase I assessment.
func TestSuperfundRecommendationNeedsANearbySite(t *testing.T) {
	spec, _ := ModuleByKey(hazard.EnvironmentalExposure)
	mk := func(within5, within1 float64) moduleResult {
		ins := []hazard.Indicator{
			{ID: "npl_proximity_index", Label: "P", Value: 0.12, Resolution: hazard.Resolution{Kind: hazard.ResSite}},
			{ID: "npl_sites_5km", Label: "Sites within 5 km", Value: within5, Resolution: hazard.Resolution{Kind: hazard.ResSite}},
			{ID: "npl_sites_1km", Label: "Sites within 1 km", Value: within1, Resolution: hazard.Resolution{Kind: hazard.ResSite}},
		}
		s := 75
		return moduleResult{spec: &spec, score: &s, basis: basisHazard, driver: 0,
			perils: []perilResult{{value: 0.75, share: 0.75}}, meas: hazard.Measurement{Indicators: ins},
			os: []obs{{id: "npl_proximity_index", peril: 0, weight: 1, value: 0.12, res: hazard.ResSite}}, shares: []float64{0.75}}
	}
	if got := recommendations([]moduleResult{mk(0, 0)}); len(got) != 0 {
		t.Errorf("no active site within 5 km: %+v, want none", got)
	}
	if got := recommendations([]moduleResult{mk(2, 0)}); len(got) != 1 || got[0].Priority != "medium" {
		t.Errorf("two sites within 5 km, none within 1 km: %+v, want one medium", got)
	}
	if got := recommendations([]moduleResult{mk(2, 1)}); len(got) != 1 || got[0].Priority != "high" {
		t.Errorf("a site within 1 km: %+v, want one high", got)
	}
}

// The top risks and the overall driver are the scored modules with the
// highest shares, leaving out those whose leading peril misses its
// relevance condition.
func TestTopRisksAndDriver(t *testing.T) {
	score := func(v int) *int { return &v }
	mk := func(key string, sc int) moduleResult {
		s, _ := ModuleByKey(key)
		return moduleResult{spec: &s, score: score(sc), share: float64(sc) / 100, basis: basisHazard, driver: 0, keyReason: "r"}
	}
	fire := func(sc int, bp float64) moduleResult {
		r := mk(hazard.Wildfire, sc)
		r.meas = hazard.Measurement{Indicators: []hazard.Indicator{{ID: "burn_probability", Value: bp}}}
		return r
	}
	results := []moduleResult{mk(hazard.Hydrology, 45), fire(62, 0.001), mk(hazard.Landslide, 79), mk(hazard.Earthquake, 41)}
	got := topRisks(results)
	var keys []string
	for _, r := range got {
		keys = append(keys, r.Module)
	}
	// Landslide reads the terrain since methodology 4: it leads like any
	// other module.
	if want := []string{hazard.Landslide, hazard.Wildfire, hazard.Hydrology}; !slices.Equal(keys, want) {
		t.Errorf("top risks %v, want %v", keys, want)
	}
	if d := overallDriver(results); d != hazard.Landslide {
		t.Errorf("overall driver %q, want landslide (the highest module that can lead, as the first top risk)", d)
	}
	only := []moduleResult{mk(hazard.Landslide, 79)}
	if d := overallDriver(only); d != hazard.Landslide {
		t.Errorf("overall driver %q, want landslide when nothing else is scored", d)
	}
	if d := overallDriver(nil); d != "" {
		t.Errorf("overall driver of nothing %q", d)
	}
	// A wildfire score from a chance below 1 in 10,000 a year leads
	// nothing and earns no recommendation, whatever its percentile.
	faint := []moduleResult{mk(hazard.Hydrology, 45), fire(62, 0.00005)}
	if got := topRisks(faint); len(got) != 1 || got[0].Module != hazard.Hydrology || overallDriver(faint) != hazard.Hydrology {
		t.Errorf("top risks %+v, driver %q: want hydrology alone", got, overallDriver(faint))
	}
	if recs := recommendations(faint[1:]); len(recs) != 0 {
		t.Errorf("recommendations %+v for a 1-in-20,000 chance", recs)
	}
	// A Superfund score without a site within 5 km leads nothing.
	env, _ := ModuleByKey(hazard.EnvironmentalExposure)
	far := moduleResult{spec: &env, score: score(67), share: 0.67, basis: basisHazard, driver: 0, keyReason: "r",
		meas: hazard.Measurement{Indicators: []hazard.Indicator{{ID: "npl_sites_5km", Value: 0}}}}
	mixed := []moduleResult{mk(hazard.Hydrology, 41), far}
	if got := topRisks(mixed); len(got) != 1 || got[0].Module != hazard.Hydrology {
		t.Errorf("top risks %+v, want hydrology alone", got)
	}
	if d := overallDriver(mixed); d != hazard.Hydrology {
		t.Errorf("overall driver %q, want hydrology", d)
	}
}
