package pdf

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// TestRealOutlines renders the sample report at real places with the
// coverage layer's real state and county boundaries: the size budget must
// hold for the most detailed states (Alaska's coast and islands, across the
// antimeridian) and the file must stay valid.
func TestRealOutlines(t *testing.T) {
	dir := datatest.Real(t)
	needTools(t)
	layer, err := coverage.Load(dir)
	if err != nil {
		t.Fatalf("loading coverage layer: %v", err)
	}
	sites := []struct {
		name string
		p    geo.Point
	}{
		{"unalaska", geo.Point{Lat: 53.8898, Lon: -166.5422}},
		{"anchorage", geo.Point{Lat: 61.2181, Lon: -149.9003}},
		{"san_francisco", geo.Point{Lat: 37.7793, Lon: -122.4193}},
		{"honolulu", geo.Point{Lat: 21.3069, Lon: -157.8583}},
		{"miami", geo.Point{Lat: 25.7617, Lon: -80.1918}},
		{"boston", geo.Point{Lat: 42.3601, Lon: -71.0589}},
		{"guam", geo.Point{Lat: 13.4745, Lon: 144.7504}},
		{"pago_pago", geo.Point{Lat: -14.2756, Lon: -170.702}},
	}
	for _, s := range sites {
		t.Run(s.name, func(t *testing.T) {
			c, _, ok := layer.Locate(s.p)
			if !ok {
				t.Fatalf("%v is not covered", s.p)
			}
			in := sampleInput()
			in.Assessment.Location.Latitude, in.Assessment.Location.Longitude = s.p.Lat, s.p.Lon
			in.Assessment.Location.CountyFIPS, in.Assessment.Location.CountyName = c.FIPS, c.Name
			in.Assessment.Location.StateCode, in.Assessment.Location.StateName = c.StateCode, c.StateName
			in.StateOutline = layer.StateOutline(c.StateFIPS)
			in.CountyOutline = layer.CountyOutline(c.FIPS)
			start := time.Now()
			b := render(t, in)
			elapsed := time.Since(start)
			vertices := 0
			for _, r := range in.StateOutline {
				vertices += len(r)
			}
			t.Logf("%s (%s): %d state vertices, %d bytes, %v", c.Name, c.FIPS, vertices, len(b), elapsed)
			path := writeTemp(t, b)
			qpdfCheck(t, path)
			checkInside(t, path)
			if p1 := text(t, path, 1, 1); !strings.Contains(p1, c.Name) {
				t.Errorf("page 1 lacks the county name %q", c.Name)
			}
			keep(t, "real_"+s.name, b)
		})
	}
}

// The locator map frames the whole state, and the county inset hides none
// of it (Puerto Rico's inset once covered the west of the island).
// Named sites and every tenth county of the real coverage layer are laid
// out at each of the cover's map heights: every vertex of the state's
// outline lies in the map, and no land lies under the inset or the scale
// bar (sampled every 0.5 mm on the drawn rings, independently of the
// layout's own land mask), nor does the inset cover the site's marker or
// the county's frame. Puerto Rico keeps most of its full scale.
func TestLocatorMapWholeState(t *testing.T) {
	layer, err := coverage.Load(datatest.Real(t))
	if err != nil {
		t.Fatalf("loading coverage layer: %v", err)
	}
	sites := map[string]geo.Point{
		"san_juan": {Lat: 18.4655, Lon: -66.1057}, "mayaguez": {Lat: 18.20, Lon: -67.14}, "fajardo": {Lat: 18.33, Lon: -65.65},
		"culebra": {Lat: 18.30, Lon: -65.30}, "vieques": {Lat: 18.13, Lon: -65.44}, "rincon": {Lat: 18.34, Lon: -67.25},
		"boston": {Lat: 42.3601, Lon: -71.0589}, "houston": {Lat: 29.7604, Lon: -95.3698}, "raleigh": {Lat: 35.78, Lon: -78.64},
		"honolulu": {Lat: 21.3069, Lon: -157.8583}, "lihue": {Lat: 21.9811, Lon: -159.3711},
		"anchorage": {Lat: 61.2181, Lon: -149.9003}, "juneau": {Lat: 58.3019, Lon: -134.4197},
		"saipan": {Lat: 15.18, Lon: 145.75}, "st_thomas": {Lat: 18.3419, Lon: -64.9307},
	}
	if !testing.Short() {
		for i, rp := range layer.Reference() {
			if i%10 == 0 {
				sites[rp.FIPS] = rp.Point
			}
		}
	}
	fontsOnce.Do(loadFonts) // the scale bar's label is measured
	r := newRenderer(sampleInput())
	var insets, moved, smaller int
	for name, site := range sites {
		c, _, ok := layer.Locate(site)
		if !ok {
			t.Errorf("%s: %v is not covered", name, site)
			continue
		}
		in := sampleInput()
		in.Assessment.Location.Latitude, in.Assessment.Location.Longitude = site.Lat, site.Lon
		in.StateOutline, in.CountyOutline = layer.StateOutline(c.StateFIPS), layer.CountyOutline(c.FIPS)
		for _, lay := range coverLayouts {
			box := rect{marginL + 4, 60, 106 - 8, lay.panelH - 16} // as coverPage places it
			r.in, r.a = in, in.Assessment
			plan := r.planMap(site, box)
			what := fmt.Sprintf("%s (%s, %s), map %.0f mm high", name, c.Name, c.StateCode, box.h)
			for _, ring := range in.StateOutline {
				for _, q := range ring {
					if x, y := plan.p.xy(q); !box.contains(x, y) {
						t.Fatalf("%s: the state's %v falls outside the map at (%.1f, %.1f)", what, q, x, y)
					}
				}
			}
			if plan.corner < 0 {
				continue
			}
			insets++
			full := newProjection(site, in.StateOutline, box.x, box.y, box.w, box.h, 0.5)
			switch k := plan.p.scale / full.scale; {
			case c.StateCode == "PR" && k < 0.75:
				t.Errorf("%s: Puerto Rico drawn at %.0f%% of its full scale", what, 100*k)
			case k < 1:
				smaller++
			case plan.p.offX != full.offX || plan.p.offY != full.offY:
				moved++
			}
			bar := r.scaleBarAt(plan.p.scale, box, plan.corner == 3).back
			for _, hide := range []struct {
				name string
				b    rect
			}{{"inset", plan.inset}, {"scale bar", bar}} {
				if n := landSamples(plan.l.state, hide.b); n > 0 {
					t.Errorf("%s: the %s (corner %d) hides land (%d samples)", what, hide.name, plan.corner, n)
				}
			}
			sx, sy := plan.p.xy(site)
			if plan.inset.overlaps(rect{sx - 2.6, sy - 2.6, 5.2, 5.2}) || plan.inset.overlaps(plan.frame) {
				t.Errorf("%s: the inset covers the site or the county's frame", what)
			}
		}
	}
	t.Logf("%d sites × %d map heights: %d insets, %d on a moved map, %d on a smaller one", len(sites), len(coverLayouts), insets, moved, smaller)
}

// landSamples counts the points of a 0.5 mm grid in b inside the rings.
func landSamples(rings [][]xy, b rect) int {
	n := 0
	for x := b.x + 0.25; x < b.x+b.w; x += 0.5 {
		for y := b.y + 0.25; y < b.y+b.h; y += 0.5 {
			if insideRings(rings, x, y) {
				n++
			}
		}
	}
	return n
}
