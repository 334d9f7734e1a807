package earthquake

import (
	"math"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/geo"
)

func TestPlaceInterpolation(t *testing.T) {
	pt := func(lat, lon float64) geo.Point { return geo.Point{Lat: lat, Lon: lon} }
	tab := &placeTable{byRegion: map[string][]place{
		regionHI: {
			{Name: "A", Pt: pt(20, -156), PGA: 0.2},
			{Name: "B", Pt: pt(20, -155.8), PGA: 0.6},
			{Name: "C", Pt: pt(20.1, -155.9), PGA: 0.4},
			{Name: "D", Pt: pt(19.9, -155.9), PGA: 0.3},
			{Name: "E", Pt: pt(20.05, -155.9), PGA: 1.0},
		},
		regionAK: {
			{Name: "West", Pt: pt(51.9, -179.9), PGA: 0.5},
			{Name: "Mega", Pt: pt(61.2, -149.9), PGA: 0.5, OverMega: true},
			{Name: "Inland", Pt: pt(62.2, -149.9), PGA: 0.3},
		},
	}}
	idw := func(site geo.Point, ps ...place) float64 {
		var s, w float64
		for _, p := range ps {
			d := math.Max(geo.DistanceKm(site, p.Pt), placeMinKm)
			s += p.PGA / (d * d)
			w += 1 / (d * d)
		}
		return math.Round(s/w*1000) / 1000
	}
	hi := tab.byRegion[regionHI]
	tests := []struct {
		name     string
		region   string
		site     geo.Point
		mega     bool
		want     float64
		used     []string
		radiusKm float64
	}{
		// On a place (under 1 km): the floor keeps the weights finite, and
		// the place dominates.
		{"on a place", regionHI, pt(20, -156), false, idw(pt(20, -156), hi[0], hi[4], hi[2], hi[3]), []string{"A", "E", "C", "D"}, 50},
		// The nearest four of five, by distance.
		{"nearest four", regionHI, pt(20.02, -155.85), false, idw(pt(20.02, -155.85), hi[1], hi[4], hi[2], hi[3]), []string{"B", "E", "C", "D"}, 50},
		// Across the antimeridian: 14 km.
		{"antimeridian", regionAK, pt(51.9, 179.9), false, 0.5, []string{"West"}, 50},
		// 60 km from a megathrust place: only a site above the megathrust
		// reaches it.
		{"megathrust reach", regionAK, pt(60.66, -149.9), true, 0.5, []string{"Mega"}, akInterfaceRadiusKm},
		{"too far", regionAK, pt(60.66, -149.9), false, 0, nil, 0},
		// A place that is not above the megathrust keeps 50 km for anyone.
		{"plain radius", regionAK, pt(62.6, -149.9), true, 0.3, []string{"Inland"}, 50},
		{"no region", "XX", pt(0, 0), false, 0, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tab.at(tc.region, tc.site, tc.mega)
			if ok != (tc.used != nil) {
				t.Fatalf("ok %v, want %v", ok, tc.used != nil)
			}
			if !ok {
				return
			}
			if !near(got.PGA, tc.want, 1e-12) || got.RadiusKm != tc.radiusKm {
				t.Errorf("PGA %v within %v km, want %v within %v km", got.PGA, got.RadiusKm, tc.want, tc.radiusKm)
			}
			if len(got.Used) != len(tc.used) {
				t.Fatalf("used %d places, want %v", len(got.Used), tc.used)
			}
			for i, u := range got.Used {
				if u.Name != tc.used[i] || (i > 0 && u.Km < got.Used[i-1].Km) {
					t.Errorf("used[%d] = %s at %.1f km, want %s, nearest first", i, u.Name, u.Km, tc.used[i])
				}
			}
		})
	}
}

func TestPlaceRegion(t *testing.T) {
	for _, tc := range []struct{ code, fips, want string }{
		{"AK", "", regionAK}, {"", "02", regionAK}, {"HI", "15", regionHI},
		{"PR", "72", regionPRVI}, {"VI", "", regionPRVI}, {"", "78", regionPRVI},
		{"GU", "66", regionGUMP}, {"", "69", regionGUMP}, {"MP", "", regionGUMP},
		{"AS", "60", regionAS}, {"CA", "06", ""}, {"", "", ""},
	} {
		if got := placeRegion(tc.code, tc.fips); got != tc.want {
			t.Errorf("placeRegion(%q, %q) = %q, want %q", tc.code, tc.fips, got, tc.want)
		}
	}
}

func TestAlaskaContext(t *testing.T) {
	m := fixture(t)
	tests := []struct {
		name   string
		p      geo.Point
		fault  string
		km     float64 // 0: none within 100 km
		ifaces int
	}{
		// The fixture arc's lower edge passes north of Anchorage; the
		// Fixture Castle trace 40 km or so north.
		{"Anchorage", geo.Point{Lat: 61.2181, Lon: -149.9003}, "Fixture Castle", 45, 1},
		{"Denali", geo.Point{Lat: 63.6, Lon: -148.0}, "Denali Center", 18, 0},
		{"Aleutians east of 180", geo.Point{Lat: 51.8, Lon: -179.9}, "", 0, 1},
		{"Aleutians west of 180", geo.Point{Lat: 52.1, Lon: 177.5}, "", 0, 1},
		{"Bering Sea", geo.Point{Lat: 57.0, Lon: -175.0}, "", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name, km, ok := m.ak.nearest(tc.p)
			if ok != (tc.km > 0) || name != tc.fault || (ok && math.Abs(km-tc.km) > 6) {
				t.Errorf("nearest %q at %.1f km (%v), want %q at about %v km", name, km, ok, tc.fault, tc.km)
			}
			if got := m.ak.interfacesAt(tc.p); len(got) != tc.ifaces {
				t.Errorf("interfaces %v, want %d", got, tc.ifaces)
			}
		})
	}
	// The even-odd rule on a unit square.
	sq := []geo.Point{{Lat: 0, Lon: 0}, {Lat: 0, Lon: 1}, {Lat: 1, Lon: 1}, {Lat: 1, Lon: 0}}
	if !inRing(sq, 0.5, 0.5) || inRing(sq, 1.5, 0.5) || inRing(sq, 0.5, -0.5) {
		t.Error("inRing on the unit square")
	}
}
