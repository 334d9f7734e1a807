// Package landslide counts reported landslides near a site from NASA's Global
// Landslide Catalog (GLC, 1988-2017): point events compiled from news
// reports, disaster databases and scientific reports.
//
// The count measures where landslides were reported, not where they can
// happen: coverage follows media attention (almost all U.S. events are from
// 2007 on, and Oregon and Washington dominate), locations can be off by up
// to 50 km, and quiet hillsides with no road or house nearby are absent.
// The module therefore always reports low confidence, and the engine shows
// the FEMA NRI landslide score beside it as the benchmark.
//
// Events are kept whatever country the catalog names: 1,562 rows of the
// 2016-2017 additions have no country code at all (most are in the U.S.),
// and a landslide 10 km across the Canadian border is as near as one 10 km
// inside it. Snow avalanches and events placed only to within 100 km or
// more are left out.
package landslide

import (
	"math"
	"strconv"
	"strings"

	"locrisk/risk/data"
	"locrisk/risk/geo"
	"locrisk/risk/hazard"
)

// Indicator ids.
const (
	IndicatorDensity = "reported_landslide_density"
	IndicatorCount   = "reported_landslides_25km"
	IndicatorNearest = "nearest_reported_landslide_km"
)

const (
	sourceID = "nasa-glc"

	countRadiusKm   = 25
	nearestRadiusKm = 100
	// The density (docs/methodology.md, "Landslide") weighs each reported
	// event by exp(-distance / densityScaleKm) out to densityRadiusKm,
	// where the weight is 0.25%: no count switches on at a radius, and a
	// report 2 km away weighs four times one 15 km away.
	densityScaleKm  = 10.0
	densityRadiusKm = 60.0
	catalogYears    = 30 // 1988-2017
	// quality scales the confidence of reported events: the catalog is
	// compiled from news and disaster reports, so it is neither complete
	// nor evenly sampled.
	quality = 0.5
	// maxAccuracyKm drops events whose position is only known to within
	// more than this: they cannot be placed in a 25 km circle.
	maxAccuracyKm = 50
)

// Module is the loaded landslide module. It is immutable and safe for
// concurrent use.
type Module struct {
	ix      *geo.PointIndex
	rows    int
	skipped int // rows without usable coordinates
}

// Load reads the Global Landslide Catalog export from the data directory.
func Load(dir string) (*Module, error) {
	t, err := data.OpenTable(dir, data.Path(sourceID), "latitude", "longitude", "location_accuracy", "landslide_category")
	if err != nil {
		return nil, err
	}
	defer t.Close()
	m := &Module{}
	var pts []geo.Point
	for t.Scan() {
		// Free-text exports carry the odd row with a blank or mangled
		// coordinate; one such row is no reason to refuse the whole layer.
		lat, err1 := strconv.ParseFloat(t.String("latitude"), 64)
		lon, err2 := strconv.ParseFloat(t.String("longitude"), 64)
		if err1 != nil || err2 != nil || !(lat >= -90 && lat <= 90) || !(lon >= -180 && lon <= 180) {
			m.skipped++
			continue
		}
		if !kept(t.String("landslide_category"), t.String("location_accuracy")) {
			continue
		}
		pts = append(pts, geo.Point{Lat: lat, Lon: lon})
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	m.rows = t.Rows()
	m.ix = geo.NewPointIndex(pts, 0.25)
	return m, nil
}

// kept reports whether an event counts: a landslide (not a snow avalanche)
// placed to within maxAccuracyKm. "exact", "unknown" and blank accuracies
// are kept: most such rows are geocoded street addresses.
func kept(category, accuracy string) bool {
	if category == "snow_avalanche" {
		return false
	}
	if km, ok := strings.CutSuffix(accuracy, "km"); ok {
		v, err := strconv.ParseFloat(km, 64)
		return err != nil || v <= maxAccuracyKm
	}
	return true
}

// Name implements hazard.Module.
func (m *Module) Name() string { return hazard.Landslide }

// Sources implements hazard.Module.
func (m *Module) Sources() []string { return []string{sourceID} }

// Rows implements hazard.Module: catalog rows read (all countries).
func (m *Module) Rows() map[string]int { return map[string]int{sourceID: m.rows} }

// Events is the number of events indexed for the counts.
func (m *Module) Events() int { return m.ix.Len() }

// Skipped is the number of rows dropped for lack of a usable coordinate.
func (m *Module) Skipped() int { return m.skipped }

// Measure implements hazard.Module.
func (m *Module) Measure(site hazard.Site) hazard.Measurement {
	p := geo.Point{Lat: site.Lat, Lon: site.Lon}
	n := 0
	nearest := -1.0
	density := 0.0
	m.ix.Within(p, densityRadiusKm, func(_ int, d float64) {
		density += math.Exp(-d / densityScaleKm)
		if d <= countRadiusKm {
			n++
		}
		if nearest < 0 || d < nearest {
			nearest = d
		}
	})
	density /= catalogYears
	if nearest < 0 {
		// Only the wider search when nothing is close: a 100 km query
		// around Portland would measure the distance to ~1,000 events.
		if i, d := m.ix.Nearest(p, nearestRadiusKm); i >= 0 {
			nearest = d
		}
	}
	near := hazard.Indicator{
		ID:         IndicatorNearest,
		Label:      "Distance to the nearest reported landslide (NASA catalog, 1988-2017)",
		Unit:       "km",
		Source:     sourceID,
		Peril:      hazard.PerilLandslide,
		Resolution: hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "news-reported events"},
	}
	if nearest >= 0 {
		near.Value = roundTenth(nearest)
	} else {
		near.Value = nearestRadiusKm
		near.Text = "none within 100 km"
	}
	return hazard.Measurement{
		Indicators: []hazard.Indicator{
			{
				ID:         IndicatorDensity,
				Label:      "Distance-weighted density of reported landslides: sum over events within 60 km of exp(-distance / 10 km), per year of the 1988-2017 catalog (news and disaster reports; not a susceptibility measure)",
				Value:      density,
				Unit:       "weighted reports per year",
				Source:     sourceID,
				Peril:      hazard.PerilLandslide,
				Resolution: hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "news-reported events, weighted by distance out to 60 km"},
				Ranked:     true,
				Weight:     1,
			},
			{
				ID:         IndicatorCount,
				Label:      "Reported landslide events within 25 km, 1988-2017 (NASA catalog of news and disaster reports; not a susceptibility measure)",
				Value:      float64(n),
				Unit:       "count",
				Source:     sourceID,
				Peril:      hazard.PerilLandslide,
				Resolution: hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "news-reported events within 25 km"},
				Ranked:     true,
			},
			near,
		},
		Quality: quality,
		Notes:   []string{note(n)},
	}
}

func roundTenth(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }

func note(n int) string {
	events := "reported landslides"
	if n == 1 {
		events = "reported landslide"
	}
	return "NASA's catalog lists " + strconv.Itoa(n) + " " + events +
		" within 25 km (1988-2017); these are media-reported events, not a susceptibility map."
}
