package data

// OlderCounty is a county of the 2023 boundaries (the coverage layer's)
// that tables keyed by older county codes do not know, and the older
// county those tables used for its land.
type OlderCounty struct {
	FIPS    string // the county of the 2023 boundaries
	Old     string // the older county whose row stands in for it
	OldName string
	// Renamed: the same land under a new name and code, so the older row
	// is the county's own and nothing needs saying.
	Renamed bool
}

// olderCounties: Connecticut's planning regions do not nest in the old
// counties, so each goes to the county that covers most of its area;
// Alaska's 2019 Chugach and Copper River split goes to the former
// Valdez-Cordova Census Area; Oglala Lakota is Shannon County renamed
// (docs/methodology.md, wildfire module, "Geography").
var olderCounties = [...]OlderCounty{
	{"02063", "02261", "Valdez-Cordova Census Area", false},
	{"02066", "02261", "Valdez-Cordova Census Area", false},
	{"09110", "09003", "Hartford County", false},
	{"09120", "09001", "Fairfield County", false},
	{"09130", "09007", "Middlesex County", false},
	{"09140", "09009", "New Haven County", false},
	{"09150", "09015", "Windham County", false},
	{"09160", "09005", "Litchfield County", false},
	{"09170", "09009", "New Haven County", false},
	{"09180", "09011", "New London County", false},
	{"09190", "09001", "Fairfield County", false},
	{"46102", "46113", "Shannon County", true},
}

// OlderCounties lists every county of the 2023 boundaries with an older
// stand-in, in FIPS order.
func OlderCounties() []OlderCounty { return append([]OlderCounty(nil), olderCounties[:]...) }

// OlderCountyOf returns the older stand-in of county fips, if it has one.
func OlderCountyOf(fips string) (OlderCounty, bool) {
	for _, o := range olderCounties {
		if o.FIPS == fips {
			return o, true
		}
	}
	return OlderCounty{}, false
}
