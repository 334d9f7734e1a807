// Package landslide estimates landslide susceptibility at a site from the
// ground itself: the steepness and local relief of the terrain around it
// (internal/risk/terrain: SRTM30_PLUS at about 2 km in the conterminous
// states, ETOPO5 at about 9 km elsewhere), and the county's FEMA NRI
// landslide risk score allocated within the county by that terrain
// (docs/methodology.md, "Landslide module").
//
// Three indicators are scored:
//
//   - the steepest slope within 2 km of the site, in degrees;
//   - the local relief, highest minus lowest ground within 5 km, in metres;
//   - the county's NRI landslide score allocated by terrain: the score times
//     the site's relief above the plains' reliefFloorM, over the mean of the
//     same quantity among the county's residents. A county's record of
//     landslide losses is thereby placed on its slopes, and a flat site gets
//     none of it, however high the county rates.
//
// Reported landslides from NASA's Global Landslide Catalog (GLC, 1988-2017;
// news reports, disaster databases and scientific reports) are context, not
// scored: the catalog records where landslides were reported, which follows
// media attention and where people live, not where they can happen. Its
// weighted measure is the reports relative to the people around the site
// who could have reported them:
//
//	ratio = (O + a) / (E + a / mu)
//
// where O is the distance-weighted count of reported events, E the count
// expected from the residents around the site at the national rate of
// reports per resident, and mu the county's prior: its own reports over
// its residents, shrunk in the same way toward the pooled ratio of the
// counties that share its FEMA NRI landslide rating.
//
// Limits: a 2 km grid sees a mountain front, a canyon or a hilly city, not
// a river bluff, a road cut or a coastal cliff; no geology, soil, rainfall
// or land-use layer is used. The module is a terrain screening, not a
// susceptibility map.
//
// Events are kept whatever country the catalog names: 1,562 rows of the
// 2016-2017 additions have no country code at all (most are in the U.S.),
// and a landslide 10 km across the Canadian border is as near as one 10 km
// inside it. The ratio counts only the events that lie in a county with
// residents (the 50 states, DC and Puerto Rico), because only there are the
// residents counted too. Snow avalanches and events placed only to within
// 100 km or more are left out.
package landslide

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
	"github.com/locrisk/locrisk/internal/risk/nri"
	"github.com/locrisk/locrisk/internal/risk/population"
	"github.com/locrisk/locrisk/internal/risk/terrain"
)

// Indicator ids.
const (
	IndicatorSlope     = "terrain_slope_deg"
	IndicatorRelief    = "local_relief_5km_m"
	IndicatorExcess    = "relief_above_plains_m"
	IndicatorHillside  = "hillside_slope_deg"
	IndicatorAllocated = "nri_landslide_terrain_allocated"

	IndicatorRatio   = "landslide_report_ratio"
	IndicatorDensity = "reported_landslide_density"
	IndicatorCount   = "reported_landslides_25km"
	IndicatorNearest = "nearest_reported_landslide_km"
)

