package risk

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locrisk/locrisk/internal/risk/coverage"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

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

// nriCodesAll lists every NRI hazard code the registry benchmarks against.
func nriCodesAll(specs []ModuleSpec) []string {
	var out []string
	for i := range specs {
		out = append(out, specs[i].nriCodes()...)
	}
	return out
}
