package risk

// The validation table (docs/methodology.md, "Validation"): places, the
// orderings a hazard scientist would not doubt, and places where a module
// must stay low. validation.go checks them.

// validationPlaces are well-known US places with their coordinates (a point in the
// built-up place itself, on land) and 5-digit county FIPS.
//
// Every point was checked against the Census 2020 tract centres of population
// (census/CenPop2020_Mean_TR.txt): the nearest tract centre lies in the county
// given here and within 2 km of the point.
var validationPlaces = []validationPlace{
	// Tornado alley and the southern Plains.
	{Name: "Moore, OK", Lat: 35.3395, Lon: -97.4867, County: "40027"},
	{Name: "Oklahoma City, OK", Lat: 35.4676, Lon: -97.5164, County: "40109"},
	{Name: "Wichita, KS", Lat: 37.6872, Lon: -97.3301, County: "20173"},
	{Name: "Joplin, MO", Lat: 37.0842, Lon: -94.5133, County: "29097"},
	{Name: "Tuscaloosa, AL", Lat: 33.2098, Lon: -87.5692, County: "01125"},

	// Midwest and the central Mississippi valley.
	{Name: "Chicago, IL", Lat: 41.8781, Lon: -87.6298, County: "17031"},
	{Name: "Minneapolis, MN", Lat: 44.9778, Lon: -93.2650, County: "27053"},
	{Name: "Cedar Rapids, IA", Lat: 41.9779, Lon: -91.6656, County: "19113"},
	{Name: "Des Moines, IA", Lat: 41.5868, Lon: -93.6250, County: "19153"},
	{Name: "Fargo, ND", Lat: 46.8772, Lon: -96.7898, County: "38017"},
	{Name: "Memphis, TN", Lat: 35.1495, Lon: -90.0490, County: "47157"},
	{Name: "New Madrid, MO", Lat: 36.5865, Lon: -89.5279, County: "29143"},

	// Northeast and mid-Atlantic.
	{Name: "Newark, NJ", Lat: 40.7357, Lon: -74.1724, County: "34013"},
	{Name: "Lower Manhattan, NY", Lat: 40.7060, Lon: -74.0055, County: "36061"},
	{Name: "Washington Heights, NY", Lat: 40.8417, Lon: -73.9394, County: "36061"},
	{Name: "Boston, MA", Lat: 42.3601, Lon: -71.0589, County: "25025"},
	{Name: "Buffalo, NY", Lat: 42.8864, Lon: -78.8784, County: "36029"},
	{Name: "Pittsburgh, PA", Lat: 40.4406, Lon: -79.9959, County: "42003"},
	{Name: "Ellicott City, MD", Lat: 39.2673, Lon: -76.7983, County: "24027"},

	// Southeast and Florida.
	{Name: "Atlanta, GA", Lat: 33.7490, Lon: -84.3880, County: "13121"},
	{Name: "Charleston, SC", Lat: 32.7765, Lon: -79.9311, County: "45019"},
	{Name: "Miami, FL", Lat: 25.7617, Lon: -80.1918, County: "12086"},
	{Name: "Miami Beach, FL", Lat: 25.7907, Lon: -80.1300, County: "12086"},
	{Name: "Doral, FL", Lat: 25.8195, Lon: -80.3553, County: "12086"},
	{Name: "Key West, FL", Lat: 24.5551, Lon: -81.7800, County: "12087"},

	// Gulf coast.
	{Name: "Houston, TX", Lat: 29.7604, Lon: -95.3698, County: "48201"},
	{Name: "Seabrook, TX", Lat: 29.5641, Lon: -95.0255, County: "48201"},
	{Name: "Galveston, TX", Lat: 29.3013, Lon: -94.7977, County: "48167"},
	{Name: "League City, TX", Lat: 29.5075, Lon: -95.0949, County: "48167"},
	{Name: "New Orleans, LA", Lat: 29.9511, Lon: -90.0715, County: "22071"},

	// Mountain West and desert Southwest.
	{Name: "Denver, CO", Lat: 39.7392, Lon: -104.9903, County: "08031"},
	{Name: "Salt Lake City, UT", Lat: 40.7608, Lon: -111.8910, County: "49035"},
	{Name: "Phoenix, AZ", Lat: 33.4484, Lon: -112.0740, County: "04013"},
	{Name: "Boise, ID", Lat: 43.6150, Lon: -116.2023, County: "16001"},
	{Name: "Las Vegas, NV", Lat: 36.1699, Lon: -115.1398, County: "32003"},

	// California.
	{Name: "San Francisco, CA", Lat: 37.7749, Lon: -122.4194, County: "06075"},
	{Name: "Oakland, CA", Lat: 37.8044, Lon: -122.2712, County: "06001"},
	{Name: "Downtown Los Angeles, CA", Lat: 34.0522, Lon: -118.2437, County: "06037"},
	{Name: "Malibu, CA", Lat: 34.0367, Lon: -118.6880, County: "06037"},
	{Name: "Rancho Palos Verdes (Portuguese Bend), CA", Lat: 33.7400, Lon: -118.3700, County: "06037"},
	{Name: "Paradise, CA", Lat: 39.7596, Lon: -121.6219, County: "06007"},
	{Name: "Chico, CA", Lat: 39.7285, Lon: -121.8375, County: "06007"},
	{Name: "Sacramento, CA", Lat: 38.5816, Lon: -121.4944, County: "06067"},
	{Name: "San Diego, CA", Lat: 32.7157, Lon: -117.1611, County: "06073"},
	{Name: "San Bernardino, CA", Lat: 34.1083, Lon: -117.2898, County: "06071"},
	{Name: "Needles, CA", Lat: 34.8480, Lon: -114.6141, County: "06071"},
	{Name: "Palm Springs, CA", Lat: 33.8303, Lon: -116.5453, County: "06065"},
	{Name: "Blythe, CA", Lat: 33.6103, Lon: -114.5964, County: "06065"},

	// Pacific Northwest.
	{Name: "Seattle, WA", Lat: 47.6062, Lon: -122.3321, County: "53033"},
	{Name: "Downtown Tacoma, WA", Lat: 47.2529, Lon: -122.4443, County: "53053"},
	{Name: "Downtown Everett, WA", Lat: 47.9790, Lon: -122.2021, County: "53061"},
	{Name: "Downtown Colorado Springs, CO", Lat: 38.8339, Lon: -104.8214, County: "08041"},
	{Name: "Big Sur, CA", Lat: 36.2690, Lon: -121.7900, County: "06053"},
	{Name: "Salinas, CA", Lat: 36.6777, Lon: -121.6555, County: "06053"},
	{Name: "Laguna Beach (Bluebird Canyon), CA", Lat: 33.5355, Lon: -117.7717, County: "06059"},
	{Name: "Santa Ana, CA", Lat: 33.7455, Lon: -117.8677, County: "06059"},
	{Name: "Pacifica (Esplanade bluffs), CA", Lat: 37.6458, Lon: -122.4903, County: "06081"},
	{Name: "Redwood City, CA", Lat: 37.4852, Lon: -122.2364, County: "06081"},
	{Name: "Portland, OR", Lat: 45.5152, Lon: -122.6784, County: "41051"},
	{Name: "Richland, WA", Lat: 46.2857, Lon: -119.2845, County: "53005"},
	{Name: "Hanford 200 Area, WA", Lat: 46.5500, Lon: -119.5400, County: "53005"},

	// Alaska, Hawaii and Puerto Rico.
	{Name: "Anchorage, AK", Lat: 61.2181, Lon: -149.9003, County: "02020"},
	{Name: "Juneau, AK", Lat: 58.3019, Lon: -134.4197, County: "02110"},
	{Name: "Lahaina, HI", Lat: 20.8783, Lon: -156.6825, County: "15009"},
	{Name: "Lihue, HI", Lat: 21.9811, Lon: -159.3711, County: "15007"},
	{Name: "Honolulu (Waikiki), HI", Lat: 21.2793, Lon: -157.8292, County: "15003"},
	{Name: "Wahiawa, HI", Lat: 21.5028, Lon: -158.0236, County: "15003"},
	{Name: "Hilo, HI", Lat: 19.7241, Lon: -155.0868, County: "15001"},
	{Name: "San Juan, PR", Lat: 18.4655, Lon: -66.1057, County: "72127"},
	{Name: "Kodiak, AK", Lat: 57.7900, Lon: -152.4072, County: "02150"},
	{Name: "Fairbanks, AK", Lat: 64.8378, Lon: -147.7164, County: "02090"},
	{Name: "Ponce, PR", Lat: 18.0111, Lon: -66.6141, County: "72113"},

	// The other territories: no Census tract centres there, so the county
	// is the one the coverage layer gives the point.
	{Name: "Charlotte Amalie, VI", Lat: 18.3419, Lon: -64.9307, County: "78030"},
	{Name: "Hagåtña, GU", Lat: 13.4757, Lon: 144.7489, County: "66010"},
	{Name: "Saipan (Garapan), MP", Lat: 15.2069, Lon: 145.7197, County: "69110"},
	{Name: "Pago Pago, AS", Lat: -14.2781, Lon: -170.7025, County: "60010"},
}

