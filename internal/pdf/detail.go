package pdf

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/risk"
)

// column is one table column: width, header, alignment and font.
type column struct {
	w     float64
	head  string
	align string
	font  fontSpec
}

// tableCell is one cell's content; bar, when set, draws a percentile bar
// under the text.
type tableCell struct {
	text string
	bar  *float64
}

// Table geometry (mm).
const (
	barInset   = 8.0 // room for "100th" before a percentile bar
	cellPadX   = 1.4
	cellPadY   = 0.65
	tableLineH = 2.95
	tableHeadH = 5.0
)

// table draws a header row and wrapped rows, repeating the header after a
// page break. Every cell is drawn in full. A row is kept on one page; only
// a row taller than a whole page flows on, line by line, onto the next.
func (r *renderer) table(cols []column, rows [][]tableCell) {
	const lh = tableLineH
	header := func() {
		r.fill(colNavy)
		r.f.Rect(marginL, r.y, contentW, tableHeadH, "F")
		r.setInk(colWhite)
		x := marginL
		for _, c := range cols {
			r.fitText(x+cellPadX, r.y, c.w-2*cellPadX, tableHeadH, c.head, c.align, fLabel, 5.5)
			x += c.w
		}
		r.y += tableHeadH
	}
	// Each row's wrapped lines, so the header is never left alone at the
	// foot of a page.
	laid := make([][][]string, len(rows))
	for i, row := range rows {
		lines := make([][]string, len(cols))
		for j, c := range cols {
			r.setFont(c.font)
			lines[j] = r.wrap(row[j].text, c.w-2*cellPadX)
		}
		laid[i] = lines
	}
	height := func(lines [][]string, from, to int) float64 {
		n := 1
		for _, l := range lines {
			n = max(n, min(len(l), to)-from)
		}
		return float64(n)*lh + 2*cellPadY
	}
	// A row taller than this flows over pages rather than overflow one.
	tallest := bodyBottom - contentTop - 12 - tableHeadH
	first := 2*cellPadY + 2*lh
	if len(laid) > 0 {
		first = max(first, min(height(laid[0], 0, 1<<30), 2*cellPadY+4*lh))
	}
	r.ensure(tableHeadH + first)
	header()
	for i, row := range rows {
		lines := laid[i]
		n := 0
		for _, l := range lines {
			n = max(n, len(l))
		}
		n = max(n, 1)
		if h := height(lines, 0, n); h <= tallest && r.ensure(h) {
			header()
		}
		for from := 0; from < n; {
			// The lines that fit on this page; at least two per page.
			fit := int((bodyBottom - r.y - 2*cellPadY) / lh)
			if fit < min(2, n-from) {
				r.newPage()
				header()
				continue
			}
			to := min(n, from+fit)
			h := height(lines, from, to)
			if i%2 == 1 {
				r.fill(colPanel)
				r.f.Rect(marginL, r.y, contentW, h, "F")
			}
			x := marginL
			for j, c := range cols {
				r.setFont(c.font)
				r.setInk(colInk)
				yy := r.y + cellPadY
				for k := from; k < to && k < len(lines[j]); k++ {
					r.cell(x+cellPadX, yy, c.w-2*cellPadX, lh, lines[j][k], c.align)
					yy += lh
				}
				if p := row[j].bar; p != nil && from == 0 {
					r.percentileBar(x+cellPadX+barInset, r.y+cellPadY+lh/2-0.6, c.w-2*cellPadX-barInset, *p)
				}
				x += c.w
			}
			r.y += h
			r.f.SetLineWidth(0.15)
			r.stroke(colRule)
			r.f.Line(marginL, r.y, pageW-marginR, r.y)
			from = to
		}
	}
}

// percentileBar is a thin 0..100 bar coloured like the level scale, so a
// percentile reads at a glance the same way module scores do.
func (r *renderer) percentileBar(x, y, w, p float64) {
	p = max(0, min(100, p))
	r.fill(colRule)
	r.f.Rect(x, y, w, 1.2, "F")
	_, fill, _ := levelStyle(risk.RiskLevel(int(p)))
	r.fill(fill)
	r.f.Rect(x, y, w*p/100, 1.2, "F")
}

