// Package wildfire is the wildfire hazard module. It scores a site from
// three county-level tables:
//
//   - USDA Forest Service Wildfire Risk to Communities v1 (2020) county
//     summary: the housing-unit weighted mean annual burn probability (BP)
//     and risk to potential structures (RPS = BP x conditional risk) of the
//     county's homes;
//   - USFS Wildfire Hazard Potential 2014 (classified, 270 m), as the share of
//     each county's land in the high and very high classes;
//   - FEMA National Risk Index Future Risk (2024): the county's wildfire risk
//     score projected for mid and late century under lower and higher
//     warming, reported as context only.
//
// Limits: every value is a county aggregate, so a site on a fire-prone
// ridge and one downtown in the same county get the same numbers. The fuels
// behind both USFS products date from 2014 (LANDFIRE 1.4), before the large
// fires of 2017-2021. WHP 2014 covers only the conterminous states and DC;
// WRC v1 covers the 50 states but not DC; neither covers the territories,
// where the module reports no hazard data and the engine falls back to the
// NRI. Connecticut's 2022 planning regions and Alaska's 2019 Chugach/Copper
// River split are mapped to the older county that the tables use.
package wildfire

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"locrisk/risk/data"
	"locrisk/risk/hazard"
)

// Catalog ids of the three tables.
const (
	SourceWRC    = "usfs-wrc-v1"
	SourceWHP    = "usfs-whp-2014"
	SourceFuture = "fema-nri-future-2024"
)

// Indicator ids.
const (
	IDBurnProbability  = "burn_probability"
	IDRiskToHomes      = "risk_to_homes"
	IDWHPHighShare     = "whp_high_very_high_share"
	IDFutureMidLower   = "nri_wildfire_mid_century_lower"
	IDFutureMidHigher  = "nri_wildfire_mid_century_higher"
	IDFutureLateLower  = "nri_wildfire_late_century_lower"
	IDFutureLateHigher = "nri_wildfire_late_century_higher"
)

// Quality of the module's data at a site, a multiplier on the confidence the
// engine gives county averages.
const (
	qualityWRC       = 1.0  // WRC present
	qualityWHPOnly   = 0.75 // only the area-based 2014 WHP share (DC)
	qualityCrosswalk = 0.15 // subtracted where an older county stands in
)

// resCounty is the resolution of every indicator here.
var resCounty = hazard.Resolution{Kind: hazard.ResCounty, Detail: "county, housing-unit weighted"}

// Weights of the ranked indicators' percentiles in the module score. RPS
// carries the most because it is the one quantity that combines how often
// fire reaches the county's homes with how intense it would be there; BP
// adds the likelihood on its own; the WHP share describes the land around
// the homes but is older, area-based rather than housing-weighted and
// covers only the conterminous states. Where one indicator is missing, the
// engine's weighted mean runs over those present.
const (
	weightRiskToHomes     = 0.40
	weightBurnProbability = 0.35
	weightWHPHighShare    = 0.25
)

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
	hasBP uint8 = 1 << iota
	hasRPS
	hasWHP
	hasFuture0 // + i for projection i

	wrcMask    = hasBP | hasRPS
	futureMask = hasFuture0 * 0xF
)

type county struct {
	bp, rps, whpShare float64
	future            [4]float64
	has               uint8
	quality           float64
	notes             []string // precomputed so Measure does not format text
}

func (c *county) hasFuture(i int) bool { return c.has&(hasFuture0<<i) != 0 }

// Module is the loaded wildfire module. It is read-only after Load and safe
// for concurrent use.
type Module struct {
	index  []uint16 // numeric county FIPS -> record + 1; 0 = no data
	rows   []county
	counts map[string]int
	noData []string
}

