package coverage

import (
	"fmt"
	"io/fs"
	"strconv"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// SourceTracts is the 2020 Census tract centres of population, the national
// reference set of residents.
const SourceTracts = "census-cenpop-2020-tracts"

// Tract is one census tract's centre of population and its residents.
type Tract struct {
	CountyFIPS string // 5 digits, as the 2020 Census coded it
	Population float64
	Point      geo.Point
}

// ReadTracts reads the tract centres of population from fsys. Tracts without
// residents are dropped: they carry no weight in a population-weighted
// ranking.
func ReadTracts(fsys fs.FS) ([]Tract, error) {
	rel := data.Path(SourceTracts)
	t, err := data.OpenTable(fsys, rel, "STATEFP", "COUNTYFP", "POPULATION", "LATITUDE", "LONGITUDE")
	if err != nil {
		return nil, err
	}
	defer t.Close()
	out := make([]Tract, 0, 86000)
	for t.Scan() {
		st, co := t.String("STATEFP"), t.String("COUNTYFP")
		if len(st) != 2 || len(co) != 3 {
			return nil, t.Errorf("county %q/%q is not a 2+3 digit FIPS code", st, co)
		}
		pop, err := strconv.Atoi(t.String("POPULATION"))
		if err != nil || pop < 0 {
			return nil, t.Errorf("column \"POPULATION\": %q is not a head count", t.String("POPULATION"))
		}
		lat, err := t.Float("LATITUDE")
		if err != nil {
			return nil, err
		}
		lon, err := t.Float("LONGITUDE")
		if err != nil {
			return nil, err
		}
		if lat < -90 || lat > 90 || lon < -180 || lon > 180 {
			return nil, t.Errorf("coordinate %v, %v is out of range", lat, lon)
		}
		if pop == 0 {
			continue
		}
		out = append(out, Tract{CountyFIPS: st + co, Population: float64(pop), Point: geo.Point{Lat: lat, Lon: lon}})
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no tract with residents", rel)
	}
	return out, nil
}
