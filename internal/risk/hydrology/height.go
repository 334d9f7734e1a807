package hydrology

import (
	"fmt"
	"math"

	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
	"github.com/locrisk/locrisk/internal/risk/terrain"
)

var _ Ground = (*terrain.Model)(nil)

// GroundSample is one reading of the terrain grid: an elevation in metres,
// the catalog id of the grid it came from and the grid's cell size in km
// (about 1.9 for SRTM30_PLUS in the conterminous states, about 9 for
// ETOPO5 elsewhere).
type GroundSample = terrain.Sample

// Ground is the terrain the module reads heights from: the engine passes
// the terrain model (*terrain.Model) through UseGround; tests pass a
// fake. ok is false outside the grids.
type Ground interface {
	// Elevation is the ground elevation at p.
	Elevation(p geo.Point) (GroundSample, bool)
	// Lowest is the lowest ground within radiusKm of p.
	Lowest(p geo.Point, radiusKm float64) (GroundSample, bool)
	// Relief is the highest less the lowest ground within radiusKm of p.
	Relief(p geo.Point, radiusKm float64) (GroundSample, bool)
}

// UseGround gives the module the terrain its height indicators read. Call
// it once, after Load and before any Measure; it must not be called
// concurrently with Measure. Without a ground the height indicators are
// absent and no proximity index is tempered.
func (m *Module) UseGround(g Ground) { m.ground = g }

// Height above water, on the terrain grid (docs/methodology.md,
// "Hydrology module", "Height above the river").
const (
	// riverLevelKm is the radius around the nearest point of a river line
	// (or around a gauge) whose lowest ground stands for the water's level:
	// about one grid cell, so the channel's own cell is always inside it,
	// while a valley farther away is not.
	riverLevelKm = 2.0
	// heightFreeM: heights up to this change nothing. On a 2 km grid a
	// riverbank town on open ground reads a few to 15 m above its river
	// (each cell averages the channel with its banks), so smaller heights
	// cannot be told from a floodplain. In rough ground the grid's error
	// grows with the relief: a town on a narrow valley floor shares its
	// cells with the valley walls, and the lowest cell near the river or
	// gauge may lie downstream, tens of metres a km lower on a mountain
	// stream. So the free height is the largest of 15 m, half the relief
	// of the ground around the site within the distance to the water (at
	// least reliefMinKm) and half the relief within reliefMinKm of the
	// water point (heightAllowance): only a site standing in the upper half
	// of the ground between it and the water, by more than 15 m, is
	// tempered, a ridge or upland and not a valley floor.
	heightFreeM = 15.0
	// reliefMinKm: the relief is read over at least two grid cells each
	// way; within one cell of a point the 2 km grid has too few cells to
	// show the valley walls (Gatlinburg, TN: 32 m of relief within 2 km,
	// about 650 m within 5 km).
	reliefMinKm = 4.0
	// upperHalf: a site is tempered only where its own ground stands in the
	// upper half of the ground around it (from the lowest to the highest
	// within the distance to the water, at least reliefMinKm): a ridge, a
	// plateau rim or an upland. A town on a valley floor, whose 2 km cell
	// averages the valley walls in and so reads tens to hundreds of metres
	// above its river (Jamestown and Lyons, CO; Gatlinburg, TN), stands in
	// the lower half of its surroundings and is never tempered.
	upperHalf = 0.5
	// gaugeGradientMPerKm: a gauge is one point of a stream that may pass
	// the site upstream of it, where the water is higher; a mountain
	// stream falls up to about 50 m a km, so a gauge d km away leaves at
	// least 50 m × d free (Jamestown, CO lies on Left Hand Creek, about
	// 240 m above the gauge 4.6 km downstream).
	gaugeGradientMPerKm = 50.0
	// heightScaleM: above heightFreeM the proximity indices fall by e for
	// every 15 m, the rise of a large river flood over its floodplain (a
	// 1% flood is a few metres deep on most rivers; record floods on the
	// largest reach 10-15 m). A site 45 m above its river keeps 14%, 60 m
	// 5%, 100 m under 0.4%.
	heightScaleM = 15.0
	// indexFloor: a tempered index below this counts as 0, no exposure.
	// It is below every untempered value (the smallest, 0.8 × exp(-5/1.5)
	// = 0.028 at the edge of a level-3 major river's reach, is rounded
	// down to it), so height only ever zeroes a site that it has tempered
	// to less than the distance alone would give at the edge of the reach.
	indexFloor = 0.025
)

