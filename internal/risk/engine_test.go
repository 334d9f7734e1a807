package risk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// tracedEngine is the engine on the real data with every reference
// tract's values.
type tracedEngine struct {
	e     *Engine
	trace *referenceTrace
}

// loadRealTraced loads the engine on the real data once per test binary,
// building its reference afresh and keeping every tract's values: the
// tests of the percentile contract read them, and one load (the slowest
// step of this package's tests, several minutes under -race) serves all.
var loadRealTraced = datatest.Once(datatest.Real, func(dir fs.FS) (tracedEngine, error) {
	var tr referenceTrace
	e, err := load(context.Background(), dir, nil, nil, &tr)
	return tracedEngine{e: e, trace: &tr}, err
})

// loadReal is the engine on the real data, loaded once per test binary.
func loadReal(tb testing.TB) *Engine { return loadRealTraced(tb).e }

func loadFixture(t *testing.T) *Engine {
	t.Helper()
	e, err := Load(context.Background(), os.DirFS(datatest.FixtureDir(t)), nil, nil)
	if err != nil {
		t.Fatalf("Load(fixtures): %v", err)
	}
	return e
}

// checkInvariants asserts the contract rules every assessment must keep.
func checkInvariants(t *testing.T, a *Assessment) {
	t.Helper()
	s := a.Summary
	if s.OverallScore < 0 || s.OverallScore > 100 {
		t.Errorf("overallScore %d out of range", s.OverallScore)
	}
	if s.RiskLevel != RiskLevel(s.OverallScore) {
		t.Errorf("riskLevel %q does not match score %d", s.RiskLevel, s.OverallScore)
	}
	if s.Confidence.Score < 0 || s.Confidence.Score > 1 {
		t.Errorf("confidence %v out of range", s.Confidence.Score)
	}
	switch s.Confidence.Level {
	case "low", "medium", "high":
	default:
		t.Errorf("confidence level %q", s.Confidence.Level)
	}
	if len(s.TopRisks) > 3 {
		t.Errorf("%d top risks", len(s.TopRisks))
	}
	for i := 1; i < len(s.TopRisks); i++ {
		if s.TopRisks[i].Score > s.TopRisks[i-1].Score {
			t.Errorf("top risks not highest first: %+v", s.TopRisks)
		}
	}
	noData := map[string]bool{}
	for _, f := range s.ReviewFlags {
		if f.Code == "" || f.Message == "" {
			t.Errorf("empty review flag %+v", f)
		}
		if f.Code == "module_no_data" {
			for _, m := range ModuleKeys() {
				if strings.HasPrefix(f.Message, ModuleTitle(m)+":") {
					noData[m] = true
				}
			}
		}
	}
	if got, want := moduleKeysOf(s.ModuleScores), ModuleKeys(); !reflect.DeepEqual(got, want) {
		t.Errorf("moduleScores keys %v, want %v", got, want)
	}
	if got, want := moduleKeysOf(s.Perils), ModuleKeys(); !reflect.DeepEqual(got, want) {
		t.Errorf("perils keys %v, want %v", got, want)
	}
	for _, e := range a.Report.Modules {
		nm := struct {
			Name   string
			Report *ModuleReport
		}{e.Module, &e.Value}
		sc, _ := s.ModuleScores.Get(nm.Name)
		spec, _ := ModuleByKey(nm.Name)
		if len(nm.Report.Perils) != len(spec.Perils) {
			t.Errorf("%s: %d perils, want %d", nm.Name, len(nm.Report.Perils), len(spec.Perils))
		}
		for _, p := range nm.Report.Perils {
			if p.Score == nil && (p.RiskLevel != nil || p.AnnualProbability != nil) {
				t.Errorf("%s/%s: null score with a level or probability", nm.Name, p.Peril)
			}
			if p.Score != nil && (*p.Score < 0 || *p.Score > 100 || p.RiskLevel == nil || *p.RiskLevel != RiskLevel(*p.Score)) {
				t.Errorf("%s/%s: score %v level %v", nm.Name, p.Peril, *p.Score, p.RiskLevel)
			}
			if p.AnnualProbability != nil && (*p.AnnualProbability <= 0 || *p.AnnualProbability > 1 || (p.ReturnPeriodYears == nil) != (*p.AnnualProbability < minAnnualChance)) {
				t.Errorf("%s/%s: probability %v return period %v", nm.Name, p.Peril, *p.AnnualProbability, p.ReturnPeriodYears)
			}
			if p.AnnualProbability != nil && p.ChanceOf == "" {
				t.Errorf("%s/%s: a probability without the event it is the chance of", nm.Name, p.Peril)
			}
		}
		if strings.Contains(nm.Report.Narrative, "than 0%") || strings.Contains(nm.Report.Narrative, "0 probability") {
			t.Errorf("%s narrative claims a zero: %q", nm.Name, nm.Report.Narrative)
		}
		if !reflect.DeepEqual(sc, nm.Report.Score) {
			t.Errorf("%s: summary score %v != module score %v", nm.Name, sc, nm.Report.Score)
		}
		if sc == nil {
			if !noData[nm.Name] {
				t.Errorf("%s has no score but no module_no_data flag names it", nm.Name)
			}
			if nm.Report.Basis != "no_data" {
				t.Errorf("%s: null score with basis %q", nm.Name, nm.Report.Basis)
			}
			continue
		}
		if *sc < 0 || *sc > 100 {
			t.Errorf("%s score %d out of range", nm.Name, *sc)
		}
		if nm.Report.RiskLevel == nil || *nm.Report.RiskLevel != RiskLevel(*sc) {
			t.Errorf("%s risk level %v for score %d", nm.Name, nm.Report.RiskLevel, *sc)
		}
		if nm.Report.Narrative == "" {
			t.Errorf("%s has no narrative", nm.Name)
		}
		for _, in := range nm.Report.Indicators {
			if in.ID == "" || in.Label == "" || in.Source == "" {
				t.Errorf("%s: incomplete indicator %+v", nm.Name, in)
			}
			if in.Percentile != nil && (*in.Percentile < 0 || *in.Percentile > 100) {
				t.Errorf("%s: indicator %s percentile %v", nm.Name, in.ID, *in.Percentile)
			}
			switch in.Resolution {
			case hazard.ResSite, hazard.ResGrid, hazard.ResPlaceTable, hazard.ResCountyAllocated, hazard.ResReportedEvents, hazard.ResCounty:
			default:
				t.Errorf("%s: indicator %s resolution %q", nm.Name, in.ID, in.Resolution)
			}
		}
	}
	for _, r := range s.Recommendations {
		switch r.Priority {
		case "high", "medium", "low":
		default:
			t.Errorf("recommendation priority %q", r.Priority)
		}
	}
	if len(a.Report.Sources) == 0 || a.Report.Methodology.Version != MethodologyVersion {
		t.Errorf("sources %v, methodology %+v", a.Report.Sources, a.Report.Methodology)
	}
	for _, src := range a.Report.Sources {
		if src.Publisher == "" || src.Version == "" || src.Name == "" {
			t.Errorf("incomplete source %+v", src)
		}
	}
	checkOutlook(t, a)
}

