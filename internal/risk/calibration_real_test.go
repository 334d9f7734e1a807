package risk

import (
	"context"
	"math"
	"slices"
	"testing"
)

// TestRealScoresAreCalibrated checks the percentile contract the way an
// outside reader checks it: over the reference residents (every 2020 tract
// centre, weighted by its residents), for every module score and overall
// score s that occurs, the share of residents whose own score is below s
// must be s% (docs/methodology.md, "Percentiles"). Scores include the mass
// at 0, modules scored from the NRI benchmark and capped modules.
//
// Every tract's scores are computed from the reference trace with the
// functions Assess uses, so the check runs over all 84,780 tracts without
// sampling error; a population-weighted spread sample of tracts is then
// assessed through the public Assess, which must give each exactly those
// scores.
//
// Tolerance: scores are rounded down, so for a score s the exact share of
// residents below it lies in [s%, (s+1)%): a resident scoring s exceeds at
// least s% and less than (s+1)% would otherwise have scored s+1. Nothing
// else is allowed beyond floating-point slack (1e-9).
func TestRealScoresAreCalibrated(t *testing.T) {
	te := loadRealTraced(t)
	e, trace := te.e, *te.trace
	n := len(trace.weights)
	nm := len(e.specs)
	// scores[i][mi] is tract i's module score (-1 without one); the last
	// column is the overall score.
	scores := make([][]int, n)
	for i := range scores {
		scores[i] = tractScores(e, &trace, i)
	}
	names := make([]string, 0, nm+1)
	for _, s := range e.specs {
		names = append(names, s.Key)
	}
	names = append(names, "overall")
	for col, name := range names {
		checkCalibration(t, name, trace.weights, func(i int) int { return scores[i][col] })
	}
	for mi, spec := range e.specs {
		for pi, p := range spec.Perils {
			checkCalibration(t, spec.Key+"/"+p.Key, trace.weights, func(i int) int {
				if s := e.ref.perilShare(mi, pi, trace.perilVals[i][mi][pi]); !math.IsNaN(s) {
					return scoreOf(s)
				}
				return -1
			})
		}
	}

	// Assess agrees with the scores computed from the trace, at a spread
	// sample drawn in proportion to residents (every step-th resident of
	// the cumulative population).
	samples := 4000
	if testing.Short() || raceEnabled {
		samples = 400
	}
	total := 0.0
	for _, w := range trace.weights {
		total += w
	}
	step, next, cum, checked := total/float64(samples), 0.0, 0.0, 0
	for i, w := range trace.weights {
		cum += w
		if cum < next {
			continue
		}
		for next <= cum {
			next += step
		}
		if !trace.located[i] {
			continue
		}
		a, err := e.Assess(context.Background(), trace.points[i].Lat, trace.points[i].Lon)
		if err != nil {
			t.Fatalf("tract %d at %v: %v", i, trace.points[i], err)
		}
		checked++
		for mi, spec := range e.specs {
			got := -1
			if s, _ := a.Summary.ModuleScores.Get(spec.Key); s != nil {
				got = *s
			}
			if got != scores[i][mi] {
				t.Errorf("tract %d at %v %s: Assess scores %d, the reference %d", i, trace.points[i], spec.Key, got, scores[i][mi])
			}
		}
		if a.Summary.OverallScore != scores[i][nm] {
			t.Errorf("tract %d at %v: overall %d, the reference %d", i, trace.points[i], a.Summary.OverallScore, scores[i][nm])
		}
	}
	t.Logf("%d tracts scored from the reference; %d assessed through Assess", n, checked)
}

// tractScores is tract i's module scores (-1 for none) and overall score,
// from the trace's values through the engine's scoring functions.
func tractScores(e *Engine, tr *referenceTrace, i int) []int {
	nm := len(e.specs)
	out := make([]int, nm+1)
	shares := make([]float64, nm)
	for mi := range e.specs {
		share, _ := e.moduleShare(mi, tr.modVals[i][mi], tr.benchVals[i][mi])
		shares[mi] = share
		out[mi] = -1
		if !math.IsNaN(share) {
			out[mi] = scoreOf(share)
		}
	}
	out[nm] = 0
	if h := overallValue(shares); !math.IsNaN(h) {
		out[nm] = scoreOf(e.ref.overall.below(h))
	}
	return out
}

// checkCalibration checks that for every score s that occurs, the
// population share scoring below s is in [s%, (s+1)%).
func checkCalibration(t *testing.T, name string, weights []float64, score func(int) int) {
	t.Helper()
	byScore := map[int]float64{}
	total := 0.0
	for i, w := range weights {
		if s := score(i); s >= 0 {
			byScore[s] += w
			total += w
		}
	}
	if total == 0 {
		t.Errorf("%s: no resident has a score", name)
		return
	}
	keys := make([]int, 0, len(byScore))
	for s := range byScore {
		keys = append(keys, s)
	}
	slices.Sort(keys)
	below, bad, worst := 0.0, 0, 0.0
	for _, s := range keys {
		share := 100 * below / total
		if share < float64(s)-1e-9 || share >= float64(s+1)+1e-9 {
			bad++
			if d := math.Max(float64(s)-share, share-float64(s+1)); d > worst {
				worst = d
			}
			if bad <= 5 {
				t.Errorf("%s: score %d has %.2f%% of residents below it (want %d to %d)", name, s, share, s, s+1)
			}
		}
		below += byScore[s]
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d scores miscalibrated in all, worst by %.2f points", name, bad, len(keys), worst)
	}
	if bad == 0 {
		t.Logf("%s: %d distinct scores, each with its share of residents below", name, len(keys))
	}
}
