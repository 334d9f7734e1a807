package pdf

import (
	"time"

	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// The sample report is invented by hand: realistic in shape (six modules,
// three to six indicators each, sources, methodology, flags), not taken
// from any data set. Its outlines are rough hand-drawn polygons around
// California and Los Angeles County.

func ip(v int) *int                 { return &v }
func fp(v float64) *float64         { return &v }
func sp(v string) *string           { return &v }
func pt(lon, lat float64) geo.Point { return geo.Point{Lat: lat, Lon: lon} }

var sampleGenerated = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func sampleState() [][]geo.Point {
	return [][]geo.Point{{
		pt(-124.2, 42.0), pt(-120.0, 42.0), pt(-120.0, 39.0), pt(-114.6, 35.0),
		pt(-114.4, 34.3), pt(-114.7, 32.7), pt(-117.1, 32.5), pt(-117.3, 33.2),
		pt(-118.5, 34.0), pt(-120.6, 34.5), pt(-121.9, 36.6), pt(-122.5, 37.5),
		pt(-123.0, 38.0), pt(-123.8, 39.5), pt(-124.4, 40.4), pt(-124.2, 42.0),
	}, {
		// an island, to exercise multi-ring outlines
		pt(-118.6, 33.48), pt(-118.3, 33.45), pt(-118.32, 33.3), pt(-118.55, 33.35),
	}}
}

func sampleCounty() [][]geo.Point {
	return [][]geo.Point{{
		pt(-118.95, 34.82), pt(-117.65, 34.82), pt(-117.65, 34.0), pt(-118.0, 33.75),
		pt(-118.45, 33.7), pt(-118.95, 34.0), pt(-118.95, 34.82),
	}}
}

func sampleAssessment() *risk.Assessment {
	a := &risk.Assessment{
		Location: risk.Location{
			Latitude: 34.0522, Longitude: -118.2437,
			StateCode: "CA", StateName: "California",
			CountyFIPS: "06037", CountyName: "Los Angeles County",
		},
		DataVersion: "2026.11-r2",
	}
	a.Summary = risk.Summary{
		OverallScore:  62,
		RiskLevel:     "high",
		OverallDriver: "earthquake",
		Confidence:    risk.Confidence{Level: "medium", Score: 0.71},
		ModuleScores: risk.ModuleScores{
			{Module: "hydrology", Value: ip(41)}, {Module: "severeWeather", Value: ip(23)}, {Module: "wildfire", Value: ip(78)},
			{Module: "earthquake", Value: ip(91)}, {Module: "landslide", Value: nil}, {Module: "environmentalExposure", Value: ip(35)},
		},
		TopRisks: []risk.TopRisk{
			{Module: "earthquake", Score: 91, RiskLevel: "very_high",
				Reason: "Design ground shaking (0.87 g at 2% in 50 years) is higher than at 96% of US reference points, and 42 magnitude 4+ earthquakes were recorded within 50 km since 1996."},
			{Module: "wildfire", Score: 78, RiskLevel: "high",
				Reason: "The county ranks in the top 2% nationally for expected wildfire loss and has had 31 fire disaster declarations."},
			{Module: "hydrology", Score: 41, RiskLevel: "moderate",
				Reason: "A mapped river channel lies 2.8 km away; the county's inland flooding risk is high, though the community participates in the NFIP."},
		},
		Recommendations: []risk.Recommendation{
			{Module: "earthquake", Priority: "high", Text: "Obtain a seismic evaluation of the structure (ASCE 41 Tier 1 or equivalent) and confirm anchorage of the building to its foundation."},
			{Module: "earthquake", Priority: "medium", Text: "Check whether earthquake cover is included; standard property policies in California usually exclude it."},
			{Module: "wildfire", Priority: "high", Text: "Verify defensible space of at least 30 m around structures and ember-resistant vents; request the local fire hazard severity zone map."},
			{Module: "hydrology", Priority: "medium", Text: "Confirm the FEMA flood zone on the current Flood Insurance Rate Map before binding."},
			{Module: "environmentalExposure", Priority: "low", Text: "Review the EPA site record for the nearest Superfund site for groundwater restrictions."},
			{Module: "severeWeather", Priority: "low", Text: "No specific action beyond standard roof and wind maintenance."},
		},
		ReviewFlags: []risk.ReviewFlag{
			{Code: "module_no_data", Message: "Landslide: no landslide susceptibility layer covers this location; the module is not scored and the overall score uses the other five modules."},
			{Code: "county_level_only", Message: "Severe weather is computed from county-level FEMA NRI data only."},
			{Code: "near_superfund_site", Message: "An EPA Superfund National Priorities List site is 4.6 km from the point."},
		},
	}
	m := &a.Report.Modules
	m.Set("hydrology", risk.ModuleReport{
		Score: ip(41), RiskLevel: sp("moderate"), Confidence: risk.Confidence{Level: "medium", Score: 0.64}, Basis: "hazard_data",
		Perils: []risk.Peril{
			{Peril: "coastal", Title: "Coastal flooding", Score: ip(9), RiskLevel: sp("very_low"), Confidence: &risk.Confidence{Level: "high", Score: 0.85}, Resolution: "site"},
			{Peril: "riverine", Title: "Riverine flooding", Score: ip(58), RiskLevel: sp("moderate"), Confidence: &risk.Confidence{Level: "medium", Score: 0.6}, Resolution: "mixed"},
		},
		Indicators: []risk.Indicator{
			{ID: "river_distance_km", Label: "Distance to nearest mapped river", Value: fp(2.8), Unit: "km", Percentile: fp(71), Source: "gshhg_rivers"},
			{ID: "gauge_distance_km", Label: "Distance to nearest river forecast gauge", Value: fp(6.43), Unit: "km", Percentile: fp(38.4), Source: "noaa_nwps_gauges"},
			{ID: "nfip_status", Label: "NFIP community status", Text: sp("Participating (regular program)"), Source: "openfema_nfip_csb"},
			{ID: "nfip_penetration", Label: "NFIP residential policy penetration (county)", Value: fp(1.7), Unit: "percent", Percentile: fp(22), Source: "openfema_nfip_penetration"},
			{ID: "flood_declarations", Label: "Flood disaster declarations since 1953 (county)", Value: fp(14.0), Unit: "count", Percentile: fp(81), Source: "fema_disaster_declarations"},
			{ID: "nri_ifld", Label: "NRI inland flooding risk score (county)", Value: fp(92.1), Unit: "score", Percentile: fp(92.1), Source: "fema_nri_v1_20"},
		},
		Narrative: "The site lies 2.8 km from a mapped river channel, closer than 71% of US reference points. Inland flooding is a major county-level hazard (NRI score 92.1), and 14 flood disaster declarations have been made for the county since 1953. The community participates in the National Flood Insurance Program, which makes flood cover available.",
	})
	m.Set("severeWeather", risk.ModuleReport{
		Score: ip(23), RiskLevel: sp("low"), Confidence: risk.Confidence{Level: "low", Score: 0.45}, Basis: "nri_fallback",
		Perils: []risk.Peril{
			{Peril: "tornado", Title: "Tornado", Score: ip(31), RiskLevel: sp("low"), Confidence: &risk.Confidence{Level: "low", Score: 0.4}, Resolution: "county"},
			{Peril: "hurricaneWind", Title: "Hurricane wind", Score: nil},
			{Peril: "hail", Title: "Hail", Score: ip(22), RiskLevel: sp("low"), Confidence: &risk.Confidence{Level: "medium", Score: 0.55}, Resolution: "reported_events"},
			{Peril: "straightLineWind", Title: "Straight-line wind", Score: ip(0), RiskLevel: sp("very_low"), Confidence: &risk.Confidence{Level: "low", Score: 0.4}, Resolution: "county"},
		},
		Indicators: []risk.Indicator{
			{ID: "hurricane_tracks_200km", Label: "Atlantic hurricane tracks within 200 km (1851–2019)", Value: fp(0.0), Unit: "count", Percentile: fp(5), Source: "noaa_hurdat2"},
			{ID: "nri_trnd", Label: "NRI tornado risk score (county)", Value: fp(61.3), Unit: "score", Percentile: fp(61.3), Source: "fema_nri_v1_20"},
			{ID: "nri_hail", Label: "NRI hail risk score (county)", Value: fp(42.0), Unit: "score", Percentile: fp(42), Source: "fema_nri_v1_20"},
			{ID: "nri_swnd", Label: "NRI strong wind risk score (county)", Value: fp(55.8), Unit: "score", Percentile: fp(55.8), Source: "fema_nri_v1_20"},
		},
		Narrative: "No Atlantic hurricane track has passed within 200 km. Severe convective weather is scored from the county's FEMA National Risk Index values, which are near the national middle for tornado, hail and strong wind.",
	})
	m.Set("wildfire", risk.ModuleReport{
		Score: ip(78), RiskLevel: sp("high"), Confidence: risk.Confidence{Level: "medium", Score: 0.68}, Basis: "hazard_data",
		Perils: []risk.Peril{
			{Peril: "wildfire", Title: "Wildfire", Score: ip(78), RiskLevel: sp("high"), Confidence: &risk.Confidence{Level: "medium", Score: 0.68}, Resolution: "grid",
				AnnualProbability: fp(0.0042), ReturnPeriodYears: fp(240), ProbabilityBasis: "Annual burn probability"},
		},
		Indicators: []risk.Indicator{
			{ID: "whp_class", Label: "Wildfire hazard potential class", Text: sp("High"), Source: "usfs_whp_2023"},
			{ID: "nri_wfir", Label: "NRI wildfire risk score (county)", Value: fp(98.7), Unit: "score", Percentile: fp(98.7), Source: "fema_nri_v1_20"},
			{ID: "fire_declarations", Label: "Fire disaster declarations since 1953 (county)", Value: fp(31), Unit: "count", Percentile: fp(97.2), Source: "fema_disaster_declarations"},
			{ID: "wui_distance_km", Label: "Distance to wildland–urban interface", Value: fp(1.24), Unit: "km", Percentile: fp(74), Source: "usfs_wui_2020"},
		},
		Narrative: "The county ranks among the highest in the nation for expected annual wildfire loss (NRI score 98.7) and has had 31 fire-related disaster declarations. The point is 1.2 km from the wildland–urban interface, where ember exposure is the main threat to buildings.",
	})
	m.Set("earthquake", risk.ModuleReport{
		Score: ip(91), RiskLevel: sp("very_high"), Confidence: risk.Confidence{Level: "high", Score: 0.88}, Basis: "hazard_data",
		Perils: []risk.Peril{
			{Peril: "groundShaking", Title: "Ground shaking", Score: ip(91), RiskLevel: sp("very_high"), Confidence: &risk.Confidence{Level: "high", Score: 0.88}, Resolution: "grid"},
		},
		Indicators: []risk.Indicator{
			{ID: "pga_2pct_50yr", Label: "Peak ground acceleration, 2% in 50 years (site class B/C)", Value: fp(0.8714), Unit: "g", Percentile: fp(96.4), Source: "usgs_nshm2018_pga"},
			{ID: "m4_within_50km", Label: "Magnitude 4+ earthquakes within 50 km (1996–2018)", Value: fp(42), Unit: "count", Percentile: fp(99.1), Source: "usgs_comcat_m4"},
			{ID: "nearest_m4_km", Label: "Distance to nearest magnitude 4+ epicentre", Value: fp(3.1), Unit: "km", Percentile: fp(97), Source: "usgs_comcat_m4"},
			{ID: "nri_erqk", Label: "NRI earthquake risk score (county)", Value: fp(100.0), Unit: "score", Percentile: fp(100), Source: "fema_nri_v1_20"},
		},
		Narrative: "Design-level ground shaking here (0.87 g peak ground acceleration with a 2% chance of exceedance in 50 years) is among the highest in the conterminous United States. Forty-two magnitude 4+ earthquakes were recorded within 50 km between 1996 and 2018.\nThe county has the highest NRI earthquake risk score in the nation.",
	})
	m.Set("landslide", risk.ModuleReport{
		Score: nil, RiskLevel: nil, Confidence: risk.Confidence{Level: "low", Score: 0.2}, Basis: "no_data",
		Perils: []risk.Peril{
			{Peril: "landslide", Title: "Landslide", Score: nil},
		},
		Indicators: []risk.Indicator{
			{ID: "catalog_events_25km", Label: "Catalogued landslides within 25 km (2007–2019)", Value: fp(3), Unit: "count", Source: "nasa_glc"},
			{ID: "nearest_event_km", Label: "Distance to nearest catalogued landslide", Value: fp(11.7), Unit: "km", Source: "nasa_glc"},
			{ID: "susceptibility", Label: "Landslide susceptibility class", Value: nil, Source: "usgs_ls_susceptibility"},
		},
		Narrative: "No landslide susceptibility layer covers this location, so the module is not scored. Three landslides were catalogued within 25 km between 2007 and 2019; this catalogue is event-based and incomplete, so it is shown for context only.",
	})
	m.Set("environmentalExposure", risk.ModuleReport{
		Score: ip(35), RiskLevel: sp("low"), Confidence: risk.Confidence{Level: "medium", Score: 0.6}, Basis: "hazard_data",
		Perils: []risk.Peril{
			{Peril: "superfund", Title: "Superfund sites", Score: ip(35), RiskLevel: sp("low"), Confidence: &risk.Confidence{Level: "medium", Score: 0.6}, Resolution: "site"},
		},
		Indicators: []risk.Indicator{
			{ID: "npl_distance_km", Label: "Distance to nearest Superfund NPL site", Value: fp(4.6), Unit: "km", Percentile: fp(82), Source: "epa_superfund_npl"},
			{ID: "npl_within_10km", Label: "Superfund NPL sites within 10 km", Value: fp(2), Unit: "count", Percentile: fp(88.5), Source: "epa_superfund_npl"},
			{ID: "npl_nearest_name", Label: "Nearest NPL site", Text: sp("Operating Industries, Inc. Landfill"), Source: "epa_superfund_npl"},
		},
		Narrative: "The nearest Superfund National Priorities List site (Operating Industries, Inc. Landfill) is 4.6 km away, and two NPL sites lie within 10 km. Proximity alone does not mean contamination reaches the site.",
	})
	// The summary carries the same perils as the modules.
	for _, e := range *m {
		a.Summary.Perils.Set(e.Module, e.Value.Perils)
	}
	a.Report.Sources = []risk.SourceRef{
		{ID: "usgs_nshm2018_pga", Name: "National Seismic Hazard Model, PGA 2% in 50 years", Publisher: "U.S. Geological Survey", Version: "2018", Resolution: "0.05° grid"},
		{ID: "usgs_comcat_m4", Name: "ComCat earthquake catalogue, M4+", Publisher: "U.S. Geological Survey", Version: "1996–2018 extract", Resolution: "epicentres"},
		{ID: "fema_nri_v1_20", Name: "National Risk Index", Publisher: "FEMA", Version: "1.20 (Dec 2024)", Resolution: "county"},
		{ID: "fema_disaster_declarations", Name: "Disaster Declarations Summaries", Publisher: "FEMA (OpenFEMA)", Version: "1953 to 2019-03-15", Resolution: "county"},
		{ID: "noaa_hurdat2", Name: "Atlantic hurricane database (HURDAT2)", Publisher: "NOAA National Hurricane Center", Version: "1851–2019", Resolution: "6-hourly track points"},
		{ID: "gshhg_rivers", Name: "GSHHG rivers (WDBII)", Publisher: "NOAA NCEI / University of Hawaiʻi", Version: "2.3.7", Resolution: "high"},
		{ID: "noaa_nwps_gauges", Name: "National Water Prediction Service gauges", Publisher: "NOAA National Weather Service", Version: "2025-05", Resolution: "gauge points"},
		{ID: "openfema_nfip_csb", Name: "NFIP Community Status Book", Publisher: "FEMA (OpenFEMA)", Version: "2025-05-14", Resolution: "community"},
		{ID: "epa_superfund_npl", Name: "Superfund National Priorities List sites", Publisher: "U.S. EPA", Version: "2022-09", Resolution: "site points"},
		{ID: "nasa_glc", Name: "Global Landslide Catalog", Publisher: "NASA Goddard Space Flight Center", Version: "2007–2019 export", Resolution: "event points"},
	}
	a.Report.Methodology = risk.Methodology{
		Version:     "locrisk-method-1.3",
		Description: "Each module score is the weighted national percentile of the module's hazard indicators, ranked against 3,221 county reference points. Where no hazard layer covers a module, the county's FEMA National Risk Index score is used and confidence is reduced. The overall score combines the scored modules, giving more weight to the highest.",
	}
	return a
}

func sampleInput() Input {
	return Input{
		ReportID:      "5f0c2d3e-8a41-4b7e-9c55-1d2e3f4a5b6c",
		JobID:         "job_Q3vK9xLm2Pz7Rt5Wn8Ya4Bc",
		Generated:     sampleGenerated,
		Assessment:    sampleAssessment(),
		StateOutline:  sampleState(),
		CountyOutline: sampleCounty(),
	}
}

// moduleRef is the sample's report for one module, to edit in place.
func moduleRef(a *risk.Assessment, key string) *risk.ModuleReport {
	for i := range a.Report.Modules {
		if a.Report.Modules[i].Module == key {
			return &a.Report.Modules[i].Value
		}
	}
	panic("sample assessment has no module " + key)
}
