package landslide

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"locrisk/risk/data"
	"locrisk/risk/data/datatest"
	"locrisk/risk/hazard"
)

func fixture(t *testing.T) *Module {
	t.Helper()
	m, err := Load(datatest.FixtureDir(t))
	if err != nil {
		t.Fatalf("Load(fixtures): %v", err)
	}
	return m
}

func indicator(m hazard.Measurement, id string) (hazard.Indicator, bool) {
	for _, in := range m.Indicators {
		if in.ID == id {
			return in, true
		}
	}
	return hazard.Indicator{}, false
}

func TestLoadFixture(t *testing.T) {
	m := fixture(t)
	// 14 rows: 2 without usable coordinates, 1 snow avalanche and 1 placed
	// only to within 100 km are not indexed.
	if got := m.Rows(); len(got) != 1 || got["nasa-glc"] != 14 {
		t.Errorf("Rows() = %v, want nasa-glc: 14", got)
	}
	if m.Skipped() != 2 || m.Events() != 10 {
		t.Errorf("skipped %d, indexed %d; want 2 and 10", m.Skipped(), m.Events())
	}
	if _, ok := data.SourceByID(m.Sources()[0]); !ok || m.Name() != hazard.Landslide {
		t.Errorf("Sources() = %v, Name() = %q", m.Sources(), m.Name())
	}
}

func TestMeasure(t *testing.T) {
	m := fixture(t)
	tests := []struct {
		name        string
		site        hazard.Site
		count       float64
		nearest     float64
		nearestText string
	}{
		// Three events at 3.8, 9.6 and 11.3 km; the avalanche (1 km away),
		// the event placed to 100 km and the two rows with bad
		// coordinates do not count.
		{"King County", hazard.Site{Lat: 47.49, Lon: -121.83, StateCode: "WA"}, 3, 3.8, ""},
		// 24.9 km counts, 25.1 km does not.
		{"radius edge", hazard.Site{Lat: 40.0, Lon: -100.0, StateCode: "NE"}, 1, 24.9, ""},
		// An uncoded event across the Canadian border, 21.4 km away.
		{"border", hazard.Site{Lat: 49.0, Lon: -122.26, StateCode: "WA"}, 1, 21.4, ""},
		{"Kansas", hazard.Site{Lat: 39.05, Lon: -95.68, StateCode: "KS"}, 0, 100, "none within 100 km"},
		{"San Juan PR", hazard.Site{Lat: 18.41, Lon: -66.06, StateCode: "PR"}, 1, 3.5, ""},
		{"American Samoa", hazard.Site{Lat: -14.28, Lon: -170.70, StateCode: "AS"}, 1, 12.3, ""},
		// Accuracy "unknown" is kept.
		{"Honolulu", hazard.Site{Lat: 21.46, Lon: -157.97, StateCode: "HI"}, 1, 20.2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.Measure(tc.site)
			c, ok := indicator(got, IndicatorCount)
			if !ok || c.Value != tc.count || !c.Ranked || c.Weight != 1 || c.Unit != "count" || c.Source != "nasa-glc" {
				t.Errorf("count indicator %+v, want ranked count %v with weight 1", c, tc.count)
			}
			n, ok := indicator(got, IndicatorNearest)
			if !ok || n.Value != tc.nearest || n.Text != tc.nearestText || n.Ranked || n.Weight != 0 {
				t.Errorf("nearest indicator %+v, want %v km %q, unranked", n, tc.nearest, tc.nearestText)
			}
			if got.Quality != 0.5 || !got.HasHazardData() {
				t.Errorf("quality %v, has data %v; want 0.5 and data", got.Quality, got.HasHazardData())
			}
			// Reported events around the site, not a county aggregate.
			kinds := map[string]bool{hazard.ResSite: true, hazard.ResGrid: true, hazard.ResReportedEvents: true, hazard.ResCounty: true}
			for _, in := range got.Indicators {
				if in.Peril != hazard.PerilLandslide {
					t.Errorf("%s: peril %q, want %q", in.ID, in.Peril, hazard.PerilLandslide)
				}
				if !kinds[in.Resolution.Kind] {
					t.Errorf("%s: resolution kind %q is not one of the four", in.ID, in.Resolution.Kind)
				} else if in.Resolution.Kind != hazard.ResReportedEvents {
					t.Errorf("%s: resolution kind %q, want %q", in.ID, in.Resolution.Kind, hazard.ResReportedEvents)
				}
				if in.Weight > 0 && !in.Ranked {
					t.Errorf("%s: weighted but not ranked", in.ID)
				}
			}
		})
	}
}

