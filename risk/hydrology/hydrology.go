// Package hydrology measures flood exposure at a site from five public data
// sets: the distance to the ocean shoreline (GSHHG), the distance to the
// nearest major river (WDBII rivers in GSHHG), the NWS river and tide gauges
// with a defined flood stage nearby (NOAA NWPS), the county's NFIP
// residential take-up (OpenFEMA) and the county's count of flood-related
// federal disaster declarations (OpenFEMA, 1980 to March 2019).
//
// Limits: no floodplain (FEMA flood-zone) map, terrain or elevation data was
// available, so the module measures proximity to water and county flood
// history, not whether a site lies in a mapped floodplain. Only major rivers
// are in WDBII; small streams and urban drainage flooding are invisible to
// it. Distances are searched out to fixed radii (100 km for the coast,
// 50 km for rivers, 25 km for lakes and gauges) and reported as capped
// beyond them. NFIP take-up exists only for the 50 states and DC. See
// docs/methodology.md (Hydrology module).
package hydrology

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"locrisk/risk/data"
	"locrisk/risk/geo"
	"locrisk/risk/hazard"
)

// Source ids this module reads.
const (
	SrcShorelines   = "gshhg-shorelines"
	SrcRivers       = "gshhg-rivers"
	SrcGauges       = "noaa-nwps-gauges"
	SrcNFIP         = "fema-nfip-penetration"
	SrcDeclarations = "fema-disaster-declarations"
)

// Search radii and decay lengths; the methodology document explains them.
const (
	coastMaxKm    = 100.0 // search radius for the distance
	coastIndexKm  = 30.0  // the exposure index is 0 beyond this
	coastDecayKm  = 10.0
	riverMaxKm    = 50.0
	riverIndexKm  = 10.0
	riverDecayKm  = 3.0
	lakeMaxKm     = 25.0
	gaugeCountKm  = 10.0
	gaugeMaxKm    = 25.0
	coastalFlagKm = 1.0
	// partialQuality applies where the river or gauge layer does not cover
	// the site's state or territory, so fewer indicators are measured.
	partialQuality = 0.85
)

// Indicator ids other packages refer to (the registry's thresholds).
const (
	IndDistanceToCoast = "distance_to_coast_km"
	IndDistanceToRiver = "distance_to_major_river_km"
)

// Resolutions of the module's indicators.
var (
	resShoreline = hazard.Resolution{Kind: hazard.ResSite, Detail: "GSHHG shoreline, about 0.2 km"}
	resRiver     = hazard.Resolution{Kind: hazard.ResSite, Detail: "WDBII major rivers, about 0.2 km"}
	resGauges    = hazard.Resolution{Kind: hazard.ResSite, Detail: "NWS gauges within 10 km"}
	resCounty    = hazard.Resolution{Kind: hazard.ResCounty, Detail: "county"}
)

// Indicator weights inside the riverine peril: the distance to a major
// river counts twice the density of flood-stage gauges around the site. The
// county NFIP take-up and flood declarations are shown as county context
// with their percentiles but carry no weight: they cannot tell a coastal
// flood from a river one, nor the site from the rest of the county
// (docs/methodology.md, "Hydrology").
const (
	wCoast  = 1.0
	wRiver  = 0.20
	wGauges = 0.10
)

// Coastal tiers: the exact geometry out to 30 km (the edge of the exposure
// index), on a fine grid within 5 km and a coarser one beyond; then lines
// simplified to 1 km from 30 to 50 km and 2.5 km from 50 to 100 km, where
// the distance is context only and the error stays under 5%.
var coastTiers = []tierSpec{
	{radiusKm: 5, cellDeg: 0.05},
	{radiusKm: 20, cellDeg: 0.2},
	{radiusKm: coastIndexKm, cellDeg: 0.2},
	{radiusKm: 50, cellDeg: 0.25, tolKm: 1},
	{radiusKm: 70, cellDeg: 0.5, tolKm: 2.5},
	{radiusKm: coastMaxKm, cellDeg: 0.5, tolKm: 2.5},
}

// River tiers: exact geometry to 20 km, which holds the 10 km exposure
// index, then 1 km simplification to 50 km.
var riverTiers = []tierSpec{
	{radiusKm: 5, cellDeg: 0.05},
	{radiusKm: 20, cellDeg: 0.2},
	{radiusKm: riverMaxKm, cellDeg: 0.5, tolKm: 1},
}

