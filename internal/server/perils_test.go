package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/jobs"
	"github.com/locrisk/locrisk/internal/risk"
)

// fixtureData is the hand-written data set the engine loads in tests.
const fixtureData = "../../testdata/data"

// resolutionKinds are the indicator resolutions the report may carry
// (internal/risk/hazard).
var resolutionKinds = []string{"site", "grid", "place_table", "county_allocated", "reported_events", "county"}

// completeWith runs the scheduler's side for a queued job with a given
// assessment and returns the report id.
func (e *env) completeWith(jobID string, assess func(lat, lon float64) *risk.Assessment) string {
	e.t.Helper()
	j := e.claim(jobID)
	rep, err := jobs.ReportOf(assess(j.Latitude, j.Longitude))
	if err != nil {
		e.t.Fatal(err)
	}
	rep.DataVersion = "dv-test"
	done, err := e.st.CompleteJob(context.Background(), jobID, "test-worker", rep, e.clock.Now())
	if err != nil {
		e.t.Fatalf("complete job: %v", err)
	}
	return *done.ReportID
}

// objectKeys returns a JSON object's keys in document order.
func objectKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var b risk.ByModule[json.RawMessage]
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, raw)
	}
	keys := make([]string, len(b))
	for i, e := range b {
		keys[i] = e.Module
	}
	return keys
}

// checkPerils checks one module's perils as served: exactly the registry's
// perils in order, every field present, and a peril without a score null
// throughout (never a 0).
func checkPerils(t *testing.T, where, module string, raw json.RawMessage) {
	t.Helper()
	spec, ok := risk.ModuleByKey(module)
	if !ok {
		t.Fatalf("%s: unknown module %q", where, module)
	}
	var perils []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &perils); err != nil || perils == nil {
		t.Fatalf("%s.%s: perils is not an array: %v: %s", where, module, err, raw)
	}
	var got, want []string
	for _, p := range spec.Perils {
		want = append(want, p.Key)
	}
	for _, p := range perils {
		var key string
		_ = json.Unmarshal(p["peril"], &key)
		got = append(got, key)
		for _, f := range []string{"peril", "title", "score", "riskLevel", "confidence", "annualProbability", "returnPeriodYears"} {
			if _, ok := p[f]; !ok {
				t.Errorf("%s.%s.%s lacks %q: %v", where, module, key, f, p)
			}
		}
		var score *int
		if err := json.Unmarshal(p["score"], &score); err != nil {
			t.Errorf("%s.%s.%s: score %s is not an integer or null", where, module, key, p["score"])
			continue
		}
		var res string
		_ = json.Unmarshal(p["resolution"], &res)
		if score == nil {
			for _, f := range []string{"riskLevel", "confidence", "annualProbability", "returnPeriodYears"} {
				if string(p[f]) != "null" {
					t.Errorf("%s.%s.%s: no score but %s = %s", where, module, key, f, p[f])
				}
			}
			continue
		}
		if *score < 0 || *score > 100 {
			t.Errorf("%s.%s.%s: score %d outside 0..100", where, module, key, *score)
		}
		if lvl := string(p["riskLevel"]); lvl != fmt.Sprintf("%q", risk.RiskLevel(*score)) {
			t.Errorf("%s.%s.%s: score %d with riskLevel %s", where, module, key, *score, lvl)
		}
		if res == "" || (!slices.Contains(resolutionKinds, res) && res != "mixed") {
			t.Errorf("%s.%s.%s: scored peril with resolution %q", where, module, key, res)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s.%s perils %v, want %v", where, module, got, want)
	}
}

