package severeweather

import (
	"cmp"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

const (
	srcTornadoTracks = "noaa-spc-tornado-tracks"
	srcTornado2019   = "noaa-spc-tornado-2019-2022"

	tornadoRadiusKm = 40.2 // 25 statute miles, the SPC "near a point" radius
	tornadoFirstYr  = 1950
	tracksLastYr    = 2018 // last year of the tracks file
	tornadoLastYr   = 2022 // last year taken from the start-points file
	tornadoYears    = tornadoLastYr - tornadoFirstYr + 1

	tornadoCellDeg = 0.25

	// The straight line from start to end can never be longer than the
	// path. When it is longer by more than this, the end point is taken for
	// a typo and the track keeps its start point only. Smaller excesses are
	// more likely a wrong length than a wrong coordinate, and move the
	// result by less than the 40 km radius, so the segment is kept.
	trackSlackKm = 20.0
	kmPerMile    = 1.609344
	kmPerYard    = 0.0009144

	// Strike probabilities (docs/methodology.md, "Tornado"): the path area
	// that falls inside the 25-mile disc around the site per year, divided
	// by the disc's area. Damaging (EF2+) tornadoes are counted from 1950:
	// strong tornadoes were reported throughout. Weak ones were not: the
	// count of EF0-EF1 reports roughly tripled between the 1950s and the
	// 1990s as spotter networks and Doppler radar spread, so tornadoes of
	// any rating are counted from 1995, the year the SPC also began to
	// record the maximum rather than the mean path width.
	strikeSigFirstYr = 1950
	strikeAnyFirstYr = 1995
	strikeSigYears   = tracksLastYr - strikeSigFirstYr + 1
	strikeAnyYears   = tracksLastYr - strikeAnyFirstYr + 1
)

// track is one tornado: a segment from touchdown to lift-off, or a point
// (a == b) when the end is unknown.
type track struct {
	alat, alon, blat, blon float32
	day                    int32   // local date as yyyymmdd
	weight                 float32 // EF weight (tornadoWeight)
	sig                    bool    // rated EF2 or stronger
	// Path length and width in km; 0 for the 2019-2022 start points,
	// which have neither and take no part in strike probabilities.
	lenKm, widKm float32
}

// tornadoWeight weights a tornado by its F/EF rating: 1 for EF0-EF1 and
// unrated (-9, counted as EF0), 2 for EF2-EF3, 3 for EF4-EF5.
func tornadoWeight(mag int) float32 {
	switch {
	case mag >= 4:
		return 3
	case mag >= 2:
		return 2
	default:
		return 1
	}
}

type tornadoStats struct {
	tracks       int // rows of the tracks file kept
	duplicates   int // exact duplicate rows dropped
	pointOnly    int // tracks without a usable end point
	badEnd       int // of those, end point inconsistent with the path length
	startPoints  int // 2019-2022 start points kept
	unknownMag   int
	outOfPeriod  int // tracks-file rows outside 1950-2018, skipped
	startSkipped int // start-points rows outside 2019-2022, skipped
	imputedWidth int // tracks without a width that took their class's median
}

func checkLatLon(t *data.Table, lat, lon float64) error {
	if lat < -90 || lat > 90 || math.IsNaN(lat) {
		return t.Errorf("latitude %v out of range", lat)
	}
	if lon < -360 || lon > 360 || math.IsNaN(lon) {
		return t.Errorf("longitude %v out of range", lon)
	}
	return nil
}

func parseMag(t *data.Table, col string) (int, error) {
	s := t.String(col)
	m, err := strconv.Atoi(s)
	if err != nil {
		// Some exports write the rating as a float ("2.0").
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) {
			return 0, t.Errorf("column %q: %q is not a tornado rating", col, s)
		}
		m = int(f)
	}
	if m != -9 && (m < 0 || m > 5) {
		return 0, t.Errorf("column %q: rating %d is not -9 or 0..5", col, m)
	}
	return m, nil
}

