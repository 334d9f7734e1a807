package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// layerGeography is a coverage layer as the console's Geography, as the
// engine gives it.
type layerGeography struct{ *coverage.Layer }

func (g layerGeography) Outlines(fips string) (state, county [][]geo.Point) {
	c, ok := g.County(fips)
	if !ok {
		return nil, nil
	}
	return g.StateOutline(c.StateFIPS), g.CountyOutline(fips)
}

var (
	fixtureLayer = datatest.Once(datatest.Fixture, coverage.Load)
	realLayer    = datatest.Once(datatest.Real, coverage.Load)
)

func newConsole(t *testing.T, g Geography) *Console {
	t.Helper()
	c, err := New(Config{Geography: g, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func get(t *testing.T, h http.Handler, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// pagePaths is one address of every page.
var pagePaths = []string{
	"/console/",
	"/console/signin",
	"/console/reports/01a2533b-eac3-717d-a089-73c02dc188eb",
	"/console/portfolio",
	"/console/batches/bat_0VdAZkcTepzkHGoVlDVmsHJs",
	"/console/operations",
}

// TestSecurityHeaders: every answer, pages, files, map data and 404s,
// carries the strict policy and the other headers.
func TestSecurityHeaders(t *testing.T) {
	c := newConsole(t, layerGeography{fixtureLayer(t)})
	paths := append([]string{
		"/console/assets/console.js", "/console/assets/console.css", "/console/geo/counties/06075",
		"/console/nothing", "/console/assets/nothing.js", "/console/reports/not-a-uuid",
		"/console/batches/job_0VdAZkcTepzkHGoVlDVmsHJs", "/console/geo/counties/99999",
	}, pagePaths...)
	for _, p := range paths {
		rec := get(t, c, p)
		h := rec.Header()
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'",
			"frame-ancestors 'none'", "base-uri 'none'", "require-trusted-types-for 'script'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: CSP %q lacks %s", p, csp, want)
			}
		}
		for _, bad := range []string{"unsafe-inline", "unsafe-eval", "http:", "https:", "*", "data:"} {
			if strings.Contains(csp, bad) {
				t.Errorf("GET %s: CSP %q allows %s", p, csp, bad)
			}
		}
		for name, want := range map[string]string{
			"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
			"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Resource-Policy": "same-origin",
		} {
			if got := h.Get(name); got != want {
				t.Errorf("GET %s: %s %q, want %q", p, name, got, want)
			}
		}
		if h.Get("Set-Cookie") != "" {
			t.Errorf("GET %s sets a cookie", p)
		}
	}
}

// TestPages: each page is served, holds no inline script, style or event
// handler, refers only to its own origin, and every file it refers to is
// served with its type; a page's first load, with its files, stays within
// 300 KB.
func TestPages(t *testing.T) {
	c := newConsole(t, layerGeography{realLayer(t)})
	for _, p := range pagePaths {
		t.Run(p, func(t *testing.T) {
			rec := get(t, c, p)
			if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("GET %s: %d %s", p, rec.Code, rec.Header().Get("Content-Type"))
			}
			page := rec.Body.Bytes()
			refs := checkHTML(t, page)
			total := len(page)
			scripts := 0
			for _, ref := range refs {
				u, err := url.Parse(ref.url)
				if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(u.Path, "/") {
					t.Errorf("<%s> refers to %q, not a path of this origin", ref.tag, ref.url)
					continue
				}
				if !ref.load {
					continue // a link to follow, not part of the load
				}
				if ref.tag == "script" {
					scripts++
				}
				a := get(t, c, ref.url)
				if a.Code != http.StatusOK {
					t.Errorf("<%s> %s: %d", ref.tag, ref.url, a.Code)
					continue
				}
				want := map[string]string{"script": "text/javascript; charset=utf-8", "stylesheet": "text/css; charset=utf-8", "icon": "image/svg+xml", "img": "image/svg+xml"}[ref.tag]
				if ct := a.Header().Get("Content-Type"); ct != want {
					t.Errorf("%s: Content-Type %q, want %q", ref.url, ct, want)
				}
				if cc := a.Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
					t.Errorf("%s (its current version): Cache-Control %q", ref.url, cc)
				}
				total += a.Body.Len()
			}
			if scripts != 2 {
				t.Errorf("%d scripts, want console.js and the page's own", scripts)
			}
			t.Logf("%s: %d bytes with its files", p, total)
			if total > 300<<10 {
				t.Errorf("%s: the first load is %d bytes with its files, over the 300 KB budget", p, total)
			}
		})
	}
}

