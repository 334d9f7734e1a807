package earthquake

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// akSource is the USGS NSHM Alaska 2007 source model: crustal fault traces
// and the upper and lower edges of the subduction interfaces.
const akSource = "usgs-nshm-ak-2007-faults"

// Feature kinds in the Alaska file.
const (
	akKindCrustal = "crustal_fault"
	akKindSection = "fault_system_section"
	akKindUpper   = "subduction_interface_upper_edge"
	akKindLower   = "subduction_interface_lower_edge"
)

// akLayer is Alaska's fault traces (for the distance to the nearest fault)
// and its subduction interfaces as surface polygons between their upper and
// lower edge traces (for whether the site lies above the megathrust).
type akLayer struct {
	names  []string
	index  *geo.SegmentIndex
	ifaces []akInterface
	rows   int
}

// akInterface is the surface projection of one interface source: the
// polygon from its upper edge trace back along its lower edge trace.
// Longitudes are kept continuous west of 180 degrees (values below -180,
// as in the file), so the polygon never wraps.
type akInterface struct {
	name                           string
	ring                           []geo.Point
	minLat, maxLat, minLon, maxLon float64
}

type akCollection struct {
	Type     string `json:"type"`
	Features []struct {
		Properties struct {
			Kind       string `json:"kind"`
			Name       string `json:"name"`
			Fault      string `json:"fault"`
			SourceFile string `json:"source_file"`
		} `json:"properties"`
		Geometry struct {
			Type        string       `json:"type"`
			Coordinates [][]*float64 `json:"coordinates"`
		} `json:"geometry"`
	} `json:"features"`
}

func loadAKFaults(fsys fs.FS) (*akLayer, error) {
	rel := data.Path(akSource)
	b, err := data.ReadAll(fsys, rel)
	if err != nil {
		return nil, err
	}
	return parseAKFaults(rel, b)
}