// modulePages draws one section per module, in report order.
func (r *renderer) modulePages() {
	// Module detail starts on a page of its own, unless the cover's last
	// lines spilled onto a page that is still mostly empty.
	if r.f.PageNo() == 1 || r.y > contentTop+(bodyBottom-contentTop)/3 {
		r.newPage()
	} else {
		r.y += 8
	}
	r.f.Bookmark("Module detail", 0, r.y)
	r.h1("Module detail")
	recs := r.a.Summary.Recommendations
	known := map[string]bool{}
	// Every registry module gets its section, one the report lacks as no
	// data, so a module is never silently left out.
	for i, key := range moduleOrder(r.a.Report.Modules) {
		if i > 0 {
			r.y += 4
		}
		m, _ := r.a.Report.Modules.Get(key)
		perils := m.Perils
		if len(perils) == 0 {
			perils, _ = r.a.Summary.Perils.Get(key)
		}
		r.moduleSection(key, &m, perils, recs)
		known[key] = true
	}
	// A recommendation not tied to one of the modules still belongs in
	// the report.
	var other []risk.Recommendation
	for _, rec := range recs {
		if !known[rec.Module] {
			other = append(other, rec)
		}
	}
	if len(other) > 0 {
		r.y += 5
		r.cont = ""
		r.ensure(5.2 + r.recommendationHeight(other[0]))
		r.subheading("Other recommendations")
		r.cont = "Other recommendations"
		for _, rec := range other {
			r.recommendation(rec)
		}
	}
}

// h1 is a main section heading; it also names the section for
// continuation pages.
func (r *renderer) h1(title string) {
	r.cont = ""
	r.ensure(14)
	r.setFont(fH1)
	r.setInk(colNavy)
	r.cell(marginL, r.y, contentW, 7, title, "L")
	r.y += 7.5
	r.f.SetLineWidth(0.6)
	r.stroke(colTeal)
	r.f.Line(marginL, r.y, marginL+18, r.y)
	r.y += 3.5
	r.cont = title
}

// Prose geometry: narrative, recommendations and the closing sections.
var (
	fProse  = fontSpec{"go", "", 8}
	fModule = fontSpec{"go", "B", 11.5} // a module section's title
)

const proseLineH = 3.4

func (r *renderer) moduleSection(key string, m *risk.ModuleReport, perils []risk.Peril, recs []risk.Recommendation) {
	f := r.f
	title := moduleTitle(key)
	r.cont = ""

	lvl := moduleLevel(m.Score, m.RiskLevel)
	label, fill, on := levelStyle(lvl)
	if m.Score == nil {
		label, fill, on = "No data", colNoData, colWhite
	}
	scoreText := "–"
	if m.Score != nil {
		scoreText = strconv.Itoa(*m.Score)
	}
	// The band: title over the module's confidence, basis and indicator
	// count on the left; score and level on the right.
	r.setFont(fontSpec{"go", "B", 8.5})
	pw := r.f.GetStringWidth(label) + 5.5*1.1
	r.setFont(fontSpec{"go", "B", 15})
	sw := f.GetStringWidth(scoreText)
	r.setFont(fTiny)
	ow := f.GetStringWidth("/ 100")
	right := pageW - marginR - 3 - pw - 4
	if m.Score != nil {
		right -= ow + 1.2
	}
	textW := right - sw - marginL - 9
	meta := "Confidence: " + confidenceText(m.Confidence) + "   ·   Basis: " + basisLabel(m.Basis) +
		"   ·   Indicators: " + strconv.Itoa(len(m.Indicators))
	r.setFont(fTiny)
	metaLines := r.wrap(meta, textW)
	r.setFont(fModule)
	titleLines := r.wrap(title, textW)
	bandH := 1.6 + 5*float64(len(titleLines)) + 3*float64(len(metaLines)) + 1.2

	// Keep the band with its peril bars, or else with the start of its
	// table.
	if len(perils) > 0 {
		r.ensure(bandH + 2 + r.perilBarsHeight(perils))
	} else {
		r.ensure(bandH + 2 + tableHeadH + 2*tableLineH + 3)
	}
	f.Bookmark(title, 1, r.y)

	r.fill(colPanel)
	f.Rect(marginL, r.y, contentW, bandH, "F")
	r.fill(fill)
	f.Rect(marginL, r.y, 1.8, bandH, "F")
	mid := r.y + bandH/2
	r.pill(pageW-marginR-3, mid-2.75, label, fontSpec{"go", "B", 8.5}, fill, on, 5.5, "R")
	rx := pageW - marginR - 3 - pw - 4
	if m.Score != nil {
		r.setFont(fTiny)
		r.setInk(colMuted)
		r.cell(rx-ow, mid-1.6, ow, 4, "/ 100", "L")
		rx -= ow + 1.2
	}
	r.setFont(fontSpec{"go", "B", 15})
	r.setInk(colInk)
	r.cell(rx-sw, mid-4, sw, 7.5, scoreText, "L")

	yy := r.y + 1.6
	r.setFont(fModule)
	r.setInk(colNavy)
	for _, l := range titleLines {
		r.cell(marginL+5, yy, textW, 5, l, "L")
		yy += 5
	}
	r.setFont(fTiny)
	r.setInk(colMuted)
	for _, l := range metaLines {
		r.cell(marginL+5, yy, textW, 3, l, "L")
		yy += 3
	}
	r.y += bandH + 2
	r.cont = title

	r.perilBars(perils)

	if len(m.Indicators) > 0 {
		ind := fontSpec{"go", "", 7}
		cols := []column{
			{w: 121, head: "Indicator", align: "L", font: ind},
			{w: 33, head: "Value", align: "L", font: fontSpec{"go", "B", 7}},
			{w: 20, head: "US percentile", align: "L", font: ind},
			{w: contentW - 174, head: "Source", align: "L", font: ind},
		}
		rows := make([][]tableCell, 0, len(m.Indicators))
		for _, in := range m.Indicators {
			pct := tableCell{text: "not ranked"}
			if in.Percentile != nil {
				v := *in.Percentile
				pct = tableCell{text: ordinal(v), bar: &v}
			}
			lbl := clean(in.Label, false)
			if lbl == "" {
				lbl = clean(in.ID, false)
			}
			rows = append(rows, []tableCell{
				{text: lbl},
				{text: clean(indicatorValue(in), false)},
				pct,
				{text: r.sourceRef(in.Source)},
			})
		}
		r.table(cols, rows)
	} else {
		r.setFont(fProse)
		r.setInk(colMuted)
		r.paragraph(marginL, contentW, proseLineH, "No indicators were measured for this module at this location.")
	}
	r.y += 2.5

	if n := clean(m.Narrative, true); n != "" {
		// "Assessment" runs into the narrative's first line.
		for i, para := range strings.Split(n, "\n") {
			spans := []span{{para, fProse, colInk}}
			if i == 0 {
				spans = append([]span{{"Assessment", fontSpec{"go", "B", 8.5}, colTealDark}}, spans...)
			}
			lines := r.richWrap(spans, contentW)
			r.ensure(proseLineH * float64(min(len(lines), 2)))
			for _, l := range lines {
				r.ensure(proseLineH)
				r.richLine(marginL, r.y, proseLineH, l)
				r.y += proseLineH
			}
		}
		r.y += 2
	}

	var mine []risk.Recommendation
	for _, rec := range recs {
		if rec.Module == key {
			mine = append(mine, rec)
		}
	}
	if len(mine) > 0 {
		// Keep the heading with its first recommendation.
		r.ensure(5 + r.recommendationHeight(mine[0]))
		r.subheading("Recommendations")
		for _, rec := range mine {
			r.recommendation(rec)
		}
	}
}