const (
	sourceID = "nasa-glc"

	countRadiusKm   = 25
	nearestRadiusKm = 100
	// The weighted counts (docs/methodology.md, "Landslide module") weigh
	// each reported event, and each resident, by exp(-distance /
	// densityScaleKm) out to densityRadiusKm, where the weight is 0.25%:
	// no count switches on at a radius, and a report 2 km away weighs four
	// times one 15 km away.
	densityScaleKm  = 10.0
	densityRadiusKm = 60.0
	catalogYears    = 30 // 1988-2017
	// PriorStrength is a, the weight of the county's rating-class prior in
	// pseudo-reports (distance-weighted, like O): a site's own reports
	// outweigh the prior once they exceed 3, and one or two reports where
	// few people live move the ratio at most to (O + 3) / 3 times the
	// prior. Three reports is also where a Poisson count's relative
	// error, 1/sqrt(O), falls below 60%.
	PriorStrength = 3.0
	// residentCellDeg is the cell in which block-group residents are
	// pooled, at their population-weighted centre, for the expected
	// count: a 60 km sum then visits a few hundred cells instead of up to
	// 10,000 block groups, and differs from the exact sum by about 1%.
	residentCellDeg = 0.05
	// quality scales the confidence of reported events: the catalog is
	// compiled from news and disaster reports, so it is neither complete
	// nor evenly sampled.
	quality = 0.5
	// maxAccuracyKm drops events whose position is only known to within
	// more than this: they cannot be placed in a 25 km circle.
	maxAccuracyKm = 50
	// nriCode is the FEMA NRI hazard whose county rating sets the prior.
	nriCode = "LNDS"

	// slopeRadiusKm is how far around the site the steepest slope is
	// sought: the grid cell holding the site and its neighbours, so a town
	// at the foot of a mountain front sees the front.
	slopeRadiusKm = 2.0
	// reliefRadiusKm is the radius of the local relief: the scale of a
	// valley side or a mountain front, a few grid cells.
	reliefRadiusKm = 5.0
	// reliefFloorM is the relief within 5 km below which the ground counts
	// as plains for the allocation: on the repaired 2 km grid the
	// coastal plain, the prairie and rolling farmland stay below it (the
	// grid's own noise is a few tens of metres), so their slides need
	// bluffs and banks too small for the grid to see.
	reliefFloorM = 100.0
	// Weights of the three scored indicators' shares in the peril's value
	// (docs/methodology.md, "Landslide module"): the relief above the
	// plains says how far ground around the site can fall, the slope of
	// that hilly ground how steep it is at the site (the first-order
	// control on failure, and what tells a canyon town from a town on a
	// rolling upland of the same relief), and the county's record
	// allocated by relief how often such ground has failed and cost money
	// there. All three are 0 on plains, so the residents on plains, about
	// four in five, tie at the bottom.
	weightExcess    = 0.35
	weightHillside  = 0.30
	weightAllocated = 0.35
	// allocCap bounds the allocation: a site gets at most this many times
	// its county's score. Where a county's residents live mostly on
	// plains, their mean relief above the plains is small and the ratio
	// would place the whole county's record on its few hilly sites (a
	// river bluff district in a flat county reading ten times its
	// county); the county's rating says little about one spot there.
	allocCap = 3.0
	// Quality of the terrain evidence: the repaired SRTM30_PLUS grid
	// (about 2 km) sees mountain fronts and canyons but smooths slopes;
	// ETOPO5 (about 9 km, Alaska, Hawaii and the territories) smooths
	// them far more.
	qualityFineGrid   = 0.7
	qualityCoarseGrid = 0.45
	// coarseCellKm separates the two grids by their cell size.
	coarseCellKm = 4.0
	// gentleSlopeDeg: below this slope within 2 km on the fine grid
	// (about 17 m a km) the ground is rolling, whatever its relief
	// (excessAt); about four residents in five live on gentler ground.
	gentleSlopeDeg = 1.0
)

// Ratings are the NRI rating classes that get a pooled prior of their own;
// every other rating ("Insufficient Data", "No Rating", "Not Applicable")
// and a county missing from the NRI table get the national ratio, 1.
var Ratings = []string{"Very High", "Relatively High", "Relatively Moderate", "Relatively Low", "Very Low"}

// Exposure is what the report ratio needs beside the catalog: the residents
// around a site, the county each event lies in, and the county's NRI
// landslide rating.
type Exposure struct {
	Residents *population.Profiles // block-group residents, by county
	CountyOf  population.CountyOf  // the county an event lies in
	NRI       *nri.Table           // county LNDS ratings for the prior and scores to allocate
	Terrain   Terrain              // slope and relief at a site
}

// Terrain is what the module reads of the elevation model
// (internal/risk/terrain.Model).
type Terrain interface {
	Elevation(p geo.Point) (terrain.Sample, bool)
	Slope(p geo.Point, radiusKm float64) (terrain.Sample, bool)
	Relief(p geo.Point, radiusKm float64) (terrain.Sample, bool)
}

