package pdf

import (
	"strconv"
	"strings"

	"locrisk/risk"
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

const (
	barInset = 10.5 // room for "100th" before a percentile bar
	cellPadX = 2.0
	cellPadY = 1.5
	maxLines = 8 // a pathological field is cut, not allowed to eat pages
)

// table draws a header row and wrapped rows, repeating the header after a
// page break. Rows never split across pages.
func (r *renderer) table(cols []column, rows [][]tableCell) {
	const lh = 3.9
	header := func() {
		r.fill(colNavy)
		r.f.Rect(marginL, r.y, contentW, 6.2, "F")
		r.setFont(fLabel)
		r.setInk(colWhite)
		x := marginL
		for _, c := range cols {
			r.cell(x+cellPadX, r.y, c.w-2*cellPadX, 6.2, c.head, c.align)
			x += c.w
		}
		r.y += 6.2
	}
	// Each row's wrapped lines and height, so the header is never left
	// alone at the foot of a page.
	type laidRow struct {
		lines [][]string
		h     float64
	}
	laid := make([]laidRow, len(rows))
	for i, row := range rows {
		lines := make([][]string, len(cols))
		n := 1
		for j, c := range cols {
			r.setFont(c.font)
			w := c.w - 2*cellPadX
			lines[j] = r.clampLines(r.wrap(row[j].text, w), maxLines, w)
			n = max(n, len(lines[j]))
		}
		laid[i] = laidRow{lines, float64(n)*lh + 2*cellPadY}
	}
	first := 2*cellPadY + 2*lh
	if len(laid) > 0 {
		first = max(first, laid[0].h)
	}
	r.ensure(6.2 + first)
	header()
	for i, row := range rows {
		lines, h := laid[i].lines, laid[i].h
		if r.ensure(h) {
			header()
		}
		if i%2 == 1 {
			r.fill(colPanel)
			r.f.Rect(marginL, r.y, contentW, h, "F")
		}
		x := marginL
		for j, c := range cols {
			r.setFont(c.font)
			r.setInk(colInk)
			yy := r.y + cellPadY
			for _, line := range lines[j] {
				r.cell(x+cellPadX, yy, c.w-2*cellPadX, lh, line, c.align)
				yy += lh
			}
			if p := row[j].bar; p != nil {
				r.percentileBar(x+cellPadX+barInset, r.y+cellPadY+lh/2-0.7, c.w-2*cellPadX-barInset, *p)
			}
			x += c.w
		}
		r.y += h
		r.f.SetLineWidth(0.15)
		r.stroke(colRule)
		r.f.Line(marginL, r.y, pageW-marginR, r.y)
	}
}

// percentileBar is a thin 0..100 bar coloured like the level scale, so a
// percentile reads at a glance the same way module scores do.
func (r *renderer) percentileBar(x, y, w, p float64) {
	p = max(0, min(100, p))
	r.fill(colRule)
	r.f.Rect(x, y, w, 1.4, "F")
	_, fill, _ := levelStyle(risk.RiskLevel(int(p)))
	r.fill(fill)
	r.f.Rect(x, y, w*p/100, 1.4, "F")
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
			r.y += 6
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
		r.y += 6
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
	r.ensure(16)
	r.setFont(fH1)
	r.setInk(colNavy)
	r.cell(marginL, r.y, contentW, 7, title, "L")
	r.y += 8
	r.f.SetLineWidth(0.6)
	r.stroke(colTeal)
	r.f.Line(marginL, r.y, marginL+18, r.y)
	r.y += 5
	r.cont = title
}

func (r *renderer) moduleSection(key string, m *risk.ModuleReport, perils []risk.Peril, recs []risk.Recommendation) {
	f := r.f
	title := moduleTitle(key)
	r.cont = ""
	// Keep the header with its peril bars, or else with the start of its
	// table.
	if len(perils) > 0 {
		r.ensure(13 + 6 + perilBarsHeight(len(perils)))
	} else {
		r.ensure(12 + 7 + 6.2 + 2*3.9 + 3)
	}
	f.Bookmark(title, 1, r.y)

	lvl := moduleLevel(m.Score, m.RiskLevel)
	label, fill, on := levelStyle(lvl)
	if m.Score == nil {
		label, fill, on = "No data", colNoData, colWhite
	}
	r.fill(colPanel)
	f.Rect(marginL, r.y, contentW, 11, "F")
	r.fill(fill)
	f.Rect(marginL, r.y, 1.8, 11, "F")
	pw := r.pill(pageW-marginR-3, r.y+2.75, label, fontSpec{"go", "B", 8.5}, fill, on, 5.5, "R")

	scoreText := "–"
	if m.Score != nil {
		scoreText = strconv.Itoa(*m.Score)
	}
	r.setFont(fontSpec{"go", "B", 15})
	r.setInk(colInk)
	sw := f.GetStringWidth(scoreText)
	r.setFont(fTiny)
	ow := f.GetStringWidth("/ 100")
	right := pageW - marginR - 3 - pw - 4
	r.setInk(colMuted)
	if m.Score != nil {
		r.cell(right-ow, r.y+4.2, ow, 4, "/ 100", "L")
		right -= ow + 1.2
	}
	r.setFont(fontSpec{"go", "B", 15})
	r.setInk(colInk)
	r.cell(right-sw, r.y+1.8, sw, 7.5, scoreText, "L")

	r.setFont(fH2)
	r.setInk(colNavy)
	r.cell(marginL+5, r.y+2.2, right-sw-marginL-8, 6.5, title, "L")
	r.y += 13
	r.cont = title

	r.setFont(fSmall)
	r.setInk(colMuted)
	meta := "Confidence: " + confidenceText(m.Confidence) + "     Basis: " + basisLabel(m.Basis) +
		"     Indicators: " + strconv.Itoa(len(m.Indicators))
	r.paragraph(marginL, contentW, 4, meta)
	r.y += 2

	r.perilBars(perils)

	if len(m.Indicators) > 0 {
		cols := []column{
			{w: 66, head: "Indicator", align: "L", font: fontSpec{"go", "", 8.5}},
			{w: 38, head: "Value", align: "L", font: fontSpec{"go", "B", 8.5}},
			{w: 27, head: "US percentile", align: "L", font: fontSpec{"go", "", 8.5}},
			{w: contentW - 131, head: "Source", align: "L", font: fCode},
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
				{text: orDash(clean(in.Source, false))},
			})
		}
		r.table(cols, rows)
	} else {
		r.setFont(fNote)
		r.setInk(colMuted)
		r.paragraph(marginL, contentW, 4.2, "No indicators were measured for this module at this location.")
	}
	r.y += 3

	if n := clean(m.Narrative, true); n != "" {
		r.ensure(5 + 4.4)
		r.subheading("Assessment")
		r.setFont(fBody)
		r.setInk(colInk)
		r.paragraph(marginL, contentW, 4.4, n)
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
		r.ensure(5.2 + r.recommendationHeight(mine[0]))
		r.subheading("Recommendations")
		for _, rec := range mine {
			r.recommendation(rec)
		}
	}
}

