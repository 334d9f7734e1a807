package coverage

import (
	"math"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// realData loads the layer from the real data once.
var realData = datatest.Once(datatest.Real, Load)

func TestRealPlaces(t *testing.T) {
	l := realData(t)
	tests := []struct {
		name     string
		lat, lon float64
		fips     string // "" = unsupported
	}{
		{"San Francisco", 37.7749, -122.4194, "06075"},
		{"Chicago", 41.8781, -87.6298, "17031"},
		{"Miami", 25.7617, -80.1918, "12086"},
		{"Honolulu", 21.3069, -157.8583, "15003"},
		{"Anchorage", 61.2181, -149.9003, "02020"},
		{"San Juan PR", 18.4655, -66.1057, "72127"},
		{"Charlotte Amalie VI", 18.3419, -64.9307, "78030"},
		{"Christiansted VI", 17.7466, -64.7032, "78010"},
		{"Hagatna GU", 13.4757, 144.7489, "66010"},
		{"Pago Pago AS", -14.2756, -170.7020, "60010"},
		{"Saipan MP", 15.1850, 145.7467, "69110"},
		{"Santa Monica pier", 34.0083, -118.4988, "06037"},
		{"Adak AK", 51.88, -176.65, "02016"},
		{"Attu-ish AK", 52.9, 173.2, "02016"},
		{"Amchitka AK (east of 180)", 51.5, 179.0, "02016"},
		{"Semisopochnoi AK 179.6E", 51.95, 179.6, "02016"},
		{"Amatignak AK 179.1W", 51.265, -179.105, "02016"},
		{"Los Angeles", 34.0522, -118.2437, "06037"},
		{"Oklahoma City", 35.4676, -97.5164, "40109"},
		{"Denver", 39.7392, -104.9903, "08031"},
		{"Boston", 42.3601, -71.0589, "25025"},
		{"Seattle", 47.6062, -122.3321, "53033"},
		{"New York (Manhattan)", 40.7831, -73.9712, "36061"},
		{"Washington DC", 38.8977, -77.0365, "11001"},
		{"Houston", 29.7604, -95.3698, "48201"},
		{"Phoenix", 33.4484, -112.0740, "04013"},
		{"Key West", 24.5551, -81.7800, "12087"},
		{"Hartford CT (planning region)", 41.7658, -72.6734, "09110"},
		{"Juneau", 58.3019, -134.4197, "02110"},
		{"Utqiagvik", 71.2906, -156.7886, "02185"},
		{"Hilo", 19.7071, -155.0885, "15001"},
		{"Santa Monica Bay 10 km out", 33.95, -118.6, ""},
		{"Lake Michigan 30 km off Chicago", 41.9, -87.25, ""},
		{"Toronto", 43.65, -79.38, ""},
		{"Tijuana", 32.5149, -117.0382, ""},
		{"Vancouver BC", 49.2827, -123.1207, ""},
		{"Monterrey", 25.67, -100.31, ""},
		{"mid Gulf of Mexico", 26, -90, ""},
		{"mid Atlantic", 35, -45, ""},
		{"null island", 0, 0, ""},
		{"Havana", 23.1136, -82.3666, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, border, ok := l.Locate(geo.Point{Lat: tt.lat, Lon: tt.lon})
			if tt.fips == "" {
				if ok {
					t.Fatalf("Locate = %s %s, want unsupported", c.FIPS, c.Name)
				}
				return
			}
			if !ok {
				t.Fatalf("Locate: unsupported, want %s", tt.fips)
			}
			if c.FIPS != tt.fips {
				t.Fatalf("Locate = %s %s, want %s", c.FIPS, c.Name, tt.fips)
			}
			if !(border >= 0) {
				t.Errorf("borderKm = %v", border)
			}
			t.Logf("%s %s, %s %s, border %.2f km", c.FIPS, c.Name, c.StateCode, c.StateName, border)
		})
	}
}

// TestRealBorder checks the "near a county line" distance on lines whose
// place is well known.
// TestRealStates: the state file has the 50 states, DC and the five
// inhabited territories, each with its USPS code and an outline.
func TestRealStates(t *testing.T) {
	l := realData(t)
	states := l.States()
	if len(states) != 56 {
		t.Fatalf("%d states, want 56", len(states))
	}
	conus, territories := 0, 0
	for _, s := range states {
		if s.Code == "" || s.Name == "" || len(l.StateOutline(s.FIPS)) == 0 {
			t.Errorf("state %+v lacks a code, a name or an outline", s)
		}
		if s.Conus {
			conus++
		}
		if s.Territory {
			territories++
		}
	}
	if conus != 49 || territories != 5 {
		t.Errorf("%d conterminous and %d territories, want 49 and 5", conus, territories)
	}
}

