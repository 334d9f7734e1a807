package severeweather

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// TestRadiusOfMaxWind (a): Willoughby, Darling and Rahn (2006), eq. 7a,
// Rmax = 46.4 exp(−0.0155 Vmax + 0.0169 |lat|) with Vmax in m/s, against
// values worked out by hand.
func TestRadiusOfMaxWind(t *testing.T) {
	for _, c := range []struct {
		kt, lat, want float64
	}{
		{100, 25, 31.893788062},
		{100, -25, 31.893788062}, // the southern hemisphere mirrors
		{64, 20, 39.055003990},
		{150, 30, 23.294497159},
		{80, 40, 48.201440150},
		{120, 0, 17.821999466},
	} {
		if got := radiusOfMaxWind(c.kt, c.lat); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("radiusOfMaxWind(%v kt, %v°) = %.9f km, want %.9f", c.kt, c.lat, got, c.want)
		}
	}
	// Stronger storms are tighter, storms farther from the equator wider.
	if !(radiusOfMaxWind(140, 25) < radiusOfMaxWind(80, 25) && radiusOfMaxWind(100, 35) > radiusOfMaxWind(100, 15)) {
		t.Error("Rmax should shrink with wind and grow with latitude")
	}
}

// TestFieldAt (b): the reach of 64 and 96 kt winds around one position.
func TestFieldAt(t *testing.T) {
	const rmax = 31.893788062089822 // 100 kt at 25°N
	// Without analysed radii the profile V = Vmax (Rmax/r)^0.67 sets both.
	f := fieldAt(windFix{lat: 25, lon: -80, wind: 100})
	r64 := rmax * math.Pow(100.0/64, 1/0.67)
	r96 := rmax * math.Pow(100.0/96, 1/0.67)
	if math.Abs(r64-62.085434506) > 1e-6 || math.Abs(r96-33.897443863) > 1e-6 {
		t.Fatalf("worked values: r64 %v r96 %v", r64, r96)
	}
	for q, r := range f.r64 {
		if !relNear(r, r64, 1e-9) {
			t.Errorf("no radii: quadrant %d r64 = %v, want %v", q, r, r64)
		}
	}
	if !relNear(f.r96, r96, 1e-9) {
		t.Errorf("no radii: r96 = %v, want %v", f.r96, r96)
	}

	// With analysed radii the quadrants are the analysed ones and the
	// exponent that carries 100 kt from Rmax to their mean sets r96.
	radii := [4]float64{90, 80, 40, 50} // mean 65 km
	f = fieldAt(windFix{lat: 25, lon: -80, wind: 100, r64: radii, hasRadii: true})
	if f.r64 != radii {
		t.Errorf("with radii: r64 %v, want the analysed %v", f.r64, radii)
	}
	x := math.Log(100.0/64) / math.Log(65/rmax)
	if want := rmax * math.Pow(100.0/96, 1/x); !relNear(f.r96, want, 1e-9) {
		t.Errorf("with radii: r96 = %v, want %v (fitted x = %.4f)", f.r96, want, x)
	}
	// The fit uses only the quadrants that have 64 kt winds.
	f = fieldAt(windFix{lat: 25, lon: -80, wind: 100, r64: [4]float64{90, 0, 40, 0}, hasRadii: true})
	x = math.Log(100.0/64) / math.Log(65/rmax)
	if want := rmax * math.Pow(100.0/96, 1/x); !relNear(f.r96, want, 1e-9) || f.r64[1] != 0 || f.r64[3] != 0 {
		t.Errorf("two quadrants: field %+v, want r96 %v and no 64 kt in SE and NW", f, want)
	}

	for _, c := range []struct {
		name  string
		p     windFix
		r64   [4]float64
		r96   float64
		exact bool
	}{
		// A mean radius near Rmax fits no exponent: outerDecay stays.
		{"mean radius within 5% of Rmax", windFix{lat: 25, wind: 100, r64: [4]float64{rmax, rmax, rmax, rmax}, hasRadii: true},
			[4]float64{rmax, rmax, rmax, rmax}, r96, false},
		// A very wide field would fit x below 0.3: clamped.
		{"clamped at 0.3", windFix{lat: 25, wind: 100, r64: [4]float64{400, 400, 400, 400}, hasRadii: true},
			[4]float64{400, 400, 400, 400}, rmax * math.Pow(100.0/96, 1/0.3), false},
		// A field barely wider than Rmax would fit x above 1.5: clamped.
		{"clamped at 1.5", windFix{lat: 25, wind: 100, r64: [4]float64{1.06 * rmax, 1.06 * rmax, 1.06 * rmax, 1.06 * rmax}, hasRadii: true},
			[4]float64{1.06 * rmax, 1.06 * rmax, 1.06 * rmax, 1.06 * rmax}, rmax * math.Pow(100.0/96, 1/1.5), false},
		// Exactly 64 kt: hurricane force at Rmax only, no major winds.
		{"64 kt", windFix{lat: 20, wind: 64}, [4]float64{39.055003990247556, 39.055003990247556, 39.055003990247556, 39.055003990247556}, 0, false},
		// Below hurricane force nothing, radii or not.
		{"63.9 kt", windFix{lat: 25, wind: 63.9}, [4]float64{}, 0, true},
		{"60 kt with radii", windFix{lat: 25, wind: 60, r64: [4]float64{20, 20, 20, 20}, hasRadii: true}, [4]float64{}, 0, true},
		{"no wind", windFix{lat: 25}, [4]float64{}, 0, true},
	} {
		f := fieldAt(c.p)
		ok := relNear(f.r96, c.r96, 1e-9)
		for q := range f.r64 {
			ok = ok && relNear(f.r64[q], c.r64[q], 1e-9)
		}
		if !ok || (c.exact && f != (field{})) {
			t.Errorf("%s: field %+v, want r64 %v r96 %v", c.name, f, c.r64, c.r96)
		}
	}
}

