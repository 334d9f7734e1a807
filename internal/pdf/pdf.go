// Package pdf renders a location-risk report (a risk.Assessment) as a
// branded, printable US Letter PDF: a summary page with the locator map,
// overall score gauge, module score chart and top risks (and the review
// flags when they fit there), then one section per hazard module, the
// review flags, the climate outlook (a short table of FEMA's projections
// for the county), the methodology with its limitations, and the numbered
// data sources that the indicator tables cite.
//
// It is a screening report: real reports take at most seven pages
// (TestScreeningReportFits checks places across the US); one with
// unusually many review flags or long texts takes more. No text is ever
// cut short: every field is wrapped whole, or where it has one line (ids,
// headers) set smaller first.
//
// The output is a pure function of Input: catalog order is fixed and the
// document dates are the report's generation time, so the same report gives
// byte-identical files (the server can use a strong ETag). Fonts are the Go
// fonts, embedded and subset, so any text in WGL4 (European accents, dashes,
// degree signs) renders; other characters are replaced by a stand-in.
//
// Limits: the map is an equirectangular sketch for orientation, not a
// survey-grade map, and the file makes no PDF/A claim. It is not tagged:
// fpdf v0.12 cannot write a structure tree (no /StructTreeRoot or
// /MarkInfo in the catalog, no /StructParents on pages), so what helps a
// screen reader is what fpdf allows: real text with Unicode maps, the
// document language, the title and the bookmarks (docs/api.md).
package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/reportverify"
)

// Input is one report to render.
type Input struct {
	ReportID, JobID string
	// Generated is the report's generatedUtc; it is the only time written
	// into the file.
	Generated  time.Time
	Assessment *risk.Assessment
	// StateOutline and CountyOutline are boundary rings (lon/lat) from the
	// coverage layer. Either may be empty; the map then shows what it has,
	// or just the point with a note.
	StateOutline, CountyOutline [][]geo.Point
	// Verification, when set, ends the document with its provenance and
	// the check of its signature, and attaches the signed JSON.
	Verification *Verification
}

// Verification is what a document says and carries about its report's
// provenance and signature (docs/verification.md).
type Verification struct {
	// Facts are the provenance lines shown: label and value.
	Facts [][2]string
	// KeyID is the key that signed Attachment; SignedSHA256 the SHA-256
	// (hex) of the bytes its signature covers.
	KeyID, SignedSHA256 string
	// AttachmentName and Attachment are the file embedded in the PDF: the
	// report's signed JSON.
	AttachmentName string
	Attachment     []byte
}

// Page geometry in millimetres (US Letter).
const (
	pageW      = 215.9
	pageH      = 279.4
	marginL    = 16.0
	marginR    = 16.0
	contentW   = pageW - marginL - marginR
	contentTop = 24.5  // first content line on continuation pages
	bodyBottom = 261.0 // nothing but the footer below this
	footerRule = 264.5
)

// Render draws the report. It fails only on missing input or an internal
// PDF error; every text field is drawn whatever it contains.
func Render(in Input) ([]byte, error) {
	if in.Assessment == nil {
		return nil, errors.New("pdf: render report: no assessment")
	}
	if in.Generated.IsZero() {
		// fpdf would fall back to the wall clock, breaking determinism.
		return nil, errors.New("pdf: render report: generation time is zero")
	}
	fontsOnce.Do(loadFonts)
	if errFonts != nil {
		return nil, fmt.Errorf("pdf: render report %s: %w", in.ReportID, errFonts)
	}
	r := newRenderer(in)
	r.coverPage()
	flagsDone := r.coverFlags()
	r.modulePages()
	if !flagsDone {
		r.flagsSection()
	}
	r.outlookSection()
	r.methodologySection()
	r.sourcesSection()
	if v := in.Verification; v != nil {
		r.verificationSection(v)
		r.f.SetAttachments([]fpdf.Attachment{{Content: v.Attachment, Filename: v.AttachmentName,
			Description: "The signed JSON of this report"}})
		// The keywords hold the field the signature of the pages is
		// written into once the file is made (reportverify.SignPDF,
		// docs/verification.md).
		r.f.SetKeywords(reportverify.PagesSignaturePlaceholder(r.f.PageCount()), false)
	}
	r.footers()
	var buf bytes.Buffer
	buf.Grow(96 << 10)
	if err := r.f.Output(&buf); err != nil {
		return nil, fmt.Errorf("pdf: render report %s: %w", in.ReportID, err)
	}
	return buf.Bytes(), nil
}