// heightFactor is 1 up to the free height (heightFreeM, or more in rough
// ground) and exp(-(h - free) / heightScaleM) above: smooth, continuous,
// 1 for sites below their river.
func heightFactor(h, free float64) float64 {
	free = math.Max(free, heightFreeM)
	if h <= free {
		return 1
	}
	return math.Exp(-(h - free) / heightScaleM)
}

// tempered is an index times the height factor, 0 below indexFloor.
func tempered(idx, factor float64) float64 {
	v := idx * factor
	if v < indexFloor {
		return 0
	}
	return v
}

// height is the site's height above water: the site's elevation minus
// the lowest ground within riverLevelKm of the water point (the nearest
// point of a river line, or a gauge). ok is false where the terrain does
// not cover the site or the water point.
type height struct {
	m      float64 // metres, positive above the water
	free   float64 // the free height at the site (heightAllowance)
	valley bool    // the site stands in the lower half of the ground around it: never tempered
	relief float64 // metres of relief of the ground around the site (highest less lowest)
	source string  // terrain catalog id
	cellKm float64 // the coarser grid cell of the two readings
	ok     bool
}

// siteGround is the terrain at the site, read once per Measure.
type siteGround struct {
	p    geo.Point
	elev GroundSample
	ok   bool
}

func (m *Module) readSite(p geo.Point) siteGround {
	if m.ground == nil {
		return siteGround{}
	}
	e, ok := m.ground.Elevation(p)
	return siteGround{p: p, elev: e, ok: ok}
}

// heightAllowance is the free height: the larger of heightFreeM and the
// fall a stream may have between the site and a gauge. The relief of the
// ground no longer widens it: a valley-floor site, whose reading the
// valley walls lift, is not tempered at all (upperHalf), so what remains
// to allow for is the grid's noise on open ground.
func heightAllowance(streamFallM float64) float64 {
	return max(heightFreeM, streamFallM)
}

// heightAbove is the site's height above the water at a point of a river
// or a gauge. The water's level is the lowest ground within riverLevelKm of
// the point, but not below sea level: the grid holds the sea floor, and a
// river reaches the sea at 0 m.
// km is the distance from the site to the water point; gauge says the
// point is a gauge (gaugeGradientMPerKm).
func (m *Module) heightAbove(site siteGround, water geo.Point, km float64, gauge bool) height {
	if m.ground == nil || !site.ok {
		return height{}
	}
	w, ok := m.ground.Lowest(water, riverLevelKm)
	if !ok {
		return height{}
	}
	var siteRelief, fall float64
	around := math.Min(math.Max(km, reliefMinKm), heightReachKm)
	if r, ok := m.ground.Relief(site.p, around); ok {
		siteRelief = r.Metres
	}
	// In the lower half of the ground around it, or within half a grid
	// cell of the water, where the site and the water share the grid's
	// cells and the grid cannot give the one's height above the other
	// (Owego, NY, 0.3 km from the Susquehanna, reads 157 m above it).
	valley := true
	if low, ok := m.ground.Lowest(site.p, around); ok && siteRelief > 0 && km >= site.elev.CellKm/2 {
		valley = (site.elev.Metres-math.Max(low.Metres, 0))/siteRelief <= upperHalf
	}
	if gauge {
		fall = gaugeGradientMPerKm * km
	}
	return height{m: site.elev.Metres - math.Max(w.Metres, 0), free: heightAllowance(fall),
		valley: valley, relief: siteRelief, source: site.elev.Source, cellKm: math.Max(site.elev.CellKm, w.CellKm), ok: true}
}

// factor is the height factor, 1 without a height.
func (h height) factor() float64 {
	if !h.ok || h.valley {
		return 1
	}
	return heightFactor(h.m, h.free)
}

// resolution describes the terrain grid a height was read on.
func (h height) resolution() hazard.Resolution {
	return hazard.Resolution{Kind: hazard.ResGrid, Detail: fmt.Sprintf("terrain grid, about %s cells; a height on it tells a ridge or a town high above a river from a riverbank, not a bluff from the floodplain below it", cellText(h.cellKm))}
}

func cellText(km float64) string {
	if km < 10 {
		return fmt.Sprintf("%.1f km", km)
	}
	return fmt.Sprintf("%.0f km", km)
}
