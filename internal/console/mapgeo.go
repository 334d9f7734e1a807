package console

import (
	"math"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/geo"
)

// The console's maps are SVG paths computed here from the boundary rings,
// once per map: projected to map units, simplified to what a screen shows
// (Douglas-Peucker to a fraction of a unit) and written with one decimal.

// xy is a point in map units, y pointing down as in SVG.
type xy struct{ x, y float64 }

const deg = math.Pi / 180

// albers is the spherical Albers equal-area conic projection, the usual
// projection of maps of the United States: areas are true, so no state
// looks larger than it is. Its parameters are the standard parallels, the
// latitude of origin and the central meridian; x and y are in earth radii,
// y pointing north. The page's script inverts it to turn a click into a
// coordinate (address.js, fromAlbers), from the parameters the map gives.
type albers struct {
	lat1, lat2, lat0, lon0 float64
	n, c, rho0             float64
}

func newAlbers(lat1, lat2, lat0, lon0 float64) albers {
	a := albers{lat1: lat1, lat2: lat2, lat0: lat0, lon0: lon0}
	s1 := math.Sin(lat1 * deg)
	a.n = (s1 + math.Sin(lat2*deg)) / 2
	a.c = math.Cos(lat1*deg)*math.Cos(lat1*deg) + 2*a.n*s1
	a.rho0 = math.Sqrt(a.c-2*a.n*math.Sin(lat0*deg)) / a.n
	return a
}

// project maps a coordinate; longitudes are taken relative to the central
// meridian, so Alaska's Aleutians west of 180° stay beside the rest.
func (a albers) project(p geo.Point) (x, y float64) {
	rho := math.Sqrt(a.c-2*a.n*math.Sin(p.Lat*deg)) / a.n
	theta := a.n * geo.NormalizeLon(p.Lon-a.lon0) * deg
	return rho * math.Sin(theta), a.rho0 - rho*math.Cos(theta)
}

// simplify keeps the points of a closed ring that matter at tolerance tol
// (Douglas-Peucker, on the ring cut at its first point and at the point
// farthest from it).
func simplify(ring []xy, tol float64) []xy {
	n := len(ring)
	if n < 4 {
		return ring
	}
	far, best := 0, -1.0
	for i, p := range ring {
		if d := (p.x-ring[0].x)*(p.x-ring[0].x) + (p.y-ring[0].y)*(p.y-ring[0].y); d > best {
			far, best = i, d
		}
	}
	keep := make([]bool, n)
	keep[0], keep[far] = true, true
	closed := append(ring[:n:n], ring[0])
	type span struct{ a, b int }
	stack := []span{{0, far}, {far, n}}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s.b-s.a < 2 {
			continue
		}
		a, b := closed[s.a], closed[s.b]
		dx, dy := b.x-a.x, b.y-a.y
		l2 := dx*dx + dy*dy
		idx, dmax := -1, tol
		for i := s.a + 1; i < s.b; i++ {
			p := closed[i]
			var d float64
			if l2 == 0 {
				d = math.Hypot(p.x-a.x, p.y-a.y)
			} else {
				d = math.Abs(dy*(p.x-a.x)-dx*(p.y-a.y)) / math.Sqrt(l2)
			}
			if d > dmax {
				idx, dmax = i, d
			}
		}
		if idx >= 0 {
			keep[idx] = true
			stack = append(stack, span{s.a, idx}, span{idx, s.b})
		}
	}
	out := make([]xy, 0, 16)
	for i, k := range keep {
		if k {
			out = append(out, ring[i])
		}
	}
	return out
}

// ringArea is the area a ring encloses, in square map units.
func ringArea(r []xy) float64 {
	var s float64
	for i, p := range r {
		q := r[(i+1)%len(r)]
		s += p.x*q.y - q.x*p.y
	}
	return math.Abs(s) / 2
}

// pathData writes rings as SVG path data, one closed subpath each, with
// one decimal: a tenth of a map unit is finer than a screen shows.
func pathData(rings [][]xy) string {
	var b strings.Builder
	num := func(v float64) {
		b.WriteString(strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64))
	}
	for _, r := range rings {
		for i, p := range r {
			if i == 0 {
				b.WriteByte('M')
			} else {
				b.WriteByte('L')
			}
			num(p.x)
			b.WriteByte(' ')
			num(p.y)
		}
		b.WriteByte('Z')
	}
	return b.String()
}

// shapes projects rings with f, simplifies each to tol and drops those
// smaller than minArea square units (islands no one could click).
func shapes(rings [][]geo.Point, f func(geo.Point) xy, tol, minArea float64) [][]xy {
	var out [][]xy
	for _, ring := range rings {
		pts := make([]xy, 0, len(ring))
		for _, p := range ring {
			if !math.IsNaN(p.Lat) && !math.IsNaN(p.Lon) {
				pts = append(pts, f(p))
			}
		}
		if len(pts) < 3 || ringArea(pts) < minArea {
			continue
		}
		if s := simplify(pts, tol); len(s) >= 3 {
			out = append(out, s)
		}
	}
	return out
}

// box is a rectangle in map units.
type box struct{ X, Y, W, H float64 }

// bounds is the smallest box around rings; ok is false for no point.
func bounds(rings [][]xy) (b box, ok bool) {
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, r := range rings {
		for _, p := range r {
			minX, maxX = math.Min(minX, p.x), math.Max(maxX, p.x)
			minY, maxY = math.Min(minY, p.y), math.Max(maxY, p.y)
		}
	}
	if minX > maxX {
		return box{}, false
	}
	return box{minX, minY, maxX - minX, maxY - minY}, true
}