// Class is one NRI rating class's pool: the counted events in its counties,
// their residents, and the prior ratio mu that the pool gives.
type Class struct {
	Rating    string
	Counties  int
	Events    int
	Residents float64
	Mu        float64
}

// Module is the loaded landslide module. It is immutable and safe for
// concurrent use.
type Module struct {
	ix      *geo.PointIndex
	counted []bool // event i lies in a county with residents: it counts in O
	rows    int
	skipped int // rows without usable coordinates

	res    *geo.CellIndex // pooled resident cells
	resPts []geo.Point
	resPop []float64

	events    int     // events counted in O anywhere
	residents float64 // residents of the counties with residents
	rate      float64 // r0: events per resident
	classes   []Class
	ratings   *nri.Table
	county    map[string]float64 // county FIPS -> mu_c, shrunk toward its class
	inCounty  map[string]int     // county FIPS -> counted events in it

	terrain Terrain
	// excessMean is, per county, the residents' mean relief above
	// reliefFloorM at their block-group centres: the denominator of the
	// terrain allocation.
	excessMean map[string]float64
}

// Load reads the Global Landslide Catalog export from the data directory
// and computes the national rate of reports per resident and the
// rating-class priors from ex.
func Load(fsys fs.FS, ex Exposure) (*Module, error) {
	if ex.Residents == nil || ex.CountyOf == nil || ex.NRI == nil || ex.Terrain == nil {
		return nil, errors.New("landslide: residents, county locator, NRI table and terrain are all needed")
	}
	t, err := data.OpenTable(fsys, data.Path(sourceID), "latitude", "longitude", "location_accuracy", "landslide_category")
	if err != nil {
		return nil, err
	}
	defer t.Close()
	m := &Module{}
	var pts []geo.Point
	for t.Scan() {
		// Free-text exports carry the odd row with a blank or mangled
		// coordinate; one such row is no reason to refuse the whole layer.
		lat, err1 := strconv.ParseFloat(t.String("latitude"), 64)
		lon, err2 := strconv.ParseFloat(t.String("longitude"), 64)
		if err1 != nil || err2 != nil || !(lat >= -90 && lat <= 90) || !(lon >= -180 && lon <= 180) {
			m.skipped++
			continue
		}
		if !kept(t.String("landslide_category"), t.String("location_accuracy")) {
			continue
		}
		pts = append(pts, geo.Point{Lat: lat, Lon: lon})
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	m.rows = t.Rows()
	m.ix = geo.NewPointIndex(pts, 0.25)

	// Events per county, where the county has residents.
	perCounty := map[string]int{}
	m.counted = make([]bool, len(pts))
	for i, p := range pts {
		if f, ok := ex.CountyOf(p); ok && ex.Residents.Residents(f) > 0 {
			m.counted[i] = true
			perCounty[f]++
			m.events++
		}
	}
	counties := ex.Residents.Counties()
	for _, f := range counties {
		m.residents += ex.Residents.Residents(f)
	}
	if m.residents <= 0 {
		return nil, errors.New("landslide: no county has residents")
	}
	m.rate = float64(m.events) / m.residents

	// Rating-class pools, each shrunk toward the national ratio 1 with the
	// same prior strength, so a thin class cannot give a prior of 0.
	byRating := map[string]*Class{}
	for _, r := range Ratings {
		byRating[r] = &Class{Rating: r}
	}
	for _, f := range counties {
		if c := byRating[ex.NRI.Hazard(f, nriCode).Rating]; c != nil {
			c.Counties++
			c.Events += perCounty[f]
			c.Residents += ex.Residents.Residents(f)
		}
	}
	for _, r := range Ratings {
		c := byRating[r]
		c.Mu = (float64(c.Events) + PriorStrength) / (m.rate*c.Residents + PriorStrength)
		m.classes = append(m.classes, *c)
	}
	m.ratings = ex.NRI
	// County priors: each county's own reports over its residents, shrunk
	// toward its rating class's prior with the same strength, so a county
	// of many residents and no reports (Harris, Texas) is not lifted by a
	// loss-based rating, and one with a handful of reports among few
	// residents does not soar.
	m.county = make(map[string]float64, len(counties))
	m.inCounty = perCounty
	for _, f := range counties {
		m.county[f] = Posterior(float64(perCounty[f]), m.rate*ex.Residents.Residents(f), m.classPrior(f), PriorStrength)
	}
	m.resPts, m.resPop = poolResidents(ex.Residents.Index())
	b := geo.NewCellIndexBuilder(0.1)
	for i, p := range m.resPts {
		b.Add(int32(i), geo.PointBox(p))
	}
	m.res = b.Build()
	m.terrain = ex.Terrain
	m.excessMean = countyExcessRelief(ex.Residents, m.excessAt)
	return m, nil
}

// countyExcessRelief is, per county, the population-weighted mean relief
// above reliefFloorM over the county's residents, at the block-group
// centres located in it: the county's landslide record is shared among
// its residents by how hilly each one's ground is, so that over the county
// the allocated values average to the county's score. Each block group's
// county is the profiles' own, so that no centre is located again.
func countyExcessRelief(ps *population.Profiles, excessAt func(geo.Point) (float64, bool)) map[string]float64 {
	x := ps.Index()
	n := x.Len()
	fips := make([]string, n)
	excess := make([]float64, n)
	population.Parallel(n, func(i int) {
		f, _ := ps.BlockGroup(i)
		if f == "" {
			return
		}
		p, _ := x.Centre(i)
		if e, ok := excessAt(p); ok {
			fips[i], excess[i] = f, e
		}
	})
	sum, pop := map[string]float64{}, map[string]float64{}
	for i, f := range fips {
		if f == "" {
			continue
		}
		_, n := x.Centre(i)
		sum[f] += n * excess[i]
		pop[f] += n
	}
	out := make(map[string]float64, len(sum))
	for f, s := range sum {
		if pop[f] > 0 {
			out[f] = s / pop[f]
		}
	}
	return out
}

// excessAt is the relief above the plains at p: the local relief less
// reliefFloorM where the ground is hilly, 0 on plains. Ground is hilly
// where it has both the height to fall, relief above reliefFloorM within
// 5 km, and the steepness, a slope of gentleSlopeDeg or more within 2 km
// on the fine grid: a broad valley with 100 m of relief spread over 5 km
// (downtown Tulsa, Kansas City) is rolling land, not slide terrain, at
// the grid's resolution. On the coarse grid, whose 9 km cells smooth
// slopes several-fold, relief alone decides.
func (m *Module) excessAt(p geo.Point) (float64, bool) {
	rl, ok := m.relief(p)
	if !ok {
		return 0, false
	}
	if rl.Metres <= reliefFloorM {
		return 0, true
	}
	sl, ok := m.slope(p)
	if !ok {
		return 0, false
	}
	return excessOf(rl, sl), true
}

// excessOf is the relief above the plains of ground with relief rl and
// slope sl (excessAt).
func excessOf(rl, sl terrain.Sample) float64 {
	if rl.Metres <= reliefFloorM || (rl.CellKm <= coarseCellKm && sl.Metres < gentleSlopeDeg) {
		return 0
	}
	return rl.Metres - reliefFloorM
}

// relief is the local relief at p: within reliefRadiusKm on the fine grid;
// on the coarse grid, whose cells are wider than that radius, within one
// and a half cells, so that the neighbouring cells are seen at all.
func (m *Module) relief(p geo.Point) (terrain.Sample, bool) {
	r, ok := m.terrain.Relief(p, reliefRadiusKm)
	if ok && r.CellKm > coarseCellKm {
		r, ok = m.terrain.Relief(p, reliefRadius(r.CellKm))
	}
	return r, ok
}

// reliefRadius is the radius the relief is read within on a grid of
// cellKm (relief): what labels and notes must say.
func reliefRadius(cellKm float64) float64 {
	if cellKm > coarseCellKm {
		return 1.5 * cellKm
	}
	return reliefRadiusKm
}

// slope is the steepest slope near p: within slopeRadiusKm on the fine
// grid, within one cell on the coarse grid.
func (m *Module) slope(p geo.Point) (terrain.Sample, bool) {
	s, ok := m.terrain.Slope(p, slopeRadiusKm)
	if ok && s.CellKm > coarseCellKm {
		s, ok = m.terrain.Slope(p, s.CellKm)
	}
	return s, ok
}

// ExcessMean is county fips's residents' mean relief above the plains'
// floor, in metres, and whether the county has residents.
func (m *Module) ExcessMean(fips string) (float64, bool) {
	v, ok := m.excessMean[fips]
	return v, ok
}

// poolResidents sums block-group residents into residentCellDeg cells, each
// placed at its residents' mean position, in a fixed order.
func poolResidents(x *population.Index) ([]geo.Point, []float64) {
	type cell struct{ pop, lat, lon float64 }
	type key struct{ i, j int32 }
	cells := map[key]*cell{}
	for i := 0; i < x.Len(); i++ {
		p, n := x.Centre(i)
		k := key{int32(math.Floor(p.Lat / residentCellDeg)), int32(math.Floor(p.Lon / residentCellDeg))}
		c := cells[k]
		if c == nil {
			c = &cell{}
			cells[k] = c
		}
		c.pop += n
		c.lat += n * p.Lat
		c.lon += n * p.Lon
	}
	keys := make([]key, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		return keys[a].i < keys[b].i || (keys[a].i == keys[b].i && keys[a].j < keys[b].j)
	})
	pts := make([]geo.Point, 0, len(keys))
	pop := make([]float64, 0, len(keys))
	for _, k := range keys {
		c := cells[k]
		pts = append(pts, geo.Point{Lat: c.lat / c.pop, Lon: c.lon / c.pop})
		pop = append(pop, c.pop)
	}
	return pts, pop
}