// Peril bar geometry (mm): one row per peril, taller where its title or
// detail wraps.
// The word "Perils" heads the block in a column of its own.
const (
	perilRowH    = 4.4
	perilLineH   = 3.2
	perilBarH    = 2.6
	perilLabelW  = 13.0
	perilTitleW  = 36.0
	perilTrackW  = 46.0
	perilScoreW  = 7.5
	perilDetailX = marginL + perilLabelW + perilTitleW + perilTrackW + 2.5 + perilScoreW
)

// perilKeepRows is the most peril rows kept together on one page.
const perilKeepRows = 8

// perilRow is one peril laid out: its title and detail lines.
type perilRow struct {
	title, detail []string
	h             float64
}

func (r *renderer) perilRows(perils []risk.Peril) []perilRow {
	detailW := pageW - marginR - perilDetailX
	rows := make([]perilRow, len(perils))
	for i, p := range perils {
		title := clean(p.Title, false)
		if title == "" {
			title = humanize(clean(p.Peril, false))
		}
		r.setFont(fSmall)
		rows[i].title = r.wrap(orDash(title), perilTitleW-3)
		if p.Score != nil {
			r.setFont(fTiny)
			rows[i].detail = r.wrap(joinNonEmpty("  ·  ", risk.ResolutionText(clean(p.Resolution, false)), chanceText(p)), detailW)
		}
		n := max(len(rows[i].title), len(rows[i].detail), 1)
		rows[i].h = max(perilRowH, float64(n)*perilLineH+1.2)
	}
	return rows
}

// perilBarsHeight is the height of perilBars' block that is kept on one
// page: the whole block for up to perilKeepRows perils, else its heading
// and first rows (a longer list flows on).
func (r *renderer) perilBarsHeight(perils []risk.Peril) float64 {
	if len(perils) == 0 {
		return 0
	}
	h := 0.0
	for i, row := range r.perilRows(perils) {
		if i == perilKeepRows {
			return h
		}
		h += row.h
	}
	return h + 2.5
}

