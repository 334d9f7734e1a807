package severeweather

import (
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strconv"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
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

// County is what the hail and wind rates need to know of a county: its land
// area, its residents (who file the reports) and a point inside it (for
// the regional window).
type County struct {
	LandKm2   float64
	Residents float64
	Point     geo.Point
}

// The reporting correction (docs/methodology.md, "Hail and damaging wind").
// SPC report counts follow the people who file them: across the
// conterminous states a county logs more reports than its neighbours in
// proportion to about the third power root of its population density
// (fitted on both tallies: the Poisson deviance of each county's count
// against its 150 km neighbourhood is lowest near exponent 0.34-0.38 for
// hail and 0.34 for wind, TestRealDataReportingBias). A county's reports
// are therefore read against the reports it would log at the reference
// density, and shrunk toward the rate of its region.
const (
	// reportingExponent is beta in detection = ((d + d0) / (dRef + d0))^beta.
	reportingExponent = 0.35
	// reportingFloor is d0 (residents per km²): below a few residents per
	// km² the reports no longer fall with density (storm chasers and
	// spotter networks cover the empty plains).
	reportingFloor = 2.0
	// refDensity is dRef, the average population density of the
	// conterminous states in 2020 (331 million residents on 7.7 million
	// km² of land): a rate is stated as a county of that density would
	// log it.
	refDensity = 43.0
	// regionKm is the radius of the regional window: the counties whose
	// interior points lie within it pool their reports and their
	// density-corrected areas into the regional rate.
	regionKm = 150.0
	// regionPrior is the weight of the regional rate in pseudo-reports: a
	// county's own reports outweigh its region once they exceed 50. The
	// tallies scatter about ten times more than a Poisson count would
	// between neighbours, so 50 reports pin a county's rate to about
	// +-45%.
	regionPrior = 50.0
)

// countyReports are a county's SPC report totals for 1955-2015, their raw
// density over its land area (at least minAreaKm2), and the
// density-corrected rates per 1,000 km² a year the perils are scored on.
type countyReports struct {
	hail, wind         int
	hailRaw, windRaw   float64 // reports per 1,000 km² of land, 1955-2015
	hailRate, windRate float64 // reports per 1,000 km² a year at refDensity, shrunk toward the region
}

// detection is how many reports a county of density d (residents per km²)
// logs relative to one of refDensity for the same storms.
func detection(d float64) float64 {
	return math.Pow((math.Max(d, 0)+reportingFloor)/(refDensity+reportingFloor), reportingExponent)
}

// buildCounty computes every county's rates. A county's exposure E is its
// land area (at least minAreaKm2) times its detection; its region's rate
// lambda is the reports over the exposure of every county within regionKm
// (itself included); its rate is the posterior mean (O + a) / (E + a /
// lambda), with O its own reports and a = regionPrior, per 1,000 km² and
// per year.
func buildCounty(hail, wind map[string]int, counties map[string]County) map[string]countyReports {
	type entry struct {
		fips       string
		pt         geo.Point
		exposure   float64
		hail, wind int
	}
	var es []entry
	for fips, c := range counties {
		if c.LandKm2 <= 0 {
			continue // water-only or unknown area: no density
		}
		es = append(es, entry{fips: fips, pt: c.Point, exposure: math.Max(c.LandKm2, minAreaKm2) * detection(c.Residents/c.LandKm2),
			hail: hail[fips], wind: wind[fips]}) // a county absent from a tally had no reports
	}
	// Sorted by latitude, a county's region is a band of the slice.
	sort.Slice(es, func(i, j int) bool {
		return es[i].pt.Lat < es[j].pt.Lat || (es[i].pt.Lat == es[j].pt.Lat && es[i].fips < es[j].fips)
	})
	lats := make([]float64, len(es))
	for i, e := range es {
		lats[i] = e.pt.Lat
	}
	band := regionKm / 111.0 // degrees of latitude, a little wide
	years := float64(reportLastYr - reportFirstYr + 1)
	out := make(map[string]countyReports, len(es))
	for _, e := range es {
		var rh, rw, re float64
		lo := sort.SearchFloat64s(lats, e.pt.Lat-band)
		for j := lo; j < len(es) && es[j].pt.Lat <= e.pt.Lat+band; j++ {
			if geo.DistanceKm(e.pt, es[j].pt) <= regionKm {
				rh += float64(es[j].hail)
				rw += float64(es[j].wind)
				re += es[j].exposure
			}
		}
		per := 1000 / math.Max(counties[e.fips].LandKm2, minAreaKm2)
		out[e.fips] = countyReports{hail: e.hail, wind: e.wind,
			hailRaw: float64(e.hail) * per, windRaw: float64(e.wind) * per,
			hailRate: shrunkRate(e.hail, e.exposure, rh, re) * 1000 / years,
			windRate: shrunkRate(e.wind, e.exposure, rw, re) * 1000 / years}
	}
	return out
}

// shrunkRate is a county's reports per km² of reference-density exposure:
// its own count o over its exposure e, shrunk toward its region's rate
// (regionN reports over regionE) with regionPrior pseudo-reports. A region
// without reports gives 0.
func shrunkRate(o int, e, regionN, regionE float64) float64 {
	if regionN <= 0 || regionE <= 0 {
		return 0
	}
	lambda := regionN / regionE
	return (float64(o) + regionPrior) / (e + regionPrior/lambda)
}

func (c countyReports) note() string {
	return fmt.Sprintf("The county logged %s and %s in %d-%d (%s and %s per 1,000 km² of land); read as a county of average population density (%s residents per km²) would log them and pooled with the counties within %s km, that is %s hail and %s damaging-wind reports per 1,000 km² a year.",
		plural(c.hail, "hail report", "hail reports"), plural(c.wind, "damaging-wind report", "damaging-wind reports"),
		reportFirstYr, reportLastYr, strconv.FormatFloat(c.hailRaw, 'f', 1, 64), strconv.FormatFloat(c.windRaw, 'f', 1, 64),
		strconv.FormatFloat(refDensity, 'f', -1, 64), strconv.FormatFloat(regionKm, 'f', -1, 64),
		strconv.FormatFloat(c.hailRate, 'f', 2, 64), strconv.FormatFloat(c.windRate, 'f', 2, 64))
}
