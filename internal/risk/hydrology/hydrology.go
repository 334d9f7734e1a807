// Package hydrology measures flood exposure at a site from seven public data
// sets: the distance to the ocean shoreline (GSHHG), the distances to the
// nearest river in two WDBII river layers of GSHHG (the major rivers,
// levels 1-3, and the additional rivers, level 4) and in the Natural Earth
// North American rivers, the NWS river gauges
// with a defined flood stage nearby (NOAA NWPS), the county's NFIP
// residential take-up (OpenFEMA) and the county's count of flood-related
// federal disaster declarations (OpenFEMA, 1980 to March 2019). Where the
// engine supplies a hurricane wind climate (UseStormClimate) it also
// combines coastal proximity with the annual chance of hurricane-force
// winds into a storm surge exposure index. Where the engine supplies the
// terrain (UseGround), the site's height above its river and gauge, on a
// grid of about 2 km, tempers the river and gauge proximity indices.
//
// Limits: no floodplain (FEMA flood-zone) map was available, and the
// terrain grid tells a ridge from a riverbank, not a bluff from its
// floodplain, so the module measures proximity to water, coarse height
// above it and county flood history, not whether a site lies in a mapped
// floodplain. WDBII is a
// small-scale river set: streams smaller than its level 4 and urban
// drainage flooding are invisible to it. Distances are searched out to fixed
// radii (100 km for the coast, 50 km for major rivers, 25 km for any river,
// lakes and gauges) and reported as capped beyond them. NFIP take-up exists
// only for the 50 states and DC. See docs/methodology.md (Hydrology module).
package hydrology

