package coverage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"

	"github.com/locrisk/locrisk/internal/risk/data"
)

// xy is a position in degrees: x is longitude, y latitude. Inside a ring the
// longitudes are continuous (no jump of ~360 between neighbours), so a ring
// that crosses the antimeridian may carry longitudes beyond 180.
type xy struct{ x, y float64 }

// ring is one closed ring without its repeated closing point, with its
// bounding box.
type ring struct {
	minX, maxX, minY, maxY float64
	pts                    []xy
}

// feature is one decoded geometry of a TopoJSON GeometryCollection.
type feature struct {
	id    string
	name  string
	rings []ring  // every ring of every polygon: even-odd over them all is the area
	area  float64 // km2, outer rings minus holes
	null  bool    // the geometry had no type (no shape); rings is empty
}

type topoTransform struct {
	Scale     [2]float64 `json:"scale"`
	Translate [2]float64 `json:"translate"`
}

type topology struct {
	Type      string                     `json:"type"`
	Transform *topoTransform             `json:"transform"`
	Objects   map[string]json.RawMessage `json:"objects"`
	Arcs      json.RawMessage            `json:"arcs"`
}

type topoCollection struct {
	Type       string         `json:"type"`
	Geometries []topoGeometry `json:"geometries"`
}

type topoGeometry struct {
	Type       *string         `json:"type"`
	Arcs       json.RawMessage `json:"arcs"`
	ID         json.RawMessage `json:"id"`
	Properties struct {
		Name string `json:"name"`
	} `json:"properties"`
}

// readTopoJSON decodes object `object` of the TopoJSON file rel (a
// GeometryCollection of Polygon / MultiPolygon geometries). Both quantized
// topologies (with a transform; arcs delta-encoded integers) and plain ones
// (absolute coordinates) are read. idDigits is the length ids are zero-padded
// to when a file stores them as numbers. Every error names the file.
func readTopoJSON(fsys fs.FS, rel, object string, idDigits int) ([]feature, error) {
	raw, err := data.ReadAll(fsys, rel)
	if err != nil {
		return nil, err
	}
	var topo topology
	if err := json.Unmarshal(raw, &topo); err != nil {
		return nil, fmt.Errorf("%s: not valid TopoJSON: %w", rel, err)
	}
	if topo.Type != "Topology" {
		return nil, fmt.Errorf("%s: type is %q, want \"Topology\"", rel, topo.Type)
	}
	if len(topo.Arcs) == 0 {
		return nil, fmt.Errorf("%s: no arcs", rel)
	}
	arcs, err := parseArcs(topo.Arcs, topo.Transform)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	objRaw, ok := topo.Objects[object]
	if !ok {
		return nil, fmt.Errorf("%s: no object %q", rel, object)
	}
	var coll topoCollection
	if err := json.Unmarshal(objRaw, &coll); err != nil {
		return nil, fmt.Errorf("%s: objects.%s: %w", rel, object, err)
	}
	if coll.Type != "GeometryCollection" {
		return nil, fmt.Errorf("%s: objects.%s has type %q, want \"GeometryCollection\"", rel, object, coll.Type)
	}
	feats := make([]feature, 0, len(coll.Geometries))
	for i, g := range coll.Geometries {
		f, err := decodeGeometry(g, arcs, idDigits)
		if err != nil {
			return nil, fmt.Errorf("%s: objects.%s geometry %d%s: %w", rel, object, i, idNote(g.ID), err)
		}
		feats = append(feats, f)
	}
	return feats, nil
}

func idNote(id json.RawMessage) string {
	if len(id) == 0 {
		return ""
	}
	return " (id " + string(id) + ")"
}