// The two faces as every document embeds them: the Go fonts with a true
// hyphen (shortHyphen). Made once and never written after; each document
// still gets its own copies (see newRenderer).
var (
	fontsOnce             sync.Once
	fontRegular, fontBold []byte
	errFonts              error
)

func loadFonts() {
	fontRegular, fontBold = bytes.Clone(goregular.TTF), bytes.Clone(gobold.TTF)
	for _, ttf := range [][]byte{fontRegular, fontBold} {
		if err := shortHyphen(ttf); err != nil {
			errFonts = fmt.Errorf("preparing the embedded Go font: %w", err)
		}
	}
}

// fontSpec is a font face and size.
type fontSpec struct {
	family, style string
	size          float64
}

var (
	fBody     = fontSpec{"go", "", 9.5}
	fSmall    = fontSpec{"go", "", 8}
	fTiny     = fontSpec{"go", "", 7}
	fBold     = fontSpec{"go", "B", 9.5}
	fNote     = fontSpec{"go", "", 8.5}
	fCode     = fontSpec{"go", "", 7.5} // ids and codes
	fH1       = fontSpec{"go", "B", 15}
	fH2       = fontSpec{"go", "B", 12.5}
	fLabel    = fontSpec{"go", "B", 7.5}
	fTitle    = fontSpec{"go", "B", 24}
	fWordmark = fontSpec{"go", "B", 21}
)

type renderer struct {
	f  *fpdf.Fpdf
	in Input
	a  *risk.Assessment
	y  float64 // layout cursor; all drawing goes through it

	font fontSpec
	ink  rgb
	// cont names the section in progress; a page break inside it repeats
	// the name so a continued table or list is never anonymous.
	cont string
	// sources numbers the data sets (sourceList), made on first use.
	sources []sourceEntry
}

func newRenderer(in Input) *renderer {
	f := fpdf.NewCustom(&fpdf.InitType{
		OrientationStr: "P",
		UnitStr:        "mm",
		Size:           fpdf.SizeType{Wd: pageW, Ht: pageH},
	})
	gen := in.Generated.UTC()
	f.SetCatalogSort(true)
	f.SetCreationDate(gen)
	f.SetModificationDate(gen)
	f.SetCompression(true)
	// Layout is explicit (ensure before every line or box), so fpdf must
	// never break a page by itself in the middle of a row.
	f.SetAutoPageBreak(false, 0)
	f.SetMargins(marginL, contentTop, marginR)
	f.SetCellMargin(0)
	// Two faces only: each embedded face costs 2 to 3 ms per document in
	// fpdf (parsing and hashing its width table, subsetting, compressing),
	// a real share of the 30 ms budget, so there is no italic or mono.
	// fpdf writes into the font bytes it is given (seen with v0.12.0: one
	// byte of Go Mono), which would corrupt the shared gofont variables and
	// make the second rendering differ from the first. Each document gets
	// its own copies.
	f.AddUTF8FontFromBytes("go", "", bytes.Clone(fontRegular))
	f.AddUTF8FontFromBytes("go", "B", bytes.Clone(fontBold))

	loc := in.Assessment.Location
	place := joinNonEmpty(", ", clean(loc.CountyName, false), clean(loc.StateName, false))
	title := "Location Risk Report"
	if place != "" {
		title += " – " + place
	}
	f.SetTitle(title, true)
	f.SetSubject("Location risk screening report "+clean(in.ReportID, false), true)
	f.SetAuthor("locrisk", true)
	f.SetCreator("locrisk", true)
	f.SetProducer("locrisk", true)
	f.SetLang("en-US")
	return &renderer{f: f, in: in, a: in.Assessment}
}

