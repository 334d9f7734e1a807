package pdf

import (
	"math"
	"strconv"

	"github.com/locrisk/locrisk/internal/risk/geo"
)

// projection maps lon/lat to page millimetres: equirectangular with
// longitudes scaled by cos(mid latitude), which keeps a state's shape
// recognisable at locator-map size. Longitudes are unwrapped around the
// site's longitude so a state across the antimeridian (Alaska's Aleutians)
// stays in one piece, whether its rings use -180..180 or run past 180.
type projection struct {
	lon0, kx       float64 // unwrap centre, cos(mid latitude)
	scale          float64 // mm per degree of latitude
	offX, offY     float64
	minLon, maxLon float64
	minLat, maxLat float64
	hasOutline     bool
	box            rect // the page area the projection fills
}

type rect struct{ x, y, w, h float64 }

func (b rect) contains(x, y float64) bool {
	return x >= b.x && x <= b.x+b.w && y >= b.y && y <= b.y+b.h
}

func (b rect) overlaps(o rect) bool {
	return b.x < o.x+o.w && o.x < b.x+b.w && b.y < o.y+o.h && o.y < b.y+b.h
}

func (p *projection) unwrap(lon float64) float64 {
	return p.lon0 + geo.NormalizeLon(lon-p.lon0)
}

func (p *projection) xy(pt geo.Point) (float64, float64) {
	x := p.offX + (p.unwrap(pt.Lon)-p.minLon)*p.kx*p.scale
	y := p.offY + (p.maxLat-pt.Lat)*p.scale
	return x, y
}

func validPoint(pt geo.Point) bool {
	return !math.IsNaN(pt.Lat) && !math.IsNaN(pt.Lon) && !math.IsInf(pt.Lat, 0) && !math.IsInf(pt.Lon, 0) &&
		pt.Lat >= -90 && pt.Lat <= 90
}

// newProjection fits the rings and the site into the box with a margin; an
// extent under minSpan degrees is widened to it so a point or a tiny
// county still gets a sensible zoom.
func newProjection(site geo.Point, rings [][]geo.Point, x, y, w, h, minSpan float64) *projection {
	p := &projection{lon0: site.Lon, box: rect{x, y, w, h}}
	p.minLon, p.maxLon = math.Inf(1), math.Inf(-1)
	p.minLat, p.maxLat = math.Inf(1), math.Inf(-1)
	add := func(pt geo.Point) {
		lon := p.unwrap(pt.Lon)
		p.minLon, p.maxLon = math.Min(p.minLon, lon), math.Max(p.maxLon, lon)
		p.minLat, p.maxLat = math.Min(p.minLat, pt.Lat), math.Max(p.maxLat, pt.Lat)
	}
	for _, ring := range rings {
		for _, pt := range ring {
			if validPoint(pt) {
				add(pt)
				p.hasOutline = true
			}
		}
	}
	add(site)
	if d := minSpan - (p.maxLat - p.minLat); d > 0 {
		p.minLat -= d / 2
		p.maxLat += d / 2
	}
	mid := (p.minLat + p.maxLat) / 2
	p.kx = math.Max(math.Cos(mid*math.Pi/180), 0.05)
	if d := minSpan/p.kx - (p.maxLon - p.minLon); d > 0 {
		p.minLon -= d / 2
		p.maxLon += d / 2
	}
	const pad = 3.0
	sx := (p.maxLon - p.minLon) * p.kx
	sy := p.maxLat - p.minLat
	p.scale = math.Min((w-2*pad)/sx, (h-2*pad)/sy)
	p.offX = x + (w-sx*p.scale)/2
	p.offY = y + (h-sy*p.scale)/2
	return p
}

type xy struct{ x, y float64 }

// outcode says on which sides of b (grown by 1 mm) a point lies; 0 inside.
func outcode(b rect, x, y float64) int {
	c := 0
	switch {
	case x < b.x-1:
		c |= 1
	case x > b.x+b.w+1:
		c |= 2
	}
	switch {
	case y < b.y-1:
		c |= 4
	case y > b.y+b.h+1:
		c |= 8
	}
	return c
}