// Peril bar geometry (mm): one row per peril.
const (
	perilRowH   = 5.4
	perilBarH   = 3.0
	perilTitleW = 44.0
	perilTrackW = 62.0
	perilScoreW = 9.0
)

// perilBarsHeight is the height of perilBars' block for n perils that is
// kept on one page: the whole block for up to perilKeepRows perils, else
// its heading and first rows (a longer list flows on).
func perilBarsHeight(n int) float64 {
	if n == 0 {
		return 0
	}
	if n > perilKeepRows {
		return 5.2 + perilKeepRows*perilRowH
	}
	return 5.2 + float64(n)*perilRowH + 3
}

// perilKeepRows is the most peril rows kept together on one page.
const perilKeepRows = 8

// perilBars draws one small bar per peril of a module: its title, the score
// on a 0–100 track in the level colour, the score, and in words where the
// score was measured and, where the data give one, how often the damaging
// event comes ("about 1 in 240 years"). A peril without data gets the
// hatched track and "No data" like a module without data, never a bar at 0.
// A block of up to perilKeepRows perils is kept on one page.
func (r *renderer) perilBars(perils []risk.Peril) {
	if len(perils) == 0 {
		return
	}
	f := r.f
	r.ensure(perilBarsHeight(len(perils)))
	// The perils' scores rank other quantities than the module's score
	// above them (docs/methodology.md, "The scoring chain"), so the note
	// says so rather than let a peril above its module read as an error.
	r.subheadingNote("Perils", "Each ranked on its own (a module ranks every resident's worst peril, so it can read lower), where measured, how often the event comes")
	trackX := marginL + perilTitleW
	scoreX := trackX + perilTrackW + 2.5
	detailX := scoreX + perilScoreW
	detailW := pageW - marginR - detailX
	for _, p := range perils {
		// Only a list longer than a page breaks inside the block.
		r.ensure(perilRowH)
		yy := r.y
		by := yy + (perilRowH-perilBarH)/2
		title := clean(p.Title, false)
		if title == "" {
			title = humanize(clean(p.Peril, false))
		}
		r.setFont(fNote)
		r.setInk(colInk)
		r.cell(marginL+2, yy, perilTitleW-5, perilRowH, r.fitEllipsis(orDash(title), perilTitleW-5), "L")
		if p.Score == nil {
			r.noDataTrack(trackX, by, perilTrackW, perilBarH, fontSpec{"go", "B", 6.5}, 1.2, 0.45)
			r.setFont(fNote)
			r.cell(scoreX, yy, perilScoreW, perilRowH, "–", "L")
			r.y += perilRowH
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
		r.setFont(fontSpec{"go", "B", 8.5})
		r.setInk(colInk)
		r.cell(scoreX, yy, perilScoreW, perilRowH, strconv.Itoa(*p.Score), "L")
		detail := joinNonEmpty("  ·  ", risk.ResolutionText(clean(p.Resolution, false)), chanceText(p))
		r.setFont(fSmall)
		r.setInk(colMuted)
		r.cell(detailX, yy, detailW, perilRowH, r.fitEllipsis(detail, detailW), "L")
		r.y += perilRowH
	}
	r.y += 3
}

// subheadingNote is a subheading with a muted note after it on the same
// line, cut to fit.
func (r *renderer) subheadingNote(s, note string) {
	r.setFont(fontSpec{"go", "B", 9})
	r.setInk(colTealDark)
	w := r.f.GetStringWidth(s)
	r.cell(marginL, r.y, w, 4.6, s, "L")
	if note != "" {
		r.setFont(fTiny)
		r.setInk(colMuted)
		nw := contentW - w - 3
		r.cell(marginL+w+3, r.y+0.3, nw, 4.6, r.fitEllipsis(note, nw), "L")
	}
	r.y += 5.2
}

func (r *renderer) subheading(s string) {
	r.setFont(fontSpec{"go", "B", 9})
	r.setInk(colTealDark)
	r.cell(marginL, r.y, contentW, 4.6, s, "L")
	r.y += 5.2
}

// Recommendation geometry (mm): the chip's width and the line height.
const recChipW, recLineH = 17.0, 4.2

// recommendationLines wraps a recommendation's text beside its chip.
func (r *renderer) recommendationLines(rec risk.Recommendation) []string {
	r.setFont(fBody)
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
			r.setFont(fontSpec{"go", "B", 7})
			r.setInk(on)
			r.cell(marginL, r.y+0.2, chipW-2, lh-0.4, label, "C")
			r.setFont(fBody)
		}
		r.setInk(colInk)
		r.cell(marginL+chipW+1, r.y, contentW-chipW-1, lh, line, "L")
		r.y += lh
	}
	r.y += 1.4
}

