package severeweather

import (
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"time"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

const (
	srcHurdatAtlantic = "noaa-nhc-hurdat2-atlantic"
	srcHurdatPacific  = "noaa-nhc-hurdat2-pacific"

	hurricaneRadiusKm = 100.0
	hurricaneKt       = 64.0 // hurricane strength, 1-minute sustained wind
	hurricaneCellDeg  = 0.5

	// The Atlantic record before 1900 misses many storms that stayed away
	// from shipping lanes and settled coasts; from 1900 on, landfalling and
	// near-shore US hurricanes are considered essentially complete. The
	// eastern and central Pacific record starts in 1949.
	atlanticFirstYr = 1900
	pacificFirstYr  = 1949
	hurdatLastYr    = 2019
	atlanticYears   = hurdatLastYr - atlanticFirstYr + 1
	pacificYears    = hurdatLastYr - pacificFirstYr + 1
)

type basin uint8

const (
	atlantic basin = iota
	pacific
)

func (b basin) firstYear() int {
	if b == atlantic {
		return atlanticFirstYr
	}
	return pacificFirstYr
}

func (b basin) years() float64 {
	if b == atlantic {
		return atlanticYears
	}
	return pacificYears
}

func (b basin) source() string {
	if b == atlantic {
		return srcHurdatAtlantic
	}
	return srcHurdatPacific
}

type storm struct {
	key   string // HURDAT2 id, e.g. AL092008
	basin basin
}

// hseg is a piece of a storm track between consecutive 6-hourly fixes, with
// the maximum sustained wind (kt) at each end; wind varies linearly along it.
type hseg struct {
	alat, alon, blat, blon float32
	wa, wb                 float32
	storm                  int32
}

// category is the Saffir-Simpson category of a 1-minute sustained wind in
// knots, 0 below hurricane strength.
func category(kt float64) int {
	switch {
	case kt >= 137:
		return 5
	case kt >= 113:
		return 4
	case kt >= 96:
		return 3
	case kt >= 83:
		return 2
	case kt >= hurricaneKt:
		return 1
	}
	return 0
}

// categoryWeight is the weight of one hurricane pass in the annual rate: its
// Saffir-Simpson category (1..5). Linear, so that one extreme storm does not
// outweigh a history of repeated strikes.
func categoryWeight(cat int) float64 { return float64(cat) }

type fix struct {
	lat, lon, wind float64
	hour           float64    // the fix's time in hours since 1970 (negative before)
	r64            [4]float64 // 64 kt wind radii NE, SE, SW, NW in km
	hasRadii       bool
}

type hurdatStats struct {
	fixes    int // fixes with a position
	noLon    int // fixes dropped for an empty longitude
	lonFixed int // longitudes below -180 moved by +360
	storms   int // storms in the rated period
	early    int // storms before the rated period, skipped
}

// loadHurdat reads one HURDAT2 basin file and appends the hurricane-strength
// track segments of storms in the rated period.
func loadHurdat(fsys fs.FS, id string, b basin, storms []storm, segs []hseg, tracks []stormTrack, st *hurdatStats) ([]storm, []hseg, []stormTrack, error) {
	rel := data.Path(id)
	t, err := data.OpenTable(fsys, rel, "Key", "DateTime", "Status", "Lat", "Lon", "Wind")
	if err != nil {
		return nil, nil, nil, err
	}
	defer t.Close()
	seen := make(map[string]bool, 2000)
	var cur string
	var fixes []fix
	flush := func() {
		if cur == "" || len(fixes) == 0 {
			return
		}
		yr, _ := strconv.Atoi(cur[4:8])
		if yr < b.firstYear() || yr > hurdatLastYr {
			st.early++
			return
		}
		st.storms++
		si := int32(len(storms))
		storms = append(storms, storm{key: cur, basin: b})
		wf := make([]windFix, len(fixes))
		for i, f := range fixes {
			wf[i] = windFix{hour: f.hour - fixes[0].hour, lat: f.lat, lon: f.lon, wind: f.wind, r64: f.r64, hasRadii: f.hasRadii}
		}
		tracks = append(tracks, stormTrack{basin: b, fixes: wf})
		add := func(a, c fix) {
			if math.Max(a.wind, c.wind) < hurricaneKt {
				return
			}
			segs = append(segs, hseg{alat: float32(a.lat), alon: float32(a.lon), blat: float32(c.lat), blon: float32(c.lon), wa: float32(a.wind), wb: float32(c.wind), storm: si})
		}
		if len(fixes) == 1 {
			add(fixes[0], fixes[0])
		}
		for i := 1; i < len(fixes); i++ {
			add(fixes[i-1], fixes[i])
		}
	}
	for t.Scan() {
		key := t.String("Key")
		if !validKey(key) {
			return nil, nil, nil, t.Errorf("column \"Key\": %q is not a HURDAT2 storm id", key)
		}
		if key != cur {
			if seen[key] {
				return nil, nil, nil, t.Errorf("storm %s appears again after other storms; the file must be sorted by storm", key)
			}
			flush()
			seen[key] = true
			cur, fixes = key, fixes[:0]
		}
		lat, err := t.Float("Lat")
		if err != nil {
			return nil, nil, nil, err
		}
		lon, ok, err := t.OptFloat("Lon")
		if err != nil {
			return nil, nil, nil, err
		}
		if !ok {
			// A parsing artifact of the third-party export; the track
			// joins the neighbouring fixes instead.
			st.noLon++
			continue
		}
		if err := checkLatLon(t, lat, lon); err != nil {
			return nil, nil, nil, err
		}
		if lon < -180 {
			// AL021963 (Beulah) is written west of -180 near Europe.
			lon += 360
			st.lonFixed++
		}
		wind, _, err := t.OptFloat("Wind")
		if err != nil {
			return nil, nil, nil, err
		}
		if wind < 0 || wind > 250 {
			return nil, nil, nil, t.Errorf("column \"Wind\": %v kt out of range", wind)
		}
		if t.String("Status") == "HU" && wind < hurricaneKt {
			wind = hurricaneKt
		}
		when, err := time.Parse("2006-01-02T15:04Z", t.String("DateTime"))
		if err != nil {
			return nil, nil, nil, t.Errorf("column \"DateTime\": %q is not a time like 1851-06-25T00:00Z", t.String("DateTime"))
		}
		f := fix{lat: lat, lon: geo.NormalizeLon(lon), wind: wind, hour: float64(when.Unix()) / 3600}
		if f.r64, f.hasRadii, err = radii64(t); err != nil {
			return nil, nil, nil, err
		}
		st.fixes++
		fixes = append(fixes, f)
	}
	if err := t.Err(); err != nil {
		return nil, nil, nil, err
	}
	flush()
	return storms, segs, tracks, nil
}

// radii64 reads a fix's 64 kt wind radii (nautical miles, per quadrant) in
// km. The radii are analysed from 2004 on; a fix with any radius given has
// radii, and an empty quadrant there means none. A file without the
// columns has none.
func radii64(t *data.Table) ([4]float64, bool, error) {
	var r [4]float64
	has := false
	for q, col := range [...]string{"NE64", "SE64", "SW64", "NW64"} {
		if !t.Has(col) {
			return r, false, nil
		}
		v, ok, err := t.OptFloat(col)
		if err != nil {
			return r, false, err
		}
		if !ok {
			continue
		}
		if v < 0 || v > 500 {
			return r, false, t.Errorf("column %q: %v nm is not a wind radius", col, v)
		}
		r[q] = v * nmToKm
		has = has || v > 0
	}
	return r, has, nil
}

// validKey checks the HURDAT2 id shape BBNNYYYY (basin, number, year).
func validKey(k string) bool {
	if len(k) != 8 {
		return false
	}
	for i := 0; i < 2; i++ {
		if k[i] < 'A' || k[i] > 'Z' {
			return false
		}
	}
	for i := 2; i < 8; i++ {
		if k[i] < '0' || k[i] > '9' {
			return false
		}
	}
	return true
}

func hsegBoxes(segs []hseg) []geo.Box {
	boxes := make([]geo.Box, len(segs))
	for i, s := range segs {
		alon, blon := float64(s.alon), float64(s.blon)
		if d := blon - alon; d > 180 {
			blon -= 360
		} else if d < -180 {
			blon += 360
		}
		boxes[i] = geo.Box{
			Lat0: math.Min(float64(s.alat), float64(s.blat)), Lat1: math.Max(float64(s.alat), float64(s.blat)),
			Lon0: math.Min(alon, blon), Lon1: math.Max(alon, blon),
		}
	}
	return boxes
}

// hurricaneResult is what the best-track record says about one point.
type hurricaneResult struct {
	count     int        // storms of hurricane strength within the radius
	byBasin   [2]int     // count per basin
	weighted  [2]float64 // sum of category weights per basin
	strongest int        // highest category within the radius
}

// rate is the category-weighted annual rate of hurricane passes, the sum of
// each basin's weighted count over that basin's years of record.
func (r hurricaneResult) rate() float64 {
	return r.weighted[atlantic]/atlanticYears + r.weighted[pacific]/pacificYears
}

func (m *Module) hurricaneAt(lat, lon float64) hurricaneResult {
	var res hurricaneResult
	f := newFrame(lat, lon)
	curStorm, curWind := int32(-1), 0.0
	done := func() {
		if curStorm < 0 {
			return
		}
		if cat := category(curWind); cat > 0 {
			b := m.storms[curStorm].basin
			res.count++
			res.byBasin[b]++
			res.weighted[b] += categoryWeight(cat)
			res.strongest = max(res.strongest, cat)
		}
	}
	// Candidates come in segment order, and a storm's segments are
	// consecutive, so each storm is finished when the next one starts.
	for _, i := range m.hurrIx.At(geo.Point{Lat: lat, Lon: lon}) {
		s := &m.hsegs[i]
		t0, t1, ok := f.discSpan(s.alat, s.alon, s.blat, s.blon, hurricaneRadiusKm)
		if !ok {
			continue
		}
		// Wind is linear along the segment, so its maximum inside the disc
		// is at one end of the part inside.
		wa, wb := float64(s.wa), float64(s.wb)
		w := math.Max(wa+t0*(wb-wa), wa+t1*(wb-wa))
		if s.storm != curStorm {
			done()
			curStorm, curWind = s.storm, w
		} else if w > curWind {
			curWind = w
		}
	}
	done()
	return res
}

// source names the basin file that drives the result: the one whose storms
// weigh most, or, with no storm nearby, the basin on the site's side of the
// continent.
func (r hurricaneResult) source(lon float64) string {
	switch {
	case r.weighted[pacific] > r.weighted[atlantic]:
		return srcHurdatPacific
	case r.weighted[atlantic] > 0:
		return srcHurdatAtlantic
	case lon < -105:
		return srcHurdatPacific
	}
	return srcHurdatAtlantic
}

func (r hurricaneResult) note() string {
	if r.count == 0 {
		return fmt.Sprintf("No hurricane-strength storm passed within 100 km in the Atlantic (%d-%d) or eastern and central Pacific (%d-%d) records.",
			atlanticFirstYr, hurdatLastYr, pacificFirstYr, hurdatLastYr)
	}
	var since string
	switch {
	case r.byBasin[pacific] == 0:
		since = fmt.Sprintf("since %d", atlanticFirstYr)
	case r.byBasin[atlantic] == 0:
		since = fmt.Sprintf("since %d", pacificFirstYr)
	default:
		since = fmt.Sprintf("since %d (Atlantic) and %d (Pacific)", atlanticFirstYr, pacificFirstYr)
	}
	verb := "have"
	if r.count == 1 {
		verb = "has"
	}
	return fmt.Sprintf("%s %s passed within 100 km %s (through %d), strongest Category %d.",
		plural(r.count, "hurricane", "hurricanes"), verb, since, hurdatLastYr, r.strongest)
}
