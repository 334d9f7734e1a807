package coverage

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

var fixture = datatest.Once(datatest.Fixture, Load)

// north/east move p by km along a meridian / parallel.
func north(p geo.Point, km float64) geo.Point {
	return geo.Point{Lat: p.Lat + km/geo.KmPerDegLat, Lon: p.Lon}
}

func east(p geo.Point, km float64) geo.Point {
	return geo.Point{Lat: p.Lat, Lon: p.Lon + km/(geo.KmPerDegLat*math.Cos(p.Lat*math.Pi/180))}
}

func TestFixtureLocate(t *testing.T) {
	l := fixture(t)
	pt := func(lat, lon float64) geo.Point { return geo.Point{Lat: lat, Lon: lon} }
	tests := []struct {
		name string
		p    geo.Point
		fips string // "" = unsupported
	}{
		{"San Francisco", pt(37.7749, -122.4194), "06075"},
		{"San Mateo", pt(37.55, -122.40), "06081"},
		{"Los Angeles", pt(34.05, -118.24), "06037"},
		{"Cook", pt(41.88, -87.63), "17031"},
		{"Oklahoma", pt(35.47, -97.52), "40109"},
		{"Miami-Dade", pt(25.76, -80.19), "12086"},
		{"Denver", pt(39.74, -104.99), "08031"},
		{"Suffolk", pt(42.36, -71.06), "25025"},
		{"King", pt(47.61, -122.33), "53033"},
		{"Honolulu", pt(21.31, -157.86), "15003"},
		{"San Juan PR", pt(18.42, -66.06), "72127"},
		{"St. Croix VI", pt(17.75, -64.70), "78010"},
		{"Guam", pt(13.48, 144.75), "66010"},
		{"Saipan MP", pt(15.19, 145.75), "69110"},
		{"Eastern AS", pt(-14.28, -170.70), "60010"},

		// The box edges stand in for generalised shorelines.
		{"0.5 km west of San Francisco", east(pt(37.76, -122.52), -0.5), "06075"},
		{"0.5 km north of San Francisco", north(pt(37.82, -122.44), 0.5), "06075"},
		{"0.5 km south of San Mateo", north(pt(37.45, -122.44), -0.5), "06081"},
		{"0.5 km east of Cook", east(pt(41.9, -87.52), 0.5), "17031"},
		{"0.5 km off Miami-Dade", east(pt(25.5, -80.12), 0.5), "12086"},
		{"0.5 km off Guam", east(pt(13.4, 144.96), 0.5), "66010"},
		{"0.5 km off Eastern AS", north(pt(-14.38, -170.7), -0.5), "60010"},
		{"0.5 km west of Aleutians West", east(pt(52, 172), -0.5), "02016"},
		{"0.5 km east of Aleutians West", east(pt(52, -178), 0.5), "02016"},
		{"5 km west of San Francisco", east(pt(37.76, -122.52), -5), ""},
		{"5 km east of Cook", east(pt(41.9, -87.52), 5), ""},
		{"5 km off Miami-Dade", east(pt(25.5, -80.12), 5), ""},
		{"5 km off Guam", east(pt(13.4, 144.96), 5), ""},
		{"5 km east of Aleutians West", east(pt(52, -178), 5), ""},

		// Aleutians West runs across the antimeridian.
		{"Aleutians West 179.5E", pt(52, 179.5), "02016"},
		{"Aleutians West 179.5W", pt(52, -179.5), "02016"},
		{"Aleutians West at 180", pt(52, 180), "02016"},
		{"Aleutians West at -180", pt(52, -180), "02016"},
		{"Aleutians West 173E", pt(52.9, 173.2), "02016"},
		{"Aleutians West lon given as 181.5", pt(52, 181.5), "02016"},
		{"Aleutians West lon given as -186", pt(52, -186), "02016"},

		{"Toronto", pt(43.65, -79.38), ""},
		{"Monterrey", pt(25.67, -100.31), ""},
		{"mid Atlantic", pt(35, -45), ""},
		{"null island", pt(0, 0), ""},
		{"north pole", pt(90, 0), ""},
		{"latitude out of range", pt(91, -122.44), ""},
		{"NaN longitude", pt(37.76, math.NaN()), ""},
		{"infinite longitude", pt(37.76, math.Inf(1)), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, border, ok := l.Locate(tt.p)
			if tt.fips == "" {
				if ok {
					t.Fatalf("Locate(%v) = %s, want unsupported", tt.p, c.FIPS)
				}
				if c != nil {
					t.Fatalf("Locate returned a county with ok=false")
				}
				return
			}
			if !ok || c.FIPS != tt.fips {
				t.Fatalf("Locate(%v) = %v, %v; want %s", tt.p, c, ok, tt.fips)
			}
			if math.IsNaN(border) || border < 0 {
				t.Fatalf("borderKm = %v", border)
			}
		})
	}
}