// testGrid is a hand-made 4° × 4° grid with its stamps.
func testGrid(lat0, lon0 float64, rows, cols int) (*windGrid, []int32, []int32) {
	g := &windGrid{basin: atlantic, lat0: lat0, lon0: lon0, rows: rows, cols: cols,
		hurricane: make([]uint16, rows*cols), major: make([]uint16, rows*cols)}
	s64, s96 := make([]int32, rows*cols), make([]int32, rows*cols)
	for i := range s64 {
		s64[i], s96[i] = -1, -1
	}
	return g, s64, s96
}

// northbound is a storm moving north along 80°W, 0.6° of latitude per 6
// hours from 24.05°N, so that its hourly positions pass each cell centre's
// latitude of the test grid exactly.
func northbound(wind float64, r64 [4]float64, hasRadii bool) []windFix {
	var fixes []windFix
	for i := 0; i <= 6; i++ {
		fixes = append(fixes, windFix{hour: float64(6 * i), lat: 24.05 + 0.6*float64(i), lon: -80, wind: wind, r64: r64, hasRadii: hasRadii})
	}
	return fixes
}

// TestAddStormSwath (c): a 100 kt storm moving north along a meridian.
// Along the track, a cell whose centre lies at distance d east or west of
// the track is counted for 64 kt iff d ≤ r64 at the cell's latitude and for
// 96 kt iff d ≤ r96, however many hourly positions cover it, and once per
// storm.
func TestAddStormSwath(t *testing.T) {
	for _, c := range []struct {
		name     string
		radii    [4]float64
		hasRadii bool
	}{
		{"parametric profile", [4]float64{}, false},
		// Wider east (NE, SE) than west (SW, NW).
		{"analysed radii", [4]float64{80, 80, 30, 30}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, s64, s96 := testGrid(24, -82, 40, 40)
			fixes := northbound(100, c.radii, c.hasRadii)
			g.addStorm(fixes, 0, s64, s96)
			checked, counted := 0, 0
			for r := 0; r <= 36; r++ { // rows whose centres the track passes
				lat := 24 + (float64(r)+0.5)*windCellDeg
				f := fieldAt(windFix{lat: lat, lon: -80, wind: 100, r64: c.radii, hasRadii: c.hasRadii})
				kx := geo.KmPerDegLat * math.Cos(lat*math.Pi/180)
				for col := 0; col < g.cols; col++ {
					dx := (-82 + (float64(col)+0.5)*windCellDeg + 80) * kx
					reach64 := f.r64[0] // east
					if dx < 0 {
						reach64 = f.r64[2] // west
					}
					d := math.Abs(dx)
					if math.Abs(d-reach64) < 0.01 || math.Abs(d-f.r96) < 0.01 {
						continue // on the edge: rounding decides
					}
					k := r*g.cols + col
					want64, want96 := btoi(d <= reach64), btoi(d <= f.r96 && d <= reach64) // 96 kt winds lie inside the 64 kt ones
					if int(g.hurricane[k]) != want64 || int(g.major[k]) != want96 {
						t.Errorf("row %d (%.2f°N) col %d, %.2f km %s of the track: counts 64 kt %d, 96 kt %d; want %d, %d (r64 %.2f, r96 %.2f)",
							r, lat, col, d, map[bool]string{true: "east", false: "west"}[dx >= 0], g.hurricane[k], g.major[k], want64, want96, reach64, f.r96)
					}
					checked++
					counted += want64
				}
			}
			if checked < 36*38 || counted < 36*8 {
				t.Fatalf("checked %d cells, %d within r64: the test grid is mis-drawn", checked, counted)
			}
			for k := range g.hurricane {
				if g.hurricane[k] > 1 || g.major[k] > 1 {
					t.Fatalf("cell %d counted %d/%d times for one storm", k, g.hurricane[k], g.major[k])
				}
			}
			// Cells beyond the last fix count only within reach of it.
			last := fixes[len(fixes)-1]
			lf := fieldAt(last)
			for r := 37; r < g.rows; r++ {
				for col := 0; col < g.cols; col++ {
					p := geo.Point{Lat: 24 + (float64(r)+0.5)*windCellDeg, Lon: -82 + (float64(col)+0.5)*windCellDeg}
					d := geo.DistanceKm(p, geo.Point{Lat: last.lat, Lon: last.lon})
					if g.hurricane[r*g.cols+col] > 0 && d > math.Max(lf.r64[0], lf.r64[2])+1 {
						t.Errorf("cell %v, %.1f km beyond the last fix, counted", p, d)
					}
				}
			}

			// A second storm on the same track counts again; laying the
			// same storm twice does not.
			before := append([]uint16(nil), g.hurricane...)
			g.addStorm(fixes, 1, s64, s96)
			g.addStorm(fixes, 1, s64, s96)
			for k := range before {
				if g.hurricane[k] != 2*before[k] {
					t.Fatalf("cell %d: %d storms after a second storm on the same track, want %d", k, g.hurricane[k], 2*before[k])
				}
			}
		})
	}
}