// perilBars draws one small bar per peril of a module: its title, the score
// on a 0–100 track in the level colour, the score, and in words where the
// score was measured and, where the data give one, how often the damaging
// event comes ("about 1 in 240 years"), wrapped in full. A peril without
// data gets the hatched track and "No data" like a module without data,
// never a bar at 0. A block of up to perilKeepRows perils is kept on one
// page.
func (r *renderer) perilBars(perils []risk.Peril) {
	if len(perils) == 0 {
		return
	}
	f := r.f
	r.ensure(r.perilBarsHeight(perils))
	rows := r.perilRows(perils)
	titleX := marginL + perilLabelW
	trackX := titleX + perilTitleW
	scoreX := trackX + perilTrackW + 2.5
	detailX := perilDetailX
	detailW := pageW - marginR - detailX
	for i, p := range perils {
		row := rows[i]
		// Only a list longer than a page breaks inside the block.
		if r.ensure(row.h) || i == 0 {
			r.setFont(fontSpec{"go", "B", 9})
			r.setInk(colTealDark)
			r.cell(marginL, r.y+(perilRowH-4.4)/2, perilLabelW, 4.4, "Perils", "L")
		}
		yy := r.y
		// The bar sits on the first line, beside the title's first line.
		by := yy + (perilRowH-perilBarH)/2
		ly := yy + (perilRowH-perilLineH)/2
		r.setFont(fSmall)
		r.setInk(colInk)
		for k, l := range row.title {
			r.cell(titleX, ly+float64(k)*perilLineH, perilTitleW-3, perilLineH, l, "L")
		}
		if p.Score == nil {
			r.noDataTrack(trackX, by, perilTrackW, perilBarH, fontSpec{"go", "B", 6}, 1.2, 0.35)
			r.setFont(fSmall)
			r.cell(scoreX, ly, perilScoreW, perilLineH, "–", "L")
			r.y += row.h
			continue
		}
		r.fill(colNoDataBg)
		f.Rect(trackX, by, perilTrackW, perilBarH, "F")
		_, fill, _ := levelStyle(moduleLevel(p.Score, p.RiskLevel))
		if bw := perilTrackW * float64(clampScore(*p.Score)) / 100; bw > 0 {
			r.fill(fill)
			f.Rect(trackX, by, bw, perilBarH, "F")
		}
		// The level bands, as on the cover's chart.
		f.SetLineWidth(0.2)
		r.stroke(colWhite)
		for v := 20; v < 100; v += 20 {
			xx := trackX + perilTrackW*float64(v)/100
			f.Line(xx, by, xx, by+perilBarH)
		}
		r.setFont(fontSpec{"go", "B", 8})
		r.setInk(colInk)
		r.cell(scoreX, ly, perilScoreW, perilLineH, strconv.Itoa(*p.Score), "L")
		r.setFont(fTiny)
		r.setInk(colMuted)
		for k, l := range row.detail {
			r.cell(detailX, ly+float64(k)*perilLineH, detailW, perilLineH, l, "L")
		}
		r.y += row.h
	}
	r.y += 2.5
}

func (r *renderer) subheading(s string) {
	r.setFont(fontSpec{"go", "B", 9})
	r.setInk(colTealDark)
	for _, l := range r.wrap(s, contentW) {
		r.cell(marginL, r.y, contentW, 4.4, l, "L")
		r.y += 4.4
	}
	r.y += 0.6
}

// Recommendation geometry (mm): the chip's width and the line height.
const recChipW, recLineH = 16.0, proseLineH

// recommendationLines wraps a recommendation's text beside its chip.
func (r *renderer) recommendationLines(rec risk.Recommendation) []string {
	r.setFont(fProse)
	lines := r.wrap(clean(rec.Text, false), contentW-recChipW-3)
	if len(lines) == 0 {
		lines = []string{"–"}
	}
	return lines
}

// recommendationHeight is the height recommendation takes, capped at what
// it keeps on one page.
func (r *renderer) recommendationHeight(rec risk.Recommendation) float64 {
	return min(float64(len(r.recommendationLines(rec)))*recLineH, 40)
}

// recommendation is one action with its priority chip; the text wraps
// beside the chip.
func (r *renderer) recommendation(rec risk.Recommendation) {
	const chipW, lh = recChipW, recLineH
	lines := r.recommendationLines(rec)
	if h := float64(len(lines)) * lh; h < 40 {
		r.ensure(h)
	}
	for i, line := range lines {
		r.ensure(lh)
		if i == 0 {
			label, fill, on := priorityStyle(rec.Priority)
			r.fill(fill)
			r.f.RoundedRect(marginL, r.y+0.2, chipW-2, lh-0.4, 1.2, "1234", "F")
			r.setInk(on)
			r.fitText(marginL, r.y+0.2, chipW-2, lh-0.4, label, "C", fontSpec{"go", "B", 7}, 5)
			r.setFont(fProse)
		}
		r.setInk(colInk)
		r.cell(marginL+chipW+1, r.y, contentW-chipW-1, lh, line, "L")
		r.y += lh
	}
	r.y += 1.2
}

