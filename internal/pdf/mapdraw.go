package pdf

import (
	"math"
	"slices"
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
	sx := (p.maxLon - p.minLon) * p.kx
	sy := p.maxLat - p.minLat
	p.scale = math.Min((w-2*mapPad)/sx, (h-2*mapPad)/sy)
	p.offX = x + (w-sx*p.scale)/2
	p.offY = y + (h-sy*p.scale)/2
	return p
}

// mapPad is the least space (mm) between the outlines and the map's edge.
const mapPad = 3.0

// extent is the width and height (mm) of what the projection fits.
func (p *projection) extent() (float64, float64) {
	return (p.maxLon - p.minLon) * p.kx * p.scale, (p.maxLat - p.minLat) * p.scale
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
// county too small to see at state scale also gets a zoomed inset, which
// never hides the state (see planMap).
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

	plan := r.planMap(site, box)
	p := plan.p
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
	r.drawLayers(plan.l)
	r.siteMarker(sx, sy, 1.1, 2.6)
	if plan.corner >= 0 {
		r.countyInset(plan, site)
	}
	// The scale bar takes a bottom corner the inset left free.
	r.scaleBar(p, plan.corner == 3)
	f.ClipEnd()
}

// Inset geometry (mm): its size, its gap to the map's edge, the frame
// drawn round the county on the main map, and the sea kept round the inset
// and the scale bar.
const (
	insetW, insetH = 34.0, 27.0
	insetGap       = 2.0
	insetFrame     = 1.2
	insetClear     = 1.0
)

// mapPlan is the locator map's layout: the main projection, the layers
// drawn with it, and the county inset (corner 0 top right, 1 top left, 2
// bottom right, 3 bottom left; -1 for none) with its box and the frame
// outlined round the county on the main map.
type mapPlan struct {
	p      *projection
	l      mapLayers
	corner int
	inset  rect
	frame  rect
}

// planMap lays out the locator map in box. The state fills the box,
// centred. A county only a few millimetres across at that scale gets an
// inset in a corner, and the inset and the scale bar must hide none of
// the state's land, nor the inset the site or the county. When no corner
// is free (a wide island such as Puerto Rico, a state that fills the box),
// the state moves away from the inset's corner, as little as will do, and
// failing that is drawn smaller, as little as will do: the whole state
// stays in view.
func (r *renderer) planMap(site geo.Point, box rect) mapPlan {
	rings := r.in.StateOutline
	if len(rings) == 0 {
		rings = r.in.CountyOutline
	}
	p := newProjection(site, rings, box.x, box.y, box.w, box.h, 0.5)
	plan := mapPlan{p: p, corner: -1}
	if !p.hasOutline {
		return plan
	}
	plan.l = r.layers(p, box)
	if len(plan.l.state) == 0 || len(plan.l.county) == 0 {
		return plan
	}
	if _, small := countyFrame(plan.l.county); !small {
		return plan
	}
	bar := func(k float64, right bool) rect { return r.scaleBarAt(p.scale*k, box, right).back }
	c, ok := insetLayout(p, plan.l, site, box, bar)
	if !ok {
		return plan // no room at any scale tried: the county is not zoomed
	}
	if c.k != 1 || c.offX != p.offX || c.offY != p.offY {
		q := *p
		q.scale, q.offX, q.offY = p.scale*c.k, c.offX, c.offY
		plan.p = &q
		plan.l = r.layers(&q, box)
	}
	plan.corner, plan.inset = c.corner, insetCorners(box)[c.corner]
	plan.frame, _ = countyFrame(plan.l.county)
	return plan
}

// insetChoice is a main map for an inset: the scale as a share k of the
// full one, the projection's offsets and the inset's corner.
type insetChoice struct {
	k, offX, offY float64
	corner        int
}

