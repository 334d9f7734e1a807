// Package severeweather measures tornado, hurricane-wind, hail and
// damaging-wind hazard at a point from NOAA's public event records, each as
// the quantity an underwriter prices (docs/methodology.md, "Severe
// weather"):
//
//   - Tornado: the annual chance that a tornado path crosses the site, from
//     the path area (length times width) of SPC tornado tracks within 25
//     miles per year, for EF2+ tornadoes (1950-2018) and tornadoes of any
//     rating (1995-2018, when weak tornadoes were reported consistently).
//   - Hurricane wind: the annual chance of hurricane-force (64 kt) and
//     major-hurricane (96 kt) winds at the site, from a wind field laid
//     around every hourly position of the NHC HURDAT2 best tracks (Atlantic
//     1900-2019, eastern and central Pacific 1949-2019) on 0.1-degree grids.
//   - Hail and damaging wind: SPC report counts per county, 1955-2015, as
//     reports per 1,000 km² a year corrected for reporting: a county's
//     reports are read as a county of the national average population
//     density would log them (report counts grow with about the cube root
//     of density) and shrunk toward the rate of the counties within
//     150 km, labelled county.
//
// Limits: these are records of reported events, not full hazard models.
// Path widths are the SPC's maximum widths from 1995, so strike chances lean
// high; report counts follow population, which the hail and wind rates
// correct for only on average; tornadoes in Canada and Mexico are
// not in the record; the wind field is symmetric outside analysed radii and
// ignores terrain and surface roughness. Neither SPC nor the NHC files cover
// Guam, the Northern Mariana Islands or American Samoa, where the module
// measures nothing, nor Alaska's storms (no hurricane indicator there), and
// Alaska's county tallies use obsolete codes (no hail or wind there).
package severeweather

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// Indicator ids.
const (
	IndTornadoStrikeSig  = "tornado_ef2_strike_annual_prob"
	IndTornadoStrikeAny  = "tornado_strike_annual_prob"
	IndHurricaneWind     = "hurricane_force_wind_annual_prob"
	IndMajorWind         = "major_hurricane_wind_annual_prob"
	IndTornadoProb       = "tornado_annual_prob_25mi"
	IndSigTornadoes      = "significant_tornadoes_25mi"
	IndHurricaneRate     = "hurricane_annual_rate_100km"
	IndHurricanes        = "hurricanes_100km"
	IndStrongestCategory = "strongest_category_100km"
	IndHailDensity       = "hail_reports_per_1000km2"
	IndWindDensity       = "wind_reports_per_1000km2"
)

// Each peril has one weighted indicator, the physical quantity it is ranked
// on (docs/methodology.md, "Severe weather"): the annual chance of an EF2+
// tornado path crossing the site, the annual chance of hurricane-force
// winds there, and the county rates of hail and damaging-wind reports
// corrected for how many people report them.
// The rest are context.
const weightPeril = 1.0

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
	resStrike    = hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "SPC tornado path area within 25 miles per year"}
	resHurricane = hazard.Resolution{Kind: hazard.ResReportedEvents, Detail: "NHC best tracks within 100 km"}
	resWind      = hazard.Resolution{Kind: hazard.ResGrid, Detail: "0.1-degree cells, about 11 km; wind field modelled from NHC best tracks"}
	resCounty    = hazard.Resolution{Kind: hazard.ResCounty, Detail: "county report tally, corrected for population and pooled with the counties within 150 km"}
)

// Module is the loaded severe-weather module. It is immutable after Load and
// safe for concurrent use.
type Module struct {
	tracks []track
	tornIx *geo.CellIndex

	storms []storm
	hsegs  []hseg
	hurrIx *geo.CellIndex
	winds  []windGrid

	county map[string]countyReports // by FIPS

	rows   map[string]int
	tstats tornadoStats
	hstats [2]hurdatStats
}

