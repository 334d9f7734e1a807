package environment

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

var fixture = datatest.Once(datatest.Fixture, Load)

var (
	chicago  = hazard.Site{Lat: 41.8781, Lon: -87.6298, CountyFIPS: "17031", StateFIPS: "17", StateCode: "IL", Conus: true}
	okc      = hazard.Site{Lat: 35.4676, Lon: -97.5164, CountyFIPS: "40109", StateFIPS: "40", StateCode: "OK", Conus: true}
	denver   = hazard.Site{Lat: 39.7392, Lon: -104.9903, CountyFIPS: "08031", StateFIPS: "08", StateCode: "CO", Conus: true}
	miami    = hazard.Site{Lat: 25.7617, Lon: -80.1918, CountyFIPS: "12086", StateFIPS: "12", StateCode: "FL", Conus: true}
	honolulu = hazard.Site{Lat: 21.3069, Lon: -157.8583, CountyFIPS: "15003", StateFIPS: "15", StateCode: "HI"}
)

func indicator(t *testing.T, m hazard.Measurement, id string) hazard.Indicator {
	t.Helper()
	for _, in := range m.Indicators {
		if in.ID == id {
			return in
		}
	}
	t.Fatalf("indicator %s missing", id)
	return hazard.Indicator{}
}

func value(t *testing.T, m hazard.Measurement, id string) float64 {
	t.Helper()
	return indicator(t, m, id).Value
}

func has(m hazard.Measurement, id string) bool {
	for _, in := range m.Indicators {
		if in.ID == id {
			return true
		}
	}
	return false
}

func TestFixtureLoad(t *testing.T) {
	m := fixture(t)
	if got := m.Rows(); !reflect.DeepEqual(got, map[string]int{SrcNPL: 17}) {
		t.Errorf("Rows() = %v", got)
	}
	if m.Name() != hazard.EnvironmentalExposure || !reflect.DeepEqual(m.Sources(), []string{SrcNPL}) {
		t.Errorf("Name %q, Sources %v", m.Name(), m.Sources())
	}
	if _, ok := data.SourceByID(SrcNPL); !ok {
		t.Errorf("%s is not in the data catalog", SrcNPL)
	}
	// The first column name carries the file's byte-order mark; HTML
	// entities in names are decoded.
	if got := m.sites[0].name; got != "Loop Plating Works" {
		t.Errorf("first site %q", got)
	}
	var pr site
	for _, s := range m.sites {
		if s.state == "Puerto Rico" {
			pr = s
		}
	}
	if want := "Vertedero de Peñuelas (final), Peñuelas, Puerto Rico"; pr.describe() != want {
		t.Errorf("describe = %q, want %q", pr.describe(), want)
	}
}

func TestChicago(t *testing.T) {
	m := fixture(t)
	ms := m.Measure(chicago)
	// Final 0.5 km, deleted 0.8 km, proposed 2.5 km, final 4.5 km, final 12 km.
	want := map[string]float64{
		IndActiveWithin1Km:      1,
		"npl_sites_3km":         2,
		"npl_sites_5km":         3,
		"npl_deleted_sites_5km": 1,
	}
	for id, w := range want {
		if got := value(t, ms, id); got != w {
			t.Errorf("%s = %g, want %g", id, got, w)
		}
	}
	// EJScreen: 1/d summed over the final and proposed sites within 5 km;
	// the deleted site 0.8 km away and the final one at 12 km add nothing.
	wantIndex := 1/0.5 + 1/2.5 + 1/4.5
	if got := value(t, ms, IndProximity); math.Abs(got-wantIndex) > 1e-3 {
		t.Errorf("proximity index %g, want 1/0.5 + 1/2.5 + 1/4.5 = %g", got, wantIndex)
	}
	if got := indicator(t, ms, "nearest_npl_site").Text; got != "Loop Plating Works (final), Chicago, Illinois" {
		t.Errorf("nearest site %q", got)
	}
	if d := value(t, ms, "nearest_npl_site_km"); math.Abs(d-0.5) > 0.001 {
		t.Errorf("nearest distance %g, want 0.5", d)
	}
	if len(ms.Flags) != 1 || ms.Flags[0].Code != "near_superfund_site" ||
		!strings.Contains(ms.Flags[0].Message, "Loop Plating Works (final), Chicago, Illinois is 0.5 km") {
		t.Errorf("flags %+v", ms.Flags)
	}
	wantNote := "The nearest Superfund NPL site is Loop Plating Works (final), Chicago, Illinois, 0.5 km away; 3 final or proposed NPL sites lie within 5 km. One deleted site (cleanup complete) also lies within 5 km; it carries no weight."
	if len(ms.Notes) != 1 || ms.Notes[0] != wantNote {
		t.Errorf("notes %q, want %q", ms.Notes, wantNote)
	}
	if ms.Quality != 0.75 {
		t.Errorf("quality %g, want 0.75", ms.Quality)
	}
	// Site distances, not a county aggregate.
	if in := indicator(t, ms, IndProximity); in.Resolution.Kind != hazard.ResSite || in.Peril != hazard.PerilSuperfund || in.Unit != "per km" {
		t.Errorf("proximity index peril %q resolution %+v unit %q, want %q at the site, per km", in.Peril, in.Resolution, in.Unit, hazard.PerilSuperfund)
	}
}