// Lake tiers: exact to 5 km, 0.3 km simplification to 25 km.
var lakeTiers = []tierSpec{
	{radiusKm: 5, cellDeg: 0.05},
	{radiusKm: lakeMaxKm, cellDeg: 0.25, tolKm: 0.3},
}

// Module is the loaded hydrology module. It is immutable and safe for
// concurrent use.
type Module struct {
	coast  *tieredLines
	lakes  *tieredLines
	rivers *tieredLines
	gauges *geo.PointIndex
	gauge  []gaugeInfo
	nfip   map[string]nfipCounty
	decl   map[string]int // flood-related declarations per county; absent = county unknown to the file
	rows   map[string]int
}

var _ hazard.Module = (*Module)(nil)

// Load reads the five data sets from the data directory dir. The line
// layers and the tables load side by side; errors are reported in a fixed
// order so the message does not depend on scheduling.
func Load(dir string) (*Module, error) {
	m := &Module{rows: map[string]int{}}
	var (
		wg                     sync.WaitGroup
		shoreErr, riverErr     error
		nShores, nRivers       int
		coast, lakes, riversIx *tieredLines
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		shores, err := readLines(dir, data.Path(SrcShorelines))
		if err != nil {
			shoreErr = err
			return
		}
		nShores = len(shores)
		var inner sync.WaitGroup
		inner.Add(1)
		go func() { defer inner.Done(); lakes = newTieredLines(shores, isLakeShore, lakeTiers) }()
		coast = newTieredLines(shores, isOceanShore, coastTiers)
		inner.Wait()
	}()
	go func() {
		defer wg.Done()
		rivers, err := readLines(dir, data.Path(SrcRivers))
		if err != nil {
			riverErr = err
			return
		}
		nRivers = len(rivers)
		riversIx = newTieredLines(rivers, isMajorRiver, riverTiers)
	}()
	tableErr := m.loadGauges(dir)
	if tableErr == nil {
		tableErr = m.loadNFIP(dir)
	}
	if tableErr == nil {
		tableErr = m.loadDeclarations(dir)
	}
	wg.Wait()
	for _, err := range []error{shoreErr, riverErr, tableErr} {
		if err != nil {
			return nil, err
		}
	}
	m.coast, m.lakes, m.rivers = coast, lakes, riversIx
	m.rows[SrcShorelines], m.rows[SrcRivers] = nShores, nRivers
	return m, nil
}

// GSHHG levels: 1 ocean shoreline, 2 lake shore, 3 shore of an island in a
// lake (also lake water on one side), 4 pond in such an island.
func isOceanShore(level int) bool { return level == 1 }
func isLakeShore(level int) bool  { return level == 2 || level == 3 }

// All three WDBII river levels count as major rivers. The levels are
// uneven: the James River at Richmond and the South Platte at Denver are
// level 3 ("additional rivers"), so levels 1-2 alone miss rivers with long
// flood records.
func isMajorRiver(level int) bool { return level >= 1 && level <= 3 }

// Name implements hazard.Module.
func (m *Module) Name() string { return hazard.Hydrology }

// Sources implements hazard.Module.
func (m *Module) Sources() []string {
	return []string{SrcShorelines, SrcRivers, SrcGauges, SrcNFIP, SrcDeclarations}
}

// Rows implements hazard.Module: data rows (features for the GeoJSON files)
// read from each file, before any filtering.
func (m *Module) Rows() map[string]int {
	out := make(map[string]int, len(m.rows))
	for k, v := range m.rows {
		out[k] = v
	}
	return out
}

// riverCovered reports whether the WDBII river layer covers the site: it
// was extracted for the conterminous states, Alaska, Puerto Rico and the
// U.S. Virgin Islands.
func riverCovered(s hazard.Site) bool {
	switch s.StateCode {
	case "HI", "GU", "MP", "AS":
		return false
	}
	return true
}

// gaugeCovered reports whether NWPS has gauges in the site's state or
// territory: the 50 states, DC and Puerto Rico.
func gaugeCovered(s hazard.Site) bool {
	switch s.StateCode {
	case "VI", "GU", "MP", "AS":
		return false
	}
	return true
}

