// Package console is locrisk's web console (docs/console.md): pages for
// people, served by `locrisk serve` under Prefix beside the API, from files
// built into the binary. The pages are rendered on the server with
// html/template and hold no account data; small plain scripts fill them in
// by calling the API (/api/v1) from the browser with the API key the user
// pasted, kept in the tab's sessionStorage and sent only as the
// Authorization header. So the console adds no authentication, session or
// permission of its own: what a key may do is what the API lets it do.
//
// Nothing is loaded from elsewhere (no CDN, fonts or map tiles): the maps
// are drawn from the engine's state and county boundaries, projected and
// simplified here. Every answer carries a strict Content-Security-Policy
// (scripts, styles and requests of this origin only, no inline script or
// style, no eval, no framing) and the other headers of headers.go.
package console

import (
	"fmt"
	"log/slog"
	"net/http"
	"regexp"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// Prefix is the path under which the console is served; cmd/locrisk mounts
// it there (server.Mount).
const Prefix = "/console/"

// Geography is the boundary data the maps are drawn from: the engine's
// (*risk.Engine), so that the map shows the coverage the server answers
// for.
type Geography interface {
	// States lists the states and equivalents, sorted by FIPS.
	States() []coverage.State
	// StateOutline is a state's rings in lon/lat, nil for an unknown one.
	StateOutline(stateFIPS string) [][]geo.Point
	// Outlines are the rings of a county and of its state, nil for an
	// unknown county.
	Outlines(countyFIPS string) (state, county [][]geo.Point)
}

// Config is what the console is built from.
type Config struct {
	Geography Geography
	// Version is the binary's version, shown in the page footer.
	Version string
	// Logger receives what goes wrong while serving; nil discards.
	Logger *slog.Logger
}

// Console serves the console's pages, scripts, styles and map data. It is
// read-only once built and safe for concurrent use.
type Console struct {
	log     *slog.Logger
	version string
	geo     Geography
	assets  *assetSet
	pages   *pageSet
	usMap   usMap
	mux     *http.ServeMux
}

// New builds the console: parses its templates, hashes its files and
// draws the map of the United States from cfg.Geography.
func New(cfg Config) (*Console, error) {
	if cfg.Geography == nil {
		return nil, fmt.Errorf("console: no geography to draw maps from")
	}
	c := &Console{log: cfg.Logger, version: cfg.Version, geo: cfg.Geography}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if c.assets, err = loadAssets(); err != nil {
		return nil, err
	}
	if c.pages, err = loadPages(c.assets); err != nil {
		return nil, err
	}
	c.usMap = drawUSMap(cfg.Geography)
	c.mux = http.NewServeMux()
	c.mux.HandleFunc("GET "+Prefix+"{$}", c.page(pageAddress))
	c.mux.HandleFunc("GET "+Prefix+"signin", c.page(pageSignIn))
	c.mux.HandleFunc("GET "+Prefix+"reports/{reportId}", c.page(pageReport))
	c.mux.HandleFunc("GET "+Prefix+"portfolio", c.page(pagePortfolio))
	c.mux.HandleFunc("GET "+Prefix+"batches/{batchId}", c.page(pageBatch))
	c.mux.HandleFunc("GET "+Prefix+"operations", c.page(pageOperations))
	c.mux.HandleFunc("GET "+Prefix+"assets/{name}", c.serveAsset)
	c.mux.HandleFunc("GET "+Prefix+"geo/counties/{fips}", c.serveCountyMap)
	c.mux.HandleFunc(Prefix, c.notFound)
	return c, nil
}

// ServeHTTP answers a request under Prefix. Every answer, a 404 included,
// carries the console's security headers.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	c.mux.ServeHTTP(w, r)
}

// Ids in page paths are checked for their form only; whether the report or
// batch exists, and is the key's, the page learns from the API. A path
// that cannot hold one is the console's 404.
var (
	reportIDForm = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	batchIDForm  = regexp.MustCompile(`^bat_[0-9A-Za-z]{20,64}$`)
	fipsForm     = regexp.MustCompile(`^[0-9]{5}$`)
)