func TestRadiusEdges(t *testing.T) {
	m := fixture(t)
	// Final sites due north of OKC at 0.99, 1.01, 2.99, 3.01, 4.99, 5.01,
	// 9.99 and 10.01 km.
	ms := m.Measure(okc)
	for id, w := range map[string]float64{"npl_sites_1km": 1, "npl_sites_3km": 3, "npl_sites_5km": 5, "npl_deleted_sites_5km": 0} {
		if got := value(t, ms, id); got != w {
			t.Errorf("%s = %g, want %g", id, got, w)
		}
	}
	want := 1/0.99 + 1/1.01 + 1/2.99 + 1/3.01 + 1/4.99
	if got := value(t, ms, IndProximity); math.Abs(got-want) > 1e-3 {
		t.Errorf("proximity index %g, want %g (the sites beyond 5 km must not count)", got, want)
	}
	if len(ms.Flags) != 1 || !strings.Contains(ms.Flags[0].Message, "1.0 km") {
		t.Errorf("flags %+v, want one for the site 0.99 km away", ms.Flags)
	}
	// Half a kilometre north, the first two sites are both within 1 km.
	mid := okc
	mid.Lat += 0.5 / (6371.0088 * math.Pi / 180)
	if fl := m.Measure(mid).Flags; len(fl) != 1 || !strings.Contains(fl[0].Message, "Radius Test Site 0.99 km (final), Oklahoma City, Oklahoma is 0.5 km") ||
		!strings.Contains(fl[0].Message, "one other final or proposed NPL site lies within 1 km") {
		t.Errorf("two sites within 1 km: flags %+v", fl)
	}
	// 30 m further south, the closest site is 1.02 km away: no flag.
	south := okc
	south.Lat -= 0.03 / (6371.0088 * math.Pi / 180)
	if fl := m.Measure(south).Flags; len(fl) != 0 {
		t.Errorf("1.02 km from the nearest site: flags %+v", fl)
	}
}

func TestDeletedSiteAlone(t *testing.T) {
	m := fixture(t)
	// Right on the deleted Lakefront Foundry, 0.8 km east of the Loop: the
	// final Loop Plating site is ~0.94 km away and flags; the deleted
	// site is the nearest but does not flag on its own.
	lake := chicago
	lake.Lon += 0.8 / (math.Cos(lake.Lat*math.Pi/180) * 6371.0088 * math.Pi / 180)
	ms := m.Measure(lake)
	if got := indicator(t, ms, "nearest_npl_site").Text; !strings.HasPrefix(got, "Lakefront Foundry (deleted)") {
		t.Errorf("nearest %q, want the deleted Lakefront Foundry", got)
	}
	if len(ms.Flags) != 1 || !strings.Contains(ms.Flags[0].Message, "Loop Plating Works") {
		t.Errorf("flags %+v, want the final site only", ms.Flags)
	}
}

