package earthquake

import (
	"io/fs"
	"math"
	"sort"
	"time"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// completeness is one magnitude class of a catalog's completeness table:
// events with magnitude >= MinMag (and below the next class) are counted
// only from FromYear on, the first year from which the catalog records all
// of them.
type completeness struct {
	MinMag   float64
	FromYear int
}

// rateModel turns catalog events into a rate of M5+ earthquakes. With a
// fixed Gutenberg-Richter b-value the maximum-likelihood rate (Weichert
// 1980) pooled over the completeness classes is
//
//	lambda(M>=5) = N / sum_k T_k * (10^(-b(M_k-5)) - 10^(-b(M_(k+1)-5)))
//
// where N counts the events of every class inside its period, T_k is the
// length of class k's period and the last class has no upper term. The
// denominator depends only on the catalog, so each counted event adds the
// same weight 1/denominator (times its N* counting factor) and a radius
// query is a plain sum of weights.
type rateModel struct {
	B       float64
	EndYear int // last year the catalog covers, inclusive
	Classes []completeness
}

// wusModel: NSHM 2014 western US catalog (wmm.c3). b = 0.8 as in the NSHM
// WUS gridded-seismicity model. The decade counts of wmm.c3 level off at
// M4 from the 1960s and at M5 from the 1930s; M6+ is taken as complete from
// 1850. California is complete earlier than the rest of the West; one table
// for the whole region uses the later years.
var wusModel = rateModel{B: 0.8, EndYear: 2012, Classes: []completeness{
	{4.0, 1963}, {5.0, 1930}, {6.0, 1850},
}}

// ceusModel: NSHM 2014 central and eastern US catalog (emm.c3). b = 1.0 as
// in the NSHM CEUS model. Decade counts level off at M3 from the late 1970s
// and at M4 from the 1930s; M5+ events are few and are taken from 1800 so
// that the 1811-1812 New Madrid sequence counts.
var ceusModel = rateModel{B: 1.0, EndYear: 2012, Classes: []completeness{
	{3.0, 1975}, {4.0, 1930}, {5.0, 1800},
}}

// comcatB is the b-value used to extrapolate the ComCat M4+ rate to M5+.
const comcatB = 1.0

// ComCat extract period: 1996-01-01 to 2018-12-31.
const (
	comcatFirstYear = 1996
	comcatLastYear  = 2018
	comcatYears     = comcatLastYear - comcatFirstYear + 1
	comcatMinMag    = 4.0
)

// denominator is the sum in the rate formula above: the number of "years of
// M5+ observation" that the catalog's completeness table amounts to.
func (m rateModel) denominator() float64 {
	var d float64
	for i, c := range m.Classes {
		frac := math.Pow(10, -m.B*(c.MinMag-5))
		if i+1 < len(m.Classes) {
			frac -= math.Pow(10, -m.B*(m.Classes[i+1].MinMag-5))
		}
		d += float64(m.EndYear-c.FromYear+1) * frac
	}
	return d
}

// counted reports whether an event of magnitude mag in year falls in the
// completeness period of its class.
func (m rateModel) counted(mag float64, year int) bool {
	for i := len(m.Classes) - 1; i >= 0; i-- {
		if mag >= m.Classes[i].MinMag {
			return year >= m.Classes[i].FromYear
		}
	}
	return false
}

// poissonProb is the chance of at least one event in years at annual rate.
func poissonProb(rate, years float64) float64 {
	return 1 - math.Exp(-years*rate)
}

// Source tags for events, indexes into sourceIDs.
const (
	srcWUS uint8 = iota
	srcCEUS
	srcComCat
)

var sourceIDs = [...]string{
	srcWUS:    "usgs-nshm-2014-wus-catalog",
	srcCEUS:   "usgs-nshm-2014-ceus-catalog",
	srcComCat: "usgs-comcat-m4-1996-2018",
}

// event is one catalog earthquake.
type event struct {
	Mag   float64
	Lat   float64
	Lon   float64
	Year  int
	Day   int32   // calendar day, days since 1970-01-01 UTC
	Time  float64 // days since 1970-01-01 UTC with the time of day; ComCat only
	NStar float64 // NSHM N* counting factor; 1 for ComCat
	Src   uint8
}

// readNSHM reads one NSHM catalog CSV (converted from the fixed-width
// catalog: mw, longitude, latitude, depth_km, year, month, day, ..., nstar).
func readNSHM(fsys fs.FS, id string, src uint8, model rateModel) ([]event, int, error) {
	rel := data.Path(id)
	t, err := data.OpenTable(fsys, rel, "mw", "longitude", "latitude", "year", "month", "day", "nstar")
	if err != nil {
		return nil, 0, err
	}
	defer t.Close()
	var evs []event
	for t.Scan() {
		var f [7]float64
		for i, col := range [...]string{"mw", "longitude", "latitude", "year", "month", "day", "nstar"} {
			if f[i], err = t.Float(col); err != nil {
				return nil, 0, err
			}
		}
		e := event{Mag: f[0], Lon: f[1], Lat: f[2], Year: int(f[3]), NStar: f[6], Src: src}
		switch {
		case e.Lat < -90 || e.Lat > 90 || e.Lon < -180 || e.Lon > 180:
			return nil, 0, t.Errorf("coordinate (%g, %g) out of range", e.Lat, e.Lon)
		case f[3] != math.Trunc(f[3]) || f[4] < 1 || f[4] > 12 || f[5] < 1 || f[5] > 31:
			return nil, 0, t.Errorf("bad date %g-%g-%g", f[3], f[4], f[5])
		case e.Year > model.EndYear:
			return nil, 0, t.Errorf("year %d is after the catalog end (%d) that the completeness periods assume", e.Year, model.EndYear)
		case e.NStar <= 0:
			return nil, 0, t.Errorf("column \"nstar\": %g is not a positive counting factor", e.NStar)
		}
		e.Day = int32(time.Date(e.Year, time.Month(f[4]), int(f[5]), 0, 0, 0, 0, time.UTC).Unix() / 86400)
		evs = append(evs, e)
	}
	if err := t.Err(); err != nil {
		return nil, 0, err
	}
	return evs, t.Rows(), nil
}

// readComCat reads the ComCat M4+ extract and returns the Alaska and Hawaii
// events; the lower-48 rows are read (and counted) but not used, because the
// NSHM catalogs cover the conterminous states over a far longer period.
func readComCat(fsys fs.FS) ([]event, int, error) {
	rel := data.Path("usgs-comcat-m4-1996-2018")
	t, err := data.OpenTable(fsys, rel, "region", "time", "latitude", "longitude", "magnitude")
	if err != nil {
		return nil, 0, err
	}
	defer t.Close()
	var evs []event
	for t.Scan() {
		region := t.String("region")
		switch region {
		case "alaska", "hawaii":
		case "lower48":
			continue
		default:
			return nil, 0, t.Errorf("unknown region %q", region)
		}
		var e event
		if e.Lat, err = t.Float("latitude"); err != nil {
			return nil, 0, err
		}
		if e.Lon, err = t.Float("longitude"); err != nil {
			return nil, 0, err
		}
		if e.Mag, err = t.Float("magnitude"); err != nil {
			return nil, 0, err
		}
		if e.Lat < -90 || e.Lat > 90 || e.Lon < -180 || e.Lon > 180 {
			return nil, 0, t.Errorf("coordinate (%g, %g) out of range", e.Lat, e.Lon)
		}
		ts := t.String("time")
		if len(ts) > 19 {
			ts = ts[:19] // drop fractional seconds
		}
		tm, perr := time.Parse("2006-01-02 15:04:05", ts)
		if perr != nil {
			return nil, 0, t.Errorf("column \"time\": %q is not a time like 2006-01-02 15:04:05", t.String("time"))
		}
		e.Year = tm.Year()
		if e.Year < comcatFirstYear || e.Year > comcatLastYear {
			return nil, 0, t.Errorf("event year %d outside the extract period %d-%d", e.Year, comcatFirstYear, comcatLastYear)
		}
		if e.Mag < comcatMinMag {
			continue
		}
		e.Time = float64(tm.Unix()) / 86400
		e.Day = int32(math.Floor(e.Time))
		e.NStar = 1
		e.Src = srcComCat
		evs = append(evs, e)
	}
	if err := t.Err(); err != nil {
		return nil, 0, err
	}
	return evs, t.Rows(), nil
}

// dropDuplicates removes from ceus the events that also appear in wus (same
// day, within 25 km, magnitudes within 0.5). The two NSHM catalogs partition
// the country along the NSHM's WUS/CEUS boundary polygon, which is why each
// catalog is used everywhere with no longitude split; the 2014 files
// nevertheless share an event or two along that boundary.
func dropDuplicates(wus, ceus []event) []event {
	byDay := make(map[int32][]int, len(wus))
	for i, e := range wus {
		byDay[e.Day] = append(byDay[e.Day], i)
	}
	out := ceus[:0:0]
	for _, e := range ceus {
		dup := false
		for _, i := range byDay[e.Day] {
			w := wus[i]
			if math.Abs(w.Mag-e.Mag) <= 0.5 && geo.DistanceKm(geo.Point{Lat: w.Lat, Lon: w.Lon}, geo.Point{Lat: e.Lat, Lon: e.Lon}) <= 25 {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, e)
		}
	}
	return out
}

// gkWindow is the Gardner and Knopoff (1974) aftershock window in the form
// fitted by van Stiphout et al. (2012): distance in km and duration in days.
func gkWindow(mag float64) (km, days float64) {
	km = math.Pow(10, 0.1238*mag+0.983)
	if mag >= 6.5 {
		days = math.Pow(10, 0.032*mag+2.7389)
	} else {
		days = math.Pow(10, 0.5409*mag-0.547)
	}
	return km, days
}

// decluster returns the events that are not aftershocks by the
// Gardner-Knopoff windows: working from the largest event down, every
// smaller-or-equal event within the window after a kept event is dropped.
// ComCat is a full catalog; without this an aftershock sequence (Anchorage
// 2018, Kilauea 2018) would read as decades of independent activity.
func decluster(evs []event) []event {
	byTime := make([]int, len(evs))
	for i := range byTime {
		byTime[i] = i
	}
	sort.SliceStable(byTime, func(a, b int) bool { return evs[byTime[a]].Time < evs[byTime[b]].Time })
	times := make([]float64, len(evs))
	for k, i := range byTime {
		times[k] = evs[i].Time
	}
	byMag := append([]int(nil), byTime...)
	sort.SliceStable(byMag, func(a, b int) bool { return evs[byMag[a]].Mag > evs[byMag[b]].Mag })
	removed := make([]bool, len(evs))
	for _, i := range byMag {
		if removed[i] {
			continue
		}
		e := evs[i]
		km, days := gkWindow(e.Mag)
		p := geo.Point{Lat: e.Lat, Lon: e.Lon}
		start := sort.SearchFloat64s(times, e.Time)
		for k := start; k < len(times) && times[k] <= e.Time+days; k++ {
			j := byTime[k]
			if j == i || removed[j] || evs[j].Mag > e.Mag {
				continue
			}
			if geo.DistanceKm(p, geo.Point{Lat: evs[j].Lat, Lon: evs[j].Lon}) <= km {
				removed[j] = true
			}
		}
	}
	var out []event
	for _, i := range byTime {
		if !removed[i] {
			out = append(out, evs[i])
		}
	}
	return out
}

// rateCellDeg is the cell of the rate index: about half the 50 km radius,
// which keeps the distance checks on points outside the circle few.
const rateCellDeg = 0.25

// rateSet is a point index of counted events, each with its weight: its
// contribution to the annual rate of M5+ events.
type rateSet struct {
	ix  *geo.PointIndex
	w   []float64
	src []uint8
}

func newRateSet(evs []event, weight func(event) float64) rateSet {
	var s rateSet
	var pts []geo.Point
	for _, e := range evs {
		w := weight(e)
		if w <= 0 {
			continue
		}
		pts = append(pts, geo.Point{Lat: e.Lat, Lon: e.Lon})
		s.w = append(s.w, w)
		s.src = append(s.src, e.Src)
	}
	s.ix = geo.NewPointIndex(pts, rateCellDeg)
	return s
}

// rateWithin sums the weights of the events within km of p, per source.
func (s *rateSet) rateWithin(p geo.Point, km float64) (perSrc [len(sourceIDs)]float64, n int) {
	s.ix.Within(p, km, func(i int, _ float64) {
		perSrc[s.src[i]] += s.w[i]
		n++
	})
	return perSrc, n
}

// bigSet indexes the larger events (M4+) for the largest-event context
// indicator, in magnitude tiers so that a query can stop at the first tier
// with an event in range instead of measuring the distance to every small
// event near an active zone (thousands of M4 events around Anchorage).
type bigSet struct {
	tiers []bigTier // highest magnitudes first
}

type bigTier struct {
	ix   *geo.PointIndex
	mag  []float32
	year []int16
	src  []uint8
}

// bigTierFloors are the lower magnitude bounds of the tiers.
var bigTierFloors = []float64{7, 6, 5.5, 5, 4.5}

func newBigSet(evs []event, minMag float64) bigSet {
	floors := append(append([]float64(nil), bigTierFloors...), minMag)
	tiers := make([]bigTier, len(floors))
	pts := make([][]geo.Point, len(floors))
	for _, e := range evs {
		if e.Mag < minMag {
			continue
		}
		k := 0
		for e.Mag < floors[k] {
			k++
		}
		pts[k] = append(pts[k], geo.Point{Lat: e.Lat, Lon: e.Lon})
		tiers[k].mag = append(tiers[k].mag, float32(e.Mag))
		tiers[k].year = append(tiers[k].year, int16(e.Year))
		tiers[k].src = append(tiers[k].src, e.Src)
	}
	for k := range tiers {
		// The upper tiers are sparse: coarse cells mean fewer cell lookups.
		cell := 1.0
		if k < 3 {
			cell = 2.0
		}
		tiers[k].ix = geo.NewPointIndex(pts[k], cell)
	}
	return bigSet{tiers: tiers}
}

// largest is the result of bigSet.largestWithin.
type largest struct {
	Mag  float32
	Year int
	Src  uint8
	Km   float64
}

// largestWithin returns the largest event within km of p (ties: the nearer,
// then the first in catalog order); ok is false when there is none.
func (s *bigSet) largestWithin(p geo.Point, km float64) (largest, bool) {
	for k := range s.tiers {
		t := &s.tiers[k]
		best, bestD := -1, 0.0
		t.ix.Within(p, km, func(i int, d float64) {
			if best < 0 || t.mag[i] > t.mag[best] ||
				(t.mag[i] == t.mag[best] && (d < bestD || (d == bestD && i < best))) {
				best, bestD = i, d
			}
		})
		if best >= 0 {
			return largest{Mag: t.mag[best], Year: int(t.year[best]), Src: t.src[best], Km: bestD}, true
		}
	}
	return largest{}, false
}