// parseArcs reads the topology's "arcs" member (an array of arcs, each an
// array of positions of at least two numbers) into absolute lon/lat
// positions. In a quantized topology (tr != nil) the first position of an
// arc is absolute and the rest are deltas from the previous one. It is a
// small hand-written scanner: the generic decoder spent most of Load
// allocating one slice per position.
func parseArcs(b []byte, tr *topoTransform) ([][]xy, error) {
	sc := scanner{b: b}
	var out [][]xy
	if err := sc.expect('['); err != nil {
		return nil, err
	}
	if sc.peek() == ']' {
		return nil, sc.errorf("empty arcs")
	}
	var coord [2]float64
	for {
		if err := sc.expect('['); err != nil {
			return nil, err
		}
		var pts []xy
		var qx, qy float64
		for sc.peek() != ']' || len(pts) == 0 {
			if err := sc.expect('['); err != nil {
				return nil, err
			}
			n := 0
			for {
				v, err := sc.number()
				if err != nil {
					return nil, err
				}
				if n < 2 {
					coord[n] = v
				}
				n++
				if sc.peek() == ']' {
					sc.i++
					break
				}
				if err := sc.expect(','); err != nil {
					return nil, err
				}
			}
			if n < 2 {
				return nil, fmt.Errorf("arc %d position %d has %d coordinate(s), want at least 2", len(out), len(pts), n)
			}
			p := xy{coord[0], coord[1]}
			if tr != nil {
				qx += coord[0]
				qy += coord[1]
				p = xy{qx*tr.Scale[0] + tr.Translate[0], qy*tr.Scale[1] + tr.Translate[1]}
			}
			// Rings may run past 180 to stay continuous across the
			// antimeridian, but never a whole turn beyond it; anything else
			// (NaN, infinities, a wrong quantization scale) is corrupt.
			if !(p.x >= -540 && p.x <= 540) || !(p.y >= -90 && p.y <= 90) {
				return nil, fmt.Errorf("arc %d position %d: (%g, %g) is not a longitude/latitude", len(out), len(pts), p.x, p.y)
			}
			pts = append(pts, p)
			if sc.peek() == ',' {
				sc.i++
			}
		}
		sc.i++ // the arc's ']'
		out = append(out, pts)
		if sc.peek() == ']' {
			sc.i++
			break
		}
		if err := sc.expect(','); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scanner walks a JSON value that encoding/json has already validated, so
// it only needs to check the shape it expects.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) peek() byte {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return s.errorf("expected %q", c)
	}
	s.i++
	return nil
}

func (s *scanner) number() (float64, error) {
	s.peek()
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		s.i++
	}
	tok := s.b[start:s.i]
	if len(tok) == 0 {
		return 0, s.errorf("expected a number")
	}
	// Quantized arcs are small integers: parse those directly.
	neg := tok[0] == '-'
	digits := tok
	if neg {
		digits = tok[1:]
	}
	if len(digits) > 0 && len(digits) < 16 {
		v := 0.0
		ok := true
		for _, c := range digits {
			if c < '0' || c > '9' {
				ok = false
				break
			}
			v = v*10 + float64(c-'0')
		}
		if ok {
			if neg {
				v = -v
			}
			return v, nil
		}
	}
	v, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return 0, s.errorf("bad number %q", tok)
	}
	return v, nil
}

func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("arcs member, offset %d: %s", s.i, fmt.Sprintf(format, args...))
}

func decodeGeometry(g topoGeometry, arcs [][]xy, idDigits int) (feature, error) {
	f := feature{name: g.Properties.Name}
	id, err := parseID(g.ID, idDigits)
	if err != nil {
		return f, err
	}
	f.id = id
	if g.Type == nil {
		// A null geometry: a feature without a shape (allowed by TopoJSON).
		f.null = true
		return f, nil
	}
	var polys [][][]int
	switch *g.Type {
	case "Polygon":
		var p [][]int
		if err := json.Unmarshal(g.Arcs, &p); err != nil {
			return f, fmt.Errorf("Polygon arcs: %w", err)
		}
		polys = [][][]int{p}
	case "MultiPolygon":
		if err := json.Unmarshal(g.Arcs, &polys); err != nil {
			return f, fmt.Errorf("MultiPolygon arcs: %w", err)
		}
	default:
		return f, fmt.Errorf("geometry type %q, want Polygon or MultiPolygon", *g.Type)
	}
	for _, poly := range polys {
		for k, refs := range poly {
			r, err := stitch(refs, arcs)
			if err != nil {
				return f, err
			}
			if len(r.pts) < 3 {
				// Simplification can collapse a tiny island to a line; it
				// encloses nothing, so it is dropped.
				continue
			}
			a := ringAreaKm2(r.pts)
			if k == 0 {
				f.area += a
			} else {
				f.area -= a // holes
			}
			f.rings = append(f.rings, r)
		}
	}
	if f.area < 0 {
		f.area = 0
	}
	return f, nil
}