// flagsSection lists every review flag in a boxed entry with an amber rule.
func (r *renderer) flagsSection() {
	flags := r.a.Summary.ReviewFlags
	r.y += 4
	r.cont = ""
	r.ensure(16 + 12)
	r.f.Bookmark("Review flags", 0, r.y)
	r.h1("Review flags")
	r.setFont(fBody)
	r.setInk(colMuted)
	if len(flags) == 0 {
		r.paragraph(marginL, contentW, 4.4, "No review flags were raised for this location.")
		return
	}
	r.paragraph(marginL, contentW, 4.4, "Items a reviewer should look at before relying on the scores above.")
	r.y += 2
	const lh = 4.2
	for _, fl := range flags {
		code := clean(fl.Code, false)
		r.setFont(fBody)
		msg := r.clampLines(r.wrap(clean(fl.Message, false), contentW-9), 20, contentW-9)
		r.setFont(fLabel)
		codeLines := r.clampLines(r.wrap(orDash(code), contentW-9), 2, contentW-9)
		h := 2.2 + 3.6*float64(len(codeLines)) + 0.8 + lh*float64(len(msg)) + 2.2
		r.ensure(h)
		r.fill(colFlagBg)
		r.f.Rect(marginL, r.y, contentW, h, "F")
		r.fill(colFlag)
		r.f.Rect(marginL, r.y, 1.5, h, "F")
		yy := r.y + 2.2
		r.setFont(fLabel)
		r.setInk(rgb{150, 90, 0})
		for _, l := range codeLines {
			r.cell(marginL+5, yy, contentW-9, 3.6, l, "L")
			yy += 3.6
		}
		yy += 0.8
		r.setFont(fBody)
		r.setInk(colInk)
		for _, l := range msg {
			r.cell(marginL+5, yy, contentW-9, lh, l, "L")
			yy += lh
		}
		r.y += h + 2
	}
}