// Posterior is the shrunk ratio of observed to expected reports: the mean
// of a gamma(a, a/mu) prior on the ratio updated with a Poisson count O of
// expectation ratio * E. With no reports and no residents it is mu; with
// O and E large it tends to O / E.
func Posterior(o, e, mu, a float64) float64 { return (o + a) / (e + a/mu) }

// kept reports whether an event counts: a landslide (not a snow avalanche)
// placed to within maxAccuracyKm. "exact", "unknown" and blank accuracies
// are kept: most such rows are geocoded street addresses.
func kept(category, accuracy string) bool {
	if category == "snow_avalanche" {
		return false
	}
	if km, ok := strings.CutSuffix(accuracy, "km"); ok {
		v, err := strconv.ParseFloat(km, 64)
		return err != nil || v <= maxAccuracyKm
	}
	return true
}

// Name implements hazard.Module.
func (m *Module) Name() string { return hazard.Landslide }

// Sources implements hazard.Module.
func (m *Module) Sources() []string {
	return []string{terrain.SourceSRTM, terrain.SourceETOPO5, nri.SourceID, sourceID}
}

// Rows implements hazard.Module: catalog rows read (all countries).
func (m *Module) Rows() map[string]int { return map[string]int{sourceID: m.rows} }

// Events is the number of events indexed for the counts.
func (m *Module) Events() int { return m.ix.Len() }

