package coverage

import (
	"fmt"
	"io/fs"
	"math"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// sqMiToKm2 is the exact size of one international square mile in km2.
const sqMiToKm2 = 2.589988110336

type gazRow struct {
	geoid   string
	usps    string
	name    string
	landKm2 float64 // 0 when the cell is empty
	pt      geo.Point
}

// readGazetteer reads the tab-separated Census county Gazetteer, in file
// order. Its last column is padded with spaces, which Table trims.
func readGazetteer(fsys fs.FS, rel string) ([]gazRow, error) {
	t, err := data.OpenTableSep(fsys, rel, '\t', "USPS", "GEOID", "NAME", "ALAND_SQMI", "INTPTLAT", "INTPTLONG")
	if err != nil {
		return nil, err
	}
	defer t.Close()
	var rows []gazRow
	seen := make(map[string]bool)
	for t.Scan() {
		raw := t.String("GEOID")
		geoid := data.FIPS5(raw)
		if len(raw) != 5 || geoid == "" {
			return nil, t.Errorf("GEOID %q is not a 5-digit county FIPS code", raw)
		}
		if seen[geoid] {
			return nil, t.Errorf("GEOID %s appears twice", geoid)
		}
		seen[geoid] = true
		usps := t.String("USPS")
		if want, known := uspsByStateFIPS[geoid[:2]]; known && usps != want {
			return nil, t.Errorf("USPS %q does not match state FIPS %s (%s)", usps, geoid[:2], want)
		}
		lat, err := t.Float("INTPTLAT")
		if err != nil {
			return nil, err
		}
		lon, err := t.Float("INTPTLONG")
		if err != nil {
			return nil, err
		}
		if !(lat >= -90 && lat <= 90) || !(lon >= -180 && lon <= 180) {
			return nil, t.Errorf("internal point (%g, %g) is not a latitude/longitude", lat, lon)
		}
		sqmi, has, err := t.OptFloat("ALAND_SQMI")
		if err != nil {
			return nil, err
		}
		if has && (sqmi < 0 || math.IsInf(sqmi, 0) || math.IsNaN(sqmi)) {
			return nil, t.Errorf("ALAND_SQMI %g is not a land area", sqmi)
		}
		name := t.String("NAME")
		if name == "" {
			return nil, t.Errorf("NAME is empty")
		}
		rows = append(rows, gazRow{geoid: geoid, usps: usps, name: name, landKm2: sqmi * sqMiToKm2,
			pt: geo.Point{Lat: lat, Lon: geo.NormalizeLon(lon)}})
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no rows", rel)
	}
	return rows, nil
}