// setFont selects a font and remembers it so a page break can restore it.
func (r *renderer) setFont(fs fontSpec) {
	r.font = fs
	r.f.SetFont(fs.family, fs.style, fs.size)
}

func (r *renderer) setInk(c rgb) {
	r.ink = c
	r.f.SetTextColor(c.r, c.g, c.b)
}

func (r *renderer) fill(c rgb)   { r.f.SetFillColor(c.r, c.g, c.b) }
func (r *renderer) stroke(c rgb) { r.f.SetDrawColor(c.r, c.g, c.b) }

// newPage starts a continuation page with the running header and restores
// the caller's font and colour.
func (r *renderer) newPage() {
	font, ink := r.font, r.ink
	r.f.AddPage()
	r.y = contentTop
	if r.f.PageNo() > 1 {
		r.runningHeader()
		if r.cont != "" {
			r.setFont(fNote)
			r.setInk(colMuted)
			for _, l := range r.wrap(r.cont+" (continued)", contentW) {
				r.cell(marginL, r.y, contentW, 4, l, "L")
				r.y += 4
			}
			r.y += 1.5
		}
	}
	if font.family != "" {
		r.setFont(font)
	}
	r.setInk(ink)
}

// ensure starts a new page unless h millimetres still fit above the footer.
// It reports whether it broke the page.
func (r *renderer) ensure(h float64) bool {
	if r.y+h <= bodyBottom {
		return false
	}
	r.newPage()
	return true
}

// cell draws one line of text in a box of width w and height h at (x, y).
func (r *renderer) cell(x, y, w, h float64, s, align string) {
	r.f.SetXY(x, y)
	r.f.CellFormat(w, h, s, "", 0, align, false, 0, "")
}

// wrap splits already-cleaned text into lines no wider than w in the
// current font. Words longer than a line are broken.
func (r *renderer) wrap(s string, w float64) []string {
	if s == "" {
		return nil
	}
	return r.f.SplitText(s, w)
}

// shrinkToFit is fs made smaller, in half points down to min points,
// until s fits w on one line; it reports false when s is still too wide
// at min (the caller then wraps it). Nothing is ever cut off.
func (r *renderer) shrinkToFit(s string, w float64, fs fontSpec, min float64) (fontSpec, bool) {
	for {
		r.f.SetFont(fs.family, fs.style, fs.size)
		if r.f.GetStringWidth(s) <= w {
			r.setFont(fs)
			return fs, true
		}
		if fs.size-0.5 < min {
			r.setFont(fs)
			return fs, false
		}
		fs.size -= 0.5
	}
}

// fitText draws s in a box of width w at (x, y) whole: on one line in fs
// when it fits, else in a smaller size down to min points, else wrapped
// over several lines at min points. h is the line height at fs; it
// returns the height used.
func (r *renderer) fitText(x, y, w, h float64, s, align string, fs fontSpec, min float64) float64 {
	got, ok := r.shrinkToFit(s, w, fs, min)
	if ok {
		r.cell(x, y, w, h, s, align)
		return h
	}
	lh := h * got.size / fs.size
	lines := r.wrap(s, w)
	for i, l := range lines {
		r.cell(x, y+float64(i)*lh, w, lh, l, align)
	}
	return lh * float64(len(lines))
}

// paragraph draws wrapped text line by line from the cursor, breaking pages
// as needed.
func (r *renderer) paragraph(x, w, lh float64, s string) {
	for _, line := range r.wrap(s, w) {
		r.ensure(lh)
		r.cell(x, r.y, w, lh, line, "L")
		r.y += lh
	}
}