// Load reads the severe-weather data sets from fsys. counties gives each
// county's land area (km², from the Census Gazetteer), residents and
// interior point by 5-digit FIPS; the hail and wind rates are only
// reported for counties listed there with land.
func Load(fsys fs.FS, counties map[string]County) (*Module, error) {
	if len(counties) == 0 {
		return nil, errors.New("severeweather: no counties given")
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
		tracks, err := loadTracks(fsys, &m.tstats)
		if err == nil {
			tracks, err = loadStartPoints(fsys, tracks, &m.tstats)
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
		storms, segs, tracks, err := loadHurdat(fsys, srcHurdatAtlantic, atlantic, nil, nil, nil, &m.hstats[atlantic])
		if err == nil {
			storms, segs, tracks, err = loadHurdat(fsys, srcHurdatPacific, pacific, storms, segs, tracks, &m.hstats[pacific])
		}
		if err != nil {
			hurrErr = err
			return
		}
		m.storms, m.hsegs = storms, segs
		m.hurrIx = newPadIndex(hsegBoxes(segs), hurricaneRadiusKm, hurricaneCellDeg)
		m.winds = buildWindGrids(tracks)
	}()
	go func() {
		defer wg.Done()
		var err error
		if hail, hailRows, err = loadCountyCounts(fsys, srcHail); err != nil {
			countErr = err
			return
		}
		wind, windRows, countErr = loadCountyCounts(fsys, srcWind)
	}()
	wg.Wait()
	for _, err := range []error{tornErr, hurrErr, countErr} {
		if err != nil {
			return nil, fmt.Errorf("severeweather: %w", err)
		}
	}
	m.county = buildCounty(hail, wind, counties)
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
	// Alaska lies outside both basins: its storms are extratropical or
	// former western Pacific typhoons, which the files do not hold.
	return spcCovers(s) && lon <= 0 && s.StateFIPS != "02" && s.StateCode != "AK"
}

// Measure returns the severe-weather indicators at site.
func (m *Module) Measure(site hazard.Site) hazard.Measurement {
	lat, lon := site.Lat, normLon(site.Lon)
	var meas hazard.Measurement
	if !spcCovers(site) {
		meas.Notes = []string{"NOAA's tornado, hail and wind records (SPC) and the hurricane best tracks used here (NHC Atlantic and eastern/central Pacific) do not cover this territory, so severe weather is not measured."}
		return meas
	}
	meas.Indicators = make([]hazard.Indicator, 0, 11)
	notes := make([]string, 0, 5)

	tr := m.tornadoAt(lat, lon)
	meas.Indicators = append(meas.Indicators,
		hazard.Indicator{ID: IndTornadoStrikeSig, Label: fmt.Sprintf("Annual chance that an EF2+ tornado path crosses the site (SPC paths %d-%d)", strikeSigFirstYr, tracksLastYr),
			Value: tr.sigStrikeProb(), Unit: "probability", Source: srcTornadoTracks, Peril: hazard.PerilTornado, Resolution: resStrike, Ranked: true, Weight: weightPeril, AnnualChance: true},
		hazard.Indicator{ID: IndTornadoStrikeAny, Label: fmt.Sprintf("Annual chance that a tornado path of any rating crosses the site (SPC paths %d-%d)", strikeAnyFirstYr, tracksLastYr),
			Value: tr.anyStrikeProb(), Unit: "probability", Source: srcTornadoTracks, Peril: hazard.PerilTornado, Resolution: resStrike, Ranked: true},
		hazard.Indicator{ID: IndTornadoProb, Label: "Annual chance of a tornado within 25 miles (EF-weighted, 1950-2022)", Value: tr.prob(), Unit: "probability", Source: srcTornadoTracks, Peril: hazard.PerilTornado, Resolution: resTornado, Ranked: true},
		hazard.Indicator{ID: IndSigTornadoes, Label: "EF2+ tornadoes within 25 miles, 1950-2022", Value: float64(tr.sig), Unit: "count", Source: srcTornadoTracks, Peril: hazard.PerilTornado, Resolution: resTornado, Ranked: true},
	)
	notes = append(notes, tr.note(), tr.strikeNote())

	if nhcCovers(site, lon) {
		hr := m.hurricaneAt(lat, lon)
		passSrc := hr.source(lon)
		n64, n96, b, inGrid := windAt(m.winds, lat, lon)
		if !inGrid {
			// Outside every grid no hurricane-force wind is on record; the
			// basin on the site's side of the continent says so.
			b = atlantic
			if lon < -105 {
				b = pacific
			}
		}
		src := b.source()
		w := newWindResult(n64, n96, b)
		meas.Indicators = append(meas.Indicators,
			hazard.Indicator{ID: IndHurricaneWind, Label: fmt.Sprintf("Annual chance of hurricane-force winds (64 kt and above) at the site (%s)", w.record()),
				Value: w.hurricaneProb(), Unit: "probability", Source: src, Peril: hazard.PerilHurricaneWind, Resolution: resWind, Ranked: true, Weight: weightPeril, AnnualChance: true},
			hazard.Indicator{ID: IndMajorWind, Label: fmt.Sprintf("Annual chance of major-hurricane winds (96 kt and above) at the site (%s)", w.record()),
				Value: w.majorProb(), Unit: "probability", Source: src, Peril: hazard.PerilHurricaneWind, Resolution: resWind, Ranked: true},
			hazard.Indicator{ID: IndHurricaneRate, Label: "Hurricane passes within 100 km per year (category-weighted)", Value: hr.rate(), Unit: "per year", Source: passSrc, Peril: hazard.PerilHurricaneWind, Resolution: resHurricane, Ranked: true},
			hazard.Indicator{ID: IndHurricanes, Label: "Hurricanes within 100 km (Atlantic 1900-2019, Pacific 1949-2019)", Value: float64(hr.count), Unit: "count", Source: passSrc, Peril: hazard.PerilHurricaneWind, Resolution: resHurricane, Ranked: true},
			hazard.Indicator{ID: IndStrongestCategory, Label: "Strongest hurricane category within 100 km", Value: float64(hr.strongest), Unit: "category", Source: passSrc, Peril: hazard.PerilHurricaneWind, Resolution: resHurricane},
		)
		notes = append(notes, w.note(), hr.note())
	} else {
		notes = append(notes, "The hurricane records used here (NHC Atlantic and eastern/central Pacific) do not cover this location's basin, so hurricane wind is not measured.")
	}

	if c, ok := m.county[site.CountyFIPS]; ok && reportTallyCovers(site) {
		meas.Indicators = append(meas.Indicators,
			hazard.Indicator{ID: IndHailDensity, Label: "Hail reports per 1,000 km² a year (SPC 1955-2015), as a county of average population density would log them, pooled with the counties within 150 km", Value: c.hailRate, Unit: "reports per 1,000 km² a year", Source: srcHail, Peril: hazard.PerilHail, Resolution: resCounty, Ranked: true, Weight: weightPeril},
			hazard.Indicator{ID: IndWindDensity, Label: "Damaging-wind reports per 1,000 km² a year (SPC 1955-2015), as a county of average population density would log them, pooled with the counties within 150 km", Value: c.windRate, Unit: "reports per 1,000 km² a year", Source: srcWind, Peril: hazard.PerilStraightLineWind, Resolution: resCounty, Ranked: true, Weight: weightPeril},
		)
		notes = append(notes, c.note())
	}

	if !reportTallyCovers(site) {
		notes = append(notes, "The SPC hail and wind tallies file this state's or territory's reports under codes that no longer match its counties (Alaska's pre-1980 census divisions, an obsolete Virgin Islands code), so hail and straight-line wind are not measured here.")
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
	// The Virgin Islands' tallies are filed under a code (78002) no
	// district has: every district would read as zero reports.
	return site.StateFIPS != "02" && site.StateFIPS != "78"
}

func normLon(lon float64) float64 {
	if lon >= -180 && lon < 180 {
		return lon
	}
	return geo.NormalizeLon(lon)
}
