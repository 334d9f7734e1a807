// Package coverage decides whether a coordinate is inside supported United
// States coverage and which county it lies in, from the Census 2023
// cartographic county boundaries (us-atlas TopoJSON, 1:10,000,000), the
// state boundaries of the same edition, and the 2019 Census county
// Gazetteer (land areas, internal points).
//
// Coverage is the 50 states, DC, Puerto Rico, the U.S. Virgin Islands, Guam,
// the Northern Mariana Islands and American Samoa. A point is covered when it
// is inside a county polygon or within NearShoreKm of a county boundary:
// the generalised coastlines cut off real shore (piers, beaches, small
// islands). Limits that follow from the data:
//   - the outlines are simplified for 1:10,000,000 maps and quantized
//     (0.0036 degree of longitude, 0.00086 of latitude), so points within a
//     few hundred metres of a county line can land in the neighbour county,
//     and the near-shore tolerance also admits points up to NearShoreKm
//     beyond a land border with Canada or Mexico;
//   - the outlines follow the shore: open water that counties legally
//     include (the Great Lakes, bays, the sea out to the state line) is not
//     covered beyond NearShoreKm;
//   - the generalisation collapsed Falls Church city, VA (51610) to a line:
//     it is listed but never located (its area falls in Fairfax or
//     Arlington);
//   - Connecticut has the 2022 planning regions (09110-09190) and Alaska the
//     2019 Chugach / Copper River split, while the 2019 Gazetteer still has
//     the old Connecticut counties and Valdez-Cordova (02261): those have no
//     Gazetteer land area (it is computed from the polygon) and the old codes
//     are left out of the reference set;
//   - the Gazetteer has no rows for the Virgin Islands, Guam, the Northern
//     Mariana Islands and American Samoa, so their land areas are computed
//     from the polygons and they have no reference points.
//
// A loaded Layer is read-only and safe for concurrent use.
package coverage

