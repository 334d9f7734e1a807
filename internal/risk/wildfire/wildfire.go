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

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/futurerisk"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// Catalog ids of the four tables the indicators cite; the engine reads
// the last, SourceFuture, for the module and the outlook (package
// futurerisk).
const (
	SourceWRC     = "usfs-wrc-v1"
	SourceWHP2020 = "usfs-whp-2020"
	SourceWHP2014 = "usfs-whp-2014"
	SourceFuture  = futurerisk.SourceID
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

// Load reads the three USFS wildfire tables from the data pack fsys and
// takes the projected wildfire scores from future, the NRI Future Risk
// table the engine has read. alloc, when not nil, allocates each site to
// one of its county's exposure classes; without it every site gets the
// county's means.
func Load(fsys fs.FS, alloc Allocator, future *futurerisk.Table) (*Module, error) {
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
	fut := futureScores(future)

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
	for _, l := range data.OlderCounties() {
		n, old := data.FIPSNumber(l.FIPS), data.FIPSNumber(l.Old)
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
		if c.has != before && !l.Renamed {
			crosswalked[n] = l.OldName
		}
	}

	m := &Module{
		index:  make([]uint16, 100000),
		counts: map[string]int{SourceWRC: nWRC, SourceWHP2020: nWHP20, SourceWHP2014: nWHP14},
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

// Name is hazard.Wildfire.
func (m *Module) Name() string { return hazard.Wildfire }

// Sources lists the catalog ids the module's indicators cite.
func (m *Module) Sources() []string {
	return []string{SourceWRC, SourceWHP2020, SourceWHP2014, SourceFuture}
}

// Rows reports the data rows read from each source the module read
// itself (the engine counts the Future Risk table's).
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