// sourcesSection is the table of data sets behind the report.
func (r *renderer) sourcesSection() {
	r.y += 4
	r.cont = ""
	r.ensure(16 + 18)
	r.f.Bookmark("Data sources", 0, r.y)
	r.h1("Data sources")
	srcs := r.a.Report.Sources
	if len(srcs) == 0 {
		r.setFont(fBody)
		r.setInk(colMuted)
		r.paragraph(marginL, contentW, 4.4, "No data sources are listed for this report.")
		return
	}
	cols := []column{
		{w: 62, head: "Data set", align: "L", font: fontSpec{"go", "", 8.5}},
		{w: 46, head: "Publisher", align: "L", font: fontSpec{"go", "", 8.5}},
		{w: 36, head: "Version", align: "L", font: fontSpec{"go", "", 8.5}},
		{w: contentW - 144, head: "Resolution", align: "L", font: fontSpec{"go", "", 8.5}},
	}
	rows := make([][]tableCell, 0, len(srcs))
	for _, s := range srcs {
		name := clean(s.Name, false)
		if id := clean(s.ID, false); id != "" {
			name = joinNonEmpty("\n", name, "["+id+"]")
		}
		rows = append(rows, []tableCell{
			{text: orDash(name)},
			{text: orDash(clean(s.Publisher, false))},
			{text: orDash(clean(s.Version, false))},
			{text: orDash(clean(s.Resolution, false))},
		})
	}
	r.table(cols, rows)
	// Three lines at most; kept on one page.
	r.y += 2
	r.ensure(3 * 4.4)
	r.setFont(fBody)
	r.setInk(colMuted)
	r.paragraph(marginL, contentW, 4.4, dataCredits)
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
	"beside it. A module or peril shown as \"No data\" was not scored."

// methodologySection names the scoring method and its limits. The
// section is kept together when it fits on a page: started at the foot of
// a nearly full page, its last lines would otherwise sit alone on a last
// page.
func (r *renderer) methodologySection() {
	r.y += 4
	r.cont = ""
	meth := r.a.Report.Methodology
	desc := withoutRepositoryPaths(clean(meth.Description, true))
	r.setFont(fBody)
	var descLines int
	for _, p := range strings.Split(desc, "\n") {
		descLines += len(r.wrap(p, contentW))
	}
	noteLines := len(r.wrap(methodsNote, contentW))
	limLines := len(r.wrap(limitations, contentW))
	h := 13 + 2*4.6 + 1.5 + 4.4*float64(descLines) + 3 + 2*5.2 + 4.4*float64(noteLines+limLines) + 3
	if h <= bodyBottom-contentTop {
		r.ensure(h)
	} else {
		r.ensure(16 + 20)
	}
	r.f.Bookmark("Methodology and limitations", 0, r.y)
	r.h1("Methodology and limitations")
	r.setFont(fBody)
	r.setInk(colInk)
	r.kv("Methodology version", orDash(clean(meth.Version, false)))
	r.kv("Data version", orDash(clean(r.a.DataVersion, false)))
	r.y += 1.5
	if desc != "" {
		r.setFont(fBody)
		r.setInk(colInk)
		r.paragraph(marginL, contentW, 4.4, desc)
		r.y += 3
	}
	r.ensure(5.2 + 4.4*2)
	r.subheading("How to read the scores")
	r.setFont(fBody)
	r.setInk(colInk)
	r.paragraph(marginL, contentW, 4.4, methodsNote)
	r.y += 3
	r.setFont(fBody)
	if h := 5.2 + 4.4*float64(limLines); h < 80 {
		r.ensure(h)
	}
	r.subheading("Limitations")
	r.setFont(fBody)
	r.setInk(colInk)
	r.paragraph(marginL, contentW, 4.4, limitations)
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
	const lw, lh = 40.0, 4.6
	r.setFont(fBold)
	r.setInk(colMuted)
	r.ensure(lh)
	r.cell(marginL, r.y, lw, lh, label, "L")
	r.setFont(fBody)
	r.setInk(colInk)
	lines := r.clampLines(r.wrap(value, contentW-lw), 4, contentW-lw)
	for i, l := range lines {
		if i > 0 {
			r.ensure(lh)
		}
		r.cell(marginL+lw, r.y, contentW-lw, lh, l, "L")
		r.y += lh
	}
}