func TestFarAndNoSites(t *testing.T) {
	m := fixture(t)
	cases := []struct {
		name    string
		site    hazard.Site
		nearest string  // "" for none within 100 km
		km      float64 // approximate distance
		index   float64 // EJScreen: 1/km to the nearest active site, 1/500 beyond 500 km
	}{
		{"Denver: a site 60 km away, found beyond the 5 km index radius", denver, "Front Range Test Site (final), Golden, Colorado", 59.3, 1 / 59.3},
		{"Honolulu", honolulu, "Pearl Harbor Test Complex (final), Pearl Harbor, Hawaii", 11.9, 1 / 11.9},
		// The nearest active site (Peñuelas PR) is some 1,600 km away.
		{"Miami: nothing within 100 km", miami, "", 0, 1.0 / 500},
	}
	for _, c := range cases {
		ms := m.Measure(c.site)
		idx := value(t, ms, IndProximity)
		if math.Abs(idx-c.index) > 0.01*c.index {
			t.Errorf("%s: proximity index %g, want about %g (no site within 5 km: 1/distance to the nearest)", c.name, idx, c.index)
		}
		if c.nearest != "" {
			// The nearest site is active: the index is exactly 1/its distance.
			if d := value(t, ms, IndNearestSiteKm); math.Abs(idx-1/d) > 1e-12 {
				t.Errorf("%s: proximity index %g, want 1/%g", c.name, idx, d)
			}
		} else if idx != 1/farCapKm {
			t.Errorf("%s: proximity index %g, want exactly 1/%g", c.name, idx, farCapKm)
		}
		if len(ms.Flags) != 0 {
			t.Errorf("%s: flags %+v", c.name, ms.Flags)
		}
		d := indicator(t, ms, "nearest_npl_site_km")
		if c.nearest == "" {
			if d.Value != nearestMaxKm || !strings.Contains(d.Label, "capped") || has(ms, "nearest_npl_site") {
				t.Errorf("%s: nearest %g (%q), want the 100 km cap and no name", c.name, d.Value, d.Label)
			}
			if ms.Notes[0] != "No Superfund NPL site lies within 100 km." {
				t.Errorf("%s: notes %q", c.name, ms.Notes)
			}
			continue
		}
		if got := indicator(t, ms, "nearest_npl_site").Text; got != c.nearest {
			t.Errorf("%s: nearest %q, want %q", c.name, got, c.nearest)
		}
		if math.Abs(d.Value-c.km) > 0.5 {
			t.Errorf("%s: nearest distance %g, want about %g", c.name, d.Value, c.km)
		}
	}
}

func TestAntimeridian(t *testing.T) {
	m := fixture(t)
	// The test dump sits at 179.95 E; this point is 0.06 degrees of
	// longitude away on the other side of the antimeridian.
	ms := m.Measure(hazard.Site{Lat: 51.80, Lon: -179.99, CountyFIPS: "02016", StateCode: "AK"})
	if n := value(t, ms, "npl_sites_5km"); n != 1 {
		t.Errorf("sites within 5 km: %g, want 1", n)
	}
	want := 0.06 * math.Cos(51.8*math.Pi/180) * 6371.0088 * math.Pi / 180
	if d := value(t, ms, "nearest_npl_site_km"); math.Abs(d-want) > 0.01 {
		t.Errorf("distance across the antimeridian %g, want %g", d, want)
	}
	if idx := value(t, ms, IndProximity); math.Abs(idx-1/want) > 1e-3 {
		t.Errorf("proximity index %g, want %g", idx, 1/want)
	}
}

func TestIndicatorContract(t *testing.T) {
	m := fixture(t)
	aleutians := hazard.Site{Lat: 51.80, Lon: -179.99, CountyFIPS: "02016", StateFIPS: "02", StateCode: "AK"}
	kinds := map[string]bool{hazard.ResSite: true, hazard.ResGrid: true, hazard.ResReportedEvents: true, hazard.ResCounty: true}
	for _, s := range []hazard.Site{chicago, okc, denver, miami, honolulu, aleutians} {
		ms := m.Measure(s)
		if !ms.HasHazardData() {
			t.Errorf("%s: no weighted indicator", s.CountyFIPS)
		}
		if ms.Quality != quality {
			t.Errorf("%s: quality %g, want %g", s.CountyFIPS, ms.Quality, quality)
		}
		for _, in := range ms.Indicators {
			if (in.ID == "npl_proximity_index") != in.Ranked || (in.Weight > 0) != in.Ranked {
				t.Errorf("%s: %s ranked=%v weight=%g", s.CountyFIPS, in.ID, in.Ranked, in.Weight)
			}
			if in.Label == "" || in.Unit == "" || in.Source != SrcNPL || in.Value < 0 || math.IsNaN(in.Value) {
				t.Errorf("%s: %+v", s.CountyFIPS, in)
			}
			// Every indicator here, weighted or not, is a Superfund
			// distance measured at the site.
			if in.Peril != hazard.PerilSuperfund {
				t.Errorf("%s: %s peril %q, want %q", s.CountyFIPS, in.ID, in.Peril, hazard.PerilSuperfund)
			}
			if !kinds[in.Resolution.Kind] {
				t.Errorf("%s: %s resolution kind %q is not one of the four", s.CountyFIPS, in.ID, in.Resolution.Kind)
			} else if in.Resolution.Kind != hazard.ResSite {
				t.Errorf("%s: %s resolution kind %q, want %q", s.CountyFIPS, in.ID, in.Resolution.Kind, hazard.ResSite)
			}
		}
	}
	// The index orders places: nothing within 500 km is the floor 1/500,
	// a final site 500 m away is far above it.
	if a, b := value(t, m.Measure(chicago), IndProximity), value(t, m.Measure(miami), IndProximity); !(a > 2 && b == 1/farCapKm) {
		t.Errorf("index Chicago %g, Miami %g; want > 2 and 1/%g", a, b, farCapKm)
	}
	if in := indicator(t, m.Measure(okc), IndProximity); in.Unit != "per km" || in.Weight != 1 || !in.Ranked {
		t.Errorf("proximity indicator %+v, want ranked, weight 1, per km", in)
	}
}