func TestFixtureCoverage(t *testing.T) {
	e := loadFixture(t)
	tests := []struct {
		name     string
		lat, lon float64
		fips     string // "" = unsupported
	}{
		{"San Francisco", 37.77, -122.42, "06075"},
		{"Chicago", 41.88, -87.63, "17031"},
		{"Oklahoma City", 35.47, -97.52, "40109"},
		{"Miami", 25.76, -80.19, "12086"},
		{"Aleutians west of the antimeridian", 52.0, 179.5, "02016"},
		{"Aleutians east of the antimeridian", 52.0, -179.5, "02016"},
		{"San Juan", 18.43, -66.06, "72127"},
		{"Guam", 13.45, 144.78, "66010"},
		{"St. Croix", 17.73, -64.75, "78010"},
		{"Saipan", 15.2, 145.75, "69110"},
		{"Honolulu", 21.3, -157.85, "15003"},
		{"on a pier 0.5 km off the Miami box", 25.5, -80.115, "12086"},
		{"5 km offshore of Miami", 25.5, -80.07, ""},
		{"American Samoa", -14.3, -170.7, "60010"},
		{"Toronto", 43.65, -79.38, ""},
		{"Monterrey", 25.67, -100.31, ""},
		{"mid-Atlantic", 35, -40, ""},
		{"null island", 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := e.Locate(tt.lat, tt.lon)
			a, aerr := e.Assess(context.Background(), tt.lat, tt.lon)
			if tt.fips == "" {
				if !errors.Is(err, ErrUnsupportedLocation) || !errors.Is(aerr, ErrUnsupportedLocation) {
					t.Fatalf("Locate err %v, Assess err %v; want ErrUnsupportedLocation", err, aerr)
				}
				return
			}
			if err != nil || aerr != nil {
				t.Fatalf("Locate err %v, Assess err %v", err, aerr)
			}
			if loc.CountyFIPS != tt.fips || a.Location.CountyFIPS != tt.fips {
				t.Fatalf("county %s / %s, want %s", loc.CountyFIPS, a.Location.CountyFIPS, tt.fips)
			}
			if loc.StateCode == "" || loc.StateName == "" || loc.CountyName == "" {
				t.Fatalf("incomplete location %+v", loc)
			}
			checkInvariants(t, a)
		})
	}
}

