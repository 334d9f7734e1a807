package hydrology

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/geo"
)

// decodeWithStdlib decodes the same GeoJSON with encoding/json, the
// reference the hand-written parser must agree with.
func decodeWithStdlib(t testing.TB, b []byte) []lineFeature {
	t.Helper()
	var fc struct {
		Features []struct {
			Properties struct {
				Level int `json:"level"`
			} `json:"properties"`
			Geometry struct {
				Coordinates [][]float64 `json:"coordinates"`
			} `json:"geometry"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	var out []lineFeature
	for _, f := range fc.Features {
		var pts []geo.Point
		for _, c := range f.Geometry.Coordinates {
			pts = append(pts, geo.Point{Lat: c[1], Lon: geo.NormalizeLon(c[0])})
		}
		out = append(out, lineFeature{level: f.Properties.Level, pts: pts})
	}
	return out
}

func TestParseLinesLayouts(t *testing.T) {
	docs := map[string]string{
		"compact": `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"level":1},"geometry":{"type":"LineString","coordinates":[[-80.13,25.6],[-80.13,25.9]]}}]}`,
		"members in another order, extra members, whitespace": `{
  "bbox": [1, 2, 3, 4], "features": [
    { "geometry": { "coordinates": [ [ 179.5 , 51.8 ] , [ 180.0, 51.8 ], [190, 51.8] ], "type": "LineString", "crs": null },
      "properties": { "kind": "shore\"line\u00e9", "nested": {"a": [true, false, null]}, "level": 2 },
      "type": "Feature", "id": 7 }
  ],
  "type" : "FeatureCollection"
}`,
		"numbers in every JSON form": `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"level":3},"geometry":{"type":"LineString","coordinates":[[-1.25e2,4.5E1,12],[0,-0.0],[1e-3,0.000012345678901234567],[-122,37]]}}]}`,
		"no features":                `{"type":"FeatureCollection","features":[]}`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			got, err := parseLines("x.geojson", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			want := decodeWithStdlib(t, []byte(doc))
			if len(got) != len(want) {
				t.Fatalf("%d features, want %d", len(got), len(want))
			}
			for i := range got {
				if got[i].level != want[i].level || !reflect.DeepEqual(got[i].pts, want[i].pts) {
					t.Errorf("feature %d: %+v, want %+v", i+1, got[i], want[i])
				}
			}
		})
	}
}

func TestParseLinesErrors(t *testing.T) {
	cases := []struct{ doc, want string }{
		{``, "line 1: expected '{'"},
		{`{"type":"FeatureCollection","features":[]} x`, "after the FeatureCollection"},
		{"{\"type\":\"FeatureCollection\",\n\"features\":[{\"type\":\"Feature\",\"properties\":{\"level\":1},\"geometry\":{\"type\":\"LineString\",\"coordinates\":[[1,2],[3]]}}]}", "line 2: feature 1: a position has 1 number(s)"},
		{`{"type":"FeatureCollection","features":[{"properties":{"level":1.5},"geometry":null}]}`, `"level" is 1.5`},
		{`{"type":"FeatureCollection","features":[{"properties":{"level":1},"geometry":null}]}`, "geometry is null"},
		{`{"type":"FeatureCollection","features":[{"properties":{"level":1},"geometry":{"type":"LineString","coordinates":[[01,2],[3,4]]}}]}`, "expected"},
		{`{"type":"FeatureCollection","features":[{"properties":{"level":1},"geometry":{"type":"LineString","coordinates":[[1.,2],[3,4]]}}]}`, "expected a number"},
		{`{"type":"FeatureCollection","features":[{"properties":{"level":1},"geometry":{"type":"LineString","coordinates":[[.5,2],[3,4]]}}]}`, "expected a number"},
		{`{"type":"FeatureCollection","features":[{"properties":{"level":1},"geometry":{"type":"LineString","coordinates":[[-,2],[3,4]]}}]}`, "expected a number"},
		{`{"type":"FeatureCollection","features":[{"properties":{"level":"1"}}]}`, "expected a number"},
		{`{"type":"FeatureCollection","features":[{"properties":{"kind":"a` + "\x01" + `"}}]}`, "control character"},
		{`{"type":"FeatureCollection","features":[{"properties":{"kind":"abc`, "unterminated string"},
		{`{"type":"FeatureCollection","features":[{"properties":{"kind":nul}}]}`, "unexpected 'n'"},
	}
	for _, c := range cases {
		_, err := parseLines("x.geojson", []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "x.geojson line ") {
			t.Errorf("%q: error %v, want one naming the file and line and containing %q", c.doc, err, c.want)
		}
	}
}

func TestParseNumberExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		v := (r.Float64()*2 - 1) * math.Pow(10, float64(r.IntN(6)))
		for _, s := range []string{strconv.FormatFloat(v, 'f', r.IntN(9), 64), strconv.FormatFloat(v, 'f', 5, 64), strconv.FormatFloat(v, 'g', -1, 64)} {
			p := &lineParser{b: []byte(s + ",")}
			got, err := p.number()
			want, _ := strconv.ParseFloat(s, 64)
			if err != nil || got != want || p.i != len(s) {
				t.Fatalf("number(%q) = %v, %v (consumed %d); want %v", s, got, err, p.i, want)
			}
		}
	}
}

