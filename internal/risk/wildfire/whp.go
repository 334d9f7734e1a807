package wildfire

import (
	"fmt"
	"io/fs"
	"math"
	"strconv"

	"github.com/locrisk/locrisk/internal/risk/data"
)

// WHP 2020 columns: pixel counts per class; "NA" lumps non-burnable land
// and water, which the source does not tell apart.
var whp2020Classes = [5]string{"px_whp_cls1", "px_whp_cls2", "px_whp_cls3", "px_whp_cls4", "px_whp_cls5"}

const (
	whp2020NA    = "px_NA_nonburnable_or_water"
	whp2020Total = "px_total"
	whp2020HiVhi = "frac_hi_vhi"
)

// loadWHP2020 reads the share of each county's 270 m cells in WHP classes 4
// (high) and 5 (very high), in percent of all its cells, from the pixel
// counts; the file's rounded frac_hi_vhi must agree.
func loadWHP2020(fsys fs.FS) (map[int]float64, int, error) {
	cols := append([]string{whp2020NA, whp2020Total, whp2020HiVhi}, whp2020Classes[:]...)
	return readCountyShares(fsys, SourceWHP2020, cols, func(t *data.Table) (float64, error) {
		var px [5]float64
		sum := 0.0
		for k, col := range append(whp2020Classes[:], whp2020NA) {
			v, err := count(t, col)
			if err != nil {
				return 0, err
			}
			if k < 5 {
				px[k] = v
			}
			sum += v
		}
		total, err := count(t, whp2020Total)
		if err != nil {
			return 0, err
		}
		if total <= 0 || sum != total {
			return 0, fmt.Errorf("wildfire: %w", t.Errorf("class counts sum to %g, not %s %g", sum, whp2020Total, total))
		}
		share := (px[3] + px[4]) / total
		frac, err := t.Float(whp2020HiVhi)
		if err != nil {
			return 0, fmt.Errorf("wildfire: %w", err)
		}
		if math.Abs(frac-share) > 1e-4 {
			return 0, fmt.Errorf("wildfire: %w", t.Errorf("column %q: %g is not (classes 4 + 5) / total = %.5f", whp2020HiVhi, frac, share))
		}
		return 100 * share, nil
	})
}

// readCountyShares reads one value per county (keyed by GEOID) from a
// county table with the columns cols, computed by value from each row; a
// county listed twice, or a table without rows, is an error.
func readCountyShares(fsys fs.FS, source string, cols []string, value func(t *data.Table) (float64, error)) (map[int]float64, int, error) {
	t, err := data.OpenTable(fsys, data.Path(source), append([]string{"GEOID"}, cols...)...)
	if err != nil {
		return nil, 0, fmt.Errorf("wildfire: %w", err)
	}
	defer t.Close()
	out := make(map[int]float64, 3200)
	for t.Scan() {
		n, err := countyKey(t, "GEOID")
		if err != nil {
			return nil, 0, err
		}
		if _, dup := out[n]; dup {
			return nil, 0, fmt.Errorf("wildfire: %w", t.Errorf("county %s appears twice", t.String("GEOID")))
		}
		if out[n], err = value(t); err != nil {
			return nil, 0, err
		}
	}
	if err := t.Err(); err != nil {
		return nil, 0, fmt.Errorf("wildfire: %w", err)
	}
	if len(out) == 0 {
		return nil, 0, fmt.Errorf("wildfire: %s has no county rows", data.Path(source))
	}
	return out, t.Rows(), nil
}

// count reads a non-negative whole number of cells.
func count(t *data.Table, col string) (float64, error) {
	v, err := t.Float(col)
	if err != nil {
		return 0, fmt.Errorf("wildfire: %w", err)
	}
	if v < 0 || v != math.Trunc(v) || v > 1e9 {
		return 0, fmt.Errorf("wildfire: %w", t.Errorf("column %q: %g is not a cell count", col, v))
	}
	return v, nil
}

// loadWHP2014 reads the share of each county's land in WHP 2014 classes 4
// and 5, in percent.
func loadWHP2014(fsys fs.FS) (map[int]float64, int, error) {
	var cls [7]string
	for k := range cls {
		cls[k] = "risk_" + strconv.Itoa(k+1)
	}
	return readCountyShares(fsys, SourceWHP2014, cls[:], func(t *data.Table) (float64, error) {
		var f [7]float64
		sum := 0.0
		for k, col := range cls {
			v, err := t.Float(col)
			if err != nil {
				return 0, fmt.Errorf("wildfire: %w", err)
			}
			if v < 0 || v > 1 {
				return 0, fmt.Errorf("wildfire: %w", t.Errorf("column %q: %g is not a fraction", col, v))
			}
			f[k] = v
			sum += v
		}
		// The seven class shares partition the county; a sum far from 1
		// means shifted or truncated columns.
		if math.Abs(sum-1) > 0.01 {
			return 0, fmt.Errorf("wildfire: %w", t.Errorf("class fractions risk_1..risk_7 sum to %.4f, not 1", sum))
		}
		// Share of the county's land, not its whole area: class 7 is water,
		// which would otherwise dilute coastal and lake counties.
		if land := 1 - f[6]; land > 1e-9 {
			return math.Min(100, 100*(f[3]+f[4])/land), nil
		}
		return 0, nil
	})
}