// insetLayout finds the main map the inset can sit on: the largest scale
// (down to 30% of the full one); at that scale, the map left centred,
// else moved along one axis before both, and by the least; then the
// corners in order, the bottom-left one, where the scale bar goes
// otherwise, last. p and l are the full, centred map; bar is the scale
// bar's backing at a share k of the full scale, bottom left or bottom
// right.
func insetLayout(p *projection, l mapLayers, site geo.Point, box rect, bar func(k float64, right bool) rect) (insetChoice, bool) {
	mask := newLandMask(l.state, box)
	grow := func(b rect) rect {
		return rect{b.x - insetClear, b.y - insetClear, b.w + 2*insetClear, b.h + 2*insetClear}
	}
	// The county's bounds and the site on the full map, which a choice
	// scales by k and moves.
	cb := bounds(l.county)
	sx0, sy0 := p.xy(site)
	w0, h0 := p.extent()
	corners := insetCorners(box)
	for shrink := 0; shrink <= 35; shrink++ {
		k := 1 - 0.02*float64(shrink)
		w, h := w0*k, h0*k
		cx, cy := box.x+(box.w-w)/2, box.y+(box.h-h)/2
		bars := [2]rect{grow(bar(k, false)), grow(bar(k, true))}
		var best insetChoice
		bestKey := [3]float64{math.Inf(1)}
		for i, in := range corners {
			// Away from the inset: towards the opposite corner.
			awayX, awayY := box.x+mapPad, box.y+box.h-mapPad-h
			if i == 1 || i == 3 {
				awayX = box.x + box.w - mapPad - w
			}
			if i >= 2 {
				awayY = box.y + mapPad
			}
			hide := [2]rect{grow(in), bars[0]}
			if i == 3 {
				hide[1] = bars[1]
			}
			// mode 0 moves the map across, 1 up or down, 2 both; each
			// from the centre (t = 0) to against the far edge (t = 1).
			for mode := range 3 {
				for step := 0; step <= 20; step++ {
					t := float64(step) / 20
					if t == 0 && mode > 0 {
						continue
					}
					offX, offY := cx, cy
					if mode != 1 {
						offX += t * (awayX - cx)
					}
					if mode != 0 {
						offY += t * (awayY - cy)
					}
					x0, y0 := offX+(cb.x-p.offX)*k, offY+(cb.y-p.offY)*k
					county := rect{x0 - insetFrame - 1, y0 - insetFrame - 1, cb.w*k + 2*insetFrame + 2, cb.h*k + 2*insetFrame + 2}
					sx, sy := offX+(sx0-p.offX)*k, offY+(sy0-p.offY)*k
					if in.overlaps(county) || in.overlaps(rect{sx - 3.5, sy - 3.5, 7, 7}) {
						continue
					}
					land := false
					for _, b := range hide {
						// b on the full map, where the mask was made.
						land = land || mask.count(rect{p.offX + (b.x-offX)/k, p.offY + (b.y-offY)/k, b.w / k, b.h / k}) > 0
					}
					if land {
						continue
					}
					axes := float64(mode/2 + 1)
					if t == 0 {
						axes = 0
					}
					if key := [3]float64{axes, t, float64(i / 3)}; less(key, bestKey) {
						best, bestKey = insetChoice{k: k, offX: offX, offY: offY, corner: i}, key
					}
					break // moving further only does worse
				}
			}
		}
		if !math.IsInf(bestKey[0], 1) {
			return best, true
		}
	}
	return insetChoice{}, false
}

