package hydrology

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// gaugeInfo is what a report says about a gauge.
type gaugeInfo struct {
	label string // "Mississippi River at New Orleans (NORL1)"
	// mapped says the gauge stands on a river of the river layers (within
	// gaugeOnRiverKm of one); the others measure streams too small for
	// the maps, whose floodplains are narrow (classifyGauges).
	mapped bool
}

// loadGauges keeps the in-service NWPS river gauges with a defined flood
// stage.
func (m *Module) loadGauges(fsys fs.FS) error {
	t, err := data.OpenTable(fsys, data.Path(SrcGauges), "location name", "nws shef id", "latitude", "longitude", "flood stage", "in service", "pedts")
	if err != nil {
		return err
	}
	defer t.Close()
	var pts []geo.Point
	for t.Scan() {
		lat, err := t.Float("latitude")
		if err != nil {
			return err
		}
		lon, err := t.Float("longitude")
		if err != nil {
			return err
		}
		if lat < -90 || lat > 90 || lon < -180 || lon > 180 {
			return t.Errorf("coordinate (%g, %g) is out of range", lat, lon)
		}
		_, hasStage, err := t.OptFloat("flood stage")
		if err != nil {
			return err
		}
		var inService bool
		switch strings.ToUpper(t.String("in service")) {
		case "TRUE":
			inService = true
		case "FALSE":
		default:
			return t.Errorf(`column "in service": %q is neither TRUE nor FALSE`, t.String("in service"))
		}
		id := t.String("nws shef id")
		name := t.String("location name")
		if !inService || !hasStage || placeholderCoord(lat, lon) || canadianLID(id) ||
			!riverElement(t.String("pedts")) || tideStationName(name) {
			continue
		}
		pts = append(pts, geo.Point{Lat: lat, Lon: lon})
		label := name
		if id != "" {
			label += " (" + id + ")"
		}
		m.gauge = append(m.gauge, gaugeInfo{label: label})
	}
	if err := t.Err(); err != nil {
		return err
	}
	m.rows[SrcGauges] = t.Rows()
	// 0.2 degree cells: the 10 km count visits about 6 cells and the 25 km
	// nearest-gauge search about 12.
	m.gauges = geo.NewPointIndex(pts, 0.2)
	m.gaugePts = pts
	return nil
}

// riverElement reports whether a gauge's SHEF code (the "pedts" column,
// whose first two letters are the physical element) measures a flowing
// river: HG river stage, HT tailwater stage below a dam or lock (in this
// file every HT gauge is a river gauge below a dam or lock, not a tide
// gauge), QR and QT river discharge. Left out: HP reservoir pools, HL, HK
// and HF lakes and forebays, HM, HC, HH and HA tide and coastal water
// levels, and gauges without a code.
func riverElement(pedts string) bool {
	if len(pedts) < 2 {
		return false
	}
	switch strings.ToUpper(pedts[:2]) {
	case "HG", "HT", "QR", "QT":
		return true
	}
	return false
}

// tideStationName catches the few tide stations coded as river stage (HG),
// such as "Tide Gauge at Crystal River (in MHHW)".
func tideStationName(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "tide gauge") || strings.Contains(n, "tide station")
}

// placeholderCoord catches the file's stand-in positions (0,0) and (1,1)
// for gauges whose location is unknown; no US gauge lies within a degree of
// the equator and the prime meridian.
func placeholderCoord(lat, lon float64) bool {
	return math.Abs(lat) <= 1.5 && math.Abs(lon) <= 1.5
}

// canadianLID recognises NWS location identifiers of Canadian points: the
// last two characters code the state or province, and the provinces use Q
// followed by a digit.
func canadianLID(id string) bool {
	return len(id) == 5 && id[3] == 'Q' && id[4] >= '0' && id[4] <= '9'
}

// nfipCounty is one county's NFIP take-up.
type nfipCounty struct {
	ratePct   float64 // residential structures with a policy, percent
	contracts int
}