// parseID accepts a string id or a number (some TopoJSON files store FIPS
// codes as numbers and so lose the leading zero).
func parseID(raw json.RawMessage, digits int) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New("missing id")
	}
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("id: %w", err)
		}
	} else {
		n, err := strconv.ParseUint(string(raw), 10, 32)
		if err != nil {
			return "", fmt.Errorf("id %s is neither a string nor a whole number", raw)
		}
		s = strconv.FormatUint(n, 10)
		for len(s) < digits {
			s = "0" + s
		}
	}
	if len(s) != digits {
		return "", fmt.Errorf("id %q is not %d digits", s, digits)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return "", fmt.Errorf("id %q is not %d digits", s, digits)
		}
	}
	return s, nil
}

// stitch joins the referenced arcs into one ring. A negative reference ~i is
// arc i reversed; consecutive arcs share their end point, which is kept once.
// Longitudes are then made continuous and shifted so the ring's westernmost
// longitude lies in [-180, 180): rings split at the antimeridian stay as
// they are, rings that run across it get longitudes beyond 180.
func stitch(refs []int, arcs [][]xy) (ring, error) {
	var pts []xy
	for _, ref := range refs {
		i := ref
		if i < 0 {
			i = ^i
		}
		if i >= len(arcs) {
			return ring{}, fmt.Errorf("arc reference %d out of range (%d arcs)", ref, len(arcs))
		}
		a := arcs[i]
		start := len(pts)
		if ref >= 0 {
			pts = append(pts, a...)
		} else {
			for j := len(a) - 1; j >= 0; j-- {
				pts = append(pts, a[j])
			}
		}
		if start > 0 && len(pts) > start {
			// Drop the shared joint; keep the earlier copy.
			pts = append(pts[:start], pts[start+1:]...)
		}
	}
	if n := len(pts); n > 1 && pts[0] == pts[n-1] {
		pts = pts[:n-1]
	}
	r := ring{pts: pts, minX: math.Inf(1), maxX: math.Inf(-1), minY: math.Inf(1), maxY: math.Inf(-1)}
	if len(pts) == 0 {
		return r, nil
	}
	shift := 0.0
	prev := pts[0].x
	for j := range pts {
		raw := pts[j].x
		if j > 0 {
			if d := raw - prev; d > 180 {
				shift -= 360
			} else if d < -180 {
				shift += 360
			}
		}
		prev = raw
		pts[j].x = raw + shift
	}
	for _, p := range pts {
		r.minX = math.Min(r.minX, p.x)
		r.maxX = math.Max(r.maxX, p.x)
		r.minY = math.Min(r.minY, p.y)
		r.maxY = math.Max(r.maxY, p.y)
	}
	var off float64
	for r.minX+off >= 180 {
		off -= 360
	}
	for r.minX+off < -180 {
		off += 360
	}
	if off != 0 {
		for j := range pts {
			pts[j].x += off
		}
		r.minX += off
		r.maxX += off
	}
	return r, nil
}

// contains is the even-odd (crossing number) test for a point whose
// longitude has already been brought into the ring's longitude range.
func (r *ring) contains(x, y float64) bool {
	pts := r.pts
	in := false
	j := len(pts) - 1
	for i := range pts {
		a, b := pts[i], pts[j]
		if (a.y > y) != (b.y > y) && x < (b.x-a.x)*(y-a.y)/(b.y-a.y)+a.x {
			in = !in
		}
		j = i
	}
	return in
}

// ringAreaKm2 is the area of a ring on the sphere, by the trapezoid form of
// the spherical excess that is exact for edges along parallels and meridians
// and very close for the short edges of generalised boundaries.
func ringAreaKm2(pts []xy) float64 {
	const rad = math.Pi / 180
	var s float64
	n := len(pts)
	for i := range pts {
		a, b := pts[i], pts[(i+1)%n]
		s += (b.x - a.x) * rad * (2 + math.Sin(a.y*rad) + math.Sin(b.y*rad))
	}
	// The sum is 2 * area / R^2 for one orientation; the sign only tells
	// the winding.
	return math.Abs(s) / 2 * geoRadius2
}
