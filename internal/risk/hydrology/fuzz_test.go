package hydrology

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/geo"
)

// jsonDuplicateKeys reports whether any object in the valid JSON document b
// repeats a member name. What a document with repeated names means is not
// defined (RFC 8259 section 4), so the differential check leaves them out.
func jsonDuplicateKeys(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		obj    bool
		keys   map[string]bool
		expKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			return true // not expected for a valid document; be conservative
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if top != nil && top.obj {
					top.expKey = true // this value completes a member
				}
				stack = append(stack, &frame{obj: d == '{', keys: map[string]bool{}, expKey: d == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if top != nil && top.obj {
			if top.expKey {
				k := tok.(string)
				if top.keys[k] {
					return true
				}
				top.keys[k] = true
				top.expKey = false
			} else {
				top.expKey = true
			}
		}
	}
}

// refNumbersOK reports whether every number in v is within float64 range.
func refNumbersOK(v any) bool {
	switch x := v.(type) {
	case json.Number:
		_, err := strconv.ParseFloat(string(x), 64)
		return err == nil
	case []any:
		for _, e := range x {
			if !refNumbersOK(e) {
				return false
			}
		}
	case map[string]any:
		for _, e := range x {
			if !refNumbersOK(e) {
				return false
			}
		}
	}
	return true
}

// refLines is what parseLines should return for a valid JSON document
// without repeated member names, decided on encoding/json's generic tree.
func refLines(b []byte) ([]lineFeature, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil || !refNumbersOK(doc) {
		// The streaming parser reads every number it meets, including
		// those of members it skips, and refuses one beyond float64.
		return nil, false
	}
	top, ok := doc.(map[string]any)
	if !ok || top["type"] != "FeatureCollection" {
		return nil, false
	}
	raw, has := top["features"]
	if !has {
		return nil, true
	}
	arr, ok := raw.([]any)
	if !ok {
		return nil, false
	}
	num := func(v any) (float64, bool) {
		n, ok := v.(json.Number)
		if !ok {
			return 0, false
		}
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil
	}
	var out []lineFeature
	for _, fv := range arr {
		f, ok := fv.(map[string]any)
		if !ok {
			return nil, false
		}
		props, ok := f["properties"].(map[string]any)
		if !ok {
			return nil, false
		}
		level, ok := num(props["level"])
		if !ok || level != math.Trunc(level) || level < 0 || level > 100 {
			return nil, false
		}
		g, ok := f["geometry"].(map[string]any)
		if !ok || g["type"] != "LineString" {
			return nil, false
		}
		coords, ok := g["coordinates"].([]any)
		if !ok || len(coords) < 2 {
			return nil, false
		}
		var pts []geo.Point
		for _, cv := range coords {
			c, ok := cv.([]any)
			if !ok || len(c) < 2 {
				return nil, false
			}
			var xy [2]float64
			for i, nv := range c {
				v, ok := num(nv)
				if !ok {
					return nil, false
				}
				if i < 2 {
					xy[i] = v
				}
			}
			lon, lat := xy[0], xy[1]
			if lat < -90 || lat > 90 || lon < -180 || lon > 360 {
				return nil, false
			}
			pts = append(pts, geo.Point{Lat: lat, Lon: geo.NormalizeLon(lon)})
		}
		out = append(out, lineFeature{level: int(level), pts: pts})
	}
	return out, true
}

// FuzzParseLines feeds arbitrary bytes to the hand-written GeoJSON parser.
// It must never panic; errors name the file and a line inside the input; it
// must accept only valid JSON, return well-formed features, and, for
// documents without repeated member names, accept exactly the documents
// encoding/json says are a FeatureCollection of LineStrings with a level,
// returning the same levels and positions.
func FuzzParseLines(f *testing.F) {
	for _, s := range []string{
		`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"level":1},"geometry":{"type":"LineString","coordinates":[[-80.13,25.6],[-80.13,25.9]]}}]}`,
		`{"features":[{"geometry":{"coordinates":[[179.5,51.8],[180.0,51.8],[190,51.8,3]],"type":"LineString"},"properties":{"kind":"a\"b\u00e9","level":2},"id":7}],"type":"Fea\u0074ureCollection"}`,
		`{"type":"FeatureCollection","features":[{"properties":{"level":3},"geometry":{"type":"LineString","coordinates":[[-1.25e2,4.5E1],[0,-0.0],[1e-3,0.000012345678901234567]]}}]}`,
		`{"type":"FeatureCollection","features":[]}`,
		`{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {"region": "CONUS", "level": 4, "kind": "additional rivers"}, "geometry": {"type": "LineString", "coordinates": [[-91.80, 41.975], [-91.65, 41.975]]}},
{"type": "Feature", "properties": {"region": "CONUS", "level": 10, "kind": "minor canals"}, "geometry": {"type": "LineString", "coordinates": [[-112.074, 33.30], [-112.074, 33.60]]}}]}`,
		`{"type":"FeatureCollection"}`,
		`{"type":"FeatureCollection","features":[{"properties":null,"geometry":null}]}`,
		`{"type":"FeatureCollection","features":[{"properties":{"level":1},"geometry":{"type":"Point","coordinates":[[1,2],[3,4]]}}]}`,
		`{"type":"FeatureCollection","features":[{"properties":{"level":1.5},"geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]}}]}`,
		`{"type":"FeatureCollection","features":[{"properties":{"level":1,"x":1e400},"geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]}}]}`,
		`{"type":"FeatureCollection","features":[{"properties":{"level":1},"geometry":{"type":"LineString","coordinates":[[01,2],[3,4]]}}]}`,
		`{"type":"FeatureCollection","features":[{"properties":{"level":1},"geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]}}]} x`,
		"{\"type\":\"FeatureCollection\",\n\"features\":[{\"properties\":{\"level\":1},\"geometry\":{\"type\":\"LineString\",\"coordinates\":[[1,2],[3]]}}]}",
		`{"type":"FeatureCollection","features":[{"properties":{"level":1,"level":2},"geometry":{"type":"LineString","coordinates":[[1,2],[3,4]],"coordinates":[[5,6]]}}]}`,
		`{"type":"FeatureCollection","features":[{"properties":{"kind":"abc`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseLines("x.geojson", b)
		if err != nil {
			msg := err.Error()
			rest, ok := strings.CutPrefix(msg, "x.geojson line ")
			if !ok {
				t.Fatalf("error %q does not name the file and line", msg)
			}
			n, _, _ := strings.Cut(rest, ":")
			line, aerr := strconv.Atoi(n)
			if aerr != nil || line < 1 || line > 1+bytes.Count(b, []byte{'\n'}) {
				t.Fatalf("error %q names a line outside the input", msg)
			}
		} else {
			if !json.Valid(b) {
				t.Fatalf("parseLines accepted invalid JSON %q", b)
			}
			for i, f := range got {
				if f.level < 0 || f.level > 100 || len(f.pts) < 2 {
					t.Fatalf("feature %d: level %d, %d positions", i+1, f.level, len(f.pts))
				}
				for _, p := range f.pts {
					if !(p.Lat >= -90 && p.Lat <= 90 && p.Lon >= -180 && p.Lon < 180) {
						t.Fatalf("feature %d: position %v out of range", i+1, p)
					}
				}
			}
		}
		if !json.Valid(b) || jsonDuplicateKeys(b) {
			return
		}
		want, ok := refLines(b)
		if ok != (err == nil) {
			t.Fatalf("parseLines error %v, but encoding/json finds the document acceptable=%v: %q", err, ok, b)
		}
		if !ok {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%d features, encoding/json %d", len(got), len(want))
		}
		for i := range got {
			if got[i].level != want[i].level || !reflect.DeepEqual(got[i].pts, want[i].pts) {
				t.Fatalf("feature %d: %+v, encoding/json %+v", i+1, got[i], want[i])
			}
		}
	})
}

