package pdf

import (
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// TestRealOutlines renders the sample report at real places with the
// coverage layer's real state and county boundaries: the size budget must
// hold for the most detailed states (Alaska's coast and islands, across the
// antimeridian) and the file must stay valid.
func TestRealOutlines(t *testing.T) {
	dir := datatest.Real(t)
	needTools(t)
	layer, err := coverage.Load(dir)
	if err != nil {
		t.Fatalf("loading coverage layer: %v", err)
	}
	sites := []struct {
		name string
		p    geo.Point
	}{
		{"unalaska", geo.Point{Lat: 53.8898, Lon: -166.5422}},
		{"anchorage", geo.Point{Lat: 61.2181, Lon: -149.9003}},
		{"san_francisco", geo.Point{Lat: 37.7793, Lon: -122.4193}},
		{"honolulu", geo.Point{Lat: 21.3069, Lon: -157.8583}},
		{"miami", geo.Point{Lat: 25.7617, Lon: -80.1918}},
		{"boston", geo.Point{Lat: 42.3601, Lon: -71.0589}},
		{"guam", geo.Point{Lat: 13.4745, Lon: 144.7504}},
		{"pago_pago", geo.Point{Lat: -14.2756, Lon: -170.702}},
	}
	for _, s := range sites {
		t.Run(s.name, func(t *testing.T) {
			c, _, ok := layer.Locate(s.p)
			if !ok {
				t.Fatalf("%v is not covered", s.p)
			}
			in := sampleInput()
			in.Assessment.Location.Latitude, in.Assessment.Location.Longitude = s.p.Lat, s.p.Lon
			in.Assessment.Location.CountyFIPS, in.Assessment.Location.CountyName = c.FIPS, c.Name
			in.Assessment.Location.StateCode, in.Assessment.Location.StateName = c.StateCode, c.StateName
			in.StateOutline = layer.StateOutline(c.StateFIPS)
			in.CountyOutline = layer.CountyOutline(c.FIPS)
			start := time.Now()
			b := render(t, in)
			elapsed := time.Since(start)
			vertices := 0
			for _, r := range in.StateOutline {
				vertices += len(r)
			}
			t.Logf("%s (%s): %d state vertices, %d bytes, %v", c.Name, c.FIPS, vertices, len(b), elapsed)
			path := writeTemp(t, b)
			qpdfCheck(t, path)
			checkInside(t, path)
			if p1 := text(t, path, 1, 1); !strings.Contains(p1, c.Name) {
				t.Errorf("page 1 lacks the county name %q", c.Name)
			}
			keep(t, "real_"+s.name, b)
		})
	}
}
