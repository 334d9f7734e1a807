package risk

// The part of the validation table (docs/methodology.md, "Validation")
// added with methodology 4, when landslide and flood began to read the
// ground and hail and wind stopped counting reporters: pairs of a steep
// site and a flat one, most in one county so that only the ground differs,
// in every region with a landslide record; flat downtowns that must stay
// low whatever was reported around them; plains towns above a dense core
// on hail. Points are in the place itself; each is checked to locate in
// its county.
var terrainPlaces = []validationPlace{
	{Name: "Jamestown, CO", Lat: 40.1158, Lon: -105.3886, County: "08013"},
	{Name: "Nederland, CO", Lat: 39.9614, Lon: -105.5108, County: "08013"},
	{Name: "Longmont, CO", Lat: 40.1672, Lon: -105.1019, County: "08013"},
	{Name: "Sierra Madre, CA", Lat: 34.1617, Lon: -118.0528, County: "06037"},
	{Name: "Downey, CA", Lat: 33.9401, Lon: -118.1332, County: "06037"},
	{Name: "Blowing Rock, NC", Lat: 36.1351, Lon: -81.6779, County: "37189"},
	{Name: "Oso, WA", Lat: 48.2776, Lon: -121.9226, County: "53061"},
	{Name: "Marysville, WA", Lat: 48.0518, Lon: -122.1771, County: "53061"},
	{Name: "Gresham, OR", Lat: 45.4987, Lon: -122.4302, County: "41051"},
	{Name: "Hazard, KY", Lat: 37.2498, Lon: -83.1932, County: "21193"},
	{Name: "Lexington, KY", Lat: 38.0406, Lon: -84.5037, County: "21067"},
	{Name: "Gatlinburg, TN", Lat: 35.7143, Lon: -83.5102, County: "47155"},
	{Name: "Sevierville, TN", Lat: 35.8681, Lon: -83.5618, County: "47155"},
	{Name: "Maggie Valley, NC", Lat: 35.5182, Lon: -83.0974, County: "37087"},
	{Name: "Raleigh, NC", Lat: 35.7796, Lon: -78.6382, County: "37183"},
	{Name: "Charleston, WV", Lat: 38.3498, Lon: -81.6326, County: "54039"},
	{Name: "Philadelphia, PA", Lat: 39.9526, Lon: -75.1652, County: "42101"},
	{Name: "Fort Morgan, CO", Lat: 40.2503, Lon: -103.7999, County: "08087"},
	{Name: "Dodge City, KS", Lat: 37.7528, Lon: -100.0171, County: "20057"},
	{Name: "Gulfport, MS", Lat: 30.3674, Lon: -89.0928, County: "28047"},
	{Name: "Guerneville, CA", Lat: 38.5019, Lon: -123.0011, County: "06097"},
	{Name: "Occidental, CA", Lat: 38.4074, Lon: -122.9489, County: "06097"},
	{Name: "Harpers Ferry, WV", Lat: 39.3245, Lon: -77.7300, County: "54037"},
	{Name: "Charles Town, WV", Lat: 39.2890, Lon: -77.8597, County: "54037"},
	{Name: "Gauley Bridge, WV", Lat: 38.1668, Lon: -81.1951, County: "54019"},
	{Name: "Fayetteville, WV", Lat: 38.0529, Lon: -81.1040, County: "54019"},
	{Name: "Johnstown, PA", Lat: 40.3267, Lon: -78.9220, County: "42021"},
	{Name: "Westmont, PA", Lat: 40.3162, Lon: -78.9525, County: "42021"},
	{Name: "Oroville, CA", Lat: 39.5138, Lon: -121.5564, County: "06007"},
	{Name: "Aurora, CO", Lat: 39.7294, Lon: -104.8319, County: "08005"},
	{Name: "Trinidad, CO", Lat: 37.1695, Lon: -104.5005, County: "08071"},
	{Name: "Youngstown, OH", Lat: 41.0998, Lon: -80.6495, County: "39099"},
	{Name: "Prague, OK", Lat: 35.4875, Lon: -96.6850, County: "40081"},
	{Name: "Lookout Mountain, TN", Lat: 34.9958, Lon: -85.3472, County: "47065"},
	{Name: "Signal Mountain, TN", Lat: 35.1223, Lon: -85.3433, County: "47065"},
	{Name: "Owego, NY", Lat: 42.1034, Lon: -76.2622, County: "36107"},
	{Name: "Newark Valley, NY", Lat: 42.2231, Lon: -76.1833, County: "36107"},
	{Name: "Pasadena, CA", Lat: 34.1478, Lon: -118.1445, County: "06037"},
	{Name: "Long Beach, CA", Lat: 33.7701, Lon: -118.1937, County: "06037"},
	{Name: "Utqiagvik, AK", Lat: 71.2906, Lon: -156.7886, County: "02185"},
	{Name: "Delta Junction, AK", Lat: 64.0379, Lon: -145.7322, County: "02240"},
}

