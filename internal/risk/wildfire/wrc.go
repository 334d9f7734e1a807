package wildfire

import (
	"fmt"
	"io/fs"
	"math"

	"github.com/locrisk/locrisk/internal/risk/data"
)

// wrcRow is one county's housing-unit measures.
type wrcRow struct {
	bp          float64 // mean annual burn probability of the exposed homes
	exposedFrac float64 // share of the county's homes exposed, 0..1
	homesShare  float64 // expected share of all homes reached by fire per year
	riskPerHome float64 // expected annual relative risk per home (all homes)
	has         uint16
	// By exposure class (classNot, classIndirect, classDirect): the share
	// of the county's homes (0..1, summing to 1), and the class's mean
	// burn probability and relative risk per home (0 for not exposed).
	classFrac [3]float64
	classBP   [3]float64
	classRPS  [3]float64
}

// hasClasses marks a WRC row with the exposure-class split and each
// non-empty class's means.
const hasClasses uint16 = 1 << 15

// WRC v1 column names, exactly as in the file's header.
const (
	wrcGEOID     = "GEOID"
	wrcHomes     = "Total number of Housing Units (HUs)"
	wrcExposed   = "Total number of exposed HUs"
	wrcBP        = "Mean BP"
	wrcRPS       = "Mean RPS"
	wrcEAExposed = "Expected Annual HU Exposed"
	wrcEARisk    = "Expected Annual Relative HU Risk"
	// The exposure-class split, in percent of all the county's homes (the
	// header has two spaces after "HUs"), and each class's means.
	wrcFracDirect   = "Fraction of Total HUs  Directly Exposed"
	wrcFracIndirect = "Fraction of Total HUs  Indirectly Exposed"
	wrcFracNot      = "Fraction of Total HUs  Not Exposed"
	wrcBPDirect     = "Mean BP-Direct"
	wrcBPIndirect   = "Mean BP-Indirect"
	wrcRPSDirect    = "Mean RPS-Direct"
	wrcRPSIndirect  = "Mean RPS-Indirect"
)

// loadWRC reads the county summary. The file's "Mean" columns are means
// over the county's *exposed* housing units (directly exposed, in burnable
// cover, or indirectly, within reach of embers): in every row with a
// value, Expected Annual HU Exposed = exposed HUs x Mean BP and Expected
// Annual Relative HU Risk = exposed HUs x Mean RPS, to the files' rounding
// (0.01 and 1 housing unit). Dividing those by all the county's HUs gives
// the means over all its homes, unexposed ones counting zero. The module
// computes them from the unrounded product and checks the published totals
// against it, which also catches shifted columns.
func loadWRC(fsys fs.FS) (map[int]wrcRow, int, error) {
	t, err := data.OpenTable(fsys, data.Path(SourceWRC), wrcGEOID, wrcHomes, wrcExposed, wrcBP, wrcRPS, wrcEAExposed, wrcEARisk,
		wrcFracDirect, wrcFracIndirect, wrcFracNot, wrcBPDirect, wrcBPIndirect, wrcRPSDirect, wrcRPSIndirect)
	if err != nil {
		return nil, 0, fmt.Errorf("wildfire: %w", err)
	}
	defer t.Close()
	out := make(map[int]wrcRow, 3200)
	for t.Scan() {
		n, err := countyKey(t, wrcGEOID)
		if err != nil {
			return nil, 0, err
		}
		if _, dup := out[n]; dup {
			return nil, 0, fmt.Errorf("wildfire: %w", t.Errorf("county %s appears twice", t.String(wrcGEOID)))
		}
		r, err := wrcMeasures(t)
		if err != nil {
			return nil, 0, err
		}
		out[n] = r
	}
	if err := t.Err(); err != nil {
		return nil, 0, fmt.Errorf("wildfire: %w", err)
	}
	if len(out) == 0 {
		return nil, 0, fmt.Errorf("wildfire: %s has no county rows", data.Path(SourceWRC))
	}
	return out, t.Rows(), nil
}

