package coverage

import (
	"math"
	"sort"

	"github.com/locrisk/locrisk/internal/risk/geo"
)

// buildReference makes the national reference set from the Gazetteer rows:
// one point per county that has a usable polygon, sorted by FIPS.
//
// Left out are the 2019 codes that the 2023 boundaries no longer have
// (Connecticut's eight old counties, now planning regions, and Alaska's
// Valdez-Cordova, now Chugach and Copper River) and counties whose outline
// the 1:10M generalisation collapsed to nothing (Falls Church city, 51610).
//
// The Census internal point lies inside the county's full legal area, which
// for coastal and Great Lakes counties includes water that the cartographic
// outline clips away, so about 40 of them are in a lake or the sea, and a few
// more fall just across a generalised county line. Those are moved to the
// nearest place just inside the county's own outline, so that every
// reference point locates to its own county and the reference set samples
// land, as report locations do. moved counts them.
func (l *Layer) buildReference(gaz []gazRow) (ref []RefPoint, moved int) {
	for _, g := range gaz {
		ci, ok := l.byFIPS[g.geoid]
		if !ok || len(l.rings[ci]) == 0 {
			continue
		}
		p := g.pt
		if c, _, ok := l.Locate(p); !ok || c.FIPS != g.geoid {
			if q, ok := l.pointInside(ci, p); ok {
				p = q
				moved++
			} else {
				continue // no point found inside: cannot happen for a real polygon
			}
		}
		ref = append(ref, RefPoint{FIPS: g.geoid, Point: p})
	}
	sort.Slice(ref, func(i, j int) bool { return ref[i].FIPS < ref[j].FIPS })
	return ref, moved
}

// locatesTo reports whether (x, y) is inside county ci's outline and Locate
// puts it there.
func (l *Layer) locatesTo(ci int, x, y float64) bool {
	x = geo.NormalizeLon(x)
	if !l.inCounty(ci, x, y) {
		return false
	}
	c, _, ok := l.Locate(geo.Point{Lat: y, Lon: x})
	return ok && c == l.counties[ci]
}

// pointInside finds a point near p that Locate puts in county ci: first by
// stepping from p over the nearest point of the county's outline into the
// county, then, if that fails (the nearest point is a sharp corner), by the
// sample point of a grid over the county's rings that is nearest to p.
func (l *Layer) pointInside(ci int, p geo.Point) (geo.Point, bool) {
	ky := geo.KmPerDegLat
	kx := ky * math.Cos(p.Lat*math.Pi/180)
	px := p.Lon
	best := math.Inf(1)
	var bx, by, nx, ny float64 // nearest outline point (degrees) and its edge's normal (km)
	for _, r := range l.rings[ci] {
		n := len(r.pts)
		for k := range r.pts {
			a, b := r.pts[k], r.pts[(k+1)%n]
			ax := a.x - px
			for ax >= 180 {
				ax -= 360
			}
			for ax < -180 {
				ax += 360
			}
			x1, y1 := ax*kx, (a.y-p.Lat)*ky
			dx, dy := (b.x-a.x)*kx, (b.y-a.y)*ky
			t := 0.0
			if l2 := dx*dx + dy*dy; l2 > 0 {
				t = math.Max(0, math.Min(1, -(x1*dx+y1*dy)/l2))
			}
			cx, cy := x1+t*dx, y1+t*dy
			if d := cx*cx + cy*cy; d < best {
				best = d
				bx, by = px+cx/kx, p.Lat+cy/ky
				if h := math.Hypot(dx, dy); h > 0 {
					nx, ny = -dy/h, dx/h
				}
			}
		}
	}
	dist := math.Sqrt(best)
	for _, s := range []float64{0.05, 0.1, 0.2, 0.5, 1, 2, 4} {
		if dist > 1e-9 {
			// From p through the nearest outline point, onwards into the county.
			ux, uy := (bx-px)*kx/dist, (by-p.Lat)*ky/dist
			if x, y := bx+ux*s/kx, by+uy*s/ky; l.locatesTo(ci, x, y) {
				return geo.Point{Lat: y, Lon: geo.NormalizeLon(x)}, true
			}
		}
		for _, sign := range []float64{1, -1} {
			if x, y := bx+sign*nx*s/kx, by+sign*ny*s/ky; l.locatesTo(ci, x, y) {
				return geo.Point{Lat: y, Lon: geo.NormalizeLon(x)}, true
			}
		}
	}
	const n = 40
	found := false
	var q geo.Point
	bestKm := math.Inf(1)
	for _, r := range l.rings[ci] {
		for i := 0; i <= n; i++ {
			for j := 0; j <= n; j++ {
				x := r.minX + (r.maxX-r.minX)*(float64(i)+0.5)/(n+1)
				y := r.minY + (r.maxY-r.minY)*(float64(j)+0.5)/(n+1)
				if !l.locatesTo(ci, x, y) {
					continue
				}
				c := geo.Point{Lat: y, Lon: geo.NormalizeLon(x)}
				if d := geo.DistanceKm(p, c); d < bestKm {
					bestKm, q, found = d, c, true
				}
			}
		}
	}
	return q, found
}
