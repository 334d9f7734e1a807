package futurerisk

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
)

var loadReal = datatest.Once(datatest.Real, Load)

// TestRealTable: the datasheet as PROVENANCE.md describes it.
func TestRealTable(t *testing.T) {
	tab := loadReal(t)
	if tab.Rows() != 3231 {
		t.Errorf("Rows() = %d, want 3231", tab.Rows())
	}
	scored := map[int]int{}
	territories := 0
	for _, c := range tab.Counties() {
		for h := range NumHazards {
			if c.Hazards[h].Current.HasScore {
				scored[h]++
			}
		}
		switch c.State {
		case "PR", "VI", "GU", "AS", "MP":
			territories++
			for h := range NumHazards {
				if cur := c.Hazards[h].Current; cur.HasScore || cur.Rating != "Insufficient Data" {
					t.Errorf("territory %s %s now %+v", c.FIPS, hazards[h].Key, cur)
				}
			}
		}
	}
	want := map[int]int{CoastalFlooding: 497, Drought: 3143, ExtremeHeat: 3143, Hurricane: 2229, Wildfire: 3143}
	for h, n := range want {
		if scored[h] != n {
			t.Errorf("%s: %d counties scored now, want %d", hazards[h].Key, scored[h], n)
		}
	}
	if territories != 88 {
		t.Errorf("%d territory rows, want 88", territories)
	}
	// Connecticut is keyed by its eight legacy counties; each planning
	// region finds the one that stands in for it.
	for _, fips := range []string{"09001", "09003", "09005", "09007", "09009", "09011", "09013", "09015"} {
		if _, ok := tab.Lookup(fips); !ok {
			t.Errorf("no row for %s", fips)
		}
	}
	for _, o := range data.OlderCounties() {
		c, standIn, ok := tab.ForCounty(o.FIPS)
		if !ok {
			t.Errorf("%s: no row", o.FIPS)
			continue
		}
		// Only Connecticut's regions lack a row of their own.
		if wantStandIn := strings.HasPrefix(o.FIPS, "09"); standIn != wantStandIn || (standIn && c.FIPS != o.Old) {
			t.Errorf("ForCounty(%s) = %s, stand-in %v", o.FIPS, c.FIPS, standIn)
		}
	}
	la, _ := tab.Lookup("06037")
	if p := la.Hazards[Wildfire].Scenarios[LateHigher]; !p.HasScore || !p.HasMultiplier || p.Multiplier < 1 {
		t.Errorf("Los Angeles wildfire late, higher %+v", p)
	}
}

// TestRealMissingMultipliers: every multiplier of 0 in the file is rated
// "No Rating", so none is left as a value; where the current loss has a
// rating, the projected loss rating of those rows is the current one, so
// the 0 is no multiplier rather than a loss that vanishes.
func TestRealMissingMultipliers(t *testing.T) {
	tab := loadReal(t)
	missing, kept := 0, 0
	for _, c := range tab.Counties() {
		for h := range NumHazards {
			r := &c.Hazards[h]
			for s, p := range r.Scenarios {
				if p.HasMultiplier && p.Multiplier == 0 {
					t.Errorf("%s %s %s: a multiplier of 0 kept", c.FIPS, hazards[h].Key, scenarios[s].Key)
				}
				if p.HasMultiplier {
					kept++
					continue
				}
				if p.MultiplierRating == "No Rating" && strings.Contains(r.Current.LossRating, "(") {
					missing++
					if p.LossRating != r.Current.LossRating {
						t.Errorf("%s %s %s: no multiplier, and the loss rating moves from %q to %q", c.FIPS, hazards[h].Key, scenarios[s].Key, r.Current.LossRating, p.LossRating)
					}
				}
			}
		}
	}
	t.Logf("%d multipliers, %d rated projections without one", kept, missing)
	if missing == 0 || kept == 0 {
		t.Errorf("%d kept, %d missing: the check saw nothing", kept, missing)
	}
}

