package earthquake

import (
	"math"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// collection wraps GeoJSON features in a FeatureCollection.
func collection(features ...string) string {
	return `{"type":"FeatureCollection","name":"NSHM23_FSD_v3","features":[` + strings.Join(features, ",") + `]}`
}

// feature is one fault section with the given properties and geometry.
func feature(props, geomType, coords string) string {
	return `{"type":"Feature","properties":{` + props + `},"geometry":{"type":"` + geomType + `","coordinates":` + coords + `}}`
}

func TestParseFaults(t *testing.T) {
	const rel = "earthquake/faults.geojson.gz"
	multi := feature(`"FaultID":1,"FaultName":"Alpha Fault","PrimState":"CA","SecState":null`, "MultiLineString",
		`[[[-122.5,37.6],[-122.46,37.7],[-122.44,37.8]],[[-122.44,37.8],[-122.40,37.9]]]`)
	line := feature(`"FaultID":2,"FaultName":"  Beta Fault ","PrimState":"NV","SecState":"CA"`, "LineString",
		`[[-119.9,39.0],[-119.8,39.2]]`)
	tests := []struct {
		name   string
		in     string
		names  []string
		segs   int
		states []string
		err    string // a substring of the error; "" for none
	}{
		{"MultiLineString", collection(multi), []string{"Alpha Fault"}, 3, []string{"CA"}, ""},
		{"LineString with a second state", collection(line), []string{"Beta Fault"}, 1, []string{"CA", "NV"}, ""},
		{"both, in file order", collection(multi, line), []string{"Alpha Fault", "Beta Fault"}, 4, []string{"CA", "NV"}, ""},
		{"no state", collection(feature(`"FaultName":"Gamma"`, "LineString", `[[-120,40],[-120.1,40.1]]`)), []string{"Gamma"}, 1, nil, ""},
		{"empty state", collection(feature(`"FaultName":"Gamma","PrimState":"","SecState":"OR"`, "LineString", `[[-120,40],[-120.1,40.1]]`)), []string{"Gamma"}, 1, []string{"OR"}, ""},
		{"positions with a depth", collection(feature(`"FaultName":"Delta","PrimState":"UT"`, "LineString", `[[-112,40,0.5],[-112.1,40.1,1.5]]`)), []string{"Delta"}, 1, []string{"UT"}, ""},

		{"missing name", collection(feature(`"FaultID":3,"PrimState":"CA"`, "LineString", `[[-120,40],[-120.1,40.1]]`)), nil, 0, nil, "feature 0 has no FaultName"},
		{"blank name", collection(multi, feature(`"FaultName":"   "`, "LineString", `[[-120,40],[-120.1,40.1]]`)), nil, 0, nil, "feature 1 has no FaultName"},
		{"polygon", collection(feature(`"FaultName":"Area Source"`, "Polygon", `[[[-120,40],[-120.1,40.1],[-120.2,40],[-120,40]]]`)), nil, 0, nil, `feature 0 (Area Source): geometry "Polygon" is not a line`},
		{"point", collection(feature(`"FaultName":"Epicentre"`, "Point", `[-120,40]`)), nil, 0, nil, `geometry "Point" is not a line`},
		{"no geometry", collection(`{"type":"Feature","properties":{"FaultName":"Ghost"},"geometry":null}`), nil, 0, nil, `feature 0 (Ghost): geometry "" is not a line`},
		{"longitude out of range", collection(feature(`"FaultName":"Far"`, "LineString", `[[-120,40],[-190,40.1]]`)), nil, 0, nil, "feature 0 (Far): coordinate [-190, 40.1] out of range"},
		{"latitude out of range", collection(feature(`"FaultName":"Polar"`, "MultiLineString", `[[[-120,89.5],[-120,90.5]]]`)), nil, 0, nil, "out of range"},
		{"coordinates of the wrong shape", collection(feature(`"FaultName":"Flat"`, "MultiLineString", `[[-120,40],[-120.1,40.1]]`)), nil, 0, nil, "feature 0 (Flat)"},
		{"empty collection", collection(), nil, 0, nil, "no fault trace"},
		{"no segment", collection(feature(`"FaultName":"Dot","PrimState":"CA"`, "LineString", `[[-120,40]]`)), nil, 0, nil, "no fault trace"},
		{"not a collection", `{"type":"Feature","features":[]}`, nil, 0, nil, "not a GeoJSON FeatureCollection"},
		{"not JSON", "FaultName,lon,lat\n", nil, 0, nil, "invalid character"},
		{"empty file", "", nil, 0, nil, "unexpected end of JSON input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := parseFaults(rel, []byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), rel+": ") {
					t.Errorf("error %v, want one starting %q and containing %q", err, rel+": ", tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(l.names, "|") != strings.Join(tc.names, "|") || l.rows != len(tc.names) {
				t.Errorf("names %q (rows %d), want %q", l.names, l.rows, tc.names)
			}
			if l.index.Len() != tc.segs {
				t.Errorf("%d segments, want %d", l.index.Len(), tc.segs)
			}
			if len(l.states) != len(tc.states) {
				t.Errorf("states %v, want %v", l.states, tc.states)
			}
			for _, st := range tc.states {
				if !l.covers(st) {
					t.Errorf("covers(%q) = false, want true", st)
				}
			}
		})
	}
}

func TestNearestFault(t *testing.T) {
	m := fixture(t)
	// Test Bay Fault (CA): (-122.50, 37.60) - (-122.46, 37.70) - (-122.44, 37.80).
	// Test Basin Fault (CA): (-118.40, 34.00) - (-118.20, 34.05) - (-118.00, 34.12).
	// Test Sound Fault (WA): (-122.60, 47.58) - (-122.10, 47.58).
	tests := []struct {
		name string
		p    geo.Point
		want string
		km   float64
		ok   bool
	}{
		// Due north of the Bay fault's northern end: 0.05 degrees of latitude.
		{"north of the Bay fault's end", geo.Point{Lat: 37.85, Lon: -122.44}, "Test Bay Fault", 0.05 * geo.KmPerDegLat, true},
		{"on the Bay fault's vertex", geo.Point{Lat: 37.70, Lon: -122.46}, "Test Bay Fault", 0, true},
		// Due north of the Sound fault's middle: 0.1 degrees of latitude.
		{"north of the Sound fault", geo.Point{Lat: 47.68, Lon: -122.35}, "Test Sound Fault", 0.1 * geo.KmPerDegLat, true},
		{"south of the Sound fault", geo.Point{Lat: 47.53, Lon: -122.20}, "Test Sound Fault", 0.05 * geo.KmPerDegLat, true},
		// On the shared vertex of the Basin fault's two lines.
		{"on the Basin fault", geo.Point{Lat: 34.05, Lon: -118.20}, "Test Basin Fault", 0, true},
		{"near the Basin fault", geo.Point{Lat: 34.10, Lon: -118.20}, "Test Basin Fault", -1, true},
		// North-eastern California: over 400 km from every test fault.
		{"none within 100 km", geo.Point{Lat: 41.5, Lon: -120.5}, "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name, km, ok := m.faults.nearest(tc.p)
			if ok != tc.ok || name != tc.want {
				t.Fatalf("nearest = %q, %v, %v; want %q, ok %v", name, km, ok, tc.want, tc.ok)
			}
			if tc.km >= 0 && !near(km, tc.km, 1e-6) {
				t.Errorf("distance %.6f km, want %.6f", km, tc.km)
			}
			if ok && (km < 0 || km > faultSearchKm) {
				t.Errorf("distance %v km outside 0..%v", km, faultSearchKm)
			}
		})
	}
}

