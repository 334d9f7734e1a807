// Package wildfire is the wildfire hazard module. It scores a site from
// measures taken where the county's homes are, and reports land-based
// measures as context:
//
//   - USDA Forest Service Wildfire Risk to Communities v1 (2020) county
//     summary: the mean annual burn probability of the county's housing
//     units exposed to wildfire, the expected share of all its housing units
//     reached by wildfire each year, and the expected annual relative risk
//     per housing unit. These three are the scored indicators.
//   - USFS Wildfire Hazard Potential 2020 and 2014 (classified, 270 m), as
//     the share of each county's area (2020) or land (2014) in the high and
//     very high classes: context, not scored, because wild land far from
//     the homes (the Everglades in Miami-Dade) would otherwise leak into the
//     score of every site in the county.
//   - FEMA National Risk Index Future Risk (2024): the county's wildfire risk
//     score projected for mid and late century under lower and higher
//     warming, reported as context only.
//
// Limits: every value is a county aggregate, so a site on a fire-prone
// ridge and one downtown in the same county get the same numbers. The fuels
// behind WRC v1 date from 2014 (LANDFIRE), before the large fires of
// 2017-2021. WRC v1 covers the 50 states but not DC, where the module has
// context only and the engine falls back to the NRI; WHP covers only the
// conterminous states and DC; nothing covers the territories.
// Connecticut's 2022 planning regions and Alaska's 2019 Chugach/Copper River
// split are mapped to the older county that the tables use.
package wildfire