func TestFixtureBorderKm(t *testing.T) {
	l := fixture(t)
	degKm := geo.KmPerDegLat
	tests := []struct {
		name string
		p    geo.Point
		fips string
		want float64 // +Inf: no other county within BorderCapKm
	}{
		// San Francisco and San Mateo share the line at 37.70.
		{"SF 0.01 deg from the county line", geo.Point{Lat: 37.71, Lon: -122.44}, "06075", 0.01 * degKm},
		{"San Mateo 0.01 deg from the county line", geo.Point{Lat: 37.69, Lon: -122.44}, "06081", 0.01 * degKm},
		{"SF 0.1 deg from the county line", geo.Point{Lat: 37.80, Lon: -122.44}, "06075", 0.10 * degKm},
		{"San Mateo 0.2 deg from the county line", geo.Point{Lat: 37.50, Lon: -122.44}, "06081", 0.20 * degKm},
		// Offshore but within the tolerance: still measured to the
		// other county.
		{"0.5 km west of SF", geo.Point{Lat: 37.75, Lon: -122.52 - 0.5/(degKm*math.Cos(37.75*math.Pi/180))}, "06075",
			math.Hypot(0.05*degKm, 0.5)},
		{"Cook: nothing within 50 km", geo.Point{Lat: 41.88, Lon: -87.63}, "17031", math.Inf(1)},
		{"Aleutians West", geo.Point{Lat: 52, Lon: 179.5}, "02016", math.Inf(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, border, ok := l.Locate(tt.p)
			if !ok || c.FIPS != tt.fips {
				t.Fatalf("Locate = %v, %v; want %s", c, ok, tt.fips)
			}
			if math.IsInf(tt.want, 1) {
				if !math.IsInf(border, 1) {
					t.Fatalf("borderKm = %v, want +Inf", border)
				}
				return
			}
			if math.Abs(border-tt.want) > 0.005*tt.want+0.01 {
				t.Fatalf("borderKm = %.4f, want %.4f", border, tt.want)
			}
		})
	}
}