// pageRings projects rings for drawing inside clip. Two reductions keep the
// file small without changing what is visible: a vertex whose neighbours
// share its outside region of the clip box is dropped (that region is
// convex, so the shortcut stays outside too), and a vertex closer than tol
// mm to the last one kept is dropped. A detailed state outline thus needs
// a few hundred vertices instead of tens of thousands.
func pageRings(p *projection, rings [][]geo.Point, tol float64, clip rect) [][]xy {
	var out [][]xy
	var pts []xy
	var codes []int
	for _, ring := range rings {
		pts, codes = pts[:0], codes[:0]
		for _, pt := range ring {
			if validPoint(pt) {
				x, y := p.xy(pt)
				pts = append(pts, xy{x, y})
				codes = append(codes, outcode(clip, x, y))
			}
		}
		n := len(pts)
		kept := make([]xy, 0, 64)
		last := xy{math.Inf(1), math.Inf(1)}
		for i, q := range pts {
			if c := codes[i]; c != 0 && n > 2 && codes[(i+n-1)%n] == c && codes[(i+1)%n] == c {
				continue
			}
			if math.Abs(q.x-last.x) < tol && math.Abs(q.y-last.y) < tol {
				continue
			}
			kept = append(kept, q)
			last = q
		}
		if len(kept) >= 3 {
			out = append(out, kept)
		}
	}
	return out
}

// fillRings draws rings as one even-odd path so holes stay holes.
func (r *renderer) fillRings(rings [][]xy) {
	if len(rings) == 0 {
		return
	}
	for _, ring := range rings {
		r.f.MoveTo(ring[0].x, ring[0].y)
		for _, q := range ring[1:] {
			r.f.LineTo(q.x, q.y)
		}
		r.f.ClosePath()
	}
	r.f.DrawPath("B*")
}

// insideRings is the even-odd point-in-polygon test on page rings.
func insideRings(rings [][]xy, x, y float64) bool {
	in := false
	for _, ring := range rings {
		j := len(ring) - 1
		for i := range ring {
			a, b := ring[i], ring[j]
			if (a.y > y) != (b.y > y) && x < (b.x-a.x)*(y-a.y)/(b.y-a.y)+a.x {
				in = !in
			}
			j = i
		}
	}
	return in
}

// mapLayers is a projected state and county ready to draw.
type mapLayers struct {
	state, county [][]xy
}

func (r *renderer) layers(p *projection, clip rect) mapLayers {
	return mapLayers{
		state:  pageRings(p, r.in.StateOutline, 0.25, clip),
		county: pageRings(p, r.in.CountyOutline, 0.12, clip),
	}
}

// drawLayers fills the state, then the county over it.
func (r *renderer) drawLayers(l mapLayers) {
	f := r.f
	f.SetLineJoinStyle("round")
	r.fill(colLand)
	r.stroke(colLandEdge)
	f.SetLineWidth(0.25)
	r.fillRings(l.state)
	r.fill(colTealSoft)
	r.stroke(colTealDark)
	f.SetLineWidth(0.3)
	r.fillRings(l.county)
}

func (r *renderer) siteMarker(x, y, dot, ring float64) {
	f := r.f
	f.SetLineWidth(0.45)
	r.stroke(colWhite)
	r.fill(colNavy)
	f.Circle(x, y, dot, "FD")
	f.SetLineWidth(0.35)
	r.stroke(colNavy)
	f.Circle(x, y, ring, "D")
}