// Load reads the three wildfire tables from the data directory dir.
func Load(dir string) (*Module, error) {
	wrc, nWRC, err := loadWRC(dir)
	if err != nil {
		return nil, err
	}
	whp, nWHP, err := loadWHP(dir)
	if err != nil {
		return nil, err
	}
	fut, nFut, err := loadFuture(dir)
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
		c.bp, c.rps, c.has = v.bp, v.rps, c.has|v.has
	}
	for n, v := range whp {
		c := get(n)
		c.whpShare, c.has = v, c.has|hasWHP
	}
	for n, v := range fut {
		c := get(n)
		c.future, c.has = v.score, c.has|v.has
	}

	crosswalked := map[int]string{}
	for _, l := range legacy {
		n, old := fipsNumber(l.fips), fipsNumber(l.old)
		src := recs[old]
		if src == nil {
			continue
		}
		c := get(n)
		before := c.has
		if c.has&wrcMask == 0 && src.has&wrcMask != 0 {
			c.bp, c.rps, c.has = src.bp, src.rps, c.has|src.has&wrcMask
		}
		if c.has&hasWHP == 0 && src.has&hasWHP != 0 {
			c.whpShare, c.has = src.whpShare, c.has|hasWHP
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
		counts: map[string]int{SourceWRC: nWRC, SourceWHP: nWHP, SourceFuture: nFut},
		noData: []string{"No USFS wildfire hazard data covers this county: Wildfire Risk to Communities (2020) covers the 50 states but not the District of Columbia, Wildfire Hazard Potential (2014) only the conterminous states, and neither the territories."},
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

func qualityFor(c *county, crosswalked bool) float64 {
	var conf float64
	switch {
	case c.has&wrcMask != 0:
		conf = qualityWRC
	case c.has&hasWHP != 0:
		conf = qualityWHPOnly
	default:
		return 0 // only context projections: no hazard data to be confident in
	}
	if crosswalked {
		conf -= qualityCrosswalk
	}
	return conf
}

type wrcRow struct {
	bp, rps float64
	has     uint8
}

// WRC v1 column names, exactly as in the file's header.
const (
	wrcGEOID = "GEOID"
	wrcBP    = "Mean BP"
	wrcRPS   = "Mean RPS"
)

func loadWRC(dir string) (map[int]wrcRow, int, error) {
	t, err := data.OpenTable(dir, data.Path(SourceWRC), wrcGEOID, wrcBP, wrcRPS)
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
		var r wrcRow
		var ok bool
		// BP is an annual probability; RPS = BP x cRPS with cRPS on 0-100,
		// so it cannot exceed 100.
		if r.bp, ok, err = rangedFloat(t, wrcBP, 0, 1); err != nil {
			return nil, 0, err
		} else if ok {
			r.has |= hasBP
		}
		if r.rps, ok, err = rangedFloat(t, wrcRPS, 0, 100); err != nil {
			return nil, 0, err
		} else if ok {
			r.has |= hasRPS
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

func loadWHP(dir string) (map[int]float64, int, error) {
	var cls [7]string
	for k := range cls {
		cls[k] = "risk_" + strconv.Itoa(k+1)
	}
	t, err := data.OpenTable(dir, data.Path(SourceWHP), append([]string{"GEOID"}, cls[:]...)...)
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
		var f [7]float64
		sum := 0.0
		for k, col := range cls {
			v, err := t.Float(col)
			if err != nil {
				return nil, 0, fmt.Errorf("wildfire: %w", err)
			}
			if v < 0 || v > 1 {
				return nil, 0, fmt.Errorf("wildfire: %w", t.Errorf("column %q: %g is not a fraction", col, v))
			}
			f[k] = v
			sum += v
		}
		// The seven class shares partition the county; a sum far from 1 means
		// shifted or truncated columns.
		if math.Abs(sum-1) > 0.01 {
			return nil, 0, fmt.Errorf("wildfire: %w", t.Errorf("class fractions risk_1..risk_7 sum to %.4f, not 1", sum))
		}
		// Share of the county's land, not its whole area: class 7 is water,
		// which would otherwise dilute coastal and lake counties.
		share := 0.0
		if land := 1 - f[6]; land > 1e-9 {
			share = math.Min(100, 100*(f[3]+f[4])/land)
		}
		out[n] = share
	}
	if err := t.Err(); err != nil {
		return nil, 0, fmt.Errorf("wildfire: %w", err)
	}
	if len(out) == 0 {
		return nil, 0, fmt.Errorf("wildfire: %s has no county rows", data.Path(SourceWHP))
	}
	return out, t.Rows(), nil
}

type futureRow struct {
	score [4]float64
	has   uint8
}

func loadFuture(dir string) (map[int]futureRow, int, error) {
	t, err := data.OpenTable(dir, data.Path(SourceFuture), append([]string{"STCOFIPS"}, futureCols[:]...)...)
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
	n := fipsNumber(data.FIPS5(raw))
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

// fipsNumber turns a 5-digit FIPS string into its number, or -1.
func fipsNumber(fips string) int {
	if len(fips) != 5 {
		return -1
	}
	n := 0
	for i := 0; i < 5; i++ {
		c := fips[i]
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// Name is hazard.Wildfire.
func (m *Module) Name() string { return hazard.Wildfire }

// Sources lists the catalog ids the module read.
func (m *Module) Sources() []string { return []string{SourceWRC, SourceWHP, SourceFuture} }

// Rows reports the data rows read from each source.
func (m *Module) Rows() map[string]int {
	out := make(map[string]int, len(m.counts))
	for k, v := range m.counts {
		out[k] = v
	}
	return out
}

func (m *Module) lookup(fips string) *county {
	n := fipsNumber(fips)
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
	ins := make([]hazard.Indicator, 0, 7)
	if c.has&hasBP != 0 {
		ins = append(ins, hazard.Indicator{
			ID:           IDBurnProbability,
			Label:        "Annual burn probability, mean over the county's homes (USFS Wildfire Risk to Communities, 2020)",
			Value:        c.bp,
			Unit:         "probability",
			Source:       SourceWRC,
			Peril:        hazard.PerilWildfire,
			Resolution:   resCounty,
			Ranked:       true,
			Weight:       weightBurnProbability,
			AnnualChance: true,
		})
	}
	if c.has&hasRPS != 0 {
		ins = append(ins, hazard.Indicator{
			ID:         IDRiskToHomes,
			Label:      "Wildfire risk to homes (risk to potential structures), mean over the county's homes (USFS Wildfire Risk to Communities, 2020)",
			Value:      c.rps,
			Unit:       "index",
			Source:     SourceWRC,
			Peril:      hazard.PerilWildfire,
			Resolution: resCounty,
			Ranked:     true,
			Weight:     weightRiskToHomes,
		})
	}
	if c.has&hasWHP != 0 {
		ins = append(ins, hazard.Indicator{
			ID:         IDWHPHighShare,
			Label:      "Share of the county's land rated high or very high Wildfire Hazard Potential (USFS, 2014)",
			Value:      c.whpShare,
			Unit:       "percent",
			Source:     SourceWHP,
			Peril:      hazard.PerilWildfire,
			Resolution: hazard.Resolution{Kind: hazard.ResCounty, Detail: "county land area share"},
			Ranked:     true,
			Weight:     weightWHPHighShare,
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
			Resolution: hazard.Resolution{Kind: hazard.ResCounty, Detail: "county"},
			Percentile: &c.future[i],
		})
	}
	out.Indicators = ins
	out.Quality = c.quality
	out.Notes = c.notes
	return out
}

// notesFor writes the county's narrative sentences once, at load.
func notesFor(c *county, oldCounty string) []string {
	var notes []string
	if c.has&hasBP != 0 {
		notes = append(notes, burnProbabilityNote(c.bp))
	}
	if c.has&hasWHP != 0 {
		notes = append(notes, whpNote(c.whpShare))
	}
	if oldCounty != "" {
		notes = append(notes, "The wildfire tables predate this county's current boundaries; the values shown are those of the former "+oldCounty+", which covers most of it.")
	}
	return notes[:len(notes):len(notes)]
}

func burnProbabilityNote(bp float64) string {
	const src = " (USFS Wildfire Risk to Communities, 2020)."
	if bp <= 0 {
		return "Across the county's housing, the modelled annual burn probability is zero" + src
	}
	s := "Across the county's housing, the mean annual burn probability is " + sigFigs(100*bp, 2) + "%"
	if bp < 0.5 {
		s += ", about a 1-in-" + withCommas(roundSig(1/bp, 2)) + " chance each year"
	}
	return s + src
}

func whpNote(share float64) string {
	const tail = " of the county's land is rated high or very high Wildfire Hazard Potential (USFS, 2014)."
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

// roundSig rounds v (> 0) to n significant digits.
func roundSig(v float64, n int) float64 {
	p := math.Pow(10, float64(n-1)-math.Floor(math.Log10(v)))
	return math.Round(v*p) / p
}

// withCommas writes a whole number with thousands separators.
func withCommas(v float64) string {
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