// Skipped is the number of rows dropped for lack of a usable coordinate.
func (m *Module) Skipped() int { return m.skipped }

// Rate is r0, the national rate: events counted in O (those in a county
// with residents) per resident of those counties, with both totals.
func (m *Module) Rate() (perResident float64, events int, residents float64) {
	return m.rate, m.events, m.residents
}

// Classes returns the NRI rating-class pools and their priors, in the
// order of Ratings.
func (m *Module) Classes() []Class { return append([]Class(nil), m.classes...) }

// Prior is mu for county fips: the county's own ratio of reports to
// residents shrunk toward its NRI rating class's pooled ratio, or that
// class prior where the county has no residents counted.
func (m *Module) Prior(fips string) float64 {
	if mu, ok := m.county[fips]; ok {
		return mu
	}
	return m.classPrior(fips)
}

// classPrior is county fips's NRI rating class's pooled ratio, or 1.
func (m *Module) classPrior(fips string) float64 {
	rating := m.ratings.Hazard(fips, nriCode).Rating
	for _, c := range m.classes {
		if c.Rating == rating {
			return c.Mu
		}
	}
	return 1
}

// weightedResidents sums the pooled residents within 60 km of p weighted by
// exp(-d / 10 km). Distances are taken in the plane tangent at p: out to
// 60 km they differ from great-circle distances by well under 0.1%, and
// the sum visits a few hundred cells per site.
func (m *Module) weightedResidents(p geo.Point) float64 {
	const r2 = densityRadiusKm * densityRadiusKm
	plane := geo.TangentAt(p)
	var w float64
	m.res.Near(p, densityRadiusKm, func(i int32) {
		if d2 := plane.Km2(m.resPts[i]); d2 <= r2 {
			w += m.resPop[i] * math.Exp(-math.Sqrt(d2)/densityScaleKm)
		}
	})
	return w
}