// locatorMap draws the state outline, the county shaded and the site. A
// county too small to see at state scale also gets a zoomed inset.
func (r *renderer) locatorMap(x, y, w, h float64) {
	f := r.f
	loc := r.a.Location
	site := geo.Point{Lat: loc.Latitude, Lon: loc.Longitude}
	if !validPoint(site) {
		site = geo.Point{}
	}
	box := rect{x, y, w, h}
	r.fill(colWhite)
	f.SetLineWidth(0.2)
	r.stroke(colRule)
	f.Rect(x, y, w, h, "FD")

	rings := r.in.StateOutline
	if len(rings) == 0 {
		rings = r.in.CountyOutline
	}
	p := newProjection(site, rings, x, y, w, h, 0.5)
	sx, sy := p.xy(site)
	f.ClipRect(x, y, w, h, false)
	if !p.hasOutline {
		// No boundaries: a crosshair so the box still reads as a map.
		f.SetLineWidth(0.2)
		r.stroke(colRule)
		f.Line(x, sy, x+w, sy)
		f.Line(sx, y, sx, y+h)
		r.siteMarker(sx, sy, 1.1, 2.6)
		f.ClipEnd()
		r.setFont(fSmall)
		r.setInk(colMuted)
		r.cell(x+2, y+h-10, w-4, 4, "Boundary outlines are not available for this location;", "C")
		r.cell(x+2, y+h-6, w-4, 4, "the marker shows the site at "+formatCoord(loc.Latitude, loc.Longitude)+".", "C")
		return
	}
	l := r.layers(p, box)
	r.drawLayers(l)
	r.siteMarker(sx, sy, 1.1, 2.6)
	inset := -1
	if len(l.state) > 0 && len(l.county) > 0 {
		inset = r.countyInset(p, l, site, box)
	}
	// The scale bar takes a bottom corner the inset left free.
	if inset == 3 {
		r.scaleBar(p, x+w-3, y+h-4, true)
	} else {
		r.scaleBar(p, x+3, y+h-4, false)
	}
	f.ClipEnd()
}

// countyInset zooms on a county that is only a few millimetres across at
// state scale. The inset takes the corner of the map that hides the least
// land and never the site or the county. It returns the corner used (0
// top right, 1 top left, 2 bottom right, 3 bottom left) or -1.
func (r *renderer) countyInset(p *projection, l mapLayers, site geo.Point, box rect) int {
	cx0, cy0 := math.Inf(1), math.Inf(1)
	cx1, cy1 := math.Inf(-1), math.Inf(-1)
	for _, ring := range l.county {
		for _, q := range ring {
			cx0, cy0 = math.Min(cx0, q.x), math.Min(cy0, q.y)
			cx1, cy1 = math.Max(cx1, q.x), math.Max(cy1, q.y)
		}
	}
	if math.Max(cx1-cx0, cy1-cy0) >= 12 {
		return -1
	}
	const iw, ih, gap = 34.0, 27.0, 2.0
	sx, sy := p.xy(site)
	const frame = 1.2
	county := rect{cx0 - frame - 1, cy0 - frame - 1, cx1 - cx0 + 2*frame + 2, cy1 - cy0 + 2*frame + 2}
	marker := rect{sx - 3.5, sy - 3.5, 7, 7}
	corners := []rect{
		{box.x + box.w - iw - gap, box.y + gap, iw, ih},
		{box.x + gap, box.y + gap, iw, ih},
		{box.x + box.w - iw - gap, box.y + box.h - ih - gap, iw, ih},
		{box.x + gap, box.y + box.h - ih - gap, iw, ih},
	}
	best, bestCost := -1, math.Inf(1)
	for i, c := range corners {
		if c.overlaps(county) || c.overlaps(marker) {
			continue
		}
		// Cost: how much land the inset would hide, sampled on a grid.
		cost := 0.0
		const nx, ny = 9, 7
		for a := 0; a < nx; a++ {
			for b := 0; b < ny; b++ {
				if insideRings(l.state, c.x+c.w*(float64(a)+0.5)/nx, c.y+c.h*(float64(b)+0.5)/ny) {
					cost++
				}
			}
		}
		if i == 3 {
			cost += 0.5 // the scale bar's corner, all else equal
		}
		if cost < bestCost {
			best, bestCost = i, cost
		}
	}
	if best < 0 {
		return -1
	}
	f := r.f
	in := corners[best]

	// Frame the zoomed area on the main map.
	f.SetLineWidth(0.3)
	r.stroke(colTealDark)
	f.Rect(cx0-frame, cy0-frame, cx1-cx0+2*frame, cy1-cy0+2*frame, "D")

	r.fill(colWhite)
	f.Rect(in.x, in.y, in.w, in.h, "F")
	const label = 3.6
	ip := newProjection(site, r.in.CountyOutline, in.x, in.y+label, in.w, in.h-label, 0.04)
	f.ClipRect(in.x, in.y, in.w, in.h, false)
	r.drawLayers(r.layers(ip, in))
	ix, iy := ip.xy(site)
	r.siteMarker(ix, iy, 0.9, 2.1)
	r.fill(colWhite)
	f.Rect(in.x, in.y, in.w, label, "F")
	f.ClipEnd()
	f.SetLineWidth(0.35)
	r.stroke(colLandEdge)
	f.Rect(in.x, in.y, in.w, in.h, "D")
	r.setFont(fontSpec{"go", "B", 6})
	r.setInk(colMuted)
	r.cell(in.x+1.5, in.y+0.5, in.w-3, 3, "COUNTY DETAIL", "L")
	return best
}