func wrcMeasures(t *data.Table) (wrcRow, error) {
	var r wrcRow
	homes, okH, err := rangedFloat(t, wrcHomes, 0, 1e8)
	if err != nil {
		return r, err
	}
	exposed, okE, err := rangedFloat(t, wrcExposed, 0, 1e8)
	if err != nil {
		return r, err
	}
	if okH && okE && exposed > homes {
		return r, fmt.Errorf("wildfire: %w", t.Errorf("%g exposed housing units exceed the county's %g", exposed, homes))
	}
	// BP is an annual probability; RPS = BP x cRPS with cRPS on 0-100, so
	// it cannot exceed 100.
	bp, okBP, err := rangedFloat(t, wrcBP, 0, 1)
	if err != nil {
		return r, err
	}
	rps, okRPS, err := rangedFloat(t, wrcRPS, 0, 100)
	if err != nil {
		return r, err
	}
	if !okH || !okE || homes <= 0 {
		return r, nil // no housing units to describe: no WRC measures
	}
	r.exposedFrac = exposed / homes
	if okBP {
		r.bp, r.homesShare = bp, exposed*bp/homes
		r.has |= hasBP | hasExposed
		if err := checkTotal(t, wrcEAExposed, exposed*bp, 0.005); err != nil {
			return r, err
		}
	}
	if okRPS {
		r.riskPerHome = exposed * rps / homes
		r.has |= hasRisk
		if err := checkTotal(t, wrcEARisk, exposed*rps, 0.5); err != nil {
			return r, err
		}
	}
	if okBP && okRPS {
		if err := wrcClasses(t, &r); err != nil {
			return r, err
		}
	}
	return r, nil
}

// splitTolerance is how far, in percentage points, a county's published
// exposure-class shares may sum from 100 (or their exposed classes from the
// exposed housing units' share) for the split to be used.
const splitTolerance = 5.0

// wrcClasses reads the exposure-class split and the class means. The three
// shares must sum to 100% within splitTolerance (they are normalised to sum
// to exactly 1) and agree with the exposed housing units, or the county
// keeps its county means only; the exposed classes' means, weighted by
// their shares, must give back the county's exposed-home means within 2%,
// or the load stops, which also catches shifted columns.
func wrcClasses(t *data.Table, r *wrcRow) error {
	var frac [3]float64
	sum := 0.0
	for k, col := range [3]string{wrcFracNot, wrcFracIndirect, wrcFracDirect} {
		v, ok, err := rangedFloat(t, col, 0, 100)
		if err != nil || !ok {
			return err
		}
		frac[k] = v
		sum += v
	}
	// A few remote Alaskan rows publish splits that do not add up
	// (Aleutians West: 71.8%); those keep the county means.
	if math.Abs(sum-100) > splitTolerance {
		return nil
	}
	for k := range frac {
		r.classFrac[k] = frac[k] / sum
	}
	exposed := r.classFrac[classIndirect] + r.classFrac[classDirect]
	if math.Abs(exposed-r.exposedFrac) > splitTolerance/100 {
		return nil
	}
	cols := [3][2]string{{}, {wrcBPIndirect, wrcRPSIndirect}, {wrcBPDirect, wrcRPSDirect}}
	var bpSum, rpsSum float64
	for k := classIndirect; k <= classDirect; k++ {
		if r.classFrac[k] == 0 {
			continue
		}
		bp, okBP, err := rangedFloat(t, cols[k][0], 0, 1)
		if err != nil {
			return err
		}
		rps, okRPS, err := rangedFloat(t, cols[k][1], 0, 100)
		if err != nil {
			return err
		}
		if !okBP || !okRPS {
			return nil // a class without its means: county means only
		}
		r.classBP[k], r.classRPS[k] = bp, rps
		bpSum += r.classFrac[k] * bp
		rpsSum += r.classFrac[k] * rps
	}
	if exposed <= 0 {
		r.has |= hasClasses
		return nil
	}
	// Exposed-home means: the classes' means weighted by their shares of
	// the exposed homes.
	if want := r.bp; math.Abs(bpSum/exposed-want) > 0.02*want+1e-9 {
		return fmt.Errorf("wildfire: %w", t.Errorf("class burn probabilities average %.4g over the exposed homes, not %q %.4g", bpSum/exposed, wrcBP, want))
	}
	if want := r.riskPerHome / r.exposedFrac; math.Abs(rpsSum/exposed-want) > 0.02*want+1e-9 {
		return fmt.Errorf("wildfire: %w", t.Errorf("class relative risks average %.4g over the exposed homes, not %q %.4g", rpsSum/exposed, wrcRPS, want))
	}
	r.has |= hasClasses
	return nil
}

// checkTotal checks a published county total against exposed HUs x mean:
// within the total's rounding (half its last digit) plus 1% for the means'
// own rounding. An empty cell is not checked.
func checkTotal(t *data.Table, col string, want, half float64) error {
	v, ok, err := t.OptFloat(col)
	if err != nil {
		return fmt.Errorf("wildfire: %w", err)
	}
	if ok && !(math.Abs(v-want) <= half+0.01*want) {
		return fmt.Errorf("wildfire: %w", t.Errorf("column %q: %g is not exposed HUs x mean (%.4g)", col, v, want))
	}
	return nil
}