// TestAddStormWeakStorm: a storm below hurricane force leaves the grid
// untouched; one that reaches it only between two fixes counts where the
// interpolated wind reaches 64 kt.
func TestAddStormWeakStorm(t *testing.T) {
	g, s64, s96 := testGrid(24, -82, 40, 40)
	g.addStorm(northbound(60, [4]float64{}, false), 0, s64, s96)
	for k := range g.hurricane {
		if g.hurricane[k] != 0 || g.major[k] != 0 {
			t.Fatalf("a 60 kt storm counted in cell %d", k)
		}
	}
	// 60 kt to 70 kt in 6 hours, 3° north: linear, 64 kt from 2.4 hours,
	// so the hourly positions have hurricane force from 25.55°N (hour 3,
	// 65 kt, reach about 43 km) on.
	fixes := []windFix{{hour: 0, lat: 24.05, lon: -80, wind: 60}, {hour: 6, lat: 27.05, lon: -80, wind: 70}}
	g.addStorm(fixes, 1, s64, s96)
	at := func(lat, lon float64) uint16 {
		return g.hurricane[int((lat-g.lat0)/windCellDeg)*g.cols+int((lon-g.lon0)/windCellDeg)]
	}
	got := [...]uint16{at(24.05, -80.05), at(24.55, -80.05), at(24.95, -80.05), at(25.55, -80.05), at(26.55, -80.05), at(27.05, -80.05)}
	if got != [...]uint16{0, 0, 0, 1, 1, 1} {
		t.Errorf("strengthening storm: counts along the track at 24.05, 24.55, 24.95, 25.55, 26.55, 27.05°N = %v, want 0 0 0 1 1 1", got)
	}
}