import (
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// Source ids in the data catalog.
const (
	SourceCounties  = "census-counties-2023"
	SourceStates    = "census-states-2023"
	SourceGazetteer = "census-gazetteer-2019"
)

// NearShoreKm is how far outside every county polygon a point may be and
// still belong to the nearest county.
const NearShoreKm = 1.0

// BorderCapKm is the largest distance to another county that Locate
// reports; beyond it borderKm is +Inf.
const BorderCapKm = 50.0

const geoRadius2 = geo.EarthRadiusKm * geo.EarthRadiusKm

// Grid cell sizes: county boxes are coarse (a cell usually meets one to four
// counties), edges finer so a 1-2 km query reads only a few dozen edges.
const (
	countyCellDeg = 0.25
	edgeCellDeg   = 0.1
)

// County is one county or county equivalent (parish, borough, census area,
// independent city, municipio, island district, planning region).
type County struct {
	FIPS      string // 5 digits, e.g. "06075"
	Name      string // e.g. "San Francisco County"; the boundary file's name when the Gazetteer has none
	StateFIPS string // 2 digits
	StateCode string // USPS code, e.g. "CA"
	StateName string // e.g. "California"
	Conus     bool   // in the 48 conterminous states or DC
	Territory bool   // PR, VI, GU, MP, AS
	// LandAreaKm2 is the Gazetteer land area, or where the Gazetteer has no
	// row the area of the generalised polygon (which includes inland water).
	LandAreaKm2 float64
}

// RefPoint is one point of the national reference set.
type RefPoint struct {
	FIPS  string
	Point geo.Point
}

// Layer is the loaded county layer.
type Layer struct {
	counties []*County // sorted by FIPS; the county number is the position
	byFIPS   map[string]int
	rings    [][]ring       // per county
	grid     *geo.CellIndex // county numbers by 0.25 degree cell
	edges    segIndex       // every county edge, tagged with its county
	states   map[string][]ring
	// stateList is every state with an outline, sorted by FIPS (States).
	stateList []State
	ref       []RefPoint
	refMoved  int // reference points moved off water onto their county
	// The Gazetteer reference set is built on first use only: the engine
	// ranks against census tracts, and only checks and tools read it.
	gaz     []gazRow
	refOnce sync.Once
	// latitude band holding every county, widened by NearShoreKm: outside
	// it Locate answers at once
	minLat, maxLat float64
	rows           map[string]int
}

// Load reads the three boundary sources from the data pack fsys.
func Load(fsys fs.FS) (*Layer, error) {
	statesRel := data.Path(SourceStates)
	stFeats, err := readTopoJSON(fsys, statesRel, "states", 2)
	if err != nil {
		return nil, err
	}
	type stateInfo struct {
		name  string
		rings []ring
	}
	states := make(map[string]stateInfo, len(stFeats))
	for _, f := range stFeats {
		if _, dup := states[f.id]; dup {
			return nil, fmt.Errorf("%s: state %s appears twice", statesRel, f.id)
		}
		if f.name == "" {
			return nil, fmt.Errorf("%s: state %s has no name", statesRel, f.id)
		}
		states[f.id] = stateInfo{f.name, f.rings}
	}

	countiesRel := data.Path(SourceCounties)
	feats, err := readTopoJSON(fsys, countiesRel, "counties", 5)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(feats, func(i, j int) bool { return feats[i].id < feats[j].id })

	gazRel := data.Path(SourceGazetteer)
	gaz, err := readGazetteer(fsys, gazRel)
	if err != nil {
		return nil, err
	}
	gazBy := make(map[string]*gazRow, len(gaz))
	for i := range gaz {
		gazBy[gaz[i].geoid] = &gaz[i]
	}

	l := &Layer{
		counties: make([]*County, len(feats)),
		byFIPS:   make(map[string]int, len(feats)),
		rings:    make([][]ring, len(feats)),
		states:   make(map[string][]ring, len(states)),
		rows: map[string]int{
			SourceCounties:  len(feats),
			SourceStates:    len(stFeats),
			SourceGazetteer: len(gaz),
		},
	}
	for id, s := range states {
		l.states[id] = s.rings
		// A state no county belongs to and without a USPS code is kept
		// out of the list; a county of it stops the load below.
		code, known := uspsByStateFIPS[id]
		if !known {
			continue
		}
		l.stateList = append(l.stateList, State{FIPS: id, Code: code, Name: s.name, Conus: isConus(id), Territory: isTerritory(id)})
	}
	sort.Slice(l.stateList, func(i, j int) bool { return l.stateList[i].FIPS < l.stateList[j].FIPS })
	grid := geo.NewCellIndexBuilder(countyCellDeg)
	nseg := 0
	for _, f := range feats {
		for _, r := range f.rings {
			nseg += len(r.pts)
		}
	}
	segs := make([]seg, 0, nseg)
	l.minLat, l.maxLat = math.Inf(1), math.Inf(-1)
	for i, f := range feats {
		if _, dup := l.byFIPS[f.id]; dup {
			return nil, fmt.Errorf("%s: county %s appears twice", countiesRel, f.id)
		}
		st := f.id[:2]
		code, known := uspsByStateFIPS[st]
		if !known {
			return nil, fmt.Errorf("%s: county %s: unknown state FIPS %s", countiesRel, f.id, st)
		}
		s, ok := states[st]
		if !ok {
			return nil, fmt.Errorf("%s: no state %s for county %s of %s", statesRel, st, f.id, countiesRel)
		}
		if f.name == "" {
			return nil, fmt.Errorf("%s: county %s has no name", countiesRel, f.id)
		}
		c := &County{FIPS: f.id, Name: f.name, StateFIPS: st, StateCode: code, StateName: s.name,
			Conus: isConus(st), Territory: isTerritory(st), LandAreaKm2: f.area}
		if g, ok := gazBy[f.id]; ok {
			// The Gazetteer name carries the legal suffix ("County",
			// "Parish", "Municipio", "city"); use it when it is the same
			// county, not a renamed one.
			if strings.HasPrefix(g.name, f.name) {
				c.Name = g.name
			}
			if g.landKm2 > 0 {
				c.LandAreaKm2 = g.landKm2
			}
		}
		l.counties[i] = c
		l.byFIPS[f.id] = i
		l.rings[i] = f.rings
		for _, r := range f.rings {
			l.minLat, l.maxLat = math.Min(l.minLat, r.minY), math.Max(l.maxLat, r.maxY)
			grid.Add(int32(i), geo.Box{Lat0: r.minY, Lat1: r.maxY, Lon0: r.minX, Lon1: r.maxX})
			n := len(r.pts)
			for k := range r.pts {
				a, b := r.pts[k], r.pts[(k+1)%n]
				segs = append(segs, seg{ax: a.x, ay: a.y, dx: b.x - a.x, dy: b.y - a.y, county: int32(i)})
			}
		}
	}
	margin := 2 * NearShoreKm / geo.KmPerDegLat
	l.minLat, l.maxLat = l.minLat-margin, l.maxLat+margin
	l.grid = grid.Build()
	l.edges = newSegIndex(segs, edgeCellDeg)

	l.gaz = gaz
	return l, nil
}

// Locate returns the county containing p or, failing that, the nearest
// county whose boundary is within NearShoreKm of p. ok is false anywhere
// else (open sea, Canada, Mexico, an invalid coordinate).
//
// borderKm is the distance from p to the nearest edge of any other county's
// polygon (a shared county line, or another county across water), up to
// BorderCapKm; +Inf when none is that close. It is 0 when ok is false.
//
// The returned County is shared: callers must not modify it.
func (l *Layer) Locate(p geo.Point) (c *County, borderKm float64, ok bool) {
	if !(p.Lat >= l.minLat && p.Lat <= l.maxLat) || math.IsNaN(p.Lon) || math.IsInf(p.Lon, 0) {
		return nil, 0, false
	}
	x, y := p.Lon, p.Lat
	if x < -180 || x >= 180 {
		x = geo.NormalizeLon(x)
	}
	ci := -1
	for _, k := range l.grid.At(geo.Point{Lat: y, Lon: x}) {
		if l.inCounty(int(k), x, y) {
			ci = int(k)
			break
		}
	}
	if ci < 0 {
		_, k, found := l.edges.nearest(x, y, NearShoreKm, -1)
		if !found {
			return nil, 0, false
		}
		ci = int(k)
	}
	borderKm = math.Inf(1)
	if d, _, found := l.edges.nearest(x, y, BorderCapKm, int32(ci)); found {
		borderKm = d
	}
	return l.counties[ci], borderKm, true
}

// inCounty is the even-odd rule over all rings of county ci, holes
// included. A ring whose box misses the point cannot contain it, so only the
// parity of the rings whose box holds the point matters.
func (l *Layer) inCounty(ci int, x, y float64) bool {
	in := false
	rings := l.rings[ci]
	for i := range rings {
		r := &rings[i]
		if y < r.minY || y > r.maxY {
			continue
		}
		xx := x
		if xx < r.minX {
			xx += 360 // the ring runs east across the antimeridian
		}
		if xx > r.maxX {
			continue
		}
		if r.contains(xx, y) {
			in = !in
		}
	}
	return in
}

// County returns the county with the 5-digit FIPS code.
func (l *Layer) County(fips string) (*County, bool) {
	i, ok := l.byFIPS[fips]
	if !ok {
		return nil, false
	}
	return l.counties[i], true
}

// Counties returns every county sorted by FIPS. The slice is the caller's;
// the counties are shared.
func (l *Layer) Counties() []*County {
	return append([]*County(nil), l.counties...)
}

// Reference is the fixed national reference set: every Gazetteer county
// internal point whose county has a polygon, sorted by FIPS, each of which
// Locate puts in its own county. Rows whose 2019 code has no usable 2023
// polygon (Connecticut's old counties, Valdez-Cordova, Falls Church) are
// skipped, and internal points in water the outline leaves out are moved
// just inside it (see buildReference). The slice is the caller's.
func (l *Layer) Reference() []RefPoint {
	l.refOnce.Do(func() { l.ref, l.refMoved = l.buildReference(l.gaz) })
	return append([]RefPoint(nil), l.ref...)
}

// CountyOutline returns the rings (outer boundaries and holes) of a county
// in lon/lat, or nil for an unknown code. A ring does not repeat its first
// point at the end. Longitudes within a ring are continuous, so a ring across the antimeridian has longitudes beyond 180
// and draws without a jump.
func (l *Layer) CountyOutline(fips string) [][]geo.Point {
	i, ok := l.byFIPS[fips]
	if !ok {
		return nil
	}
	return outline(l.rings[i])
}

// State is one state or state equivalent (DC, a territory) of the state
// boundary file.
type State struct {
	FIPS      string // 2 digits, e.g. "06"
	Code      string // USPS code, e.g. "CA"
	Name      string // e.g. "California"
	Conus     bool   // in the 48 conterminous states or DC
	Territory bool   // PR, VI, GU, MP, AS
}

// States returns every state with an outline, sorted by FIPS. The slice is
// the caller's.
func (l *Layer) States() []State {
	return append([]State(nil), l.stateList...)
}

// StateOutline returns the rings of a state (2-digit FIPS), like
// CountyOutline.
func (l *Layer) StateOutline(stateFIPS string) [][]geo.Point {
	return outline(l.states[stateFIPS])
}

func outline(rings []ring) [][]geo.Point {
	if len(rings) == 0 {
		return nil
	}
	out := make([][]geo.Point, len(rings))
	for i, r := range rings {
		pts := make([]geo.Point, len(r.pts))
		for j, p := range r.pts {
			pts[j] = geo.Point{Lat: p.y, Lon: p.x}
		}
		out[i] = pts
	}
	return out
}

// Rows returns the number of features or rows loaded per source id.
func (l *Layer) Rows() map[string]int {
	out := make(map[string]int, len(l.rows))
	for k, v := range l.rows {
		out[k] = v
	}
	return out
}