func TestDeterministicAndConcurrent(t *testing.T) {
	m := fixture(t)
	sites := []hazard.Site{chicago, okc, denver, miami, honolulu}
	want := make([]hazard.Measurement, len(sites))
	for i, s := range sites {
		want[i] = m.Measure(s)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, s := range sites {
				if got := m.Measure(s); !reflect.DeepEqual(got, want[i]) {
					t.Errorf("%s: Measure differs between calls", s.CountyFIPS)
				}
			}
		}()
	}
	wg.Wait()
}

func TestMalformedFile(t *testing.T) {
	rel := data.Path(SrcNPL)
	orig, err := os.ReadFile(filepath.Join(datatest.FixtureDir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(orig), "\r\n")
	with := func(n int, f func(string) string) string {
		c := append([]string(nil), lines...)
		c[n-1] = f(c[n-1])
		return strings.Join(c, "\r\n")
	}
	cases := []struct {
		name, content string
		want          []string
	}{
		{"unknown status", with(3, func(s string) string { return strings.Replace(s, "Deleted NPL Site", "Archived Site", 1) }), []string{"line 3", `"Status"`, "Archived Site"}},
		{"latitude", with(4, func(s string) string { return strings.Replace(s, "41.85", "41,85", 1) }), []string{"line 4"}},
		{"missing longitude", with(2, func(s string) string { return strings.Replace(s, ",-87.6298,", ",,", 1) }), []string{"line 2", `"Longitude" is empty`}},
		{"latitude out of range", with(5, func(s string) string { return strings.Replace(s, ",41.8781,", ",141.8781,", 1) }), []string{"line 5", "out of range"}},
		{"missing column", "Site Name,State,City,Latitude,Longitude\r\nA,B,C,1,2\r\n", []string{"line 1", `"Status"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(os.DirFS(dir))
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range append(c.want, rel) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		if _, err := Load(os.DirFS(t.TempDir())); !errors.Is(err, data.ErrMissing) {
			t.Errorf("error %v, want data.ErrMissing", err)
		}
	})
}

// north returns the point km due north of (lat, lon): its haversine
// distance from there is km to rounding.
func north(lat, lon, km float64) hazard.Site {
	return hazard.Site{Lat: lat + km/geo.KmPerDegLat, Lon: lon, StateCode: "CO", Conus: true}
}

// TestEJScreenProximity checks EJScreen's formula on the fixture's isolated
// Front Range Test Site (final, 40.1 N 105.5 W, no other site within 500
// km to the north): 1/max(d, 0.1 km) within 5 km, 1/d to the nearest active
// site beyond, 1/500 beyond 500 km.
func TestEJScreenProximity(t *testing.T) {
	m := fixture(t)
	const lat, lon = 40.1, -105.5
	tests := []struct {
		name    string
		km      float64
		want    float64
		active5 float64
	}{
		{"on the site point: the 0.1 km floor", 0, 1 / 0.1, 1},
		{"50 m: the floor", 0.05, 1 / 0.1, 1},
		{"at the floor", 0.1, 1 / 0.1, 1},
		{"200 m", 0.2, 1 / 0.2, 1},
		{"1 km", 1, 1, 1},
		{"4.9 km: inside the 5 km sum", 4.9, 1 / 4.9, 1},
		{"4.999 km", 4.999, 1 / 4.999, 1},
		{"5.001 km: the nearest site, no jump to 0", 5.001, 1 / 5.001, 0},
		{"5.1 km", 5.1, 1 / 5.1, 0},
		{"60 km", 60, 1.0 / 60, 0},
		{"499 km", 499, 1.0 / 499, 0},
		{"501 km: the 500 km cap", 501, 1.0 / 500, 0},
		{"800 km: the cap", 800, 1.0 / 500, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms := m.Measure(north(lat, lon, tc.km))
			if got := value(t, ms, IndProximity); math.Abs(got-tc.want) > 1e-9*tc.want {
				t.Errorf("proximity %.12g, want %.12g", got, tc.want)
			}
			if got := value(t, ms, "npl_sites_5km"); got != tc.active5 {
				t.Errorf("npl_sites_5km %g, want %g", got, tc.active5)
			}
			if ms.Quality != 0.75 {
				t.Errorf("quality %g, want 0.75", ms.Quality)
			}
		})
	}
	// Continuity across the 5 km radius: the index falls smoothly.
	for _, pair := range [][2]float64{{4.9, 5.1}, {4.999, 5.001}, {499.9, 500.1}} {
		a := value(t, m.Measure(north(lat, lon, pair[0])), IndProximity)
		b := value(t, m.Measure(north(lat, lon, pair[1])), IndProximity)
		if !(a >= b) || a-b > 1/pair[0]-1/pair[1]+1e-9 {
			t.Errorf("index %g at %g km, %g at %g km: want a fall of at most %g", a, pair[0], b, pair[1], 1/pair[0]-1/pair[1])
		}
	}
}

// world loads the module from a small hand-written NPL list.
func world(t *testing.T, rows ...string) *Module {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, data.Path(SrcNPL))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	content := "Site Name,State,City,Status,Latitude,Longitude\n" + strings.Join(rows, "\n") + "\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEJScreenDeletedAndProposed checks that deleted sites carry no weight
// (context count only, even when they are the only site within 5 km) and
// that proposed sites count like final ones.
func TestEJScreenDeletedAndProposed(t *testing.T) {
	lat7 := 45 + 7/geo.KmPerDegLat
	m := world(t,
		"Cleaned Yard,Nowhere,Testville,Deleted NPL Site,45,-100",
		"Active Works,Nowhere,Testville,NPL Site,"+strconv.FormatFloat(lat7, 'f', -1, 64)+",-100",
		"Listed Later,Nowhere,Testville,Proposed NPL Site,30,-100",
	)
	lone := world(t, "Only Deleted,Nowhere,Testville,Deleted NPL Site,45,-100")
	tests := []struct {
		name              string
		m                 *Module
		site              hazard.Site
		want              float64
		active5, deleted5 float64
		nearest           string
	}{
		{"deleted 0.8 km, active 7.8 km: from the active one", m, north(45, -100, -0.8), 1 / 7.8, 0, 1, "Cleaned Yard (deleted), Testville, Nowhere"},
		{"on the deleted site, active 7 km", m, north(45, -100, 0), 1.0 / 7, 0, 1, "Cleaned Yard (deleted), Testville, Nowhere"},
		{"deleted 3.4 km, active 3.6 km: the deleted one adds nothing", m, north(45, -100, 3.4), 1 / 3.6, 1, 1, "Cleaned Yard (deleted), Testville, Nowhere"},
		{"proposed 2 km", m, north(30, -100, -2), 1.0 / 2, 1, 0, "Listed Later (proposed), Testville, Nowhere"},
		{"only a deleted site anywhere: the 500 km cap", lone, north(45, -100, 0.5), 1.0 / 500, 0, 1, "Only Deleted (deleted), Testville, Nowhere"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms := tc.m.Measure(tc.site)
			if got := value(t, ms, IndProximity); math.Abs(got-tc.want) > 1e-9*tc.want {
				t.Errorf("proximity %.12g, want %.12g", got, tc.want)
			}
			if got := value(t, ms, "npl_sites_5km"); got != tc.active5 {
				t.Errorf("npl_sites_5km %g, want %g", got, tc.active5)
			}
			del := indicator(t, ms, "npl_deleted_sites_5km")
			if del.Value != tc.deleted5 || del.Weight != 0 || del.Ranked {
				t.Errorf("deleted count %+v, want %g, unweighted and unranked", del, tc.deleted5)
			}
			if got := indicator(t, ms, "nearest_npl_site").Text; got != tc.nearest {
				t.Errorf("nearest %q, want %q", got, tc.nearest)
			}
			// The cited distance is the active site's the value rests on
			// (the sum's nearest term where several lie within 5 km).
			if got := value(t, ms, IndNearestActiveKm); math.Abs(1/got-tc.want) > 1e-6*tc.want && tc.active5 <= 1 {
				t.Errorf("nearest active %.6g km, want %.6g", got, 1/tc.want)
			}
		})
	}
}