// TestRealMultiplierMeaning: the multiplier is the factor on the county's
// current expected annual loss: the projected annual loss rating's dollar
// band holds the current loss (column *_EALT, which the table does not
// keep) times the multiplier, for all but a handful of the county
// scenarios (docs/methodology.md, "Outlook"). FEMA writes the band's
// edges to three significant digits, so a value within half a percent of
// an edge counts as on it.
func TestRealMultiplierMeaning(t *testing.T) {
	tab := loadReal(t)
	cols := []string{"STCOFIPS"}
	for _, h := range hazards {
		cols = append(cols, h.Code+"_EALT")
	}
	tt, err := data.OpenTable(datatest.Real(t), data.Path(SourceID), cols...)
	if err != nil {
		t.Fatal(err)
	}
	defer tt.Close()
	const edge = 0.005
	checked, outside := 0, []string{}
	for tt.Scan() {
		c, ok := tab.Lookup(data.FIPS5(tt.String("STCOFIPS")))
		if !ok {
			t.Fatalf("no row for %s", tt.String("STCOFIPS"))
		}
		for h, hz := range hazards {
			eal, ok, err := tt.OptFloat(hz.Code + "_EALT")
			if err != nil {
				t.Fatal(err)
			}
			for s, p := range c.Hazards[h].Scenarios {
				lo, hi, banded := lossBand(p.LossRating)
				if !ok || !p.HasMultiplier || !banded {
					continue
				}
				checked++
				if v := eal * p.Multiplier; v < lo*(1-edge) || v > hi*(1+edge) {
					outside = append(outside, c.FIPS+" "+hz.Key+" "+scenarios[s].Key+": "+strconv.FormatFloat(v, 'g', 6, 64)+" outside "+p.LossRating)
				}
			}
		}
	}
	if err := tt.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d county scenarios checked; outside the band: %v", checked, outside)
	if checked < 40000 || len(outside) > 5 {
		t.Errorf("%d checked, %d outside the band, want over 40,000 and at most 5", checked, len(outside))
	}
}

var bandRE = regexp.MustCompile(`\((<|>)?([\d.]+)([KMB]?)(?: - ([\d.]+)([KMB]?))?\)$`)

// lossBand reads the dollar band of a FEMA loss rating: "Relatively Low
// (21.9K - 292K)", "Very Low (<21.9K)", "Very High (>191M)".
func lossBand(rating string) (lo, hi float64, ok bool) {
	m := bandRE.FindStringSubmatch(rating)
	if m == nil {
		return 0, 0, false
	}
	num := func(s, unit string) float64 {
		v, _ := strconv.ParseFloat(s, 64)
		return v * map[string]float64{"": 1, "K": 1e3, "M": 1e6, "B": 1e9}[unit]
	}
	a := num(m[2], m[3])
	switch m[1] {
	case "<":
		return 0, a, true
	case ">":
		return a, math.Inf(1), true
	}
	return a, num(m[4], m[5]), true
}

// TestRealScoresAreRanks: every risk index score in the file, current or
// projected, is the county's percentile rank among the counties FEMA
// scores for that hazard and scenario: between the shares strictly below
// and at or below its value.
func TestRealScoresAreRanks(t *testing.T) {
	tab := loadReal(t)
	check := func(name string, vals []float64) {
		slices.Sort(vals)
		n := float64(len(vals))
		worst := 0.0
		for _, v := range vals {
			lo, _ := slices.BinarySearch(vals, v)
			hi := lo
			for hi < len(vals) && vals[hi] == v {
				hi++
			}
			worst = max(worst, 100*float64(lo)/n-v, v-100*float64(hi)/n)
		}
		if worst > 0.01 {
			t.Errorf("%s: a score is %.3f points off its rank among %d counties", name, worst, len(vals))
		}
	}
	for h, hz := range hazards {
		var now []float64
		var proj [NumScenarios][]float64
		for _, c := range tab.Counties() {
			r := c.Hazards[h]
			if r.Current.HasScore {
				now = append(now, r.Current.Score)
			}
			for s, p := range r.Scenarios {
				if p.HasScore {
					proj[s] = append(proj[s], p.Score)
				}
			}
		}
		check(hz.Key+" now", now)
		for s := range proj {
			check(hz.Key+" "+scenarios[s].Key, proj[s])
		}
	}
}