func TestNotes(t *testing.T) {
	m := fixture(t)
	for _, tc := range []struct {
		site hazard.Site
		want string
	}{
		{hazard.Site{Lat: 47.49, Lon: -121.83}, "NASA's catalog lists 3 reported landslides within 25 km (1988-2017); these are media-reported events, not a susceptibility map."},
		{hazard.Site{Lat: 40.0, Lon: -100.0}, "NASA's catalog lists 1 reported landslide within 25 km (1988-2017); these are media-reported events, not a susceptibility map."},
	} {
		got := m.Measure(tc.site).Notes
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("notes %q, want %q", got, tc.want)
		}
	}
}

func TestKept(t *testing.T) {
	tests := []struct {
		category, accuracy string
		want               bool
	}{
		{"landslide", "exact", true},
		{"mudslide", "1km", true},
		{"debris_flow", "50km", true},
		{"landslide", "100km", false},
		{"rock_fall", "250km", false},
		{"landslide", "unknown", true},
		{"landslide", "", true},
		{"snow_avalanche", "exact", false},
	}
	for _, tc := range tests {
		if got := kept(tc.category, tc.accuracy); got != tc.want {
			t.Errorf("kept(%q, %q) = %v, want %v", tc.category, tc.accuracy, got, tc.want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	rel := strings.TrimSuffix(data.Path("nasa-glc"), ".gz")
	write := func(t *testing.T, content string) string {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	if _, err := Load(write(t, "event_id,lon,lat\n1,-122,47\n")); err == nil || !strings.Contains(err.Error(), "line 1: header lacks") {
		t.Errorf("broken header: error %v", err)
	}
	if _, err := Load(write(t, "")); err == nil {
		t.Error("empty file: no error")
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: error %v", err)
	}
	m, err := Load(write(t, "location_accuracy,landslide_category,longitude,latitude\nexact,landslide,abc,47\n1km,landslide,-122,NaN\n1km,landslide,-122,95\n1km,landslide,-122,47\n"))
	if err != nil || m.Skipped() != 3 || m.Events() != 1 {
		t.Errorf("bad coordinates: err %v, skipped %d, events %d; want 3 skipped, 1 event", err, m.Skipped(), m.Events())
	}
}

var realModule = datatest.Once(datatest.RealDir, Load)

func TestReal(t *testing.T) {
	m := realModule(t)
	if got := m.Rows()["nasa-glc"]; got != 11032 {
		t.Errorf("rows %d, want 11032", got)
	}
	count := func(lat, lon float64) float64 {
		in, _ := indicator(m.Measure(hazard.Site{Lat: lat, Lon: lon}), IndicatorCount)
		return in.Value
	}
	seattle, portland := count(47.6062, -122.3321), count(45.5152, -122.6784)
	wichita, topeka := count(37.6872, -97.3301), count(39.0473, -95.6752)
	t.Logf("reported landslides within 25 km: Seattle %v, Portland %v, Wichita %v, Topeka %v", seattle, portland, wichita, topeka)
	for _, ks := range []float64{wichita, topeka} {
		if seattle <= ks || portland <= ks {
			t.Errorf("Seattle %v / Portland %v should exceed Kansas %v", seattle, portland, ks)
		}
	}
	if seattle < 50 || portland < 50 {
		t.Errorf("Seattle %v, Portland %v: want at least 50 each", seattle, portland)
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
		name     string
		lat, lon float64
	}{{"Portland", 45.5152, -122.6784}, {"Pittsburgh", 40.4406, -79.9959}, {"Wichita", 37.6872, -97.3301}} {
		b.Run(tc.name, func(b *testing.B) {
			site := hazard.Site{Lat: tc.lat, Lon: tc.lon}
			b.ReportAllocs()
			for b.Loop() {
				m.Measure(site)
			}
		})
	}
}
