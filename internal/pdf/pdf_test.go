package pdf

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const maxBytes = 300 << 10

var allModuleTitles = []string{"Hydrology", "Severe weather", "Wildfire", "Earthquake", "Landslide", "Environmental exposure"}

// --- helpers around the poppler and qpdf tools -----------------------------

func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"qpdf", "pdftotext", "pdfinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("need qpdf and poppler-utils (apt-get install qpdf poppler-utils): %s not installed", tool)
		}
	}
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// qpdfCheck fails unless qpdf --check exits 0 with no warning.
func qpdfCheck(t *testing.T, path string) {
	t.Helper()
	cmd := exec.Command("qpdf", "--check", path)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("qpdf --check: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	if errb.Len() > 0 || strings.Contains(strings.ToLower(out.String()), "warning") {
		t.Fatalf("qpdf --check reported warnings:\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "No syntax or stream encoding errors") {
		t.Fatalf("qpdf --check output unexpected:\n%s", out.String())
	}
}

// text extracts text (pages first..last, 0 for all) with whitespace
// collapsed, so wrapped lines join with single spaces.
func text(t *testing.T, path string, first, last int) string {
	t.Helper()
	args := []string{"-enc", "UTF-8"}
	if first > 0 {
		args = append(args, "-f", strconv.Itoa(first), "-l", strconv.Itoa(last))
	}
	out, err := exec.Command("pdftotext", append(args, path, "-")...).Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

func pages(t *testing.T, path string) int {
	t.Helper()
	out, err := exec.Command("pdfinfo", path).Output()
	if err != nil {
		t.Fatalf("pdfinfo: %v", err)
	}
	m := regexp.MustCompile(`(?m)^Pages:\s+(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("pdfinfo gave no page count:\n%s", out)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

var wordRE = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)

// checkInside fails when any word lies outside the text column or runs
// into the band between the body and the footer: the mechanical test that
// long text wrapped and paginated instead of overflowing.
func checkInside(t *testing.T, path string) {
	t.Helper()
	out, err := exec.Command("pdftotext", "-bbox", "-enc", "UTF-8", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext -bbox: %v", err)
	}
	const k = 72 / 25.4 // points per mm
	const tol = 0.6     // mm: rounding of glyph boxes
	words := wordRE.FindAllSubmatch(out, -1)
	if len(words) == 0 {
		t.Fatal("no words extracted")
	}
	for _, w := range words {
		var v [4]float64
		for i := range v {
			v[i], _ = strconv.ParseFloat(string(w[i+1]), 64)
			v[i] /= k
		}
		x0, y0, x1, y1 := v[0], v[1], v[2], v[3]
		word := string(w[5])
		if x0 < marginL-tol || x1 > pageW-marginR+tol {
			t.Errorf("word %q runs outside the text column: x %.1f..%.1f mm", word, x0, x1)
		}
		// Text boxes include the font's ascent and descent, so allow a
		// line's worth of slack at the body bottom, none inside the footer.
		if y1 > bodyBottom+1.5 && y0 < footerRule {
			t.Errorf("word %q runs past the body into the footer band: y %.1f..%.1f mm", word, y0, y1)
		}
		if y0 < 5 || y1 > pageH-5 {
			t.Errorf("word %q is off the page: y %.1f..%.1f mm", word, y0, y1)
		}
	}
}

// keep writes a rendering to $LOCRISK_PDF_KEEP, when set, for looking at
// the pages (pdftoppm -r 60 -png file.pdf /tmp/pg).
func keep(t *testing.T, name string, b []byte) {
	t.Helper()
	if dir := os.Getenv("LOCRISK_PDF_KEEP"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name+".pdf"), b, 0o644); err != nil {
			t.Errorf("keeping %s: %v", name, err)
		}
	}
}

func render(t *testing.T, in Input) []byte {
	t.Helper()
	b, err := Render(in)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if len(b) > maxBytes {
		t.Errorf("PDF is %d bytes, over the %d byte budget", len(b), maxBytes)
	}
	return b
}

// --- tests -------------------------------------------------------------------

func TestRenderStructure(t *testing.T) {
	needTools(t)
	in := sampleInput()
	b := render(t, in)
	keep(t, "sample", b)
	path := writeTemp(t, b)
	qpdfCheck(t, path)
	checkInside(t, path)
	if n := pages(t, path); n != 4 {
		t.Errorf("sample report has %d pages, want 4", n)
	}
	all := text(t, path, 0, 0)
	want := append([]string{
		"Location Risk Report", "Los Angeles County", "California",
		"34.0522° N, 118.2437° W", "62", "High", "Confidence: Medium (0.71)",
		"Review flags", "Data sources", "Methodology and limitations", "locrisk-method-1.3",
		"screening tool, not a site survey",
		"Report " + in.ReportID, "Job " + in.JobID, "Generated 2026-11-22 10:00:00 UTC",
		"Page 1 of 4", "Page 4 of 4",
		"usgs_nshm2018_pga", "0.871 g", "96th", "U.S. Geological Survey", "1.20 (Dec 2024)",
		"module_no_data", "Hawai‘i",
	}, allModuleTitles...)
	for _, s := range want {
		if !strings.Contains(all, s) {
			t.Errorf("extracted text lacks %q", s)
		}
	}
	// Page 1 alone carries the summary: score, level, county, all modules.
	p1 := text(t, path, 1, 1)
	for _, s := range append([]string{"62", "High", "Los Angeles County", "Top risks", "Module scores", "No data", "Driven by earthquake (91)"}, allModuleTitles...) {
		if !strings.Contains(p1, s) {
			t.Errorf("page 1 text lacks %q", s)
		}
	}
}

// lines groups the words of pages first..last into text lines (words whose
// vertical centres are within 1 mm, per page), each joined by spaces in x
// order: what a reader sees on one row.
func lines(t *testing.T, path string, first, last int) []string {
	t.Helper()
	out, err := exec.Command("pdftotext", "-bbox", "-enc", "UTF-8", "-f", strconv.Itoa(first), "-l", strconv.Itoa(last), path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext -bbox: %v", err)
	}
	type word struct {
		x, y float64
		s    string
	}
	var res []string
	for _, page := range strings.Split(string(out), "<page ")[1:] {
		var ws []word
		for _, m := range wordRE.FindAllStringSubmatch(page, -1) {
			x0, _ := strconv.ParseFloat(m[1], 64)
			y0, _ := strconv.ParseFloat(m[2], 64)
			y1, _ := strconv.ParseFloat(m[4], 64)
			ws = append(ws, word{x0, (y0 + y1) / 2 * 25.4 / 72, html.UnescapeString(m[5])})
		}
		slices.SortStableFunc(ws, func(a, b word) int {
			if math.Abs(a.y-b.y) > 1 {
				return cmp.Compare(a.y, b.y)
			}
			return cmp.Compare(a.x, b.x)
		})
		for i := 0; i < len(ws); {
			j := i
			var parts []string
			for j < len(ws) && math.Abs(ws[j].y-ws[i].y) <= 1 {
				parts = append(parts, ws[j].s)
				j++
			}
			res = append(res, strings.Join(parts, " "))
			i = j
		}
	}
	return res
}

// lineWith returns the first line starting with prefix.
func lineWith(ls []string, prefix string) (string, bool) {
	for _, l := range ls {
		if strings.HasPrefix(l, prefix) {
			return l, true
		}
	}
	return "", false
}

// perilLines puts the "Perils" label that heads a module's first peril row
// on a line of its own, so every row starts with its peril's title.
func perilLines(ls []string) []string {
	var out []string
	for _, l := range ls {
		if rest, ok := strings.CutPrefix(l, "Perils "); ok {
			out = append(out, "Perils", rest)
			continue
		}
		out = append(out, l)
	}
	return out
}

// Each module section draws one bar per peril: title, score, resolution in
// words and, where known, the return period; a peril without data is
// "No data" on a hatched track, never a 0.
func TestRenderPerilBars(t *testing.T) {
	needTools(t)
	in := sampleInput()
	path := writeTemp(t, render(t, in))
	n := pages(t, path)
	ls := perilLines(lines(t, path, 2, n))
	want := map[string]string{
		"Coastal flooding":   "Coastal flooding 9 site",
		"Riverine flooding":  "Riverine flooding 58 mixed resolutions",
		"Tornado":            "Tornado 31 county average",
		"Hurricane wind":     "Hurricane wind No data –",
		"Hail":               "Hail 22 reported events",
		"Straight-line wind": "Straight-line wind 0 county average",
		"Wildfire 78 grid":   "Wildfire 78 grid · about 1 in 240 years",
		"Ground shaking":     "Ground shaking 91 grid",
		"Landslide No data":  "Landslide No data –",
		"Superfund sites":    "Superfund sites 35 site",
	}
	for prefix, w := range want {
		if got, ok := lineWith(ls, prefix); !ok || got != w {
			t.Errorf("peril row %q = %q, want %q", prefix, got, w)
		}
	}
	if got := strings.Count(strings.Join(ls, "\n"), "\nPerils\n"); got != 6 {
		t.Errorf("%d peril blocks, want one per module (6)", got)
	}

	// Perils only in the summary (a module report without them) are still
	// drawn; a module with no perils anywhere has no peril block.
	in = sampleInput()
	a := in.Assessment
	moduleRef(a, "wildfire").Perils = nil
	moduleRef(a, "earthquake").Perils = nil
	a.Summary.Perils.Set("earthquake", nil)
	path = writeTemp(t, render(t, in))
	n = pages(t, path)
	ls = perilLines(lines(t, path, 2, n))
	if got, ok := lineWith(ls, "Wildfire 78 grid"); !ok || got != want["Wildfire 78 grid"] {
		t.Errorf("wildfire peril from the summary: %q", got)
	}
	if _, ok := lineWith(ls, "Ground shaking"); ok {
		t.Error("a module without perils drew a peril row")
	}
	if got := strings.Count(strings.Join(ls, "\n"), "\nPerils\n"); got != 5 {
		t.Errorf("%d peril blocks, want 5", got)
	}
	checkInside(t, path)
	qpdfCheck(t, path)
}

// What the PDF offers assistive technology, since fpdf cannot tag it
// (docs/api.md): the document language, a title naming the report and
// its place, and bookmarks to every section and module that open with the
// file. It is untagged: when that changes (a newer fpdf), so must the docs.
func TestRenderAccessibility(t *testing.T) {
	needTools(t)
	path := writeTemp(t, render(t, sampleInput()))
	info, err := exec.Command("pdfinfo", path).Output()
	if err != nil {
		t.Fatalf("pdfinfo: %v", err)
	}
	for _, want := range []string{"Title:           Location Risk Report – Los Angeles County, California", "Tagged:          no"} {
		if !strings.Contains(string(info), want+"\n") {
			t.Errorf("pdfinfo lacks %q:\n%s", want, info)
		}
	}
	qdf := filepath.Join(t.TempDir(), "qdf.pdf")
	if out, err := exec.Command("qpdf", "--qdf", "--object-streams=disable", path, qdf).CombinedOutput(); err != nil {
		t.Fatalf("qpdf --qdf: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(qdf)
	if err != nil {
		t.Fatal(err)
	}
	catalog := regexp.MustCompile(`(?s)<<((?:[^<>]|<<[^<>]*>>|<<(?:[^<>]|<<[^<>]*>>)*>>)*)/Type /Catalog`).Find(raw)
	for _, want := range []string{"/Lang (en-US)", "/PageMode /UseOutlines", "/Outlines "} {
		if !bytes.Contains(catalog, []byte(want)) {
			t.Errorf("the catalog lacks %s:\n%s", want, catalog)
		}
	}
	out, err := exec.Command("qpdf", "--json", "--json-key=outlines", path).Output()
	if err != nil {
		t.Fatalf("qpdf --json: %v", err)
	}
	type outline struct {
		Title string    `json:"title"`
		Kids  []outline `json:"kids"`
	}
	var doc struct{ Outlines []outline }
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range doc.Outlines {
		got = append(got, o.Title)
		for _, k := range o.Kids {
			got = append(got, "  "+k.Title)
		}
	}
	want := []string{"Summary", "Module detail"}
	for _, m := range allModuleTitles {
		want = append(want, "  "+m)
	}
	want = append(want, "Review flags", "Methodology and limitations", "Data sources")
	if !slices.Equal(got, want) {
		t.Errorf("bookmarks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRenderDeterministic(t *testing.T) {
	first := render(t, sampleInput())
	var wg sync.WaitGroup
	outs := make([][]byte, 4)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := Render(sampleInput())
			if err != nil {
				t.Error(err)
			}
			outs[i] = b
		}()
	}
	wg.Wait()
	for i, b := range outs {
		if !bytes.Equal(first, b) {
			t.Fatalf("render %d differs from the first (%d vs %d bytes)", i, len(b), len(first))
		}
	}
	if !bytes.Contains(first, []byte("(D:20261122100000)")) {
		t.Error("creation date is not the report's generation time")
	}
	later := sampleInput()
	later.Generated = later.Generated.Add(time.Hour)
	if bytes.Equal(first, render(t, later)) {
		t.Error("a different generation time gave the same bytes")
	}
}

func TestRenderGolden(t *testing.T) {
	b := render(t, sampleInput())
	sum := sha256.Sum256(b)
	got := hex.EncodeToString(sum[:])
	golden := filepath.Join("testdata", "sample.sha256")
	if *update {
		if err := os.WriteFile(golden, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("reading golden hash (run with -update to create it): %v", err)
	}
	if strings.TrimSpace(string(want)) != got {
		out := filepath.Join(os.TempDir(), "locrisk-pdf-golden-got.pdf")
		_ = os.WriteFile(out, b, 0o644)
		t.Fatalf("the sample report's bytes changed (sha256 %s, golden %s).\n"+
			"The new rendering is at %s; look at it (pdftoppm -r 60 -png %s /tmp/pg) and, if the change is intended, "+
			"run: go test ./internal/pdf -run TestRenderGolden -update", got, strings.TrimSpace(string(want)), out, out)
	}
}

func TestRenderRejects(t *testing.T) {
	in := sampleInput()
	in.Assessment = nil
	if _, err := Render(in); err == nil {
		t.Error("nil assessment: want error")
	}
	in = sampleInput()
	in.Generated = time.Time{}
	if _, err := Render(in); err == nil {
		t.Error("zero generation time: want error (fpdf would use the clock)")
	}
}

func TestRenderEdgeCases(t *testing.T) {
	needTools(t)
	longCounty := "Municipality of Santa María de la Concepción and the Northern Islands Consolidated Borough"
	if n := len([]rune(longCounty)); n != 90 {
		t.Fatalf("long county name has %d runes, want 90", n)
	}
	tests := []struct {
		name     string
		edit     func(in *Input)
		want     []string // in the text of the whole file
		wantP1   []string // on page 1
		minPages int
		check    func(t *testing.T, path string)
	}{{
		name: "all modules null except one",
		edit: func(in *Input) {
			a := in.Assessment
			a.Summary.OverallScore, a.Summary.RiskLevel = 91, "very_high"
			a.Summary.TopRisks = a.Summary.TopRisks[:1]
			a.Summary.ReviewFlags = nil
			for i := range a.Report.Modules {
				m := &a.Report.Modules[i]
				if m.Module == "earthquake" {
					continue
				}
				a.Summary.ModuleScores.Set(m.Module, nil)
				// As the engine writes it: every peril still listed, none scored.
				var perils []risk.Peril
				for _, p := range m.Value.Perils {
					perils = append(perils, risk.Peril{Peril: p.Peril, Title: p.Title})
				}
				a.Summary.Perils.Set(m.Module, perils)
				m.Value = risk.ModuleReport{Basis: "no_data", Confidence: risk.Confidence{Level: "low", Score: 0},
					Perils: perils, Narrative: "No data covers this module at the location."}
				a.Summary.ReviewFlags = append(a.Summary.ReviewFlags, risk.ReviewFlag{Code: "module_no_data",
					Message: moduleTitle(m.Module) + " has no data at this location."})
			}
		},
		want:   []string{"No indicators were measured for this module at this location.", "91"},
		wantP1: []string{"91", "Very high", "5 review flags"},
		check: func(t *testing.T, path string) {
			// Five hatched bars plus the legend entry; never a 0 score.
			if n := strings.Count(text(t, path, 1, 1), "No data"); n < 6 {
				t.Errorf("page 1 shows %q %d times, want at least 6", "No data", n)
			}
		},
	}, {
		name: "twenty review flags",
		edit: func(in *Input) {
			in.Assessment.Summary.ReviewFlags = nil
			for i := range 20 {
				in.Assessment.Summary.ReviewFlags = append(in.Assessment.Summary.ReviewFlags, risk.ReviewFlag{
					Code:    fmt.Sprintf("flag_code_%02d", i+1),
					Message: strings.Repeat(fmt.Sprintf("Review item %d needs a human look because the data at this point is thin. ", i+1), 1+i%4),
				})
			}
		},
		wantP1:   []string{"20 review flags"},
		want:     []string{"flag_code_01", "flag_code_06", "flag_code_20", "Review flags (continued)"},
		minPages: 5,
	}, {
		name: "recommendation for no known module",
		edit: func(in *Input) {
			in.Assessment.Summary.Recommendations = append(in.Assessment.Summary.Recommendations,
				risk.Recommendation{Module: "general", Text: "Keep this report with the underwriting file."})
		},
		want: []string{"Other recommendations", "Action Keep this report with the underwriting file."},
	}, {
		name: "90-character county name",
		edit: func(in *Input) {
			in.Assessment.Location.CountyName = longCounty
		},
		wantP1: []string{longCounty},
	}, {
		name: "territory with empty outlines",
		edit: func(in *Input) {
			in.Assessment.Location = risk.Location{Latitude: 13.4745, Longitude: 144.7504, StateCode: "GU",
				StateName: "Guam", CountyFIPS: "66010", CountyName: "Guam"}
			in.StateOutline, in.CountyOutline = nil, nil
		},
		wantP1: []string{"Guam", "13.4745° N, 144.7504° E", "Boundary outlines are not available"},
	}, {
		name: "unicode-heavy narrative",
		edit: func(in *Input) {
			a := in.Assessment
			a.Location.CountyName, a.Location.StateName, a.Location.StateCode = "Doña Ana County", "New Mexico", "NM"
			hyd := moduleRef(a, "hydrology")
			hyd.Narrative = "Doña Ana — near Hagåtña-style names: 5 °C ± 2, 3 µg/m³, “quoted”, ‘single’, " +
				"Hawaiʻi → ≥ 10 km… Ελλάδα, Москва, ½ ‰ €, emoji 🌊, CJK 東京, combining n\u0303, zero\u200bwidth, bell\a, tab\there,\r\nCRLF line\u2028sep."
			hyd.Indicators[0].Label = "Flood depth ≥ 0.3 m — 1 % annual chance (ÅÉÎÕÜ)"
			a.Summary.TopRisks[0].Reason = "Shaking ≥ 0.8 g — “very strong”."
		},
		want: []string{"Doña Ana —", "Hagåtña", "5 °C ± 2", "3 µg/m³", "“quoted”", "Hawai‘i → ≥ 10 km…",
			"Ελλάδα", "Москва", "½ ‰ €", "zerowidth", "ÅÉÎÕÜ", "≥ 0.8 g — “very strong”"},
		wantP1: []string{"Doña Ana County, New Mexico (NM)"},
		check: func(t *testing.T, path string) {
			if all := text(t, path, 0, 0); strings.ContainsRune(all, '\uFFFD') {
				t.Error("extracted text has replacement characters")
			}
		},
	}, {
		name: "long indicator labels and many rows",
		edit: func(in *Input) {
			m := moduleRef(in.Assessment, "wildfire")
			for i := range 40 {
				m.Indicators = append(m.Indicators, risk.Indicator{
					ID:    fmt.Sprintf("long_%d", i),
					Label: strings.Repeat("Very long indicator label that keeps going ", 1+i%5) + "end",
					Text:  sp(strings.Repeat("value-without-any-spaces-", 1+i%3)), Percentile: fp(float64(i) * 2.5),
					Source: "a_source_identifier_with_no_spaces_that_is_far_too_long_for_its_column"})
			}
			m.Narrative = strings.Repeat("A long narrative sentence that has to wrap onto many lines. ", 120)
		},
		want:     []string{"Wildfire (continued)", "a_source_identifier"},
		minPages: 6,
	}, {
		name: "sixty perils with long titles",
		edit: func(in *Input) {
			m := moduleRef(in.Assessment, "wildfire")
			m.Perils = nil
			for i := range 60 {
				p := risk.Peril{Peril: fmt.Sprintf("peril_%d", i),
					Title: strings.Repeat("Very long peril title ", 1+i%4) + strconv.Itoa(i)}
				if i%3 != 0 {
					p.Score, p.Resolution = ip(i*7%101), []string{"site", "grid", "county", "reported_events", "mixed", "some_new_kind"}[i%6]
					if i%2 == 0 {
						p.ReturnPeriodYears = fp(math.Pow(10, float64(i%9)))
					}
				}
				m.Perils = append(m.Perils, p)
			}
		},
		want:     []string{"Wildfire (continued)", "about 1 in 100,000,000 years", "some new kind"},
		minPages: 7,
	}, {
		name: "empty assessment",
		edit: func(in *Input) {
			*in.Assessment = risk.Assessment{}
			in.StateOutline, in.CountyOutline = nil, nil
			in.ReportID, in.JobID = "", ""
		},
		wantP1: []string{"County not identified", "No module could be scored"},
		want:   []string{"No review flags were raised", "No data sources are listed"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := sampleInput()
			tc.edit(&in)
			b := render(t, in)
			path := writeTemp(t, b)
			qpdfCheck(t, path)
			checkInside(t, path)
			n := pages(t, path)
			if n < max(tc.minPages, 3) {
				t.Errorf("%d pages, want at least %d", n, max(tc.minPages, 3))
			}
			all := text(t, path, 0, 0)
			for _, s := range append(tc.want, allModuleTitles...) {
				if !strings.Contains(all, s) {
					t.Errorf("extracted text lacks %q", s)
				}
			}
			if !strings.Contains(all, fmt.Sprintf("Page %d of %d", n, n)) {
				t.Errorf("last page footer lacks %q", fmt.Sprintf("Page %d of %d", n, n))
			}
			p1 := text(t, path, 1, 1)
			for _, s := range tc.wantP1 {
				if !strings.Contains(p1, s) {
					t.Errorf("page 1 text lacks %q", s)
				}
			}
			if tc.check != nil {
				tc.check(t, path)
			}
			keep(t, strings.ReplaceAll(tc.name, " ", "_"), b)
		})
	}
}

// Alaska's outline crosses the antimeridian: unwrapped around the site,
// the Aleutians sit next to the mainland instead of 360 degrees away.
func TestProjectionAntimeridian(t *testing.T) {
	mainland := []geo.Point{pt(-141, 69.6), pt(-141, 60.3), pt(-130, 55), pt(-165, 54.6), pt(-168, 65.6), pt(-156, 71.3)}
	aleutians := []geo.Point{pt(172.4, 52.9), pt(179.9, 51.4), pt(-179.9, 51.3), pt(-170, 52.5), pt(-170, 52.9), pt(179.9, 52.0), pt(172.4, 53.1)}
	site := geo.Point{Lat: 53.87, Lon: -166.54} // Unalaska
	const x, y, w, h = 10.0, 20.0, 100.0, 60.0
	p := newProjection(site, [][]geo.Point{mainland, aleutians}, x, y, w, h, 0.5)
	if span := p.maxLon - p.minLon; span > 60 {
		t.Fatalf("unwrapped longitude span is %.1f degrees; the antimeridian was not handled", span)
	}
	for _, ring := range [][]geo.Point{mainland, aleutians, {site}} {
		for _, q := range ring {
			px, py := p.xy(q)
			if px < x-1e-9 || px > x+w+1e-9 || py < y-1e-9 || py > y+h+1e-9 {
				t.Errorf("%v projects outside the map box: (%.1f, %.1f)", q, px, py)
			}
		}
	}
	ax, _ := p.xy(pt(179.9, 51.4))
	bx, _ := p.xy(pt(-179.9, 51.3))
	if math.Abs(ax-bx) > 1 || bx < ax {
		t.Errorf("points either side of 180° are %.2f mm apart (x %.2f then %.2f), want adjacent, west to east", math.Abs(ax-bx), ax, bx)
	}
	// The same map for a site on the Asian side of the line.
	p2 := newProjection(geo.Point{Lat: 52.9, Lon: 173.2}, [][]geo.Point{mainland, aleutians}, x, y, w, h, 0.5)
	if span := p2.maxLon - p2.minLon; span > 60 {
		t.Errorf("site east of 180°: unwrapped span %.1f degrees", span)
	}
}

func TestFormatting(t *testing.T) {
	nums := []struct {
		v    float64
		want string
	}{
		{0, "0"}, {42, "42"}, {-3, "-3"}, {1234567, "1,234,567"}, {-1234, "-1,234"}, {999, "999"},
		{1234.56, "1,235"}, {123.45, "123.5"}, {2.8, "2.8"}, {6.4321, "6.43"}, {0.8714, "0.871"},
		{0.012345, "0.0123"}, {0.0005, "0.0005"}, {0.00001234, "1.23e-05"}, {math.NaN(), "–"},
	}
	for _, c := range nums {
		if got := formatNumber(c.v); got != c.want {
			t.Errorf("formatNumber(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	vals := []struct {
		v    any
		unit string
		want string
	}{
		{2.8, "km", "2.8 km"}, {1.7, "percent", "1.7%"}, {14.0, "count", "14"}, {92.1, "score", "92.1"},
		{"High", "class", "High"}, {nil, "km", "–"}, {true, "", "Yes"}, {int64(7), "per year", "7 per year"},
		{2.5e-05, "probability", "0.0025%"}, {0.227, "probability", "22.7%"}, {0.0, "probability", "none on record"},
		{"none", "probability", "none"}, {30.5, "score 0-100", "30.5"},
		// Units that read badly after the number ("5 category"): said the
		// way a reader says them, and areas with a superscript.
		{5.0, "category", "category 5"}, {json.Number("3"), "category", "category 3"},
		{0.0, "category", "none on record"}, {2.0, "class", "class 2"}, {6.24, "magnitude", "magnitude 6.24"},
		{0.608, "index", "0.608"}, {0.0, "index", "0"}, {1.0, "degrees", "1 degree"}, {1.95, "degrees", "1.95 degrees"},
		{977.0, "residents per km2", "977 residents per km²"}, {2.0, "per km2", "2 per km²"},
		{3.5, "m3 per second", "3.5 m³ per second"}, {40.0, "m2", "40 m²"},
		{12.0, "reports per 1,000 km² a year", "12 reports per 1,000 km² a year"}, {0.754, "times the national rate", "0.754 times the national rate"},
		{4.0, "km", "4 km"}, {250.0, "m", "250 m"},
	}
	for _, c := range vals {
		if got := formatValue(c.v, c.unit); got != c.want {
			t.Errorf("formatValue(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
		if got := clean(c.want, false); got != c.want {
			t.Errorf("%q is drawn as %q: the fonts lack a glyph", c.want, got)
		}
	}
	ords := map[float64]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th",
		21: "21st", 22.4: "22nd", 99.6: "99th", 0: "0th", 111: "111th"}
	for v, want := range ords {
		if got := ordinal(v); got != want {
			t.Errorf("ordinal(%v) = %q, want %q", v, got, want)
		}
	}
	coords := []struct {
		lat, lon float64
		want     string
	}{
		{34.0522, -118.2437, "34.0522° N, 118.2437° W"},
		{-14.2756, -170.702, "14.2756° S, 170.7020° W"},
		{13.4745, 144.7504, "13.4745° N, 144.7504° E"},
	}
	for _, c := range coords {
		if got := formatCoord(c.lat, c.lon); got != c.want {
			t.Errorf("formatCoord(%v, %v) = %q, want %q", c.lat, c.lon, got, c.want)
		}
	}
	for in, want := range map[string]string{"very_high": "Very high", "severeWeather": "Severe weather", "": ""} {
		if got := humanize(in); got != want {
			t.Errorf("humanize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClean(t *testing.T) {
	cases := []struct {
		in        string
		multiline bool
		want      string
	}{
		{"plain ASCII stays", false, "plain ASCII stays"},
		{"Doña Ana – Hagåtña, 5 °C", false, "Doña Ana – Hagåtña, 5 °C"},
		{"Hawaiʻi → ≥ ⚑ ✓", false, "Hawai‘i → ≥ ! yes"},
		{"a\r\nb\rc\u2028d", true, "a\nb\nc\nd"},
		{"a\r\nb\tc", false, "a b c"},
		{"zero\u200bwidth\u00adsoft\ufeff", false, "zerowidthsoft"},
		{"bell\a end", false, "bell end"},
		{"n\u0303", false, "n"},
		{"emoji 🌊 東", false, "emoji ? ?"},
		{"bad \xff byte", false, "bad ? byte"},
	}
	glyphsOnce.Do(loadGlyphs)
	for r, sub := range substitutes {
		if r < 0x10000 && glyphs[r] {
			t.Errorf("substitute for %U %q is dead: the fonts have the glyph", r, r)
		}
		if clean(sub, false) != sub {
			t.Errorf("substitute %q for %U is not drawable itself", sub, r)
		}
	}
	for _, c := range cases {
		if got := clean(c.in, c.multiline); got != c.want {
			t.Errorf("clean(%q, %v) = %q, want %q", c.in, c.multiline, got, c.want)
		}
	}
}

// BenchmarkRender reports the median render time ("p50-ms", budget 30 ms)
// and the file size ("bytes/pdf", budget 300 KB).
func BenchmarkRender(b *testing.B) {
	in := sampleInput()
	var size int
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		out, err := Render(in)
		if err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		size = len(out)
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(size), "bytes/pdf")
}

// pageRings drops what cannot show: runs of vertices outside one side of
// the clip box and vertices closer together than the tolerance.
func TestPageRings(t *testing.T) {
	p := &projection{lon0: 0, kx: 1, scale: 1, maxLat: 100} // x = lon, y = 100 - lat
	clip := rect{0, 0, 50, 50}
	var ring []geo.Point
	// A square from x=-40 to x=40, y=10..40: its left half is off the box,
	// with many vertices along the off-box edges.
	for x := 40.0; x >= -40; x -= 0.5 {
		ring = append(ring, pt(x, 90))
	}
	for x := -40.0; x <= 40; x += 0.5 {
		ring = append(ring, pt(x, 60))
	}
	got := pageRings(p, [][]geo.Point{ring}, 0.25, clip)
	if len(got) != 1 {
		t.Fatalf("got %d rings, want 1", len(got))
	}
	if n := len(got[0]); n >= len(ring)/2+10 {
		t.Errorf("kept %d of %d vertices; the off-box run was not dropped", n, len(ring))
	}
	// The part inside the box must be unchanged: same inside/outside answers.
	full := pageRings(p, [][]geo.Point{ring}, 0, rect{-1000, -1000, 3000, 3000})
	for x := 0.5; x < 50; x += 2 {
		for y := 0.5; y < 50; y += 2 {
			if insideRings(got, x, y) != insideRings(full, x, y) {
				t.Fatalf("reduced ring differs from the full ring at (%v, %v)", x, y)
			}
		}
	}
	if !insideRings(got, 20, 25) || insideRings(got, 20, 5) {
		t.Error("insideRings gives wrong answers for the square")
	}
	// A ring entirely off one side disappears.
	off := []geo.Point{pt(-30, 90), pt(-20, 90), pt(-20, 80), pt(-30, 80)}
	if got := pageRings(p, [][]geo.Point{off}, 0.25, clip); len(got) != 0 {
		t.Errorf("ring outside the box kept: %v", got)
	}
}

// The Value column shows an indicator's wording where it has one, else
// its number with the unit.
func TestIndicatorValue(t *testing.T) {
	tests := []struct {
		in   risk.Indicator
		want string
	}{
		{risk.Indicator{Value: fp(100), Text: sp("none within 100 km"), Unit: "km"}, "none within 100 km"},
		{risk.Indicator{Text: sp("Not Applicable"), Unit: "score 0-100"}, "Not Applicable"},
		{risk.Indicator{Text: sp("Love Canal (NY)"), Unit: "name"}, "Love Canal (NY)"},
		{risk.Indicator{Value: fp(65222), Unit: "count"}, "65,222"},
		{risk.Indicator{Value: fp(2.5), Unit: "km"}, "2.5 km"},
		{risk.Indicator{Unit: "km"}, "–"},
		{risk.Indicator{Value: fp(3), Text: sp(""), Unit: "count"}, "3"},
		{risk.Indicator{Value: fp(5), Unit: "category"}, "category 5"},
		{risk.Indicator{Value: fp(0), Unit: "category"}, "none on record"},
		{risk.Indicator{Value: fp(2), Text: sp("directly exposed"), Unit: "class"}, "directly exposed"},
		{risk.Indicator{Value: fp(84), Unit: "residents per km2"}, "84 residents per km²"},
	}
	for _, tt := range tests {
		if got := indicatorValue(tt.in); got != tt.want {
			t.Errorf("indicatorValue(%+v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
