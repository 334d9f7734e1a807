package pdf

import (
	"math"
	"strconv"
	"strings"

	"codeberg.org/go-pdf/fpdf"

	"github.com/locrisk/locrisk/internal/risk"
)

// drawLogo draws the product mark in an s-millimetre square at (x, y): a
// location pin on a navy tile above a three-colour risk scale.
func (r *renderer) drawLogo(x, y, s float64) {
	f := r.f
	r.fill(colNavy)
	f.RoundedRect(x, y, s, s, s*0.22, "1234", "F")

	cx, cy := x+s/2, y+s*0.40
	rad := s * 0.22
	tipY := y + s*0.76
	d := tipY - cy
	alpha := math.Acos(rad / d)
	// The pin: the circle's arc over the top between the two tangent
	// points, then down to the tip.
	pts := make([]fpdf.PointType, 0, 40)
	const steps = 32
	for i := 0; i <= steps; i++ {
		phi := alpha + (2*math.Pi-2*alpha)*float64(i)/steps
		pts = append(pts, fpdf.PointType{X: cx + rad*math.Sin(phi), Y: cy + rad*math.Cos(phi)})
	}
	pts = append(pts, fpdf.PointType{X: cx, Y: tipY})
	r.fill(colWhite)
	f.Polygon(pts, "F")
	r.fill(colNavy)
	f.Circle(cx, cy, rad*0.45, "F")

	// The scale under the pin, in the level colours.
	barY, barH := y+s*0.83, s*0.055
	segW := s * 0.16
	x0 := cx - 1.5*segW - s*0.02
	for i, li := range []int{0, 2, 4} {
		r.fill(levels[li].fill)
		f.Rect(x0+float64(i)*(segW+s*0.02), barY, segW, barH, "F")
	}
}

// wordmark draws "locrisk" with its two syllables in the brand colours and
// returns the width used.
func (r *renderer) wordmark(x, y float64, fs fontSpec) float64 {
	r.setFont(fs)
	w1 := r.f.GetStringWidth("loc")
	w2 := r.f.GetStringWidth("risk")
	h := fs.size * 0.42
	r.setInk(colNavy)
	r.cell(x, y, w1, h, "loc", "L")
	r.setInk(colTeal)
	r.cell(x+w1, y, w2, h, "risk", "L")
	return w1 + w2
}

// runningHeader is the slim header on every page after the first.
func (r *renderer) runningHeader() {
	r.drawLogo(marginL, 10, 7)
	r.wordmark(marginL+9, 10.4, fontSpec{"go", "B", 13})
	r.setFont(fSmall)
	r.setInk(colMuted)
	loc := r.a.Location
	place := joinNonEmpty(", ", clean(loc.CountyName, false), clean(loc.StateCode, false))
	// A long place name drops the report's name first, then gets smaller
	// and, past that, a second line; it is never cut.
	right := joinNonEmpty("  ·  ", "Location Risk Report", place)
	if r.f.GetStringWidth(right) > contentW-45 && place != "" {
		right = place
	}
	y := 11.5
	if _, ok := r.shrinkToFit(right, contentW-45, fSmall, 6); !ok {
		y = 9.6
	}
	r.fitText(marginL+45, y, contentW-45, 4, right, "R", fSmall, 6)
	r.f.SetLineWidth(0.35)
	r.stroke(colTeal)
	r.f.Line(marginL, 19.5, pageW-marginR, 19.5)
}