// TestPageSections: a page holds, hidden until its script knows whether
// they apply, the sections its script fills in (docs/console.md): the
// report's outlook and the portfolio page's watchlists. A section that
// may not apply starts hidden, so that a report made before the outlook,
// or a key without the scope, never shows an empty frame.
func TestPageSections(t *testing.T) {
	c := newConsole(t, layerGeography{fixtureLayer(t)})
	for _, tc := range []struct {
		path   string
		id     string
		hidden bool
	}{
		{"/console/reports/01a2533b-eac3-717d-a089-73c02dc188eb", "outlook-section", true},
		{"/console/reports/01a2533b-eac3-717d-a089-73c02dc188eb", "outlook", false},
		{"/console/portfolio", "watchlists-section", false},
		{"/console/portfolio", "watchlists", false},
		{"/console/portfolio", "watchlist-items", true},
	} {
		t.Run(tc.path+"#"+tc.id, func(t *testing.T) {
			rec := get(t, c, tc.path)
			found, hidden := false, false
			z := html.NewTokenizer(bytes.NewReader(rec.Body.Bytes()))
			for tt := z.Next(); tt != html.ErrorToken && !found; tt = z.Next() {
				if tt != html.StartTagToken {
					continue
				}
				attrs := map[string]bool{}
				id := ""
				for _, hasAttr := z.TagName(); hasAttr; {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					attrs[string(k)] = true
					if string(k) == "id" {
						id = string(v)
					}
				}
				if id == tc.id {
					found, hidden = true, attrs["hidden"]
				}
			}
			if !found {
				t.Fatalf("%s has no element #%s", tc.path, tc.id)
			}
			if hidden != tc.hidden {
				t.Errorf("#%s hidden=%v, want %v", tc.id, hidden, tc.hidden)
			}
		})
	}
}

// ref is an address a page refers to; load says the browser fetches it to
// show the page.
type ref struct {
	tag, url string
	load     bool
}

// checkHTML fails the test for anything in page that the CSP would block
// or that runs inline, and returns the addresses the page refers to.
func checkHTML(t *testing.T, page []byte) []ref {
	t.Helper()
	var refs []ref
	z := html.NewTokenizer(bytes.NewReader(page))
	inScript := false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				t.Fatalf("page does not parse: %v", z.Err())
			}
			return refs
		case html.TextToken:
			if inScript && strings.TrimSpace(string(z.Text())) != "" {
				t.Errorf("inline script: %.80q", z.Text())
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "script" {
				inScript = false
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			attrs := map[string]string{}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				attrs[string(k)] = string(v)
				if key := string(k); strings.HasPrefix(key, "on") || key == "style" {
					t.Errorf("<%s %s=%q>: an inline handler or style the CSP refuses", tag, key, v)
				}
				if strings.HasPrefix(strings.ToLower(strings.TrimSpace(string(v))), "javascript:") {
					t.Errorf("<%s %s=%q>: a javascript: address", tag, k, v)
				}
			}
			switch tag {
			case "style":
				t.Error("a <style> element: the CSP allows style sheets of this origin only")
			case "script":
				if tt == html.StartTagToken {
					inScript = true
				}
				if attrs["src"] == "" {
					t.Error("a <script> without src")
				}
				refs = append(refs, ref{"script", attrs["src"], true})
			case "link":
				refs = append(refs, ref{attrs["rel"], attrs["href"], true})
			case "img":
				refs = append(refs, ref{"img", attrs["src"], true})
			case "a":
				if h := attrs["href"]; h != "" && !strings.HasPrefix(h, "#") {
					refs = append(refs, ref{"a", h, false})
				}
			case "form":
				if attrs["action"] != "" {
					t.Errorf("<form action=%q>: forms post nowhere (form-action 'none')", attrs["action"])
				}
			case "iframe", "object", "embed", "base":
				t.Errorf("a <%s> element", tag)
			}
		}
	}
}