// FuzzParseNELines feeds arbitrary bytes to the parser in its Natural
// Earth mode: it must never panic, errors name the file and a line inside
// the input, and what it accepts is valid JSON with well-formed features.
func FuzzParseNELines(f *testing.F) {
	for _, s := range []string{
		`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"featurecla":"River","scalerank":10,"strokeweig":0.2,"name":"Russian"},"geometry":{"type":"LineString","coordinates":[[-123.1,38.5],[-122.9,38.5]]}}]}`,
		`{"type":"FeatureCollection","features":[{"properties":{"featurecla":"River (Intermittent)","scalerank":12,"name":null},"geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]}}]}`,
		`{"type":"FeatureCollection","features":[{"properties":{"featurecla":"Lake Centerline","name":"a\u00e9"},"geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]}}]}`,
		`{"type":"FeatureCollection","features":[{"properties":{"scalerank":11},"geometry":{"type":"MultiLineString","coordinates":[[[1,2],[3,4]]]}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseNELines("x.geojson", b)
		if err != nil {
			rest, ok := strings.CutPrefix(err.Error(), "x.geojson line ")
			if !ok {
				t.Fatalf("error %q does not name the file and line", err)
			}
			n, _, _ := strings.Cut(rest, ":")
			if line, aerr := strconv.Atoi(n); aerr != nil || line < 1 || line > 1+bytes.Count(b, []byte{'\n'}) {
				t.Fatalf("error %q names a line outside the input", err)
			}
			return
		}
		if !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		for i, f := range got {
			if f.level < 0 || f.level > 100 || len(f.pts) < 2 || f.kind > kindIntermittent {
				t.Fatalf("feature %d: %+v", i+1, f)
			}
		}
	})
}