func TestFixtureCounties(t *testing.T) {
	l := fixture(t)
	cs := l.Counties()
	want := []string{"02016", "06037", "06075", "06081", "08031", "12086", "15003", "17031",
		"25025", "40109", "53033", "60010", "66010", "69110", "72127", "78010"}
	if len(cs) != len(want) {
		t.Fatalf("%d counties, want %d", len(cs), len(want))
	}
	for i, c := range cs {
		if c.FIPS != want[i] {
			t.Errorf("Counties()[%d] = %s, want %s", i, c.FIPS, want[i])
		}
	}
	cs[0] = nil // the slice is the caller's
	if l.Counties()[0] == nil {
		t.Fatal("Counties shares its slice")
	}

	boxKm2 := func(lat0, lat1, lon0, lon1 float64) float64 {
		const rad = math.Pi / 180
		return geo.EarthRadiusKm * geo.EarthRadiusKm * (lon1 - lon0) * rad * (math.Sin(lat1*rad) - math.Sin(lat0*rad))
	}
	tests := []County{
		{FIPS: "06075", Name: "San Francisco County", StateFIPS: "06", StateCode: "CA", StateName: "California", Conus: true, LandAreaKm2: 46.718 * sqMiToKm2},
		{FIPS: "72127", Name: "San Juan Municipio", StateFIPS: "72", StateCode: "PR", StateName: "Puerto Rico", Territory: true, LandAreaKm2: 47.491 * sqMiToKm2},
		{FIPS: "02016", Name: "Aleutians West Census Area", StateFIPS: "02", StateCode: "AK", StateName: "Alaska", LandAreaKm2: 4247.124 * sqMiToKm2},
		{FIPS: "15003", Name: "Honolulu County", StateFIPS: "15", StateCode: "HI", StateName: "Hawaii", LandAreaKm2: 598.458 * sqMiToKm2},
		// No Gazetteer rows: the boundary file's name, the polygon's area.
		{FIPS: "66010", Name: "Guam", StateFIPS: "66", StateCode: "GU", StateName: "Guam", Territory: true, LandAreaKm2: boxKm2(13.23, 13.66, 144.61, 144.96)},
		{FIPS: "78010", Name: "St. Croix", StateFIPS: "78", StateCode: "VI", StateName: "United States Virgin Islands", Territory: true, LandAreaKm2: boxKm2(17.67, 17.79, -64.90, -64.56)},
		{FIPS: "60010", Name: "Eastern", StateFIPS: "60", StateCode: "AS", StateName: "American Samoa", Territory: true, LandAreaKm2: boxKm2(-14.38, -14.24, -170.85, -170.55)},
		{FIPS: "69110", Name: "Saipan", StateFIPS: "69", StateCode: "MP", StateName: "Commonwealth of the Northern Mariana Islands", Territory: true, LandAreaKm2: boxKm2(15.08, 15.29, 145.68, 145.83)},
	}
	for _, w := range tests {
		t.Run(w.FIPS, func(t *testing.T) {
			c, ok := l.County(w.FIPS)
			if !ok {
				t.Fatal("County: not found")
			}
			got := *c
			if math.Abs(got.LandAreaKm2-w.LandAreaKm2) > 1e-6*w.LandAreaKm2 {
				t.Errorf("LandAreaKm2 = %v, want %v", got.LandAreaKm2, w.LandAreaKm2)
			}
			got.LandAreaKm2, w.LandAreaKm2 = 0, 0
			if got != w {
				t.Errorf("County = %+v\nwant     %+v", got, w)
			}
		})
	}
	if _, ok := l.County("09001"); ok {
		t.Error("County(09001) found; it has a Gazetteer row but no polygon")
	}
	if _, ok := l.County("6075"); ok {
		t.Error("County accepts a 4-digit code")
	}

	rows := l.Rows()
	for id, n := range map[string]int{SourceCounties: 16, SourceStates: 14, SourceGazetteer: 13} {
		if rows[id] != n {
			t.Errorf("Rows()[%s] = %d, want %d", id, rows[id], n)
		}
	}
}

func TestFixtureReference(t *testing.T) {
	l := fixture(t)
	ref := l.Reference()
	// 13 Gazetteer rows; 09001 has no polygon.
	want := []string{"02016", "06037", "06075", "06081", "08031", "12086", "15003", "17031", "25025", "40109", "53033", "72127"}
	if len(ref) != len(want) {
		t.Fatalf("%d reference points, want %d", len(ref), len(want))
	}
	for i, r := range ref {
		if r.FIPS != want[i] {
			t.Errorf("Reference()[%d] = %s, want %s", i, r.FIPS, want[i])
		}
		c, _, ok := l.Locate(r.Point)
		if !ok || c.FIPS != r.FIPS {
			t.Errorf("reference point %s %v locates to %v", r.FIPS, r.Point, c)
		}
	}
	// The San Francisco internal point is 7 km out to sea (like the real
	// one, which is on the Farallones); it is moved just inside the shore.
	sf := ref[2].Point
	if sf.Lon < -122.52 || sf.Lon > -122.50 || math.Abs(sf.Lat-37.76) > 0.001 {
		t.Errorf("San Francisco reference point %v, want just inside the box at 37.76", sf)
	}
	if l.refMoved != 1 {
		t.Errorf("%d reference points moved, want 1", l.refMoved)
	}
	// Unmoved points are the Gazetteer's.
	if ak := ref[0].Point; ak != (geo.Point{Lat: 52.1, Lon: 177.5}) {
		t.Errorf("02016 reference point %v", ak)
	}
}