func TestSimplifyTolerance(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var pts []geo.Point
	p := geo.Point{Lat: 58, Lon: -135}
	for i := 0; i < 1500; i++ {
		p.Lat += (r.Float64() - 0.45) * 0.01
		p.Lon += (r.Float64() - 0.4) * 0.02
		pts = append(pts, p)
	}
	orig := []lineFeature{{level: 1, pts: pts}}
	all := func(int) bool { return true }
	for _, tol := range []float64{0.3, 1, 2.5} {
		s := simplify(orig, all, tol)
		if len(s) != 1 || len(s[0].pts) >= len(pts) || len(s[0].pts) < 2 {
			t.Fatalf("tol %g: %d features, %d of %d points", tol, len(s), len(s[0].pts), len(pts))
		}
		if s[0].pts[0] != pts[0] || s[0].pts[len(s[0].pts)-1] != pts[len(pts)-1] {
			t.Errorf("tol %g: end points moved", tol)
		}
		worst := 0.0
		for _, q := range pts {
			best := math.Inf(1)
			for j := 1; j < len(s[0].pts); j++ {
				best = math.Min(best, geo.PointSegmentKm(q, geo.Segment{A: s[0].pts[j-1], B: s[0].pts[j]}))
			}
			worst = math.Max(worst, best)
		}
		// The local projection differs slightly from PointSegmentKm's.
		if worst > tol*1.05 {
			t.Errorf("tol %g: a dropped vertex lies %g km from the simplified line", tol, worst)
		}
		t.Logf("tol %g km: %d of %d points kept, worst vertex %.3f km", tol, len(s[0].pts), len(pts), worst)
	}
}

// bruteTiers searches every ring in turn, without the reach map.
func bruteTiers(t *tieredLines, p geo.Point) (float64, bool) {
	inner := 0.0
	for _, tr := range t.tiers {
		if d, _, ok := tr.ix.Nearest(p, tr.radiusKm); ok {
			return math.Max(d, inner), true
		}
		inner = tr.radiusKm
	}
	return 0, false
}

// checkReach compares the reach-map search with the plain ring search.
func checkReach(t *testing.T, name string, tl *tieredLines, pts []geo.Point) {
	t.Helper()
	bad := 0
	for _, p := range pts {
		d1, ok1 := tl.nearest(p)
		d2, ok2 := bruteTiers(tl, p)
		if d1 != d2 || ok1 != ok2 {
			if bad++; bad <= 5 {
				t.Errorf("%s at %+v: with reach map %g %v, without %g %v", name, p, d1, ok1, d2, ok2)
			}
		}
	}
}

func TestReachMapSkipsOnlyEmptyRings(t *testing.T) {
	m := fixture(t)
	r := rand.New(rand.NewPCG(5, 6))
	var pts []geo.Point
	// Points scattered around every fixture line, across the antimeridian
	// included, out to 1.5 degrees.
	for _, c := range []geo.Point{{Lat: 25.75, Lon: -80.13}, {Lat: 37.75, Lon: -122.51}, {Lat: 41.8, Lon: -87.6}, {Lat: 35.45, Lon: -97.5}, {Lat: 39.75, Lon: -105}, {Lat: 21.4, Lon: -157.9}, {Lat: 51.8, Lon: 180}, {Lat: 13.4, Lon: 144.8}, {Lat: 47.5, Lon: -122.3}, {Lat: 41.975, Lon: -91.65}, {Lat: 33.45, Lon: -112.07}} {
		for i := 0; i < 400; i++ {
			pts = append(pts, geo.Point{Lat: c.Lat + (r.Float64()*2-1)*1.5, Lon: geo.NormalizeLon(c.Lon + (r.Float64()*2-1)*1.5)})
		}
	}
	checkReach(t, "coast", m.coast, pts)
	checkReach(t, "lakes", m.lakes, pts)
	for lv, tl := range m.majorLevel {
		checkReach(t, fmt.Sprintf("rivers, level %d", lv+1), tl, pts)
	}
	checkReach(t, "minor rivers", m.minorRivers, pts)
}

func TestKmAndCountText(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{kmText(0.04), "under 0.1 km"}, {kmText(0.05), "0.1 km"}, {kmText(9.94), "9.9 km"}, {kmText(12.4), "12 km"},
		{pctText(0), "0%"}, {pctText(0.04), "under 0.1%"}, {pctText(4.43), "4.4%"}, {pctText(60.19), "60%"},
		{intText(0), "0"}, {intText(999), "999"}, {intText(1000), "1,000"}, {intText(179904), "179,904"}, {intText(1234567), "1,234,567"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
