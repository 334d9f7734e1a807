// Package risk is the location-risk engine. Load reads every public data set
// from the data directory once; Engine.Locate decides whether a coordinate is
// covered; Engine.Assess scores a covered point on the registry's hazard
// modules and their perils and returns a complete Assessment.
//
// Every score is a population-weighted percentile: the share of US residents
// (2020 Census tract centres of population) whose own value of the same
// hazard quantity is lower, so a score of 80 means "more hazardous than 80%
// of US residents" (docs/methodology.md). The reference distributions are
// built once per data version and kept in a ReferenceCache. FEMA NRI county
// scores are shown beside each module as an expected-annual-loss benchmark;
// they become the score only where no hazard layer covers the point,
// labelled so and with low confidence. The same input and data always give
// the same output.
//
// Limits: coverage is the 50 states, DC and the five inhabited territories,
// plus 1 km beyond the generalised county boundaries. The engine is
// read-only after Load and safe for concurrent use.
package risk

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/risk/hazard"
	"github.com/locrisk/locrisk/internal/risk/hydrology"
	"github.com/locrisk/locrisk/internal/risk/nri"
	"github.com/locrisk/locrisk/internal/risk/population"
	"github.com/locrisk/locrisk/internal/risk/terrain"
	"github.com/locrisk/locrisk/internal/version"
)

// MethodologyVersion names the scoring method; it changes whenever a formula,
// weight or reference set changes.
const MethodologyVersion = "locrisk-methodology-4.1"

// ErrUnsupportedLocation is returned for coordinates outside US coverage.
var ErrUnsupportedLocation = errors.New("coordinate outside supported United States coverage")

// Engine assesses locations. Create it with Load.
type Engine struct {
	coverage    *coverage.Layer
	nri         *nri.Table
	specs       []ModuleSpec    // the registry, in report order
	modules     []hazard.Module // loaded, in specs order
	ref         *reference
	manifest    *data.Manifest // the pack's: its version and every source's vintage
	dataVersion string
	provenance  Provenance // what every assessment records of its making
	rows        map[string]int
}

// Load reads every data set in the catalog from the data pack fsys (the pack
// embedded in the binary, or a folder through data.DirFS), after checking
// every file against the pack's manifest, and obtains the national
// reference distributions: from cache when it holds them for this data
// version and methodology, else by measuring every census tract (a few
// seconds, logged with progress) and saving them there. cache may be nil.
// It fails with an error naming every missing or changed file, or naming
// the file and line of the first malformed row.
func Load(ctx context.Context, fsys fs.FS, logger *slog.Logger, cache ReferenceCache) (*Engine, error) {
	return load(ctx, fsys, logger, cache, nil)
}

// load is Load; a non-nil trace (tests) forces a fresh build of the
// reference and receives every tract's values.
func load(ctx context.Context, fsys fs.FS, logger *slog.Logger, cache ReferenceCache, trace *referenceTrace) (*Engine, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	// Every file is checked against the manifest before anything is
	// parsed, so a changed file is named as such, not as the parse error
	// it may cause; the data version derives from the manifest.
	pack, err := data.CheckPack(fsys)
	if err != nil {
		return nil, err
	}
	m := pack.Manifest
	e := &Engine{rows: map[string]int{}, specs: Registry(), manifest: m, dataVersion: m.Version(),
		provenance: Provenance{EngineVersion: version.String(), MethodologyVersion: MethodologyVersion,
			DataVersion: m.Version(), DataManifestSHA256: m.Digest()}}
	if trace != nil {
		cache = nil
	}
	// The cached reference (26 MB) is read and decoded while the layers
	// load: it needs only the registry, and a warm start is otherwise
	// the two one after the other (docs/data.md, "Size and start-up").
	cachedRef := e.readCachedReference(ctx, cache)
	tracts, errs := e.loadLayers(ctx, pack)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	useStormClimate(e.modules)
	loaded := time.Since(start)
	cached, err := e.loadReference(ctx, tracts, logger, cache, <-cachedRef, trace)
	if err != nil {
		return nil, err
	}
	// Parsing the files and building the reference leave several times the
	// engine's live size in garbage; hand it back now rather than keep a
	// long-running server's footprint at the start-up peak.
	debug.FreeOSMemory() // runs a collection first
	logger.Info("risk engine loaded", "data_version", e.dataVersion,
		"load_ms", loaded.Milliseconds(), "reference_ms", (time.Since(start) - loaded).Milliseconds(),
		"reference_cached", cached, "reference_tracts", e.ref.tracts, "reference_population", int64(e.ref.population), "reference_unlocated", e.ref.unlocated)
	return e, nil
}