func TestFixtureOutlines(t *testing.T) {
	l := fixture(t)
	ak := l.CountyOutline("02016")
	if len(ak) != 1 || len(ak[0]) != 4 {
		t.Fatalf("02016 outline %v, want one ring of 4 points", ak)
	}
	var minLon, maxLon = math.Inf(1), math.Inf(-1)
	for _, p := range ak[0] {
		minLon, maxLon = math.Min(minLon, p.Lon), math.Max(maxLon, p.Lon)
	}
	// Continuous across the antimeridian: 172 .. 182 (= 178 W).
	if math.Abs(minLon-172) > 1e-9 || math.Abs(maxLon-182) > 1e-9 {
		t.Errorf("02016 outline spans %v..%v, want 172..182", minLon, maxLon)
	}
	ak[0][0].Lat = 0 // the caller's copy
	if l.CountyOutline("02016")[0][0].Lat == 0 {
		t.Error("CountyOutline shares its points")
	}
	if n := len(l.StateOutline("02")); n != 3 {
		t.Errorf("Alaska outline has %d rings, want 3", n)
	}
	if l.CountyOutline("99999") != nil || l.StateOutline("99") != nil {
		t.Error("outline of an unknown code is not nil")
	}
}

func TestFixtureStates(t *testing.T) {
	l := fixture(t)
	states := l.States()
	byFIPS := map[string]State{}
	for i, s := range states {
		if i > 0 && states[i-1].FIPS >= s.FIPS {
			t.Errorf("States not sorted by FIPS: %s before %s", states[i-1].FIPS, s.FIPS)
		}
		byFIPS[s.FIPS] = s
		if len(l.StateOutline(s.FIPS)) == 0 {
			t.Errorf("state %s (%s) has no outline", s.FIPS, s.Name)
		}
	}
	want := map[string]State{
		"06": {FIPS: "06", Code: "CA", Name: "California", Conus: true},
		"02": {FIPS: "02", Code: "AK", Name: "Alaska"},
		"72": {FIPS: "72", Code: "PR", Name: "Puerto Rico", Territory: true},
	}
	for fips, w := range want {
		if got := byFIPS[fips]; got != w {
			t.Errorf("state %s: %+v, want %+v", fips, got, w)
		}
	}
	states[0].Name = "changed" // the caller's copy
	if l.States()[0].Name == "changed" {
		t.Error("States shares its slice")
	}
}