// loadNFIP reads the county penetration rates. A county listed with its
// structure count but no contracts or rate has no policies in force (rate
// 0); rows without a FIPS code (the per-state "Unknown Counties" rows) and
// rows without structures are skipped.
func (m *Module) loadNFIP(fsys fs.FS) error {
	t, err := data.OpenTable(fsys, data.Path(SrcNFIP), "county", "resPenetrationRate", "resContractsInForce", "totalResStructures", "fipsCode")
	if err != nil {
		return err
	}
	defer t.Close()
	m.nfip = make(map[string]nfipCounty, 3200)
	for t.Scan() {
		raw := t.String("fipsCode")
		if raw == "" {
			continue
		}
		fips := strings.Clone(data.FIPS5(raw)) // a key of its own, not a piece of the CSV record
		if fips == "" {
			return t.Errorf("column \"fipsCode\": %q is not a county FIPS code", raw)
		}
		rate, hasRate, err := t.OptFloat("resPenetrationRate")
		if err != nil {
			return err
		}
		contracts, hasContracts, err := t.OptFloat("resContractsInForce")
		if err != nil {
			return err
		}
		structures, hasStructures, err := t.OptFloat("totalResStructures")
		if err != nil {
			return err
		}
		var c nfipCounty
		switch {
		case hasRate:
			c.ratePct = rate * 100
		case hasStructures && structures > 0:
			// No rate: no contracts (the publisher leaves both empty), or
			// contracts without a computed rate.
			if hasContracts {
				c.ratePct = contracts / structures * 100
			}
		default:
			continue
		}
		if hasContracts {
			if contracts < 0 || contracts != math.Trunc(contracts) {
				return t.Errorf("column \"resContractsInForce\": %g is not a count", contracts)
			}
			c.contracts = int(contracts)
		}
		if c.ratePct < 0 || c.ratePct > 100 {
			return t.Errorf("column \"resPenetrationRate\": %g is outside 0..1", c.ratePct/100)
		}
		if _, dup := m.nfip[fips]; dup {
			return t.Errorf("county %s appears twice", fips)
		}
		m.nfip[fips] = c
	}
	if err := t.Err(); err != nil {
		return err
	}
	m.rows[SrcNFIP] = t.Rows()
	return nil
}

// declarationFrom is the first year counted: from 1980 declarations
// designate counties consistently (earlier ones often cover whole states),
// and the window is about 39 years for every county.
const declarationFrom = 1980

// floodIncidents are the incident types counted whatever the title says.
var floodIncidents = map[string]bool{
	"Flood": true, "Hurricane": true, "Typhoon": true, "Coastal Storm": true,
	"Dam/Levee Break": true, "Tsunami": true,
}

// floodRelated decides whether a declaration row is about flooding: a flood
// incident type, or any major-disaster or emergency declaration whose title
// names flooding (most "Severe Storm(s)" declarations are "SEVERE STORMS AND
// FLOODING"). Evacuation declarations (2005, for states hosting Hurricane
// Katrina evacuees) are not a local hazard and are left out, as are fire
// management and suppression declarations.
func floodRelated(disasterType, incident, title string) bool {
	if disasterType != "DR" && disasterType != "EM" {
		return false
	}
	title = strings.ToUpper(title)
	if strings.Contains(title, "EVACUAT") {
		return false
	}
	return floodIncidents[incident] || strings.Contains(title, "FLOOD")
}

// independentCities maps areas that FEMA designates by a Census place code
// instead of "99" + county code to their county-equivalent FIPS. Bedford,
// Clifton Forge and South Boston (Virginia) have since merged into the
// counties given.
var independentCities = map[string][]string{
	"VA/Alexandria": {"51510"}, "VA/Bristol": {"51520"}, "VA/Buena Vista": {"51530"},
	"VA/Charlottesville": {"51540"}, "VA/Chesapeake": {"51550"}, "VA/Colonial Heights": {"51570"},
	"VA/Covington": {"51580"}, "VA/Danville": {"51590"}, "VA/Emporia": {"51595"},
	"VA/Fairfax": {"51600"}, "VA/Falls Church": {"51610"}, "VA/Franklin": {"51620"},
	"VA/Fredericksburg": {"51630"}, "VA/Galax": {"51640"}, "VA/Hampton": {"51650"},
	"VA/Harrisonburg": {"51660"}, "VA/Hopewell": {"51670"}, "VA/Lexington": {"51678"},
	"VA/Lynchburg": {"51680"}, "VA/Manassas": {"51683"}, "VA/Manassas Park": {"51685"},
	"VA/Martinsville": {"51690"}, "VA/Newport News": {"51700"}, "VA/Norfolk": {"51710"},
	"VA/Norton": {"51720"}, "VA/Petersburg": {"51730"}, "VA/Poquoson": {"51735"},
	"VA/Portsmouth": {"51740"}, "VA/Radford": {"51750"}, "VA/Richmond": {"51760"},
	"VA/Roanoke": {"51770"}, "VA/Salem": {"51775"}, "VA/Staunton": {"51790"},
	"VA/Suffolk": {"51800"}, "VA/Virginia Beach": {"51810"}, "VA/Waynesboro": {"51820"},
	"VA/Williamsburg": {"51830"}, "VA/Winchester": {"51840"},
	"VA/Bedford": {"51019"}, "VA/Clifton Forge": {"51005"}, "VA/South Boston": {"51083"},
	"MD/Baltimore": {"24510"}, "MO/St. Louis": {"29510"}, "NV/Carson City": {"32510"},
}