// TestScriptsUseNoSinks: the scripts build the DOM with createElement and
// textContent only, never from HTML strings, and never evaluate code;
// nothing in the files refers to another origin. (The CSP's Trusted Types
// would refuse an HTML sink at run time; this finds one before.)
func TestScriptsUseNoSinks(t *testing.T) {
	sinks := regexp.MustCompile(`\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\s*\(|new Function|setTimeout\(\s*['"]|setAttribute\(\s*['"](style|on)|srcdoc|importScripts)`)
	external := regexp.MustCompile(`(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|@import|url\(`)
	err := fs.WalkDir(files, "assets", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(files, path)
		if err != nil {
			return err
		}
		text := string(b)
		if strings.HasSuffix(path, ".js") {
			for _, m := range sinks.FindAllString(text, -1) {
				t.Errorf("%s uses %q", path, m)
			}
		}
		for _, m := range external.FindAllString(strings.ReplaceAll(text, "http://www.w3.org/2000/svg", ""), -1) {
			t.Errorf("%s refers to %q, outside this origin", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNotFound: an unknown address, or a page address with an id that
// cannot be one, is the console's own 404 page.
func TestNotFound(t *testing.T) {
	c := newConsole(t, layerGeography{fixtureLayer(t)})
	for _, p := range []string{"/console/nothing", "/console/reports/x", "/console/reports/01a2533b-eac3-717d-a089-73c02dc188eb/more",
		"/console/batches/bat_x", "/console/assets/", "/console/assets/x.js", "/console/geo/counties/123", "/console/geo/counties/99999"} {
		rec := get(t, c, p)
		if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "<h1>Not found</h1>") {
			t.Errorf("GET %s: %d, body %.100q", p, rec.Code, rec.Body.String())
		}
	}
}

// TestCaching: pages and files answer a matching If-None-Match with 304;
// a file asked for without its version must be revalidated.
func TestCaching(t *testing.T) {
	c := newConsole(t, layerGeography{fixtureLayer(t)})
	for _, p := range []string{"/console/", "/console/assets/console.js", "/console/assets/console.js?v=old"} {
		rec := get(t, c, p)
		etag := rec.Header().Get("ETag")
		if rec.Code != http.StatusOK || etag == "" {
			t.Fatalf("GET %s: %d, ETag %q", p, rec.Code, etag)
		}
		if again := get(t, c, p, "If-None-Match", etag); again.Code != http.StatusNotModified || again.Body.Len() != 0 {
			t.Errorf("GET %s with If-None-Match %s: %d, %d bytes", p, etag, again.Code, again.Body.Len())
		}
	}
	if cc := get(t, c, "/console/assets/console.js?v=old").Header().Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("an old version's Cache-Control: %q, want no-cache", cc)
	}
	if cc := get(t, c, "/console/").Header().Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("a page's Cache-Control: %q, want no-cache", cc)
	}
}

// TestCountyMap: the two maps of a county, with the projection that puts
// a point of the county inside the county's drawing.
func TestCountyMap(t *testing.T) {
	l := realLayer(t)
	c := newConsole(t, layerGeography{l})
	for _, tc := range []struct {
		fips     string
		lat, lon float64
	}{
		{"22071", 29.9511, -90.0715},  // Orleans Parish
		{"06075", 37.7749, -122.4194}, // San Francisco
		{"02016", 52.9, 173.2},        // Aleutians West, beyond 180 degrees
		{"51610", 38.8823, -77.1711},  // Falls Church, drawn as a line by the source
	} {
		rec := get(t, c, "/console/geo/counties/"+tc.fips)
		if tc.fips == "51610" {
			if rec.Code != http.StatusOK && rec.Code != http.StatusNotFound {
				t.Errorf("%s: %d", tc.fips, rec.Code)
			}
			continue
		}
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s", tc.fips, rec.Code, rec.Header().Get("Content-Type"))
		}
		var m siteMaps
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m.CountyFIPS != tc.fips || m.State.State == "" || m.State.County == "" || m.County.County == "" || m.County.State != "" {
			t.Errorf("%s: %+v", tc.fips, m)
		}
		for name, sm := range map[string]siteMap{"state": m.State, "county": m.County} {
			p := sm.Proj.xy(geo.Point{Lat: tc.lat, Lon: tc.lon})
			if p.x < 0 || p.y < 0 || p.x > sm.Width || p.y > sm.Height {
				t.Errorf("%s %s map: the site lands at %.1f,%.1f, outside %gx%g", tc.fips, name, p.x, p.y, sm.Width, sm.Height)
			}
			rings := parsePath(t, sm.County)
			if !insideAny(rings, p) && name == "county" && tc.fips != "02016" {
				t.Errorf("%s %s map: the site at %.1f,%.1f is not inside the county's drawing", tc.fips, name, p.x, p.y)
			}
		}
		if n := rec.Body.Len(); n > 40<<10 {
			t.Errorf("%s: %d bytes of map data", tc.fips, n)
		}
	}
}

// parsePath reads the path data pathData writes.
func parsePath(t *testing.T, d string) [][]xy {
	t.Helper()
	var rings [][]xy
	for _, sub := range strings.Split(d, "Z") {
		if sub == "" {
			continue
		}
		var ring []xy
		for _, pt := range regexp.MustCompile(`[ML]`).Split(sub, -1)[1:] {
			var p xy
			if _, err := fmt.Sscan(pt, &p.x, &p.y); err != nil {
				t.Fatalf("path data %q: %v", pt, err)
			}
			ring = append(ring, p)
		}
		rings = append(rings, ring)
	}
	return rings
}