// Measure implements hazard.Module.
func (m *Module) Measure(s hazard.Site) hazard.Measurement {
	p := geo.Point{Lat: s.Lat, Lon: s.Lon}
	ins := make([]hazard.Indicator, 0, 11)
	notes := make([]string, 0, 3)
	var flags []hazard.Flag
	quality := 1.0

	// Coast.
	coastKm, coastOK := m.coast.nearest(p)
	coastIdx := 0.0
	coastLabel := "Distance to the nearest ocean shoreline"
	if coastOK {
		coastIdx = decay(coastKm, coastDecayKm, coastIndexKm)
	} else {
		coastKm = coastMaxKm
		coastLabel = "Distance to the nearest ocean shoreline (capped: none within 100 km)"
	}
	ins = append(ins,
		hazard.Indicator{ID: "coastal_exposure_index", Label: "Coastal exposure index: exp(-distance to the ocean shoreline / 10 km), 0 beyond 30 km",
			Value: coastIdx, Unit: "index", Source: SrcShorelines, Peril: hazard.PerilCoastalFlood, Resolution: resShoreline, Ranked: true, Weight: wCoast},
		hazard.Indicator{ID: IndDistanceToCoast, Label: coastLabel, Value: coastKm, Unit: "km", Source: SrcShorelines, Peril: hazard.PerilCoastalFlood, Resolution: resShoreline},
	)
	if coastOK && coastKm <= coastalFlagKm {
		flags = append(flags, hazard.Flag{Code: "coastal_site", Message: fmt.Sprintf(
			"The site is %.1f km from the ocean shoreline. Storm surge and coastal flood zones are not mapped by this report: check the FEMA Flood Insurance Rate Map for the address.", coastKm)})
	}

	// Major rivers.
	var riverKm float64
	riverOK, riverCov := false, riverCovered(s)
	if riverCov {
		riverKm, riverOK = m.rivers.nearest(p)
		riverIdx := 0.0
		riverLabel := "Distance to the nearest major river (WDBII rivers)"
		if riverOK {
			riverIdx = decay(riverKm, riverDecayKm, riverIndexKm)
		} else {
			riverKm = riverMaxKm
			riverLabel = "Distance to the nearest major river (WDBII rivers; capped: none within 50 km)"
		}
		ins = append(ins,
			hazard.Indicator{ID: "river_exposure_index", Label: "River exposure index: exp(-distance to the nearest major river / 3 km), 0 beyond 10 km",
				Value: riverIdx, Unit: "index", Source: SrcRivers, Peril: hazard.PerilRiverineFlood, Resolution: resRiver, Ranked: true, Weight: wRiver},
			hazard.Indicator{ID: IndDistanceToRiver, Label: riverLabel, Value: riverKm, Unit: "km", Source: SrcRivers, Peril: hazard.PerilRiverineFlood, Resolution: resRiver},
		)
	} else {
		quality = partialQuality
	}
	notes = append(notes, waterNote(coastKm, coastOK, riverKm, riverOK, riverCov))

	// Large lakes: context only, because GSHHG lakes range from the Great
	// Lakes to small reservoirs and lake flooding is not comparable to
	// riverine or coastal flooding nationally.
	lakeKm, lakeOK := m.lakes.nearest(p)
	lakeLabel := "Distance to the nearest lake shoreline (GSHHG lakes)"
	if !lakeOK {
		lakeKm = lakeMaxKm
		lakeLabel = "Distance to the nearest lake shoreline (GSHHG lakes; capped: none within 25 km)"
	}
	ins = append(ins, hazard.Indicator{ID: "distance_to_lake_shore_km", Label: lakeLabel, Value: lakeKm, Unit: "km", Source: SrcShorelines, Resolution: resShoreline})

	// Flood-stage gauges.
	if gaugeCovered(s) {
		count, near, nearKm := 0, -1, math.Inf(1)
		m.gauges.Within(p, gaugeCountKm, func(i int, d float64) {
			count++
			if d < nearKm || (d == nearKm && i < near) {
				near, nearKm = i, d
			}
		})
		if near < 0 {
			near, nearKm = m.gauges.Nearest(p, gaugeMaxKm)
		}
		ins = append(ins, hazard.Indicator{ID: "gauges_with_flood_stage_10km", Label: "In-service NWS river and tide gauges with a defined flood stage within 10 km",
			Value: float64(count), Unit: "count", Source: SrcGauges, Peril: hazard.PerilRiverineFlood, Resolution: resGauges, Ranked: true, Weight: wGauges})
		if near >= 0 {
			g := m.gauge[near]
			ins = append(ins,
				hazard.Indicator{ID: "nearest_flood_gauge_km", Label: "Distance to the nearest NWS gauge with a defined flood stage", Value: nearKm, Unit: "km", Source: SrcGauges, Peril: hazard.PerilRiverineFlood, Resolution: resGauges},
				hazard.Indicator{ID: "nearest_flood_gauge", Label: "Nearest NWS gauge with a defined flood stage", Unit: "name", Source: SrcGauges, Peril: hazard.PerilRiverineFlood, Resolution: resGauges, Text: g.label},
			)
			notes = append(notes, gaugeNote(count, g, nearKm))
		} else {
			ins = append(ins, hazard.Indicator{ID: "nearest_flood_gauge_km", Label: "Distance to the nearest NWS gauge with a defined flood stage (capped: none within 25 km)",
				Value: gaugeMaxKm, Unit: "km", Source: SrcGauges, Peril: hazard.PerilRiverineFlood, Resolution: resGauges})
			notes = append(notes, "No NWS river or tide gauge with a defined flood stage lies within 25 km.")
		}
	} else {
		quality = partialQuality
	}

	// County aggregates.
	nf, nfOK := m.nfip[s.CountyFIPS]
	if nfOK {
		ins = append(ins,
			hazard.Indicator{ID: "nfip_penetration_rate", Label: "County share of residential structures with an NFIP flood policy in force (May 2025)",
				Value: nf.ratePct, Unit: "percent", Source: SrcNFIP, Resolution: resCounty, Ranked: true},
			hazard.Indicator{ID: "nfip_policies_in_force", Label: "County NFIP residential policies in force (May 2025)",
				Value: float64(nf.contracts), Unit: "count", Source: SrcNFIP, Resolution: resCounty},
		)
	}
	decl, declOK := m.decl[s.CountyFIPS]
	if declOK {
		ins = append(ins, hazard.Indicator{ID: "flood_disaster_declarations", Label: "Flood-related federal disaster declarations for the county, 1980 to March 2019",
			Value: float64(decl), Unit: "count", Source: SrcDeclarations, Resolution: resCounty, Ranked: true})
	}
	if n := countyNote(nf, nfOK, decl, declOK); n != "" {
		notes = append(notes, n)
	}

	return hazard.Measurement{Indicators: ins, Quality: quality, Notes: notes, Flags: flags}
}