// useStormClimate gives the hydrology module the severe weather module's
// hurricane wind climate for its storm surge indicator, when the severe
// weather module provides one. It runs once, after every module is loaded
// and before anything is measured.
func useStormClimate(modules []hazard.Module) {
	var hydro *hydrology.Module
	var climate hydrology.StormClimate
	for _, m := range modules {
		if h, ok := m.(*hydrology.Module); ok {
			hydro = h
		}
		if c, ok := m.(hydrology.StormClimate); ok && m.Name() == hazard.SevereWeather {
			climate = c
		}
	}
	if hydro != nil && climate != nil {
		hydro.UseStormClimate(climate)
	}
}

// orNil turns a typed nil module pointer into a nil interface on error.
func orNil[M hazard.Module](m M, err error) (hazard.Module, error) {
	if err != nil {
		return nil, err
	}
	return m, nil
}

// loadLayers reads every data layer of fsys (catalog paths) into e and counts their rows
// in e.rows. Every layer is tried, also when another fails, so that `data
// check` can tell the broken layer from the sound ones; the failures come
// back in a fixed order (the one Load reports is the first). Only the
// county boundaries come first: the modules need them.
func (e *Engine) loadLayers(ctx context.Context, fsys fs.FS) ([]coverage.Tract, []error) {
	var err error
	if e.coverage, err = coverage.Load(fsys); err != nil {
		return nil, []error{fmt.Errorf("loading county boundaries: %w", err)}
	}
	for k, v := range e.coverage.Rows() {
		e.rows[k] = v
	}
	env := loadEnv{countyLandKm2: make(map[string]float64), countyPoint: make(map[string]geo.Point)}
	for _, c := range e.coverage.Counties() {
		env.countyLandKm2[c.FIPS] = c.LandAreaKm2
	}
	for _, r := range e.coverage.Reference() {
		env.countyPoint[r.FIPS] = r.Point
	}
	env.countyOf = func(p geo.Point) (string, bool) {
		c, _, ok := e.coverage.Locate(p)
		if !ok {
			return "", false
		}
		return c.FIPS, true
	}
	var popRows int // set by env.population inside a loader, read after runAll
	env.population = sync.OnceValues(func() (*population.Profiles, error) {
		x, err := population.Load(fsys)
		if err != nil {
			return nil, wrapLoad("census block-group centres of population", err)
		}
		popRows = x.Rows()
		return population.BuildProfiles(x, env.countyOf), nil
	})
	env.nri = sync.OnceValues(func() (*nri.Table, error) {
		t, err := nri.Load(fsys)
		return t, wrapLoad("FEMA NRI", err)
	})
	var ground *terrain.Model // set by env.terrain inside a loader, read after runAll
	env.terrain = sync.OnceValues(func() (*terrain.Model, error) {
		m, err := terrain.Load(fsys)
		if err != nil {
			return nil, wrapLoad("terrain grids", err)
		}
		ground = m
		return m, nil
	})

	// The layers are independent once coverage is known; load them side by side.
	loaders := []func() error{
		func() (err error) { e.nri, err = env.nri(); return err },
	}
	e.modules = make([]hazard.Module, len(e.specs))
	for i, spec := range e.specs {
		loaders = append(loaders, func() error {
			m, err := spec.load(fsys, env)
			if err != nil {
				return wrapLoad(spec.Key+" module", err)
			}
			if m.Name() != spec.Key {
				return fmt.Errorf("module %s registered as %s", m.Name(), spec.Key)
			}
			e.modules[i] = m
			return nil
		})
	}
	var tracts []coverage.Tract
	loaders = append(loaders, func() (err error) {
		tracts, err = coverage.ReadTracts(fsys)
		return wrapLoad("census tract centres of population", err)
	})
	errs := runAll(ctx, loaders)
	if e.nri != nil {
		e.rows["fema-nri-v1.20"] = e.nri.Rows()
	}
	if tracts != nil {
		e.rows[coverage.SourceTracts] = len(tracts)
	}
	if popRows > 0 {
		e.rows[population.Source] = popRows
	}
	if ground != nil {
		for k, v := range ground.Rows() {
			e.rows[k] = v
		}
	}
	for _, m := range e.modules {
		if m == nil {
			continue
		}
		for k, v := range m.Rows() {
			e.rows[k] = v
		}
	}
	return tracts, errs
}