// TestInterpolate (d): positions and radii move linearly; a weakening
// storm's wind decays exponentially towards 26.7 kt (Kaplan and DeMaria),
// a strengthening storm's rises linearly.
func TestInterpolate(t *testing.T) {
	a := windFix{hour: 0, lat: 29, lon: -90, wind: 120, r64: [4]float64{80, 60, 40, 60}, hasRadii: true}
	b := windFix{hour: 6, lat: 30.2, lon: -90.6, wind: 60, r64: [4]float64{40, 40, 20, 20}, hasRadii: true}
	mid := interpolate(a, b, 3)
	wantW := 26.7 + (120-26.7)*math.Pow((60-26.7)/(120-26.7), 0.5)
	if math.Abs(wantW-82.439483313) > 1e-6 {
		t.Fatalf("worked value %v", wantW)
	}
	if !relNear(mid.wind, wantW, 1e-12) || !(mid.wind < 90) {
		t.Errorf("weakening 120 -> 60 kt, mid-way: %v kt, want %v, below the linear 90", mid.wind, wantW)
	}
	if mid.hour != 3 || !relNear(mid.lat, 29.6, 1e-12) || !relNear(mid.lon, -90.3, 1e-12) {
		t.Errorf("mid-way position %+v, want 29.6, -90.3 at hour 3", mid)
	}
	if !mid.hasRadii || mid.r64 != [4]float64{60, 50, 30, 40} {
		t.Errorf("mid-way radii %v (has %v), want 60 50 30 40", mid.r64, mid.hasRadii)
	}
	// The decay meets both fixes and falls all the way.
	prev := math.Inf(1)
	for h := 0.0; h <= 6; h++ {
		w := interpolate(a, b, h).wind
		if w >= prev {
			t.Errorf("hour %v: %v kt, not below hour %v's %v", h, w, h-1, prev)
		}
		tt := h / 6
		if lin := 120 + tt*(60-120); h > 0 && h < 6 && !(w < lin) {
			t.Errorf("hour %v: %v kt not below the linear %v", h, w, lin)
		}
		prev = w
	}
	if w0, w6 := interpolate(a, b, 0).wind, interpolate(a, b, 6).wind; !relNear(w0, 120, 1e-12) || !relNear(w6, 60, 1e-12) {
		t.Errorf("ends %v and %v kt, want 120 and 60", w0, w6)
	}

	// Strengthening: linear.
	if w := interpolate(b, windFix{hour: 12, lat: 31, lon: -91, wind: 120}, 9).wind; !relNear(w, 90, 1e-12) {
		t.Errorf("strengthening 60 -> 120 kt, mid-way: %v kt, want 90", w)
	}
	// Steady: unchanged.
	if w := interpolate(windFix{hour: 0, wind: 100}, windFix{hour: 6, wind: 100}, 2).wind; !relNear(w, 100, 1e-12) {
		t.Errorf("steady 100 kt: %v", w)
	}
	// Radii only when both fixes have them.
	if p := interpolate(a, windFix{hour: 6, lat: 30, lon: -90, wind: 60}, 3); p.hasRadii || p.r64 != [4]float64{} {
		t.Errorf("one fix without radii: %+v, want no radii", p)
	}
	// Across the antimeridian the storm takes the short way.
	p := interpolate(windFix{hour: 0, lat: 20, lon: 179.5, wind: 80}, windFix{hour: 6, lat: 20, lon: -179.5, wind: 80}, 3)
	if math.Abs(math.Abs(p.lon)-180) > 1e-9 {
		t.Errorf("across the date line mid-way longitude %v, want ±180", p.lon)
	}
	p = interpolate(windFix{hour: 0, lat: 20, lon: 179.5, wind: 80}, windFix{hour: 6, lat: 20, lon: -179.5, wind: 80}, 4.5)
	if !relNear(p.lon, -179.75, 1e-9) {
		t.Errorf("across the date line at 3/4: longitude %v, want -179.75", p.lon)
	}
	// Fixes at the same hour: the first.
	if p := interpolate(a, windFix{hour: 0, lat: 40, wind: 10}, 0); p != a {
		t.Errorf("zero span: %+v, want the first fix", p)
	}
}