// validationOrders are orderings per module (or per peril) that a hazard scientist would not doubt.
var validationOrders = []validationOrder{
	// The defects methodology v2 set out to fix (parts 2 and 3).
	{Module: "earthquake", Peril: "groundShaking", Higher: "San Francisco, CA", Lower: "Charleston, SC", Why: "Damaging shaking is far more frequent in the Bay Area (M6+ events every few decades) than in coastal South Carolina (one M7 in 1886), though both have high 2,475-year ground motion."},
	{Module: "earthquake", Peril: "", Higher: "Juneau, AK", Lower: "Miami, FL", Why: "Southeast Alaska lies on the active Queen Charlotte-Fairweather system; a short quiet catalog there is not evidence of low hazard."},
	{Module: "earthquake", Peril: "", Higher: "Lahaina, HI", Lower: "Miami, FL", Why: "Maui shakes in Hawaii's large earthquakes (M6.7 in 2006 nearby); South Florida has among the lowest hazard in the US."},
	{Module: "earthquake", Peril: "", Higher: "Lihue, HI", Lower: "Miami, FL", Why: "Kauai has low but non-zero seismic hazard from the Hawaiian chain; South Florida's is among the lowest in the US."},
	// Earthquake everywhere in coverage (methodology v3): the territories
	// and Alaska away from Anchorage.
	{Module: "earthquake", Peril: "", Higher: "Hagåtña, GU", Lower: "Miami, FL", Why: "Guam lies above the Mariana subduction zone (1993 M7.8, 2001 M7.0); South Florida has among the lowest hazard in the US."},
	{Module: "earthquake", Peril: "", Higher: "Saipan (Garapan), MP", Lower: "Miami, FL", Why: "Saipan is on the Mariana arc, above an active subduction zone; South Florida has among the lowest hazard in the US."},
	{Module: "earthquake", Peril: "", Higher: "Charlotte Amalie, VI", Lower: "Miami, FL", Why: "St Thomas lies near the Puerto Rico trench and the Anegada Passage (1867 M7+ earthquake and tsunami); South Florida has among the lowest hazard in the US."},
	{Module: "earthquake", Peril: "", Higher: "Pago Pago, AS", Lower: "Miami, FL", Why: "Tutuila lies near the northern end of the Tonga trench (2009 M8.1 Samoa earthquake); South Florida has among the lowest hazard in the US."},
	{Module: "earthquake", Peril: "", Higher: "Kodiak, AK", Lower: "Fairbanks, AK", Why: "Kodiak lies above the Alaska-Aleutian megathrust (1964 M9.2 rupture) with frequent M5+ events; interior Fairbanks has lower ground motion and fewer moderate earthquakes."},
	{Module: "severeWeather", Peril: "", Higher: "Key West, FL", Lower: "Ellicott City, MD", Why: "The Florida Keys take hurricane-force winds every decade or so; central Maryland rarely does and has moderate hail and wind."},
	{Module: "severeWeather", Peril: "", Higher: "Moore, OK", Lower: "Newark, NJ", Why: "Central Oklahoma has the highest damaging-tornado strike frequency in the US; northern New Jersey's wind reports reflect population, not storms."},
	{Module: "severeWeather", Peril: "tornado", Higher: "Moore, OK", Lower: "Ellicott City, MD", Why: "Moore has been struck by several violent tornadoes (1999, 2003, 2013); central Maryland sees few strong tornadoes."},
	{Module: "severeWeather", Peril: "tornado", Higher: "Tuscaloosa, AL", Lower: "Newark, NJ", Why: "Dixie Alley has frequent strong tornadoes (Tuscaloosa EF4, 2011); northern New Jersey few."},
	{Module: "severeWeather", Peril: "hurricaneWind", Higher: "San Juan, PR", Lower: "Buffalo, NY", Why: "Puerto Rico lies in the main Atlantic hurricane track (Hugo, Georges, Maria); Buffalo is on the Great Lakes, far from any hurricane coast."},
	{Module: "severeWeather", Peril: "hurricaneWind", Higher: "Key West, FL", Lower: "Buffalo, NY", Why: "The Keys have among the most frequent hurricane-force winds in the US; the Great Lakes almost none."},
	{Module: "environmentalExposure", Peril: "superfund", Higher: "Hanford 200 Area, WA", Lower: "Key West, FL", Why: "The Hanford 200 Area holds the tank farms of a final NPL site; Key West has no NPL site within 100 km."},
	{Module: "hydrology", Peril: "coastal", Higher: "Key West, FL", Lower: "Wahiawa, HI", Why: "Key West sits at about 1-5 m on a low island; Wahiawa is a plateau town about 280 m up and 8 km from the sea."},
	{Module: "wildfire", Peril: "wildfire", Higher: "Paradise, CA", Lower: "Miami Beach, FL", Why: "Paradise burned in the 2018 Camp Fire; Miami Beach's homes are on a barrier island far from the Everglades."},
	{Module: "wildfire", Peril: "wildfire", Higher: "Paradise, CA", Lower: "Honolulu (Waikiki), HI", Why: "Paradise is a forested foothill town; Waikiki is dense urban land."},
	{Module: "wildfire", Peril: "wildfire", Higher: "Chico, CA", Lower: "New Orleans, LA", Why: "Butte County's homes border chaparral and forest; New Orleans is urban wetland."},
	// Coastal flooding, including pairs inside one county where only the site differs.
	{Module: "hydrology", Peril: "coastal", Higher: "Miami Beach, FL", Lower: "Denver, CO", Why: "Miami Beach is a low barrier island on the Atlantic; Denver is a mile high and over 1,000 km from any coast."},
	{Module: "hydrology", Peril: "coastal", Higher: "Key West, FL", Lower: "Chicago, IL", Why: "Key West is a low island exposed to surge and tidal flooding; Chicago has no ocean coast."},
	{Module: "hydrology", Peril: "coastal", Higher: "New Orleans, LA", Lower: "Atlanta, GA", Why: "New Orleans lies largely below sea level beside the Gulf (Katrina surge); Atlanta is inland at about 300 m."},
	{Module: "hydrology", Peril: "coastal", Higher: "Charleston, SC", Lower: "Atlanta, GA", Why: "The Charleston peninsula floods at high tides and in hurricane surge; Atlanta is far inland."},
	{Module: "hydrology", Peril: "coastal", Higher: "Miami Beach, FL", Lower: "Doral, FL", Why: "Same county: Miami Beach is on the barrier island, Doral about 17 km inland from Biscayne Bay."},
	{Module: "hydrology", Peril: "coastal", Higher: "Galveston, TX", Lower: "League City, TX", Why: "Same county: Galveston Island takes the open-Gulf surge (1900, Ike 2008); central League City is inland of Clear Lake."},
	{Module: "hydrology", Peril: "coastal", Higher: "Seabrook, TX", Lower: "Houston, TX", Why: "Same county: Seabrook sits on Galveston Bay and was surged by Ike; downtown Houston is over 35 km inland."},
	{Module: "hydrology", Peril: "coastal", Higher: "Lower Manhattan, NY", Lower: "Washington Heights, NY", Why: "Same county: Sandy's surge flooded the Financial District waterfront; Washington Heights is on a ridge tens of metres above the Hudson."},
	{Module: "hydrology", Peril: "coastal", Higher: "Honolulu (Waikiki), HI", Lower: "Wahiawa, HI", Why: "Same county: Waikiki is a low beachfront district; Wahiawa is on Oahu's central plateau near 300 m elevation."},
	{Module: "hydrology", Peril: "coastal", Higher: "Malibu, CA", Lower: "Downtown Los Angeles, CA", Why: "Same county: Malibu's Civic Center lies beside the beach and lagoon; downtown Los Angeles is about 20 km inland."},

	// Riverine flooding.
	{Module: "hydrology", Peril: "riverine", Higher: "Cedar Rapids, IA", Lower: "Phoenix, AZ", Why: "Downtown Cedar Rapids was inundated by the Cedar River's record 2008 flood; downtown Phoenix is outside the dammed, channelized Salt River."},
	{Module: "hydrology", Peril: "riverine", Higher: "Fargo, ND", Lower: "Key West, FL", Why: "Fargo faces major Red River floods (1997, 2009); Key West is a small island with no rivers."},
	{Module: "hydrology", Peril: "riverine", Higher: "Ellicott City, MD", Lower: "Miami Beach, FL", Why: "Historic Ellicott City floods from the Patapsco and its tributaries (1972, 2016, 2018); Miami Beach is a barrier island with no rivers."},
	{Module: "hydrology", Peril: "riverine", Higher: "Houston, TX", Lower: "Phoenix, AZ", Why: "Downtown Houston lies on Buffalo Bayou, which flooded in Allison (2001) and Harvey (2017); downtown Phoenix rarely sees river flooding."},

	// Tornado.
	{Module: "severeWeather", Peril: "tornado", Higher: "Moore, OK", Lower: "Newark, NJ", Why: "Central Oklahoma has among the highest tornado path frequencies in the US; northern New Jersey few."},
	{Module: "severeWeather", Peril: "tornado", Higher: "Moore, OK", Lower: "Downtown Los Angeles, CA", Why: "Moore was struck by violent tornadoes in 1999 and 2013; significant tornadoes are very rare in coastal Southern California."},
	{Module: "severeWeather", Peril: "tornado", Higher: "Oklahoma City, OK", Lower: "Boston, MA", Why: "Oklahoma City lies in tornado alley; eastern Massachusetts has a far lower tornado frequency."},
	{Module: "severeWeather", Peril: "tornado", Higher: "Tuscaloosa, AL", Lower: "Seattle, WA", Why: "Tuscaloosa lies in Dixie Alley (EF4 in 2011); tornadoes are rare west of the Cascades."},
	{Module: "severeWeather", Peril: "tornado", Higher: "Joplin, MO", Lower: "San Francisco, CA", Why: "Southwest Missouri is tornado-prone (EF5 in 2011); San Francisco almost never has tornadoes."},
	{Module: "severeWeather", Peril: "tornado", Higher: "Wichita, KS", Lower: "Portland, OR", Why: "South-central Kansas has a high tornado frequency; tornadoes are rare in northwest Oregon."},

	// Hurricane wind.
	{Module: "severeWeather", Peril: "hurricaneWind", Higher: "Key West, FL", Lower: "Chicago, IL", Why: "The Florida Keys are among the most frequently hurricane-struck places in the US; hurricanes do not reach Chicago at hurricane strength."},
	{Module: "severeWeather", Peril: "hurricaneWind", Higher: "Miami, FL", Lower: "Seattle, WA", Why: "South Florida has frequent hurricane landfalls (Andrew, Irma); no Atlantic or Pacific hurricane reaches Seattle."},
	{Module: "severeWeather", Peril: "hurricaneWind", Higher: "Galveston, TX", Lower: "Denver, CO", Why: "Galveston has had direct hurricane hits (1900, Ike 2008); Denver is far beyond the reach of tropical cyclones."},
	{Module: "severeWeather", Peril: "hurricaneWind", Higher: "New Orleans, LA", Lower: "Minneapolis, MN", Why: "New Orleans is near frequent Gulf landfalls (Katrina, Ida); Minneapolis sees only weak remnants at most."},
	{Module: "severeWeather", Peril: "hurricaneWind", Higher: "San Juan, PR", Lower: "Boise, ID", Why: "San Juan lies in the Caribbean hurricane belt (Hugo, Georges, Maria); Boise never sees tropical cyclone winds."},
	{Module: "severeWeather", Peril: "hurricaneWind", Higher: "Charleston, SC", Lower: "Salt Lake City, UT", Why: "Charleston is on a hurricane-exposed coast (Hugo 1989); Salt Lake City is in the interior West."},

	// Hail.
	{Module: "severeWeather", Peril: "hail", Higher: "Denver, CO", Lower: "Seattle, WA", Why: "The Colorado Front Range has one of the highest large-hail frequencies in the US; hail is rare and small in Seattle."},
	{Module: "severeWeather", Peril: "hail", Higher: "Oklahoma City, OK", Lower: "Downtown Los Angeles, CA", Why: "Central Oklahoma is in hail alley; damaging hail is rare in coastal Southern California."},
	{Module: "severeWeather", Peril: "hail", Higher: "Des Moines, IA", Lower: "San Francisco, CA", Why: "Iowa has frequent severe hail; San Francisco's marine climate almost never produces it."},

	// Straight-line (convective) wind.
	{Module: "severeWeather", Peril: "straightLineWind", Higher: "Cedar Rapids, IA", Lower: "San Francisco, CA", Why: "Cedar Rapids is in the Midwest derecho corridor (August 2020 derecho); severe thunderstorm winds are rare in San Francisco."},
	{Module: "severeWeather", Peril: "straightLineWind", Higher: "Oklahoma City, OK", Lower: "Seattle, WA", Why: "The southern Plains have frequent severe thunderstorm wind reports; western Washington has very few."},
	{Module: "severeWeather", Peril: "straightLineWind", Higher: "Minneapolis, MN", Lower: "Downtown Los Angeles, CA", Why: "The upper Midwest has frequent severe thunderstorm winds and derechos; coastal Southern California rarely has severe thunderstorms."},

	// Wildfire (county-level data, so no same-county pairs).
	{Module: "wildfire", Peril: "wildfire", Higher: "Paradise, CA", Lower: "Chicago, IL", Why: "Paradise is a forested Sierra foothill town destroyed by the 2018 Camp Fire; downtown Chicago has no wildland fuels."},
	{Module: "wildfire", Peril: "wildfire", Higher: "Paradise, CA", Lower: "Seattle, WA", Why: "Paradise lies in fire-prone Butte County foothills; King County's urban core has a very low wildfire hazard."},
	{Module: "wildfire", Peril: "wildfire", Higher: "Paradise, CA", Lower: "Sacramento, CA", Why: "Butte County's foothills have a far higher wildfire hazard than urban Sacramento County on the valley floor."},
	{Module: "wildfire", Peril: "wildfire", Higher: "Malibu, CA", Lower: "Lower Manhattan, NY", Why: "Malibu burns repeatedly in Santa Monica Mountains chaparral (Woolsey 2018); Manhattan has essentially no wildland fuels."},
	{Module: "wildfire", Peril: "wildfire", Higher: "Ramona, CA", Lower: "Buffalo, NY", Why: "Ramona, in San Diego County's backcountry, burned in the Cedar (2003) and Witch (2007) fires; wildfire hazard in Erie County, NY is minimal. (Since methodology 3 downtown San Diego, among its county's not-exposed homes, ties Buffalo at the national minimum.)"},

	// Earthquake ground shaking.
	{Module: "earthquake", Peril: "groundShaking", Higher: "San Francisco, CA", Lower: "Chicago, IL", Why: "San Francisco lies between the San Andreas and Hayward faults; Chicago is in the stable continental interior."},
	{Module: "earthquake", Peril: "groundShaking", Higher: "Oakland, CA", Lower: "Houston, TX", Why: "Oakland sits on the Hayward fault; the Texas Gulf coast has among the lowest seismic hazard in the US."},
	{Module: "earthquake", Peril: "groundShaking", Higher: "Salt Lake City, UT", Lower: "Denver, CO", Why: "Salt Lake City lies on the Wasatch fault; Denver's mapped ground-shaking hazard is several times lower."},
	{Module: "earthquake", Peril: "groundShaking", Higher: "Anchorage, AK", Lower: "Minneapolis, MN", Why: "Anchorage is above the Alaska subduction zone (1964 M9.2, 2018 M7.1); Minnesota is among the least seismic states."},
	{Module: "earthquake", Peril: "groundShaking", Higher: "Memphis, TN", Lower: "Minneapolis, MN", Why: "Memphis is near the New Madrid seismic zone; Minneapolis has very low seismic hazard."},
	{Module: "earthquake", Peril: "groundShaking", Higher: "New Madrid, MO", Lower: "Des Moines, IA", Why: "New Madrid is at the centre of the 1811-1812 earthquake sequence; central Iowa has very low hazard."},
	{Module: "earthquake", Peril: "groundShaking", Higher: "Charleston, SC", Lower: "Miami, FL", Why: "Charleston was hit by the 1886 M~7 earthquake and has high mapped hazard; South Florida has among the lowest in the US."},
	{Module: "earthquake", Peril: "groundShaking", Higher: "Hilo, HI", Lower: "Honolulu (Waikiki), HI", Why: "The Island of Hawaii has Hawaii's highest seismic hazard (1868 M7.9, 1975 M7.7); Oahu's is much lower."},
	{Module: "earthquake", Peril: "groundShaking", Higher: "San Juan, PR", Lower: "Miami, FL", Why: "Puerto Rico sits on an active plate boundary (1918 M7.1); South Florida has very low seismic hazard."},
	{Module: "earthquake", Peril: "groundShaking", Higher: "Ponce, PR", Lower: "Chicago, IL", Why: "Southern Puerto Rico shook hard in the 2020 M6.4 sequence and lies near active offshore faults; Chicago is in the stable continental interior."},
	{Module: "earthquake", Peril: "groundShaking", Higher: "Hagåtña, GU", Lower: "Pago Pago, AS", Why: "Guam's USGS design ground motion (about 0.9 g) is several times Tutuila's (about 0.14 g): Guam sits directly above the Mariana megathrust, Tutuila well off the Tonga trench."},
	{Module: "earthquake", Peril: "groundShaking", Higher: "San Bernardino, CA", Lower: "Needles, CA", Why: "Same county: San Bernardino lies at the San Andreas and San Jacinto faults; Needles on the Colorado River is far from major faults."},
	{Module: "earthquake", Peril: "groundShaking", Higher: "Palm Springs, CA", Lower: "Blythe, CA", Why: "Same county: Palm Springs is beside the southern San Andreas fault; Blythe on the Arizona border is far from major faults."},

	// Landslide.
	{Module: "landslide", Peril: "landslide", Higher: "Rancho Palos Verdes (Portuguese Bend), CA", Lower: "Downtown Los Angeles, CA", Why: "Same county: the Portuguese Bend landslide complex has moved continuously since 1956; downtown Los Angeles is on a flat basin floor."},
	{Module: "landslide", Peril: "landslide", Higher: "Big Sur, CA", Lower: "Salinas, CA", Why: "Same county: the Big Sur coast's steep Santa Lucia slopes close Highway 1 with slides most wet winters (Mud Creek 2017); Salinas lies on the flat valley floor."},
	{Module: "landslide", Peril: "landslide", Higher: "Laguna Beach (Bluebird Canyon), CA", Lower: "Santa Ana, CA", Why: "Same county: the Bluebird Canyon landslide destroyed homes in 1978 and 2005; Santa Ana is on the flat coastal plain."},
	{Module: "landslide", Peril: "landslide", Higher: "Pacifica (Esplanade bluffs), CA", Lower: "Redwood City, CA", Why: "Same county: Pacifica's eroding sea bluffs forced the evacuation of Esplanade Avenue apartments (2010, 2016); Redwood City lies on the bay plain."},
	{Module: "landslide", Peril: "landslide", Higher: "Seattle, WA", Lower: "Miami, FL", Why: "Seattle's steep glacial bluffs produce frequent landslides in wet winters; Miami is flat limestone near sea level."},
	{Module: "landslide", Peril: "landslide", Higher: "Pittsburgh, PA", Lower: "Houston, TX", Why: "Pittsburgh's steep hillsides have one of the highest landslide rates in the eastern US; Houston is on a flat coastal plain."},
	{Module: "landslide", Peril: "landslide", Higher: "Juneau, AK", Lower: "Chicago, IL", Why: "Juneau is built beneath steep slopes with deadly slides (1936) and recurrent debris flows; downtown Chicago is flat lake plain."},
	{Module: "landslide", Peril: "landslide", Higher: "Portland, OR", Lower: "Miami Beach, FL", Why: "Portland's West Hills have frequent landslides (1996-97 storms); Miami Beach is a flat barrier island."},
	{Module: "landslide", Peril: "landslide", Higher: "Malibu, CA", Lower: "Houston, TX", Why: "Malibu's coastal mountains and bluffs have frequent landslides and debris flows; Houston has almost no relief."},

	// Superfund (EPA National Priorities List) proximity.
	{Module: "environmentalExposure", Peril: "superfund", Higher: "Newark, NJ", Lower: "Key West, FL", Why: "Newark has several NPL sites within 5 km (Diamond Alkali, Pierson's Creek, Riverside Industrial Park); Key West has none nearby."},
	{Module: "environmentalExposure", Peril: "superfund", Higher: "Newark, NJ", Lower: "Honolulu (Waikiki), HI", Why: "Newark has one of the densest clusters of NPL sites in the US; the nearest NPL site to Waikiki is about 20 km away."},
	{Module: "environmentalExposure", Peril: "superfund", Higher: "Salt Lake City, UT", Lower: "Las Vegas, NV", Why: "Several NPL sites lie within 5 km of downtown Salt Lake City; there is none within 15 km of central Las Vegas."},
	{Module: "environmentalExposure", Peril: "superfund", Higher: "Minneapolis, MN", Lower: "Fargo, ND", Why: "Minneapolis has multiple NPL sites within 5-10 km; there is none near Fargo."},
	{Module: "environmentalExposure", Peril: "superfund", Higher: "Seattle, WA", Lower: "Boise, ID", Why: "Harbor Island, Lockheed West Seattle and Pacific Sound Resources are NPL sites within 4 km of downtown Seattle; none is near Boise."},
	{Module: "environmentalExposure", Peril: "superfund", Higher: "Richland, WA", Lower: "Juneau, AK", Why: "Richland adjoins the Hanford nuclear reservation (Hanford 300-Area NPL site about 10 km away); no NPL site is near Juneau."},
}

