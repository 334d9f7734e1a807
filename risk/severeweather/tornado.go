package severeweather

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"locrisk/risk/data"
	"locrisk/risk/geo"
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
)

// track is one tornado: a segment from touchdown to lift-off, or a point
// (a == b) when the end is unknown.
type track struct {
	alat, alon, blat, blon float32
	day                    int32   // local date as yyyymmdd
	weight                 float32 // EF weight (tornadoWeight)
	sig                    bool    // rated EF2 or stronger
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
func loadTracks(dir string, st *tornadoStats) ([]track, error) {
	rel := data.Path(srcTornadoTracks)
	t, err := data.OpenTable(dir, rel, "om", "yr", "mo", "dy", "time", "mag", "slat", "slon", "elat", "elon", "len")
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
		var v [5]float64
		for i, c := range [...]string{"slat", "slon", "elat", "elon", "len"} {
			if v[i], err = t.Float(c); err != nil {
				return nil, err
			}
		}
		slat, slon, elat, elon, lenMi := v[0], v[1], v[2], v[3], v[4]
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
		tr := track{alat: float32(slat), alon: float32(slon), blat: float32(elat), blon: float32(elon), day: int32(yr*10000 + mo*100 + dy), weight: tornadoWeight(mag), sig: mag >= 2}
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
	return tracks, nil
}

// loadStartPoints appends the 2019-2022 tornadoes of the SPC start-points
// file (earlier years are already in the tracks file, with end points).
func loadStartPoints(dir string, tracks []track, st *tornadoStats) ([]track, error) {
	rel := data.Path(srcTornado2019)
	t, err := data.OpenTable(dir, rel, "om", "yr", "date", "rating", "slat", "slon")
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

func trackBoxes(tracks []track) []box {
	boxes := make([]box, len(tracks))
	for i, tr := range tracks {
		alon, blon := float64(tr.alon), float64(tr.blon)
		if d := blon - alon; d > 180 {
			blon -= 360
		} else if d < -180 {
			blon += 360
		}
		boxes[i] = box{
			lat0: math.Min(float64(tr.alat), float64(tr.blat)), lat1: math.Max(float64(tr.alat), float64(tr.blat)),
			lon0: math.Min(alon, blon), lon1: math.Max(alon, blon),
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
	for _, i := range m.tornIx.candidates(lat, lon) {
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
	return fmt.Sprintf("A tornado came within 25 miles on %s in %d-%d (%s, %d rated EF2 or stronger): an annual chance of %s, or %s weighted by EF rating.",
		plural(r.days, "day", "days"), tornadoFirstYr, tornadoLastYr, plural(r.count, "tornado", "tornadoes"), r.sig, percent(plain), percent(r.prob()))
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
