package severeweather

import (
	"math"
	"os"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// kmTrack builds a track in the frame's local km (x east, y north): from
// (ax, ay) to (bx, by), with the recorded path length and width in km.
func kmTrack(f frame, ax, ay, bx, by, lenKm, widKm float64) track {
	lat := func(y float64) float32 { return float32(f.lat + y/geo.KmPerDegLat) }
	lon := func(x float64) float32 { return float32(f.lon + x/f.kx) }
	return track{alat: lat(ay), alon: lon(ax), blat: lat(by), blon: lon(bx), lenKm: float32(lenKm), widKm: float32(widKm), weight: 1}
}

// kmPoint builds a track without an end point at (x, y).
func kmPoint(f frame, x, y, lenKm, widKm float64) track {
	return kmTrack(f, x, y, x, y, lenKm, widKm)
}

func relNear(got, want, rel float64) bool {
	if want == 0 {
		return got == 0
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// TestPathAreaInDisc: the area of a path inside the 40.2 km disc is its
// width times the length of its straight chord inside the disc, stretched
// by the recorded length where that exceeds the chord; a track without an
// end runs from its start straight away from the site. The tracks are laid
// around a site on the equator, where a degree of longitude and of latitude
// are the same length, so the expected areas are exact up to the float32
// coordinates (relative 1e-7).
func TestPathAreaInDisc(t *testing.T) {
	const R = tornadoRadiusKm
	f := newFrame(0, 0)
	for _, c := range []struct {
		name string
		tr   track
		want float64
	}{
		// (a) 20 km through the centre, 0.5 km wide.
		{"crossing the site", kmTrack(f, 0, -10, 0, 10, 20, 0.5), 0.5 * 20},
		{"crossing the site, diagonal", kmTrack(f, -6, -8, 6, 8, 20, 0.5), 0.5 * 20},
		{"crossing the site, recorded shorter than the chord", kmTrack(f, 0, -10, 0, 10, 15, 0.5), 0.5 * 20},
		// (b) 10 km from the site, across the whole disc: the chord of the
		// disc at offset 10 km.
		{"10 km off, across the disc", kmTrack(f, -60, 10, 60, 10, 120, 0.2), 0.2 * 2 * math.Sqrt(R*R-10*10)},
		{"10 km off, across the disc, westbound", kmTrack(f, 60, -10, -60, -10, 120, 0.2), 0.2 * 2 * math.Sqrt(R*R-10*10)},
		{"10 km off, ends at the site's meridian", kmTrack(f, -60, 10, 0, 10, 60, 0.2), 0.2 * math.Sqrt(R*R-10*10)},
		// (c) Outside the disc.
		{"50 km off", kmTrack(f, -60, 50, 60, 50, 120, 1), 0},
		{"stops short of the disc", kmTrack(f, -100, 0, -45, 0, 55, 1), 0},
		{"just outside the disc", kmTrack(f, -60, R+0.01, 60, R+0.01, 120, 1), 0},
		// (d) Without width or length.
		{"no width", kmTrack(f, 0, -10, 0, 10, 20, 0), 0},
		{"no length", kmTrack(f, 0, -10, 0, 10, 0, 0.5), 0},
		{"start point 2019-2022 (neither)", kmPoint(f, 0, 5, 0, 0), 0},
		// (e) No end point: width × min(length, R − d).
		{"point 10 km off, short path", kmPoint(f, 10, 0, 5, 0.3), 0.3 * 5},
		{"point 10 km off, long path", kmPoint(f, 0, -10, 50, 0.3), 0.3 * (R - 10)},
		{"point at the site, long path", kmPoint(f, 0, 0, 100, 0.3), 0.3 * R},
		{"point 30 km off", kmPoint(f, -30, 0, 50, 0.3), 0.3 * (R - 30)},
		{"point 41 km off", kmPoint(f, 41, 0, 5, 0.3), 0},
		// (f) Stretched to the recorded length: a 20 km chord wholly inside
		// with a 30 km path counts 30 km; a 40 km chord half inside with a
		// 60 km path counts half of 60 km.
		{"stretch, wholly inside", kmTrack(f, -10, 5, 10, 5, 30, 0.4), 0.4 * 30},
		{"stretch, half inside", kmTrack(f, R-20, 0, R+20, 0, 60, 0.4), 0.4 * 30},
		{"stretch, starts at the centre, leaves", kmTrack(f, 0, 0, 0, 2*R, 2*R*1.25, 0.4), 0.4 * R * 1.25},
	} {
		got := f.pathAreaInDisc(&c.tr, R)
		if !relNear(got, c.want, 1e-6) {
			t.Errorf("%s: area %.9g km², want %.9g", c.name, got, c.want)
		}
	}
}

// TestPathAreaInDiscMidLatitude repeats the crossing cases at Moore, OK,
// where a degree of longitude is shorter than one of latitude: the frame's
// km, not degrees, set the area.
func TestPathAreaInDiscMidLatitude(t *testing.T) {
	const R = tornadoRadiusKm
	f := newFrame(35.3395, -97.4867)
	for _, c := range []struct {
		name string
		tr   track
		want float64
	}{
		{"east-west through the site", kmTrack(f, -10, 0, 10, 0, 20, 0.5), 10},
		{"north-south through the site", kmTrack(f, 0, -10, 0, 10, 20, 0.5), 10},
		{"10 km off, across the disc", kmTrack(f, -60, 10, 60, 10, 120, 0.2), 0.2 * 2 * math.Sqrt(R*R-10*10)},
		{"point 10 km off", kmPoint(f, 10, 0, 50, 0.3), 0.3 * (R - 10)},
	} {
		// float32 degrees at 35°N carry about 0.3 m.
		if got := f.pathAreaInDisc(&c.tr, R); !relNear(got, c.want, 1e-4) {
			t.Errorf("%s: area %.9g km², want %.9g", c.name, got, c.want)
		}
	}
}

// TestStrikeProb (g): the strike probability is 1 − exp(−area/(π R² years))
// over 69 years (EF2+, 1950-2018) and 24 years (any rating, 1995-2018).
func TestStrikeProb(t *testing.T) {
	if strikeSigYears != 69 || strikeAnyYears != 24 {
		t.Fatalf("strike periods %d and %d years, want 69 and 24", strikeSigYears, strikeAnyYears)
	}
	disc := math.Pi * 40.2 * 40.2
	for _, area := range []float64{0, 1, 95.9, 5000, 1e6} {
		r := tornadoResult{sigAreaKm2: area, anyAreaKm2: area}
		if got, want := r.sigStrikeProb(), 1-math.Exp(-area/(disc*69)); !relNear(got, want, 1e-12) {
			t.Errorf("area %v: EF2+ strike probability %v, want %v", area, got, want)
		}
		if got, want := r.anyStrikeProb(), 1-math.Exp(-area/(disc*24)); !relNear(got, want, 1e-12) {
			t.Errorf("area %v: any-rating strike probability %v, want %v", area, got, want)
		}
	}
	// A path area equal to the disc's once in 69 years is a rate of one
	// strike per 69 years.
	if got, want := (tornadoResult{sigAreaKm2: disc}).sigStrikeProb(), 1-math.Exp(-1.0/69); !relNear(got, want, 1e-12) {
		t.Errorf("one disc of path area: %v, want %v", got, want)
	}
}

// TestImputeWidths (d): a track recorded without a width takes the median
// width of its rating class (EF0-1 and unrated, EF2-3, EF4-5) in its era
// (before 1995, from 1995); other tracks keep theirs.
func TestImputeWidths(t *testing.T) {
	tr := func(day int32, mag int, wid float32) track {
		return track{day: day, weight: tornadoWeight(mag), sig: mag >= 2, lenKm: 1, widKm: wid}
	}
	tracks := []track{
		// Before 1995, EF0-1: median 0.2 (an unrated one counts as EF0).
		tr(19700101, 0, 0.1), tr(19710101, 1, 0.3), tr(19720101, -9, 0.2),
		// Before 1995, EF2-3: median 0.7.
		tr(19700101, 2, 0.5), tr(19710101, 3, 0.9), tr(19941231, 2, 0.7),
		// From 1995, EF0-1: median 0.10.
		tr(19950101, 0, 0.05), tr(20000101, 1, 0.15), tr(20100101, 0, 0.10),
		// From 1995, EF4-5: median 1.2.
		tr(19990503, 5, 1.0), tr(20110427, 4, 1.4), tr(20130520, 5, 1.2),
		// From 1995, EF2-3: median 0.6.
		tr(20000101, 2, 0.6), tr(20010101, 3, 0.6), tr(20020101, 2, 0.8),
		// Before 1995, EF4-5: median 1.3.
		tr(19740403, 4, 1.3), tr(19740403, 4, 1.0), tr(19740403, 5, 1.5),
	}
	zero := []struct {
		tr   track
		want float32
	}{
		{tr(19800101, 1, 0), 0.2},
		{tr(19941231, -9, 0), 0.2}, // last day of the early era
		{tr(19800101, 3, 0), 0.7},
		{tr(19800101, 5, 0), 1.3},
		{tr(19950101, 1, 0), 0.10}, // first day of the late era
		{tr(20050101, 3, 0), 0.6},
		{tr(20050101, 4, 0), 1.2},
	}
	kept := len(tracks)
	for _, z := range zero {
		tracks = append(tracks, z.tr)
	}
	before := append([]track(nil), tracks[:kept]...)
	if n := imputeWidths(tracks); n != len(zero) {
		t.Errorf("imputeWidths filled %d tracks, want %d", n, len(zero))
	}
	for i := range before {
		if tracks[i] != before[i] {
			t.Errorf("track %d with a width changed: %+v -> %+v", i, before[i], tracks[i])
		}
	}
	for i, z := range zero {
		if got := tracks[kept+i].widKm; got != z.want {
			t.Errorf("day %d weight %v: imputed width %v, want %v", z.tr.day, z.tr.weight, got, z.want)
		}
	}
	// An imputed width gives the track an area again.
	f := newFrame(0, 0)
	p := kmTrack(f, 0, -10, 0, 10, 20, 0)
	p.day = 20050101
	ps := []track{p, kmTrack(f, 0, -10, 0, 10, 20, 0.25), kmTrack(f, 0, -10, 0, 10, 20, 0.25), kmTrack(f, 0, -10, 0, 10, 20, 0.5)}
	for i := 1; i < len(ps); i++ {
		ps[i].day = 20000101
	}
	if f.pathAreaInDisc(&ps[0], tornadoRadiusKm) != 0 {
		t.Fatal("a track without width has an area before imputation")
	}
	imputeWidths(ps)
	if got := f.pathAreaInDisc(&ps[0], tornadoRadiusKm); !relNear(got, 0.25*20, 1e-6) {
		t.Errorf("area after imputation %v, want %v", got, 0.25*20)
	}
}

// TestLoadTrackUnits: the loader turns miles and yards into km, and fills
// a zero width from the fixture's other tracks of the same class and era.
func TestLoadTrackUnits(t *testing.T) {
	m := loadFixture(t)
	var found bool
	for _, tr := range m.tracks {
		if tr.day == 19990503 && tr.alat == 35.25 {
			found = true
			if !relNear(float64(tr.lenKm), 32*1.609344, 1e-6) || !relNear(float64(tr.widKm), 1500*0.0009144, 1e-6) {
				t.Errorf("1999-05-03 track: %v km long, %v km wide; want 51.499 and 1.3716", tr.lenKm, tr.widKm)
			}
		}
		if tr.day >= 20190000 && (tr.lenKm != 0 || tr.widKm != 0) {
			t.Errorf("start point %+v has a length or width", tr)
		}
	}
	if !found {
		t.Fatal("fixture track of 1999-05-03 not found")
	}
	if m.tstats.imputedWidth != 0 {
		t.Errorf("fixture: %d widths imputed, want 0", m.tstats.imputedWidth)
	}

	// The 1961 EF4 recorded without a width takes the median of the other
	// pre-1995 EF4-5 tracks: 700, 900 and 1000 yards (the duplicate 1963
	// row dropped before).
	dir := copyFixtures(t, "spc_tornado_tracks_1950_2018.csv", 3, "12,1961,6,1,1961-06-01,17:45:00,3,KS,20,9,4,12,1,6,0,37.8,-99.4679,38.2,-99.4679,27.6,0,0")
	m2, err := Load(os.DirFS(dir), fixtureCounties)
	if err != nil {
		t.Fatal(err)
	}
	if m2.tstats.imputedWidth != 1 {
		t.Errorf("%d widths imputed, want 1", m2.tstats.imputedWidth)
	}
	for _, tr := range m2.tracks {
		if tr.day == 19610601 && !relNear(float64(tr.widKm), 900*0.0009144, 1e-6) {
			t.Errorf("1961 track: imputed width %v km, want 900 yd", tr.widKm)
		}
	}
}

// TestTornadoAtPathArea sums the path areas at fixture sites, against
// areas worked out from the fixture rows: width × the longer of the
// recorded length and the chord, each track lying wholly inside the disc.
func TestTornadoAtPathArea(t *testing.T) {
	m := loadFixture(t)
	chord := func(alat, alon, blat, blon float64) float64 {
		return geo.DistanceKm(geo.Point{Lat: alat, Lon: alon}, geo.Point{Lat: blat, Lon: blon})
	}
	path := func(lenMi, widYd, ch float64) float64 {
		return widYd * kmPerYard * math.Max(lenMi*kmPerMile, ch)
	}
	// Oklahoma County: the 1999 F5 and 2013 EF5 (EF2+ and, being from
	// 1995 on, any rating), the 2010 EF1 and EF0 (any rating only); the
	// 2020 start point has no path and the 1975 track is 150 km away.
	f5 := path(32, 1500, chord(35.25, -97.8, 35.45, -97.3))
	ef5 := path(10.6, 1600, chord(35.32, -97.62, 35.33, -97.43))
	ef1 := path(6.6, 200, chord(35.6, -97.6, 35.65, -97.5))
	ef0 := path(1.3, 50, chord(35.4, -97.3, 35.41, -97.28))
	// Near the Missouri point-only EF2 of 1967 (1 mile, 80 yards), 8.8 km
	// away: the whole mile counts, for EF2+ only (before 1995).
	pt := 80 * kmPerYard * 1 * kmPerMile
	for _, c := range []struct {
		name     string
		lat, lon float64
		sig, any float64
	}{
		{"Oklahoma County", 35.47, -97.52, f5 + ef5, f5 + ef5 + ef1 + ef0},
		{"point-only EF2", 37.5, -94.1, pt, 0},
		// The 1966 point-only EF1 is before 1995: no area of either kind.
		{"point-only EF1 before 1995", 36, -95, 0, 0},
		// Start points of 2019-2022 and the 1995/2018 rows of the start
		// points file have no path.
		{"2019-2022 start points", 40, -89, 0, 0},
		{"Seattle", 47.61, -122.33, 0, 0},
	} {
		r := m.tornadoAt(c.lat, c.lon)
		if !relNear(r.sigAreaKm2, c.sig, 2e-3) || !relNear(r.anyAreaKm2, c.any, 2e-3) {
			t.Errorf("%s: path area EF2+ %.4f any %.4f km², want %.4f and %.4f", c.name, r.sigAreaKm2, r.anyAreaKm2, c.sig, c.any)
		}
	}
	if d := geo.DistanceKm(geo.Point{Lat: 37.5, Lon: -94.1}, geo.Point{Lat: 37.5, Lon: -94}); math.Abs(d-8.8) > 0.1 {
		t.Fatalf("fixture point-only EF2 is %.2f km away, want 8.8", d)
	}

	// The indicators carry the probabilities of those areas.
	okc := m.Measure(datatest.Site(35.47, -97.52, "40109", "OK"))
	disc := math.Pi * tornadoRadiusKm * tornadoRadiusKm
	if got, want := indicator(t, okc, IndTornadoStrikeSig).Value, 1-math.Exp(-(f5+ef5)/(disc*69)); !relNear(got, want, 2e-3) {
		t.Errorf("EF2+ strike probability %v, want %v", got, want)
	}
	if got, want := indicator(t, okc, IndTornadoStrikeAny).Value, 1-math.Exp(-(f5+ef5+ef1+ef0)/(disc*24)); !relNear(got, want, 2e-3) {
		t.Errorf("any-rating strike probability %v, want %v", got, want)
	}
}

// TestStrikeNote covers the four cases of the strike note.
func TestStrikeNote(t *testing.T) {
	disc := math.Pi * tornadoRadiusKm * tornadoRadiusKm
	// Areas giving rates of 1/1000 (EF2+) and 1/250 (any) per year.
	sig, any := disc*69/1000, disc*24/250
	for _, c := range []struct {
		name string
		r    tornadoResult
		want string
	}{
		{"none", tornadoResult{}, "No recorded tornado path crossed the 25 miles around this site (EF2+ 1950-2018, any rating 1995-2018)."},
		{"both", tornadoResult{sigAreaKm2: sig, anyAreaKm2: any},
			"From the tornado path area recorded within 25 miles: a tornado of any rating crosses a given point here about once in 250 years; an EF2+ tornado about once in 1,000 years."},
		{"any only", tornadoResult{anyAreaKm2: any},
			"From the tornado path area recorded within 25 miles: a tornado of any rating crosses a given point here about once in 250 years; no EF2+ path was recorded this close."},
		{"EF2+ only", tornadoResult{sigAreaKm2: sig},
			"From the tornado path area recorded within 25 miles: a tornado of any rating crosses a given point here about once in 1,000 years; an EF2+ tornado about once in 1,000 years."},
	} {
		if got := c.r.strikeNote(); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
