package hydrology

import (
	"io/fs"
	"math"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// lineFeature is one GeoJSON LineString with the properties we use: the
// GSHHG level, or for Natural Earth rivers the scalerank (as level), the
// feature class and the name.
type lineFeature struct {
	level int
	kind  uint8  // Natural Earth class (kindRiver, ...); kindNone for GSHHG
	name  string // Natural Earth name; "" for GSHHG
	pts   []geo.Point
}

// readLines reads a GeoJSON FeatureCollection of LineStrings. Errors name the
// file, the line and (for content errors) the feature number.
func readLines(fsys fs.FS, rel string) ([]lineFeature, error) {
	raw, err := data.ReadAll(fsys, rel)
	if err != nil {
		return nil, err
	}
	return parseLines(rel, raw)
}

// readNELines reads the Natural Earth river file (parseNELines).
func readNELines(fsys fs.FS, rel string) ([]lineFeature, error) {
	raw, err := data.ReadAll(fsys, rel)
	if err != nil {
		return nil, err
	}
	return parseNELines(rel, raw)
}

// segments flattens the features whose level passes keep into segments,
// with each segment's tag: the number of its feature among the kept ones.
func segments(fs []lineFeature, keep func(level int) bool) ([]geo.Segment, []int32) {
	n := 0
	for _, f := range fs {
		if keep(f.level) {
			n += len(f.pts) - 1
		}
	}
	segs := make([]geo.Segment, 0, n)
	tags := make([]int32, 0, n)
	k := int32(0)
	for _, f := range fs {
		if !keep(f.level) {
			continue
		}
		for j := 1; j < len(f.pts); j++ {
			segs = append(segs, geo.Segment{A: f.pts[j-1], B: f.pts[j]})
			tags = append(tags, k)
		}
		k++
	}
	return segs, tags
}

// lineSet is the segments of the kept lines of a layer, held as the
// lines' vertices: a segment is two consecutive vertices of one line, so
// a vertex is stored once rather than once for each segment it ends (as a
// []geo.Segment holds it), which halves what the geometry costs. Segments
// are numbered as segments numbers them, with the same tags.
type lineSet struct {
	pts   []geo.Point // the vertices of every kept line of two or more, line after line
	tags  []int32     // each segment's feature: its number among the kept ones
	shift []int32     // per kept feature: where its segment j's first vertex lies in pts, less j
}

// newLineSet is segments(fs, keep) as a lineSet.
func newLineSet(fs []lineFeature, keep func(level int) bool) *lineSet {
	nseg, npts, nfeat := 0, 0, 0
	for _, f := range fs {
		if keep(f.level) {
			nfeat++
			if len(f.pts) >= 2 {
				nseg += len(f.pts) - 1
				npts += len(f.pts)
			}
		}
	}
	l := &lineSet{pts: make([]geo.Point, 0, npts), tags: make([]int32, 0, nseg), shift: make([]int32, nfeat)}
	k := int32(0)
	for _, f := range fs {
		if !keep(f.level) {
			continue
		}
		if len(f.pts) >= 2 {
			l.shift[k] = int32(len(l.pts) - len(l.tags))
			l.pts = append(l.pts, f.pts...)
			for j := 1; j < len(f.pts); j++ {
				l.tags = append(l.tags, k)
			}
		}
		k++
	}
	return l
}

// seg is segment i.
func (l *lineSet) seg(i int) geo.Segment {
	a := i + int(l.shift[l.tags[i]])
	return geo.Segment{A: l.pts[a], B: l.pts[a+1]}
}

// lineIndex finds the nearest segment of a lineSet to a point, as
// geo.SegmentIndex does for a []geo.Segment.
type lineIndex struct {
	lines *lineSet
	g     *geo.CellIndex
}

func newLineIndex(l *lineSet, cellDeg float64) *lineIndex {
	b := geo.NewCellIndexBuilder(cellDeg)
	for i := range l.tags {
		b.Add(int32(i), geo.SegmentBox(l.seg(i)))
	}
	return &lineIndex{lines: l, g: b.Build()}
}

// Nearest is the distance in km from p to the nearest segment within
// maxKm and that segment's number (the lowest of equally near ones); ok
// is false when none is that close (geo.SegmentIndex.Nearest).
func (ix *lineIndex) Nearest(p geo.Point, maxKm float64) (distKm float64, i int, ok bool) {
	best := math.Inf(1)
	bestI := int32(-1)
	ix.g.Near(p, maxKm, func(i int32) {
		d := geo.PointSegmentKm(p, ix.lines.seg(int(i)))
		if d < best || (d == best && i < bestI) {
			best, bestI = d, i
		}
	})
	if bestI < 0 || best > maxKm {
		return 0, 0, false
	}
	return best, int(bestI), true
}

// simplify returns a copy of the features' lines reduced with the
// Douglas-Peucker algorithm: every dropped vertex lies within tolKm of the
// kept line, so distances to the simplified line are within tolKm of the
// distances to the original. Each line is projected once onto a local plane
// (equirectangular at its first vertex), which is accurate to a few percent
// of the tolerance for the short GSHHG bin segments.
func simplify(fs []lineFeature, keep func(level int) bool, tolKm float64) []lineFeature {
	out := make([]lineFeature, 0, len(fs))
	var (
		stack [][2]int
		xy    [][2]float64
		kept  []bool
		all   []geo.Point
	)
	tol2 := tolKm * tolKm
	for _, f := range fs {
		if !keep(f.level) {
			continue
		}
		pts := f.pts
		xy = xy[:0]
		cos0 := math.Cos(pts[0].Lat * math.Pi / 180)
		for _, q := range pts {
			xy = append(xy, [2]float64{
				geo.NormalizeLon(q.Lon-pts[0].Lon) * cos0 * geo.KmPerDegLat,
				(q.Lat - pts[0].Lat) * geo.KmPerDegLat,
			})
		}
		kept = append(kept[:0], make([]bool, len(pts))...)
		kept[0], kept[len(pts)-1] = true, true
		stack = append(stack[:0], [2]int{0, len(pts) - 1})
		for len(stack) > 0 {
			r := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if r[1]-r[0] < 2 {
				continue
			}
			far, farD := -1, tol2
			for k := r[0] + 1; k < r[1]; k++ {
				if d := planarDist2(xy[k], xy[r[0]], xy[r[1]]); d > farD {
					far, farD = k, d
				}
			}
			if far >= 0 {
				kept[far] = true
				stack = append(stack, [2]int{r[0], far}, [2]int{far, r[1]})
			}
		}
		from := len(all)
		for k, ok := range kept {
			if ok {
				all = append(all, pts[k])
			}
		}
		out = append(out, lineFeature{level: f.level, kind: f.kind, name: f.name, pts: all[from:len(all):len(all)]})
	}
	// all may have moved while growing; re-slice every line from its final
	// backing array.
	n := 0
	for i := range out {
		k := len(out[i].pts)
		out[i].pts = all[n : n+k : n+k]
		n += k
	}
	return out
}

// planarDist2 is the squared distance from p to the segment a-b in the plane.
func planarDist2(p, a, b [2]float64) float64 {
	dx, dy := b[0]-a[0], b[1]-a[1]
	px, py := p[0]-a[0], p[1]-a[1]
	l2 := dx*dx + dy*dy
	t := 0.0
	if l2 > 0 {
		t = (px*dx + py*dy) / l2
		t = math.Max(0, math.Min(1, t))
	}
	ex, ey := px-t*dx, py-t*dy
	return ex*ex + ey*ey
}