// boxLine is one line of a boxed entry: its text, font, colour and height.
type boxLine struct {
	text string
	font fontSpec
	ink  rgb
	h    float64
}

// box draws lines in a tinted box with a coloured rule on its left, kept
// on one page when it fits on one; a longer box flows on over pages, each
// part in its own box.
func (r *renderer) box(lines []boxLine, bg, rule rgb) {
	const pad = 2.0
	total := 2 * pad
	for _, l := range lines {
		total += l.h
	}
	if total <= bodyBottom-contentTop-12 {
		r.ensure(total)
	}
	for len(lines) > 0 {
		// The lines that fit on this page, at least one.
		h, n := 2*pad, 0
		for n < len(lines) && r.y+h+lines[n].h <= bodyBottom {
			h += lines[n].h
			n++
		}
		if n == 0 {
			r.newPage()
			continue
		}
		r.fill(bg)
		r.f.Rect(marginL, r.y, contentW, h, "F")
		r.fill(rule)
		r.f.Rect(marginL, r.y, 1.5, h, "F")
		yy := r.y + pad
		for _, l := range lines[:n] {
			r.setFont(l.font)
			r.setInk(l.ink)
			r.cell(marginL+5, yy, contentW-9, l.h, l.text, "L")
			yy += l.h
		}
		r.y += h
		lines = lines[n:]
	}
}

// coverFlagsHeight is the height the review flags take on the cover.
func (r *renderer) coverFlagsHeight() float64 {
	flags := r.a.Summary.ReviewFlags
	h := 4 + 8 + 1.5
	for _, fl := range flags {
		for _, l := range r.flagLines(fl) {
			h += l.h
		}
		h += 4 + 1.6
	}
	if len(flags) == 0 {
		h += proseLineH
	}
	return h
}

const flagsIntro = "Items a reviewer should look at before relying on the scores above."

// flagLines lays out one review flag: its code, then its message.
func (r *renderer) flagLines(fl risk.ReviewFlag) []boxLine {
	var lines []boxLine
	r.setFont(fLabel)
	for _, l := range r.wrap(orDash(clean(fl.Code, false)), contentW-9) {
		lines = append(lines, boxLine{l, fLabel, rgb{150, 90, 0}, 3.4})
	}
	lines[len(lines)-1].h += 0.6
	r.setFont(fProse)
	for _, l := range r.wrap(clean(fl.Message, false), contentW-9) {
		lines = append(lines, boxLine{l, fProse, colInk, proseLineH})
	}
	return lines
}

// flagBoxes draws every review flag in a boxed entry with an amber rule.
func (r *renderer) flagBoxes() {
	for _, fl := range r.a.Summary.ReviewFlags {
		r.box(r.flagLines(fl), colFlagBg, colFlag)
		r.y += 1.6
	}
}

// coverFlags puts the review flags on the cover, under the top risks,
// when they all fit there; it reports whether they did.
func (r *renderer) coverFlags() bool {
	flags := r.a.Summary.ReviewFlags
	if r.f.PageNo() != 1 || r.y+r.coverFlagsHeight() > bodyBottom {
		return false
	}
	r.y += 4
	r.f.Bookmark("Review flags", 0, r.y)
	if len(flags) == 0 {
		r.sectionTitle("Review flags", "")
		r.setFont(fProse)
		r.setInk(colMuted)
		r.paragraph(marginL, contentW, proseLineH, "No review flags were raised for this location.")
		return true
	}
	r.sectionTitle("Review flags", flagsIntro)
	r.y -= 0.5
	r.flagBoxes()
	return true
}

// flagsSection lists every review flag after the module detail, where
// they did not fit on the cover.
func (r *renderer) flagsSection() {
	flags := r.a.Summary.ReviewFlags
	r.y += 3
	r.cont = ""
	r.ensure(14 + 10)
	r.f.Bookmark("Review flags", 0, r.y)
	r.h1("Review flags")
	r.setFont(fProse)
	r.setInk(colMuted)
	if len(flags) == 0 {
		r.paragraph(marginL, contentW, proseLineH, "No review flags were raised for this location.")
		return
	}
	r.paragraph(marginL, contentW, proseLineH, flagsIntro)
	r.y += 1.5
	r.flagBoxes()
}

// minLastPage is the least body a page the report spills onto carries.
const minLastPage = (bodyBottom - contentTop) / 4

// sourceEntry is one numbered data set: the report's sources in order,
// then any source an indicator names that the report does not describe.
type sourceEntry struct {
	id  string
	ref *risk.SourceRef // nil: named by an indicator only
}