// footers writes the footer on every page once the page count is known.
func (r *renderer) footers() {
	n := r.f.PageCount()
	gen := r.in.Generated.UTC().Format("2006-01-02 15:04:05") + " UTC"
	left := "Report " + orDash(clean(r.in.ReportID, false)) + "   ·   Job " + orDash(clean(r.in.JobID, false))
	for p := 1; p <= n; p++ {
		r.f.SetPage(p)
		// Every state is set again: the page's content stream ends in
		// whatever state its own drawing left, not the last page's.
		r.f.SetLineWidth(0.2)
		r.stroke(colRule)
		r.f.Line(marginL, footerRule, pageW-marginR, footerRule)
		r.setFont(fTiny)
		r.setInk(colMuted)
		right := fmt.Sprintf("Generated %s   ·   Page %d of %d", gen, p, n)
		rw := r.f.GetStringWidth(right)
		y := footerRule + 1.8
		if r.f.GetStringWidth(left)+rw+8 <= contentW {
			r.cell(marginL, y, contentW-rw-8, 4, left, "L")
		} else {
			// Long ids: give the ids the whole first line, in a smaller
			// size if need be, and never cut.
			y += r.fitText(marginL, y, contentW, 3.6, left, "L", fTiny, 4.5) - 3.6
			y += 3.6
		}
		r.cell(pageW-marginR-rw, y, rw, 4, right, "R")
		r.setInk(colFaint)
		r.cell(marginL, footerRule+5.6+(y-footerRule-1.8), contentW-rw-8, 4,
			"Screening report – not a site survey. See Methodology and limitations.", "L")
	}
}

func joinNonEmpty(sep string, parts ...string) string {
	var out string
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += sep
		}
		out += p
	}
	return out
}

// span is a run of text in one font and colour.
type span struct {
	text string
	font fontSpec
	ink  rgb
}

// richWrap wraps spans of mixed fonts into lines no wider than w, breaking
// at spaces (a word longer than a line is broken between letters). Each
// line is the spans to draw left to right.
func (r *renderer) richWrap(spans []span, w float64) [][]span {
	type word struct {
		text string
		sp   int
		wd   float64
	}
	var words []word
	for i, s := range spans {
		r.setFont(s.font)
		for _, t := range strings.Fields(s.text) {
			// A word wider than the line is cut into pieces that fit.
			for r.f.GetStringWidth(t) > w {
				rs := []rune(t)
				k := len(rs) - 1
				for k > 1 && r.f.GetStringWidth(string(rs[:k])) > w {
					k--
				}
				words = append(words, word{string(rs[:k]), i, r.f.GetStringWidth(string(rs[:k]))})
				t = string(rs[k:])
			}
			words = append(words, word{t, i, r.f.GetStringWidth(t)})
		}
	}
	var lines [][]span
	var line []span
	x := 0.0
	for _, wd := range words {
		s := spans[wd.sp]
		gap := 0.0
		if n := len(line); n > 0 {
			// The space is drawn at the end of the line's last span.
			r.setFont(line[n-1].font)
			gap = r.f.GetStringWidth(" ")
		}
		if len(line) > 0 && x+gap+wd.wd > w {
			lines = append(lines, line)
			line, x, gap = nil, 0, 0
		}
		if n := len(line); n > 0 && line[n-1].font == s.font && line[n-1].ink == s.ink {
			line[n-1].text += " " + wd.text
		} else {
			if n > 0 {
				line[n-1].text += " "
			}
			line = append(line, span{wd.text, s.font, s.ink})
		}
		x += gap + wd.wd
	}
	if len(line) > 0 {
		lines = append(lines, line)
	}
	return lines
}

// richLine draws one line of spans from (x, y), each h high.
func (r *renderer) richLine(x, y, h float64, line []span) {
	for _, s := range line {
		r.setFont(s.font)
		r.setInk(s.ink)
		w := r.f.GetStringWidth(s.text)
		r.cell(x, y, w, h, s.text, "L")
		x += w
	}
}
