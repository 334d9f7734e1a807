package console

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// usMap is the address page's map of the United States: the conterminous
// states, and Alaska, Hawaii, Puerto Rico and the Virgin Islands in
// insets, each panel in its own Albers projection, with the parameters
// the page's script needs to turn a click back into a coordinate. Guam,
// the Northern Mariana Islands and American Samoa are not drawn (the page
// says so): they are covered, by coordinate.
type usMap struct {
	Width, Height int
	Panels        []mapPanel
}

// mapPanel is one panel: its box on the map, its projection and states.
type mapPanel struct {
	Name  string // conus, alaska, hawaii, caribbean
	Label string // what the panel shows, for people
	Inset bool   // drawn in a frame
	Box   box
	// Albers is "lat1 lat2 lat0 lon0 k tx ty": the projection's
	// parameters (degrees) and the map units x = tx + k*x', y = ty - k*y'
	// of its result (x', y') in earth radii.
	Albers string
	// Bounds is "minLon minLat maxLon maxLat" around the panel's states,
	// by which the script tells which panel a typed coordinate is on.
	Bounds string
	States []statePath
}

// statePath is one state's outline as SVG path data.
type statePath struct {
	FIPS, Code, Name, D string
}

// Map size in map units (the SVG's viewBox), and the simplification: a
// vertex is kept where it moves the outline by 0.35 units or more, and
// islands under 0.6 square units are left out.
const (
	usMapWidth, usMapHeight = 960, 600
	usMapTolerance          = 0.35
	usMapMinArea            = 0.6
)

// panelSpec is a panel before its states are drawn.
type panelSpec struct {
	name, label            string
	inset                  bool
	lat1, lat2, lat0, lon0 float64
	box                    box
	holds                  func(coverage.State) bool
}

// usPanels lays out the map: the usual parallels for each region, the
// insets below the conterminous states on the left (Alaska, Hawaii) and
// right (Puerto Rico and the Virgin Islands).
func usPanels() []panelSpec {
	is := func(codes ...string) func(coverage.State) bool {
		return func(s coverage.State) bool { return slices.Contains(codes, s.Code) }
	}
	return []panelSpec{
		{name: "conus", label: "Conterminous United States", lat1: 29.5, lat2: 45.5, lat0: 37.5, lon0: -96,
			box: box{10, 5, 940, 505}, holds: func(s coverage.State) bool { return s.Conus }},
		{name: "alaska", label: "Alaska", inset: true, lat1: 55, lat2: 65, lat0: 50, lon0: -154,
			box: box{10, 445, 210, 150}, holds: is("AK")},
		{name: "hawaii", label: "Hawaii", inset: true, lat1: 8, lat2: 18, lat0: 13, lon0: -157,
			box: box{230, 500, 150, 95}, holds: is("HI")},
		{name: "caribbean", label: "Puerto Rico and the U.S. Virgin Islands", inset: true, lat1: 8, lat2: 18, lat0: 18, lon0: -66,
			box: box{800, 535, 150, 60}, holds: is("PR", "VI")},
	}
}

// drawUSMap draws the map from g's state outlines.
func drawUSMap(g Geography) usMap {
	m := usMap{Width: usMapWidth, Height: usMapHeight}
	states := g.States()
	for _, spec := range usPanels() {
		a := newAlbers(spec.lat1, spec.lat2, spec.lat0, spec.lon0)
		type held struct {
			s     coverage.State
			rings [][]geo.Point
		}
		var hs []held
		var raw [][]xy // projected, y down, before fitting
		minLon, minLat, maxLon, maxLat := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		for _, s := range states {
			if !spec.holds(s) {
				continue
			}
			rings := g.StateOutline(s.FIPS)
			hs = append(hs, held{s, rings})
			for _, ring := range rings {
				r := make([]xy, len(ring))
				for i, p := range ring {
					x, y := a.project(p)
					r[i] = xy{x, -y}
					lon := spec.lon0 + geo.NormalizeLon(p.Lon-spec.lon0)
					minLon, maxLon = math.Min(minLon, lon), math.Max(maxLon, lon)
					minLat, maxLat = math.Min(minLat, p.Lat), math.Max(maxLat, p.Lat)
				}
				raw = append(raw, r)
			}
		}
		b, ok := bounds(raw)
		if !ok {
			continue // no such states in this data (a test pack)
		}
		// Fit the panel's states into its box, centred.
		k := math.Min(spec.box.W/math.Max(b.W, 1e-9), spec.box.H/math.Max(b.H, 1e-9))
		tx := spec.box.X + (spec.box.W-k*b.W)/2 - k*b.X
		ty := spec.box.Y + (spec.box.H-k*b.H)/2 - k*b.Y // y' = -y, so Y = ty + k*y' = ty - k*y
		p := mapPanel{Name: spec.name, Label: spec.label, Inset: spec.inset, Box: spec.box,
			Albers: fields(spec.lat1, spec.lat2, spec.lat0, spec.lon0, k, tx, ty),
			Bounds: fields(minLon-1, minLat-1, maxLon+1, maxLat+1)}
		for _, h := range hs {
			f := func(pt geo.Point) xy {
				x, y := a.project(pt)
				return xy{tx + k*x, ty - k*y}
			}
			if d := pathData(shapes(h.rings, f, usMapTolerance, usMapMinArea)); d != "" {
				p.States = append(p.States, statePath{FIPS: h.s.FIPS, Code: h.s.Code, Name: h.s.Name, D: d})
			}
		}
		m.Panels = append(m.Panels, p)
	}
	return m
}

// fields writes numbers separated by spaces, each as short as it can be
// while exact enough for a click (nine significant digits).
func fields(vs ...float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.FormatFloat(v, 'g', 9, 64)
	}
	return strings.Join(s, " ")
}