// Measure implements hazard.Module.
func (m *Module) Measure(site hazard.Site) hazard.Measurement {
	p := geo.Point{Lat: site.Lat, Lon: site.Lon}
	n := 0
	nearest := -1.0
	density, o := 0.0, 0.0
	m.ix.Within(p, densityRadiusKm, func(i int, d float64) {
		w := math.Exp(-d / densityScaleKm)
		density += w
		if m.counted[i] {
			o += w
		}
		if d <= countRadiusKm {
			n++
		}
		if nearest < 0 || d < nearest {
			nearest = d
		}
	})
	density /= catalogYears
	e := m.rate * m.weightedResidents(p)
	mu := m.Prior(site.CountyFIPS)
	ratio := Posterior(o, e, mu, PriorStrength)
	if nearest < 0 {
		// Only the wider search when nothing is close: a 100 km query
		// around Portland would measure the distance to ~1,000 events.
		if i, d := m.ix.Nearest(p, nearestRadiusKm); i >= 0 {
			nearest = d
		}
	}
	near := hazard.Indicator{
		ID:         IndicatorNearest,
		Label:      "Distance to the nearest reported landslide (NASA catalog, 1988-2017)",
		Unit:       "km",
		Source:     sourceID,
		Peril:      hazard.PerilLandslide,
		Resolution: hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "news-reported events"},
	}
	if nearest >= 0 {
		near.Value = roundTenth(nearest)
	} else {
		near.Value = nearestRadiusKm
		near.Text = "none within 100 km"
	}
	news := []hazard.Indicator{
		{
			ID:         IndicatorRatio,
			Label:      "Reported landslides relative to the people around who could report them, shrunk toward the county's rate (1 = the national rate of reports per resident; NASA catalog of news and disaster reports, not a susceptibility measure)",
			Value:      ratio,
			Unit:       "times the national rate",
			Source:     sourceID,
			Peril:      hazard.PerilLandslide,
			Resolution: hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "news-reported events within 60 km against the residents around them, both weighted by distance"},
			Ranked:     true,
		},
		{
			ID:         IndicatorDensity,
			Label:      "Distance-weighted density of reported landslides: sum over events within 60 km of exp(-distance / 10 km), per year of the 1988-2017 catalog (news and disaster reports; not a susceptibility measure)",
			Value:      density,
			Unit:       "weighted reports per year",
			Source:     sourceID,
			Peril:      hazard.PerilLandslide,
			Resolution: hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "news-reported events, weighted by distance out to 60 km"},
			Ranked:     true,
		},
		{
			ID:         IndicatorCount,
			Label:      "Reported landslide events within 25 km, 1988-2017 (NASA catalog of news and disaster reports; not a susceptibility measure)",
			Value:      float64(n),
			Unit:       "count",
			Source:     sourceID,
			Peril:      hazard.PerilLandslide,
			Resolution: hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "news-reported events within 25 km"},
			Ranked:     true,
		},
		near,
	}
	notes := []string{note(n)}
	if _, counted := m.county[site.CountyFIPS]; counted {
		notes = append(notes, ratioNote(o, e, mu))
	} else {
		// No residents are counted in this county (the Virgin Islands,
		// Guam, the Northern Mariana Islands and American Samoa have no
		// block-group centres): a ratio would be the prior alone.
		news = news[1:]
		notes = append(notes, noResidentsNote)
	}
	ins, quality, tnotes := m.measureTerrain(p, site.CountyFIPS)
	return hazard.Measurement{Indicators: append(ins, news...), Quality: quality, Notes: append(tnotes, notes...)}
}

