// Package severeweather measures tornado, hurricane, hail and damaging-wind
// hazard at a point from NOAA's public event records.
//
// Tornadoes: SPC tornado paths 1950-2018 (segments from touchdown to
// lift-off) plus SPC start points 2019-2022; the indicator is the annual
// probability of a tornado day within 25 miles (40.2 km), each day weighted
// by the highest (E)F rating among its tornadoes. Hurricanes: NHC HURDAT2
// best tracks (Atlantic 1900-2019, eastern and central Pacific 1949-2019) as
// segments between 6-hourly fixes; the indicator is the annual rate of storms
// of hurricane strength within 100 km, weighted by Saffir-Simpson category.
// Hail and damaging wind: SPC report counts per county, 1955-2015, per 1,000
// km² of the county's land (at least 250 km²).
//
// Limits: these are records of reported events, not hazard models. Early
// decades under-report weak tornadoes and rural hail; report counts follow
// population; tornadoes in Canada and Mexico are not in the record, so points
// near those borders read low; the hurricane record ends in 2019, the hail
// and wind tallies in 2015. Neither SPC nor the NHC files cover Guam, the
// Northern Mariana Islands or American Samoa, where the module measures
// nothing, nor the western Pacific basin (no hurricane indicator west of the
// antimeridian). See docs/methodology.md (Severe weather module).
package severeweather

import (
	"errors"
	"fmt"
	"sync"

	"locrisk/risk/geo"
	"locrisk/risk/hazard"
)

// Indicator ids.
const (
	IndTornadoProb       = "tornado_annual_prob_25mi"
	IndSigTornadoes      = "significant_tornadoes_25mi"
	IndHurricaneRate     = "hurricane_annual_rate_100km"
	IndHurricanes        = "hurricanes_100km"
	IndStrongestCategory = "strongest_category_100km"
	IndHailDensity       = "hail_reports_per_1000km2"
	IndWindDensity       = "wind_reports_per_1000km2"
)

// Weights of the ranked indicators' percentiles in the module score. Where an
// indicator is not measured the engine scores on the others.
const (
	weightTornado   = 0.30
	weightHurricane = 0.30
	weightHail      = 0.25
	weightWind      = 0.15
)

// Quality of the records: the SPC and NHC records are densest in the
// conterminous states; Alaska, Hawaii and the Caribbean territories have few
// reports.
const (
	qualityConus = 1.0
	qualityOther = 0.7
)

// Resolutions of the module's indicators.
var (
	resTornado   = hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "SPC tornado tracks within 25 miles, 1950-2022"}
	resHurricane = hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "NHC best tracks within 100 km"}
	resCounty    = hazard.Resolution{Kind: hazard.ResCounty, Detail: "county report tally"}
)

// Module is the loaded severe-weather module. It is immutable after Load and
// safe for concurrent use.
type Module struct {
	tracks []track
	tornIx *padIndex

	storms []storm
	hsegs  []hseg
	hurrIx *padIndex

	county map[string]countyReports

	rows   map[string]int
	tstats tornadoStats
	hstats [2]hurdatStats
}

// Load reads the severe-weather data sets from dir. countyAreaKm2 gives each
// county's land area in km² by 5-digit FIPS (from the Census Gazetteer); the
// hail and wind densities are only reported for counties listed there.
func Load(dir string, countyAreaKm2 map[string]float64) (*Module, error) {
	if len(countyAreaKm2) == 0 {
		return nil, errors.New("severeweather: no county land areas given")
	}
	m := &Module{}
	var (
		wg                         sync.WaitGroup
		tornErr, hurrErr, countErr error
		hail, wind                 map[string]int
		hailRows, windRows         int
	)
	// The three groups read separate files; loading them side by side uses
	// both cores during start-up.
	wg.Add(3)
	go func() {
		defer wg.Done()
		tracks, err := loadTracks(dir, &m.tstats)
		if err == nil {
			tracks, err = loadStartPoints(dir, tracks, &m.tstats)
		}
		if err != nil {
			tornErr = err
			return
		}
		sortByDay(tracks)
		m.tracks = tracks
		m.tornIx = newPadIndex(trackBoxes(tracks), tornadoRadiusKm, tornadoCellDeg)
	}()
	go func() {
		defer wg.Done()
		storms, segs, err := loadHurdat(dir, srcHurdatAtlantic, atlantic, nil, nil, &m.hstats[atlantic])
		if err == nil {
			storms, segs, err = loadHurdat(dir, srcHurdatPacific, pacific, storms, segs, &m.hstats[pacific])
		}
		if err != nil {
			hurrErr = err
			return
		}
		m.storms, m.hsegs = storms, segs
		m.hurrIx = newPadIndex(hsegBoxes(segs), hurricaneRadiusKm, hurricaneCellDeg)
	}()
	go func() {
		defer wg.Done()
		var err error
		if hail, hailRows, err = loadCountyCounts(dir, srcHail); err != nil {
			countErr = err
			return
		}
		wind, windRows, countErr = loadCountyCounts(dir, srcWind)
	}()
	wg.Wait()
	for _, err := range []error{tornErr, hurrErr, countErr} {
		if err != nil {
			return nil, fmt.Errorf("severeweather: %w", err)
		}
	}
	m.county = buildCounty(hail, wind, countyAreaKm2)
	m.rows = map[string]int{
		srcTornadoTracks:  m.tstats.tracks,
		srcTornado2019:    m.tstats.startPoints,
		srcHurdatAtlantic: m.hstats[atlantic].fixes,
		srcHurdatPacific:  m.hstats[pacific].fixes,
		srcHail:           hailRows,
		srcWind:           windRows,
	}
	return m, nil
}