// coverPage is page 1: identity, place, map, overall score, module chart
// and the top risks, all of them, whole.
func (r *renderer) coverPage() {
	r.newPage()
	a := r.a
	loc := a.Location
	f := r.f

	// Brand band.
	r.drawLogo(marginL, 13, 13)
	r.wordmark(marginL+16.5, 14.2, fWordmark)
	r.setFont(fSmall)
	r.setInk(colMuted)
	r.cell(marginL+16.5, 22.6, 60, 3.5, "Location risk intelligence", "L")

	gen := r.in.Generated.UTC()
	meta := [][2]string{
		{"Generated", gen.Format("2 January 2006, 15:04") + " UTC"},
		{"Data version", orDash(clean(a.DataVersion, false))},
		{"County FIPS", orDash(clean(loc.CountyFIPS, false))},
	}
	// Each value right-aligned in up to 80 mm, smaller or wrapped when
	// longer (never cut); the rule under the band moves down if need be.
	yy := 13.6
	for _, m := range meta {
		r.setInk(colInk)
		fs, ok := r.shrinkToFit(m[1], 80, fSmall, 6)
		vw := math.Min(r.f.GetStringWidth(m[1]), 80)
		if !ok {
			vw = 80
		}
		h := r.fitText(pageW-marginR-vw, yy, vw, 4, m[1], "R", fs, fs.size)
		r.setFont(fSmall)
		r.setInk(colMuted)
		r.cell(pageW-marginR-vw-32, yy, 30, 4, m[0], "R")
		yy += math.Max(h, 4) + 0.2
	}
	rule := math.Max(30, yy+1)
	f.SetLineWidth(0.5)
	r.stroke(colTeal)
	f.Line(marginL, rule, pageW-marginR, rule)

	// Title and address.
	r.y = rule + 3.5
	r.f.Bookmark("Summary", 0, 0)
	r.setFont(fTitle)
	r.setInk(colNavy)
	r.cell(marginL, r.y, contentW, 10, "Location Risk Report", "L")
	r.y += 12

	county, state := clean(loc.CountyName, false), clean(loc.StateName, false)
	if county == state {
		// Territories such as Guam are their own single county.
		county = ""
	}
	place := joinNonEmpty(", ", county, state)
	if code := clean(loc.StateCode, false); code != "" && code != clean(loc.StateName, false) {
		place = joinNonEmpty(" ", place, "("+code+")")
	}
	if place == "" {
		place = "County not identified"
	}
	// The place in full: a name too long for two lines is set smaller.
	pf := fontSpec{"go", "B", 12.5}
	r.setFont(pf)
	for pf.size > 8 && len(r.wrap(place, contentW)) > 2 {
		pf.size -= 1.5
		r.setFont(pf)
	}
	r.setInk(colInk)
	for _, line := range r.wrap(place, contentW) {
		r.cell(marginL, r.y, contentW, pf.size*0.45, line, "L")
		r.y += pf.size * 0.45
	}
	r.y += 0.6
	r.setFont(fBody)
	r.setInk(colMuted)
	r.cell(marginL, r.y, contentW, 4.5, formatCoord(loc.Latitude, loc.Longitude)+"   ·   WGS84 latitude/longitude", "L")
	r.y += 7

	// The summary keeps the top risks on this page: the map panel and the
	// chart's rows give up height, in steps, until the top risks fit.
	// The review flags join them when a layout has room for both.
	lay := coverLayouts[len(coverLayouts)-1]
	risksH := r.topRisksHeight()
	fits := func(h float64) bool {
		for _, l := range coverLayouts {
			if r.y+l.panelH+6+r.moduleChartHeight(l.rowH)+4+h <= bodyBottom {
				lay = l
				return true
			}
		}
		return false
	}
	if !fits(risksH + r.coverFlagsHeight()) {
		fits(risksH)
	}

	// Map and gauge side by side.
	mapW := 106.0
	gx := marginL + mapW + 4
	gw := pageW - marginR - gx
	r.panel(marginL, r.y, mapW, lay.panelH, "LOCATOR MAP")
	r.locatorMap(marginL+4, r.y+8, mapW-8, lay.panelH-16)
	r.mapLegend(marginL+4, r.y+lay.panelH-6.5, mapW-8)
	r.panel(gx, r.y, gw, lay.panelH, "OVERALL RISK SCORE")
	r.gauge(gx, r.y, gw, lay.panelH)
	r.y += lay.panelH + 6

	r.moduleChart(lay.rowH)
	r.y += 4
	r.topRisks()
}