// measureTerrain is the scored part: slope, relief and the county's NRI
// landslide score allocated by terrain, with the quality of the grid they
// come from. Outside both grids nothing is scored and the quality is that
// of reported events.
func (m *Module) measureTerrain(p geo.Point, fips string) ([]hazard.Indicator, float64, []string) {
	sl, okS := m.slope(p)
	rl, okR := m.relief(p)
	if !okS || !okR {
		return nil, quality, []string{"No terrain grid covers the site, so landslide susceptibility could not be estimated; the reported landslides below are context only."}
	}
	// ETOPO5's 9 km cells put many coastal and island sites at sea
	// (Pago Pago reads -1,100 m). Relief counts the sea as sea level, so
	// where any land cell lies within the radius the relief is still the
	// rise of the land from the shore; where none does, the grid says
	// nothing of the ground, and a relief of 0 would be a false "flat".
	if el, ok := m.terrain.Elevation(p); !ok || (el.CellKm > coarseCellKm && el.Metres <= 0 && rl.Metres <= 0) {
		return nil, quality, []string{coarseAtSeaNote}
	}
	q, grid := qualityFineGrid, fmt.Sprintf("terrain grid of about %.0f km (%s)", rl.CellKm, rl.Source)
	if rl.CellKm > coarseCellKm {
		q = qualityCoarseGrid
	}
	res := hazard.Resolution{Kind: hazard.ResGrid, Detail: grid}
	excess := excessOf(rl, sl)
	hillside := 0.0
	if excess > 0 {
		hillside = sl.Metres
	}
	ins := []hazard.Indicator{
		{
			ID:         IndicatorExcess,
			Label:      fmt.Sprintf("Relief above the plains: the local relief within %.0f km less %.0f m, where the ground also slopes %.0f degree or more within %.0f km (0 on plains and rolling land)", reliefRadius(rl.CellKm), reliefFloorM, gentleSlopeDeg, max(slopeRadiusKm, sl.CellKm)),
			Value:      math.Round(excess),
			Unit:       "m",
			Source:     rl.Source,
			Peril:      hazard.PerilLandslide,
			Resolution: res,
			Ranked:     true,
			Weight:     weightExcess,
		},
		{
			ID:         IndicatorHillside,
			Label:      fmt.Sprintf("Slope of hilly ground: the steepest slope within %.0f km where the relief above the plains is positive (0 on plains and rolling land)", max(slopeRadiusKm, sl.CellKm)),
			Value:      round2(hillside),
			Unit:       "degrees",
			Source:     sl.Source,
			Peril:      hazard.PerilLandslide,
			Resolution: res,
			Ranked:     true,
			Weight:     weightHillside,
		},
		{
			ID:         IndicatorSlope,
			Label:      fmt.Sprintf("Steepest ground slope within %.0f km, on a terrain grid of about %.0f km (which smooths slopes: 3 degrees is a mountain front or canyon side)", max(slopeRadiusKm, sl.CellKm), sl.CellKm),
			Value:      round2(sl.Metres),
			Unit:       "degrees",
			Source:     sl.Source,
			Peril:      hazard.PerilLandslide,
			Resolution: res,
			Ranked:     true,
		},
		{
			ID:         IndicatorRelief,
			Label:      fmt.Sprintf("Local relief: highest minus lowest ground within %.0f km of the site (the height a slope failure can fall)", reliefRadius(rl.CellKm)),
			Value:      math.Round(rl.Metres),
			Unit:       "m",
			Source:     rl.Source,
			Peril:      hazard.PerilLandslide,
			Resolution: res,
			Ranked:     true,
		},
	}
	notes := []string{terrainNote(sl, rl)}
	score := m.ratings.Hazard(fips, nriCode)
	if score.OK {
		// A county none of whose residents live on hilly ground (or with
		// no residents counted) has no mean to share its record by: a
		// hilly site there is the county's hilly ground and takes the
		// county's score.
		countyMean := m.excessMean[fips]
		if countyMean <= 0 {
			countyMean = excess
		}
		v := 0.0
		if excess > 0 {
			v = score.Score * min(allocCap, excess/countyMean)
		}
		ins = append(ins, hazard.Indicator{
			ID: IndicatorAllocated,
			Label: fmt.Sprintf("FEMA NRI county landslide risk score (%.1f) allocated by terrain: times the site's relief above %.0f m over the county residents' average (%.0f m), at most %.0f times; 0 on ground flatter than that",
				score.Score, reliefFloorM, countyMean, allocCap),
			Value:      round2(v),
			Unit:       "score",
			Source:     nri.SourceID,
			Peril:      hazard.PerilLandslide,
			Resolution: hazard.Resolution{Kind: hazard.ResCountyAllocated, Detail: "county NRI score, allocated by relief within 5 km at the residents' block-group centres"},
			Ranked:     true,
			Weight:     weightAllocated,
		})
	} else {
		notes = append(notes, "FEMA's National Risk Index has no landslide score for this county, so only the terrain is scored.")
	}
	return ins, q, notes
}