// TestWindAt (e): the site's cell in the first domain that holds it; no
// count outside every domain.
func TestWindAt(t *testing.T) {
	grids := buildWindGrids(nil)
	for _, c := range []struct {
		name     string
		lat, lon float64
		b        basin
		ok       bool
	}{
		{"Miami", 25.7617, -80.1918, atlantic, true},
		{"Chicago", 41.8781, -87.6298, atlantic, true},
		{"Caribou, ME", 46.8606, -68.0120, atlantic, true},
		{"St. Thomas, VI", 18.3381, -64.8941, atlantic, true},
		{"Honolulu", 21.3069, -157.8583, pacific, true},
		{"Lihue", 21.9811, -159.3711, pacific, true},
		{"Phoenix", 33.4484, -112.0740, pacific, true},
		{"Los Angeles", 34.0522, -118.2437, pacific, true},
		{"Seattle", 47.6062, -122.3321, atlantic, false},
		{"Anchorage", 61.2181, -149.9003, atlantic, false},
		{"Guam", 13.4443, 144.7937, atlantic, false},
		{"Pago Pago", -14.2756, -170.7020, atlantic, false},
		{"London", 51.5074, -0.1278, atlantic, false},
		{"date line", 20, 179.9, atlantic, false},
		{"south of the Atlantic grid", 13.95, -80, atlantic, false},
		{"east of the Atlantic grid", 30, -58.95, atlantic, false},
	} {
		n64, n96, b, ok := windAt(grids, c.lat, c.lon)
		if ok != c.ok || b != c.b || n64 != 0 || n96 != 0 {
			t.Errorf("%s: windAt = %d, %d, basin %d, %v; want 0, 0, basin %d, %v", c.name, n64, n96, b, ok, c.b, c.ok)
		}
	}
}

// TestBuildWindGrids: each storm is laid over the grids of its own basin
// only, and windAt reads the cell.
func TestBuildWindGrids(t *testing.T) {
	// The same 100 kt storm over the Atlantic grid, once as an Atlantic
	// and once as a Pacific storm; and a 120 kt Pacific storm over Kauai.
	atl := northbound(100, [4]float64{}, false)
	kauai := []windFix{{hour: 0, lat: 20.5, lon: -159.4, wind: 120}, {hour: 6, lat: 22.5, lon: -159.4, wind: 120}}
	grids := buildWindGrids([]stormTrack{{basin: atlantic, fixes: atl}, {basin: pacific, fixes: atl}, {basin: pacific, fixes: kauai}})
	for _, c := range []struct {
		name     string
		lat, lon float64
		n64, n96 int
		b        basin
	}{
		{"on the Atlantic track", 25.05, -80.05, 1, 1, atlantic},
		{"50 km east of it", 25.05, -79.55, 1, 0, atlantic},
		{"100 km east of it", 25.05, -79.0, 0, 0, atlantic},
		{"Lihue", 21.9811, -159.3711, 1, 1, pacific},
		{"Honolulu", 21.3069, -157.8583, 0, 0, pacific},
	} {
		n64, n96, b, ok := windAt(grids, c.lat, c.lon)
		if !ok || n64 != c.n64 || n96 != c.n96 || b != c.b {
			t.Errorf("%s: windAt = %d, %d, basin %d, %v; want %d, %d, basin %d", c.name, n64, n96, b, ok, c.n64, c.n96, c.b)
		}
	}
}

// TestQuadrant (f): NE, SE, SW, NW in the HURDAT2 order, the axes going
// to the quadrant clockwise of them (north to NE, east to NE, south to SE,
// west to NW).
func TestQuadrant(t *testing.T) {
	for _, c := range []struct {
		dx, dy float64
		want   int
	}{
		{1, 1, 0}, {1, -1, 1}, {-1, -1, 2}, {-1, 1, 3},
		{30, 0.001, 0}, {30, -0.001, 1}, {-30, -0.001, 2}, {-30, 0.001, 3},
		{0, 0, 0}, {0, 5, 0}, {5, 0, 0}, {0, -5, 1}, {-5, 0, 3},
	} {
		if got := quadrant(c.dx, c.dy); got != c.want {
			t.Errorf("quadrant(%v, %v) = %d, want %d", c.dx, c.dy, got, c.want)
		}
	}
}

// TestReturnYears (g): two significant digits, thousands separators.
func TestReturnYears(t *testing.T) {
	for _, c := range []struct {
		y    float64
		want string
	}{
		{7.6, "7.6"}, {7.04, "7"}, {1.25, "1.3"}, {9.96, "10"},
		{18, "18"}, {18.4, "18"}, {99.4, "99"}, {120, "120"}, {126, "130"},
		{1300, "1,300"}, {1349, "1,300"}, {3654, "3,700"},
		{12000, "12,000"}, {12345, "12,000"}, {290000, "290,000"}, {1.5e6, "1,500,000"},
	} {
		if got := hazard.ReturnPeriodText(c.y); got != c.want {
			t.Errorf("hazard.ReturnPeriodText(%v) = %q, want %q", c.y, got, c.want)
		}
	}
}

