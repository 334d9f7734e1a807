package severeweather

import (
	"fmt"
	"io/fs"
	"math"
	"strconv"

	"github.com/locrisk/locrisk/internal/risk/data"
)

const (
	srcHail = "noaa-spc-hail-county"
	srcWind = "noaa-spc-wind-county"

	reportFirstYr = 1955
	reportLastYr  = 2015

	// minAreaKm2 floors the area a density is computed over. Reports are
	// assigned to the county they were filed in, and a small independent
	// city or borough (Virginia's cities, New York's boroughs, Puerto
	// Rico's municipios: 130 areas under 250 km²) with a few dozen reports
	// would otherwise outrank the whole of hail alley.
	minAreaKm2 = 250.0
)

// renamedFIPS maps county codes the SPC reports still use to the code of the
// same area today, so old reports are not lost: Dade became Miami-Dade
// (12025 -> 12086, 1997), Shannon became Oglala Lakota (46113 -> 46102,
// 2015), Wade Hampton became Kusilvak (02270 -> 02158, 2015), and three
// Virginia independent cities were absorbed by their counties: Bedford
// (51515 -> 51019, 2013), Clifton Forge (51560 -> 51005, 2001) and South
// Boston (51780 -> 51083, 1995). Other unmatched codes (old Alaska units,
// state 98/99, typos) cannot be placed and are ignored.
var renamedFIPS = map[string]string{
	"12025": "12086",
	"46113": "46102",
	"02270": "02158",
	"51515": "51019",
	"51560": "51005",
	"51780": "51083",
}

// loadCountyCounts reads an SPC per-county report tally into counts by
// today's 5-digit county FIPS.
func loadCountyCounts(fsys fs.FS, id string) (map[string]int, int, error) {
	rel := data.Path(id)
	t, err := data.OpenTable(fsys, rel, "state_fips", "county_fips", "n_storms")
	if err != nil {
		return nil, 0, err
	}
	defer t.Close()
	counts := make(map[string]int, 3200)
	seen := make(map[string]bool, 3200)
	for t.Scan() {
		st, co := t.String("state_fips"), t.String("county_fips")
		if len(st) != 2 || len(co) != 3 || !digits(st) || !digits(co) {
			return nil, 0, t.Errorf("county %q/%q is not a 2+3 digit FIPS code", st, co)
		}
		fips := st + co
		if seen[fips] {
			return nil, 0, t.Errorf("county %s listed twice", fips)
		}
		seen[fips] = true
		n, err := strconv.Atoi(t.String("n_storms"))
		if err != nil || n < 0 {
			return nil, 0, t.Errorf("column \"n_storms\": %q is not a report count", t.String("n_storms"))
		}
		if to, ok := renamedFIPS[fips]; ok {
			fips = to
		}
		counts[fips] += n
	}
	if err := t.Err(); err != nil {
		return nil, 0, err
	}
	return counts, t.Rows(), nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// countyReports are a county's SPC report totals for 1955-2015 and their
// density over its land area (at least minAreaKm2).
type countyReports struct {
	hail, wind         int
	hailDens, windDens float64 // reports per 1,000 km² of land
}

func buildCounty(hail, wind map[string]int, areaKm2 map[string]float64) map[string]countyReports {
	out := make(map[string]countyReports, len(areaKm2))
	for fips, a := range areaKm2 {
		if a <= 0 {
			continue // water-only or unknown area: no density
		}
		h, w := hail[fips], wind[fips] // a county absent from a tally had no reports
		per := 1000 / math.Max(a, minAreaKm2)
		out[fips] = countyReports{hail: h, wind: w, hailDens: float64(h) * per, windDens: float64(w) * per}
	}
	return out
}

func (c countyReports) note() string {
	return fmt.Sprintf("The county logged %s and %s in %d-%d (%s and %s per 1,000 km² of land).",
		plural(c.hail, "hail report", "hail reports"), plural(c.wind, "damaging-wind report", "damaging-wind reports"),
		reportFirstYr, reportLastYr, strconv.FormatFloat(c.hailDens, 'f', 1, 64), strconv.FormatFloat(c.windDens, 'f', 1, 64))
}