func insideAny(rings [][]xy, p xy) bool {
	in := false
	for _, r := range rings {
		for i, j := 0, len(r)-1; i < len(r); j, i = i, i+1 {
			if (r[i].y > p.y) != (r[j].y > p.y) && p.x < (r[j].x-r[i].x)*(p.y-r[i].y)/(r[j].y-r[i].y)+r[i].x {
				in = !in
			}
		}
	}
	return in
}

// TestUSMap: the real boundaries make the four panels with 53 states
// drawn, small enough for the page's budget; a place's projection, as the
// page's script inverts it, lands in its state's panel box.
func TestUSMap(t *testing.T) {
	m := drawUSMap(layerGeography{realLayer(t)})
	names, states, size := []string{}, 0, 0
	for _, p := range m.Panels {
		names = append(names, p.Name)
		states += len(p.States)
		for _, s := range p.States {
			size += len(s.D)
		}
	}
	if strings.Join(names, ",") != "conus,alaska,hawaii,caribbean" || states != 53 {
		t.Errorf("panels %v with %d states, want conus, alaska, hawaii, caribbean with 53", names, states)
	}
	t.Logf("US map: %d bytes of path data", size)
	if size > 120<<10 {
		t.Errorf("US map: %d bytes of path data", size)
	}
	for _, tc := range []struct {
		panel    string
		lat, lon float64
	}{
		{"conus", 39.0, -98.5}, {"conus", 47.6, -122.3}, {"conus", 25.8, -80.2}, {"conus", 44.8, -68.8},
		{"alaska", 61.2, -149.9}, {"alaska", 52.9, 173.2}, {"hawaii", 21.3, -157.8}, {"caribbean", 18.4, -66.1},
	} {
		var p *mapPanel
		for i := range m.Panels {
			if m.Panels[i].Name == tc.panel {
				p = &m.Panels[i]
			}
		}
		var lat1, lat2, lat0, lon0, k, tx, ty float64
		if _, err := fmt.Sscan(p.Albers, &lat1, &lat2, &lat0, &lon0, &k, &tx, &ty); err != nil {
			t.Fatal(err)
		}
		a := newAlbers(lat1, lat2, lat0, lon0)
		x, y := a.project(geo.Point{Lat: tc.lat, Lon: tc.lon})
		X, Y := tx+k*x, ty-k*y
		if X < p.Box.X || X > p.Box.X+p.Box.W || Y < p.Box.Y || Y > p.Box.Y+p.Box.H {
			t.Errorf("%v,%v lands at %.1f,%.1f, outside the %s box %+v", tc.lat, tc.lon, X, Y, tc.panel, p.Box)
		}
		// The inverse the page's script computes (address.js, fromMap).
		lat, lon := inverseAlbers(a, (X-tx)/k, (ty-Y)/k)
		if math.Abs(lat-tc.lat) > 1e-6 || math.Abs(geo.NormalizeLon(lon-tc.lon)) > 1e-6 {
			t.Errorf("%v,%v comes back as %v,%v", tc.lat, tc.lon, lat, lon)
		}
	}
}

// inverseAlbers is address.js's fromMap, for checking the projection's
// parameters round-trip.
func inverseAlbers(a albers, x, y float64) (lat, lon float64) {
	dy := a.rho0 - y
	rho := math.Copysign(math.Hypot(x, dy), a.n)
	theta := math.Atan2(math.Copysign(1, a.n)*x, math.Copysign(1, a.n)*dy)
	lat = math.Asin((a.c-rho*rho*a.n*a.n)/(2*a.n)) / deg
	return lat, geo.NormalizeLon(a.lon0 + theta/a.n/deg)
}

// TestSimplify: the simplified ring stays within the tolerance of every
// point it drops, and keeps a ring's corners.
func TestSimplify(t *testing.T) {
	var ring []xy
	for i := range 400 {
		a := float64(i) / 400 * 2 * math.Pi
		ring = append(ring, xy{100 + 50*math.Cos(a) + 0.05*math.Sin(37*a), 100 + 50*math.Sin(a)})
	}
	s := simplify(ring, 0.5)
	if len(s) >= len(ring)/4 || len(s) < 8 {
		t.Errorf("a circle of 400 points keeps %d", len(s))
	}
	square := []xy{{0, 0}, {5, 0}, {10, 0}, {10, 5}, {10, 10}, {5, 10}, {0, 10}, {0, 5}}
	if got := simplify(square, 0.1); len(got) != 4 {
		t.Errorf("a square with mid-points simplifies to %v", got)
	}
	if d := pathData([][]xy{{{1, 2}, {3.25, 4}, {5, 6.04}}}); d != "M1 2L3.3 4L5 6Z" && d != "M1 2L3.2 4L5 6Z" {
		t.Errorf("pathData: %q", d)
	}
}

// TestNewNeedsGeography: the console cannot be built without its maps.
func TestNewNeedsGeography(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New without a Geography succeeded")
	}
}