func TestRealBorder(t *testing.T) {
	l := realData(t)
	tests := []struct {
		name     string
		lat, lon float64
		near     bool // within 2 km of another county, else farther than 5 km
	}{
		{"San Francisco by the San Mateo line", 37.7110, -122.4400, true},
		{"Kansas City MO by the state line", 39.0997, -94.6000, true},
		{"Texarkana TX by the state line", 33.4251, -94.0500, true},
		{"Chicago Loop", 41.8781, -87.6298, false},
		{"Oklahoma City", 35.4676, -97.5164, false},
		{"Honolulu (island county)", 21.3069, -157.8583, false},
	}
	for _, tt := range tests {
		c, d, ok := l.Locate(geo.Point{Lat: tt.lat, Lon: tt.lon})
		if !ok {
			t.Errorf("%s: unsupported", tt.name)
			continue
		}
		if tt.near && !(d < 2) || !tt.near && !(d > 5) {
			t.Errorf("%s (%s): borderKm %.2f", tt.name, c.FIPS, d)
		}
	}
}

func TestRealCounties(t *testing.T) {
	l := realData(t)
	cs := l.Counties()
	if len(cs) != 3233 {
		t.Errorf("%d counties, want 3233", len(cs))
	}
	rows := l.Rows()
	for id, want := range map[string]int{SourceCounties: 3233, SourceStates: 56, SourceGazetteer: 3220} {
		if rows[id] != want {
			t.Errorf("Rows()[%s] = %d, want %d", id, rows[id], want)
		}
	}
	var conus, terr int
	for i, c := range cs {
		if i > 0 && cs[i-1].FIPS >= c.FIPS {
			t.Fatalf("Counties not sorted at %d", i)
		}
		if c.StateCode == "" || c.StateName == "" || c.Name == "" || !(c.LandAreaKm2 > 0) {
			t.Errorf("%s: incomplete %+v", c.FIPS, *c)
		}
		if c.Conus {
			conus++
		}
		if c.Territory {
			terr++
		}
	}
	// 3,233 = 3,109 CONUS + 30 Alaska + 5 Hawaii + 89 territory (78 PR,
	// 3 VI, 1 GU, 4 MP, 3 AS: the 2023 file has no Swains or Rose Island).
	if conus != 3109 || terr != 89 {
		t.Errorf("%d CONUS and %d territory counties, want 3109 and 89", conus, terr)
	}

	sf, ok := l.County("06075")
	if !ok || sf.Name != "San Francisco County" || sf.StateCode != "CA" || sf.StateName != "California" || !sf.Conus || sf.Territory {
		t.Errorf("06075 = %+v", sf)
	}
	if math.Abs(sf.LandAreaKm2-46.903*2.589988) > 0.01 {
		t.Errorf("06075 land area %v", sf.LandAreaKm2)
	}
	pr, _ := l.County("72127")
	if pr.Name != "San Juan Municipio" || !pr.Territory || pr.Conus || pr.StateCode != "PR" {
		t.Errorf("72127 = %+v", pr)
	}
	// No Gazetteer row: TopoJSON name, area from the polygon (Guam is
	// about 544 km2 of land; the generalised outline is close to that).
	gu, _ := l.County("66010")
	if gu.Name != "Guam" || gu.LandAreaKm2 < 450 || gu.LandAreaKm2 > 650 {
		t.Errorf("66010 = %+v", gu)
	}
	ak, _ := l.County("02016")
	if ak.Conus || ak.Territory || ak.StateCode != "AK" {
		t.Errorf("02016 = %+v", ak)
	}
	if len(l.StateOutline("06")) == 0 || len(l.CountyOutline("02016")) < 10 {
		t.Errorf("outlines missing")
	}
}

// TestRealReference checks that every reference point locates to its own
// county. The few that do not are internal points the generalised outlines
// put elsewhere; see the log.
func TestRealReference(t *testing.T) {
	l := realData(t)
	ref := l.Reference()
	// 3,220 Gazetteer rows minus the 8 old Connecticut counties, 02261 and
	// 51610 (collapsed to a line by the generalisation).
	if len(ref) != 3220-10 {
		t.Errorf("%d reference points, want %d", len(ref), 3220-10)
	}
	bad := 0
	for i, r := range ref {
		if i > 0 && ref[i-1].FIPS >= r.FIPS {
			t.Fatalf("Reference not sorted at %d", i)
		}
		c, d, ok := l.Locate(r.Point)
		switch {
		case !ok:
			bad++
			t.Logf("%s (%.5f, %.5f): unsupported", r.FIPS, r.Point.Lat, r.Point.Lon)
		case c.FIPS != r.FIPS:
			bad++
			t.Logf("%s (%.5f, %.5f): located in %s %s, border %.2f km", r.FIPS, r.Point.Lat, r.Point.Lon, c.FIPS, c.Name, d)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d reference points do not locate to their own county", bad, len(ref))
	}
	// Moved: internal points in water (Great Lakes, sounds, the Farallones
	// for San Francisco) and a few across a generalised county line.
	t.Logf("%d reference points moved onto their county", l.refMoved)
	if l.refMoved > 60 {
		t.Errorf("%d reference points moved, expected about 45", l.refMoved)
	}
}

func benchLocate(b *testing.B, l *Layer, ref []RefPoint) {
	pts := make([]geo.Point, len(ref))
	for i, r := range ref {
		// Nudge off the internal points so the benchmark is not only
		// county centres.
		pts[i] = geo.Point{Lat: r.Point.Lat + 0.01*float64(i%7-3), Lon: r.Point.Lon + 0.013*float64(i%5-2)}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.Locate(pts[i%len(pts)])
	}
}