// writeDir makes a data directory holding the given boundary files; files
// not given are copied from the fixtures.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "boundaries"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{SourceCounties, SourceStates, SourceGazetteer} {
		rel := data.Path(id)
		text, ok := files[id]
		if !ok {
			b, err := os.ReadFile(filepath.Join(datatest.FixtureDir(t), rel))
			if err != nil {
				t.Fatal(err)
			}
			text = string(b)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A plain (unquantized) topology with a hole holding another county, a
// county split at the antimeridian, a numeric id and a null geometry.
const edgeCounties = `{"type":"Topology","objects":{"counties":{"type":"GeometryCollection","geometries":[
 {"type":"Polygon","arcs":[[0],[1]],"id":"06001","properties":{"name":"Outer"}},
 {"type":"Polygon","arcs":[[-2]],"id":"06003","properties":{"name":"Inner"}},
 {"type":null,"id":"06005","properties":{"name":"Nowhere"}},
 {"type":"MultiPolygon","arcs":[[[2]],[[3]]],"id":"02016","properties":{"name":"Aleutians West"}},
 {"type":"Polygon","arcs":[[4]],"id":2020,"properties":{"name":"Anchorage"}}
]}},"arcs":[
 [[-120,36],[-119,36],[-119,37],[-120,37],[-120,36]],
 [[-119.7,36.3],[-119.7,36.7],[-119.3,36.7],[-119.3,36.3],[-119.7,36.3]],
 [[179,51],[180,51],[180,52],[179,52],[179,51]],
 [[-180,51],[-180,52],[-179,52],[-179,51],[-180,51]],
 [[-150,61],[-149.5,61],[-149.5,61.5],[-150,61.5],[-150,61]]
]}`

const edgeStates = `{"type":"Topology","objects":{"states":{"type":"GeometryCollection","geometries":[
 {"type":"Polygon","arcs":[[0]],"id":"06","properties":{"name":"California"}},
 {"type":"Polygon","arcs":[[0]],"id":"02","properties":{"name":"Alaska"}}
]}},"arcs":[[[-120,36],[-119,36],[-119,37],[-120,37],[-120,36]]]}`

const gazHeader = "USPS\tGEOID\tANSICODE\tNAME\tALAND\tAWATER\tALAND_SQMI\tAWATER_SQMI\tINTPTLAT\tINTPTLONG   \n"

const edgeGaz = gazHeader +
	"AK\t02016\t00000001\tAleutians West Census Area\t1\t1\t100.0\t1.0\t51.5\t179.5   \n" +
	"AK\t02020\t00000002\tAnchorage Municipality\t1\t1\t\t1.0\t61.2\t-149.8   \n" +
	"CA\t06001\t00000003\tOuter County\t1\t1\t200.0\t1.0\t36.1\t-119.9   \n" +
	"CA\t06003\t00000004\tInner County\t1\t1\t10.0\t1.0\t36.5\t-119.5   \n" +
	"CA\t06005\t00000005\tNowhere County\t1\t1\t10.0\t1.0\t36.5\t-119.5   \n"

func TestLoadEdgeCases(t *testing.T) {
	dir := writeDir(t, map[string]string{SourceCounties: edgeCounties, SourceStates: edgeStates, SourceGazetteer: edgeGaz})
	l, err := Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		lat, lon float64
		fips     string
	}{
		{36.5, -119.5, "06003"},  // in the hole
		{36.5, -119.85, "06001"}, // in the outer ring, beside the hole
		{36.1, -119.5, "06001"},
		{51.5, 179.5, "02016"}, // the part east of 180
		{51.5, -179.5, "02016"},
		{51.5, 180, "02016"},
		{51.5, -180, "02016"},
		{61.2, -149.8, "02020"},
	} {
		c, _, ok := l.Locate(geo.Point{Lat: tt.lat, Lon: tt.lon})
		if !ok || c.FIPS != tt.fips {
			t.Errorf("Locate(%v, %v) = %v, %v; want %s", tt.lat, tt.lon, c, ok, tt.fips)
		}
	}
	// The hole's edge is the inner county's boundary: a point in the hole
	// is 0.1 degree of longitude from the outer county.
	_, d, _ := l.Locate(geo.Point{Lat: 36.5, Lon: -119.4})
	if want := 0.1 * geo.KmPerDegLat * math.Cos(36.5*math.Pi/180); math.Abs(d-want) > 0.01 {
		t.Errorf("borderKm in the hole = %v, want %v", d, want)
	}
	if c, ok := l.County("06005"); !ok || c.Name != "Nowhere County" || math.Abs(c.LandAreaKm2-10*sqMiToKm2) > 1e-9 {
		t.Errorf("null-geometry county = %+v, %v", c, ok)
	}
	if c, ok := l.County("02020"); !ok || c.Name != "Anchorage Municipality" {
		t.Errorf("numeric id: %+v, %v", c, ok)
	} else if want := geo.EarthRadiusKm * geo.EarthRadiusKm * 0.5 * math.Pi / 180 * (math.Sin(61.5*math.Pi/180) - math.Sin(61*math.Pi/180)); math.Abs(c.LandAreaKm2-want) > 1e-6*want {
		// Empty ALAND_SQMI: area from the polygon.
		t.Errorf("02020 area %v, want %v", c.LandAreaKm2, want)
	}
	outer, _ := l.County("06001")
	inner, _ := l.County("06003")
	if math.Abs(outer.LandAreaKm2-200*sqMiToKm2) > 1e-9 || math.Abs(inner.LandAreaKm2-10*sqMiToKm2) > 1e-9 {
		t.Errorf("areas %v %v", outer.LandAreaKm2, inner.LandAreaKm2)
	}
	var got []string
	for _, r := range l.Reference() {
		got = append(got, r.FIPS)
	}
	if strings.Join(got, ",") != "02016,02020,06001,06003" {
		t.Errorf("Reference FIPS = %v", got)
	}
	if n := len(l.CountyOutline("02016")); n != 2 {
		t.Errorf("02016 has %d rings, want 2", n)
	}
}

