package risk

import (
	"context"
	"maps"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// TestRealPercentileClaim proves on the real reference that every peril,
// module and overall score is the share of US residents (2020 tract
// centres, population-weighted) whose own value is strictly lower, at a
// spread sample of tracts counted against all of them.
func TestRealPercentileClaim(t *testing.T) {
	te := loadRealTraced(t)
	e, trace := te.e, te.trace
	n := 150
	if testing.Short() || raceEnabled {
		n = 30
	}
	checkPercentileClaim(t, e, trace, n)
	if t.Failed() {
		return
	}
	// What the flags and the confidence look like over all residents.
	rates := flagRates(t, e, trace)
	codes := slices.Sorted(maps.Keys(rates))
	for _, code := range codes {
		t.Logf("%s: %.1f%% of residents", code, 100*rates[code])
	}
	if r := rates["county_level_data_only"]; r > 0.7 || r == 0 {
		t.Errorf("county_level_data_only fires for %.1f%% of residents", 100*r)
	}
	if r := rates["benchmark_divergence"]; r > 0.08 || r == 0 {
		t.Errorf("benchmark_divergence fires for %.1f%% of residents, documented about 5%%", 100*r)
	}
}

// flagRates assesses every 40th located tract and returns, per flag code,
// the population share of those tracts it fires for; it also checks that
// benchmark_divergence fires for at most the documented share per module.
func flagRates(t *testing.T, e *Engine, tr *referenceTrace) map[string]float64 {
	t.Helper()
	fired := map[string]float64{}
	divergent := map[string]float64{}
	confidence := map[string]map[string]bool{}
	total := 0.0
	for i := 0; i < len(tr.weights); i += 40 {
		if !tr.located[i] {
			continue
		}
		a, err := e.Assess(context.Background(), tr.points[i].Lat, tr.points[i].Lon)
		if err != nil {
			t.Fatal(err)
		}
		w := tr.weights[i]
		total += w
		seen := map[string]bool{}
		for _, f := range a.Summary.ReviewFlags {
			if !seen[f.Code] {
				fired[f.Code] += w
				seen[f.Code] = true
			}
			// A flag about one module names it; one about the location
			// or several modules names none.
			switch f.Code {
			case "near_county_line", "territory_partial_data", "county_level_data_only", "nri_benchmark_fallback":
				if f.Module != "" {
					t.Errorf("location flag %s names module %q", f.Code, f.Module)
				}
			default:
				if _, ok := ModuleByKey(f.Module); !ok {
					t.Errorf("flag %s (%q) names module %q, not a module key", f.Code, f.Message, f.Module)
				}
			}
			if f.Code == "benchmark_divergence" {
				divergent[strings.SplitN(f.Message, ":", 2)[0]] += w
			}
		}
		highSeen := map[string]bool{}
		for _, r := range a.Summary.Recommendations {
			if r.Priority == "high" && !highSeen[r.Module] {
				fired["high_priority:"+r.Module] += w
				highSeen[r.Module] = true
			}
		}
		if len(highSeen) > 0 {
			fired["high_priority:any"] += w
		}
		if d := a.Summary.OverallDriver; d != "" {
			fired["overall_driver:"+d] += w
		}
		for _, m := range a.Report.Modules {
			if confidence[m.Module] == nil {
				confidence[m.Module] = map[string]bool{}
			}
			confidence[m.Module][formatNumber(m.Value.Confidence.Score)] = true
			fired["confidence:"+m.Module+":"+formatNumber(m.Value.Confidence.Score)] += w
		}
	}
	for k := range fired {
		fired[k] /= total
	}
	for module, w := range divergent {
		// The threshold is the 95th percentile of the gap; the sample and
		// ties at the threshold allow a little more than 5%.
		if share := w / total; share > divergenceShare+0.02 {
			t.Errorf("benchmark_divergence fires for %.1f%% of residents on %s, documented %.0f%%", 100*share, module, 100*divergenceShare)
		}
	}
	// Confidence follows resolution: a county-only module and a grid-based
	// one do not share one value everywhere.
	eq, wf := confidence[hazard.Earthquake], confidence[hazard.Wildfire]
	for c := range eq {
		if wf[c] && len(eq) == 1 && len(wf) == 1 {
			t.Errorf("earthquake and wildfire share the single confidence %s", c)
		}
	}
	return fired
}

// BenchmarkLoad measures start-up both ways in one run: "cold" builds the
// population-weighted reference (the first start after a data change),
// "warm" reads it from the cache, as every later start does. Each reports
// the process's resident memory afterwards ("rss-MB").
func BenchmarkLoad(b *testing.B) {
	dir := datatest.Real(b)
	cache := &memoryCache{}
	for _, mode := range []string{"cold", "warm"} {
		b.Run(mode, func(b *testing.B) {
			var e *Engine
			for b.Loop() {
				c := cache
				if mode == "cold" {
					c = &memoryCache{} // empty: the reference is built
				}
				var err error
				if e, err = Load(context.Background(), dir, nil, c); err != nil {
					b.Fatal(err)
				}
				if mode == "cold" {
					*cache = *c // what the next, warm start finds
				}
			}
			runtime.GC()
			debug.FreeOSMemory()
			if rss := residentMB(); rss > 0 {
				b.ReportMetric(rss, "rss-MB")
			}
			runtime.KeepAlive(e)
		})
	}
}

// memoryCache is a ReferenceCache in memory.
type memoryCache struct {
	key  string
	body []byte
}

func (c *memoryCache) LoadReference(_ context.Context, key string) ([]byte, error) {
	if key != c.key {
		return nil, nil
	}
	return c.body, nil
}

func (c *memoryCache) SaveReference(_ context.Context, key string, body []byte) error {
	c.key, c.body = key, body
	return nil
}

// residentMB reads VmRSS from /proc; 0 where /proc is not available.
func residentMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
