package risk

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// ReferenceCache keeps the reference distributions between runs, keyed by
// data version and methodology, so only the first start after a data change
// pays for measuring every census tract. The store implements it.
type ReferenceCache interface {
	// LoadReference returns the body saved under key, or nil when none is.
	LoadReference(ctx context.Context, key string) ([]byte, error)
	// SaveReference saves body under key, replacing other keys.
	SaveReference(ctx context.Context, key string, body []byte) error
}

// referenceFormat changes whenever the cached encoding changes.
const referenceFormat = 3

// referenceKey names the cached reference for a data version and a build
// of the engine: the methodology version says what the scores mean, the
// build fingerprint catches any change to the code that computes them, so
// a new binary builds its reference once rather than trust one it did not
// make.
func referenceKey(dataVersion, build string) string {
	return fmt.Sprintf("%s/%s/format-%d/%s", dataVersion, MethodologyVersion, referenceFormat, build)
}

// buildFingerprint identifies the running executable by the SHA-256 of its
// file (about 50 ms to read); "unknown" where it cannot be read.
func buildFingerprint() string {
	path, err := os.Executable()
	if err != nil {
		return "build-unknown"
	}
	f, err := os.Open(path)
	if err != nil {
		return "build-unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "build-unknown"
	}
	return "build-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// tractRecord is one tract's measurement, reduced to what scoring needs.
type tractRecord struct {
	point   geo.Point
	located bool
	fips    string  // county the tract centre located in
	weight  float64 // residents
	obs     [][]obs // [module]
}

// referenceTrace keeps every tract's values along the scoring chain, for the
// tests that prove each score is the percentile it claims.
type referenceTrace struct {
	points    []geo.Point
	located   []bool        // the tract centre is inside a county polygon (Assess can score it)
	weights   []float64     // residents
	perilVals [][][]float64 // [tract][module][peril]
	modVals   [][]float64   // [tract][module]
	benchVals [][]float64   // [tract][module]
	overall   []float64     // [tract]
}

// buildReference measures every module at every census tract centre of
// population and builds the population-weighted distributions, pass by pass
// along the scoring chain, with the same functions Assess uses. A non-nil
// trace receives every tract's values.
func (e *Engine) buildReference(ctx context.Context, tracts []coverage.Tract, logger *slog.Logger, trace *referenceTrace) (*reference, error) {
	ref := &reference{indicators: map[indKey]*distribution{}, nri: map[string]*distribution{}}
	recs := make([]tractRecord, len(tracts))
	var unlocated atomic.Int64
	var done atomic.Int64
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() { // progress, about every 2 seconds
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				logger.Info("building population-weighted reference", "tracts_done", done.Load(), "tracts", len(tracts))
			}
		}
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var buf []obs
			for i := w; i < len(tracts); i += workers {
				if i%1024 == 0 && ctx.Err() != nil {
					return
				}
				tr := tracts[i]
				located := true
				c, _, ok := e.coverage.Locate(tr.Point)
				if !ok {
					// A centre of population just off a generalised
					// shoreline: the tract's own county stands in.
					if c, ok = e.coverage.County(tr.CountyFIPS); !ok {
						continue
					}
					located = false
					unlocated.Add(1)
				}
				site := siteFor(tr.Point, c)
				rec := tractRecord{point: tr.Point, located: located, fips: c.FIPS, weight: tr.Population, obs: make([][]obs, len(e.modules))}
				for mi, m := range e.modules {
					meas := m.Measure(site)
					buf = observations(&e.specs[mi], &meas, buf)
					rec.obs[mi] = append([]obs(nil), buf...)
				}
				recs[i] = rec
				done.Add(1)
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	kept := recs[:0]
	for _, r := range recs {
		if r.obs != nil {
			kept = append(kept, r)
			ref.population += r.weight
		}
	}
	recs = kept
	ref.tracts, ref.unlocated = len(recs), int(unlocated.Load())
	if len(recs) == 0 {
		return nil, errors.New("reference set is empty: no census tract centre lies in a covered county")
	}

	// Pass 1: indicator distributions.
	indObs := map[indKey][]weighted{}
	for _, r := range recs {
		for mi, os := range r.obs {
			for _, o := range os {
				k := indKey{mi, o.id}
				indObs[k] = append(indObs[k], weighted{o.value, r.weight})
			}
		}
	}
	for k, v := range indObs {
		ref.indicators[k] = newDistribution(v)
	}
	indObs = nil

	// Pass 2: peril values, then peril distributions.
	nm := len(e.specs)
	perilVals := make([][][]float64, len(recs)) // [tract][module][peril]
	perilObs := make([][][]weighted, nm)
	for mi := range e.specs {
		perilObs[mi] = make([][]weighted, len(e.specs[mi].Perils))
	}
	var shares []float64
	var prs []perilResult
	for ti, r := range recs {
		perilVals[ti] = make([][]float64, nm)
		for mi, os := range r.obs {
			shares = ref.indicatorShares(mi, os, shares)
			prs = perilValues(len(e.specs[mi].Perils), os, shares, prs)
			vals := make([]float64, len(prs))
			for pi, p := range prs {
				vals[pi] = p.value
				perilObs[mi][pi] = append(perilObs[mi][pi], weighted{p.value, r.weight})
			}
			perilVals[ti][mi] = vals
		}
	}
	ref.perils = make([][]*distribution, nm)
	for mi := range perilObs {
		ref.perils[mi] = make([]*distribution, len(perilObs[mi]))
		for pi, o := range perilObs[mi] {
			ref.perils[mi][pi] = newDistribution(o)
		}
	}
	perilObs = nil

	// Pass 3: module values and the NRI benchmarks.
	modVals := make([][]float64, len(recs)) // [tract][module]
	modObs := make([][]weighted, nm)
	for _, code := range nriCodesAll(e.specs) {
		var o []weighted
		for _, r := range recs {
			if s := e.nri.Hazard(r.fips, code); benchmarkScore(s) {
				o = append(o, weighted{s.Score, r.weight})
			}
		}
		ref.nri[code] = newDistribution(o)
	}
	benchVals := make([][]float64, len(recs))
	benchObs := make([][]weighted, nm)
	for ti, r := range recs {
		modVals[ti] = make([]float64, nm)
		benchVals[ti] = make([]float64, nm)
		for mi := range e.specs {
			prs = prs[:0]
			for pi, v := range perilVals[ti][mi] {
				prs = append(prs, perilResult{value: v, share: ref.perilShare(mi, pi, v)})
			}
			v, _ := moduleValue(prs)
			modVals[ti][mi] = v
			modObs[mi] = append(modObs[mi], weighted{v, r.weight})
			b := ref.benchValue(e.nri, &e.specs[mi], r.fips)
			benchVals[ti][mi] = b
			benchObs[mi] = append(benchObs[mi], weighted{b, r.weight})
		}
	}
	ref.modules = make([]*distribution, nm)
	ref.bench = make([]*distribution, nm)
	for mi := range e.specs {
		ref.modules[mi] = newDistribution(modObs[mi])
		ref.bench[mi] = newDistribution(benchObs[mi])
	}

	// Pass 4: every resident's module share on its own basis, ranked once
	// more among all residents with a module score.
	scoredObs := make([][]weighted, nm)
	for ti, r := range recs {
		for mi := range e.specs {
			pre, _ := e.moduleRankOf(ref, mi, modVals[ti][mi], benchVals[ti][mi])
			scoredObs[mi] = append(scoredObs[mi], weighted{pre, r.weight})
		}
	}
	ref.scored = make([]*distribution, nm)
	for mi := range e.specs {
		ref.scored[mi] = newDistribution(scoredObs[mi])
	}
	scoredObs = nil

	// Pass 5: the overall index and the benchmark divergence thresholds.
	var overallObs []weighted
	gapObs := make([][]weighted, nm)
	modShares := make([]float64, nm)
	for ti, r := range recs {
		for mi := range e.specs {
			share, basis := e.moduleShareOf(ref, mi, modVals[ti][mi], benchVals[ti][mi])
			modShares[mi] = share
			if basis == basisHazard && !math.IsNaN(benchVals[ti][mi]) {
				gap := math.Abs(float64(scoreOf(share) - scoreOf(ref.bench[mi].below(benchVals[ti][mi]))))
				gapObs[mi] = append(gapObs[mi], weighted{gap, r.weight})
			}
		}
		h := overallValue(modShares)
		overallObs = append(overallObs, weighted{h, r.weight})
		if trace != nil {
			trace.points = append(trace.points, r.point)
			trace.located = append(trace.located, r.located)
			trace.weights = append(trace.weights, r.weight)
			trace.overall = append(trace.overall, h)
		}
	}
	if trace != nil {
		trace.perilVals, trace.modVals, trace.benchVals = perilVals, modVals, benchVals
	}
	ref.overall = newDistribution(overallObs)
	ref.divergence = make([]float64, nm)
	for mi := range e.specs {
		ref.divergence[mi] = math.Inf(1)
		if d := newDistribution(gapObs[mi]); !d.empty() {
			ref.divergence[mi] = d.quantile(1 - divergenceShare)
		}
	}
	ref.share()
	return ref, nil
}

// share makes equal distributions of r one, in memory and in the cache:
// environmental exposure, with a single peril and no NRI fallback, ranks
// the same values for its peril, its module and its scored residents.
// Distributions are read-only once built.
func (r *reference) share() {
	var pool distributionPool
	for k, d := range r.indicators {
		r.indicators[k] = pool.intern(d)
	}
	for k, d := range r.nri {
		r.nri[k] = pool.intern(d)
	}
	for mi := range r.perils {
		for pi, d := range r.perils[mi] {
			r.perils[mi][pi] = pool.intern(d)
		}
	}
	for _, ds := range [][]*distribution{r.modules, r.scored, r.bench} {
		for i, d := range ds {
			ds[i] = pool.intern(d)
		}
	}
	r.overall = pool.intern(r.overall)
}

// distributionPool finds equal distributions: the same values and shares,
// bit for bit.
type distributionPool struct {
	byKey map[distributionKey][]*distribution
	all   []*distribution // in the order first seen
}

type distributionKey struct {
	n           int
	first, last uint64 // bits of the first value and of the last share
}

// intern returns the pool's distribution equal to d, adding d when it has
// none; nil stays nil.
func (p *distributionPool) intern(d *distribution) *distribution {
	_, got := p.index(d)
	return got
}

// index is intern with the distribution's place in p.all.
func (p *distributionPool) index(d *distribution) (int, *distribution) {
	if d == nil {
		return -1, nil
	}
	k := distributionKey{n: len(d.Values)}
	if k.n > 0 && len(d.Below) > 0 {
		k.first, k.last = math.Float64bits(d.Values[0]), math.Float64bits(d.Below[len(d.Below)-1])
	}
	if p.byKey == nil {
		p.byKey = map[distributionKey][]*distribution{}
	}
	for _, c := range p.byKey[k] {
		if c == d || (bitsEqual(c.Values, d.Values) && bitsEqual(c.Below, d.Below)) {
			return slices.Index(p.all, c), c
		}
	}
	p.byKey[k] = append(p.byKey[k], d)
	p.all = append(p.all, d)
	return len(p.all) - 1, d
}

func bitsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// nriCodesAll lists every NRI hazard code the registry benchmarks against.
func nriCodesAll(specs []ModuleSpec) []string {
	var out []string
	for i := range specs {
		out = append(out, specs[i].nriCodes()...)
	}
	return out
}

// indicatorShares ranks each observation among residents; NaN where the
// reference has no such indicator.
func (r *reference) indicatorShares(module int, os []obs, out []float64) []float64 {
	out = out[:0]
	for _, o := range os {
		d := r.indicators[indKey{module, o.id}]
		if d.empty() {
			out = append(out, math.NaN())
			continue
		}
		out = append(out, d.below(o.value))
	}
	return out
}

func (r *reference) perilShare(module, peril int, v float64) float64 {
	d := r.perils[module][peril]
	if math.IsNaN(v) || d.empty() {
		return math.NaN()
	}
	return d.below(v)
}

// Module bases: scored from the module's hazard data, from the NRI county
// benchmark because no layer covers the site, or not at all.
const (
	basisHazard   = "hazard_data"
	basisFallback = "nri_fallback"
	basisNone     = "no_data"
)

// moduleShare ranks a module's hazard value, or where it has none its NRI
// benchmark value, among residents.
func (r *reference) moduleShare(module int, value, bench float64) (float64, string) {
	switch {
	case !math.IsNaN(value) && !r.modules[module].empty():
		return r.modules[module].below(value), basisHazard
	case !math.IsNaN(bench) && !r.bench[module].empty():
		b := r.bench[module].below(bench)
		if d := r.modules[module]; !d.empty() {
			// On the hazard data's scale: the rank a resident measured
			// with hazard data has at the same quantile. Where many
			// residents tie at the hazard's minimum (four in five on
			// landslide terrain), a county benchmark below that quantile
			// ties with them rather than ranking above them all.
			return d.below(d.quantile(b)), basisFallback
		}
		return b, basisFallback
	}
	return math.NaN(), basisNone
}

// moduleShare is a module's share as Assess and the reference's overall
// index use it: its score is scoreOf(share).
func (e *Engine) moduleShare(mi int, value, bench float64) (float64, string) {
	return e.moduleShareOf(e.ref, mi, value, bench)
}

// moduleRankOf is a module's share on its own basis: its hazard value
// ranked among residents with a hazard value, or its NRI benchmark ranked
// among residents with one. Shares on the two bases rank different populations,
// so moduleShareOf ranks this rank once more among all scored residents.
func (e *Engine) moduleRankOf(ref *reference, mi int, value, bench float64) (float64, string) {
	return ref.moduleShare(mi, value, bench)
}

// moduleShareOf is the population share of residents with a module score
// whose own module rank (moduleRankOf) is lower than the site's: the share
// the module score states, the mass at the minimum and residents scored
// from the NRI benchmark included. Ranking a rank keeps the order of each
// basis.
func (e *Engine) moduleShareOf(ref *reference, mi int, value, bench float64) (float64, string) {
	share, basis := e.moduleRankOf(ref, mi, value, bench)
	if math.IsNaN(share) || ref.scored == nil || ref.scored[mi].empty() {
		return share, basis // while the reference is being built
	}
	return ref.scored[mi].below(share), basis
}

// referenceFile is the cached form of a reference.
type referenceFile struct {
	Format     int
	Names      []string
	Index      []int // Names[i] is Dists[Index[i]]: equal distributions are kept once
	Dists      []distribution
	Divergence []float64
	Tracts     int
	Population float64
	Unlocated  int
}

func (e *Engine) encodeReference(r *reference) ([]byte, error) {
	f := referenceFile{Format: referenceFormat, Divergence: r.divergence, Tracts: r.tracts, Population: r.population, Unlocated: r.unlocated}
	var pool distributionPool
	add := func(name string, d *distribution) {
		i, _ := pool.index(d)
		if i == len(f.Dists) {
			f.Dists = append(f.Dists, *d)
		}
		f.Names = append(f.Names, name)
		f.Index = append(f.Index, i)
	}
	for k, d := range r.indicators {
		add("ind/"+e.specs[k.module].Key+"/"+k.id, d)
	}
	for mi, spec := range e.specs {
		for pi, p := range spec.Perils {
			add("peril/"+spec.Key+"/"+p.Key, r.perils[mi][pi])
		}
		add("module/"+spec.Key, r.modules[mi])
		add("bench/"+spec.Key, r.bench[mi])
		add("scored/"+spec.Key, r.scored[mi])
	}
	for code, d := range r.nri {
		add("nri/"+code, d)
	}
	add("overall", r.overall)
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&f); err != nil {
		return nil, fmt.Errorf("encoding the reference: %w", err)
	}
	return b.Bytes(), nil
}