// coverLayouts are the heights of the cover's map panel and chart rows,
// roomiest first; the cover takes the first with which its top risks and
// review flags fit, else the first with which its top risks do.
var coverLayouts = []struct{ panelH, rowH float64 }{
	{66, 6.6}, {62, 6.2}, {58, 5.6}, {58, 5},
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// panel draws a titled light panel.
func (r *renderer) panel(x, y, w, h float64, title string) {
	r.fill(colPanel)
	r.f.RoundedRect(x, y, w, h, 2, "1234", "F")
	r.setFont(fLabel)
	r.setInk(colMuted)
	r.cell(x+4, y+2.5, w-8, 4, title, "L")
}

// gauge draws the overall score as a semicircle of level bands with a
// marker at the score, the number inside, then level and confidence.
func (r *renderer) gauge(x, y, w, h float64) {
	f := r.f
	s := r.a.Summary
	// The dial sits 26 mm above the panel's foot, on the lines of text
	// under it, whatever the panel's height.
	const outer, inner = 24.0, 16.5
	cx, cy := x+w/2, y+h-26

	for i, l := range levels {
		a0 := 180 - 36*float64(i) - 0.6
		a1 := 180 - 36*float64(i+1) + 0.6
		if i == 0 {
			a0 = 180
		}
		if i == len(levels)-1 {
			a1 = 0
		}
		r.fill(l.fill)
		f.Polygon(annulus(cx, cy, inner, outer, a0, a1), "F")
	}

	// With no level and no module scored there is no overall score to
	// point at, whatever the integer field holds.
	scored := s.RiskLevel != ""
	for _, m := range moduleScoreList(&s.ModuleScores) {
		scored = scored || m.score != nil
	}
	if scored {
		r.gaugeMarker(cx, cy, inner, outer, clampScore(s.OverallScore))
	}

	scoreText := "–"
	if scored {
		scoreText = strconv.Itoa(s.OverallScore)
	}
	r.setFont(fontSpec{"go", "B", 27})
	r.setInk(colInk)
	r.cell(cx-15, cy-13.5, 30, 10, scoreText, "C")
	r.setFont(fTiny)
	r.setInk(colMuted)
	r.cell(cx-15, cy-4, 30, 3, "out of 100", "C")
	r.setInk(colFaint)
	mid := (outer + inner) / 2
	r.cell(cx-mid-5, cy+0.8, 10, 3, "0", "C")
	r.cell(cx+mid-5, cy+0.8, 10, 3, "100", "C")

	label, fill, on := levelStyle(s.RiskLevel)
	r.pill(cx, cy+4, label, fontSpec{"go", "B", 10}, fill, on, 6.2, "C")

	r.setInk(colInk)
	// The module that drives the overall index, with its own score, so a
	// site with one severe peril is not read as low risk overall.
	if d := s.OverallDriver; d != "" && scored {
		text := "Driven by " + strings.ToLower(risk.ModuleTitle(d))
		if sc, ok := s.ModuleScores.Get(d); ok && sc != nil {
			text += " (" + strconv.Itoa(*sc) + ")"
		}
		r.fitText(x+2, cy+11.6, w-4, 4, text, "C", fSmall, 6)
		cy += 4.3
	}
	r.fitText(x+2, cy+11.6, w-4, 4, "Confidence: "+confidenceText(s.Confidence), "C", fSmall, 6)
	r.setFont(fSmall)
	r.setInk(colMuted)
	flags := "No review flags"
	switch n := len(s.ReviewFlags); n {
	case 0:
	case 1:
		flags = "1 review flag – see Review flags"
	default:
		flags = strconv.Itoa(n) + " review flags – see Review flags"
	}
	r.cell(x+3, cy+15.9, w-6, 4, flags, "C")
}

// gaugeMarker is a dark wedge outside the band at the score, with a
// hairline through the band.
func (r *renderer) gaugeMarker(cx, cy, inner, outer float64, score int) {
	f := r.f
	ang := (180 - 1.8*float64(score)) * math.Pi / 180
	ux, uy := math.Cos(ang), -math.Sin(ang)
	px, py := -uy, ux
	tip := outer + 0.6
	base := outer + 4.2
	r.fill(colInk)
	f.Polygon([]fpdf.PointType{
		{X: cx + ux*tip, Y: cy + uy*tip},
		{X: cx + ux*base + px*2, Y: cy + uy*base + py*2},
		{X: cx + ux*base - px*2, Y: cy + uy*base - py*2},
	}, "F")
	f.SetLineWidth(0.7)
	r.stroke(colInk)
	f.Line(cx+ux*(inner-1), cy+uy*(inner-1), cx+ux*(outer+0.3), cy+uy*(outer+0.3))
}

// annulus is the outline of a ring sector between angles a0 > a1 (degrees,
// counter-clockwise from east, page y pointing down).
func annulus(cx, cy, rIn, rOut, a0, a1 float64) []fpdf.PointType {
	n := int(math.Ceil(math.Abs(a0-a1)/2)) + 1
	pts := make([]fpdf.PointType, 0, 2*n+2)
	for i := 0; i <= n; i++ {
		a := (a0 + (a1-a0)*float64(i)/float64(n)) * math.Pi / 180
		pts = append(pts, fpdf.PointType{X: cx + rOut*math.Cos(a), Y: cy - rOut*math.Sin(a)})
	}
	for i := n; i >= 0; i-- {
		a := (a0 + (a1-a0)*float64(i)/float64(n)) * math.Pi / 180
		pts = append(pts, fpdf.PointType{X: cx + rIn*math.Cos(a), Y: cy - rIn*math.Sin(a)})
	}
	return pts
}

// pill draws a rounded label anchored at x by align (L: left edge, C:
// centre, R: right edge) and returns its width.
func (r *renderer) pill(x, y float64, text string, fs fontSpec, fill, on rgb, h float64, align string) float64 {
	r.setFont(fs)
	w := r.f.GetStringWidth(text) + h*1.1
	switch align {
	case "C":
		x -= w / 2
	case "R":
		x -= w
	}
	r.fill(fill)
	r.f.RoundedRect(x, y, w, h, h/2, "1234", "F")
	r.setInk(on)
	r.cell(x, y, w, h, text, "C")
	return w
}

// moduleChartHeight is the height moduleChart takes with rows rowH high.
func (r *renderer) moduleChartHeight(rowH float64) float64 {
	return 8 + float64(len(moduleScoreList(&r.a.Summary.ModuleScores)))*rowH + 10
}

// moduleChart is the horizontal bar chart of the module scores, one row
// rowH high per module. A module without data gets a hatched track and
// "No data", never a bar at 0.
func (r *renderer) moduleChart(rowH float64) {
	f := r.f
	const labelW, valueW = 46.0, 24.0
	barH := rowH * 0.62
	mods := moduleScoreList(&r.a.Summary.ModuleScores)
	r.ensure(r.moduleChartHeight(rowH))
	r.sectionTitle("Module scores", "Percentile among US residents: a score of 80 is more hazardous than 80% of them")
	trackX := marginL + labelW
	trackW := contentW - labelW - valueW
	top := r.y

	for i, m := range mods {
		yy := top + float64(i)*rowH
		by := yy + (rowH-barH)/2
		r.setFont(fBody)
		r.setInk(colInk)
		r.fitText(marginL, yy, labelW-3, rowH, moduleTitle(m.key), "L", fBody, 6)
		if m.score == nil {
			r.noDataTrack(trackX, by, trackW, barH, fLabel, 1.5, 0.7)
			r.setFont(fBody)
			r.cell(trackX+trackW+3, yy, valueW-3, rowH, "–", "L")
			continue
		}
		sc := clampScore(*m.score)
		r.fill(colNoDataBg)
		f.Rect(trackX, by, trackW, barH, "F")
		label, fill, _ := levelStyle(moduleLevel(m.score, nil))
		if bw := trackW * float64(sc) / 100; bw > 0 {
			r.fill(fill)
			f.Rect(trackX, by, bw, barH, "F")
		}
		r.setFont(fontSpec{"go", "B", 10})
		r.setInk(colInk)
		num := strconv.Itoa(*m.score)
		nw := f.GetStringWidth(num)
		r.cell(trackX+trackW+3, yy, nw, rowH, num, "L")
		r.setFont(fSmall)
		r.setInk(colMuted)
		r.cell(trackX+trackW+3+nw+1.5, yy, valueW-nw-4.5, rowH, label, "L")
	}
	bottom := top + float64(len(mods))*rowH
	// Band boundaries over the tracks, then the axis.
	f.SetLineWidth(0.25)
	r.stroke(colWhite)
	for v := 20; v < 100; v += 20 {
		xx := trackX + trackW*float64(v)/100
		f.Line(xx, top+0.5, xx, bottom-0.5)
	}
	r.setFont(fTiny)
	r.setInk(colFaint)
	for v := 0; v <= 100; v += 20 {
		xx := trackX + trackW*float64(v)/100
		r.cell(xx-5, bottom+0.4, 10, 3, strconv.Itoa(v), "C")
	}
	r.y = bottom + 4.4
	r.levelLegend(trackX, r.y)
	r.y += 5.6
}

func clampScore(s int) int {
	return max(0, min(100, s))
}

// hatch draws the no-data pattern: grey diagonal lines on a pale box.
func (r *renderer) hatch(x, y, w, h float64) {
	f := r.f
	r.fill(colNoDataBg)
	f.Rect(x, y, w, h, "F")
	f.ClipRect(x, y, w, h, false)
	f.SetLineWidth(0.25)
	r.stroke(colNoData)
	for xx := x - h; xx < x+w; xx += 1.6 {
		f.Line(xx, y+h, xx+h, y)
	}
	f.ClipEnd()
}

// levelLegend explains the colours used by the chart and the gauge.
func (r *renderer) levelLegend(x, y float64) {
	f := r.f
	r.setFont(fTiny)
	for _, l := range levels {
		r.fill(l.fill)
		f.Rect(x, y+0.4, 3, 3, "F")
		r.setInk(colMuted)
		t := l.label + " " + l.rng
		tw := f.GetStringWidth(t)
		r.cell(x+4, y, tw, 3.8, t, "L")
		x += 4 + tw + 4.5
	}
	r.hatch(x, y+0.4, 3, 3)
	r.setInk(colMuted)
	r.cell(x+4, y, 20, 3.8, "No data", "L")
}

// sectionTitle draws a heading with an optional muted note on the right.
func (r *renderer) sectionTitle(title, note string) {
	r.setFont(fH2)
	r.setInk(colNavy)
	r.cell(marginL, r.y, contentW, 6, title, "L")
	h := 6.0
	if note != "" {
		tw := r.f.GetStringWidth(title)
		r.setInk(colMuted)
		h = max(h, 0.6+r.fitText(marginL+tw+4, r.y+0.6, contentW-tw-4, 6, note, "L", fSmall, 6.5))
	}
	r.y += h + 2
}

// Top-risk geometry (mm): the reasons' indent and line height.
const riskIndent, riskLineH = 9.0, 3.7

// topRiskReason wraps a top risk's reason, whole, beside its number.
func (r *renderer) topRiskReason(t risk.TopRisk) []string {
	r.setFont(fSmall)
	return r.wrap(clean(t.Reason, false), contentW-riskIndent)
}

// topRiskHeight is the height one top risk takes.
func (r *renderer) topRiskHeight(t risk.TopRisk) float64 {
	return 6 + riskLineH*float64(len(r.topRiskReason(t))) + 2.3
}

// topRisksHeight is the height of the whole top-risks block.
func (r *renderer) topRisksHeight() float64 {
	h := 8.0
	if len(r.a.Summary.TopRisks) == 0 {
		return h + 9
	}
	for _, t := range r.a.Summary.TopRisks {
		h += r.topRiskHeight(t)
	}
	return h
}

// topRisks lists the up to three highest-scoring modules with their
// reasons in full.
func (r *renderer) topRisks() {
	risks := r.a.Summary.TopRisks
	r.ensure(8 + 14)
	r.sectionTitle("Top risks", "")
	if len(risks) == 0 {
		r.setFont(fBody)
		r.setInk(colMuted)
		r.paragraph(marginL, contentW, 4.5, "No module could be scored at this location, so no top risks are listed.")
		return
	}
	f := r.f
	for i, t := range risks {
		const indent = riskIndent
		reason := r.topRiskReason(t)
		r.ensure(r.topRiskHeight(t))
		y0 := r.y
		r.fill(colNavy)
		f.Circle(marginL+2.8, y0+2.9, 2.6, "F")
		r.setFont(fontSpec{"go", "B", 8.5})
		r.setInk(colWhite)
		r.cell(marginL+0.2, y0+0.3, 5.2, 5.2, strconv.Itoa(i+1), "C")

		label, fill, on := levelStyle(t.RiskLevel)
		pw := r.pill(pageW-marginR, y0+0.4, strconv.Itoa(t.Score)+"  ·  "+label, fontSpec{"go", "B", 8}, fill, on, 5, "R")
		r.setInk(colInk)
		r.fitText(marginL+indent, y0, contentW-indent-pw-3, 5.8, moduleTitle(t.Module), "L", fontSpec{"go", "B", 10.5}, 6)

		r.setFont(fSmall)
		r.setInk(colMuted)
		yy := y0 + 6
		for _, line := range reason {
			r.cell(marginL+indent, yy, contentW-indent, riskLineH, line, "L")
			yy += riskLineH
		}
		r.y = yy + 2.3
		if i < len(risks)-1 {
			f.SetLineWidth(0.2)
			r.stroke(colRule)
			f.Line(marginL+indent, r.y-1.2, pageW-marginR, r.y-1.2)
		}
	}
}