func TestFaultCovers(t *testing.T) {
	m := fixture(t)
	for _, tc := range []struct {
		state string
		want  bool
	}{
		{"CA", true}, {"WA", true},
		{"NV", false}, {"OR", false}, {"OK", false}, {"SC", false}, {"", false}, {"ca", false},
	} {
		if got := m.faults.covers(tc.state); got != tc.want {
			t.Errorf("covers(%q) = %v, want %v", tc.state, got, tc.want)
		}
	}
}

// TestMeasureFault checks the fault indicators in the conterminous states:
// given only where the fault database maps the site's state, context only
// (no weight), the index exp(-d / 10 km) ranked, the distance capped at
// 100 km, the name and a note.
func TestMeasureFault(t *testing.T) {
	m := fixture(t)
	sf := hazard.Site{Lat: 37.775, Lon: -122.425, StateCode: "CA", Conus: true}
	sfKm := geo.PointSegmentKm(geo.Point{Lat: sf.Lat, Lon: sf.Lon},
		geo.Segment{A: geo.Point{Lat: 37.70, Lon: -122.46}, B: geo.Point{Lat: 37.80, Lon: -122.44}})
	const westOnly = "The USGS fault section database used here maps the western states only, so no fault distance is given."
	tests := []struct {
		name   string
		site   hazard.Site
		mapped bool    // fault indicators expected
		fault  string  // nearest fault name; "" for none within 100 km
		km     float64 // its distance (when fault != "")
		note   string
	}{
		{"San Francisco, 1.74 km from the Bay fault", sf, true, "Test Bay Fault", sfKm,
			"The nearest mapped active fault section is Test Bay Fault, 2 km away (USGS NSHM 2023 fault database)."},
		{"on the Bay fault", hazard.Site{Lat: 37.70, Lon: -122.46, StateCode: "CA", Conus: true}, true, "Test Bay Fault", 0,
			"The nearest mapped active fault section is Test Bay Fault, less than 1 km away (USGS NSHM 2023 fault database)."},
		{"Seattle side of the Sound fault", hazard.Site{Lat: 47.68, Lon: -122.35, StateCode: "WA", Conus: true}, true, "Test Sound Fault", 0.1 * geo.KmPerDegLat,
			"The nearest mapped active fault section is Test Sound Fault, 11 km away (USGS NSHM 2023 fault database)."},
		{"mapped state, no fault within 100 km", hazard.Site{Lat: 41.5, Lon: -120.5, StateCode: "CA", Conus: true}, true, "", 0,
			"No mapped active fault section lies within 100 km."},
		// The state decides, not the distance: 5.6 km from the Bay fault
		// but in a state the (fixture) database does not map.
		{"unmapped state near a fault", hazard.Site{Lat: 37.85, Lon: -122.44, StateCode: "NV", Conus: true}, false, "", 0, westOnly},
		{"Oklahoma City", hazard.Site{Lat: 35.47, Lon: -97.52, StateCode: "OK", Conus: true}, false, "", 0, westOnly},
		{"Boston", hazard.Site{Lat: 42.33, Lon: -71.07, StateCode: "MA", Conus: true}, false, "", 0, westOnly},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.Measure(tc.site)
			idx, hasIdx := indicator(got, IndicatorFault)
			dist, hasKm := indicator(got, IndicatorFaultKm)
			name, hasName := indicator(got, IndicatorFaultName)
			if !tc.mapped {
				if hasIdx || hasKm || hasName {
					t.Errorf("indicators %+v, want no fault indicator", got.Indicators)
				}
			} else {
				if !hasIdx || !hasKm {
					t.Fatalf("indicators %+v, want %s and %s", got.Indicators, IndicatorFault, IndicatorFaultKm)
				}
				wantKm, wantIdx := faultSearchKm, 0.0
				if tc.fault != "" {
					wantKm, wantIdx = tc.km, math.Exp(-tc.km/10)
				}
				if !near(dist.Value, wantKm, 1e-6) || dist.Unit != "km" || dist.Ranked || dist.Weight != 0 {
					t.Errorf("distance %+v, want %.6f km, unranked context", dist, wantKm)
				}
				if !near(idx.Value, wantIdx, 1e-9) || !idx.Ranked || idx.Weight != 0 || idx.Unit != "index" {
					t.Errorf("index %+v, want exp(-d/10) = %.9f, ranked without weight", idx, wantIdx)
				}
				if tc.fault == "" {
					if hasName || !strings.Contains(dist.Label, "capped") {
						t.Errorf("no fault within 100 km: name %v, label %q; want no name and a capped label", hasName, dist.Label)
					}
				} else if !hasName || name.Text != tc.fault || name.Weight != 0 || name.Ranked {
					t.Errorf("name %+v, want %q as unranked text", name, tc.fault)
				}
				for _, in := range []hazard.Indicator{idx, dist} {
					if in.Source != faultSource || in.Peril != hazard.PerilGroundShaking || in.Resolution.Kind != hazard.ResSite {
						t.Errorf("%s: source %q peril %q resolution %q", in.ID, in.Source, in.Peril, in.Resolution.Kind)
					}
				}
			}
			found := false
			for _, n := range got.Notes {
				found = found || n == tc.note
			}
			if !found {
				t.Errorf("notes %q lack %q", got.Notes, tc.note)
			}
			// The fault distance never changes the weighted indicators.
			w := 0.0
			for _, in := range got.Indicators {
				w += in.Weight
			}
			if !near(w, 1, 1e-12) {
				t.Errorf("weights sum to %v, want 1", w)
			}
		})
	}
}

// A short or null position is an error, not a coordinate at 0; a feature
// without a trace maps no state.
func TestParseFaultsPositions(t *testing.T) {
	for _, c := range []string{`[[-122.5],[-122.4,37.8]]`, `[[null,37.7],[-122.4,37.8]]`, `[[-122.5,null],[-122.4,37.8]]`} {
		in := collection(feature(`"FaultName":"Short","PrimState":"CA"`, "LineString", c))
		if _, err := parseFaults("f", []byte(in)); err == nil || !strings.Contains(err.Error(), "not [longitude, latitude]") {
			t.Errorf("%s: error %v, want a bad-position error", c, err)
		}
	}
	in := collection(feature(`"FaultName":"Line","PrimState":"CA"`, "LineString", `[[-122.5,37.7],[-122.4,37.8]]`),
		feature(`"FaultName":"Dot","PrimState":"OR"`, "LineString", `[[-122.5,44.0]]`))
	l, err := parseFaults("f", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if l.covers("OR") || !l.covers("CA") || len(l.names) != 1 {
		t.Errorf("covers OR %v, CA %v, names %v; want only CA's traced fault", l.covers("OR"), l.covers("CA"), l.names)
	}
}