// less orders search keys lexicographically.
func less(a, b [3]float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// countyFrame is the rectangle outlined round the county on the main map,
// and whether the county is small enough there to need an inset.
func countyFrame(county [][]xy) (rect, bool) {
	b := bounds(county)
	fr := rect{b.x - insetFrame, b.y - insetFrame, b.w + 2*insetFrame, b.h + 2*insetFrame}
	return fr, len(county) > 0 && math.Max(b.w, b.h) < 12
}

// bounds is the bounding box of page rings.
func bounds(rings [][]xy) rect {
	x0, y0 := math.Inf(1), math.Inf(1)
	x1, y1 := math.Inf(-1), math.Inf(-1)
	for _, ring := range rings {
		for _, q := range ring {
			x0, y0 = math.Min(x0, q.x), math.Min(y0, q.y)
			x1, y1 = math.Max(x1, q.x), math.Max(y1, q.y)
		}
	}
	return rect{x0, y0, x1 - x0, y1 - y0}
}

// insetCorners are the inset's possible boxes, by corner number.
func insetCorners(box rect) [4]rect {
	return [4]rect{
		{box.x + box.w - insetW - insetGap, box.y + insetGap, insetW, insetH},
		{box.x + insetGap, box.y + insetGap, insetW, insetH},
		{box.x + box.w - insetW - insetGap, box.y + box.h - insetH - insetGap, insetW, insetH},
		{box.x + insetGap, box.y + box.h - insetH - insetGap, insetW, insetH},
	}
}

// landMask is where land lies in a box, in square cells of maskCell mm
// (land when the cell's centre is inside the rings, even-odd, or a vertex
// lies in it, so an islet smaller than a cell still counts), kept as a
// summed-area table so the land in any rectangle is counted at once.
type landMask struct {
	x0, y0 float64
	nx, ny int
	sum    []int32 // (nx+1)×(ny+1): land cells above and left of each corner
}

const maskCell = 0.5

func newLandMask(rings [][]xy, box rect) *landMask {
	m := &landMask{x0: box.x, y0: box.y, nx: int(math.Ceil(box.w / maskCell)), ny: int(math.Ceil(box.h / maskCell))}
	cells := make([]bool, m.nx*m.ny)
	var xs []float64
	for j := range m.ny {
		y := box.y + (float64(j)+0.5)*maskCell
		// Where the rings cross the row of cell centres: inside between
		// the first and second crossing, the third and fourth, and so on,
		// as insideRings counts.
		xs = xs[:0]
		for _, ring := range rings {
			k := len(ring) - 1
			for i := range ring {
				a, b := ring[i], ring[k]
				if (a.y > y) != (b.y > y) {
					xs = append(xs, (b.x-a.x)*(y-a.y)/(b.y-a.y)+a.x)
				}
				k = i
			}
		}
		slices.Sort(xs)
		for i := 0; i+1 < len(xs); i += 2 {
			c0 := max(int(math.Ceil((xs[i]-box.x)/maskCell-0.5)), 0)
			c1 := min(int(math.Ceil((xs[i+1]-box.x)/maskCell-0.5)), m.nx)
			for c := c0; c < c1; c++ {
				cells[j*m.nx+c] = true
			}
		}
	}
	for _, ring := range rings {
		for _, q := range ring {
			i, j := int(math.Floor((q.x-box.x)/maskCell)), int(math.Floor((q.y-box.y)/maskCell))
			if i >= 0 && i < m.nx && j >= 0 && j < m.ny {
				cells[j*m.nx+i] = true
			}
		}
	}
	m.sum = make([]int32, (m.nx+1)*(m.ny+1))
	for j := range m.ny {
		run := int32(0)
		for i := range m.nx {
			if cells[j*m.nx+i] {
				run++
			}
			m.sum[(j+1)*(m.nx+1)+i+1] = m.sum[j*(m.nx+1)+i+1] + run
		}
	}
	return m
}

// count is the number of land cells whose centres lie in b.
func (m *landMask) count(b rect) int {
	i0 := max(int(math.Ceil((b.x-m.x0)/maskCell-0.5)), 0)
	i1 := min(int(math.Floor((b.x+b.w-m.x0)/maskCell-0.5))+1, m.nx)
	j0 := max(int(math.Ceil((b.y-m.y0)/maskCell-0.5)), 0)
	j1 := min(int(math.Floor((b.y+b.h-m.y0)/maskCell-0.5))+1, m.ny)
	if i0 >= i1 || j0 >= j1 {
		return 0
	}
	w := m.nx + 1
	return int(m.sum[j1*w+i1] - m.sum[j0*w+i1] - m.sum[j1*w+i0] + m.sum[j0*w+i0])
}

// countyInset outlines the county's area on the main map and draws it
// zoomed in the plan's inset.
func (r *renderer) countyInset(plan mapPlan, site geo.Point) {
	f := r.f
	in, fr := plan.inset, plan.frame
	f.SetLineWidth(0.3)
	r.stroke(colTealDark)
	f.Rect(fr.x, fr.y, fr.w, fr.h, "D")

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
}

// scaleBarGeom is a scale bar's placement: the bar from x to x+w at
// height y, its label and the white backing under both.
type scaleBarGeom struct {
	x, y, w, lw float64
	label       string
	back        rect
}

// scaleBarAt places a round-number distance bar about a fifth of the map
// wide, for a map of scale mm per degree of latitude, in the bottom-left
// corner of box or, when right, the bottom-right.
func (r *renderer) scaleBarAt(scale float64, box rect, right bool) scaleBarGeom {
	kmPerMM := geo.KmPerDegLat / scale
	target := box.w / 5 * kmPerMM
	step := math.Pow(10, math.Floor(math.Log10(target)))
	km := step
	for _, m := range []float64{2, 5, 10} {
		if step*m <= target {
			km = step * m
		}
	}
	g := scaleBarGeom{x: box.x + 3, y: box.y + box.h - 4, w: km / kmPerMM}
	g.label = strconv.FormatFloat(km, 'f', -1, 64) + " km"
	r.setFont(fTiny)
	g.lw = r.f.GetStringWidth(g.label)
	if right {
		g.x = box.x + box.w - 3 - (g.w + 1.5 + g.lw)
	}
	g.back = rect{g.x - 1, g.y - 2.6, g.w + 1.5 + g.lw + 2, 3.6}
	return g
}

// scaleBar draws the scale bar on its white backing.
func (r *renderer) scaleBar(p *projection, right bool) {
	g := r.scaleBarAt(p.scale, p.box, right)
	f := r.f
	r.fill(colWhite)
	f.Rect(g.back.x, g.back.y, g.back.w, g.back.h, "F")
	f.SetLineWidth(0.35)
	r.stroke(colMuted)
	f.Line(g.x, g.y, g.x+g.w, g.y)
	f.Line(g.x, g.y-1, g.x, g.y)
	f.Line(g.x+g.w, g.y-1, g.x+g.w, g.y)
	r.setInk(colMuted)
	r.cell(g.x+g.w+1.5, g.y-2.2, g.lw, 3, g.label, "L")
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
