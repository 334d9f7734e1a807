package coverage

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// refArcs decodes a TopoJSON "arcs" member with encoding/json's generic
// decoder and applies the transform the way the TopoJSON specification
// describes (delta-encoded positions when quantized).
func refArcs(b []byte, tr *topoTransform) ([][]xy, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	arcs, ok := v.([]any)
	if !ok || len(arcs) == 0 {
		return nil, false
	}
	var out [][]xy
	for _, av := range arcs {
		arc, ok := av.([]any)
		if !ok || len(arc) == 0 {
			return nil, false
		}
		var pts []xy
		var qx, qy float64
		for _, pv := range arc {
			pos, ok := pv.([]any)
			if !ok || len(pos) < 2 {
				return nil, false
			}
			var c [2]float64
			for i, nv := range pos {
				n, ok := nv.(json.Number)
				if !ok {
					return nil, false
				}
				f, err := strconv.ParseFloat(string(n), 64)
				if err != nil {
					return nil, false
				}
				if i < 2 {
					c[i] = f
				}
			}
			p := xy{c[0], c[1]}
			if tr != nil {
				qx += c[0]
				qy += c[1]
				p = xy{qx*tr.Scale[0] + tr.Translate[0], qy*tr.Scale[1] + tr.Translate[1]}
			}
			if !(p.x >= -540 && p.x <= 540) || !(p.y >= -90 && p.y <= 90) {
				return nil, false
			}
			pts = append(pts, p)
		}
		out = append(out, pts)
	}
	return out, true
}

func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// FuzzParseArcs checks the hand-written arcs scanner against encoding/json
// on any valid JSON value (its documented precondition: readTopoJSON hands
// it a member encoding/json has validated). It must never panic and must
// accept exactly what the reference accepts, with the same positions.
func FuzzParseArcs(f *testing.F) {
	for _, s := range []string{
		`[[[-120,36],[-119,36],[-119,37],[-120,37],[-120,36]]]`,
		` [ [ [0,0] , [1,2,3] ] , [[5,5],[-1,-1]] ] `,
		`[[[4000,1200],[12,-7],[-3,0]]]`,
		`[[[1.5e2,-4.5E1],[-0,0.0],[123456789012345678,1]]]`,
		`[]`, `[[]]`, `[[[1]]]`, `[[[1,null]]]`, `[[1,2]]`, `null`, `"arcs"`,
		`[[[1e400,1]]]`, `[[[1,91]]]`, `[[[1,2]],[[3,4]]]`,
	} {
		f.Add([]byte(s), false, 1.0, 1.0, 0.0, 0.0)
		f.Add([]byte(s), true, 0.001, 0.0005, -180.0, 17.0)
	}
	f.Fuzz(func(t *testing.T, b []byte, quantized bool, sx, sy, tx, ty float64) {
		if !json.Valid(b) {
			return
		}
		var tr *topoTransform
		if quantized {
			fin := func(v, def float64) float64 {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return def
				}
				return v
			}
			tr = &topoTransform{Scale: [2]float64{fin(sx, 1), fin(sy, 1)}, Translate: [2]float64{fin(tx, 0), fin(ty, 0)}}
		}
		got, err := parseArcs(b, tr)
		want, ok := refArcs(b, tr)
		if (err == nil) != ok {
			t.Fatalf("parseArcs(%q) error %v; encoding/json accepts it: %v", b, err, ok)
		}
		if !ok {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%d arcs, encoding/json %d", len(got), len(want))
		}
		for i := range got {
			if len(got[i]) != len(want[i]) {
				t.Fatalf("arc %d: %d positions, encoding/json %d", i, len(got[i]), len(want[i]))
			}
			for j := range got[i] {
				g, w := got[i][j], want[i][j]
				if !sameFloat(g.x, w.x) || !sameFloat(g.y, w.y) {
					t.Fatalf("arc %d position %d: %v, encoding/json %v", i, j, g, w)
				}
			}
		}
	})
}