// A report made by the real engine (on the fixtures) carries, through the
// API, summary.perils and report.modules.*.perils for every module key in
// registry order, and every indicator carries its resolution.
func TestReportPerils(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	ctx := context.Background()
	cache := &savedReferences{ReferenceCache: e.st}
	eng, err := risk.Load(ctx, os.DirFS(fixtureData), nil, cache)
	if err != nil {
		t.Fatalf("loading the fixture engine: %v", err)
	}
	assess := func(lat, lon float64) *risk.Assessment {
		a, err := eng.Assess(ctx, lat, lon)
		if err != nil {
			t.Fatalf("assess %v,%v: %v", lat, lon, err)
		}
		return a
	}
	moduleKeys := risk.ModuleKeys()
	if !slices.Equal(moduleKeys, contractModules[:]) {
		t.Fatalf("registry modules %v, want exactly the contract's %v", moduleKeys, contractModules)
	}
	for _, p := range []struct {
		name     string
		lat, lon float64
	}{{"San Francisco", 37.77, -122.42}, {"Chicago", 41.88, -87.63}, {"Miami", 25.76, -80.19}} {
		t.Run(p.name, func(t *testing.T) {
			id := e.completeWith(e.createJob(key, p.lat, p.lon).JobID, assess)
			var perilsSeen, scored int
			for _, detail := range []string{"summary", "full"} {
				rec := e.do("GET", reportsPath+id+"?detail="+detail, key, "")
				if rec.Code != 200 {
					t.Fatalf("%s: status %d %s", detail, rec.Code, rec.Body)
				}
				var v struct {
					Summary struct {
						ModuleScores json.RawMessage `json:"moduleScores"`
						Perils       json.RawMessage `json:"perils"`
					} `json:"summary"`
					Report *struct {
						Modules json.RawMessage `json:"modules"`
					} `json:"report"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
					t.Fatal(err)
				}
				if got := objectKeys(t, v.Summary.ModuleScores); !slices.Equal(got, moduleKeys) {
					t.Errorf("%s: moduleScores keys %v, want %v", detail, got, moduleKeys)
				}
				if v.Summary.Perils == nil {
					t.Fatalf("%s: summary has no perils: %s", detail, rec.Body)
				}
				if got := objectKeys(t, v.Summary.Perils); !slices.Equal(got, moduleKeys) {
					t.Errorf("%s: summary.perils keys %v, want %v", detail, got, moduleKeys)
				}
				var sp risk.ByModule[json.RawMessage]
				_ = json.Unmarshal(v.Summary.Perils, &sp)
				for _, m := range sp {
					checkPerils(t, detail+" summary.perils", m.Module, m.Value)
				}
				if detail == "summary" {
					if v.Report != nil {
						t.Errorf("summary carries a report")
					}
					continue
				}
				if v.Report == nil {
					t.Fatal("full report missing")
				}
				if got := objectKeys(t, v.Report.Modules); !slices.Equal(got, moduleKeys) {
					t.Errorf("report.modules keys %v, want %v", got, moduleKeys)
				}
				var mods risk.ByModule[struct {
					Perils     json.RawMessage              `json:"perils"`
					Indicators []map[string]json.RawMessage `json:"indicators"`
				}]
				if err := json.Unmarshal(v.Report.Modules, &mods); err != nil {
					t.Fatal(err)
				}
				for _, m := range mods {
					checkPerils(t, "report.modules", m.Module, m.Value.Perils)
					// The full report's perils are the summary's.
					if sv, _ := sp.Get(m.Module); string(sv) != string(m.Value.Perils) {
						t.Errorf("%s: report perils %s differ from summary perils %s", m.Module, m.Value.Perils, sv)
					}
					var ps []risk.Peril
					_ = json.Unmarshal(m.Value.Perils, &ps)
					perilsSeen += len(ps)
					for _, pr := range ps {
						if pr.Score != nil {
							scored++
						}
					}
					for _, in := range m.Value.Indicators {
						var id, res string
						_ = json.Unmarshal(in["id"], &id)
						_ = json.Unmarshal(in["resolution"], &res)
						if !slices.Contains(resolutionKinds, res) {
							t.Errorf("%s indicator %s: resolution %q, want one of %v", m.Module, id, res, resolutionKinds)
						}
					}
				}
			}
			t.Logf("%d perils, %d scored", perilsSeen, scored)
			if perilsSeen == 0 || scored == 0 {
				t.Errorf("%d perils, %d scored: the fixture engine scored nothing", perilsSeen, scored)
			}
		})
	}
	// The engine kept its reference in the store: it saved one, and the
	// store gives it back under its key.
	if len(cache.keys) != 1 {
		t.Fatalf("the engine saved %d references (%v), want 1", len(cache.keys), cache.keys)
	}
	if body, err := e.st.LoadReference(ctx, cache.keys[0]); err != nil || len(body) == 0 {
		t.Errorf("reference %s: %d bytes stored (err %v), want the saved one", cache.keys[0], len(body), err)
	}
}

// savedReferences is the store's reference cache, noting the keys the
// engine saves under.
type savedReferences struct {
	locrisk.ReferenceCache
	keys []string
}

func (c *savedReferences) SaveReference(ctx context.Context, key string, body []byte) error {
	c.keys = append(c.keys, key)
	return c.ReferenceCache.SaveReference(ctx, key, body)
}

// A stored module without perils comes back with "perils": [], never null.
func TestReportPerilsNeverNull(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	id := e.completeWith(e.createJob(key, 37.77, -122.42).JobID, func(lat, lon float64) *risk.Assessment {
		a := sampleAssessment(lat, lon)
		for i := range a.Report.Modules {
			a.Report.Modules[i].Value.Perils = nil
		}
		return &a
	})
	rec := e.do("GET", reportsPath+id+"?detail=full", key, "")
	if rec.Code != 200 {
		t.Fatalf("status %d %s", rec.Code, rec.Body)
	}
	if body := rec.Body.String(); strings.Contains(body, `"perils":null`) || strings.Count(body, `"perils":[]`) < len(contractModules) {
		t.Errorf("module perils not [] : %s", body)
	}
}
