// Package risk is the location-risk engine. Load reads every public data set
// from the data directory once; Engine.Locate decides whether a coordinate is
// covered; Engine.Assess scores a covered point on six hazard modules and
// returns a complete Assessment.
//
// A module score is the national percentile of the module's hazard
// indicators against a fixed reference set: the Census Gazetteer county
// interior points (about 3,200 places). A score of 80 means the site is more
// hazardous than 80% of those places. FEMA NRI county scores are shown beside
// each module as an expected-annual-loss benchmark; they become the score
// only where no hazard layer covers the point, labelled so and with low
// confidence. The same input and data always give the same output.
//
// Limits: coverage is the 50 states, DC and the five inhabited territories,
// plus 1 km beyond the generalised county boundaries. The engine is
// read-only after Load and safe for concurrent use.
package risk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"locrisk/risk/coverage"
	"locrisk/risk/data"
	"locrisk/risk/earthquake"
	"locrisk/risk/environment"
	"locrisk/risk/geo"
	"locrisk/risk/hazard"
	"locrisk/risk/hydrology"
	"locrisk/risk/landslide"
	"locrisk/risk/nri"
	"locrisk/risk/severeweather"
	"locrisk/risk/wildfire"
)

// MethodologyVersion names the scoring method; it changes whenever a formula,
// weight or reference set changes.
const MethodologyVersion = "locrisk-methodology-1.0"

// ErrUnsupportedLocation is returned for coordinates outside US coverage.
var ErrUnsupportedLocation = errors.New("coordinate outside supported United States coverage")

// Engine assesses locations. Create it with Load.
type Engine struct {
	coverage    *coverage.Layer
	nri         *nri.Table
	modules     []hazard.Module // in hazard.Modules order
	reference   map[string][]float64
	dataVersion string
	rows        map[string]int
}

// Load reads every data set in the catalog from dir and builds the national
// reference distributions. It fails with an error naming every missing file
// (and where its publisher offers it), or naming the file and line of the
// first malformed row.
func Load(ctx context.Context, dir string, logger *slog.Logger) (*Engine, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	missing, err := data.Missing(dir)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, data.MissingError(dir, missing)
	}
	e := &Engine{rows: map[string]int{}}
	if e.coverage, err = coverage.Load(dir); err != nil {
		return nil, fmt.Errorf("loading county boundaries: %w", err)
	}
	areas := make(map[string]float64)
	for _, c := range e.coverage.Counties() {
		areas[c.FIPS] = c.LandAreaKm2
	}

	// The layers are independent once coverage is known; load them side by side.
	loaders := []func() error{
		func() (err error) { e.nri, err = nri.Load(dir); return wrapLoad("FEMA NRI", err) },
	}
	e.modules = make([]hazard.Module, len(hazard.Modules))
	moduleLoaders := map[string]func() (hazard.Module, error){
		hazard.Hydrology:             func() (hazard.Module, error) { return orNil(hydrology.Load(dir)) },
		hazard.SevereWeather:         func() (hazard.Module, error) { return orNil(severeweather.Load(dir, areas)) },
		hazard.Wildfire:              func() (hazard.Module, error) { return orNil(wildfire.Load(dir)) },
		hazard.Earthquake:            func() (hazard.Module, error) { return orNil(earthquake.Load(dir)) },
		hazard.Landslide:             func() (hazard.Module, error) { return orNil(landslide.Load(dir)) },
		hazard.EnvironmentalExposure: func() (hazard.Module, error) { return orNil(environment.Load(dir)) },
	}
	for i, name := range hazard.Modules {
		load := moduleLoaders[name]
		loaders = append(loaders, func() error {
			m, err := load()
			if err != nil {
				return wrapLoad(name+" module", err)
			}
			e.modules[i] = m
			return nil
		})
	}
	if err := runAll(ctx, loaders); err != nil {
		return nil, err
	}
	for k, v := range e.coverage.Rows() {
		e.rows[k] = v
	}
	e.rows["fema-nri-v1.20"] = e.nri.Rows()
	for _, m := range e.modules {
		for k, v := range m.Rows() {
			e.rows[k] = v
		}
	}
	loaded := time.Since(start)
	if err := e.buildReference(ctx); err != nil {
		return nil, err
	}
	e.dataVersion = dataVersion(dir)
	logger.Info("risk engine loaded", "data_dir", dir, "data_version", e.dataVersion,
		"load_ms", loaded.Milliseconds(), "reference_ms", (time.Since(start) - loaded).Milliseconds(),
		"reference_points", len(e.coverage.Reference()))
	return e, nil
}

// orNil turns a typed nil module pointer into a nil interface on error.
func orNil[M hazard.Module](m M, err error) (hazard.Module, error) {
	if err != nil {
		return nil, err
	}
	return m, nil
}

func wrapLoad(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("loading %s: %w", what, err)
}

// runAll runs fns concurrently and returns the first error in slice order,
// so the message an operator sees does not depend on scheduling.
func runAll(ctx context.Context, fns []func() error) error {
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
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// refKey names one ranked indicator's reference distribution.
func refKey(module, indicator string) string { return module + "/" + indicator }

// buildReference measures every module at every reference point and keeps
// the sorted values of each ranked indicator.
func (e *Engine) buildReference(ctx context.Context) error {
	refs := e.coverage.Reference()
	if len(refs) == 0 {
		return errors.New("reference set is empty: the Gazetteer file has no county points inside the boundaries")
	}
	workers := runtime.GOMAXPROCS(0)
	parts := make([]map[string][]float64, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		parts[w] = map[string][]float64{}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(refs); i += workers {
				c, ok := e.coverage.County(refs[i].FIPS)
				if !ok {
					continue
				}
				site := siteFor(refs[i].Point, c)
				for _, m := range e.modules {
					for _, in := range m.Measure(site).Indicators {
						if in.Ranked {
							k := refKey(m.Name(), in.ID)
							parts[w][k] = append(parts[w][k], in.Value)
						}
					}
				}
			}
		}(w)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	e.reference = map[string][]float64{}
	for _, p := range parts {
		for k, v := range p {
			e.reference[k] = append(e.reference[k], v...)
		}
	}
	for _, v := range e.reference {
		sort.Float64s(v)
	}
	return nil
}

// percentile is the share (0..100) of reference places whose value is
// strictly below v: "more hazardous than X% of US places". Ties do not count
// as exceeded, so a value of zero shared by most places ranks at 0.
func percentile(sorted []float64, v float64) (float64, bool) {
	if len(sorted) == 0 {
		return 0, false
	}
	below := sort.SearchFloat64s(sorted, v)
	return float64(below) * 100 / float64(len(sorted)), true
}

// dataVersion fingerprints the data files by name and size, so a report says
// which data release produced it without hashing 30 MB at every start.
func dataVersion(dir string) string {
	h := sha256.New()
	for _, s := range data.Catalog() {
		path := filepath.Join(dir, filepath.FromSlash(s.Path))
		st, err := os.Stat(path)
		if err != nil {
			st, err = os.Stat(strings.TrimSuffix(path, ".gz"))
		}
		size := int64(-1)
		if err == nil {
			size = st.Size()
		}
		fmt.Fprintf(h, "%s %d\n", s.Path, size)
	}
	return "data-" + hex.EncodeToString(h.Sum(nil))[:12]
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
	return Location{Latitude: lat, Longitude: lon, StateCode: c.StateCode, StateName: c.StateName, CountyFips: c.FIPS, CountyName: c.Name}
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
