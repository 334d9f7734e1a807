package data

// Source describes one public data set the engine reads: the path the
// engine opens it by, who publishes it, and where the publisher offers it.
// Its vintage is the pack manifest's (Manifest.Vintage), so a data update
// changes no code. The same record is cited in every report that used it.
type Source struct {
	ID         string // stable identifier cited by indicators, e.g. "usgs-nshm-2018-pga"
	Path       string // the path the loaders open; the manifest says which file of the pack it is (Manifest.FS)
	Name       string // data set name
	Publisher  string
	Resolution string // spatial unit: "0.05 degree grid", "county", "point events", ...
	Module     string // the engine module that reads it ("coverage", "nri", "outlook", or a hazard module)
	HomeURL    string // where the publisher offers the data set
}

// Catalog lists every file the engine reads, in load order. All of them are
// required: the engine refuses to start with a partial data set, so a report
// never silently drops a layer.
var catalog = []Source{
	{ID: "census-counties-2023", Path: "boundaries/us-atlas-2023-4.0.0_counties-10m.json", Name: "Cartographic boundary files, counties (TopoJSON, us-atlas 2023)", Publisher: "U.S. Census Bureau", Resolution: "county polygons, 1:10,000,000", Module: "coverage", HomeURL: "https://www.census.gov/geographies/mapping-files/time-series/geo/cartographic-boundary.html"},
	{ID: "census-states-2023", Path: "boundaries/us-atlas-2023-4.0.0_states-10m.json", Name: "Cartographic boundary files, states (TopoJSON, us-atlas 2023)", Publisher: "U.S. Census Bureau", Resolution: "state polygons, 1:10,000,000", Module: "coverage", HomeURL: "https://www.census.gov/geographies/mapping-files/time-series/geo/cartographic-boundary.html"},
	{ID: "census-gazetteer-2019", Path: "boundaries/2019_Gaz_counties_national.txt", Name: "Gazetteer files, counties (internal points, land area)", Publisher: "U.S. Census Bureau", Resolution: "county", Module: "coverage", HomeURL: "https://www.census.gov/geographies/reference-files/time-series/geo/gazetteer-files.html"},
	{ID: "census-cenpop-2020-tracts", Path: "census/CenPop2020_Mean_TR.txt", Name: "2020 Census centers of population by census tract", Publisher: "U.S. Census Bureau", Resolution: "census tract population centres", Module: "reference", HomeURL: "https://www.census.gov/geographies/reference-files/time-series/geo/centers-population.html"},
	{ID: "census-cenpop-2020-blockgroups", Path: "census/census_2020_blockgroup_population_centers_ejam.csv.gz", Name: "2020 Census centers of population by census block group", Publisher: "U.S. Census Bureau", Resolution: "block group population centres", Module: "population", HomeURL: "https://www.census.gov/geographies/reference-files/time-series/geo/centers-population.html"},
	{ID: "fema-nri-v1.20", Path: "nri/nri_v1.20_counties_risk_scores_ratings_18_hazards.csv", Name: "National Risk Index, county hazard risk scores and ratings", Publisher: "FEMA", Resolution: "county", Module: "nri", HomeURL: "https://hazards.fema.gov/nri/data-resources"},
	{ID: "fema-nri-future-2024", Path: "nri/NRI_Future_Risk_Master_Datasheet_12052024.csv.gz", Name: "National Risk Index Future Risk master datasheet", Publisher: "FEMA", Resolution: "county", Module: "outlook", HomeURL: "https://hazards.fema.gov/nri/"},
	{ID: "usgs-nshm-2018-pga", Path: "earthquake/usgs_nshm2018_pga_2pct50yr_BC_conus_0p05deg.csv.gz", Name: "2018 Long-term National Seismic Hazard Model, PGA 2% in 50 years, site class B/C", Publisher: "USGS", Resolution: "0.05 degree grid, conterminous US", Module: "earthquake", HomeURL: "https://www.usgs.gov/programs/earthquake-hazards/science/2018-united-states-lower-48-seismic-hazard-long-term-model"},
	{ID: "usgs-nshm-2014-wus-catalog", Path: "earthquake/nshm2014_wus_wmm_c3_declustered.csv.gz", Name: "NSHM 2014 western US earthquake catalog (declustered)", Publisher: "USGS", Resolution: "point events", Module: "earthquake", HomeURL: "https://github.com/usgs/nshmp-haz-catalogs"},
	{ID: "usgs-nshm-2014-ceus-catalog", Path: "earthquake/nshm2014_ceus_emm_c3_declustered.csv.gz", Name: "NSHM 2014 central and eastern US earthquake catalog (declustered)", Publisher: "USGS", Resolution: "point events", Module: "earthquake", HomeURL: "https://github.com/usgs/nshmp-haz-catalogs"},
	{ID: "usgs-comcat-m4-1996-2018", Path: "earthquake/usgs_comcat_m4plus_1996_2018_us.csv.gz", Name: "ANSS Comprehensive Catalog, M4+ events 1996-2018", Publisher: "USGS", Resolution: "point events", Module: "earthquake", HomeURL: "https://earthquake.usgs.gov/earthquakes/search/"},
	{ID: "usgs-nshm-2023-faults", Path: "earthquake/usgs_nshm2023_fault_sections_v3.geojson.gz", Name: "2023 National Seismic Hazard Model fault section database v3 (western US)", Publisher: "USGS", Resolution: "fault traces", Module: "earthquake", HomeURL: "https://www.usgs.gov/programs/earthquake-hazards/science/2023-50-state-long-term-national-seismic-hazard-model"},
	{ID: "usgs-design-values-2015", Path: "earthquake/usgs_design_ws_qc_expectations_nehrp2015_asce716_sites.csv.gz", Name: "USGS seismic design web service, quality-control expectations: NEHRP 2015 and ASCE 7-16 design values at named sites (Alaska, Hawaii, Puerto Rico and the Virgin Islands, Guam and the Northern Mariana Islands, American Samoa)", Publisher: "USGS", Resolution: "named places (about 70 outside the conterminous states)", Module: "earthquake", HomeURL: "https://github.com/usgs/earthquake-design-ws"},
	{ID: "usgs-nshm-ak-2007-faults", Path: "earthquake/usgs_nshm_ak2007_faults_interfaces.geojson.gz", Name: "NSHM Alaska 2007 source model (preliminary): crustal fault traces and subduction interface upper and lower edges", Publisher: "USGS", Resolution: "fault and interface edge traces", Module: "earthquake", HomeURL: "https://github.com/usgs/nshm-ak-2007"},
	{ID: "noaa-spc-tornado-tracks", Path: "severe_weather/spc_tornado_tracks_1950_2018.csv.gz", Name: "Severe Weather Database, tornado paths", Publisher: "NOAA/NWS Storm Prediction Center", Resolution: "track start and end points", Module: "severeWeather", HomeURL: "https://www.spc.noaa.gov/wcm/"},
	{ID: "noaa-spc-tornado-2019-2022", Path: "severe_weather/spc_tornado_startpoints_1950_2022_reduced.csv.gz", Name: "Severe Weather Database, tornado start points (2019-2022 used)", Publisher: "NOAA/NWS Storm Prediction Center", Resolution: "track start points", Module: "severeWeather", HomeURL: "https://www.spc.noaa.gov/wcm/"},
	{ID: "noaa-nhc-hurdat2-atlantic", Path: "severe_weather/hurdat2_atlantic_1851_2019.csv.gz", Name: "HURDAT2 Atlantic best tracks", Publisher: "NOAA National Hurricane Center", Resolution: "6-hourly storm fixes", Module: "severeWeather", HomeURL: "https://www.nhc.noaa.gov/data/#hurdat"},
	{ID: "noaa-nhc-hurdat2-pacific", Path: "severe_weather/hurdat2_nepac_1949_2019.csv.gz", Name: "HURDAT2 Northeast and North Central Pacific best tracks", Publisher: "NOAA National Hurricane Center", Resolution: "6-hourly storm fixes", Module: "severeWeather", HomeURL: "https://www.nhc.noaa.gov/data/#hurdat"},
	{ID: "noaa-spc-hail-county", Path: "severe_weather/spc_hail_1955_2015_county_counts.csv", Name: "Severe report database, hail reports per county", Publisher: "NOAA/NWS Storm Prediction Center", Resolution: "county", Module: "severeWeather", HomeURL: "https://www.spc.noaa.gov/wcm/"},
	{ID: "noaa-spc-wind-county", Path: "severe_weather/spc_wind_1955_2015_county_counts.csv", Name: "Severe report database, damaging wind reports per county", Publisher: "NOAA/NWS Storm Prediction Center", Resolution: "county", Module: "severeWeather", HomeURL: "https://www.spc.noaa.gov/wcm/"},
	{ID: "gshhg-shorelines", Path: "coast_rivers/gshhg_2.3.7_high_us_shorelines.geojson.gz", Name: "GSHHG high-resolution shorelines", Publisher: "Wessel & Smith (SOEST, University of Hawaii / NOAA NCEI)", Resolution: "about 0.2 km", Module: "hydrology", HomeURL: "https://www.soest.hawaii.edu/pwessel/gshhg/"},
	{ID: "gshhg-rivers", Path: "coast_rivers/gshhg_2.3.7_high_us_rivers_wdbii.geojson.gz", Name: "WDBII major rivers (GSHHG)", Publisher: "Wessel & Smith (SOEST, University of Hawaii / NOAA NCEI)", Resolution: "about 0.2 km", Module: "hydrology", HomeURL: "https://www.soest.hawaii.edu/pwessel/gshhg/"},
	{ID: "gshhg-rivers-levels4-11", Path: "coast_rivers/gshhg_2.3.7_full_us_rivers_wdbii_levels4-11.geojson.gz", Name: "WDBII additional and minor rivers, levels 4-11 (GSHHG, full resolution)", Publisher: "Wessel & Smith (SOEST, University of Hawaii / NOAA NCEI)", Resolution: "about 0.1 km", Module: "hydrology", HomeURL: "https://www.soest.hawaii.edu/pwessel/gshhg/"},
	{ID: "ne-rivers-north-america", Path: "coast_rivers/ne_10m_rivers_north_america_v4.geojson.gz", Name: "Natural Earth 1:10m rivers, North America supplement", Publisher: "Natural Earth (lines from the CEC North American Atlas hydrography)", Resolution: "about 1:10,000,000 lines, about 1 km", Module: "hydrology", HomeURL: "https://www.naturalearthdata.com/downloads/10m-physical-vectors/10m-rivers-lake-centerlines/"},
	{ID: "noaa-nwps-gauges", Path: "flood/noaa_nwps_all_gauges_report_2025-05.csv.gz", Name: "National Water Prediction Service gauges with flood stages", Publisher: "NOAA/NWS", Resolution: "gauge points", Module: "hydrology", HomeURL: "https://water.noaa.gov/"},
	{ID: "fema-nfip-penetration", Path: "flood/openfema_nfip_residential_penetration_rates_2025-05-15.csv", Name: "NFIP residential penetration rates", Publisher: "FEMA (OpenFEMA)", Resolution: "county", Module: "hydrology", HomeURL: "https://www.fema.gov/openfema-data-page/nfip-residential-penetration-rates-v1"},
	{ID: "fema-disaster-declarations", Path: "disasters/fema_disaster_declarations_1953_to_2019-03-15.csv.gz", Name: "Disaster declarations", Publisher: "FEMA (OpenFEMA)", Resolution: "county", Module: "hydrology", HomeURL: "https://www.fema.gov/openfema-data-page/disaster-declarations-summaries-v2"},
	{ID: "usfs-wrc-v1", Path: "wildfire/wrc_v1_county_summary_2020-03-31.csv", Name: "Wildfire Risk to Communities, county summary", Publisher: "USDA Forest Service", Resolution: "county (housing-unit weighted)", Module: "wildfire", HomeURL: "https://wildfirerisk.org/download/"},
	{ID: "usfs-whp-2014", Path: "wildfire/usfs_whp2014_classified_county_fractions.csv", Name: "Wildfire Hazard Potential 2014, class shares by county", Publisher: "USDA Forest Service, Fire Modeling Institute", Resolution: "county (from 270 m raster)", Module: "wildfire", HomeURL: "https://www.firelab.org/project/wildfire-hazard-potential"},
	{ID: "usfs-whp-2020", Path: "wildfire/whp2020_county_class_fractions_from_tnc_young2024.csv", Name: "Wildfire Hazard Potential 2020, class shares by county (from Young et al. 2024 pixel counts)", Publisher: "USDA Forest Service; counts by The Nature Conservancy", Resolution: "county (from 270 m raster)", Module: "wildfire", HomeURL: "https://www.firelab.org/project/wildfire-hazard-potential"},
	{ID: "nasa-glc", Path: "landslide/nasa_global_landslide_catalog_export.csv.gz", Name: "Global Landslide Catalog (reported events)", Publisher: "NASA Goddard Space Flight Center", Resolution: "point events", Module: "landslide", HomeURL: "https://data.nasa.gov/Earth-Science/Global-Landslide-Catalog/h9d8-neg4"},
	{ID: "epa-superfund-npl", Path: "environmental/epa_superfund_npl_sites_2022-09.csv", Name: "Superfund National Priorities List sites", Publisher: "U.S. EPA", Resolution: "site points", Module: "environmentalExposure", HomeURL: "https://www.epa.gov/superfund/search-superfund-sites-where-you-live"},
	{ID: "srtm30plus-v9", Path: "terrain/srtm30plus_z6", Name: "SRTM30_PLUS v9 global elevation, zoom 6 web-map tiles (conterminous US)", Publisher: "Scripps Institution of Oceanography (Becker, Sandwell et al.); tiles by jaanga", Resolution: "about 79 arc-seconds (1.9 km at 40°N), rows even in latitude inside each web-map tile", Module: "terrain", HomeURL: "https://topex.ucsd.edu/WWW_html/srtm30_plus.html"},
	{ID: "noaa-etopo5", Path: "terrain/etopo5_ngdc_1993_ferret.cdf.gz", Name: "ETOPO5 5-minute gridded elevation and bathymetry (clip to the covered area)", Publisher: "NOAA National Geophysical Data Center", Resolution: "5 arc-minutes (9.3 km N-S)", Module: "terrain", HomeURL: "https://www.ngdc.noaa.gov/mgg/global/etopo5.HTML"},
}

// Catalog returns every data file the engine reads.
func Catalog() []Source { return append([]Source(nil), catalog...) }

// SourceByID returns the catalog entry with the given id.
func SourceByID(id string) (Source, bool) {
	for _, s := range catalog {
		if s.ID == id {
			return s, true
		}
	}
	return Source{}, false
}

// Path returns the catalog path of source id; it panics on an unknown id,
// which is a programming error caught by the tests.
func Path(id string) string {
	s, ok := SourceByID(id)
	if !ok {
		panic("data: unknown source id " + id)
	}
	return s.Path
}