// TestAreaWithHole checks the polygon-area fallback subtracts holes.
func TestAreaWithHole(t *testing.T) {
	counties := strings.Replace(edgeCounties, `"id":"06001"`, `"id":"06007"`, 1)
	gaz := gazHeader + "CA\t06003\t00000004\tInner County\t1\t1\t10.0\t1.0\t36.5\t-119.5   \n"
	l, err := Load(os.DirFS(writeDir(t, map[string]string{SourceCounties: counties, SourceStates: edgeStates, SourceGazetteer: gaz})))
	if err != nil {
		t.Fatal(err)
	}
	box := func(lat0, lat1, dLon float64) float64 {
		const rad = math.Pi / 180
		return geo.EarthRadiusKm * geo.EarthRadiusKm * dLon * rad * (math.Sin(lat1*rad) - math.Sin(lat0*rad))
	}
	want := box(36, 37, 1) - box(36.3, 36.7, 0.4)
	c, _ := l.County("06007")
	if math.Abs(c.LandAreaKm2-want) > 1e-6*want {
		t.Errorf("area %v, want %v", c.LandAreaKm2, want)
	}
}

func TestLoadErrors(t *testing.T) {
	fixText := func(id string) string {
		b, err := os.ReadFile(filepath.Join(datatest.FixtureDir(t), data.Path(id)))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	counties, gaz := fixText(SourceCounties), fixText(SourceGazetteer)
	gazLines := strings.SplitAfter(gaz, "\n")
	// replaceLine swaps field col of Gazetteer line n (1-based).
	replaceField := func(n, col int, v string) string {
		lines := append([]string(nil), gazLines...)
		f := strings.Split(lines[n-1], "\t")
		f[col] = v
		lines[n-1] = strings.Join(f, "\t")
		return strings.Join(lines, "")
	}
	countiesFile := data.Path(SourceCounties)
	gazFile := data.Path(SourceGazetteer)
	tests := []struct {
		name  string
		files map[string]string
		want  []string // substrings of the error
	}{
		{"counties not JSON", map[string]string{SourceCounties: counties[:200]}, []string{countiesFile, "not valid TopoJSON"}},
		{"counties not a Topology", map[string]string{SourceCounties: strings.Replace(counties, `"Topology"`, `"FeatureCollection"`, 1)}, []string{countiesFile, "FeatureCollection"}},
		{"no counties object", map[string]string{SourceCounties: strings.Replace(counties, `"counties":`, `"county":`, 1)}, []string{countiesFile, `no object "counties"`}},
		{"arc out of range", map[string]string{SourceCounties: strings.Replace(counties, `"arcs":[[16]]`, `"arcs":[[99]]`, 1)}, []string{countiesFile, "60010", "arc reference 99 out of range"}},
		{"bad id", map[string]string{SourceCounties: strings.Replace(counties, `"id":"17031"`, `"id":"1703X"`, 1)}, []string{countiesFile, "not 5 digits"}},
		{"missing id", map[string]string{SourceCounties: strings.Replace(counties, `"id":"17031",`, ``, 1)}, []string{countiesFile, "missing id"}},
		{"point geometry", map[string]string{SourceCounties: strings.Replace(counties, `{"type":"Polygon","arcs":[[4]]`, `{"type":"Point","coordinates":[1,2]`, 1)}, []string{countiesFile, "17031", `"Point"`}},
		{"duplicate county", map[string]string{SourceCounties: strings.Replace(counties, `"id":"17031"`, `"id":"06037"`, 1)}, []string{countiesFile, "06037 appears twice"}},
		{"unknown state", map[string]string{SourceCounties: strings.Replace(counties, `"id":"17031"`, `"id":"99031"`, 1)}, []string{countiesFile, "unknown state FIPS 99"}},
		{"state missing from states file", map[string]string{SourceStates: strings.Replace(fixText(SourceStates), `"id":"17"`, `"id":"18"`, 1)}, []string{data.Path(SourceStates), "no state 17"}},
		{"short arc position", map[string]string{SourceCounties: strings.Replace(counties, `[[5748,5270],[17,0]]`, `[[5748],[17,0]]`, 1)}, []string{countiesFile, "arc 0 position 0"}},
		{"gazetteer bad latitude", map[string]string{SourceGazetteer: replaceField(3, 8, "north")}, []string{gazFile + " line 3", "INTPTLAT"}},
		{"gazetteer latitude out of range", map[string]string{SourceGazetteer: replaceField(4, 8, "123.5")}, []string{gazFile + " line 4", "not a latitude"}},
		{"gazetteer bad GEOID", map[string]string{SourceGazetteer: replaceField(5, 1, "6081")}, []string{gazFile + " line 5", "GEOID"}},
		{"gazetteer duplicate GEOID", map[string]string{SourceGazetteer: replaceField(5, 1, "06075")}, []string{gazFile + " line 5", "twice"}},
		{"gazetteer wrong USPS", map[string]string{SourceGazetteer: replaceField(2, 0, "AL")}, []string{gazFile + " line 2", "USPS"}},
		{"gazetteer missing column", map[string]string{SourceGazetteer: strings.Replace(gaz, "INTPTLONG", "LONG", 1)}, []string{gazFile + " line 1", "INTPTLONG"}},
		{"gazetteer no rows", map[string]string{SourceGazetteer: gazLines[0]}, []string{gazFile, "no rows"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(os.DirFS(writeDir(t, tt.files)))
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}

	t.Run("missing file", func(t *testing.T) {
		dir := writeDir(t, nil)
		if err := os.Remove(filepath.Join(dir, gazFile)); err != nil {
			t.Fatal(err)
		}
		_, err := Load(os.DirFS(dir))
		if !errors.Is(err, data.ErrMissing) || !strings.Contains(err.Error(), gazFile) {
			t.Fatalf("error %v, want ErrMissing naming %s", err, gazFile)
		}
	})
}

func TestLocateConcurrent(t *testing.T) {
	l := fixture(t)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if c, _, ok := l.Locate(geo.Point{Lat: 52, Lon: 179.5}); !ok || c.FIPS != "02016" {
					t.Error("concurrent Locate failed")
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkLocate locates the reference points of the real data.
func BenchmarkLocate(b *testing.B) {
	l := realData(b)
	benchLocate(b, l, l.Reference())
}

// BenchmarkLoad loads the real data's boundaries.
func BenchmarkLoad(b *testing.B) {
	fsys := datatest.Real(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Load(fsys); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNearestMatchesBruteForce compares the ring-by-ring edge search with a
// scan of every edge, at points scattered around the fixture counties
// and the real ones.
func TestNearestMatchesBruteForce(t *testing.T) {
	layers := []*Layer{fixture(t), realData(t)}
	rng := rand.New(rand.NewPCG(1, 2))
	for li, l := range layers {
		ref := l.Reference()
		for i := 0; i < 400-250*li; i++ {
			c := ref[rng.IntN(len(ref))].Point
			x := geo.NormalizeLon(c.Lon + (rng.Float64()-0.5)*1.5)
			y := c.Lat + (rng.Float64()-0.5)*1.0
			exclude := int32(rng.IntN(len(l.counties)+1) - 1)
			maxKm := []float64{1, 5, 50}[i%3]
			d, ci, ok := l.edges.nearest(x, y, maxKm, exclude)
			bd, bc, bok := bruteNearest(l, x, y, maxKm, exclude)
			if ok != bok || (ok && (math.Abs(d-bd) > 1e-8 || ci != bc)) {
				t.Fatalf("nearest(%v, %v, %v, %d) = %v %d %v, brute force %v %d %v", x, y, maxKm, exclude, d, ci, ok, bd, bc, bok)
			}
		}
	}
}

func bruteNearest(l *Layer, x, y, maxKm float64, exclude int32) (float64, int32, bool) {
	best, bestC := math.Inf(1), int32(-1)
	for _, s := range l.edges.segs {
		if s.county == exclude {
			continue
		}
		d := geo.PointSegmentKm(geo.Point{Lat: y, Lon: x}, geo.Segment{
			A: geo.Point{Lat: s.ay, Lon: s.ax}, B: geo.Point{Lat: s.ay + s.dy, Lon: s.ax + s.dx}})
		if d < best-1e-9 || (d <= best+1e-9 && s.county < bestC) {
			best, bestC = d, s.county
		}
	}
	if bestC < 0 || best > maxKm {
		return 0, -1, false
	}
	return best, bestC, true
}