// sourceList numbers the data sets the indicator tables refer to.
func (r *renderer) sourceList() []sourceEntry {
	if r.sources != nil {
		return r.sources
	}
	r.sources = []sourceEntry{}
	seen := map[string]bool{}
	for i := range r.a.Report.Sources {
		s := &r.a.Report.Sources[i]
		r.sources = append(r.sources, sourceEntry{id: clean(s.ID, false), ref: s})
		seen[s.ID] = true
	}
	for _, key := range moduleOrder(r.a.Report.Modules) {
		m, _ := r.a.Report.Modules.Get(key)
		for _, in := range m.Indicators {
			if in.Source != "" && !seen[in.Source] {
				r.sources = append(r.sources, sourceEntry{id: clean(in.Source, false)})
				seen[in.Source] = true
			}
		}
	}
	return r.sources
}

// sourceRef is how an indicator table names a source: its number in the
// list of data sources, in brackets.
func (r *renderer) sourceRef(id string) string {
	if id == "" {
		return "–"
	}
	for i, s := range r.sourceList() {
		if s.id == clean(id, false) {
			return "[" + strconv.Itoa(i+1) + "]"
		}
	}
	return clean(id, false)
}

// Data-source list geometry (mm): two columns of entries.
const (
	srcGap    = 6.0
	srcColW   = (contentW - srcGap) / 2
	srcNumW   = 6.0
	srcLineH  = 3.1
	srcSpaceH = 1.0
)

// sourceLines lays out one numbered data set as a paragraph: its name in
// bold, then its id, publisher, version and resolution.
func (r *renderer) sourceLines(s sourceEntry) [][]span {
	bold := fontSpec{"go", "B", 7}
	var spans []span
	if s.ref != nil {
		if name := clean(s.ref.Name, false); name != "" {
			spans = append(spans, span{name, bold, colInk})
		}
		spans = append(spans, span{"[" + orDash(s.id) + "] · " + orDash(clean(s.ref.Publisher, false)) +
			" · " + orDash(clean(s.ref.Version, false)) + " · " + orDash(clean(s.ref.Resolution, false)), fTiny, colMuted})
	} else {
		spans = append(spans, span{"[" + orDash(s.id) + "] · named by an indicator, not described in this report", fTiny, colMuted})
	}
	return r.richWrap(spans, srcColW-srcNumW)
}

// sourcesSection is the numbered list of data sets behind the report, in
// two columns, filled left then right on each page and balanced on the
// last, then the credits the data sets ask for. It ends the report: a
// page it spills onto gets at least a quarter page of it.
func (r *renderer) sourcesSection() {
	r.y += 3
	r.cont = ""
	r.ensure(14 + 16)
	r.f.Bookmark("Data sources", 0, r.y)
	r.h1("Data sources")
	srcs := r.sourceList()
	creditsH := r.creditsHeight()
	if len(srcs) == 0 {
		r.setFont(fProse)
		r.setInk(colMuted)
		r.paragraph(marginL, contentW, proseLineH, noSources)
	} else {
		r.setFont(fSmall)
		r.setInk(colMuted)
		r.paragraph(marginL, contentW, 3.5, sourcesIntro)
		r.y += 1.5
		r.sourceColumns(srcs, creditsH)
	}
	r.y += 1
	r.ensure(creditsH)
	r.setFont(fSmall)
	r.setInk(colMuted)
	r.paragraph(marginL, contentW, 3.5, dataCredits)
}

const (
	noSources    = "No data sources are listed for this report."
	sourcesIntro = "Each entry: data set, [identifier] · publisher · version · resolution. " +
		"The indicator tables cite them by number."
)

// creditsHeight is the height of the data credits that end the report.
func (r *renderer) creditsHeight() float64 {
	r.setFont(fSmall)
	return 1 + 3.5*float64(len(r.wrap(dataCredits, contentW)))
}

// sourcesHeight is the height of the whole Data sources section when it
// fits on one page.
func (r *renderer) sourcesHeight() float64 {
	h := 3 + 11 + r.creditsHeight()
	srcs := r.sourceList()
	if len(srcs) == 0 {
		return h + proseLineH
	}
	r.setFont(fSmall)
	h += 3.5*float64(len(r.wrap(sourcesIntro, contentW))) + 1.5
	_, heights := r.sourceEntries(srcs)
	cols, _ := balancedColumns(heights, 0, len(heights))
	return h + cols
}

// sourceEntries lays out the numbered entries and gives their heights.
func (r *renderer) sourceEntries(srcs []sourceEntry) ([][][]span, []float64) {
	entries := make([][][]span, len(srcs))
	heights := make([]float64, len(srcs))
	for i, s := range srcs {
		entries[i] = r.sourceLines(s)
		heights[i] = srcLineH*float64(max(len(entries[i]), 1)) + srcSpaceH
	}
	return entries, heights
}