// terrainOrders are the landslide orderings between a steep and a flat
// site.
var terrainOrders = []validationOrder{
	{Module: "landslide", Peril: "landslide", Higher: "Jamestown, CO", Lower: "Longmont, CO", Why: "Same county: Jamestown lies in the steep Left Hand Creek canyon, swept by debris flows in the September 2013 storm; Longmont is on the plains."},
	{Module: "landslide", Peril: "landslide", Higher: "Nederland, CO", Lower: "Longmont, CO", Why: "Same county: Nederland is a mountain town at 2,500 m among the Front Range's slopes; Longmont is on the plains 30 km east."},
	{Module: "landslide", Peril: "landslide", Higher: "Sierra Madre, CA", Lower: "Downey, CA", Why: "Same county: Sierra Madre sits against the San Gabriel Mountains' front, with debris flows from its canyons; Downey is on the flat basin floor."},
	{Module: "landslide", Peril: "landslide", Higher: "Oso, WA", Lower: "Marysville, WA", Why: "Same county: the 2014 Oso landslide came off the steep glacial valley wall of the North Fork Stillaguamish; Marysville is on the lowland by the Snohomish delta."},
	{Module: "landslide", Peril: "landslide", Higher: "Corbett, OR", Lower: "Gresham, OR", Why: "Same county: Corbett is on the Columbia Gorge rim, whose walls slide in wet winters; Gresham is on the flat east Portland plain."},
	{Module: "landslide", Peril: "landslide", Higher: "Hazard, KY", Lower: "Lexington, KY", Why: "Hazard lies in the dissected Appalachian Plateau of eastern Kentucky, among the most slide-prone terrain in the East; Lexington is on the gentle Bluegrass."},
	{Module: "landslide", Peril: "landslide", Higher: "Gatlinburg, TN", Lower: "Sevierville, TN", Why: "Same county: Gatlinburg sits in a narrow valley at the foot of the Great Smoky Mountains; Sevierville is in the open valley below."},
	{Module: "landslide", Peril: "landslide", Higher: "Maggie Valley, NC", Lower: "Raleigh, NC", Why: "Maggie Valley is among the steep Blue Ridge slopes where debris flows struck in 2004 and 2024; Raleigh is on the rolling Piedmont."},
	{Module: "landslide", Peril: "landslide", Higher: "Charleston, WV", Lower: "Fargo, ND", Why: "Charleston is built on the steep-sided Kanawha valley, with frequent slides on its hillsides; Fargo is on the flat bed of glacial Lake Agassiz."},
	{Module: "landslide", Peril: "landslide", Higher: "Pittsburgh, PA", Lower: "Philadelphia, PA", Why: "Pittsburgh's steep river hillsides slide most wet years; central Philadelphia is on the flat coastal plain by the Delaware."},
	{Module: "landslide", Peril: "landslide", Higher: "Emigration Canyon, UT", Lower: "Salt Lake City, UT", Why: "Same county: Emigration Canyon's homes are on Wasatch canyon slopes; downtown Salt Lake City is on the valley floor."},
	{Module: "landslide", Peril: "landslide", Higher: "Evergreen, CO", Lower: "Lakewood, CO", Why: "Same county: Evergreen is among foothill slopes and canyons; Lakewood is on the plain."},
	{Module: "landslide", Peril: "landslide", Higher: "Painted Cave, CA", Lower: "Downtown Santa Barbara, CA", Why: "Same county: Painted Cave is high on the steep Santa Ynez front, above the 2018 Montecito debris-flow country; downtown Santa Barbara is on the coastal plain."},
	{Module: "landslide", Peril: "landslide", Higher: "Summerhaven, AZ", Lower: "Downtown Tucson, AZ", Why: "Same county: Summerhaven is on Mount Lemmon, whose canyons sent debris flows after the 2003 Aspen fire; downtown Tucson is on the desert floor."},
	{Module: "landslide", Peril: "landslide", Higher: "Mountain Shadows, Colorado Springs, CO", Lower: "Downtown Colorado Springs, CO", Why: "Same county: Mountain Shadows is on the foothills' slopes, where the 2015 wet spring set off dozens of slides; downtown lies on the plain east of them."},
	{Module: "landslide", Peril: "landslide", Higher: "Juneau, AK", Lower: "Anchorage, AK", Why: "Juneau is built beneath steep mountainsides with recurrent slides and debris flows; central Anchorage is on a flat coastal plain."},
	// Flood on the riverbank, not on the ridge above it.
	{Module: "hydrology", Peril: "", Higher: "Guerneville, CA", Lower: "Occidental, CA", Why: "Same county: Guerneville is on the Russian River, which floods it most wet winters (1986, 1995, 2019); Occidental is in the hills above."},
	{Module: "hydrology", Peril: "", Higher: "Harpers Ferry, WV", Lower: "Charles Town, WV", Why: "Same county: Harpers Ferry's lower town sits at the Potomac-Shenandoah confluence (1936, 1996 floods); Charles Town is on the upland."},
	{Module: "hydrology", Peril: "", Higher: "Gauley Bridge, WV", Lower: "Fayetteville, WV", Why: "Same county: Gauley Bridge is at the Kanawha's head, on the riverbank; Fayetteville is on the plateau above the New River gorge."},
	{Module: "hydrology", Peril: "", Higher: "Johnstown, PA", Lower: "Westmont, PA", Why: "Same county: Johnstown is in the Conemaugh valley (1889, 1936, 1977 floods); Westmont is on the hill above it."},
	{Module: "hydrology", Peril: "", Higher: "Oroville, CA", Lower: "Paradise, CA", Why: "Same county: Oroville lies on the Feather River below the dam; Paradise is on a ridge between canyons."},
	{Module: "hydrology", Peril: "riverine", Higher: "Owego, NY", Lower: "Newark Valley, NY", Why: "Same county: Owego is on the Susquehanna's bank (2006 and 2011 floods); Newark Valley is 13 km from any mapped river."},
	// Wildfire at the foot of the hills, not on the plain below.
	{Module: "wildfire", Peril: "wildfire", Higher: "Pasadena, CA", Lower: "Long Beach, CA", Why: "Same county: Pasadena lies at the foot of the San Gabriel Mountains, where the January 2025 Eaton fire burned into Altadena; Long Beach is a dense port city on the coastal plain."},
	{Module: "wildfire", Peril: "wildfire", Higher: "Delta Junction, AK", Lower: "Utqiagvik, AK", Why: "Delta Junction is in the interior's boreal forest, which burns most summers; Utqiagvik is on the Arctic coastal tundra."},
	// Earthquake: the USGS long-term model over swarms it excludes.
	{Module: "earthquake", Peril: "", Higher: "Salt Lake City, UT", Lower: "Lakewood, CO", Why: "Salt Lake City lies on the Wasatch fault; the Denver basin's M5 chance rests on the 1960s Rocky Mountain Arsenal sequence, induced by waste injection."},
	{Module: "earthquake", Peril: "", Higher: "Charleston, SC", Lower: "Aurora, CO", Why: "Charleston's 1886 M7 source is in the USGS long-term model; Aurora's catalog events are the Arsenal's induced swarm."},
	{Module: "earthquake", Peril: "", Higher: "Memphis, TN", Lower: "Lakewood, CO", Why: "Memphis is near the New Madrid seismic zone; Lakewood's 2%-in-50-years PGA is about 0.1 g."},
	{Module: "earthquake", Peril: "", Higher: "Anchorage, AK", Lower: "Denver, CO", Why: "Anchorage is above the Alaska megathrust; downtown Denver's mapped hazard is among the lower half of US residents'."},
	// Hail and wind where the storms are, not where the reporters are.
	{Module: "severeWeather", Peril: "hail", Higher: "Oklahoma City, OK", Lower: "Denver, CO", Why: "Central Oklahoma has more large-hail days than the Front Range; Denver County's many reports per km² come from its many residents."},
	{Module: "severeWeather", Peril: "hail", Higher: "Wichita, KS", Lower: "Denver, CO", Why: "South-central Kansas is at the heart of hail alley; Denver's dense core reports more per km², not more storms."},
	{Module: "severeWeather", Peril: "hail", Higher: "Fort Morgan, CO", Lower: "Denver, CO", Why: "The northeastern Colorado plains are among the most hail-struck ground in the US; downtown Denver is at the edge of that maximum."},
	{Module: "severeWeather", Peril: "hail", Higher: "Dodge City, KS", Lower: "Denver, CO", Why: "Southwestern Kansas has among the highest large-hail frequencies in the US, with few people to report it."},
	{Module: "severeWeather", Peril: "straightLineWind", Higher: "Wichita, KS", Lower: "Chicago, IL", Why: "The southern Plains have far more severe thunderstorm winds than the Chicago lakefront."},
}