func waterNote(coastKm float64, coastOK bool, riverKm float64, riverOK, riverCov bool) string {
	var b strings.Builder
	if coastOK {
		fmt.Fprintf(&b, "The nearest ocean shoreline is %s away", kmText(coastKm))
	} else {
		b.WriteString("No ocean shoreline lies within 100 km")
	}
	switch {
	case !riverCov:
		b.WriteString("; the major-river layer does not cover this area.")
	case riverOK:
		fmt.Fprintf(&b, "; the nearest major river %s.", kmText(riverKm))
	default:
		b.WriteString("; no major river lies within 50 km.")
	}
	return b.String()
}

func gaugeNote(count int, g gaugeInfo, km float64) string {
	switch count {
	case 0:
		return fmt.Sprintf("No NWS gauge with a defined flood stage lies within 10 km; the nearest is %s, %s away.", g.label, kmText(km))
	case 1:
		return fmt.Sprintf("One NWS gauge with a defined flood stage lies within 10 km: %s, %s away.", g.label, kmText(km))
	}
	return fmt.Sprintf("%d NWS gauges with a defined flood stage lie within 10 km; the nearest is %s, %s away.", count, g.label, kmText(km))
}

func countyNote(nf nfipCounty, nfOK bool, decl int, declOK bool) string {
	var parts []string
	if nfOK {
		parts = append(parts, fmt.Sprintf("County NFIP residential take-up: %s of structures (%s policies in force)", pctText(nf.ratePct), intText(nf.contracts)))
	}
	if declOK {
		switch decl {
		case 0:
			parts = append(parts, "no federal flood-related disaster declarations since 1980")
		case 1:
			parts = append(parts, "1 federal flood-related disaster declaration since 1980")
		default:
			parts = append(parts, fmt.Sprintf("%d federal flood-related disaster declarations since 1980", decl))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, "; ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// kmText writes a distance with one decimal below 10 km and none above.
func kmText(km float64) string {
	if km < 10 {
		return fmt.Sprintf("%.1f km", km)
	}
	return fmt.Sprintf("%.0f km", km)
}

func pctText(p float64) string {
	if p == 0 {
		return "0%"
	}
	if p < 0.1 {
		return "under 0.1%"
	}
	if p < 10 {
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.0f%%", p)
}

// decay is exp(-km/scale) out to cutoff and 0 beyond it. The cut-off keeps
// places with no practical exposure at exactly 0, which the engine ranks at
// the 0th percentile instead of above every farther place.
func decay(km, scale, cutoff float64) float64 {
	if km > cutoff {
		return 0
	}
	return math.Exp(-km / scale)
}

// intText writes a count with thousands separators.
func intText(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + intText(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