// coarseAtSeaNote says why a coastal or island site off the fine grid has
// no terrain score.
const coarseAtSeaNote = "The only terrain grid here (ETOPO5, about 9 km) places the site at sea, as it does much of the coast of small islands, so the ground's slope and relief could not be measured; landslide susceptibility is not estimated and the reported landslides below are context only."

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// terrainNote states the terrain evidence in words.
func terrainNote(sl, rl terrain.Sample) string {
	var ground string
	switch {
	case rl.Metres < reliefFloorM:
		ground = "plains: no slope the terrain grid can see"
	case sl.Metres >= SteepSlopeDeg:
		ground = "steep ground"
	default:
		ground = "hilly ground"
	}
	return fmt.Sprintf("Terrain around the site: %s (steepest slope %.1f degrees within %.0f km, relief %.0f m within %.0f km, on a grid of about %.0f km; bluffs, banks and cuts smaller than the grid are not seen).",
		ground, sl.Metres, max(slopeRadiusKm, sl.CellKm), rl.Metres, reliefRadius(rl.CellKm), rl.CellKm)
}

// SteepSlopeDeg is the slope on the 2 km grid that the high-priority
// recommendation needs (internal/risk/registry.go) and the notes call
// steep: a mountain front or a canyon side, reached by about the steepest
// 3% of residents' sites.
const SteepSlopeDeg = 3.0

// noResidentsNote explains why no report ratio is shown.
const noResidentsNote = "The Census centres of population used to count the residents around a site do not cover this area, so reports cannot be set against the people who could report them; the density of reports follows where people are."

func roundTenth(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }

func note(n int) string {
	events := "reported landslides"
	if n == 1 {
		events = "reported landslide"
	}
	return "NASA's catalog lists " + strconv.Itoa(n) + " " + events +
		" within 25 km (1988-2017); these are media-reported events, not a susceptibility map."
}

// ratioNote states the ratio's parts, so a reader can see whether reports
// or residents drive it.
func ratioNote(o, e, mu float64) string {
	return "Distance-weighted reports within 60 km: " + strconv.FormatFloat(o, 'f', 1, 64) +
		", against " + strconv.FormatFloat(e, 'f', 1, 64) +
		" expected from the residents around at the national rate; small counts are shrunk toward " +
		strconv.FormatFloat(mu, 'f', 2, 64) + " times the national rate, the county's own reports per resident shrunk toward the pooled rate of counties with its NRI landslide rating."
}