import (
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strconv"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// Catalog ids of the four tables.
const (
	SourceWRC     = "usfs-wrc-v1"
	SourceWHP2020 = "usfs-whp-2020"
	SourceWHP2014 = "usfs-whp-2014"
	SourceFuture  = "fema-nri-future-2024"
)

// Indicator ids.
const (
	// Scored, measured where the homes are (WRC, housing-unit weighted).
	IDBurnProbability    = "burn_probability"
	IDHomesExposedShare  = "annual_share_of_homes_exposed"
	IDRelativeRiskToHome = "annual_relative_risk_per_home"
	// Context: where the site stands in its county.
	IDExposureClass = "wildfire_exposure_class"
	IDLocalDensity  = "local_population_density"
	// Context: land-area shares and projections.
	IDWHP2020HighShare = "whp2020_high_very_high_share"
	IDWHP2014HighShare = "whp2014_high_very_high_share"
	IDFutureMidLower   = "nri_wildfire_mid_century_lower"
	IDFutureMidHigher  = "nri_wildfire_mid_century_higher"
	IDFutureLateLower  = "nri_wildfire_late_century_lower"
	IDFutureLateHigher = "nri_wildfire_late_century_higher"
)

// Quality of the module's data at a site, a multiplier on the confidence the
// engine gives county averages.
const (
	qualityWRC       = 1.0  // WRC present
	qualityCrosswalk = 0.15 // subtracted where an older county stands in
)

// Resolutions: WRC values are means over the county's housing units; WHP
// shares are shares of the county's 270 m cells.
var (
	resAllocated = hazard.Resolution{Kind: hazard.ResCountyAllocated, Detail: "county's homes by exposure class, allocated by shelter from wildland (density within 2 and 5 km, relief within 5 km)"}
	resDensity   = hazard.Resolution{Kind: hazard.ResSite, Detail: "2020 block-group centres of population within 2 km"}
	resHousing   = hazard.Resolution{Kind: hazard.ResCounty, Detail: "county, housing-unit weighted"}
	resWHP2020   = hazard.Resolution{Kind: hazard.ResCounty, Detail: "county area share (270 m cells, water included)"}
	resWHP2014   = hazard.Resolution{Kind: hazard.ResCounty, Detail: "county land area share"}
	resFuture    = hazard.Resolution{Kind: hazard.ResCounty, Detail: "county"}
)

// Weights of the scored indicators' shares in the peril's hazard value
// (docs/methodology.md, wildfire module). All three are WRC measures taken
// at the county's homes:
//   - the expected share of homes reached by fire each year counts every
//     home, those WRC finds out of reach of wildland fire at zero: it is the
//     county's best single estimate of how likely fire is to reach a home
//     there, so it carries the most;
//   - the relative risk per home adds how destructive fire would be where it
//     reaches homes (intensity and susceptibility), over all homes;
//   - the burn probability of the exposed homes keeps the likelihood that a
//     home at the wildland edge faces where few of the county's homes are
//     exposed; it ignores how many are, the county-to-site leak the module
//     is built to avoid, so it carries the least.
//
// Where one is missing, the engine's weighted mean runs over those present.
const (
	weightHomesExposedShare  = 0.40
	weightRelativeRiskToHome = 0.35
	weightBurnProbability    = 0.25
)

// Weights where the site is allocated to an exposure class
// (docs/methodology.md, "Wildfire at the address"): the class's burn
// probability (how likely fire reaches such a home) and its relative risk
// per home (likelihood times how destructive fire is there) say the same
// thing about one home from two sides, so they weigh alike. The county-wide
// share of homes reached is then context: the class values already
// reproduce it over the county's residents.
const (
	weightClassBurnProbability = 0.5
	weightClassRiskPerHome     = 0.5
)

// rankWindow is how roughly a site's density rank places it among its
// county's residents (docs/methodology.md, "Wildfire at the address"):
// local density is a proxy for the exposure class, not a map of burnable
// land, so a site's values weigh the classes of the residents within a
// tenth of the county's residents either way of its own rank, not only its
// own rank's class. The window is reflected at the ends of the ranking,
// which keeps every county's totals exactly: a uniform rank plus a
// symmetric, reflected error is still uniform.
const rankWindow = 0.1

// Exposure classes of WRC v1: a home in burnable cover is directly
// exposed, one within reach of embers from it indirectly exposed, the rest
// not exposed (their burn probability and risk are zero in WRC).
const (
	classNot = iota
	classIndirect
	classDirect
)

var classWords = [3]string{"not exposed", "indirectly exposed", "directly exposed"}

// Allocator places a site among its county's residents by its shelter
// from wildland (Exposure; docs/methodology.md, "Wildfire at the address").
type Allocator interface {
	// Place is the share of county fips's residents more sheltered from
	// wildland than a site at p, and the residents per km² within 2 km of
	// p; ok is false without a ranking for the county.
	Place(fips string, p geo.Point) (moreSheltered, density float64, ok bool)
}

// futureCols are the NRI Future Risk projected wildfire risk index scores,
// in the order of the future* arrays below.
var futureCols = [4]string{
	"WFIR_MID_LOWER_PRISKS",
	"WFIR_MID_HIGHER_PRISKS",
	"WFIR_LATE_LOWER_PRISKS",
	"WFIR_LATE_HIGHER_PRISKS",
}

var futureIDs = [4]string{IDFutureMidLower, IDFutureMidHigher, IDFutureLateLower, IDFutureLateHigher}

var futureLabels = [4]string{
	"FEMA NRI Future Risk projection (2024): wildfire risk score, mid-century, lower warming",
	"FEMA NRI Future Risk projection (2024): wildfire risk score, mid-century, higher warming",
	"FEMA NRI Future Risk projection (2024): wildfire risk score, late century, lower warming",
	"FEMA NRI Future Risk projection (2024): wildfire risk score, late century, higher warming",
}

// legacy maps counties of the 2023 boundaries that the wildfire tables do
// not know to the older county they used. Connecticut's planning regions do
// not nest in the old counties; each goes to the county that covers most of
// its area. Oglala Lakota is Shannon County renamed (same land).
var legacy = []struct {
	fips, old, oldName string
	note               bool
}{
	{"02063", "02261", "Valdez-Cordova Census Area", true},
	{"02066", "02261", "Valdez-Cordova Census Area", true},
	{"09110", "09003", "Hartford County", true},
	{"09120", "09001", "Fairfield County", true},
	{"09130", "09007", "Middlesex County", true},
	{"09140", "09009", "New Haven County", true},
	{"09150", "09015", "Windham County", true},
	{"09160", "09005", "Litchfield County", true},
	{"09170", "09009", "New Haven County", true},
	{"09180", "09011", "New London County", true},
	{"09190", "09001", "Fairfield County", true},
	{"46102", "46113", "Shannon County", false},
}

// Presence bits of a county record.
const (
	hasBP uint16 = 1 << iota
	hasExposed
	hasRisk
	hasWHP2020
	hasWHP2014
	hasFuture0 // + i for projection i

	wrcMask    = hasBP | hasExposed | hasRisk
	futureMask = hasFuture0 * 0xF
)

type county struct {
	wrc              wrcRow
	whp2020, whp2014 float64
	future           [4]float64
	has              uint16
	quality          float64
	notes            []string // precomputed so Measure does not format text
}

func (c *county) hasFuture(i int) bool { return c.has&(hasFuture0<<i) != 0 }

// Module is the loaded wildfire module. It is read-only after Load and safe
// for concurrent use.
type Module struct {
	index  []uint16 // numeric county FIPS -> record + 1; 0 = no data
	rows   []county
	counts map[string]int
	noData []string
	alloc  Allocator // nil: every site gets its county's means
}

// Load reads the four wildfire tables from the data pack fsys. alloc,
// when not nil, allocates each site to one of its county's exposure
// classes; without it every site gets the county's means.
func Load(fsys fs.FS, alloc Allocator) (*Module, error) {
	wrc, nWRC, err := loadWRC(fsys)
	if err != nil {
		return nil, err
	}
	whp20, nWHP20, err := loadWHP2020(fsys)
	if err != nil {
		return nil, err
	}
	whp14, nWHP14, err := loadWHP2014(fsys)
	if err != nil {
		return nil, err
	}
	fut, nFut, err := loadFuture(fsys)
	if err != nil {
		return nil, err
	}

	recs := make(map[int]*county, len(wrc)+64)
	get := func(n int) *county {
		c := recs[n]
		if c == nil {
			c = &county{}
			recs[n] = c
		}
		return c
	}
	for n, v := range wrc {
		c := get(n)
		c.wrc, c.has = v, c.has|v.has
	}
	for n, v := range whp20 {
		c := get(n)
		c.whp2020, c.has = v, c.has|hasWHP2020
	}
	for n, v := range whp14 {
		c := get(n)
		c.whp2014, c.has = v, c.has|hasWHP2014
	}
	for n, v := range fut {
		c := get(n)
		c.future, c.has = v.score, c.has|v.has
	}

	crosswalked := map[int]string{}
	for _, l := range legacy {
		n, old := data.FIPSNumber(l.fips), data.FIPSNumber(l.old)
		src := recs[old]
		if src == nil {
			continue
		}
		c := get(n)
		before := c.has
		if c.has&wrcMask == 0 && src.has&wrcMask != 0 {
			c.wrc, c.has = src.wrc, c.has|src.has&wrcMask
		}
		if c.has&hasWHP2020 == 0 && src.has&hasWHP2020 != 0 {
			c.whp2020, c.has = src.whp2020, c.has|hasWHP2020
		}
		if c.has&hasWHP2014 == 0 && src.has&hasWHP2014 != 0 {
			c.whp2014, c.has = src.whp2014, c.has|hasWHP2014
		}
		if c.has&futureMask == 0 && src.has&futureMask != 0 {
			c.future, c.has = src.future, c.has|src.has&futureMask
		}
		if c.has != before && l.note {
			crosswalked[n] = l.oldName
		}
	}

	m := &Module{
		index:  make([]uint16, 100000),
		counts: map[string]int{SourceWRC: nWRC, SourceWHP2020: nWHP20, SourceWHP2014: nWHP14, SourceFuture: nFut},
		alloc:  alloc,
		noData: []string{"No USFS wildfire data covers this county: Wildfire Risk to Communities (2020) covers the 50 states but not the District of Columbia, Wildfire Hazard Potential (2014, 2020) only the conterminous states and DC, and neither the territories."},
	}
	// Records go into the slice in FIPS order so that the layout does not
	// depend on map order.
	keys := make([]int, 0, len(recs))
	for n, c := range recs {
		if c.has != 0 {
			keys = append(keys, n)
		}
	}
	sort.Ints(keys)
	m.rows = make([]county, 0, len(keys))
	for _, n := range keys {
		c := recs[n]
		c.quality = qualityFor(c, crosswalked[n] != "")
		c.notes = notesFor(c, crosswalked[n])
		m.rows = append(m.rows, *c)
		m.index[n] = uint16(len(m.rows))
	}
	return m, nil
}

// qualityFor is 1 where WRC describes the county's homes, less where an
// older county stands in, and 0 where only context is available (the
// module then scores nothing).
func qualityFor(c *county, crosswalked bool) float64 {
	if c.has&wrcMask == 0 {
		return 0
	}
	q := qualityWRC
	if crosswalked {
		q -= qualityCrosswalk
	}
	return q
}

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

type futureRow struct {
	score [4]float64
	has   uint16
}

func loadFuture(fsys fs.FS) (map[int]futureRow, int, error) {
	t, err := data.OpenTable(fsys, data.Path(SourceFuture), append([]string{"STCOFIPS"}, futureCols[:]...)...)
	if err != nil {
		return nil, 0, fmt.Errorf("wildfire: %w", err)
	}
	defer t.Close()
	out := make(map[int]futureRow, 3300)
	for t.Scan() {
		n, err := countyKey(t, "STCOFIPS")
		if err != nil {
			return nil, 0, err
		}
		if _, dup := out[n]; dup {
			return nil, 0, fmt.Errorf("wildfire: %w", t.Errorf("county %s appears twice", t.String("STCOFIPS")))
		}
		var r futureRow
		for i, col := range futureCols {
			v, ok, err := rangedFloat(t, col, 0, 100)
			if err != nil {
				return nil, 0, err
			}
			if ok {
				r.score[i] = v
				r.has |= hasFuture0 << i
			}
		}
		if r.has != 0 {
			out[n] = r
		}
	}
	if err := t.Err(); err != nil {
		return nil, 0, fmt.Errorf("wildfire: %w", err)
	}
	if t.Rows() == 0 {
		return nil, 0, fmt.Errorf("wildfire: %s has no county rows", data.Path(SourceFuture))
	}
	return out, t.Rows(), nil
}

func countyKey(t *data.Table, col string) (int, error) {
	raw := t.String(col)
	n := data.FIPSNumber(data.FIPS5(raw))
	if n < 0 {
		return 0, fmt.Errorf("wildfire: %w", t.Errorf("column %q: %q is not a county FIPS code", col, raw))
	}
	return n, nil
}

// rangedFloat reads an optional number and checks it lies in [lo, hi].
func rangedFloat(t *data.Table, col string, lo, hi float64) (float64, bool, error) {
	v, ok, err := t.OptFloat(col)
	if err != nil {
		return 0, false, fmt.Errorf("wildfire: %w", err)
	}
	if ok && (v < lo || v > hi || math.IsNaN(v)) {
		return 0, false, fmt.Errorf("wildfire: %w", t.Errorf("column %q: %g is outside %g-%g", col, v, lo, hi))
	}
	return v, ok, nil
}

// Name is hazard.Wildfire.
func (m *Module) Name() string { return hazard.Wildfire }

// Sources lists the catalog ids the module read.
func (m *Module) Sources() []string {
	return []string{SourceWRC, SourceWHP2020, SourceWHP2014, SourceFuture}
}

// Rows reports the data rows read from each source.
func (m *Module) Rows() map[string]int {
	out := make(map[string]int, len(m.counts))
	for k, v := range m.counts {
		out[k] = v
	}
	return out
}

func (m *Module) lookup(fips string) *county {
	n := data.FIPSNumber(fips)
	if n < 0 || m.index[n] == 0 {
		return nil
	}
	return &m.rows[m.index[n]-1]
}

// Measure returns the county's wildfire indicators. Context indicators'
// Percentile points into the module's read-only tables; callers must not
// write through it. Notes are shared too and have no spare capacity, so an
// append copies them.
func (m *Module) Measure(site hazard.Site) hazard.Measurement {
	out := hazard.Measurement{}
	c := m.lookup(site.CountyFIPS)
	if c == nil {
		out.Notes = m.noData
		return out
	}
	ins := make([]hazard.Indicator, 0, 11)
	notes := c.notes
	if class, weights, density, ok := m.allocate(site, c); ok {
		ins = appendClassIndicators(ins, c, class, weights, density)
		// Written per site rather than kept for every county and class:
		// six sentences for each of 3,141 counties held 11 MB.
		notes = classNotesFor(c, class, weights[class] < 1)
	} else {
		ins = appendCountyIndicators(ins, c)
	}
	if c.has&hasWHP2020 != 0 {
		ins = append(ins, hazard.Indicator{
			ID:         IDWHP2020HighShare,
			Label:      "Share of the county's area rated high or very high Wildfire Hazard Potential (USFS, 2020)",
			Value:      c.whp2020,
			Unit:       "percent",
			Source:     SourceWHP2020,
			Peril:      hazard.PerilWildfire,
			Resolution: resWHP2020,
			Ranked:     true,
		})
	}
	if c.has&hasWHP2014 != 0 {
		ins = append(ins, hazard.Indicator{
			ID:         IDWHP2014HighShare,
			Label:      "Share of the county's land rated high or very high Wildfire Hazard Potential (USFS, 2014)",
			Value:      c.whp2014,
			Unit:       "percent",
			Source:     SourceWHP2014,
			Peril:      hazard.PerilWildfire,
			Resolution: resWHP2014,
			Ranked:     true,
		})
	}
	for i := range futureCols {
		if !c.hasFuture(i) {
			continue
		}
		ins = append(ins, hazard.Indicator{
			ID:         futureIDs[i],
			Label:      futureLabels[i],
			Value:      c.future[i],
			Unit:       "score",
			Source:     SourceFuture,
			Peril:      hazard.PerilWildfire,
			Resolution: resFuture,
			Percentile: &c.future[i],
		})
	}
	out.Indicators = ins
	out.Quality = c.quality
	out.Notes = notes
	return out
}

// allocate places the site in one of its county's exposure classes by its
// local population density (docs/methodology.md, "Wildfire at the
// address"): the county's densest residents take the share of its homes
// WRC counts as not exposed, the next the indirectly exposed share, the
// least dense the directly exposed share. ok is false where the county has
// no class split or no density profile; the site then gets county means.
func (m *Module) allocate(site hazard.Site, c *county) (class int, weights [3]float64, density float64, ok bool) {
	if m.alloc == nil || c.wrc.has&hasClasses == 0 {
		return 0, weights, 0, false
	}
	u, density, ok := m.alloc.Place(site.CountyFIPS, geo.Point{Lat: site.Lat, Lon: site.Lon})
	if !ok {
		return 0, weights, 0, false
	}
	return ClassAt(c.wrc.classFrac, u), ClassWeights(c.wrc.classFrac, u, rankWindow), density, true
}

// ClassWeights is how much each exposure class (not, indirectly, directly
// exposed) weighs in the values of a site whose denser share is u, for
// class shares frac summing to 1: the share of the window [u-h, u+h],
// reflected at 0 and 1, that falls in each class's span of the ranking
// (densest first). The weights sum to 1.
func ClassWeights(frac [3]float64, u, h float64) [3]float64 {
	var w [3]float64
	if h <= 0 {
		w[ClassAt(frac, u)] = 1
		return w
	}
	// Class k spans [lo[k], hi[k]) of the ranking.
	lo := [3]float64{0, frac[classNot], frac[classNot] + frac[classIndirect]}
	hi := [3]float64{frac[classNot], frac[classNot] + frac[classIndirect], 1}
	// The window's pieces after reflection: [a, b] inside [0, 1], plus
	// the parts beyond either end folded back.
	a, b := u-h, u+h
	pieces := [][2]float64{{max(a, 0), min(b, 1)}}
	if a < 0 {
		pieces = append(pieces, [2]float64{0, -a})
	}
	if b > 1 {
		pieces = append(pieces, [2]float64{2 - b, 1})
	}
	for k := range w {
		for _, p := range pieces {
			if o := min(p[1], hi[k]) - max(p[0], lo[k]); o > 0 {
				w[k] += o
			}
		}
		w[k] /= 2 * h
	}
	return w
}

// ClassAt is the exposure class of a resident with the share denser of the
// county's residents living more densely, given the county's class shares
// (not exposed, indirectly, directly exposed; summing to 1).
func ClassAt(frac [3]float64, denser float64) int {
	switch {
	case denser < frac[classNot]:
		return classNot
	case denser < frac[classNot]+frac[classIndirect]:
		return classIndirect
	}
	return classDirect
}

// appendClassIndicators appends the scored measures of a site allocated
// to class, with where it stands as context.
func appendClassIndicators(ins []hazard.Indicator, c *county, class int, weights [3]float64, density float64) []hazard.Indicator {
	r := &c.wrc
	var bp, rps float64
	for k, w := range weights {
		bp += w * r.classBP[k]
		rps += w * r.classRPS[k]
	}
	ins = append(ins,
		wrcIndicator(IDBurnProbability, "Annual burn probability of a home at the site: the means of the county's exposure classes, weighted by where its shelter from wildland ranks it (USFS Wildfire Risk to Communities, 2020)",
			bp, "probability", resAllocated, weightClassBurnProbability, true),
		wrcIndicator(IDRelativeRiskToHome, "Expected annual relative wildfire risk per home at the site: the county's exposure classes' means, weighted by where its shelter from wildland ranks it (USFS Wildfire Risk to Communities, 2020)",
			rps, "index", resAllocated, weightClassRiskPerHome, false),
		hazard.Indicator{
			ID:         IDExposureClass,
			Label:      "Wildfire exposure class the site is allocated to among the county's homes (0 not exposed, 1 indirectly, 2 directly exposed)",
			Value:      float64(class),
			Unit:       "class",
			Source:     SourceWRC,
			Peril:      hazard.PerilWildfire,
			Resolution: resAllocated,
			Text:       classWords[class],
		},
		hazard.Indicator{
			ID:         IDLocalDensity,
			Label:      "Residents per square kilometre within 2 km (2020 Census block-group centres of population)",
			Value:      math.Round(density),
			Unit:       "residents per km2",
			Source:     populationSource,
			Peril:      hazard.PerilWildfire,
			Resolution: resDensity,
		})
	if c.has&hasExposed != 0 {
		ins = append(ins, wrcIndicator(IDHomesExposedShare, homesShareLabel, r.homesShare, "probability", resHousing, 0, false))
	}
	return ins
}

// appendCountyIndicators appends the county means every site of a county
// without a class split or density profile gets.
func appendCountyIndicators(ins []hazard.Indicator, c *county) []hazard.Indicator {
	r := &c.wrc
	if c.has&hasBP != 0 {
		ins = append(ins, wrcIndicator(IDBurnProbability, "Annual burn probability, mean over the county's homes exposed to wildfire (USFS Wildfire Risk to Communities, 2020)",
			r.bp, "probability", resHousing, weightBurnProbability, true))
	}
	if c.has&hasExposed != 0 {
		ins = append(ins, wrcIndicator(IDHomesExposedShare, homesShareLabel, r.homesShare, "probability", resHousing, weightHomesExposedShare, false))
	}
	if c.has&hasRisk != 0 {
		ins = append(ins, wrcIndicator(IDRelativeRiskToHome, "Expected annual relative wildfire risk per home, all the county's homes (USFS Wildfire Risk to Communities, 2020)",
			r.riskPerHome, "index", resHousing, weightRelativeRiskToHome, false))
	}
	return ins
}

const homesShareLabel = "Expected share of all the county's homes reached by wildfire each year (USFS Wildfire Risk to Communities, 2020)"

// wrcIndicator is a ranked wildfire indicator read from WRC; weight 0
// makes it context, annual marks the peril's annual chance.
func wrcIndicator(id, label string, v float64, unit string, res hazard.Resolution, weight float64, annual bool) hazard.Indicator {
	in := hazard.Indicator{
		ID:           id,
		Label:        label,
		Value:        v,
		Unit:         unit,
		Source:       SourceWRC,
		Peril:        hazard.PerilWildfire,
		Resolution:   res,
		Ranked:       true,
		Weight:       weight,
		AnnualChance: annual,
	}
	switch {
	case id == IDRelativeRiskToHome:
		// The relative risk multiplies the burn probability by the
		// damage fire would do; narratives cite the probability, which
		// an underwriter can read (hazard.Indicator.Basis).
		in.Basis = IDBurnProbability
	case annual && v == 0:
		// A modelled zero, not a missing record.
		in.Text = "zero: WRC models no wildfire reaching these homes"
	}
	return in
}

// classNotesFor writes the narrative of a site allocated to class: what
// the class is and its chance, then the county's own notes.
func classNotesFor(c *county, class int, mixed bool) []string {
	r := c.wrc
	s := "By its shelter from wildland (local population density, and relief nearby), the site ranks among the county's " + pct(r.classFrac[class]) + " of homes that USFS Wildfire Risk to Communities (2020) counts as " + classWords[class] + " to wildfire"
	switch {
	case class == classNot:
		s += " (beyond the reach of embers from burnable land), which WRC gives no burn probability; the county's most sheltered residents are placed in this class first."
	case r.classBP[class] > 0:
		s += "; their mean annual burn probability is about 1 in " + hazard.ReturnPeriodText(1/r.classBP[class]) + "."
	default:
		s += "; their modelled burn probability is zero."
	}
	s += " Shelter is a proxy for the class, not a map of burnable land, so the site's values weigh the classes of the county's residents within a tenth of its rank either way"
	if mixed {
		s += "; this site ranks close enough to another class that its values weigh that class in too"
	}
	s += ": an allocation of county figures, not a measurement at the parcel."
	// The county's own notes are shared, not written again per class.
	notes := append([]string{s}, c.notes...)
	return notes[:len(notes):len(notes)]
}

// pct writes a share (0..1) as a whole percent, "less than 1%" below 0.5%.
func pct(f float64) string {
	if f > 0 && f < 0.005 {
		return "less than 1%"
	}
	return strconv.FormatFloat(100*f, 'f', 0, 64) + "%"
}

// populationSource is the catalog id of the block-group centres
// (internal/risk/population), cited by the density indicator.
const populationSource = "census-cenpop-2020-blockgroups"

// notesFor writes the county's narrative sentences once, at load.
func notesFor(c *county, oldCounty string) []string {
	var notes []string
	if c.has&hasBP != 0 {
		notes = append(notes, burnProbabilityNote(c.wrc))
	} else {
		notes = append(notes, "USFS Wildfire Risk to Communities (2020) gives no figures for this county's homes, so no wildfire measure taken where its homes are scores this site; the values shown are county context.")
	}
	if c.has&hasWHP2020 != 0 {
		notes = append(notes, whpNote(c.whp2020))
	}
	if oldCounty != "" {
		notes = append(notes, "The wildfire tables predate this county's current boundaries; the values shown are those of the former "+oldCounty+", which covers most of it.")
	}
	return notes[:len(notes):len(notes)]
}

const wrcCite = " (USFS Wildfire Risk to Communities, 2020)."

// burnProbabilityNote states the burn probability of the exposed homes and
// what it is over all the county's homes, both county figures.
func burnProbabilityNote(r wrcRow) string {
	if r.bp <= 0 {
		return "The modelled annual burn probability of the county's homes is zero" + wrcCite
	}
	s := "Across the county's homes exposed to wildfire (" + homesPhrase(r.exposedFrac) + "), the mean annual burn probability is " +
		sigFigs(100*r.bp, 2) + "%"
	if r.bp < 0.5 {
		s += ", about a 1-in-" + hazard.ReturnPeriodText(1/r.bp) + " chance each year"
	}
	if r.exposedFrac < 1 && r.homesShare > 0 {
		s += "; averaged over all its homes, exposed or not, about 1 in " + hazard.ReturnPeriodText(1/r.homesShare)
	}
	return s + wrcCite
}

// homesPhrase says what share of the county's homes are exposed.
func homesPhrase(f float64) string {
	switch {
	case f >= 1:
		return "all of its homes"
	case f >= 0.995:
		return "nearly all of its homes"
	case f < 0.005:
		return "less than 1% of its homes"
	}
	return strconv.FormatFloat(100*f, 'f', 0, 64) + "% of its homes"
}

func whpNote(share float64) string {
	const tail = " of the county's area is rated high or very high Wildfire Hazard Potential (USFS, 2020); that share counts wild land anywhere in the county, not only where its homes are, and does not drive the score."
	switch {
	case share <= 0:
		return "None" + tail
	case share < 0.5:
		return "Less than 1%" + tail
	}
	return strconv.FormatFloat(share, 'f', 0, 64) + "%" + tail
}

// sigFigs formats v (> 0) with n significant digits and no exponent.
func sigFigs(v float64, n int) string {
	dec := n - 1 - int(math.Floor(math.Log10(v)))
	if dec < 0 {
		dec = 0
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}