// FuzzReadTopoJSON writes arbitrary bytes as a boundary file and reads it.
// readTopoJSON must never panic, every error must name the file, and what
// it returns must be well formed: ids of the requested width, rings of at
// least three finite positions with their true bounding box, the west edge
// in [-180, 180), and a finite, non-negative area.
func FuzzReadTopoJSON(f *testing.F) {
	for _, s := range []string{
		edgeCounties,
		edgeStates,
		`{"type":"Topology","transform":{"scale":[0.001,0.001],"translate":[-125,24]},"objects":{"counties":{"type":"GeometryCollection","geometries":[{"type":"MultiPolygon","arcs":[[[0,~1]]],"id":6075,"properties":{"name":"X"}}]}},"arcs":[[[0,0],[1000,0],[0,1000]],[[0,0],[1000,1000]]]}`,
		`{"type":"Topology","objects":{"counties":{"type":"GeometryCollection","geometries":[{"type":"Polygon","arcs":[[0,-1]],"id":"0607"}]}},"arcs":[[[1,2],[3,4]]]}`,
		`{"type":"Topology","objects":{"counties":{"type":"GeometryCollection","geometries":[{"type":"Polygon","arcs":[[5]],"id":"06075"}]}},"arcs":[[[1,2],[3,4]]]}`,
		`{"type":"Topology","objects":{"counties":{"type":"GeometryCollection","geometries":[{"type":"Point","arcs":[],"id":"06075"}]}},"arcs":[[[1,2]]]}`,
		`{"type":"Topology","objects":{},"arcs":[[[1,2]]]}`,
		`{"type":"Topology","arcs":[]}`,
		`{"type":"Feature"}`,
		`[1,2]`,
		``,
	} {
		f.Add([]byte(s), true)
	}
	dir := f.TempDir()
	const rel = "boundaries/fuzz.json"
	if err := os.MkdirAll(filepath.Join(dir, "boundaries"), 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte, counties bool) {
		object, digits := "states", 2
		if counties {
			object, digits = "counties", 5
		}
		if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
			t.Fatal(err)
		}
		feats, err := readTopoJSON(os.DirFS(dir), rel, object, digits)
		if err != nil {
			if !strings.Contains(err.Error(), rel) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for i, ft := range feats {
			if len(ft.id) != digits || strings.Trim(ft.id, "0123456789") != "" {
				t.Fatalf("feature %d: id %q is not %d digits", i, ft.id, digits)
			}
			if ft.null && len(ft.rings) != 0 {
				t.Fatalf("feature %d: a null geometry with %d rings", i, len(ft.rings))
			}
			if math.IsNaN(ft.area) || math.IsInf(ft.area, 0) || ft.area < 0 {
				t.Fatalf("feature %d: area %v", i, ft.area)
			}
			for k, r := range ft.rings {
				if len(r.pts) < 3 {
					t.Fatalf("feature %d ring %d: %d positions", i, k, len(r.pts))
				}
				minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
				for _, p := range r.pts {
					if math.IsNaN(p.x) || math.IsInf(p.x, 0) || !(p.y >= -90 && p.y <= 90) {
						t.Fatalf("feature %d ring %d: position %v", i, k, p)
					}
					minX, maxX = math.Min(minX, p.x), math.Max(maxX, p.x)
					minY, maxY = math.Min(minY, p.y), math.Max(maxY, p.y)
				}
				if r.minX != minX || r.maxX != maxX || r.minY != minY || r.maxY != maxY {
					t.Fatalf("feature %d ring %d: box %v..%v x %v..%v, positions span %v..%v x %v..%v",
						i, k, r.minX, r.maxX, r.minY, r.maxY, minX, maxX, minY, maxY)
				}
				if r.minX < -180 || r.minX >= 180 {
					t.Fatalf("feature %d ring %d: west edge %v outside [-180, 180)", i, k, r.minX)
				}
			}
		}
	})
}

// TestStitchHugeLongitude: a boundary file whose ring lies at a longitude
// far beyond 180 (a corrupt file, or a quantized file with a wrong scale)
// is refused with an error naming the file. (It once made stitch shift the
// ring by 360 degrees per loop, about x/360 times.)
func TestStitchHugeLongitude(t *testing.T) {
	dir := t.TempDir()
	doc := `{"type":"Topology","objects":{"states":{"type":"GeometryCollection","geometries":[
		{"type":"Polygon","arcs":[[0]],"id":"06"}]}},"arcs":[[[1e20,36],[1e20,37],[1e20,38],[1e20,36]]]}`
	if err := os.WriteFile(filepath.Join(dir, "s.json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := readTopoJSON(os.DirFS(dir), "s.json", "states", 2); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "s.json") {
			t.Errorf("a longitude of 1e20 gave error %v; want one naming the file", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("readTopoJSON still running after 5 s on a longitude of 1e20")
	}
}

// TestQuantizedNaNLongitude: a NaN longitude, which a quantized arc gets
// when its running sum overflows to infinity and the scale is 0, is refused.
func TestQuantizedNaNLongitude(t *testing.T) {
	tr := &topoTransform{Scale: [2]float64{0, 1}}
	_, err := parseArcs([]byte(`[[[1e308,36],[1e308,1],[0,1],[0,-2]]]`), tr)
	if err == nil {
		t.Fatal("parseArcs accepted a position whose longitude is NaN")
	}
}
