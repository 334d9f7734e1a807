package console

import (
	"encoding/json"
	"math"
	"net/http"

	"github.com/locrisk/locrisk/internal/risk/geo"
)

// siteMaps is the answer of GET geo/counties/{fips}: the report page's two
// maps of a county, the state with the county in it and the county alone,
// for the page's script to put the report's site on. The site is not
// sent here (the page has it from the report), so the answer is the same
// for every site of the county and may be cached.
type siteMaps struct {
	CountyFIPS string  `json:"countyFips"`
	State      siteMap `json:"state"`
	County     siteMap `json:"county"`
}

// siteMap is one map: its size, its paths (the state's outline, empty on
// the county map; the county's) and the projection that placed them.
type siteMap struct {
	Width  float64  `json:"width"`
	Height float64  `json:"height"`
	State  string   `json:"state,omitempty"`
	County string   `json:"county"`
	Proj   equirect `json:"projection"`
}

// equirect is the maps' projection, equirectangular with longitudes scaled
// by the cosine of the middle latitude (as the PDF's locator map): at a
// state's size it keeps shapes recognisable and is simple to apply in the
// page's script: x = offX + (lon' - minLon) * kx * scale, y = offY +
// (maxLat - lat) * scale, where lon' is lon moved by whole turns to within
// 180 degrees of lon0 (so a map across the antimeridian stays whole).
type equirect struct {
	Lon0   float64 `json:"lon0"`
	MinLon float64 `json:"minLon"`
	MaxLat float64 `json:"maxLat"`
	Kx     float64 `json:"kx"`
	Scale  float64 `json:"scale"`
	OffX   float64 `json:"offX"`
	OffY   float64 `json:"offY"`
}

func (p equirect) xy(pt geo.Point) xy {
	lon := p.Lon0 + geo.NormalizeLon(pt.Lon-p.Lon0)
	return xy{p.OffX + (lon-p.MinLon)*p.Kx*p.Scale, p.OffY + (p.MaxLat-pt.Lat)*p.Scale}
}

// fitEquirect fits rings into a w by h map with pad units around them; an
// extent under minSpan degrees is widened to it, so a county of a few
// square kilometres is not drawn as if it were a state.
func fitEquirect(rings [][]geo.Point, w, h, pad, minSpan float64) (equirect, bool) {
	var lon0 float64
	found := false
	for _, r := range rings {
		if len(r) > 0 {
			lon0, found = r[0].Lon, true
			break
		}
	}
	if !found {
		return equirect{}, false
	}
	p := equirect{Lon0: lon0}
	minLon, maxLon, minLat, maxLat := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, r := range rings {
		for _, pt := range r {
			lon := lon0 + geo.NormalizeLon(pt.Lon-lon0)
			minLon, maxLon = math.Min(minLon, lon), math.Max(maxLon, lon)
			minLat, maxLat = math.Min(minLat, pt.Lat), math.Max(maxLat, pt.Lat)
		}
	}
	if d := minSpan - (maxLat - minLat); d > 0 {
		minLat, maxLat = minLat-d/2, maxLat+d/2
	}
	p.Kx = math.Max(math.Cos((minLat+maxLat)/2*deg), 0.05)
	if d := minSpan/p.Kx - (maxLon - minLon); d > 0 {
		minLon, maxLon = minLon-d/2, maxLon+d/2
	}
	sx, sy := (maxLon-minLon)*p.Kx, maxLat-minLat
	p.Scale = math.Min((w-2*pad)/sx, (h-2*pad)/sy)
	p.MinLon, p.MaxLat = minLon, maxLat
	p.OffX = (w - sx*p.Scale) / 2
	p.OffY = (h - sy*p.Scale) / 2
	return p, true
}

// The report page's maps: sizes in map units, and the detail kept.
const (
	stateMapW, stateMapH   = 320, 240
	countyMapW, countyMapH = 240, 240
	siteMapTolerance       = 0.3
	siteMapMinArea         = 0.5
)

// countyMaps draws the two maps of a county, ok false for an unknown one.
func countyMaps(g Geography, fips string) (siteMaps, bool) {
	state, county := g.Outlines(fips)
	if len(county) == 0 {
		return siteMaps{}, false
	}
	out := siteMaps{CountyFIPS: fips}
	if len(state) == 0 {
		state = county
	}
	sp, ok := fitEquirect(state, stateMapW, stateMapH, 8, 0.5)
	if !ok {
		return siteMaps{}, false
	}
	out.State = siteMap{Width: stateMapW, Height: stateMapH, Proj: sp,
		State:  pathData(shapes(state, sp.xy, siteMapTolerance, siteMapMinArea)),
		County: pathData(shapes(county, sp.xy, siteMapTolerance, 0))}
	cp, ok := fitEquirect(county, countyMapW, countyMapH, 14, 0.08)
	if !ok {
		return siteMaps{}, false
	}
	out.County = siteMap{Width: countyMapW, Height: countyMapH, Proj: cp,
		County: pathData(shapes(county, cp.xy, siteMapTolerance, 0))}
	return out, true
}

// serveCountyMap answers GET geo/counties/{fips}. The boundaries are public
// data and the answer names no site, so it needs no key; it may be kept
// for an hour (the data change only with the server's).
func (c *Console) serveCountyMap(w http.ResponseWriter, r *http.Request) {
	fips := r.PathValue("fips")
	if !fipsForm.MatchString(fips) {
		c.notFound(w, r)
		return
	}
	m, ok := countyMaps(c.geo, fips)
	if !ok {
		c.notFound(w, r)
		return
	}
	b, err := json.Marshal(m)
	if err != nil {
		c.log.ErrorContext(r.Context(), "console: county map", "fips", fips, "error", err)
		http.Error(w, "the map could not be drawn", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "private, max-age=3600")
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}
