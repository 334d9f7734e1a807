package risk

import "slices"

// The metropolitan part of the validation table (docs/methodology.md,
// "Validation"), added with methodology 3: in each metro a dense core and a
// wildland or hillside edge of the same county, so that the wildfire
// allocation is checked where an underwriter would check it, and the places
// issue 24 named. Edge points are in the neighbourhood itself, which may be
// farther than 2 km from a tract centre; each is checked to locate in its
// county.
var metroPlaces = []validationPlace{
	{Name: "Mountain Shadows, Colorado Springs, CO", Lat: 38.8900, Lon: -104.8900, County: "08041"},
	{Name: "Cave Creek, AZ", Lat: 33.8334, Lon: -111.9507, County: "04013"},
	{Name: "Topanga, CA", Lat: 34.0939, Lon: -118.6017, County: "06037"},
	{Name: "Ramona, CA", Lat: 33.0417, Lon: -116.8686, County: "06073"},
	{Name: "Hidden Springs, ID", Lat: 43.7196, Lon: -116.2510, County: "16001"},
	{Name: "Emigration Canyon, UT", Lat: 40.7700, Lon: -111.7600, County: "49035"},
	{Name: "Lakewood, CO", Lat: 39.7047, Lon: -105.0814, County: "08059"},
	{Name: "Evergreen, CO", Lat: 39.6333, Lon: -105.3172, County: "08059"},
	{Name: "Downtown Reno, NV", Lat: 39.5296, Lon: -119.8138, County: "32031"},
	{Name: "Verdi, NV", Lat: 39.5180, Lon: -119.9890, County: "32031"},
	{Name: "Downtown Santa Rosa, CA", Lat: 38.4404, Lon: -122.7141, County: "06097"},
	{Name: "Glen Ellen, CA", Lat: 38.3641, Lon: -122.5244, County: "06097"},
	{Name: "Downtown Redding, CA", Lat: 40.5865, Lon: -122.3917, County: "06089"},
	{Name: "Keswick, CA", Lat: 40.6121, Lon: -122.4705, County: "06089"},
	{Name: "Downtown Santa Barbara, CA", Lat: 34.4208, Lon: -119.6982, County: "06083"},
	{Name: "Painted Cave, CA", Lat: 34.4980, Lon: -119.7960, County: "06083"},
	{Name: "Downtown Tucson, AZ", Lat: 32.2226, Lon: -110.9747, County: "04019"},
	{Name: "Summerhaven, AZ", Lat: 32.4420, Lon: -110.7590, County: "04019"},
	{Name: "Downtown Albuquerque, NM", Lat: 35.0844, Lon: -106.6504, County: "35001"},
	{Name: "Sandia Heights, NM", Lat: 35.1770, Lon: -106.4830, County: "35001"},
	{Name: "Downtown Bend, OR", Lat: 44.0582, Lon: -121.3153, County: "41017"},
	{Name: "Sisters, OR", Lat: 44.2910, Lon: -121.5492, County: "41017"},
	{Name: "Downtown Austin, TX", Lat: 30.2672, Lon: -97.7431, County: "48453"},
	{Name: "Lago Vista, TX", Lat: 30.4602, Lon: -97.9884, County: "48453"},
	{Name: "Corbett, OR", Lat: 45.5279, Lon: -122.2926, County: "41051"},
}

// coreEdge is one metro's pair: a dense core below its county's wildland
// or hillside edge on wildfire.
type coreEdge struct{ core, edge, why string }