// Name is hazard.SevereWeather.
func (m *Module) Name() string { return hazard.SevereWeather }

// Sources lists the catalog ids the module reads.
func (m *Module) Sources() []string {
	return []string{srcTornadoTracks, srcTornado2019, srcHurdatAtlantic, srcHurdatPacific, srcHail, srcWind}
}

// Rows reports the rows kept per source: tornado tracks after removing exact
// duplicates, start points of 2019-2022 only, best-track fixes that have a
// position (all years), and county rows of the hail and wind tallies.
func (m *Module) Rows() map[string]int {
	out := make(map[string]int, len(m.rows))
	for k, v := range m.rows {
		out[k] = v
	}
	return out
}

// Pacific territories outside both the SPC database and the NHC basins.
var uncovered = map[string]bool{"GU": true, "MP": true, "AS": true, "UM": true}
var uncoveredFIPS = map[string]bool{"66": true, "69": true, "60": true, "74": true}

func spcCovers(s hazard.Site) bool {
	return !uncovered[s.StateCode] && !uncoveredFIPS[s.StateFIPS]
}

// nhcCovers: the Pacific file holds the eastern and central North Pacific
// only, so nothing west of the antimeridian (the western Aleutians included)
// is covered by the western Pacific typhoon record we lack.
func nhcCovers(s hazard.Site, lon float64) bool {
	return spcCovers(s) && lon <= 0
}

// Measure returns the severe-weather indicators at site.
func (m *Module) Measure(site hazard.Site) hazard.Measurement {
	lat, lon := site.Lat, normLon(site.Lon)
	var meas hazard.Measurement
	if !spcCovers(site) {
		meas.Notes = []string{"NOAA's tornado, hail and wind records (SPC) and the hurricane best tracks used here (NHC Atlantic and eastern/central Pacific) do not cover this territory, so severe weather is not measured."}
		return meas
	}
	meas.Indicators = make([]hazard.Indicator, 0, 7)
	notes := make([]string, 0, 3)

	tr := m.tornadoAt(lat, lon)
	meas.Indicators = append(meas.Indicators,
		hazard.Indicator{ID: IndTornadoProb, Label: "Annual chance of a tornado within 25 miles (EF-weighted, 1950-2022)", Value: tr.prob(), Unit: "probability", Source: srcTornadoTracks, Peril: hazard.PerilTornado, Resolution: resTornado, Ranked: true, Weight: weightTornado},
		hazard.Indicator{ID: IndSigTornadoes, Label: "EF2+ tornadoes within 25 miles, 1950-2022", Value: float64(tr.sig), Unit: "count", Source: srcTornadoTracks, Peril: hazard.PerilTornado, Resolution: resTornado, Ranked: true},
	)
	notes = append(notes, tr.note())

	if nhcCovers(site, lon) {
		hr := m.hurricaneAt(lat, lon)
		src := hr.source(lon)
		meas.Indicators = append(meas.Indicators,
			hazard.Indicator{ID: IndHurricaneRate, Label: "Hurricane passes within 100 km per year (category-weighted)", Value: hr.rate(), Unit: "per year", Source: src, Peril: hazard.PerilHurricaneWind, Resolution: resHurricane, Ranked: true, Weight: weightHurricane},
			hazard.Indicator{ID: IndHurricanes, Label: "Hurricanes within 100 km (Atlantic 1900-2019, Pacific 1949-2019)", Value: float64(hr.count), Unit: "count", Source: src, Peril: hazard.PerilHurricaneWind, Resolution: resHurricane, Ranked: true},
			hazard.Indicator{ID: IndStrongestCategory, Label: "Strongest hurricane category within 100 km", Value: float64(hr.strongest), Unit: "category", Source: src, Peril: hazard.PerilHurricaneWind, Resolution: resHurricane},
		)
		notes = append(notes, hr.note())
	} else {
		notes = append(notes, "The hurricane record used here does not cover the western Pacific, so no hurricane indicator is given.")
	}

	if c, ok := m.county[site.CountyFIPS]; ok && reportTallyCovers(site) {
		meas.Indicators = append(meas.Indicators,
			hazard.Indicator{ID: IndHailDensity, Label: "Hail reports per 1,000 km² of county land, 1955-2015", Value: c.hailDens, Unit: "reports per 1,000 km²", Source: srcHail, Peril: hazard.PerilHail, Resolution: resCounty, Ranked: true, Weight: weightHail},
			hazard.Indicator{ID: IndWindDensity, Label: "Damaging-wind reports per 1,000 km² of county land, 1955-2015", Value: c.windDens, Unit: "reports per 1,000 km²", Source: srcWind, Peril: hazard.PerilStraightLineWind, Resolution: resCounty, Ranked: true, Weight: weightWind},
		)
		notes = append(notes, c.note())
	}

	if !reportTallyCovers(site) {
		notes = append(notes, "The SPC hail and wind tallies file Alaska's reports under pre-1980 census divisions that no longer match its boroughs, so hail and straight-line wind are not measured here.")
	}

	meas.Notes = notes
	meas.Quality = qualityOther
	if site.Conus {
		meas.Quality = qualityConus
	}
	return meas
}

// reportTallyCovers reports whether the county hail and wind tallies can be
// placed at the site: Alaska's rows use obsolete division codes, so an
// Alaska borough's tally would read as zero reports, which is missing data,
// not evidence of none.
func reportTallyCovers(site hazard.Site) bool {
	return site.StateFIPS != "02"
}

func normLon(lon float64) float64 {
	if lon >= -180 && lon < 180 {
		return lon
	}
	return geo.NormalizeLon(lon)
}
