// Package environment measures exposure to known hazardous-waste sites: the
// Superfund National Priorities List (NPL) sites of the U.S. EPA (September
// 2022 export) near a point.
//
// Limits: the NPL is the only facility list with coordinates available to
// locrisk (no Toxics Release Inventory, RMP or brownfield lists), so the
// module sees the most serious federal cleanup sites and nothing else. Sites
// are centroid points, not boundaries: a large site can reach a point more
// than its centroid distance suggests. Sites listed after September 2022
// are missing. Proximity is not exposure: whether contamination reaches a
// property depends on groundwater, soil and air pathways the data does not
// describe. See docs/methodology.md (Environmental exposure module).
package environment

import (
	"fmt"
	"html"
	"io/fs"
	"math"
	"regexp"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// SrcNPL is the source id of the NPL site list.
const SrcNPL = "epa-superfund-npl"

// Radii and floors; the methodology document explains them.
const (
	// indexKm is the radius of EPA EJScreen's Superfund proximity
	// indicator: the sum over final and proposed NPL sites within 5 km of
	// 1/distance, or, with none that close, 1/distance to the nearest one,
	// so the value falls smoothly through 5 km instead of jumping to 0.
	indexKm = 5.0
	// minKm floors a distance: a site is one reference point, and a point
	// inside its boundary is not infinitely exposed.
	minKm = 0.1
	// farCapKm caps the distance to the nearest site: beyond it the
	// proximity is taken as 1/farCapKm.
	farCapKm     = 500.0
	nearestMaxKm = 100.0 // search radius for the nearest-site context
	flagKm       = 1.0
	// quality: the list is complete and current, but each site is one
	// point, not its boundary, so distances are to a site's reference point
	// and a large site can reach a place its point is far from.
	quality = 0.75
)

// Indicator ids other packages refer to (the registry).
const (
	// IndProximity is the EJScreen Superfund proximity.
	IndProximity = "npl_proximity_index"
	// IndActiveWithin1Km counts final and proposed NPL sites within 1 km.
	IndActiveWithin1Km = "npl_sites_1km"
	// IndActiveWithin5Km counts final and proposed NPL sites within 5 km.
	IndActiveWithin5Km = "npl_sites_5km"
	// IndNearestSiteKm is the distance to the nearest NPL site of any status.
	IndNearestSiteKm = "nearest_npl_site_km"
	// IndNearestActiveKm is the distance to the nearest final or proposed
	// NPL site, the one the proximity rests on.
	IndNearestActiveKm = "nearest_active_npl_site_km"
)

// resSite is the resolution of the module's distance measures.
var resSite = hazard.Resolution{Kind: hazard.ResSite, Detail: "distance to each NPL site's reference point, not its boundary"}

// status is a site's NPL status.
type status uint8

const (
	final status = iota
	proposed
	deleted
)

func (s status) String() string {
	switch s {
	case final:
		return "final"
	case proposed:
		return "proposed"
	}
	return "deleted"
}

func (s status) active() bool { return s != deleted }

// site is what a report says about one NPL site.
type site struct {
	name, city, state string
	status            status
}

// describe is "<Site Name> (final), <City>, <State>".
func (s site) describe() string {
	var b strings.Builder
	b.WriteString(s.name)
	b.WriteString(" (")
	b.WriteString(s.status.String())
	b.WriteString(")")
	for _, part := range []string{s.city, s.state} {
		if part != "" {
			b.WriteString(", ")
			b.WriteString(part)
		}
	}
	return b.String()
}

// Module is the loaded environmental-exposure module. It is immutable and
// safe for concurrent use.
type Module struct {
	near      *geo.PointIndex // fine cells for the 5 km sum
	far       *geo.PointIndex // coarse cells for the 100 km nearest-site search
	farActive *geo.PointIndex // final and proposed sites, for the proximity beyond 5 km
	sites     []site
	rows      int
}

var _ hazard.Module = (*Module)(nil)

var tags = regexp.MustCompile(`<[^>]*>`)

// clean turns a field that may hold HTML (tags, entities such as
// "Pe&ntilde;uelas") into plain text.
func clean(s string) string {
	if strings.ContainsAny(s, "<&") {
		s = html.UnescapeString(tags.ReplaceAllString(s, ""))
	}
	return strings.Join(strings.Fields(s), " ")
}

// Load reads the NPL site list from the data pack fsys.
func Load(fsys fs.FS) (*Module, error) {
	t, err := data.OpenTable(fsys, data.Path(SrcNPL), "Site Name", "State", "City", "Status", "Latitude", "Longitude")
	if err != nil {
		return nil, err
	}
	defer t.Close()
	m := &Module{}
	var pts []geo.Point
	for t.Scan() {
		var st status
		switch s := t.String("Status"); s {
		case "NPL Site":
			st = final
		case "Proposed NPL Site":
			st = proposed
		case "Deleted NPL Site":
			st = deleted
		default:
			return nil, t.Errorf("column \"Status\": unknown NPL status %q", s)
		}
		lat, err := t.Float("Latitude")
		if err != nil {
			return nil, err
		}
		lon, err := t.Float("Longitude")
		if err != nil {
			return nil, err
		}
		if lat < -90 || lat > 90 || lon < -180 || lon > 180 {
			return nil, t.Errorf("coordinate (%g, %g) is out of range", lat, lon)
		}
		name := clean(t.String("Site Name"))
		if name == "" {
			return nil, t.Errorf("column \"Site Name\" is empty")
		}
		pts = append(pts, geo.Point{Lat: lat, Lon: lon})
		// Copies, so that the site keeps its words, not the whole CSV record
		// they were cut from.
		m.sites = append(m.sites, site{name: strings.Clone(name), city: strings.Clone(clean(t.String("City"))), state: strings.Clone(clean(t.String("State"))), status: st})
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	m.rows = t.Rows()
	m.near = geo.NewPointIndex(pts, 0.05)
	m.far = geo.NewPointIndex(pts, 1)
	var activePts []geo.Point
	for i, st := range m.sites {
		if st.status.active() {
			activePts = append(activePts, pts[i])
		}
	}
	m.farActive = geo.NewPointIndex(activePts, 1)
	return m, nil
}

// Name implements hazard.Module.
func (m *Module) Name() string { return hazard.EnvironmentalExposure }

// Sources implements hazard.Module.
func (m *Module) Sources() []string { return []string{SrcNPL} }

// Rows implements hazard.Module.
func (m *Module) Rows() map[string]int { return map[string]int{SrcNPL: m.rows} }

// Measure implements hazard.Module.
func (m *Module) Measure(s hazard.Site) hazard.Measurement {
	p := geo.Point{Lat: s.Lat, Lon: s.Lon}
	var (
		index                      float64
		active1, active3, active5  int
		deleted5                   int
		nearest, nearestActive     = -1, -1
		nearestKm, nearestActiveKm = math.Inf(1), math.Inf(1)
	)
	m.near.Within(p, indexKm, func(i int, d float64) {
		st := m.sites[i].status
		if st.active() {
			index += 1 / math.Max(d, minKm)
		}
		if st.active() {
			switch {
			case d <= 1:
				active1++
				fallthrough
			case d <= 3:
				active3++
				fallthrough
			case d <= 5:
				active5++
			}
			if closer(d, i, nearestActiveKm, nearestActive) {
				nearestActive, nearestActiveKm = i, d
			}
		} else if d <= 5 {
			deleted5++
		}
		if closer(d, i, nearestKm, nearest) {
			nearest, nearestKm = i, d
		}
	})
	if nearest < 0 {
		nearest, nearestKm = m.far.Nearest(p, nearestMaxKm)
	}
	activeKm := nearestActiveKm
	if active5 == 0 {
		// No active site within 5 km: the nearest one, however far, as
		// EJScreen does.
		activeKm = farCapKm
		if i, km := m.farActive.Nearest(p, farCapKm); i >= 0 {
			activeKm = km
		}
		index = 1 / math.Max(activeKm, minKm)
	}

	ins := make([]hazard.Indicator, 0, 8)
	ins = append(ins,
		hazard.Indicator{ID: IndProximity, Label: "Superfund proximity (EPA EJScreen formula): sum over final and proposed NPL sites within 5 km of 1/distance, or 1/distance to the nearest one",
			Value: index, Unit: "per km", Source: SrcNPL, Peril: hazard.PerilSuperfund, Resolution: resSite, Ranked: true, Weight: 1},
		hazard.Indicator{ID: IndActiveWithin1Km, Label: "Final or proposed Superfund NPL sites within 1 km", Value: float64(active1), Unit: "count", Source: SrcNPL, Peril: hazard.PerilSuperfund, Resolution: resSite},
		hazard.Indicator{ID: "npl_sites_3km", Label: "Final or proposed Superfund NPL sites within 3 km", Value: float64(active3), Unit: "count", Source: SrcNPL, Peril: hazard.PerilSuperfund, Resolution: resSite},
		hazard.Indicator{ID: IndActiveWithin5Km, Label: "Final or proposed Superfund NPL sites within 5 km", Value: float64(active5), Unit: "count", Source: SrcNPL, Peril: hazard.PerilSuperfund, Resolution: resSite},
		hazard.Indicator{ID: IndNearestActiveKm, Label: activeLabel(activeKm), Value: activeKm, Text: activeText(activeKm), Unit: "km", Source: SrcNPL, Peril: hazard.PerilSuperfund, Resolution: resSite},
		hazard.Indicator{ID: "npl_deleted_sites_5km", Label: "Deleted Superfund NPL sites within 5 km (cleanup complete; context, no weight)", Value: float64(deleted5), Unit: "count", Source: SrcNPL, Peril: hazard.PerilSuperfund, Resolution: resSite},
	)
	var notes []string
	if nearest >= 0 {
		ns := m.sites[nearest]
		ins = append(ins,
			hazard.Indicator{ID: IndNearestSiteKm, Label: "Distance to the nearest Superfund NPL site (any status)", Value: nearestKm, Unit: "km", Source: SrcNPL, Peril: hazard.PerilSuperfund, Resolution: resSite},
			hazard.Indicator{ID: "nearest_npl_site", Label: "Nearest Superfund NPL site", Unit: "name", Source: SrcNPL, Peril: hazard.PerilSuperfund, Resolution: resSite, Text: ns.describe()},
		)
		notes = append(notes, nearNote(ns, nearestKm, active5, deleted5))
	} else {
		ins = append(ins, hazard.Indicator{ID: IndNearestSiteKm, Label: "Distance to the nearest Superfund NPL site (capped: none within 100 km)",
			Value: nearestMaxKm, Text: "none within 100 km", Unit: "km", Source: SrcNPL, Peril: hazard.PerilSuperfund, Resolution: resSite})
		notes = append(notes, "No Superfund NPL site lies within 100 km.")
	}

	var flags []hazard.Flag
	if nearestActive >= 0 && nearestActiveKm <= flagKm {
		ns := m.sites[nearestActive]
		msg := fmt.Sprintf("The Superfund NPL site %s is %s from this location", ns.describe(), kmText(nearestActiveKm))
		switch active1 {
		case 1:
		case 2:
			msg += "; one other final or proposed NPL site lies within 1 km"
		default:
			msg += fmt.Sprintf("; %d other final or proposed NPL sites lie within 1 km", active1-1)
		}
		msg += ". Review EPA's site profile for contamination pathways and land-use restrictions."
		flags = append(flags, hazard.Flag{Code: "near_superfund_site", Message: msg})
	}
	return hazard.Measurement{Indicators: ins, Quality: quality, Notes: notes, Flags: flags}
}

// activeText is the capped distance's wording (docs/api.md, indicators),
// else "".
func activeText(km float64) string {
	if km >= farCapKm {
		return "none within 500 km"
	}
	return ""
}

func activeLabel(km float64) string {
	if km >= farCapKm {
		return "Distance to the nearest final or proposed Superfund NPL site (capped: none within 500 km)"
	}
	return "Distance to the nearest final or proposed Superfund NPL site"
}

// closer orders sites by distance, then by file order, so ties are
// deterministic.
func closer(d float64, i int, bestD float64, best int) bool {
	return d < bestD || (d == bestD && i < best)
}

func nearNote(ns site, km float64, active5, deleted5 int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The nearest Superfund NPL site is %s, %s away", ns.describe(), kmText(km))
	switch active5 {
	case 0:
		b.WriteString("; no final or proposed NPL site lies within 5 km")
	case 1:
		b.WriteString("; 1 final or proposed NPL site lies within 5 km")
	default:
		fmt.Fprintf(&b, "; %d final or proposed NPL sites lie within 5 km", active5)
	}
	b.WriteString(".")
	switch deleted5 {
	case 0:
	case 1:
		b.WriteString(" One deleted site (cleanup complete) also lies within 5 km; it carries no weight.")
	default:
		fmt.Fprintf(&b, " %d deleted sites (cleanup complete) also lie within 5 km; they carry no weight.", deleted5)
	}
	return b.String()
}

// kmText writes a distance with one decimal below 10 km and none above.
func kmText(km float64) string {
	if km < 10 {
		return fmt.Sprintf("%.1f km", km)
	}
	return fmt.Sprintf("%.0f km", km)
}