// TestWindResult: the annual chances are Poisson over the basin's rated
// years, and the note states the counts and return periods.
func TestWindResult(t *testing.T) {
	w := newWindResult(17, 4, atlantic)
	if got, want := w.hurricaneProb(), 1-math.Exp(-17.0/120); !relNear(got, want, 1e-12) {
		t.Errorf("Atlantic 17 storms: %v, want %v", got, want)
	}
	if got, want := w.majorProb(), 1-math.Exp(-4.0/120); !relNear(got, want, 1e-12) {
		t.Errorf("Atlantic 4 major: %v, want %v", got, want)
	}
	if got, want := w.note(), "Hurricane-force winds (64 kt+) reached this site in 17 storms of the Atlantic best tracks 1900-2019, about once in 7.6 years; major-hurricane winds (96 kt+) in 4, about once in 31 years."; got != want {
		t.Errorf("note\n got %q\nwant %q", got, want)
	}
	p := newWindResult(1, 0, pacific)
	if got, want := p.hurricaneProb(), 1-math.Exp(-1.0/71); !relNear(got, want, 1e-12) || p.majorProb() != 0 {
		t.Errorf("Pacific 1 storm: %v / %v, want %v / 0", got, p.majorProb(), want)
	}
	if got, want := p.note(), "Hurricane-force winds (64 kt+) reached this site in 1 storm of the eastern and central Pacific best tracks 1949-2019, about once in 72 years; major-hurricane winds (96 kt+) in none of them."; got != want {
		t.Errorf("note\n got %q\nwant %q", got, want)
	}
	if got, want := newWindResult(0, 0, pacific).note(), "No hurricane-force winds reached this site in the modelled wind fields of the eastern and central Pacific best tracks 1949-2019 (71 years)."; got != want {
		t.Errorf("note\n got %q\nwant %q", got, want)
	}
}

// TestWindFixture: the wind grids built from the fixture tracks.
func TestWindFixture(t *testing.T) {
	m := loadFixture(t)
	for _, c := range []struct {
		name     string
		lat, lon float64
		n64, n96 int
		b        basin
	}{
		// ABLE (1950, 100 kt) passes 51 km south, inside its 62 km reach
		// of 64 kt but not its 34 km reach of 96 kt; the 1880 storm over
		// the city is before 1900 and BAKER was a tropical storm here.
		{"Miami", 25.76, -80.19, 1, 0, atlantic},
		{"on ABLE's track", 25.3, -80.5, 1, 1, atlantic},
		// CARLA (90 kt) passes 50 km north of the cell centre, between
		// fixes 4° apart.
		{"between fixes", 27, -70, 1, 0, atlantic},
		// EASY and FOX pass 89 and 110 km away, beyond their 51 and 80 km
		// reach.
		{"radius edge", 30, -60, 0, 0, atlantic},
		// IKAIKA passes about 40 km west at 120 kt: beyond its 35 km reach
		// of 96 kt.
		{"Honolulu", 21.31, -157.86, 1, 0, pacific},
		{"San Juan", 18.47, -66.11, 0, 0, atlantic},
		{"Chicago", 41.88, -87.63, 0, 0, atlantic},
	} {
		n64, n96, b, ok := windAt(m.winds, c.lat, c.lon)
		if !ok || n64 != c.n64 || n96 != c.n96 || b != c.b {
			t.Errorf("%s: windAt = %d, %d, basin %d, %v; want %d, %d, basin %d", c.name, n64, n96, b, ok, c.n64, c.n96, c.b)
		}
	}

	mia := m.Measure(datatest.Site(25.76, -80.19, "12086", "FL"))
	hw := indicator(t, mia, IndHurricaneWind)
	if !relNear(hw.Value, 1-math.Exp(-1.0/120), 1e-12) || hw.Source != srcHurdatAtlantic || !hw.AnnualChance || hw.Weight != weightPeril ||
		hw.Resolution.Kind != hazard.ResGrid || !strings.Contains(hw.Label, "Atlantic best tracks 1900-2019") {
		t.Errorf("Miami hurricane wind %+v", hw)
	}
	if mw := indicator(t, mia, IndMajorWind); mw.Value != 0 || mw.Weight != 0 || !mw.Ranked || mw.AnnualChance {
		t.Errorf("Miami major wind %+v", mw)
	}
	hnl := m.Measure(datatest.Site(21.31, -157.86, "15003", "HI"))
	if hw := indicator(t, hnl, IndHurricaneWind); !relNear(hw.Value, 1-math.Exp(-1.0/71), 1e-12) || hw.Source != srcHurdatPacific ||
		!strings.Contains(hw.Label, "eastern and central Pacific best tracks 1949-2019") {
		t.Errorf("Honolulu hurricane wind %+v", hw)
	}
}