func TestFixtureTerritoryFlags(t *testing.T) {
	e := loadFixture(t)
	a, err := e.Assess(context.Background(), 13.45, 144.78)
	if err != nil {
		t.Fatal(err)
	}
	if !hasFlag(a, "territory_partial_data") {
		t.Fatalf("Guam report lacks territory_partial_data: %+v", a.Summary.ReviewFlags)
	}
}

func moduleKeysOf[T any](b ByModule[T]) []string {
	var out []string
	for _, e := range b {
		out = append(out, e.Module)
	}
	return out
}

// scoreText writes a score for a message: its number, or null.
func scoreText(s *int) string {
	if s == nil {
		return "null"
	}
	return strconv.Itoa(*s)
}

func hasFlag(a *Assessment, code string) bool {
	for _, f := range a.Summary.ReviewFlags {
		if f.Code == code {
			return true
		}
	}
	return false
}

func TestAssessDeterministic(t *testing.T) {
	e := loadFixture(t)
	var first []byte
	for i := 0; i < 5; i++ {
		a, err := e.Assess(context.Background(), 37.77, -122.42)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(a)
		if first == nil {
			first = b
		} else if string(b) != string(first) {
			t.Fatalf("assessment %d differs from the first", i)
		}
	}
}

func TestLoadMissingData(t *testing.T) {
	_, err := Load(context.Background(), os.DirFS(t.TempDir()), nil, nil)
	if !errors.Is(err, data.ErrNoManifest) {
		t.Fatalf("Load(empty folder) error = %v; want ErrNoManifest", err)
	}
	// The fixture manifest without its files: every one named.
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(datatest.FixtureDir(t), data.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, data.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(context.Background(), os.DirFS(dir), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "earthquake/usgs_nshm2018_pga_2pct50yr_BC_conus_0p05deg.csv") ||
		strings.Count(err.Error(), ": missing") != len(data.Catalog()) {
		t.Fatalf("Load(manifest only) error = %v; want one naming every missing file", err)
	}
}

func TestLoadMalformedNamesFileAndLine(t *testing.T) {
	// A broken copy of the first row as line 3.
	dir := fixtureWithBrokenSuperfund(t, func(lines []string) []string {
		return append(lines[:2], append([]string{breakRow(lines[1])}, lines[2:]...)...)
	})
	_, err := Load(context.Background(), os.DirFS(dir), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "epa_superfund_npl_sites_2022-09.csv line 3") {
		t.Fatalf("Load(malformed) error = %v; want the file and line 3", err)
	}
}

func TestCheckListsLayers(t *testing.T) {
	var b strings.Builder
	if err := Check(context.Background(), os.DirFS(datatest.FixtureDir(t)), &b); err != nil {
		t.Fatalf("Check(fixtures): %v\n%s", err, b.String())
	}
	out := b.String()
	for _, want := range []string{"usgs-nshm-2018-pga", "epa-superfund-npl", "census-cenpop-2020-tracts", "census-cenpop-2020-blockgroups", fmt.Sprintf("all %d layers loaded", len(data.Catalog()))} {
		if !strings.Contains(out, want) {
			t.Errorf("Check output lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := Check(context.Background(), os.DirFS(t.TempDir()), &b); !errors.Is(err, data.ErrNoManifest) {
		t.Fatalf("Check(empty) err %v, want ErrNoManifest", err)
	}
	// The fixture manifest without its files: every layer MISSING.
	dir := t.TempDir()
	m, err := os.ReadFile(filepath.Join(datatest.FixtureDir(t), data.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, data.ManifestName), m, 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := Check(context.Background(), os.DirFS(dir), &b); err == nil || strings.Count(b.String(), "MISSING") != len(data.Catalog()) {
		t.Fatalf("Check(manifest only) err %v output:\n%s", err, b.String())
	}
}

// fixtureWithBrokenSuperfund copies the fixture pack, edits the lines of
// its Superfund table with edit, and reseals the manifest, so that the
// parser, not the manifest check, meets what edit broke.
func fixtureWithBrokenSuperfund(t *testing.T, edit func(lines []string) []string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(datatest.FixtureDir(t))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "environmental", "epa_superfund_npl_sites_2022-09.csv")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := edit(strings.Split(string(b), "\n"))
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	resealPack(t, dir)
	return dir
}

// breakRow puts a field that is not a latitude into a Superfund row.
func breakRow(row string) string {
	return strings.Replace(row, ",NPL Site,", ",NPL Site,not-a-latitude,", 1)
}

// resealPack rewrites the sizes and checksums in dir's manifest to match
// its files, as an operator does after replacing a data file
// (docs/data.md, "Replacing a data set").
func resealPack(t *testing.T, dir string) {
	t.Helper()
	m, err := data.ReadManifest(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range m.Files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		m.Files[i].Bytes, m.Files[i].SHA256 = int64(len(b)), hex.EncodeToString(sum[:])
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, data.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOverallValue(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		shares []float64
		want   float64
	}{
		{[]float64{0.8}, 0.8},
		{[]float64{0.5, 0.5}, 0.75},
		{[]float64{0.5, nan, 0}, 0.5}, // modules without a score do not count
		{[]float64{1, 0.2}, 1},
	}
	for _, tt := range tests {
		if got := overallValue(tt.shares); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("overallValue(%v) = %v, want %v", tt.shares, got, tt.want)
		}
	}
	if got := overallValue([]float64{nan, nan}); !math.IsNaN(got) {
		t.Errorf("overallValue(no scores) = %v, want NaN", got)
	}
	// The worst module dominates, and breadth still raises the index.
	if !(overallValue([]float64{0.9, 0.1}) > overallValue([]float64{0.8, 0.3})) {
		t.Error("a 90th-percentile module should outweigh two middling ones")
	}
	if !(overallValue([]float64{0.9, 0.5}) > overallValue([]float64{0.9, 0.1})) {
		t.Error("a second hazard should raise the index")
	}
}

func TestDistributionStrictlyBelow(t *testing.T) {
	d := newDistribution([]weighted{{0, 4}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}, {math.NaN(), 50}})
	for _, tt := range []struct{ v, below, atOrBelow float64 }{
		{0, 0, 0.4}, {0.5, 0.4, 0.4}, {1, 0.4, 0.5}, {6, 0.9, 1}, {100, 1, 1}, {-1, 0, 0},
	} {
		if got := d.below(tt.v); math.Abs(got-tt.below) > 1e-12 {
			t.Errorf("below(%v) = %v, want %v", tt.v, got, tt.below)
		}
		if got := d.atOrBelow(tt.v); math.Abs(got-tt.atOrBelow) > 1e-12 {
			t.Errorf("atOrBelow(%v) = %v, want %v", tt.v, got, tt.atOrBelow)
		}
	}
	if q := d.quantile(0.95); q != 6 {
		t.Errorf("quantile(0.95) = %v, want 6", q)
	}
	if !newDistribution(nil).empty() || !newDistribution([]weighted{{1, 0}}).empty() {
		t.Error("a distribution without weight is not empty")
	}
	for _, tt := range []struct {
		share float64
		want  int
	}{{0, 0}, {0.004, 0}, {0.8, 80}, {0.7999999, 79}, {0.99999, 99}, {1, 100}} {
		if got := scoreOf(tt.share); got != tt.want {
			t.Errorf("scoreOf(%v) = %d, want %d", tt.share, got, tt.want)
		}
	}
}

func TestRiskLevelBands(t *testing.T) {
	for _, tt := range []struct {
		s    int
		want string
	}{{0, "very_low"}, {19, "very_low"}, {20, "low"}, {39, "low"}, {40, "moderate"}, {59, "moderate"}, {60, "high"}, {79, "high"}, {80, "very_high"}, {100, "very_high"}} {
		if got := RiskLevel(tt.s); got != tt.want {
			t.Errorf("RiskLevel(%d) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

// TestCheckMalformedLayer: one broken file is reported as its own layer;
// the layers read by other modules still load and show their rows.
func TestCheckMalformedLayer(t *testing.T) {
	dir := fixtureWithBrokenSuperfund(t, func(lines []string) []string {
		lines[1] = breakRow(lines[1])
		return lines
	})
	var out strings.Builder
	err := Check(context.Background(), os.DirFS(dir), &out)
	if err == nil || !strings.Contains(err.Error(), "epa_superfund_npl_sites_2022-09.csv line 2") {
		t.Errorf("Check error = %v; want the file and line", err)
	}
	status := map[string][]string{}
	for l := range strings.Lines(out.String()) {
		if f := strings.Fields(l); len(f) >= 4 {
			status[f[0]] = f[2:4]
		}
	}
	for id, want := range map[string][]string{
		"epa-superfund-npl":         {"MALFORMED", "-"},
		"usgs-nshm-2018-pga":        {"ok"},
		"census-cenpop-2020-tracts": {"ok"},
		"fema-nri-v1.20":            {"ok"},
	} {
		got := status[id]
		if len(got) < 2 || got[0] != want[0] || (want[0] == "ok" && got[1] == "-") || (len(want) > 1 && got[1] != want[1]) {
			t.Errorf("layer %s: %v, want %v (with rows when ok)\n%s", id, got, want, out.String())
		}
	}
	if n := strings.Count(out.String(), " ok "); n < 20 {
		t.Errorf("%d layers ok, want all but the environmental ones\n%s", n, out.String())
	}
}

// A data folder with a manifest is a data pack: its version comes from the
// manifest's checksums, and a file that differs from the manifest stops
// the load naming it. A folder without one is refused.
func TestDataPackVersionAndVerification(t *testing.T) {
	src := datatest.FixtureDir(t)
	m, err := data.ReadManifest(os.DirFS(src))
	if err != nil {
		t.Fatal(err)
	}
	e := loadFixture(t)
	if e.DataVersion() != m.Version() {
		t.Errorf("data version %s, manifest's %s", e.DataVersion(), m.Version())
	}
	copyPack := func(t *testing.T, withManifest bool) string {
		dir := t.TempDir()
		files := []string{}
		for _, f := range m.Files {
			files = append(files, f.Path)
		}
		if withManifest {
			files = append(files, data.ManifestName)
		}
		for _, rel := range files {
			b, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(rel)))
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	t.Run("changed file", func(t *testing.T) {
		dir := copyPack(t, true)
		p := filepath.Join(dir, filepath.FromSlash(data.Path("epa-superfund-npl")))
		b, _ := os.ReadFile(p)
		if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(context.Background(), os.DirFS(dir), nil, nil)
		if err == nil || !strings.Contains(err.Error(), "the data do not match their manifest.json") || !strings.Contains(err.Error(), "epa_superfund_npl_sites_2022-09.csv: size") {
			t.Errorf("error %v, want the changed file named", err)
		}
	})
	t.Run("changed file, unparsable", func(t *testing.T) {
		dir := copyPack(t, true)
		p := filepath.Join(dir, filepath.FromSlash(data.Path("usfs-wrc-v1")))
		b, _ := os.ReadFile(p)
		if err := os.WriteFile(p, append(b, []byte("x,y\n")...), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, run := range []func() error{
			func() error { _, err := Load(context.Background(), os.DirFS(dir), nil, nil); return err },
			func() error { return Check(context.Background(), os.DirFS(dir), io.Discard) },
		} {
			if err := run(); err == nil || !strings.Contains(err.Error(), "the data do not match their manifest.json") || !strings.Contains(err.Error(), "wrc_v1_county_summary_2020-03-31.csv: size") {
				t.Errorf("error %v, want the manifest check to name the file first", err)
			}
		}
	})
	t.Run("no manifest", func(t *testing.T) {
		dir := copyPack(t, false)
		if _, err := Load(context.Background(), os.DirFS(dir), nil, nil); !errors.Is(err, data.ErrNoManifest) {
			t.Errorf("Load without a manifest: %v, want ErrNoManifest", err)
		}
	})
	t.Run("resealed", func(t *testing.T) {
		// A data update: one file changed and the manifest following it
		// loads, under a new version.
		dir := copyPack(t, true)
		p := filepath.Join(dir, filepath.FromSlash(data.Path("epa-superfund-npl")))
		b, _ := os.ReadFile(p)
		if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		resealPack(t, dir)
		e, err := Load(context.Background(), os.DirFS(dir), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if v := e.DataVersion(); v == m.Version() || !strings.HasPrefix(v, "data-") {
			t.Errorf("version after the update %s (before %s)", v, m.Version())
		}
	})
}

// TestAssessRecordsProvenance: every assessment records the methodology,
// the data version and the manifest digest it was made with, and the
// engine's version (docs/verification.md).
func TestAssessRecordsProvenance(t *testing.T) {
	e := loadFixture(t)
	a, err := e.Assess(context.Background(), 37.77, -122.42)
	if err != nil {
		t.Fatal(err)
	}
	p := a.Provenance
	if p == nil {
		t.Fatal("no provenance")
	}
	if p.MethodologyVersion != MethodologyVersion || p.DataVersion != e.DataVersion() || p.DataVersion != a.DataVersion {
		t.Errorf("provenance %+v; methodology %s, data %s", p, MethodologyVersion, e.DataVersion())
	}
	if len(p.DataManifestSHA256) != 64 || "data-"+p.DataManifestSHA256[:12] != p.DataVersion {
		t.Errorf("manifest digest %q does not make the data version %s", p.DataManifestSHA256, p.DataVersion)
	}
	if p.EngineVersion == "" {
		t.Error("no engine version")
	}
	b, err := a.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"provenance":{"engineVersion":`) {
		t.Errorf("the stored body carries no provenance: ...%s", b[max(0, len(b)-300):])
	}
}