// terrainLows are flat downtowns where news reports cluster: the
// landslide module stays low there (at or below 35, the ceiling:
// Max is exclusive), and a ridge town stays low on flood.
var terrainLows = []validationLow{
	{Module: "landslide", Peril: "", Place: "Minneapolis, MN", Max: 36, Why: "Downtown Minneapolis is on a flat glacial outwash plain; the Mississippi's gorge walls are bluffs far below the terrain grid's resolution."},
	{Module: "landslide", Peril: "", Place: "Charleston, SC", Max: 36, Why: "The Charleston peninsula is flat coastal plain a few metres above the sea."},
	{Module: "landslide", Peril: "", Place: "Chicago, IL", Max: 36, Why: "Chicago is flat lake plain."},
	{Module: "landslide", Peril: "", Place: "Denver, CO", Max: 36, Why: "Downtown Denver lies on the flat South Platte plain, 25 km from the foothills."},
	{Module: "landslide", Peril: "", Place: "Longmont, CO", Max: 36, Why: "Longmont is on the plains east of the Front Range."},
	{Module: "landslide", Peril: "", Place: "Fargo, ND", Max: 20, Why: "Fargo is on the flat bed of glacial Lake Agassiz."},
	{Module: "landslide", Peril: "", Place: "Houston, TX", Max: 20, Why: "Houston lies on a nearly flat coastal plain."},
	{Module: "landslide", Peril: "", Place: "Miami, FL", Max: 20, Why: "Miami is flat limestone near sea level."},
	{Module: "severeWeather", Peril: "hail", Place: "Chicago, IL", Max: 70, Why: "Cook County's hail reports per km² follow its five million residents; northeastern Illinois has moderate hail."},
	{Module: "severeWeather", Peril: "straightLineWind", Place: "Chicago, IL", Max: 70, Why: "Chicago's wind reports follow its residents; the lakefront is not a derecho maximum."},
	{Module: "severeWeather", Peril: "", Place: "Chicago, IL", Max: 40, Why: "Chicago has moderate tornado, hail and wind hazard and no hurricanes."},
	{Module: "earthquake", Peril: "", Place: "Aurora, CO", Max: 60, Why: "Aurora's 2%-in-50-years PGA is 0.09 g; its catalog rate is the Rocky Mountain Arsenal's induced swarm of 1962-67, which the USGS long-term model excludes."},
	{Module: "earthquake", Peril: "", Place: "Lakewood, CO", Max: 60, Why: "Lakewood's 2%-in-50-years PGA is 0.11 g; the nearby M4s of the 1960s were induced by waste injection at the Arsenal."},
	{Module: "earthquake", Peril: "", Place: "Denver, CO", Max: 61, Why: "Downtown Denver's mapped hazard is moderate; the Arsenal swarm is not a steady rate."},
	{Module: "earthquake", Peril: "", Place: "Trinidad, CO", Max: 60, Why: "The Raton Basin's M4-5 events since 2001 followed wastewater injection from coal-bed methane production; the USGS long-term model leaves them out."},
	{Module: "earthquake", Peril: "", Place: "Youngstown, OH", Max: 51, Why: "Youngstown's 2011-12 earthquakes were induced by a wastewater well; northeastern Ohio's natural hazard is low."},
	{Module: "earthquake", Peril: "", Place: "Prague, OK", Max: 63, Why: "The 2011 M5.7 Prague sequence is linked to wastewater injection; the long-term model's PGA there is moderate."},
	{Module: "hydrology", Peril: "riverine", Place: "Lookout Mountain, TN", Max: 41, Why: "Lookout Mountain's town is on the ridge top, about 400 m above the Tennessee River."},
	{Module: "hydrology", Peril: "riverine", Place: "Signal Mountain, TN", Max: 41, Why: "Signal Mountain is on the Walden Ridge plateau, about 400 m above the Tennessee River gorge."},
	{Module: "landslide", Peril: "", Place: "Utqiagvik, AK", Max: 20, Why: "Utqiagvik is on the flat Arctic coastal plain."},
	{Module: "hydrology", Peril: "riverine", Place: "Moore, OK", Max: 80, Why: "Moore is 6.6 km from the Canadian River: not a riverside site."},
	{Module: "hydrology", Peril: "", Place: "Blowing Rock, NC", Max: 41, Why: "Blowing Rock is a ridge town on the Blue Ridge escarpment at about 1,100 m, hundreds of metres above any river."},
}

// terrainPriorities: a flat downtown gets no high-priority landslide
// action, whatever was reported around it; a negligible chance of an
// earthquake earns no action at all.
var terrainPriorities = []validationPriority{
	{"landslide", "Minneapolis, MN", false, "downtown Minneapolis is flat: no geotechnical review at high priority"},
	{"landslide", "Chicago, IL", false, "Chicago is flat lake plain"},
	{"earthquake", "Gulfport, MS", false, "an M5+ within 50 km about once in 3,700 years and a 2%-in-50-years PGA of 0.06 g"},
}