var metroWildfirePairs = []coreEdge{
	{"Downtown Colorado Springs, CO", "Mountain Shadows, Colorado Springs, CO", "the 2012 Waldo Canyon fire burned into Mountain Shadows from the foothills; downtown is a dense street grid on the plain"},
	{"Phoenix, AZ", "Cave Creek, AZ", "Cave Creek's homes sit in Sonoran desert scrub at the metro's northern edge; downtown Phoenix is built-up desert floor"},
	{"Downtown Los Angeles, CA", "Topanga, CA", "Topanga Canyon's homes are in Santa Monica Mountains chaparral; downtown Los Angeles is a dense basin core"},
	{"Downtown Los Angeles, CA", "Malibu, CA", "Malibu burned in the 1993 Old Topanga and 2018 Woolsey fires; downtown Los Angeles is a dense basin core"},
	{"San Diego, CA", "Ramona, CA", "Ramona burned in the 2003 Cedar and 2007 Witch fires; downtown San Diego is a dense core by the bay"},
	{"Boise, ID", "Hidden Springs, ID", "Hidden Springs lies in the Boise foothills' grass and shrub; downtown Boise is on the river plain"},
	{"Salt Lake City, UT", "Emigration Canyon, UT", "Emigration Canyon's homes are in Wasatch oak and conifer; downtown Salt Lake City is on the valley floor"},
	{"Lakewood, CO", "Evergreen, CO", "Evergreen is a foothills town in ponderosa forest; Lakewood is suburban plain in the same county"},
	{"Downtown Reno, NV", "Verdi, NV", "Verdi sits against the Sierra's brush and pine at Reno's western edge; downtown Reno is the dense core"},
	{"Downtown Santa Rosa, CA", "Glen Ellen, CA", "Glen Ellen burned in the 2017 Nuns fire; downtown Santa Rosa is the county's dense core"},
	{"Downtown Redding, CA", "Keswick, CA", "Keswick burned in the 2018 Carr fire; downtown Redding is the city's core"},
	{"Downtown Santa Barbara, CA", "Painted Cave, CA", "Painted Cave burned in the 1990 Painted Cave fire, high in the Santa Ynez chaparral; downtown Santa Barbara is on the coastal plain"},
	{"Downtown Tucson, AZ", "Summerhaven, AZ", "Summerhaven burned in the 2003 Aspen fire on Mount Lemmon; downtown Tucson is on the desert floor"},
	{"Downtown Albuquerque, NM", "Sandia Heights, NM", "Sandia Heights is at the foot of the Sandias in pinon-juniper; downtown Albuquerque is on the valley floor"},
	{"Downtown Bend, OR", "Sisters, OR", "Sisters is a small town in ponderosa forest; downtown Bend is the county's dense core"},
	{"Downtown Austin, TX", "Lago Vista, TX", "Lago Vista is in Hill Country juniper and oak by Lake Travis; downtown Austin is the dense core"},
	{"Portland, OR", "Corbett, OR", "Corbett is rural forest edge at the Columbia Gorge; downtown Portland is the dense core"},
}

// validationPriority says whether a place's report must (High) or must not
// give a module's action at high priority: triage follows the evidence
// (docs/methodology.md, "Recommendations").
type validationPriority struct {
	Module, Place string
	High          bool
	Why           string
}

var validationPriorities = []validationPriority{
	{"earthquake", "Anchorage, AK", true, "Anchorage has one of the highest seismic hazards in the nation (1964 M9.2, 2018 M7.1): a USGS design PGA of 0.50 g"},
	{"earthquake", "San Francisco, CA", true, "the Bay Area's 2,475-year ground motion is far above 0.4 g"},
	{"severeWeather", "Moore, OK", true, "Moore is the archetype of tornado exposure (1999, 2003, 2013)"},
	{"wildfire", "Paradise, CA", true, "Paradise burned in the 2018 Camp Fire; its homes are Butte County's directly exposed ones"},
	{"wildfire", "Phoenix, AZ", false, "downtown Phoenix is built-up desert floor: no defensible-space inspection at high priority"},
	{"wildfire", "Downtown Colorado Springs, CO", false, "downtown Colorado Springs is a dense street grid far from the foothills"},
	{"wildfire", "Downtown Los Angeles, CA", false, "downtown Los Angeles is a dense basin core"},
	{"landslide", "Downtown Los Angeles, CA", false, "news reports alone never justify a high priority"},
}

// allValidationPlaces is the whole table's places, in display order.
func allValidationPlaces() []validationPlace {
	return slices.Concat(validationPlaces, metroPlaces, terrainPlaces)
}

// allValidationLows adds the terrain ceilings to the lows.
func allValidationLows() []validationLow { return slices.Concat(validationLows, terrainLows) }

// allValidationPriorities adds the terrain priorities.
func allValidationPriorities() []validationPriority {
	return slices.Concat(validationPriorities, terrainPriorities)
}

// allValidationOrders adds the metro pairs to the orderings.
func allValidationOrders() []validationOrder {
	out := slices.Concat(validationOrders, terrainOrders)
	for _, p := range metroWildfirePairs {
		out = append(out, validationOrder{Module: "wildfire", Peril: "wildfire", Higher: p.edge, Lower: p.core, Why: "Same county: " + p.why + "."})
	}
	return out
}