import (
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// Source ids this module reads.
const (
	SrcShorelines   = "gshhg-shorelines"
	SrcRivers       = "gshhg-rivers"
	SrcMinorRivers  = "gshhg-rivers-levels4-11"
	SrcNERivers     = "ne-rivers-north-america"
	SrcGauges       = "noaa-nwps-gauges"
	SrcNFIP         = "fema-nfip-penetration"
	SrcDeclarations = "fema-disaster-declarations"
)

// Search radii and decay lengths; the methodology document explains them.
const (
	coastMaxKm = 100.0 // search radius for the distance
	// The coastal proximity index is exp(-d / 2 km), 0 beyond 10 km: storm
	// surge and coastal flood zones rarely reach more than a few km inland
	// except on very low coasts, which cannot be told apart without
	// elevation data.
	coastIndexKm = 10.0
	coastDecayKm = 2.0
	riverMaxKm   = 50.0 // search radius for the major-river distance
	// The river proximity index (riverClasses) decays with the distance to
	// the nearest river of each size class, over a reach that grows with
	// the river: exp(-d / 3 km), 0 beyond 10 km, for the largest (WDBII
	// level 1), whose valleys are widest, down to exp(-d / 1 km), 0 beyond
	// 3 km, for the additional and minor rivers, whose floodplains reach a
	// few hundred metres to a kilometre or two from the channel.
	riverIndexKm      = 3.0
	riverDecayKm      = 1.0
	majorRiverIndexKm = 10.0
	majorRiverDecayKm = 3.0
	anyRiverMaxKm     = 25.0 // search radius for the nearest river of either layer
	lakeMaxKm         = 25.0
	// heightReachKm: the height above the nearest river or gauge is
	// measured and reported out to the largest reach of a proximity index;
	// farther, it would compare the site with another valley.
	heightReachKm = majorRiverIndexKm
	// The river gauge proximity index is exp(-d / 3 km), 0 beyond 6 km
	// (two decay lengths), d the distance to the nearest river gauge with
	// a flood stage: a gauge marks one point of a stream whose floodplain
	// is a few km wide at most, so a site farther away is on that stream
	// only if the stream runs towards it, which the river layers show for
	// the larger streams.
	gaugeIndexKm = 6.0
	gaugeDecayKm = 3.0
	// A gauge off every mapped river measures a stream too small for the
	// river layers (an urban creek, a small tributary): its floodplain
	// reaches a few hundred metres from the channel, like a minor river's,
	// so its index decays like one (riverDecayKm, 0 beyond riverIndexKm).
	// gaugeOnRiverKm: a gauge within a kilometre of a mapped river line
	// (half a terrain cell; the lines are drawn to 0.1-0.2 km) stands on
	// that river or where a stream meets it.
	gaugeOnRiverKm = 1.0
	// hillReliefM: relief around a site from which the 2 km grid's cells
	// mix valley floors with their walls: about three times the median error of
	// the grid's elevations at towns of known height (docs/methodology.md,
	// "Terrain"), so that less relief is read as open, gently rolling
	// ground.
	hillReliefM  = 100.0
	gaugeCountKm = 10.0
	gaugeMaxKm   = 25.0
	// partialQuality applies where the river or gauge layer does not cover
	// the site's state or territory, so fewer indicators are measured.
	partialQuality = 0.85
)

// NearWaterKm is the distance within which a site counts as near an open
// coast (distance_to_coast_km) or near a river (distance_to_river_km):
// where a flood zone determination is worth recommending. The coastal_site
// flag uses it too.
const NearWaterKm = 1.0

// Indicator ids other packages refer to (the registry's thresholds and
// evidence).
const (
	IndDistanceToCoast = "distance_to_coast_km"
	// IndNearestRiverGaugeKm is the distance to the nearest river gauge
	// with a flood stage.
	IndNearestRiverGaugeKm  = "nearest_river_gauge_km"
	IndDistanceToRiver      = "distance_to_river_km"       // nearest river of either WDBII layer
	IndDistanceToMajorRiver = "distance_to_major_river_km" // WDBII levels 1-3 only
	IndCoastalProximity     = "coastal_proximity_index"
	IndStormSurge           = "storm_surge_exposure_index"
	IndRiverProximity       = "river_proximity_index"
	IndRiverGaugeProximity  = "river_gauge_proximity_index"
	// IndHeightAboveRiver and IndHeightAboveGauge are the site's height
	// above the nearest mapped river and above the nearest river gauge, on
	// the terrain grid.
	IndHeightAboveRiver = "height_above_river_m"
	IndHeightAboveGauge = "height_above_river_gauge_m"
)

// Resolutions of the module's indicators.
var (
	resShoreline = hazard.Resolution{Kind: hazard.ResSite, Detail: "GSHHG shoreline, about 0.2 km"}
	resRiver     = hazard.Resolution{Kind: hazard.ResSite, Detail: "WDBII rivers, about 0.1-0.2 km"}
	resGauges    = hazard.Resolution{Kind: hazard.ResSite, Detail: "NWS river gauge points"}
	resSurge     = hazard.Resolution{Kind: hazard.ResGrid, Detail: "0.1-degree hurricane wind grid, about 11 km, times the site's coastal proximity"}
	resCounty    = hazard.Resolution{Kind: hazard.ResCounty, Detail: "county"}
)

// Indicator weights inside their perils. Coastal: proximity to the open
// coast and the storm surge exposure (proximity times the chance of
// hurricane-force winds) count equally, so of two equally close coasts the
// one hurricanes reach ranks higher, while a close coast without
// hurricanes still ranks above an inland site. Riverine: the distance to a
// mapped river counts twice the distance to a river gauge with a flood
// stage, which is a point on some channel (so its distance overstates the
// distance to the gauged stream) but marks streams too small for WDBII
// where flooding is frequent enough for the NWS to define a flood stage.
// The county NFIP take-up and flood declarations are shown as county
// context with their percentiles but carry no weight: they cannot tell a
// coastal flood from a river one, nor the site from the rest of the county
// (docs/methodology.md, "Hydrology").
const (
	wCoast  = 0.5
	wSurge  = 0.5
	wRiver  = 0.20
	wGauges = 0.10
)

// Coastal tiers: the exact geometry out to 30 km (well beyond the 10 km
// edge of the proximity index), on a fine grid within 5 km and a coarser
// one beyond; then lines simplified to 1 km from 30 to 50 km and 2.5 km
// from 50 to 100 km, where the distance is context only and the error stays
// under 5%.
var coastTiers = []tierSpec{
	{radiusKm: 5, cellDeg: 0.05},
	{radiusKm: 20, cellDeg: 0.2},
	{radiusKm: 30, cellDeg: 0.2},
	{radiusKm: 50, cellDeg: 0.25, tolKm: 1},
	{radiusKm: 70, cellDeg: 0.5, tolKm: 2.5},
	{radiusKm: coastMaxKm, cellDeg: 0.5, tolKm: 2.5},
}

// Major-river tiers: exact geometry to 20 km, which holds the 10 km reach
// of the proximity index and most of the 25 km nearest-river search, then
// 1 km simplification to 50 km.
var riverTiers = []tierSpec{
	{radiusKm: 5, cellDeg: 0.05},
	{radiusKm: 20, cellDeg: 0.2},
	{radiusKm: riverMaxKm, cellDeg: 0.5, tolKm: 1},
}

// Minor-river tiers: exact to 5 km, which holds the 3 km proximity index,
// then 0.3 km simplification to 25 km.
var minorRiverTiers = []tierSpec{
	{radiusKm: 5, cellDeg: 0.05},
	{radiusKm: anyRiverMaxKm, cellDeg: 0.25, tolKm: 0.3},
}

// Lake tiers: exact to 5 km, 0.3 km simplification to 25 km.
var lakeTiers = []tierSpec{
	{radiusKm: 5, cellDeg: 0.05},
	{radiusKm: lakeMaxKm, cellDeg: 0.25, tolKm: 0.3},
}

// StormClimate gives the annual chance of hurricane-force (64 kt) winds at
// a point; ok is false where no hurricane record covers the point. The
// severe weather module provides one.
type StormClimate interface {
	HurricaneWindChance(lat, lon float64) (p float64, ok bool)
}

// Module is the loaded hydrology module. After UseStormClimate (if it is
// called at all) it is immutable and safe for concurrent use.
type Module struct {
	coast       *tieredLines
	lakes       *tieredLines
	majorLevel  [3]*tieredLines // WDBII levels 1, 2 and 3 apart, for their sizes (no index of the three together: the nearest major river is the nearest of the three)
	minorRivers *tieredLines    // WDBII levels 4-5
	neRivers    *tieredLines    // Natural Earth rivers, scalerank 10
	neMinor     *tieredLines    // Natural Earth rivers, scalerank 11-12
	gauges      *geo.PointIndex
	gaugePts    []geo.Point
	ground      Ground
	gauge       []gaugeInfo
	nfip        map[string]nfipCounty
	decl        map[string]int // flood-related declarations per county; absent = county unknown to the file
	rows        map[string]int
	climate     StormClimate
}

var _ hazard.Module = (*Module)(nil)

// UseStormClimate gives the module the hurricane wind climate its storm
// surge indicator reads. Call it once, after Load and before any Measure;
// it must not be called concurrently with Measure. Without a climate the
// storm surge indicator is absent.
func (m *Module) UseStormClimate(c StormClimate) { m.climate = c }

// Load reads the seven data sets from the data pack fsys. The line
// layers and the tables load side by side; errors are reported in a fixed
// order so the message does not depend on scheduling.
func Load(fsys fs.FS) (*Module, error) {
	m := &Module{rows: map[string]int{}}
	var (
		wg                                  sync.WaitGroup
		shoreErr, riverErr, minorErr, neErr error
		nShores, nRivers, nMinor, nNE       int
		coast, lakes                        *tieredLines
		minorIx, neIx, neMinorIx            *tieredLines
		levelIx                             [3]*tieredLines
		neLines                             []lineFeature
		dry                                 *geo.SegmentIndex
	)
	wg.Add(4)
	go func() {
		defer wg.Done()
		shores, err := readLines(fsys, data.Path(SrcShorelines))
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
		rivers, err := readLines(fsys, data.Path(SrcRivers))
		if err != nil {
			riverErr = err
			return
		}
		nRivers = len(rivers)
		for lv := range levelIx {
			levelIx[lv] = newTieredLines(rivers, func(l int) bool { return isMajorRiver(l) && l == lv+1 }, riverTiers)
		}
	}()
	go func() {
		defer wg.Done()
		rivers, err := readNELines(fsys, data.Path(SrcNERivers))
		if err != nil {
			neErr = err
			return
		}
		nNE = len(rivers)
		neLines = slices.DeleteFunc(rivers, func(f lineFeature) bool { return f.kind != kindRiver })
	}()
	go func() {
		defer wg.Done()
		rivers, err := readLines(fsys, data.Path(SrcMinorRivers))
		if err != nil {
			minorErr = err
			return
		}
		nMinor = len(rivers)
		var inner sync.WaitGroup
		inner.Add(1)
		go func() { defer inner.Done(); dry = intermittentIndex(rivers) }()
		minorIx = newTieredLines(rivers, isMinorRiver, minorRiverTiers)
		inner.Wait()
	}()
	tableErr := m.loadGauges(fsys)
	if tableErr == nil {
		tableErr = m.loadNFIP(fsys)
	}
	if tableErr == nil {
		tableErr = m.loadDeclarations(fsys)
	}
	wg.Wait()
	for _, err := range []error{shoreErr, riverErr, minorErr, neErr, tableErr} {
		if err != nil {
			return nil, err
		}
	}
	neLines = dropIntermittent(neLines, dry)
	wg.Add(1)
	go func() { defer wg.Done(); neIx = newTieredLines(neLines, isNERiver, minorRiverTiers) }()
	neMinorIx = newTieredLines(neLines, isNEMinorRiver, minorRiverTiers)
	wg.Wait()
	m.coast, m.lakes, m.minorRivers = coast, lakes, minorIx
	m.majorLevel, m.neRivers, m.neMinor = levelIx, neIx, neMinorIx
	m.classifyGauges()
	m.rows[SrcShorelines], m.rows[SrcRivers], m.rows[SrcMinorRivers], m.rows[SrcNERivers] = nShores, nRivers, nMinor, nNE
	return m, nil
}

// GSHHG levels: 1 ocean shoreline, 2 lake shore, 3 shore of an island in a
// lake (also lake water on one side), 4 pond in such an island.
func isOceanShore(level int) bool { return level == 1 }
func isLakeShore(level int) bool  { return level == 2 || level == 3 }

// All three WDBII river levels of the major-river file count as major
// rivers. The levels are uneven: the James River at Richmond and the South
// Platte at Denver are level 3, so levels 1-2 alone miss rivers with long
// flood records.
func isMajorRiver(level int) bool { return level >= 1 && level <= 3 }

// isMinorRiver keeps the rivers of the levels 4-11 file that flood as
// rivers: level 4, additional rivers (the Cedar River at Cedar Rapids), and
// level 5, minor rivers (absent from the US extract). Left out:
//   - intermittent rivers, levels 6-8: in the US extract they are the
//     ephemeral channels of the desert Southwest, many of them emptied by
//     upstream dams and diversions (the Salt River through Phoenix, the
//     Gila), whose hazard is a rare flash flood rather than the overbank
//     flooding of a floodplain, and the class is patchy (it has the Salt
//     but not Tucson's Santa Cruz or Rillito); 0.5% of residents live
//     within 3 km of one;
//   - canals, levels 9-11: engineered channels with controlled levels;
//     most US ones in the file are the aqueducts of California and
//     Arizona, which carry water across deserts and flood nothing.
func isMinorRiver(level int) bool { return level == 4 || level == 5 }

// Natural Earth rivers ("River" features only; the module drops lake
// centerlines, lines drawn through lakes whose shores the lake distance
// measures, and intermittent rivers, for the reasons WDBII's are left
// out): scalerank 10, drawn from the smallest map scales on, count as
// additional rivers like WDBII level 4; scalerank 11 and 12 as minor
// rivers.
//
// Natural Earth marks fewer rivers intermittent than WDBII: the Salt River
// through Phoenix, dry below its dams, is a "River" there. So a Natural
// Earth river is treated as intermittent, and dropped, along the stretches
// within intermittentMatchKm of a WDBII intermittent river (levels 6-8).
func isNERiver(scalerank int) bool      { return scalerank <= 10 }
func isNEMinorRiver(scalerank int) bool { return scalerank >= 11 }

// intermittentMatchKm is how close a Natural Earth river segment's middle
// must come to a WDBII intermittent river to be taken for the same river:
// the two layers are drawn at different scales (about 1:10,000,000 and
// 1:3,000,000) and part by up to about a kilometre.
const intermittentMatchKm = 1.5

// isIntermittent: WDBII levels 6-8, intermittent rivers.
func isIntermittent(level int) bool { return level >= 6 && level <= 8 }

// intermittentIndex indexes the WDBII intermittent rivers of the levels
// 4-11 file.
func intermittentIndex(fs []lineFeature) *geo.SegmentIndex {
	segs, _ := segments(fs, isIntermittent)
	return geo.NewSegmentIndex(segs, nil, 0.1)
}

// dropIntermittent removes from the Natural Earth rivers the segments
// whose middle lies within intermittentMatchKm of a WDBII intermittent
// river, splitting lines where they are cut.
func dropIntermittent(fs []lineFeature, dry *geo.SegmentIndex) []lineFeature {
	if dry == nil || dry.Len() == 0 {
		return fs
	}
	out := make([]lineFeature, 0, len(fs))
	for _, f := range fs {
		start := 0
		for j := 1; j <= len(f.pts); j++ {
			cut := j == len(f.pts)
			if !cut {
				a, b := f.pts[j-1], f.pts[j]
				mid := geo.Point{Lat: (a.Lat + b.Lat) / 2, Lon: geo.NormalizeLon(a.Lon + geo.NormalizeLon(b.Lon-a.Lon)/2)}
				_, _, cut = dry.Nearest(mid, intermittentMatchKm)
			}
			if cut {
				if j-start >= 2 {
					g := f
					g.pts = f.pts[start:j:j]
					out = append(out, g)
				}
				start = j // the segment j-1..j is dropped; the next run starts at j
			}
		}
	}
	return out
}

// riverClass is one size class of mapped river: its index is weight ×
// exp(-d / decayKm) out to reachKm. Floodplains widen with the river, so
// larger rivers reach farther and count more at the same distance
// (docs/methodology.md, "river_proximity_index").
type riverClass struct {
	lines                    *tieredLines
	src                      string
	major                    bool // WDBII levels 1-3
	weight, decayKm, reachKm float64
}

// riverClasses lists the size classes, largest first.
func (m *Module) riverClasses() [6]riverClass {
	return [6]riverClass{
		{m.majorLevel[0], SrcRivers, true, 1.0, majorRiverDecayKm, majorRiverIndexKm}, // WDBII 1, permanent major rivers
		{m.majorLevel[1], SrcRivers, true, 0.9, 2, 6},                                 // WDBII 2, additional major rivers
		{m.majorLevel[2], SrcRivers, true, 0.8, 1.5, 5},                               // WDBII 3, additional rivers
		{m.minorRivers, SrcMinorRivers, false, 0.8, riverDecayKm, riverIndexKm},       // WDBII 4-5
		{m.neRivers, SrcNERivers, false, 0.8, riverDecayKm, riverIndexKm},             // Natural Earth scalerank 10
		{m.neMinor, SrcNERivers, false, 0.65, riverDecayKm, riverIndexKm},             // Natural Earth scalerank 11-12
	}
}

// Name implements hazard.Module.
func (m *Module) Name() string { return hazard.Hydrology }

// Sources implements hazard.Module.
func (m *Module) Sources() []string {
	return []string{SrcShorelines, SrcRivers, SrcMinorRivers, SrcNERivers, SrcGauges, SrcNFIP, SrcDeclarations}
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

// riverCovered reports whether the WDBII river layers cover the site: they
// were extracted for the conterminous states, Alaska, Puerto Rico and the
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

// noFloodMapNote is said at every site.
const noFloodMapNote = "No FEMA flood-zone map is used, and elevation comes only from a terrain grid of about 2 km: these indicators measure distance to the sea, to mapped rivers and to river gauges, height above them on that grid, and the county's flood history, not whether the site lies in a mapped floodplain."

// Measure implements hazard.Module.
func (m *Module) Measure(s hazard.Site) hazard.Measurement {
	p := geo.Point{Lat: s.Lat, Lon: s.Lon}
	ins := make([]hazard.Indicator, 0, 15)
	notes := make([]string, 0, 4)
	var flags []hazard.Flag
	quality := 1.0

	// Coast.
	coastKm, coastOK := m.coast.nearest(p)
	coastIdx := 0.0
	coastLabel, coastText := "Distance to the nearest ocean shoreline", ""
	if coastOK {
		coastIdx = decay(coastKm, coastDecayKm, coastIndexKm)
	} else {
		coastKm = coastMaxKm
		coastLabel = "Distance to the nearest ocean shoreline (capped: none within 100 km)"
		coastText = "none within 100 km"
	}
	ins = append(ins, hazard.Indicator{ID: IndCoastalProximity, Label: "Coastal proximity index: exp(-distance to the ocean shoreline / 2 km), 0 beyond 10 km",
		Value: coastIdx, Unit: "index", Source: SrcShorelines, Peril: hazard.PerilCoastalFlood, Resolution: resShoreline, Ranked: true, Weight: wCoast, Basis: IndDistanceToCoast})
	if m.climate != nil {
		if pw, ok := m.climate.HurricaneWindChance(s.Lat, s.Lon); ok && pw >= 0 && pw <= 1 {
			ins = append(ins, hazard.Indicator{ID: IndStormSurge, Label: "Storm surge exposure index: coastal proximity index × annual chance of hurricane-force winds at the site",
				Value: coastIdx * pw, Unit: "index", Source: SrcShorelines, Peril: hazard.PerilCoastalFlood, Resolution: resSurge, Ranked: true, Weight: wSurge})
		}
	}
	ins = append(ins, hazard.Indicator{ID: IndDistanceToCoast, Label: coastLabel, Value: coastKm, Text: coastText, Unit: "km", Source: SrcShorelines, Peril: hazard.PerilCoastalFlood, Resolution: resShoreline})
	if coastOK && coastKm <= NearWaterKm {
		flags = append(flags, hazard.Flag{Code: "coastal_site", Message: fmt.Sprintf(
			"The site is %.1f km from the ocean shoreline. Storm surge and coastal flood zones are not mapped by this report: check the FEMA Flood Insurance Rate Map for the address.", coastKm)})
	}

	// The site's elevation, read once for the heights above rivers and
	// gauges.
	site := m.readSite(p)

	// Rivers: one index over the union of the layers, the largest over the
	// nearest river of each size class of size weight × distance decay ×
	// height factor, so a river drawn in two layers counts once; the
	// distance to the nearest river of any layer is the cited evidence.
	rv := riverResult{covered: riverCovered(s)}
	if rv.covered {
		best, bestUntempered := 0.0, 0.0
		idxSrc := SrcRivers
		var idxHeight height
		var nearest lineHit
		for _, c := range m.riverClasses() {
			hit, ok := c.lines.nearestHit(p)
			if !ok {
				continue
			}
			if c.major && (!rv.majorOK || hit.km < rv.majorKm) {
				rv.majorKm, rv.majorOK = hit.km, true
			}
			if hit.km <= anyRiverMaxKm && (!rv.anyOK || hit.km < rv.anyKm) {
				rv.anyKm, rv.anyOK, rv.nearestMajor, rv.src, rv.name = hit.km, true, c.major, c.src, hit.name
				nearest = hit
			}
			raw := c.weight * decay(hit.km, c.decayKm, c.reachKm)
			if raw == 0 {
				continue
			}
			h := m.heightAbove(site, hit.at, hit.km, false)
			v := tempered(raw, h.factor())
			bestUntempered = math.Max(bestUntempered, raw)
			if v > best {
				best, idxSrc, idxHeight = v, c.src, h
			}
		}
		if best == 0 && bestUntempered > 0 {
			idxSrc = SrcRivers // every river within reach is far below the site
		}
		rv.tempered = best < bestUntempered
		if rv.anyOK && rv.anyKm <= heightReachKm {
			rv.height = m.heightAbove(site, nearest.at, nearest.km, false)
		}
		anyLabel, anyText := "Distance to the nearest mapped river ("+layerText(rv.src, rv.name)+")", ""
		if !rv.anyOK {
			rv.anyKm = anyRiverMaxKm
			anyLabel = "Distance to the nearest mapped river (WDBII rivers, levels 1-4, and Natural Earth rivers; capped: none within 25 km)"
			anyText = "none within 25 km"
			rv.src = SrcRivers
		}
		majorLabel, majorText := "Distance to the nearest major river (WDBII major rivers, levels 1-3)", ""
		if !rv.majorOK {
			rv.majorKm = riverMaxKm
			majorLabel = "Distance to the nearest major river (WDBII major rivers, levels 1-3; capped: none within 50 km)"
			majorText = "none within 50 km"
		}
		idxRes := resRiver
		if rv.tempered {
			idxRes = hazard.Resolution{Kind: hazard.ResGrid, Detail: "river lines about 0.1-0.2 km, tempered by the height above the river on the terrain grid, about " + cellText(math.Max(idxHeight.cellKm, rv.height.cellKm)) + " cells"}
		}
		ins = append(ins,
			hazard.Indicator{ID: IndRiverProximity, Label: "River proximity index: the largest, over the nearest river of each size, of size weight × exp(-distance / decay length) within the size's reach × a height factor, 1 up to 15 m above the river and falling by e every 15 m above (WDBII and Natural Earth rivers)",
				Value: best, Unit: "index", Source: idxSrc, Peril: hazard.PerilRiverineFlood, Resolution: idxRes, Ranked: true, Weight: wRiver, Basis: IndDistanceToRiver},
			hazard.Indicator{ID: IndDistanceToRiver, Label: anyLabel, Value: rv.anyKm, Text: anyText, Unit: "km", Source: rv.src, Peril: hazard.PerilRiverineFlood, Resolution: resRiver},
			hazard.Indicator{ID: IndDistanceToMajorRiver, Label: majorLabel, Value: rv.majorKm, Text: majorText, Unit: "km", Source: SrcRivers, Peril: hazard.PerilRiverineFlood, Resolution: resRiver},
		)
		if rv.height.ok {
			ins = append(ins, hazard.Indicator{ID: IndHeightAboveRiver, Label: "Height of the site above the nearest mapped river: the site's elevation less the lowest ground within 2 km of the nearest point of the river, on the terrain grid",
				Value: math.Round(rv.height.m), Unit: "m", Source: rv.height.source, Peril: hazard.PerilRiverineFlood, Resolution: rv.height.resolution()})
		}
	} else {
		quality = partialQuality
	}
	notes = append(notes, waterNote(coastKm, coastOK, rv))

	// Large lakes: context only, because GSHHG lakes range from the Great
	// Lakes to small reservoirs and lake flooding is not comparable to
	// riverine or coastal flooding nationally.
	lakeKm, lakeOK := m.lakes.nearest(p)
	lakeLabel, lakeText := "Distance to the nearest lake shoreline (GSHHG lakes)", ""
	if !lakeOK {
		lakeKm = lakeMaxKm
		lakeLabel = "Distance to the nearest lake shoreline (GSHHG lakes; capped: none within 25 km)"
		lakeText = "none within 25 km"
	}
	ins = append(ins, hazard.Indicator{ID: "distance_to_lake_shore_km", Label: lakeLabel, Value: lakeKm, Text: lakeText, Unit: "km", Source: SrcShorelines, Resolution: resShoreline})

	// River gauges with a flood stage.
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
		gaugeIdx := 0.0
		var gh height
		if near >= 0 {
			if nearKm <= heightReachKm {
				gh = m.heightAbove(site, m.gaugePts[near], nearKm, true)
			}
			gaugeIdx = m.gauge[near].index(nearKm, gh)
		}
		gaugeRes := resGauges
		if t := tempered(gaugeIdx, gh.factor()); t < gaugeIdx {
			gaugeIdx = t
			gaugeRes = hazard.Resolution{Kind: hazard.ResGrid, Detail: "NWS river gauge points, tempered by the height above the gauge on the terrain grid, about " + cellText(gh.cellKm) + " cells"}
		}
		// Without the river layers (Hawaii) a gauge alone would carry the
		// whole riverine peril and rank it above mainland sites where the
		// river distance tempers it; there the riverine peril is not
		// scored, and the gauges are context.
		gaugeWeight := wGauges
		if !rv.covered {
			gaugeWeight = 0
		}
		ins = append(ins,
			hazard.Indicator{ID: IndRiverGaugeProximity, Label: "River gauge proximity index: exp(-distance to the nearest NWS river gauge with a defined flood stage / 3 km), 0 beyond 6 km, for a gauge on a mapped river; exp(-distance / 1 km), 0 beyond 3 km, for a gauge on a stream too small for the river maps; × the height factor of the site above the gauge",
				Value: gaugeIdx, Unit: "index", Source: SrcGauges, Peril: hazard.PerilRiverineFlood, Resolution: gaugeRes, Ranked: true, Weight: gaugeWeight, Basis: IndNearestRiverGaugeKm},
			hazard.Indicator{ID: "river_gauges_with_flood_stage_10km", Label: "In-service NWS river gauges with a defined flood stage within 10 km",
				Value: float64(count), Unit: "count", Source: SrcGauges, Peril: hazard.PerilRiverineFlood, Resolution: resGauges, Ranked: true},
		)
		if near >= 0 {
			g := m.gauge[near]
			ins = append(ins,
				hazard.Indicator{ID: IndNearestRiverGaugeKm, Label: "Distance to the nearest NWS river gauge with a defined flood stage", Value: nearKm, Unit: "km", Source: SrcGauges, Peril: hazard.PerilRiverineFlood, Resolution: resGauges},
				hazard.Indicator{ID: "nearest_river_gauge", Label: "Nearest NWS river gauge with a defined flood stage", Unit: "name", Source: SrcGauges, Peril: hazard.PerilRiverineFlood, Resolution: resGauges, Text: g.label},
			)
			if gh.ok {
				ins = append(ins, hazard.Indicator{ID: IndHeightAboveGauge, Label: "Height of the site above the nearest NWS river gauge with a defined flood stage: the site's elevation less the lowest ground within 2 km of the gauge, on the terrain grid",
					Value: math.Round(gh.m), Unit: "m", Source: gh.source, Peril: hazard.PerilRiverineFlood, Resolution: gh.resolution()})
			}
			notes = append(notes, gaugeNote(count, g, nearKm))
		} else {
			ins = append(ins, hazard.Indicator{ID: IndNearestRiverGaugeKm, Label: "Distance to the nearest NWS river gauge with a defined flood stage (capped: none within 25 km)",
				Value: gaugeMaxKm, Text: "none within 25 km", Unit: "km", Source: SrcGauges, Peril: hazard.PerilRiverineFlood, Resolution: resGauges})
			notes = append(notes, "No NWS river gauge with a defined flood stage lies within 25 km.")
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
	if n := heightNote(m.ground != nil, site.ok, rv); n != "" {
		notes = append(notes, n)
	}
	notes = append(notes, noFloodMapNote)

	return hazard.Measurement{Indicators: ins, Quality: quality, Notes: notes, Flags: flags}
}

// riverResult is what the river layers found at a site.
type riverResult struct {
	covered      bool    // the river layers cover the site
	anyKm        float64 // nearest river of any layer
	anyOK        bool    // one lies within anyRiverMaxKm
	nearestMajor bool    // the nearest river is a major one
	src          string  // the nearest river's layer
	name         string  // its name, where the layer names it
	majorKm      float64 // nearest major river
	majorOK      bool    // one lies within riverMaxKm
	height       height  // the site's height above the nearest river
	tempered     bool    // the height lowered the river proximity index
}

// layerText names a river layer (and the river, where it is named) for
// labels.
func layerText(src, name string) string {
	switch src {
	case SrcRivers:
		return "WDBII major rivers, levels 1-3"
	case SrcMinorRivers:
		return "WDBII additional rivers, level 4"
	}
	if name != "" {
		return "Natural Earth rivers: " + name
	}
	return "Natural Earth rivers"
}

// heightNote says what the terrain told about the height above the river,
// or that it could not be measured.
func heightNote(hasGround, siteOK bool, rv riverResult) string {
	switch {
	case !hasGround || !rv.covered || !rv.anyOK:
		return ""
	case !rv.height.ok && rv.anyKm > heightReachKm:
		return ""
	case !siteOK || !rv.height.ok:
		return "The terrain grids do not cover the site: its height above the river is not measured, and the river and gauge proximity indices are not tempered by height."
	case rv.height.valley && rv.height.m > rv.height.free:
		return fmt.Sprintf("On the terrain grid (about %s cells) the site reads about %.0f m above the nearest mapped river, but it stands on a valley floor or beside the river, where the grid's cells average in the valley walls: that reading is not trusted, and the river and gauge proximity indices are not tempered by height.", cellText(rv.height.cellKm), rv.height.m)
	case rv.tempered:
		return fmt.Sprintf("On the terrain grid (about %s cells) the site stands about %.0f m above the nearest mapped river, which lowers its river proximity index: high ground does not flood like a riverbank. The grid tells a ridge from a riverbank, not a bluff from the floodplain below it.", cellText(rv.height.cellKm), rv.height.m)
	}
	return fmt.Sprintf("On the terrain grid (about %s cells) the site stands about %.0f m above the nearest mapped river; heights up to %.0f m here, within the grid's error, change nothing.", cellText(rv.height.cellKm), math.Max(0, rv.height.m), rv.height.free)
}

func waterNote(coastKm float64, coastOK bool, rv riverResult) string {
	var b strings.Builder
	if coastOK {
		fmt.Fprintf(&b, "The nearest ocean shoreline is %s away", kmText(coastKm))
	} else {
		b.WriteString("No ocean shoreline lies within 100 km")
	}
	switch {
	case !rv.covered:
		b.WriteString("; the river layers do not cover this area.")
	case rv.anyOK && rv.nearestMajor:
		fmt.Fprintf(&b, "; the nearest mapped river, a major one, is %s away.", kmText(rv.anyKm))
	case rv.anyOK && rv.majorOK:
		fmt.Fprintf(&b, "; the nearest mapped river is %s away and the nearest major river %s.", kmText(rv.anyKm), kmText(rv.majorKm))
	case rv.anyOK:
		fmt.Fprintf(&b, "; the nearest mapped river is %s away; no major river lies within 50 km.", kmText(rv.anyKm))
	case rv.majorOK:
		fmt.Fprintf(&b, "; no mapped river lies within 25 km; the nearest major river is %s away.", kmText(rv.majorKm))
	default:
		b.WriteString("; no mapped river lies within 25 km and no major river within 50 km.")
	}
	return b.String()
}

// classifyGauges marks the gauges that stand on a mapped river
// (gaugeInfo.mapped). It runs once, after the river layers are loaded.
func (m *Module) classifyGauges() {
	classes := m.riverClasses()
	for i, p := range m.gaugePts {
		for _, c := range classes {
			if hit, ok := c.lines.nearestHit(p); ok && hit.km <= gaugeOnRiverKm {
				m.gauge[i].mapped = true
				break
			}
		}
	}
}

// index is the gauge proximity index of a site km from the gauge, before
// any height factor. A gauge on a mapped river reaches as far as the
// larger rivers' floodplains. A gauge on a stream too small for the maps
// reaches as far only where the site may lie on that stream: at most
// heightFreeM above the gauge's water (flat ground, where the stream
// may pass the site: downtown Houston on Buffalo Bayou, 3.7 km from its
// gauge) or on the floor of a valley in hill country, whose grid cells
// the valley walls lift (a canyon town on its creek, with at least
// hillReliefM of relief around it). A site that stands higher on open
// ground is out of a small stream's narrow floodplain unless it is close
// to the gauge: there the index decays like a minor river's.
func (g gaugeInfo) index(km float64, h height) float64 {
	if g.mapped || !h.ok || (h.valley && h.relief >= hillReliefM) || h.m <= heightFreeM {
		return decay(km, gaugeDecayKm, gaugeIndexKm)
	}
	return decay(km, riverDecayKm, riverIndexKm)
}

func gaugeNote(count int, g gaugeInfo, km float64) string {
	switch count {
	case 0:
		return fmt.Sprintf("No NWS river gauge with a defined flood stage lies within 10 km; the nearest is %s, %s away.", g.label, kmText(km))
	case 1:
		return fmt.Sprintf("One NWS river gauge with a defined flood stage lies within 10 km: %s, %s away.", g.label, kmText(km))
	}
	return fmt.Sprintf("%d NWS river gauges with a defined flood stage lie within 10 km; the nearest is %s, %s away.", count, g.label, kmText(km))
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

// kmText writes a distance with one decimal below 10 km and none above,
// and "under 0.1 km" for what would round to 0.0.
func kmText(km float64) string {
	if km < 0.05 {
		return "under 0.1 km"
	}
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