func parseYear(t *data.Table, col string) (int, error) {
	s := t.String(col)
	y, err := strconv.Atoi(s)
	if err != nil || y < 1800 || y > 2200 {
		return 0, t.Errorf("column %q: %q is not a year", col, s)
	}
	return y, nil
}

// loadTracks reads the 1950-2018 SPC tornado paths.
func loadTracks(fsys fs.FS, st *tornadoStats) ([]track, error) {
	rel := data.Path(srcTornadoTracks)
	t, err := data.OpenTable(fsys, rel, "om", "yr", "mo", "dy", "time", "mag", "slat", "slon", "elat", "elon", "len", "wid")
	if err != nil {
		return nil, err
	}
	defer t.Close()
	tracks := make([]track, 0, 64000)
	// The tracks file repeats a few rows verbatim; a tornado's identity is
	// its year, number, time and coordinates.
	type key struct {
		yr, om, time           string
		slat, slon, elat, elon float32
	}
	seen := make(map[key]struct{}, 64000)
	for t.Scan() {
		yr, err := parseYear(t, "yr")
		if err != nil {
			return nil, err
		}
		mag, err := parseMag(t, "mag")
		if err != nil {
			return nil, err
		}
		mo, err1 := strconv.Atoi(t.String("mo"))
		dy, err2 := strconv.Atoi(t.String("dy"))
		if err1 != nil || err2 != nil || mo < 1 || mo > 12 || dy < 1 || dy > 31 {
			return nil, t.Errorf("month %q / day %q is not a date", t.String("mo"), t.String("dy"))
		}
		var v [6]float64
		for i, c := range [...]string{"slat", "slon", "elat", "elon", "len", "wid"} {
			if v[i], err = t.Float(c); err != nil {
				return nil, err
			}
		}
		slat, slon, elat, elon, lenMi, widYd := v[0], v[1], v[2], v[3], v[4], v[5]
		if lenMi < 0 || widYd < 0 || lenMi > 500 || widYd > 5000 {
			return nil, t.Errorf("path length %v mi / width %v yd out of range", lenMi, widYd)
		}
		if err := checkLatLon(t, slat, slon); err != nil {
			return nil, err
		}
		if err := checkLatLon(t, elat, elon); err != nil {
			return nil, err
		}
		if slat == 0 && slon == 0 {
			return nil, t.Errorf("tornado has no start point")
		}
		if yr < tornadoFirstYr || yr > tracksLastYr {
			st.outOfPeriod++
			continue
		}
		k := key{t.String("yr"), t.String("om"), t.String("time"), float32(slat), float32(slon), float32(elat), float32(elon)}
		if _, dup := seen[k]; dup {
			st.duplicates++
			continue
		}
		seen[k] = struct{}{}
		slon, elon = geo.NormalizeLon(slon), geo.NormalizeLon(elon)
		tr := track{alat: float32(slat), alon: float32(slon), blat: float32(elat), blon: float32(elon), day: int32(yr*10000 + mo*100 + dy), weight: tornadoWeight(mag), sig: mag >= 2,
			lenKm: float32(lenMi * kmPerMile), widKm: float32(widYd * kmPerYard)}
		if elat == 0 || elon == 0 {
			// Older SPC records mark an unknown end with zeros.
			tr.blat, tr.blon = tr.alat, tr.alon
			st.pointOnly++
		} else if chord := geo.DistanceKm(geo.Point{Lat: slat, Lon: slon}, geo.Point{Lat: elat, Lon: elon}); chord > lenMi*kmPerMile+trackSlackKm {
			tr.blat, tr.blon = tr.alat, tr.alon
			st.pointOnly++
			st.badEnd++
		}
		if mag == -9 {
			st.unknownMag++
		}
		tracks = append(tracks, tr)
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	st.tracks = len(tracks)
	st.imputedWidth = imputeWidths(tracks)
	return tracks, nil
}

// imputeWidths gives a track recorded without a width (0 yards; 473 of the
// 1995-2018 rows) the median width of tracks of its rating class (EF0-1,
// EF2-3, EF4-5) in its era (before 1995 the SPC recorded the mean width,
// from 1995 the maximum), and returns how many it filled.
func imputeWidths(tracks []track) int {
	era := func(tr *track) int { return btoi(tr.day >= strikeAnyFirstYr*10000) }
	var widths [2][4][]float32 // [era][weight class]
	for i := range tracks {
		if tr := &tracks[i]; tr.widKm > 0 {
			widths[era(tr)][int(tr.weight)] = append(widths[era(tr)][int(tr.weight)], tr.widKm)
		}
	}
	var median [2][4]float32
	for e := range widths {
		for w := range widths[e] {
			if ws := widths[e][w]; len(ws) > 0 {
				slices.Sort(ws)
				median[e][w] = ws[len(ws)/2]
			}
		}
	}
	n := 0
	for i := range tracks {
		if tr := &tracks[i]; tr.widKm == 0 {
			if w := median[era(tr)][int(tr.weight)]; w > 0 {
				tr.widKm = w
				n++
			}
		}
	}
	return n
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// loadStartPoints appends the 2019-2022 tornadoes of the SPC start-points
// file (earlier years are already in the tracks file, with end points).
func loadStartPoints(fsys fs.FS, tracks []track, st *tornadoStats) ([]track, error) {
	rel := data.Path(srcTornado2019)
	t, err := data.OpenTable(fsys, rel, "om", "yr", "date", "rating", "slat", "slon")
	if err != nil {
		return nil, err
	}
	defer t.Close()
	for t.Scan() {
		yr, err := parseYear(t, "yr")
		if err != nil {
			return nil, err
		}
		if yr <= tracksLastYr || yr > tornadoLastYr {
			st.startSkipped++
			continue
		}
		// date is d/mm/yyyy; its year must agree with yr, which catches a
		// shifted or garbled row before it is counted.
		date := t.String("date")
		day, ok := parseDMY(date)
		if !ok || day/10000 != yr {
			return nil, t.Errorf("column \"date\": %q is not a d/mm/yyyy date in year %d", date, yr)
		}
		mag, err := parseMag(t, "rating")
		if err != nil {
			return nil, err
		}
		lat, err := t.Float("slat")
		if err != nil {
			return nil, err
		}
		lon, err := t.Float("slon")
		if err != nil {
			return nil, err
		}
		if err := checkLatLon(t, lat, lon); err != nil {
			return nil, err
		}
		if lat == 0 && lon == 0 {
			return nil, t.Errorf("tornado has no start point")
		}
		if mag == -9 {
			st.unknownMag++
		}
		lon = geo.NormalizeLon(lon)
		tracks = append(tracks, track{alat: float32(lat), alon: float32(lon), blat: float32(lat), blon: float32(lon), day: int32(day), weight: tornadoWeight(mag), sig: mag >= 2})
		st.startPoints++
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	return tracks, nil
}

// parseDMY reads a d/mm/yyyy date as yyyymmdd.
func parseDMY(s string) (int, bool) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || len(parts[2]) != 4 {
		return 0, false
	}
	d, err1 := strconv.Atoi(parts[0])
	m, err2 := strconv.Atoi(parts[1])
	y, err3 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || d < 1 || d > 31 || m < 1 || m > 12 {
		return 0, false
	}
	return y*10000 + m*100 + d, true
}

// sortByDay orders tracks by date so that a query meets the tornadoes of one
// day consecutively; the sort is stable, keeping file order within a day.
func sortByDay(tracks []track) {
	slices.SortStableFunc(tracks, func(a, b track) int { return cmp.Compare(a.day, b.day) })
}

func trackBoxes(tracks []track) []geo.Box {
	boxes := make([]geo.Box, len(tracks))
	for i, tr := range tracks {
		alon, blon := float64(tr.alon), float64(tr.blon)
		if d := blon - alon; d > 180 {
			blon -= 360
		} else if d < -180 {
			blon += 360
		}
		boxes[i] = geo.Box{
			Lat0: math.Min(float64(tr.alat), float64(tr.blat)), Lat1: math.Max(float64(tr.alat), float64(tr.blat)),
			Lon0: math.Min(alon, blon), Lon1: math.Max(alon, blon),
		}
	}
	return boxes
}

// tornadoResult is what the tornado record says about one point.
type tornadoResult struct {
	count    int     // tornadoes within the radius
	sig      int     // of which EF2+
	days     int     // distinct days with a tornado within the radius
	weighted float64 // sum over those days of the day's highest EF weight
	// Path area (km²) inside the disc: EF2+ paths of 1950-2018 and paths of
	// any rating of 1995-2018.
	sigAreaKm2, anyAreaKm2 float64
}

// strikeRate is the expected number of times per year that a path of the
// given area total over years crosses a point of the disc: the share of
// the disc's area swept per year.
func strikeRate(areaKm2 float64, years int) float64 {
	return areaKm2 / (math.Pi * tornadoRadiusKm * tornadoRadiusKm * float64(years))
}

// sigStrikeProb is the annual probability that an EF2+ tornado path crosses
// the site; anyStrikeProb the same for a tornado of any rating.
func (r tornadoResult) sigStrikeProb() float64 {
	return 1 - math.Exp(-strikeRate(r.sigAreaKm2, strikeSigYears))
}

// A tornado of any rating is at least as likely as an EF2+ one; where the
// shorter 1995-2018 record holds less path area near the site than the
// EF2+ tornadoes of 1950-2018, the EF2+ chance is the better lower bound.
func (r tornadoResult) anyStrikeProb() float64 {
	return math.Max(1-math.Exp(-strikeRate(r.anyAreaKm2, strikeAnyYears)), r.sigStrikeProb())
}

// pathAreaInDisc is the area (km²) of a track's path that lies within the
// frame's disc of radius r: the path width times the length of the path
// inside the disc. The straight chord from touchdown to lift-off stands for
// the path, stretched to the recorded path length (a real path bends). A
// track without an end point is taken to run from its start straight away
// from the site, a lower bound.
func (f frame) pathAreaInDisc(tr *track, r float64) float64 {
	if tr.lenKm <= 0 || tr.widKm <= 0 {
		return 0
	}
	length := float64(tr.lenKm)
	if tr.alat == tr.blat && tr.alon == tr.blon {
		ax, ay, _, _ := f.seg(tr.alat, tr.alon, tr.blat, tr.blon)
		d := math.Hypot(ax, ay)
		if d >= r {
			return 0
		}
		return float64(tr.widKm) * math.Min(length, r-d)
	}
	t0, t1, ok := f.discSpan(tr.alat, tr.alon, tr.blat, tr.blon, r)
	if !ok {
		return 0
	}
	ax, ay, bx, by := f.seg(tr.alat, tr.alon, tr.blat, tr.blon)
	chord := math.Hypot(bx-ax, by-ay)
	stretch := 1.0
	if length > chord && chord > 0 {
		stretch = length / chord
	}
	return float64(tr.widKm) * (t1 - t0) * chord * stretch
}

// rate is the EF-weighted annual rate of tornado days within the radius.
// Counting days rather than tornadoes keeps an outbreak that drops several
// tornadoes near the point on one afternoon from counting as several
// independent years' chances.
func (r tornadoResult) rate() float64 { return r.weighted / tornadoYears }

// prob is the annual probability of at least one (EF-weighted) tornado day,
// treating tornado days as a Poisson process.
func (r tornadoResult) prob() float64 { return 1 - math.Exp(-r.rate()) }

func (m *Module) tornadoAt(lat, lon float64) tornadoResult {
	var res tornadoResult
	f := newFrame(lat, lon)
	const r2 = tornadoRadiusKm * tornadoRadiusKm
	var sum float64
	curDay, dayW := int32(-1), float32(0)
	// Candidates come in track order, which is date order.
	// Most candidates lie wholly north or south of the disc; rejecting
	// them on latitude alone skips the projection.
	latHi, latLo := float32(lat+tornadoRadiusKm/geo.KmPerDegLat), float32(lat-tornadoRadiusKm/geo.KmPerDegLat)
	for _, i := range m.tornIx.At(geo.Point{Lat: lat, Lon: lon}) {
		tr := &m.tracks[i]
		if (tr.alat > latHi && tr.blat > latHi) || (tr.alat < latLo && tr.blat < latLo) {
			continue
		}
		if f.segKm2(tr.alat, tr.alon, tr.blat, tr.blon) > r2 {
			continue
		}
		res.count++
		if tr.sig {
			res.sig++
		}
		if yr := tr.day / 10000; yr <= tracksLastYr && (tr.sig || yr >= strikeAnyFirstYr) {
			if a := f.pathAreaInDisc(tr, tornadoRadiusKm); a > 0 {
				if tr.sig {
					res.sigAreaKm2 += a
				}
				if yr >= strikeAnyFirstYr {
					res.anyAreaKm2 += a
				}
			}
		}
		if tr.day != curDay {
			sum += float64(dayW)
			res.days++
			curDay, dayW = tr.day, tr.weight
		} else if tr.weight > dayW {
			dayW = tr.weight
		}
	}
	res.weighted = sum + float64(dayW)
	return res
}

func (r tornadoResult) note() string {
	if r.count == 0 {
		return fmt.Sprintf("No tornado was recorded within 25 miles (40 km) in %d-%d.", tornadoFirstYr, tornadoLastYr)
	}
	plain := 1 - math.Exp(-float64(r.days)/tornadoYears)
	return fmt.Sprintf("A tornado came within 25 miles on %s in %d-%d (%s, %d rated EF2 or stronger): an annual chance of %s (%s on an index that weights each day by its strongest rating).",
		plural(r.days, "day", "days"), tornadoFirstYr, tornadoLastYr, plural(r.count, "tornado", "tornadoes"), r.sig, percent(plain), percent(r.prob()))
}

// strikeNote states the strike probabilities as return periods.
func (r tornadoResult) strikeNote() string {
	sig, any := r.sigStrikeProb(), r.anyStrikeProb()
	if sig <= 0 && any <= 0 {
		return fmt.Sprintf("No recorded tornado path crossed the 25 miles around this site (EF2+ %d-%d, any rating %d-%d).", strikeSigFirstYr, tracksLastYr, strikeAnyFirstYr, tracksLastYr)
	}
	var parts []string
	if any > 0 {
		parts = append(parts, "a tornado of any rating crosses a given point here about once in "+hazard.ReturnPeriodText(1/any)+" years")
	} else {
		parts = append(parts, fmt.Sprintf("no tornado path of any rating has come this close since %d", strikeAnyFirstYr))
	}
	if sig > 0 {
		parts = append(parts, "an EF2+ tornado about once in "+hazard.ReturnPeriodText(1/sig)+" years")
	} else {
		parts = append(parts, "no EF2+ path was recorded this close")
	}
	return "From the tornado path area recorded within 25 miles: " + strings.Join(parts, "; ") + "."
}

func percent(p float64) string {
	switch {
	case p <= 0:
		return "0%"
	case p < 0.001:
		return "under 0.1%"
	case p < 0.1:
		return "about " + strconv.FormatFloat(p*100, 'f', 1, 64) + "%"
	case p > 0.99:
		return "over 99%"
	default:
		return "about " + strconv.FormatFloat(p*100, 'f', 0, 64) + "%"
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