// validationLows are places where a module must stay low (score below Max, 0..100 scale = population-weighted percentile among US residents).
var validationLows = []validationLow{
	// Defects methodology v2 part 3 set out to fix.
	{Module: "earthquake", Peril: "groundShaking", Place: "Lower Manhattan, NY", Max: 80, Why: "New York's 2,475-year ground motion is moderate (0.17 g) and damaging earthquakes nearby are rare: not very high."},
	{Module: "environmentalExposure", Peril: "superfund", Place: "Richland, WA", Max: 80, Why: "The NPL sites nearest Richland's centre are deleted (cleanup complete); the nearest active one is over 9 km away."},
	{Module: "environmentalExposure", Peril: "superfund", Place: "Phoenix, AZ", Max: 80, Why: "No final or proposed NPL site lies within 5 km of downtown Phoenix; deleted sites carry no weight."},
	{Module: "earthquake", Peril: "groundShaking", Place: "Miami, FL", Max: 30, Why: "South Florida has among the lowest mapped seismic hazard in the conterminous US."},
	{Module: "earthquake", Peril: "groundShaking", Place: "Houston, TX", Max: 40, Why: "The Texas Gulf coastal plain has very low seismic hazard."},
	{Module: "earthquake", Peril: "groundShaking", Place: "Minneapolis, MN", Max: 30, Why: "Minnesota is one of the least seismically active states."},
	{Module: "earthquake", Peril: "groundShaking", Place: "Pago Pago, AS", Max: 80, Why: "Tutuila's 2,475-year ground motion is moderate (USGS design PGA about 0.14 g, site class B): not very high."},
	{Module: "wildfire", Peril: "wildfire", Place: "Lower Manhattan, NY", Max: 30, Why: "New York County is dense urban land with essentially no wildland fuels."},
	{Module: "wildfire", Peril: "wildfire", Place: "Chicago, IL", Max: 40, Why: "Cook County is mostly urban and its remaining vegetation burns rarely and mildly."},
	{Module: "hydrology", Peril: "coastal", Place: "Denver, CO", Max: 30, Why: "Denver is about 1,600 m above sea level and over 1,000 km from any coast."},
	{Module: "hydrology", Peril: "coastal", Place: "Las Vegas, NV", Max: 30, Why: "Las Vegas is in an inland desert basin more than 300 km from the ocean."},
	{Module: "hydrology", Peril: "coastal", Place: "Chico, CA", Max: 30, Why: "Chico is in the Sacramento Valley, over 150 km from the Pacific coast."},
	{Module: "hydrology", Peril: "riverine", Place: "Key West, FL", Max: 30, Why: "Key West is a small limestone island with no rivers or streams."},
	{Module: "severeWeather", Peril: "tornado", Place: "Seattle, WA", Max: 30, Why: "Tornadoes are rare and weak west of the Cascades."},
	{Module: "severeWeather", Peril: "tornado", Place: "San Francisco, CA", Max: 30, Why: "San Francisco's marine climate almost never produces tornadoes."},
	{Module: "severeWeather", Peril: "tornado", Place: "Anchorage, AK", Max: 30, Why: "Tornadoes are almost unknown in Alaska."},
	{Module: "severeWeather", Peril: "hurricaneWind", Place: "Denver, CO", Max: 30, Why: "Tropical cyclones never reach the Colorado Front Range with damaging winds."},
	{Module: "severeWeather", Peril: "hurricaneWind", Place: "Chicago, IL", Max: 40, Why: "Chicago sees at most weakened tropical remnants, never hurricane-force winds."},
	{Module: "severeWeather", Peril: "hurricaneWind", Place: "Seattle, WA", Max: 30, Why: "No Atlantic or eastern Pacific hurricane reaches the Pacific Northwest."},
	{Module: "severeWeather", Peril: "hail", Place: "San Francisco, CA", Max: 30, Why: "Damaging hail is almost unknown in San Francisco."},
	{Module: "severeWeather", Peril: "hail", Place: "Seattle, WA", Max: 30, Why: "Severe (1 inch or larger) hail is very rare in western Washington."},
	{Module: "severeWeather", Peril: "straightLineWind", Place: "San Francisco, CA", Max: 30, Why: "Severe thunderstorm winds are very rare in San Francisco."},
	{Module: "landslide", Peril: "landslide", Place: "Miami, FL", Max: 30, Why: "Miami is flat, low limestone terrain with no slopes to fail."},
	{Module: "landslide", Peril: "landslide", Place: "Houston, TX", Max: 30, Why: "Houston lies on a nearly flat coastal plain."},
	{Module: "landslide", Peril: "landslide", Place: "Phoenix, AZ", Max: 80, Why: "Downtown Phoenix lies on the flat Salt River valley floor."},
	{Module: "landslide", Peril: "landslide", Place: "Downtown Los Angeles, CA", Max: 80, Why: "Downtown Los Angeles is on a flat basin floor."},
	{Module: "landslide", Peril: "landslide", Place: "Denver, CO", Max: 80, Why: "Downtown Denver lies on the flat South Platte plain, 25 km from the foothills."},
	{Module: "landslide", Peril: "landslide", Place: "Chicago, IL", Max: 80, Why: "Chicago is flat lake plain."},
	{Module: "environmentalExposure", Peril: "superfund", Place: "Key West, FL", Max: 30, Why: "No National Priorities List site lies near Key West."},
	{Module: "environmentalExposure", Peril: "superfund", Place: "Fargo, ND", Max: 30, Why: "No National Priorities List site lies near Fargo."},
}