// renamedCounties maps county codes retired after a declaration to the
// codes the 2023 boundaries use.
var renamedCounties = map[string][]string{
	"46113": {"46102"},          // Shannon -> Oglala Lakota County, SD (2015)
	"02270": {"02158"},          // Wade Hampton -> Kusilvak Census Area, AK (2015)
	"02261": {"02063", "02066"}, // Valdez-Cordova split into Chugach and Copper River, AK (2019)
}

type declKey struct {
	fips string
	num  int
}

// loadDeclarations counts distinct flood-related disaster numbers per
// county. Every county named in any declaration of any kind gets a count,
// zero included; a county absent from the whole file (Connecticut's planning
// regions, some Alaska boroughs) stays unknown.
func (m *Module) loadDeclarations(fsys fs.FS) error {
	t, err := data.OpenTable(fsys, data.Path(SrcDeclarations), "Disaster Number", "State", "Declaration Date",
		"Disaster Type", "Incident Type", "Title", "Place Code", "Declared County/Area", "county_fips")
	if err != nil {
		return err
	}
	defer t.Close()
	m.decl = make(map[string]int, 3300)
	seen := make(map[declKey]bool, 16000)
	for t.Scan() {
		num, err := strconv.Atoi(t.String("Disaster Number"))
		if err != nil {
			return t.Errorf("column \"Disaster Number\": %q is not a number", t.String("Disaster Number"))
		}
		year, err := yearOf(t.String("Declaration Date"))
		if err != nil {
			return t.Errorf("column \"Declaration Date\": %v", err)
		}
		fipsList, err := declarationCounties(t.String("county_fips"), t.String("State"), t.String("Place Code"), t.String("Declared County/Area"))
		if err != nil {
			return t.Errorf("%v", err)
		}
		counted := year >= declarationFrom && floodRelated(t.String("Disaster Type"), t.String("Incident Type"), t.String("Title"))
		for _, fips := range fipsList {
			// The map's keys are copies, not pieces of the CSV record (an
			// assignment stores the key it is given, also to a key the
			// map holds already).
			if _, ok := m.decl[fips]; !ok {
				m.decl[strings.Clone(fips)] = 0
			}
			k := declKey{fips, num}
			if counted && !seen[k] {
				seen[k] = true
				m.decl[strings.Clone(fips)]++
			}
		}
	}
	if err := t.Err(); err != nil {
		return err
	}
	m.rows[SrcDeclarations] = t.Rows()
	return nil
}

// declarationCounties resolves a row to the county FIPS codes it designates
// (none for tribal areas, statewide rows and sub-county places).
func declarationCounties(fips, state, placeCode, area string) ([]string, error) {
	if fips == "" {
		if strings.HasPrefix(placeCode, "99") {
			return nil, nil
		}
		return independentCities[state+"/"+area], nil
	}
	if data.FIPS5(fips) != fips {
		return nil, fmt.Errorf("column \"county_fips\": %q is not a 5-digit county FIPS code", fips)
	}
	if to, ok := renamedCounties[fips]; ok {
		return to, nil
	}
	return []string{fips}, nil
}

// yearOf reads the year of a yyyy/mm/dd (or yyyy-mm-dd) date.
func yearOf(s string) (int, error) {
	if len(s) < 10 || (s[4] != '/' && s[4] != '-') {
		return 0, fmt.Errorf("%q is not a yyyy/mm/dd date", s)
	}
	y, err := strconv.Atoi(s[:4])
	if err != nil || y < 1900 || y > 2100 {
		return 0, errors.New("\"" + s + "\" has no valid year")
	}
	return y, nil
}