// TestLoadHurdatTimesAndRadii: fixes carry their hour since the storm's
// first fix and, from 2004, the 64 kt radii in km.
func TestLoadHurdatTimesAndRadii(t *testing.T) {
	const al = "hurdat2_atlantic_1851_2019.csv"
	row := func(key, when string, lat, lon, wind string, r64 [4]string) string {
		f := []string{key, "TEST", when, "", "HU", lat, lon, wind, "950", "", "", "", "", "", "", "", ""}
		return strings.Join(append(f, r64[:]...), ",")
	}
	// Appended after GEORGE (line 27): a 2005 storm with radii in nautical
	// miles, one quadrant empty, and a landfall fix off the 6-hour times.
	extra := strings.Join([]string{
		row("AL012005", "2005-08-29T06:00Z", "28.0", "-89.6", "110", [4]string{"100", "90", "50", "60"}),
		row("AL012005", "2005-08-29T11:10Z", "29.3", "-89.6", "110", [4]string{"100", "", "50", "60"}),
		row("AL012005", "2005-08-29T12:00Z", "29.5", "-89.6", "100", [4]string{"0", "0", "0", "0"}),
	}, "\n")
	dir := copyFixtures(t, al, 27, "AL031986,GEORGE,1986-08-01T06:00Z,,TD,18.5,-66.5,,,,,,,,,,,,,,\n"+extra)
	var st hurdatStats
	_, _, tracks, err := loadHurdat(os.DirFS(dir), srcHurdatAtlantic, atlantic, nil, nil, nil, &st)
	if err != nil {
		t.Fatal(err)
	}
	if len(tracks) != 9 {
		t.Fatalf("%d storms, want 9 (8 of the fixture and the 2005 one)", len(tracks))
	}
	if tracks[0].fixes[1].hour != 6 || tracks[0].basin != atlantic {
		t.Errorf("first rated storm: %+v, want its second fix at hour 6", tracks[0])
	}
	k := tracks[len(tracks)-1].fixes
	if len(k) != 3 || k[0].hour != 0 || !relNear(k[1].hour, 5+10.0/60, 1e-9) || k[2].hour != 6 {
		t.Fatalf("2005 storm fixes %+v, want hours 0, 5h10, 6", k)
	}
	nm := 1.852
	if !k[0].hasRadii || k[0].r64 != [4]float64{100 * nm, 90 * nm, 50 * nm, 60 * nm} {
		t.Errorf("first fix radii %v (has %v), want 185.2 166.68 92.6 111.12 km", k[0].r64, k[0].hasRadii)
	}
	if !k[1].hasRadii || k[1].r64 != [4]float64{100 * nm, 0, 50 * nm, 60 * nm} {
		t.Errorf("second fix radii %v (has %v), want an empty SE quadrant", k[1].r64, k[1].hasRadii)
	}
	if k[2].hasRadii {
		t.Errorf("all-zero radii read as analysed: %+v", k[2])
	}
	for _, f := range tracks[0].fixes {
		if f.hasRadii {
			t.Errorf("1950 fix with radii: %+v", f)
		}
	}
}

// A quadrant whose 64 kt radius is small cannot hold 96 kt winds: the major
// count never exceeds the hurricane-force count in any cell.
func TestMajorNeverWithoutHurricaneForce(t *testing.T) {
	g, s64, s96 := testGrid(24, -82, 40, 40)
	g.addStorm(northbound(120, [4]float64{80, 80, 10, 10}, true), 0, s64, s96)
	for k := range g.hurricane {
		if g.major[k] > g.hurricane[k] {
			t.Fatalf("cell %d: %d major, %d hurricane-force", k, g.major[k], g.hurricane[k])
		}
	}
}