func wrapLoad(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("loading %s: %w", what, err)
}

// runAll runs fns concurrently and returns their errors in slice order,
// so the message an operator sees does not depend on scheduling; a
// cancelled ctx is the only error then.
func runAll(ctx context.Context, fns []func() error) []error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return []error{err}
	}
	var out []error
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// vintage is the vintage of a source in the loaded pack, as its manifest
// states it.
func (e *Engine) vintage(source string) string {
	if e.manifest == nil {
		return ""
	}
	return e.manifest.Vintage(source)
}

// DataVersion identifies the data release the engine loaded.
func (e *Engine) DataVersion() string { return e.dataVersion }

// Rows reports how many rows or features were loaded per data source id.
func (e *Engine) Rows() map[string]int {
	out := make(map[string]int, len(e.rows))
	for k, v := range e.rows {
		out[k] = v
	}
	return out
}

func siteFor(p geo.Point, c *coverage.County) hazard.Site {
	return hazard.Site{Lat: p.Lat, Lon: p.Lon, CountyFIPS: c.FIPS, StateFIPS: c.StateFIPS, StateCode: c.StateCode, Conus: c.Conus}
}

// Locate resolves a coordinate to its county, or ErrUnsupportedLocation.
func (e *Engine) Locate(lat, lon float64) (Location, error) {
	c, _, ok := e.coverage.Locate(geo.Point{Lat: lat, Lon: lon})
	if !ok || lat < -90 || lat > 90 || lon < -180 || lon > 180 {
		return Location{}, ErrUnsupportedLocation
	}
	return locationOf(lat, lon, c), nil
}

func locationOf(lat, lon float64, c *coverage.County) Location {
	return Location{Latitude: lat, Longitude: lon, StateCode: c.StateCode, StateName: c.StateName, CountyFIPS: c.FIPS, CountyName: c.Name}
}

// States lists the states and state equivalents of the boundary data,
// sorted by FIPS, for maps of the whole coverage (the web console's,
// docs/console.md).
func (e *Engine) States() []coverage.State { return e.coverage.States() }

// StateOutline returns the rings of one state (2-digit FIPS), nil for an
// unknown one.
func (e *Engine) StateOutline(stateFIPS string) [][]geo.Point {
	return e.coverage.StateOutline(stateFIPS)
}

// Outlines returns the state and county outlines around a located county,
// for the PDF locator map.
func (e *Engine) Outlines(countyFIPS string) (state, county [][]geo.Point) {
	c, ok := e.coverage.County(countyFIPS)
	if !ok {
		return nil, nil
	}
	return e.coverage.StateOutline(c.StateFIPS), e.coverage.CountyOutline(countyFIPS)
}