func (e *Engine) decodeReference(body []byte) (*reference, error) {
	var f referenceFile
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&f); err != nil {
		return nil, fmt.Errorf("decoding the cached reference: %w", err)
	}
	if f.Format != referenceFormat || len(f.Names) != len(f.Index) || len(f.Divergence) != len(e.specs) {
		return nil, errors.New("the cached reference has another format")
	}
	r := &reference{
		indicators: map[indKey]*distribution{}, nri: map[string]*distribution{},
		perils: make([][]*distribution, len(e.specs)), modules: make([]*distribution, len(e.specs)),
		bench: make([]*distribution, len(e.specs)), scored: make([]*distribution, len(e.specs)), divergence: f.Divergence,
		tracts: f.Tracts, population: f.Population, unlocated: f.Unlocated,
	}
	moduleIndex := map[string]int{}
	for mi, spec := range e.specs {
		moduleIndex[spec.Key] = mi
		r.perils[mi] = make([]*distribution, len(spec.Perils))
	}
	for i, name := range f.Names {
		if f.Index[i] < 0 || f.Index[i] >= len(f.Dists) {
			return nil, fmt.Errorf("cached distribution %s is missing", name)
		}
		d := &f.Dists[f.Index[i]]
		if len(d.Values) != len(d.Below) {
			return nil, fmt.Errorf("cached distribution %s is inconsistent", name)
		}
		parts := strings.Split(name, "/")
		mi, known := 0, false
		if len(parts) >= 2 {
			mi, known = moduleIndex[parts[1]]
		}
		switch {
		case parts[0] == "overall" && len(parts) == 1:
			r.overall = d
		case parts[0] == "nri" && len(parts) == 2:
			r.nri[parts[1]] = d
		case parts[0] == "ind" && len(parts) == 3 && known:
			r.indicators[indKey{mi, parts[2]}] = d
		case parts[0] == "module" && len(parts) == 2 && known:
			r.modules[mi] = d
		case parts[0] == "bench" && len(parts) == 2 && known:
			r.bench[mi] = d
		case parts[0] == "scored" && len(parts) == 2 && known:
			r.scored[mi] = d
		case parts[0] == "peril" && len(parts) == 3 && known && perilIndex(&e.specs[mi], parts[2]) >= 0:
			r.perils[mi][perilIndex(&e.specs[mi], parts[2])] = d
		default:
			return nil, fmt.Errorf("cached reference has an unknown distribution %q", name)
		}
	}
	if r.overall == nil {
		return nil, errors.New("cached reference lacks the overall distribution")
	}
	for mi := range e.specs {
		if r.modules[mi] == nil || r.bench[mi] == nil || r.scored[mi] == nil {
			return nil, errors.New("cached reference lacks a module distribution")
		}
		for pi := range r.perils[mi] {
			if r.perils[mi][pi] == nil {
				return nil, errors.New("cached reference lacks a peril distribution")
			}
		}
	}
	return r, nil
}
