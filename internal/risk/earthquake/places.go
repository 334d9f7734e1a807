package earthquake

import (
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// placeSource is the USGS design web service's quality-control table of
// design values at named places (docs/methodology.md, "Earthquake",
// "PGA outside the conterminous states").
const placeSource = "usgs-design-values-2015"

// The place table's rows used: NEHRP 2015 Provisions, site class B with an
// estimated (not measured) shear-wave velocity, whose site coefficient is
// 1.0, so the value is the ground motion at the B/C boundary (Vs30 = 760
// m/s) that the conterminous grid is computed for.
const (
	placeDocument = "NEHRP-2015"
	placeClassB   = "B"
	placeClassBE  = "B-estimated"
)

// Interpolation between listed places: inverse-distance weighting (power 2)
// of the nearest placeNearest places within the region's radius; a site
// with no listed place that close gets no PGA.
const (
	placeNearest = 4
	placeMinKm   = 1.0  // distances below this count as this, so a site on a place takes (nearly) its value
	placeMergeKm = 10.0 // rows of one title this close are one place listed twice
	placeSameKm  = 1.0  // rows of any titles this close are one point listed under two names
)

// Regions of the place table and the radius within which a listed place
// may inform a site. The islands of Guam and the Northern Marianas, and of
// American Samoa, are small and lie on one arc each, so a wider radius
// reaches Rota, Tinian and the Manu'a Islands from the listed towns on
// Guam, Saipan and Tutuila.
const (
	regionAK   = "AK"
	regionHI   = "HI"
	regionPRVI = "PRVI"
	regionGUMP = "GU_MP"
	regionAS   = "AS"
)

var placeRadiusKm = map[string]float64{
	regionAK:   50,
	regionHI:   50,
	regionPRVI: 50,
	regionGUMP: 150,
	regionAS:   150,
}

// akInterfaceRadiusKm is the wider radius in Alaska for a site above the
// Aleutian megathrust interface: there listed places that are also above
// the interface count out to this distance (docs/methodology.md).
const akInterfaceRadiusKm = 150

// placeRegion is the place-table region of a site outside the conterminous
// states, by USPS code or state FIPS; "" where the table has none.
func placeRegion(stateCode, stateFIPS string) string {
	switch {
	case stateCode == "AK" || stateFIPS == "02":
		return regionAK
	case stateCode == "HI" || stateFIPS == "15":
		return regionHI
	case stateCode == "PR" || stateCode == "VI" || stateFIPS == "72" || stateFIPS == "78":
		return regionPRVI
	case stateCode == "GU" || stateCode == "MP" || stateFIPS == "66" || stateFIPS == "69":
		return regionGUMP
	case stateCode == "AS" || stateFIPS == "60":
		return regionAS
	}
	return ""
}

// place is one listed place: its rows merged (coordinates and values
// averaged).
type place struct {
	Name     string
	Pt       geo.Point
	PGA      float64 // g
	Rows     int
	OverMega bool // above an Alaska subduction interface (Alaska only)
}

// placeTable holds the listed places by region.
type placeTable struct {
	byRegion map[string][]place
	rows     int // rows read from the file
}

// loadPlaces reads the design-value table.
func loadPlaces(fsys fs.FS) (*placeTable, error) {
	rel := data.Path(placeSource)
	t, err := data.OpenTable(fsys, rel, "reference_document", "title", "latitude", "longitude", "region", "site_class", "pgam")
	if err != nil {
		return nil, err
	}
	defer t.Close()
	type acc struct {
		key              string
		name             string
		lat, lon, pga    float64
		n                int
		region           string
		firstLat, firstL float64
	}
	var groups []*acc
	for t.Scan() {
		if t.String("reference_document") != placeDocument {
			continue
		}
		if sc := t.String("site_class"); sc != placeClassBE && sc != placeClassB {
			continue
		}
		region := t.String("region")
		if region == "CONUS" {
			continue // the conterminous grid covers those places
		}
		if _, ok := placeRadiusKm[region]; !ok {
			return nil, t.Errorf("unknown region %q", region)
		}
		title := t.String("title")
		if title == "" {
			return nil, t.Errorf("empty title")
		}
		lat, err := t.Float("latitude")
		if err != nil {
			return nil, err
		}
		lon, err := t.Float("longitude")
		if err != nil {
			return nil, err
		}
		if lat < -90 || lat > 90 || lon < -180 || lon > 180 {
			return nil, t.Errorf("coordinate (%g, %g) out of range", lat, lon)
		}
		pga, ok, err := t.OptFloat("pgam")
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // no PGA listed for this row
		}
		if pga <= 0 || pga > 5 {
			return nil, t.Errorf("column \"pgam\": %g g is not a plausible PGA", pga)
		}
		// One place listed twice: the same title (in any case) within
		// placeMergeKm, or any title within placeSameKm (two names for
		// one point, which would otherwise count twice).
		key := region + "|" + strings.ToLower(title)
		var g *acc
		for _, c := range groups {
			if c.region != region {
				continue
			}
			d := geo.DistanceKm(geo.Point{Lat: c.firstLat, Lon: c.firstL}, geo.Point{Lat: lat, Lon: lon})
			if (c.key == key && d <= placeMergeKm) || d <= placeSameKm {
				g = c
				break
			}
		}
		switch {
		case g == nil:
			g = &acc{key: key, name: title, region: region, firstLat: lat, firstL: lon}
			groups = append(groups, g)
		case g.key != key:
			if !strings.Contains(strings.ToLower(g.name), strings.ToLower(title)) {
				g.name += " / " + title
			}
		default:
			// Prefer the spelling with a capital ("San Juan", not "san Juan").
			if r := []rune(title); len(r) > 0 && unicode.IsUpper(r[0]) && !unicode.IsUpper([]rune(g.name)[0]) {
				g.name = title
			}
		}
		g.lat += lat
		g.lon += lon
		g.pga += pga
		g.n++
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	pt := &placeTable{byRegion: map[string][]place{}, rows: t.Rows()}
	for _, g := range groups {
		n := float64(g.n)
		pt.byRegion[g.region] = append(pt.byRegion[g.region], place{
			Name: g.name,
			Pt:   geo.Point{Lat: g.lat / n, Lon: g.lon / n},
			PGA:  math.Round(g.pga/n*1000) / 1000,
			Rows: g.n,
		})
	}
	if len(pt.byRegion) == 0 {
		return nil, fmt.Errorf("%s: no NEHRP-2015 site class B row with a PGA", rel)
	}
	for _, ps := range pt.byRegion {
		sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	}
	return pt, nil
}

// placeUse is one listed place that informs a site, with its distance.
type placeUse struct {
	*place
	Km float64
}

// placePGA is an interpolated PGA and the places it came from.
type placePGA struct {
	PGA      float64
	RadiusKm float64 // the radius the places used lay within
	Used     []placeUse
}

// at interpolates the PGA at p from the places of region: inverse-distance
// weighting (1/d^2, d at least 1 km) of the nearest placeNearest places
// within the radius. siteOverMega widens the Alaska radius for places that
// are, like the site, above the megathrust interface. ok is false when no
// listed place is close enough.
func (pt *placeTable) at(region string, p geo.Point, siteOverMega bool) (placePGA, bool) {
	radius := placeRadiusKm[region]
	ps := pt.byRegion[region]
	var near [placeNearest]placeUse
	n := 0
	for i := range ps {
		d := geo.DistanceKm(p, ps[i].Pt)
		r := radius
		if siteOverMega && ps[i].OverMega {
			r = akInterfaceRadiusKm
		}
		if d > r {
			continue
		}
		// Insert into the sorted nearest list.
		k := n
		if k == placeNearest {
			if d >= near[k-1].Km {
				continue
			}
			k--
		} else {
			n++
		}
		for k > 0 && near[k-1].Km > d {
			near[k] = near[k-1]
			k--
		}
		near[k] = placeUse{place: &ps[i], Km: d}
	}
	if n == 0 {
		return placePGA{}, false
	}
	var sum, wsum float64
	r := radius
	for _, u := range near[:n] {
		w := 1 / math.Pow(math.Max(u.Km, placeMinKm), 2)
		sum += w * u.PGA
		wsum += w
		if u.Km > radius {
			r = akInterfaceRadiusKm // a place reached through the megathrust rule
		}
	}
	used := make([]placeUse, n)
	copy(used, near[:n])
	return placePGA{PGA: math.Round(sum/wsum*1000) / 1000, RadiusKm: r, Used: used}, true
}

// markOverMega records which Alaska places lie above a subduction interface.
func (pt *placeTable) markOverMega(ak *akLayer) {
	ps := pt.byRegion[regionAK]
	for i := range ps {
		ps[i].OverMega = len(ak.interfacesAt(ps[i].Pt)) > 0
	}
}

// placesNote names the listed places a PGA came from.
func placesNote(pp placePGA) string {
	parts := make([]string, len(pp.Used))
	for i, u := range pp.Used {
		parts[i] = fmt.Sprintf("%s %s (%s)", u.Name, kmWords(u.Km), formatG(u.PGA))
	}
	return fmt.Sprintf("USGS design values (NEHRP 2015, site class B) at the nearest listed places: %s; interpolated peak ground acceleration %s.",
		strings.Join(parts, ", "), formatG(pp.PGA))
}