// scaleBar draws a round-number distance bar about a fifth of the map wide
// on a white backing, from x (or ending at x when alignRight).
func (r *renderer) scaleBar(p *projection, x, y float64, alignRight bool) {
	kmPerMM := geo.KmPerDegLat / p.scale
	target := p.box.w / 5 * kmPerMM
	step := math.Pow(10, math.Floor(math.Log10(target)))
	km := step
	for _, m := range []float64{2, 5, 10} {
		if step*m <= target {
			km = step * m
		}
	}
	w := km / kmPerMM
	label := strconv.FormatFloat(km, 'f', -1, 64) + " km"
	f := r.f
	r.setFont(fTiny)
	lw := f.GetStringWidth(label)
	if alignRight {
		x -= w + 1.5 + lw
	}
	r.fill(colWhite)
	f.Rect(x-1, y-2.6, w+1.5+lw+2, 3.6, "F")
	f.SetLineWidth(0.35)
	r.stroke(colMuted)
	f.Line(x, y, x+w, y)
	f.Line(x, y-1, x, y)
	f.Line(x+w, y-1, x+w, y)
	r.setInk(colMuted)
	r.cell(x+w+1.5, y-2.2, lw, 3, label, "L")
}

// mapLegend explains the map symbols drawn, within width w.
func (r *renderer) mapLegend(x, y, w float64) {
	right := x + w
	f := r.f
	r.setFont(fTiny)
	r.setInk(colMuted)
	item := func(label string, draw func(cx, cy float64)) {
		draw(x+1.6, y+1.9)
		tw := f.GetStringWidth(label)
		r.cell(x+4.2, y, tw, 3.8, label, "L")
		x += 4.2 + tw + 5
	}
	if len(r.in.StateOutline) > 0 {
		item("State", func(cx, cy float64) {
			r.fill(colLand)
			r.stroke(colLandEdge)
			f.SetLineWidth(0.25)
			f.Rect(cx-1.5, cy-1.5, 3, 3, "FD")
		})
	}
	if len(r.in.CountyOutline) > 0 {
		item("County", func(cx, cy float64) {
			r.fill(colTealSoft)
			r.stroke(colTealDark)
			f.SetLineWidth(0.3)
			f.Rect(cx-1.5, cy-1.5, 3, 3, "FD")
		})
	}
	item("Site", func(cx, cy float64) {
		r.fill(colNavy)
		f.Circle(cx, cy, 1.1, "F")
	})
	r.cell(x, y, right-x, 3.8, "Approximate; for orientation only", "R")
}