// balancedColumns is the height of entries from..to-1 set in two columns
// as even as can be, and the number of them in the left one.
func balancedColumns(heights []float64, from, to int) (float64, int) {
	total := 0.0
	for j := from; j < to; j++ {
		total += heights[j]
	}
	best, left, run := math.Inf(1), 0, 0.0
	for k := 0; k <= to-from; k++ {
		if k > 0 {
			run += heights[from+k-1]
		}
		if tall := max(run, total-run); tall < best {
			best, left = tall, k
		}
	}
	return best, left
}

// sourceColumns draws the numbered entries in two columns from the cursor,
// over as many pages as they need. tail is the height that follows them
// (the credits).
func (r *renderer) sourceColumns(srcs []sourceEntry, tail float64) {
	entries, heights := r.sourceEntries(srcs)
	balanced := func(from, to int) (float64, int) { return balancedColumns(heights, from, to) }
	for i := 0; i < len(srcs); {
		avail := bodyBottom - r.y
		// How many entries fit in the two columns of this page.
		n, col, sum := 0, 0, 0.0
		for j := i; j < len(srcs); j++ {
			if sum+heights[j] > avail {
				if col == 1 || heights[j] > avail {
					break
				}
				col, sum = 1, 0
			}
			sum += heights[j]
			n++
		}
		spills := i+n < len(srcs)
		if h, _ := balanced(i, len(srcs)); !spills && h+1+tail > avail {
			// The entries fit but what follows them does not.
			spills = true
		}
		if spills {
			// The rest spills onto another page: leave it at least a
			// quarter page, or nothing at all.
			n = min(n, len(srcs)-i-1)
			for n > 0 {
				if h, _ := balanced(i+n, len(srcs)); h+tail >= minLastPage {
					break
				}
				n--
			}
		}
		if n == 0 {
			if r.y > contentTop+8 {
				r.newPage()
				continue
			}
			n = 1 // an entry longer than a page: drawn whole, however far
		}
		// Fill the left column first, then the right; the last entries
		// are split where the columns come out most even.
		left := n
		if !spills {
			_, left = balanced(i, i+n)
		} else {
			run := 0.0
			for k := 0; k < n; k++ {
				if run+heights[i+k] > avail {
					left = k
					break
				}
				run += heights[i+k]
			}
		}
		y, bottom := r.y, r.y
		for j := i; j < i+n; j++ {
			x := marginL
			if j-i == left {
				y = r.y
			}
			if j-i >= left {
				x += srcColW + srcGap
			}
			r.setFont(fontSpec{"go", "B", 7})
			r.setInk(colTealDark)
			r.cell(x, y, srcNumW, srcLineH, "["+strconv.Itoa(j+1)+"]", "L")
			for _, line := range entries[j] {
				r.richLine(x+srcNumW, y, srcLineH, line)
				y += srcLineH
			}
			y += srcSpaceH
			bottom = max(bottom, y)
		}
		r.y = bottom
		i += n
		if i < len(srcs) {
			r.newPage()
		}
	}
}

// dataCredits is what the data sets' terms ask a product using them to
// say (datapack/manifest.json, "attribution"; docs/data.md, "Licences").
const dataCredits = "This product uses FEMA's National Risk Index and OpenFEMA data but is not " +
	"endorsed by FEMA. Shorelines and rivers: GSHHG 2.3.7, P. Wessel and W. H. F. Smith, " +
	"LGPL-3.0-or-later. County boundaries: U.S. Census Bureau, TopoJSON by M. Bostock (ISC)."

// limitations is the plain-language note every report carries.
const limitations = "This report is a screening tool, not a site survey, engineering " +
	"assessment, appraisal or insurance quote. Scores rank the location against the " +
	"rest of the United States using public hazard data; they are not probabilities " +
	"of loss. Several indicators are county-level data where stated (for example FEMA " +
	"National Risk Index values), so they describe the whole county rather than this " +
	"exact site. Data vintages differ by source and conditions may have changed since " +
	"each data set was published (see Data sources for versions). A module shown as " +
	"\"No data\" was not scored and must not be read as low risk. Boundaries and the " +
	"locator map are approximate. Confirm material findings with a site inspection " +
	"and the original data before making a decision."

