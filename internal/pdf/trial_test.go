package pdf

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk"
)

// wordBoxes are the words of pages first..last as pdftotext -bbox gives
// them, in millimetres.
type wordBox struct {
	x0, y0, x1, y1 float64
	text           string
}

func wordBoxes(t *testing.T, path string, first, last int) []wordBox {
	t.Helper()
	out, err := exec.Command("pdftotext", "-bbox", "-enc", "UTF-8", "-f", strconv.Itoa(first), "-l", strconv.Itoa(last), path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext -bbox: %v", err)
	}
	const k = 72 / 25.4
	var boxes []wordBox
	for _, w := range wordRE.FindAllSubmatch(out, -1) {
		var v [4]float64
		for i := range v {
			v[i], _ = strconv.ParseFloat(string(w[i+1]), 64)
			v[i] /= k
		}
		boxes = append(boxes, wordBox{v[0], v[1], v[2], v[3], string(w[5])})
	}
	return boxes
}

// TestRenderHyphens: a hyphen is drawn as a hyphen, narrower than an en
// dash (the Go fonts' own U+002D is wider than their en dash), and text
// extraction still gives ASCII '-'.
func TestRenderHyphens(t *testing.T) {
	needTools(t)
	in := sampleInput()
	m, _ := in.Assessment.Report.Modules.Get("hydrology")
	m.Narrative = "hyphens ---------- and en dashes –––––––––– in a row."
	in.Assessment.Report.Modules.Set("hydrology", m)
	path := writeTemp(t, render(t, in))
	txt := text(t, path, 0, 0)
	for _, want := range []string{"Generated 2026-11-22", "5f0c2d3e-8a41-4b7e", "hyphens ----------", "very low 0-19"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	width := map[string]float64{}
	for _, w := range wordBoxes(t, path, 1, pages(t, path)) {
		width[w.text] = w.x1 - w.x0
	}
	hy, en := width["----------"], width["––––––––––"]
	if hy == 0 || en == 0 {
		t.Fatalf("test words not found (hyphens %v, en dashes %v)", hy, en)
	}
	if hy >= 0.8*en {
		t.Errorf("ten hyphens are %.1f mm wide, ten en dashes %.1f mm: a hyphen must be clearly shorter", hy, en)
	}
}

// TestRenderMethodsNote: the PDF carries the essentials of the method
// itself and sends no reader to a repository path, also for a report
// stored when the methodology description still did.
func TestRenderMethodsNote(t *testing.T) {
	needTools(t)
	in := sampleInput()
	in.Assessment.Report.Methodology.Description = "Every score is a population-weighted percentile. " +
		"See docs/methodology.md for formulas, resolutions, thresholds, data vintages and limitations."
	txt := text(t, writeTemp(t, render(t, in)), 0, 0)
	if strings.Contains(txt, "docs/") || strings.Contains(txt, "methodology.md") {
		i := strings.Index(txt, "docs/")
		t.Errorf("the PDF names a repository path: ...%s...", txt[max(i-80, 0):min(i+80, len(txt))])
	}
	for _, want := range []string{"Every score is a population-weighted percentile.", "How to read the scores",
		"more exposed than 80% of US residents", "at the site, on a model grid", "No data"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q", want)
		}
	}
}

// TestRenderNoNearlyEmptyLastPage moves the closing sections (methodology,
// then data sources) down the page a few lines at a time (more review
// flags before them): the last page always carries at least a quarter of
// a page of body text.
func TestRenderNoNearlyEmptyLastPage(t *testing.T) {
	needTools(t)
	const minBody = (bodyBottom - contentTop) / 4
	for extra := 0; extra <= 40; extra += 2 {
		in := sampleInput()
		for i := range extra {
			in.Assessment.Summary.ReviewFlags = append(in.Assessment.Summary.ReviewFlags,
				risk.ReviewFlag{Code: "extra_flag", Message: fmt.Sprintf("An extra review flag, number %d, to move what follows down.", i)})
		}
		path := writeTemp(t, render(t, in))
		n := pages(t, path)
		lo, hi := pageH, 0.0
		for _, w := range wordBoxes(t, path, n, n) {
			if w.y0 >= contentTop-1 && w.y1 <= bodyBottom+1.5 { // body only: no running header, no footer
				lo, hi = min(lo, w.y0), max(hi, w.y1)
			}
		}
		if hi-lo < minBody {
			t.Errorf("%d extra flags: the last page (%d) holds %.0f mm of body text, under a quarter page (%.0f mm)", extra, n, max(hi-lo, 0), minBody)
		}
	}
}