func parseAKFaults(rel string, b []byte) (*akLayer, error) {
	var fc akCollection
	if err := json.Unmarshal(b, &fc); err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if fc.Type != "FeatureCollection" {
		return nil, fmt.Errorf("%s: not a GeoJSON FeatureCollection", rel)
	}
	l := &akLayer{rows: len(fc.Features)}
	var segs []geo.Segment
	var tags []int32
	nameTag := map[string]int32{}
	type edges struct{ upper, lower []geo.Point }
	ifaces := map[string]*edges{}
	var ifaceOrder []string
	for i, f := range fc.Features {
		pr := f.Properties
		name := strings.TrimSpace(pr.Fault)
		if name == "" {
			name = strings.TrimSpace(pr.Name)
		}
		if name == "" {
			return nil, fmt.Errorf("%s: feature %d has no name", rel, i)
		}
		if f.Geometry.Type != "LineString" {
			return nil, fmt.Errorf("%s: feature %d (%s): geometry %q is not a LineString", rel, i, name, f.Geometry.Type)
		}
		line := make([]geo.Point, 0, len(f.Geometry.Coordinates))
		for k, c := range f.Geometry.Coordinates {
			if len(c) < 2 || c[0] == nil || c[1] == nil {
				return nil, fmt.Errorf("%s: feature %d (%s): position %d is not [longitude, latitude]", rel, i, name, k)
			}
			lon, lat := *c[0], *c[1]
			// West of 180 degrees the file writes longitudes below -180.
			if lon < -360 || lon > 180 || lat < -90 || lat > 90 {
				return nil, fmt.Errorf("%s: feature %d (%s): coordinate [%v, %v] out of range", rel, i, name, lon, lat)
			}
			line = append(line, geo.Point{Lat: lat, Lon: lon})
		}
		if len(line) < 2 {
			return nil, fmt.Errorf("%s: feature %d (%s): fewer than two positions", rel, i, name)
		}
		switch pr.Kind {
		case akKindCrustal, akKindSection:
			tag, ok := nameTag[name]
			if !ok {
				tag = int32(len(l.names))
				nameTag[name] = tag
				l.names = append(l.names, name)
			}
			for k := 1; k < len(line); k++ {
				a, b := line[k-1], line[k]
				a.Lon, b.Lon = geo.NormalizeLon(a.Lon), geo.NormalizeLon(b.Lon)
				segs = append(segs, geo.Segment{A: a, B: b})
				tags = append(tags, tag)
			}
		case akKindUpper, akKindLower:
			key := pr.SourceFile + "|" + strings.TrimSpace(pr.Name)
			e := ifaces[key]
			if e == nil {
				e = &edges{}
				ifaces[key] = e
				ifaceOrder = append(ifaceOrder, key)
			}
			dst := &e.upper
			if pr.Kind == akKindLower {
				dst = &e.lower
			}
			if *dst != nil {
				return nil, fmt.Errorf("%s: feature %d (%s): second %s", rel, i, name, pr.Kind)
			}
			*dst = line
		default:
			return nil, fmt.Errorf("%s: feature %d (%s): unknown kind %q", rel, i, name, pr.Kind)
		}
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("%s: no fault trace", rel)
	}
	for _, key := range ifaceOrder {
		e := ifaces[key]
		name := key[strings.IndexByte(key, '|')+1:]
		if e.upper == nil || e.lower == nil {
			return nil, fmt.Errorf("%s: interface %s lacks its upper or lower edge", rel, name)
		}
		ring := make([]geo.Point, 0, len(e.upper)+len(e.lower))
		ring = append(ring, e.upper...)
		for k := len(e.lower) - 1; k >= 0; k-- {
			ring = append(ring, e.lower[k])
		}
		in := akInterface{name: name, ring: ring, minLat: math.Inf(1), maxLat: math.Inf(-1), minLon: math.Inf(1), maxLon: math.Inf(-1)}
		for _, q := range ring {
			in.minLat, in.maxLat = math.Min(in.minLat, q.Lat), math.Max(in.maxLat, q.Lat)
			in.minLon, in.maxLon = math.Min(in.minLon, q.Lon), math.Max(in.maxLon, q.Lon)
		}
		l.ifaces = append(l.ifaces, in)
	}
	l.index = geo.NewSegmentIndex(segs, tags, faultCellDeg)
	return l, nil
}

// nearest returns the nearest Alaska fault's name and distance in km; ok is
// false when none lies within faultSearchKm.
func (l *akLayer) nearest(p geo.Point) (name string, km float64, ok bool) {
	d, tag, ok := l.index.Nearest(p, faultSearchKm)
	if !ok {
		return "", 0, false
	}
	return l.names[tag], d, true
}

// interfacesAt names the subduction interfaces the point lies above
// (between an interface's upper and lower edge traces), in file order.
func (l *akLayer) interfacesAt(p geo.Point) []string {
	lon := geo.NormalizeLon(p.Lon)
	if lon > 0 {
		lon -= 360 // the file's continuous longitudes west of 180
	}
	var out []string
	for i := range l.ifaces {
		in := &l.ifaces[i]
		if p.Lat < in.minLat || p.Lat > in.maxLat || lon < in.minLon || lon > in.maxLon {
			continue
		}
		if inRing(in.ring, p.Lat, lon) {
			out = append(out, in.name)
		}
	}
	return out
}

// inRing is the even-odd ray-casting test in plain longitude-latitude
// coordinates, which is all a polygon a few degrees across needs.
func inRing(ring []geo.Point, lat, lon float64) bool {
	inside := false
	for i, j := 0, len(ring)-1; i < len(ring); j, i = i, i+1 {
		a, b := ring[i], ring[j]
		if (a.Lat > lat) != (b.Lat > lat) {
			x := a.Lon + (lat-a.Lat)*(b.Lon-a.Lon)/(b.Lat-a.Lat)
			if lon < x {
				inside = !inside
			}
		}
	}
	return inside
}