// methodsNote is the essentials of the method a reader needs to read the
// scores, from docs/methodology.md ("Percentiles", "Resolution and
// confidence", "Annual probabilities and return periods"). A PDF has to
// stand on its own: its reader cannot open the repository's documents.
const methodsNote = "Scores run from 0 to 100 and read: very low 0-19, low 20-39, moderate 40-59, " +
	"high 60-79, very high 80-100. A score of 80 means the location is more exposed than 80% of " +
	"US residents; it is a ranking, not an 80% chance of loss. Each indicator states where it was " +
	"measured: at the site, on a model grid, from reported events near the site, or as a county " +
	"average, in falling order of confidence; its source and vintage are given beside it. " +
	"Confidence (high, medium, low) weighs these resolutions and the completeness of each data set. " +
	"Where a chance is shown as \"about 1 in N years\", it is the annual chance of the event named " +
	"beside it. Perils are each ranked on their own: a module ranks every resident's worst peril, so it " +
	"can read lower than one of its perils. A module or peril shown as \"No data\" was not scored."

// methodologySection names the scoring method and its limits. It flows
// on from the sections before it; each heading is kept with the first
// lines under it.
func (r *renderer) methodologySection() {
	r.y += 3
	r.cont = ""
	meth := r.a.Report.Methodology
	desc := withoutRepositoryPaths(clean(meth.Description, true))
	const lh = proseLineH
	r.ensure(14 + 2*4.2 + 3*lh)
	r.f.Bookmark("Methodology and limitations", 0, r.y)
	r.h1("Methodology and limitations")
	r.kv("Methodology version", orDash(clean(meth.Version, false)))
	r.kv("Data version", orDash(clean(r.a.DataVersion, false)))
	r.y += 1.5
	if desc != "" {
		r.setFont(fProse)
		r.setInk(colInk)
		r.paragraph(marginL, contentW, lh, desc)
		r.y += 2.5
	}
	r.ensure(5 + lh*3)
	r.subheading("How to read the scores")
	r.setFont(fProse)
	r.setInk(colInk)
	r.paragraph(marginL, contentW, lh, methodsNote)
	r.y += 2.5
	// A short Data sources section after it is kept with the Limitations,
	// so the last page is never a few lines alone.
	r.setFont(fProse)
	limH := 5 + lh*float64(len(r.wrap(limitations, contentW)))
	if after := r.sourcesHeight(); after < minLastPage && limH+2.5+after <= bodyBottom-contentTop {
		r.ensure(limH + 2.5 + after)
	}
	r.ensure(5 + lh*3)
	r.subheading("Limitations")
	r.setFont(fProse)
	r.setInk(colInk)
	r.paragraph(marginL, contentW, lh, limitations)
}

// withoutRepositoryPaths drops the sentences of s that send the reader to
// a file of the repository ("See docs/methodology.md ..."): reports stored
// before the PDF carried its own methods note say so, and a PDF reader can
// open no such path.
func withoutRepositoryPaths(s string) string {
	if !strings.Contains(s, "docs/") {
		return s
	}
	var kept []string
	for _, sentence := range strings.SplitAfter(s, ". ") {
		if !strings.Contains(sentence, "docs/") {
			kept = append(kept, sentence)
		}
	}
	return strings.TrimSpace(strings.Join(kept, ""))
}

// kv draws a bold label and its value on one line, wrapping the value.
func (r *renderer) kv(label, value string) {
	const lw, lh = 36.0, 4.2
	r.setFont(fontSpec{"go", "B", 8.5})
	r.setInk(colMuted)
	r.ensure(lh)
	r.cell(marginL, r.y, lw, lh, label, "L")
	r.setFont(fProse)
	r.setInk(colInk)
	for i, l := range r.wrap(value, contentW-lw) {
		if i > 0 {
			r.ensure(lh)
		}
		r.cell(marginL+lw, r.y, contentW-lw, lh, l, "L")
		r.y += lh
	}
}

// verificationSection ends the document: the report's provenance and the
// line that says how its signature is checked, with the digest a reader
// can compare (docs/verification.md).
func (r *renderer) verificationSection(v *Verification) {
	r.y += 3
	r.cont = ""
	r.ensure(14 + 4.2*float64(len(v.Facts)) + 4*proseLineH)
	r.f.Bookmark("Provenance and verification", 0, r.y)
	r.h1("Provenance and verification")
	for _, f := range v.Facts {
		r.kv(f[0], orDash(clean(f[1], false)))
	}
	r.y += 1.5
	r.setFont(fProse)
	r.setInk(colInk)
	r.paragraph(marginL, contentW, proseLineH, clean(fmt.Sprintf("Signed by locrisk key %s (Ed25519). "+
		"This PDF carries the report's signed JSON as the attached file %s; its signature covers the RFC 8785 "+
		"canonical form of that JSON, whose SHA-256 is %s. The pages are signed too: the document's keywords hold a "+
		"signature of each page's content, the outline and that JSON, so an edited page, an appended update or a "+
		"removed attachment fails the check. Check both with: locrisk report verify FILE.pdf",
		v.KeyID, v.AttachmentName, v.SignedSHA256), true))
}
