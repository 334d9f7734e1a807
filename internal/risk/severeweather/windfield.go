package severeweather

import (
	"fmt"
	"math"

	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// The hurricane wind hazard (docs/methodology.md, "Hurricane wind"): how
// often hurricane-force (64 kt) and major-hurricane (96 kt) sustained winds
// reached each cell of a 0.1-degree grid, from a wind field laid around
// every best-track position. It is computed once at load; a site reads its
// cell.

const (
	windCellDeg = 0.1
	ktMajor     = 96.0
	nmToKm      = 1.852
	ktToMS      = 0.514444
	// outerDecay is the exponent x of the wind's decay outside the radius
	// of maximum winds, V(r) = Vmax (Rmax/r)^x, where the best track gives
	// no wind radii (before 2004): the median of the exponents that carry
	// each 2004-2019 fix of 70 kt or more out to its analysed mean 64 kt
	// radius (2,336 fixes; quartiles 0.46 and 1.05), which a real-data
	// test recomputes.
	outerDecay = 0.67
	// decayFloorKt is the background wind a decaying storm tends to over
	// land in the Kaplan and DeMaria (1995) model: between two fixes of a
	// weakening storm the wind above this floor falls exponentially.
	decayFloorKt = 26.7
	stepHours    = 1.0 // positions are interpolated hourly between 6-hourly fixes
)

// windGrid counts, per cell, the storms whose modelled 64 kt and 96 kt winds
// reached the cell's centre.
type windGrid struct {
	basin            basin
	lat0, lon0       float64 // south-west corner
	rows, cols       int
	hurricane, major []uint16
}

// windDomains are the grids: the Gulf and Atlantic coasts with Puerto Rico
// and the Virgin Islands from the Atlantic record, and Hawaii and the south-
// west from the eastern and central Pacific record. Outside them no
// hurricane-force wind is on record at a US site.
func windDomains() []windGrid {
	return []windGrid{
		{basin: atlantic, lat0: 14, lon0: -106, rows: 36 * 10, cols: 47 * 10},
		{basin: pacific, lat0: 15, lon0: -162, rows: 11 * 10, cols: 12 * 10},
		{basin: pacific, lat0: 22, lon0: -125, rows: 20 * 10, cols: 19 * 10},
	}
}

// windFix is a best-track position with what the wind field needs.
type windFix struct {
	hour     float64 // hours since the storm's first fix
	lat, lon float64
	wind     float64    // maximum sustained wind, kt
	r64      [4]float64 // radius of 64 kt winds per quadrant NE, SE, SW, NW (km); all 0 when not analysed
	hasRadii bool
}

// radiusOfMaxWind is the radius of maximum winds (km) from the maximum wind
// and latitude, after Willoughby, Darling and Rahn (2006), eq. 7a:
// Rmax = 46.4 exp(-0.0155 Vmax + 0.0169 lat), Vmax in m/s.
func radiusOfMaxWind(windKt, lat float64) float64 {
	return 46.4 * math.Exp(-0.0155*windKt*ktToMS+0.0169*math.Abs(lat))
}

// reach is how far from the centre (km) the wind stays at or above kt when
// the maximum wind windKt is at rmax and decays as (rmax/r)^x outside it.
func reach(windKt, kt, rmax, x float64) float64 {
	if windKt < kt {
		return 0
	}
	return rmax * math.Pow(windKt/kt, 1/x)
}

// field is the wind field of one position: the reach of 64 kt winds per
// quadrant and of 96 kt winds.
type field struct {
	r64 [4]float64
	r96 float64
}

// fieldAt lays the wind field around a position. With analysed 64 kt radii
// (2004 on) they are used as they are, per quadrant, and the decay exponent
// that carries the maximum wind out to their mean sets the 96 kt reach;
// before 2004 both come from the parametric profile.
func fieldAt(p windFix) field {
	var f field
	if p.wind < hurricaneKt {
		return f
	}
	rmax := radiusOfMaxWind(p.wind, p.lat)
	x := outerDecay
	if p.hasRadii {
		f.r64 = p.r64
		mean, n := 0.0, 0
		for _, r := range p.r64 {
			if r > 0 {
				mean += r
				n++
			}
		}
		if n > 0 {
			mean /= float64(n)
			if mean > rmax*1.05 && p.wind > hurricaneKt {
				x = math.Log(p.wind/hurricaneKt) / math.Log(mean/rmax)
				x = math.Max(0.3, math.Min(1.5, x))
			}
		}
	} else {
		r := reach(p.wind, hurricaneKt, rmax, x)
		f.r64 = [4]float64{r, r, r, r}
	}
	f.r96 = reach(p.wind, ktMajor, rmax, x)
	return f
}

// interpolate returns the position h hours after a, between fixes a and b.
// Position and wind radii move linearly; the wind of a weakening storm
// decays exponentially towards decayFloorKt (Kaplan and DeMaria 1995), so
// the storm's own fixes, which NHC analyses from observations over land
// too, set the decay after landfall and the curve between them follows its
// shape; a strengthening storm's wind rises linearly.
func interpolate(a, b windFix, h float64) windFix {
	span := b.hour - a.hour
	if span <= 0 {
		return a
	}
	t := (h - a.hour) / span
	p := windFix{hour: h, lat: a.lat + t*(b.lat-a.lat), lon: a.lon + t*wrap180(b.lon-a.lon), hasRadii: a.hasRadii && b.hasRadii}
	p.lon = geo.NormalizeLon(p.lon)
	if b.wind < a.wind && a.wind > decayFloorKt && b.wind > decayFloorKt {
		p.wind = decayFloorKt + (a.wind-decayFloorKt)*math.Pow((b.wind-decayFloorKt)/(a.wind-decayFloorKt), t)
	} else {
		p.wind = a.wind + t*(b.wind-a.wind)
	}
	if p.hasRadii {
		for q := range p.r64 {
			p.r64[q] = a.r64[q] + t*(b.r64[q]-a.r64[q])
		}
	}
	return p
}

// addStorm lays the wind field of one storm's track over the grid and
// counts each cell once per storm for 64 kt and once for 96 kt. stamp
// records the last storm counted per cell and threshold.
func (g *windGrid) addStorm(fixes []windFix, id int32, stamp64, stamp96 []int32) {
	visit := func(p windFix) {
		f := fieldAt(p)
		reachKm := math.Max(math.Max(f.r64[0], f.r64[1]), math.Max(math.Max(f.r64[2], f.r64[3]), f.r96))
		if reachKm <= 0 {
			return
		}
		kx := geo.KmPerDegLat * math.Cos(p.lat*math.Pi/180)
		dLat, dLon := reachKm/geo.KmPerDegLat, reachKm/math.Max(kx, 1)
		r0 := int(math.Floor((p.lat - dLat - g.lat0) / windCellDeg))
		r1 := int(math.Floor((p.lat + dLat - g.lat0) / windCellDeg))
		c0 := int(math.Floor((wrap180(p.lon-g.lon0) - dLon) / windCellDeg))
		c1 := int(math.Floor((wrap180(p.lon-g.lon0) + dLon) / windCellDeg))
		r0, c0 = max(r0, 0), max(c0, 0)
		r1, c1 = min(r1, g.rows-1), min(c1, g.cols-1)
		for r := r0; r <= r1; r++ {
			dy := (g.lat0 + (float64(r)+0.5)*windCellDeg - p.lat) * geo.KmPerDegLat
			for c := c0; c <= c1; c++ {
				dx := wrap180(g.lon0+(float64(c)+0.5)*windCellDeg-p.lon) * kx
				d2 := dx*dx + dy*dy
				k := r*g.cols + c
				rq := f.r64[quadrant(dx, dy)]
				if d2 > rq*rq {
					continue // 96 kt winds lie inside the 64 kt ones
				}
				if stamp64[k] != id {
					stamp64[k] = id
					g.hurricane[k]++
				}
				if d2 <= f.r96*f.r96 && stamp96[k] != id {
					stamp96[k] = id
					g.major[k]++
				}
			}
		}
	}
	for i := range fixes {
		if i == 0 {
			visit(fixes[0])
			continue
		}
		a, b := fixes[i-1], fixes[i]
		if a.wind < hurricaneKt && b.wind < hurricaneKt {
			continue
		}
		for h := a.hour + stepHours; h < b.hour; h += stepHours {
			visit(interpolate(a, b, h))
		}
		visit(b)
	}
}

// quadrant is the storm-relative quadrant of an offset (east dx, north dy):
// 0 NE, 1 SE, 2 SW, 3 NW, the order of the HURDAT2 radii.
func quadrant(dx, dy float64) int {
	switch {
	case dx >= 0 && dy >= 0:
		return 0
	case dx >= 0:
		return 1
	case dy < 0:
		return 2
	}
	return 3
}

// buildWindGrids lays every rated storm over the domains of its basin.
func buildWindGrids(tracks []stormTrack) []windGrid {
	grids := windDomains()
	for gi := range grids {
		g := &grids[gi]
		n := g.rows * g.cols
		g.hurricane, g.major = make([]uint16, n), make([]uint16, n)
		stamp64, stamp96 := make([]int32, n), make([]int32, n)
		for i := range stamp64 {
			stamp64[i], stamp96[i] = -1, -1
		}
		for si, st := range tracks {
			if st.basin == g.basin {
				g.addStorm(st.fixes, int32(si), stamp64, stamp96)
			}
		}
	}
	return grids
}

// stormTrack is one rated storm's fixes for the wind field.
type stormTrack struct {
	basin basin
	fixes []windFix
}

// windAt returns the counts of storms with 64 kt and 96 kt winds at a point
// and the basin whose record covers it; ok is false outside every domain.
func windAt(grids []windGrid, lat, lon float64) (hurricane, major int, b basin, ok bool) {
	for i := range grids {
		g := &grids[i]
		r := int(math.Floor((lat - g.lat0) / windCellDeg))
		c := int(math.Floor(wrap180(lon-g.lon0) / windCellDeg))
		if r < 0 || r >= g.rows || c < 0 || c >= g.cols {
			continue
		}
		k := r*g.cols + c
		return int(g.hurricane[k]), int(g.major[k]), g.basin, true
	}
	return 0, 0, atlantic, false
}

// windResult is what the wind grid says about one point.
type windResult struct {
	hurricane, major int // storms with 64 kt / 96 kt winds at the point
	basin            basin
}

func newWindResult(n64, n96 int, b basin) windResult {
	return windResult{hurricane: n64, major: n96, basin: b}
}

// hurricaneProb is the annual probability of at least one storm bringing
// 64 kt winds, the storms counted as a Poisson process over the basin's
// rated years; majorProb the same for 96 kt.
func (w windResult) hurricaneProb() float64 {
	return 1 - math.Exp(-float64(w.hurricane)/w.basin.years())
}

func (w windResult) majorProb() float64 {
	return 1 - math.Exp(-float64(w.major)/w.basin.years())
}

// record names the best-track period the counts come from.
func (w windResult) record() string {
	if w.basin == pacific {
		return fmt.Sprintf("eastern and central Pacific best tracks %d-%d", pacificFirstYr, hurdatLastYr)
	}
	return fmt.Sprintf("Atlantic best tracks %d-%d", atlanticFirstYr, hurdatLastYr)
}

func (w windResult) note() string {
	years := int(w.basin.years())
	if w.hurricane == 0 {
		return fmt.Sprintf("No hurricane-force winds reached this site in the modelled wind fields of the %s (%d years).", w.record(), years)
	}
	s := fmt.Sprintf("Hurricane-force winds (64 kt+) reached this site in %s of the %s, about once in %s years",
		plural(w.hurricane, "storm", "storms"), w.record(), hazard.ReturnPeriodText(1/w.hurricaneProb()))
	if w.major > 0 {
		s += fmt.Sprintf("; major-hurricane winds (96 kt+) in %d, about once in %s years", w.major, hazard.ReturnPeriodText(1/w.majorProb()))
	} else {
		s += "; major-hurricane winds (96 kt+) in none of them"
	}
	return s + "."
}

// HurricaneWindChance is the annual chance of hurricane-force (64 kt)
// winds at a point from the modelled wind grids. Between 14 and 50 degrees
// north and 60 and 130 west, the basins' records cover the point and a
// point outside the grids had no such winds (0); elsewhere (Alaska, the
// western and southern Pacific territories) ok is false: no record
// covers it. Other modules use it: the hydrology module combines it with
// coastal proximity for storm surge.
func (m *Module) HurricaneWindChance(lat, lon float64) (float64, bool) {
	lon = normLon(lon)
	n64, n96, b, ok := windAt(m.winds, lat, lon)
	switch {
	case ok:
		return newWindResult(n64, n96, b).hurricaneProb(), true
	case lat >= 14 && lat <= 50 && lon >= -130 && lon <= -60:
		return 0, true
	}
	return 0, false
}
