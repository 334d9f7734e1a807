package earthquake

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// faultSource is the USGS NSHM 2023 fault section database (western US).
const faultSource = "usgs-nshm-2023-faults"

// Fault proximity (docs/methodology.md, "Earthquake"): how close the site
// is to the nearest mapped active fault section. Near-fault sites shake
// hardest and most often in the earthquakes those faults produce.
const (
	faultSearchKm = 100.0 // farther than this the distance is capped (the proximity index is below 0.0001)
	faultDecayKm  = 10.0  // proximity index exp(-distance / 10 km)
	faultCellDeg  = 0.5
)

// faultLayer is the fault traces with their names, and the states the
// database maps (where a far fault means a far fault, not missing data).
type faultLayer struct {
	names  []string
	index  *geo.SegmentIndex
	states map[string]bool
	rows   int
}

// faultCollection is the part of the GeoJSON the layer reads.
type faultCollection struct {
	Type     string `json:"type"`
	Features []struct {
		Properties struct {
			FaultName string  `json:"FaultName"`
			PrimState *string `json:"PrimState"`
			SecState  *string `json:"SecState"`
		} `json:"properties"`
		Geometry struct {
			Type        string          `json:"type"`
			Coordinates json.RawMessage `json:"coordinates"`
		} `json:"geometry"`
	} `json:"features"`
}

// loadFaults reads the fault sections into a segment index.
func loadFaults(fsys fs.FS) (*faultLayer, error) {
	rel := data.Path(faultSource)
	b, err := data.ReadAll(fsys, rel)
	if err != nil {
		return nil, err
	}
	return parseFaults(rel, b)
}

func parseFaults(rel string, b []byte) (*faultLayer, error) {
	var fc faultCollection
	if err := json.Unmarshal(b, &fc); err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if fc.Type != "FeatureCollection" {
		return nil, fmt.Errorf("%s: not a GeoJSON FeatureCollection", rel)
	}
	l := &faultLayer{states: map[string]bool{}}
	var segs []geo.Segment
	var tags []int32
	for i, f := range fc.Features {
		name := strings.TrimSpace(f.Properties.FaultName)
		if name == "" {
			return nil, fmt.Errorf("%s: feature %d has no FaultName", rel, i)
		}
		var lines [][][]*float64
		switch f.Geometry.Type {
		case "MultiLineString":
			if err := json.Unmarshal(f.Geometry.Coordinates, &lines); err != nil {
				return nil, fmt.Errorf("%s: feature %d (%s): %w", rel, i, name, err)
			}
		case "LineString":
			var line [][]*float64
			if err := json.Unmarshal(f.Geometry.Coordinates, &line); err != nil {
				return nil, fmt.Errorf("%s: feature %d (%s): %w", rel, i, name, err)
			}
			lines = [][][]*float64{line}
		default:
			return nil, fmt.Errorf("%s: feature %d (%s): geometry %q is not a line", rel, i, name, f.Geometry.Type)
		}
		tag := int32(len(l.names))
		before := len(segs)
		for _, line := range lines {
			var prev geo.Point
			for k, c := range line {
				// A position is [lon, lat] or [lon, lat, depth]; a short or
				// null one would otherwise read as 0.
				if len(c) < 2 || c[0] == nil || c[1] == nil {
					return nil, fmt.Errorf("%s: feature %d (%s): position %d is not [longitude, latitude]", rel, i, name, k)
				}
				lon, lat := *c[0], *c[1]
				if lon < -180 || lon > 180 || lat < -90 || lat > 90 {
					return nil, fmt.Errorf("%s: feature %d (%s): coordinate [%v, %v] out of range", rel, i, name, lon, lat)
				}
				pt := geo.Point{Lat: lat, Lon: lon}
				if k > 0 {
					segs = append(segs, geo.Segment{A: prev, B: pt})
					tags = append(tags, tag)
				}
				prev = pt
			}
		}
		if len(segs) == before {
			continue // no trace: neither a fault to measure nor a state it maps
		}
		l.names = append(l.names, name)
		for _, st := range []*string{f.Properties.PrimState, f.Properties.SecState} {
			if st != nil && *st != "" {
				l.states[*st] = true
			}
		}
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("%s: no fault trace", rel)
	}
	l.rows = len(fc.Features)
	l.index = geo.NewSegmentIndex(segs, tags, faultCellDeg)
	return l, nil
}

// covers reports whether the database maps faults in the site's state: in
// the central and eastern states it has no sources, so a distance there
// would say nothing about the hazard.
func (l *faultLayer) covers(stateCode string) bool { return l.states[stateCode] }

// nearest returns the nearest fault section's name and distance in km;
// ok is false when none lies within faultSearchKm.
func (l *faultLayer) nearest(p geo.Point) (name string, km float64, ok bool) {
	d, tag, ok := l.index.Nearest(p, faultSearchKm)
	if !ok {
		return "", 0, false
	}
	return l.names[tag], d, true
}
