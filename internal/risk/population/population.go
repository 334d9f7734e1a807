// Package population measures how many people live around a point, from the
// 2020 Census centres of population of every block group (about 242,000
// points, three times finer than the tract centres the percentile reference
// uses). Hazard modules use it to tell a dense urban core from the thinly
// settled edge of a county (docs/methodology.md, "Local population
// density"): the wildfire module allocates a county's homes to wildfire
// exposure classes by it, the landslide module counts the people around a
// site who could have reported a landslide.
//
// A block group is represented by one point, its centre of population, with
// all its residents there; densities are therefore estimates from points,
// not from areas. The index is read-only after Load and safe for concurrent
// use.
package population

import (
	"fmt"
	"io/fs"
	"math"
	"runtime"
	"strconv"
	"sync"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// Source is the catalog id of the block-group centres of population.
const Source = "census-cenpop-2020-blockgroups"

// DensityRadiusKm is the radius of the local density measure: wide enough
// that a suburban street of large block groups still sees its neighbours,
// narrow enough that a canyon edge and a downtown grid 5 km apart differ.
const DensityRadiusKm = 2.0

// Index holds the block-group centres for radius queries.
type Index struct {
	pts   []geo.Point
	pop   []float64
	near  *geo.CellIndex // 0.02-degree cells for the density disc
	total float64
	rows  int // data rows read, with or without residents
}

// Load reads the block-group centres of population from fsys.
func Load(fsys fs.FS) (*Index, error) {
	rel := data.Path(Source)
	t, err := data.OpenTable(fsys, rel, "ST", "lat", "lon", "pop2020")
	if err != nil {
		return nil, err
	}
	defer t.Close()
	// The real file has 242,335 rows; room for them up front spares the
	// slices a dozen regrowths.
	x := &Index{pts: make([]geo.Point, 0, 250000), pop: make([]float64, 0, 250000)}
	for t.Scan() {
		lat, err := t.Float("lat")
		if err != nil {
			return nil, err
		}
		lon, err := t.Float("lon")
		if err != nil {
			return nil, err
		}
		if lat < -90 || lat > 90 || lon < -180 || lon > 180 {
			return nil, t.Errorf("coordinate %v, %v is out of range", lat, lon)
		}
		pop, err := strconv.Atoi(t.String("pop2020"))
		if err != nil || pop < 0 {
			return nil, t.Errorf("column \"pop2020\": %q is not a head count", t.String("pop2020"))
		}
		st := t.String("ST")
		if len(st) != 2 {
			return nil, t.Errorf("column \"ST\": %q is not a 2-letter state code", st)
		}
		if pop == 0 {
			continue // no residents: no weight anywhere
		}
		x.pts = append(x.pts, geo.Point{Lat: lat, Lon: lon})
		x.pop = append(x.pop, float64(pop))
		x.total += float64(pop)
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	if len(x.pts) == 0 {
		return nil, fmt.Errorf("%s: no block group with residents", rel)
	}
	x.rows = t.Rows()
	x.index()
	return x, nil
}

// New builds an index from given centres (tests and fixtures).
func New(pts []geo.Point, pop []float64) *Index {
	x := &Index{pts: append([]geo.Point(nil), pts...), pop: append([]float64(nil), pop...)}
	for _, p := range pop {
		x.total += p
	}
	x.index()
	return x
}

func (x *Index) index() {
	// 0.02-degree cells (about 2 km): the density disc touches 3 to 4
	// cells a side.
	b := geo.NewCellIndexBuilder(0.02)
	for i, p := range x.pts {
		b.Add(int32(i), geo.PointBox(p))
	}
	x.near = b.Build()
}

// Len is the number of block groups with residents.
func (x *Index) Len() int { return len(x.pts) }

// Rows is the number of data rows read, block groups without residents
// included.
func (x *Index) Rows() int { return x.rows }

// Total is the number of residents indexed.
func (x *Index) Total() float64 { return x.total }

// Centre returns block group i's centre of population and residents.
func (x *Index) Centre(i int) (geo.Point, float64) { return x.pts[i], x.pop[i] }

// Within is the number of residents whose block-group centre lies within
// km of p (great-circle distance). It is meant for short radii: the index's
// cells are 0.02 degrees.
func (x *Index) Within(p geo.Point, km float64) float64 {
	var s float64
	x.near.Near(p, km, func(i int32) {
		if geo.DistanceKm(p, x.pts[i]) <= km {
			s += x.pop[i]
		}
	})
	return s
}

// Density is the local population density at p in residents per square
// kilometre: the residents whose block-group centre lies within
// DensityRadiusKm of p, over the disc's area. Over 2 km the plane tangent
// at p is as good as the sphere (errors below 0.01%), and much faster,
// which matters because Load-time allocation measures every block group.
func (x *Index) Density(p geo.Point) float64 {
	return x.DensityWithin(p, DensityRadiusKm)
}

// DensityWithin is the residents per square kilometre whose block-group
// centre lies within km of p, on the plane tangent at p (good to well
// under 1% within 10 km).
func (x *Index) DensityWithin(p geo.Point, km float64) float64 {
	r2 := km * km
	plane := geo.TangentAt(p)
	var s float64
	x.near.Near(p, km, func(i int32) {
		if plane.Km2(x.pts[i]) <= r2 {
			s += x.pop[i]
		}
	})
	return s / (math.Pi * r2)
}

// DensitiesWithin is DensityWithin(centre of block group i, km) for every
// block group i that want selects, and 0 for the others: the same values,
// measured together and faster. The residents of an index cell that lies
// wholly within a disc are added at once, from running sums over the
// index's item order; the others are tested one by one as DensityWithin
// tests them. Block groups hold whole residents, so every sum is exact in
// any order and the densities are those DensityWithin gives, bit for bit.
func (x *Index) DensitiesWithin(km float64, want func(i int) bool) []float64 {
	order := x.near.ItemOrder()
	cum := make([]float64, len(order)+1)
	for j, it := range order {
		cum[j+1] = cum[j] + x.pop[it]
	}
	n := len(x.pts)
	out := make([]float64, n)
	r2 := km * km
	workers := min(max(runtime.GOMAXPROCS(0), 1), 8)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				if !want(i) {
					continue
				}
				p := x.pts[i]
				plane := geo.TangentAt(p)
				// Away from the antimeridian the corners of a cell,
				// widened by a hair against rounding at its edges, bound
				// the tangent distance to every point in it: each step of
				// Km2 is monotonic in the point's latitude and longitude
				// on either side of p's.
				whole := p.Lon > -179 && p.Lon < 179
				var s float64
				x.near.NearCells(p, km, func(b geo.Box, lo, hi int) {
					if whole && b.Lon0 >= -180 && b.Lon1 <= 180 {
						const eps = 1e-9
						la0, la1, lo0, lo1 := b.Lat0-eps, b.Lat1+eps, b.Lon0-eps, b.Lon1+eps
						if plane.Km2(geo.Point{Lat: la0, Lon: lo0}) <= r2 && plane.Km2(geo.Point{Lat: la0, Lon: lo1}) <= r2 &&
							plane.Km2(geo.Point{Lat: la1, Lon: lo0}) <= r2 && plane.Km2(geo.Point{Lat: la1, Lon: lo1}) <= r2 {
							s += cum[hi] - cum[lo]
							return
						}
					}
					for _, it := range order[lo:hi] {
						if plane.Km2(x.pts[it]) <= r2 {
							s += x.pop[it]
						}
					}
				})
				out[i] = s / (math.Pi * r2)
			}
		})
	}
	wg.Wait()
	return out
}
