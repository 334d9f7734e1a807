package reportdiff

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ip(v int) *int         { return &v }
func sp(v string) *string   { return &v }
func fp(v float64) *float64 { return &v }
func levels(s ...string) []*string {
	out := make([]*string, len(s))
	for i, v := range s {
		if v != "" {
			out[i] = sp(v)
		}
	}
	return out
}

// change is a ModuleChange without its indicators, which the table gives
// as ids.
func change(module string, before, after *int, lb, la string) ModuleChange {
	l := levels(lb, la)
	return ModuleChange{Module: module, ScoreBefore: before, ScoreAfter: after, LevelBefore: l[0], LevelAfter: l[1]}
}

// The comparisons of the hand-written reports in testdata: what changed,
// in module order, with the indicators that moved each module most.
func TestCompare(t *testing.T) {
	current := Versions{Data: "data-bbbbbbbbbbbb", Methodology: sp("locrisk-methodology-4.0"), Engine: sp("v1.5.0")}
	tests := []struct {
		name, previous, current string
		wantErr                 error
		want                    Comparison // Changes without their indicators
		indicators              map[string][]string
	}{{
		name: "data update", previous: "previous.json", current: "current.json",
		want: Comparison{
			PreviousReportID: "0193a0f0-0000-7000-8000-000000000001", CurrentReportID: "0193a0f0-0000-7000-8000-000000000002",
			Previous: Versions{Data: "data-aaaaaaaaaaaa", Methodology: sp("locrisk-methodology-4.0"), Engine: sp("v1.4.0")},
			Current:  current,
			Overall:  Overall{ScoreBefore: 58, ScoreAfter: 61, LevelBefore: "moderate", LevelAfter: "high"},
			Changes: []ModuleChange{
				change("hydrology", ip(78), ip(83), "high", "very_high"),
				change("severeWeather", ip(55), ip(57), "moderate", "moderate"),
				change("wildfire", ip(38), ip(41), "low", "moderate"),
				change("landslide", nil, ip(12), "", "very_low"),
				change("environmentalExposure", ip(30), ip(24), "low", "low"),
			},
		},
		indicators: map[string][]string{
			// 7 percentile points, 0.8 points, then a new indicator;
			// the coast's distance changed in value only and is fourth.
			"hydrology":             {"coastal_proximity_index", "river_proximity_index", "storm_surge_exposure_index"},
			"severeWeather":         {"hurricane_force_wind_annual_prob"},
			"wildfire":              {"burn_probability"},
			"landslide":             {"terrain_slope_deg"},
			"environmentalExposure": {"npl_proximity_index"},
		},
	}, {
		name: "the same report", previous: "current.json", current: "current.json",
		want: Comparison{
			PreviousReportID: "0193a0f0-0000-7000-8000-000000000002", CurrentReportID: "0193a0f0-0000-7000-8000-000000000002",
			Previous: current, Current: current,
			Overall: Overall{ScoreBefore: 61, ScoreAfter: 61, LevelBefore: "high", LevelAfter: "high"},
			Changes: []ModuleChange{},
		},
	}, {
		// An older methodology: no engine version recorded, a text value
		// where a number is now, a module the current registry does not
		// have (listed last, with no score after).
		name: "methodology 2 to 4", previous: "methodology2.json", current: "current.json",
		want: Comparison{
			PreviousReportID: "0193a0f0-0000-4000-8000-000000000004", CurrentReportID: "0193a0f0-0000-7000-8000-000000000002",
			Previous: Versions{Data: "data-000000000000", Methodology: sp("locrisk-methodology-2.1")},
			Current:  current,
			Overall:  Overall{ScoreBefore: 58, ScoreAfter: 61, LevelBefore: "moderate", LevelAfter: "high"},
			Changes: []ModuleChange{
				change("hydrology", ip(78), ip(83), "high", "very_high"),
				change("severeWeather", ip(55), ip(57), "moderate", "moderate"),
				change("wildfire", ip(38), ip(41), "low", "moderate"),
				change("landslide", nil, ip(12), "", "very_low"),
				change("environmentalExposure", ip(30), ip(24), "low", "low"),
				change("retiredModule", ip(5), nil, "very_low", ""),
			},
		},
		indicators: map[string][]string{
			// A percentile move first, then the indicators ranked only
			// now, in the current report's order; the NRI rating, text
			// then and absent now, has no number to show.
			"hydrology":             {"coastal_proximity_index", "storm_surge_exposure_index", "river_proximity_index"},
			"severeWeather":         {"hurricane_force_wind_annual_prob", "hail_reports_per_1000km2"},
			"wildfire":              {"burn_probability", "local_population_density"},
			"landslide":             {"terrain_slope_deg"},
			"environmentalExposure": {"npl_proximity_index"},
			"retiredModule":         {},
		},
	}, {
		// The engine's stored output of methodology 1, without the API's
		// envelope or provenance: no report id, the methodology from the
		// full section.
		name: "stored body of methodology 1", previous: "stored-methodology1.json", current: "current.json",
		want: Comparison{
			CurrentReportID: "0193a0f0-0000-7000-8000-000000000002",
			Previous:        Versions{Data: "data-111111111111", Methodology: sp("locrisk-methodology-1.0")},
			Current:         current,
			Overall:         Overall{ScoreBefore: 58, ScoreAfter: 61, LevelBefore: "moderate", LevelAfter: "high"},
			Changes: []ModuleChange{
				change("hydrology", ip(70), ip(83), "high", "very_high"),
				change("severeWeather", ip(55), ip(57), "moderate", "moderate"),
				change("wildfire", ip(38), ip(41), "low", "moderate"),
				change("landslide", nil, ip(12), "", "very_low"),
				change("environmentalExposure", ip(30), ip(24), "low", "low"),
			},
		},
		indicators: map[string][]string{
			"hydrology": {"coastal_proximity_index", "storm_surge_exposure_index", "river_proximity_index"},
		},
	},
		{name: "another coordinate", previous: "previous.json", current: "elsewhere.json", wantErr: ErrDifferentCoordinates},
		{name: "summary before", previous: "summary.json", current: "current.json", wantErr: ErrNotFullReport},
		{name: "summary after", previous: "previous.json", current: "summary.json", wantErr: ErrNotFullReport},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Compare(fixture(t, tt.previous), fixture(t, tt.current))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ids := map[string][]string{}
			for i := range got.Changes {
				c := &got.Changes[i]
				if c.Indicators == nil || len(c.Indicators) > MaxIndicators {
					t.Errorf("%s: indicators %v: want an array of at most %d", c.Module, c.Indicators, MaxIndicators)
				}
				ids[c.Module] = []string{}
				for _, in := range c.Indicators {
					ids[c.Module] = append(ids[c.Module], in.ID)
				}
				c.Indicators = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(tt.want, "", " ")
				t.Errorf("comparison\n%s\nwant\n%s", g, w)
			}
			for module, want := range tt.indicators {
				if !slices.Equal(ids[module], want) {
					t.Errorf("%s: indicators %v, want %v", module, ids[module], want)
				}
			}
		})
	}
}

// An indicator move carries both reports' values and percentiles, and
// null where one has none.
func TestIndicatorMove(t *testing.T) {
	c, err := Compare(fixture(t, "previous.json"), fixture(t, "current.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []IndicatorMove{
		{ID: "coastal_proximity_index", Label: "Coastal proximity index", Unit: "index", Peril: "coastal",
			Before: fp(0.4), After: fp(0.45), PercentileBefore: fp(81), PercentileAfter: fp(88)},
		{ID: "river_proximity_index", Label: "River proximity index", Unit: "index", Peril: "riverine",
			Before: fp(0.7), After: fp(0.71), PercentileBefore: fp(90.2), PercentileAfter: fp(91)},
		{ID: "storm_surge_exposure_index", Label: "Storm surge exposure index", Unit: "index", Peril: "coastal",
			After: fp(0.3), PercentileAfter: fp(75)},
	}
	if got := c.Changes[0].Indicators; !reflect.DeepEqual(got, want) {
		t.Errorf("hydrology indicators %+v, want %+v", got, want)
	}
	b, err := json.Marshal(c.Changes[0].Indicators[2])
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"id":"storm_surge_exposure_index","label":"Storm surge exposure index","unit":"index","peril":"coastal","valueBefore":null,"valueAfter":0.3,"percentileBefore":null,"percentileAfter":75}`
	if string(b) != wantJSON {
		t.Errorf("JSON %s, want %s", b, wantJSON)
	}
}

// Which changes are material at each threshold: a level change always, a
// score move from the threshold up, a score appearing always.
func TestMaterial(t *testing.T) {
	c, err := Compare(fixture(t, "previous.json"), fixture(t, "current.json"))
	if err != nil {
		t.Fatal(err)
	}
	levelChanges := []string{"hydrology", "wildfire", "landslide"}
	tests := []struct {
		min  int
		want []string
	}{
		{0, []string{"hydrology", "severeWeather", "wildfire", "landslide", "environmentalExposure"}},
		{1, []string{"hydrology", "severeWeather", "wildfire", "landslide", "environmentalExposure"}},
		{2, []string{"hydrology", "severeWeather", "wildfire", "landslide", "environmentalExposure"}},
		{3, []string{"hydrology", "wildfire", "landslide", "environmentalExposure"}},
		{5, []string{"hydrology", "wildfire", "landslide", "environmentalExposure"}},
		{6, []string{"hydrology", "wildfire", "landslide", "environmentalExposure"}},
		{7, levelChanges},
		{100, levelChanges},
	}
	for _, tt := range tests {
		var got []string
		for _, m := range c.Material(tt.min) {
			got = append(got, m.Module)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Material(%d) = %v, want %v", tt.min, got, tt.want)
		}
		if !c.IsMaterial(tt.min) {
			t.Errorf("IsMaterial(%d) = false with the overall level changed", tt.min)
		}
	}
	same, err := Compare(fixture(t, "current.json"), fixture(t, "current.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m := same.Material(0); m != nil || same.IsMaterial(0) {
		t.Errorf("a report against itself: Material %v, IsMaterial %v", m, same.IsMaterial(0))
	}
}

func TestMaterialRule(t *testing.T) {
	tests := []struct {
		name   string
		change ModuleChange
		min    int
		want   bool
	}{
		{"score up by the threshold", change("m", ip(40), ip(45), "moderate", "moderate"), 5, true},
		{"score down by the threshold", change("m", ip(45), ip(40), "moderate", "moderate"), 5, true},
		{"score below the threshold", change("m", ip(40), ip(44), "moderate", "moderate"), 5, false},
		{"level change by one point", change("m", ip(39), ip(40), "low", "moderate"), 5, true},
		{"data appear", change("m", nil, ip(3), "", "very_low"), 50, true},
		{"data disappear", change("m", ip(3), nil, "very_low", ""), 50, true},
		{"level change alone", change("m", ip(3), ip(3), "very_low", "low"), 5, true},
		{"any move at 0", change("m", ip(40), ip(41), "moderate", "moderate"), 0, true},
		{"no move at 0", change("m", ip(40), ip(40), "moderate", "moderate"), 0, false},
	}
	for _, tt := range tests {
		if got := tt.change.Material(tt.min); got != tt.want {
			t.Errorf("%s: Material(%d) = %v, want %v", tt.name, tt.min, got, tt.want)
		}
	}
	overall := []struct {
		o    Overall
		min  int
		want bool
	}{
		{Overall{50, 54, "moderate", "moderate"}, 5, false},
		{Overall{50, 55, "moderate", "moderate"}, 5, true},
		{Overall{59, 60, "moderate", "high"}, 5, true},
		{Overall{60, 60, "high", "high"}, 0, false},
	}
	for _, tt := range overall {
		if got := tt.o.Material(tt.min); got != tt.want {
			t.Errorf("%+v: Material(%d) = %v, want %v", tt.o, tt.min, got, tt.want)
		}
	}
}

// The ranking of indicators: percentile moves by size, then indicators
// ranked on one side only, then value-only moves by relative size; equal
// moves in the current report's order; unchanged ones left out; ids that
// repeat paired in order.
func TestMovers(t *testing.T) {
	in := func(id string, v, p *float64) indicator {
		raw := json.RawMessage("null")
		if v != nil {
			raw, _ = json.Marshal(*v)
		}
		return indicator{ID: id, RawValue: raw, Percentile: p}
	}
	tests := []struct {
		name          string
		before, after []indicator
		want          []string
	}{
		{"by percentile points",
			[]indicator{in("a", fp(1), fp(10)), in("b", fp(1), fp(50)), in("c", fp(1), fp(70))},
			[]indicator{in("a", fp(1), fp(12)), in("b", fp(1), fp(40)), in("c", fp(1), fp(71))},
			[]string{"b", "a", "c"}},
		{"at most three",
			[]indicator{in("a", nil, fp(1)), in("b", nil, fp(1)), in("c", nil, fp(1)), in("d", nil, fp(1))},
			[]indicator{in("a", nil, fp(2)), in("b", nil, fp(5)), in("c", nil, fp(3)), in("d", nil, fp(9))},
			[]string{"d", "b", "c"}},
		{"ties keep the current order",
			[]indicator{in("b", nil, fp(1)), in("a", nil, fp(1))},
			[]indicator{in("a", nil, fp(3)), in("b", nil, fp(3))},
			[]string{"a", "b"}},
		{"tiers",
			[]indicator{in("value", fp(1), nil), in("gone", fp(1), fp(20)), in("pct", fp(1), fp(20))},
			[]indicator{in("value", fp(100), nil), in("new", fp(1), fp(20)), in("pct", fp(1), fp(20.5))},
			[]string{"pct", "new", "gone"}},
		{"value moves by relative size",
			[]indicator{in("small", fp(100), nil), in("large", fp(1), nil), in("appears", nil, nil)},
			[]indicator{in("small", fp(110), nil), in("large", fp(2), nil), in("appears", fp(0), nil)},
			[]string{"appears", "large", "small"}},
		{"unchanged left out",
			[]indicator{in("a", fp(1), fp(5)), in("b", nil, nil)},
			[]indicator{in("a", fp(1), fp(5)), in("b", nil, nil)},
			[]string{}},
		{"repeated ids pair in order",
			[]indicator{in("x", fp(1), fp(10)), in("x", fp(1), fp(30))},
			[]indicator{in("x", fp(1), fp(10)), in("x", fp(1), fp(40))},
			[]string{"x"}},
	}
	for _, tt := range tests {
		got := []string{}
		moves := movers(tt.before, tt.after)
		for _, m := range moves {
			got = append(got, m.ID)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
		if tt.name == "repeated ids pair in order" && (len(moves) != 1 || *moves[0].PercentileBefore != 30) {
			t.Errorf("%s: paired %+v, want the second x with the second", tt.name, moves)
		}
	}
}

// Documents that are not reports, or lack what a comparison needs, are
// errors, never a comparison of zeros.
func TestCompareMalformed(t *testing.T) {
	good := fixture(t, "current.json")
	tests := []struct{ name, doc string }{
		{"not JSON", `{`},
		{"not an object", `[1]`},
		{"no location", `{"detail":"full","summary":{"overallScore":1},"report":{"modules":{}}}`},
		{"no overall score", `{"location":{"latitude":29.9511,"longitude":-90.0715},"summary":{},"report":{"modules":{}}}`},
		{"modules not an object", `{"location":{"latitude":29.9511,"longitude":-90.0715},"summary":{"overallScore":1},"report":{"modules":[]}}`},
		{"no modules", `{"location":{"latitude":29.9511,"longitude":-90.0715},"summary":{"overallScore":1},"report":{}}`},
		{"score not an integer", `{"location":{"latitude":29.9511,"longitude":-90.0715},"summary":{"overallScore":1},"report":{"modules":{"a":{"score":"x"}}}}`},
	}
	for _, tt := range tests {
		if _, err := Compare([]byte(tt.doc), good); err == nil {
			t.Errorf("%s as previous: no error", tt.name)
		}
		if _, err := Compare(good, []byte(tt.doc)); err == nil {
			t.Errorf("%s as current: no error", tt.name)
		}
	}
}

// Compare never panics, and whatever it accepts it answers in shape.
func FuzzCompare(f *testing.F) {
	for _, name := range []string{"previous.json", "current.json", "methodology2.json", "stored-methodology1.json", "summary.json"} {
		b := fixture(f, name)
		f.Add(b, fixture(f, "current.json"))
		f.Add(fixture(f, "previous.json"), b)
	}
	f.Add([]byte(`{"location":{"latitude":1,"longitude":2},"summary":{"overallScore":1},"report":{"modules":{"a":{"score":1,"indicators":[{"id":"x","value":"t"}]},"a":{}}}}`),
		[]byte(`{"location":{"latitude":1,"longitude":2},"summary":{"overallScore":1},"report":{"modules":{"a":{"score":null}}}}`))
	f.Fuzz(func(t *testing.T, previous, current []byte) {
		c, err := Compare(previous, current)
		if err != nil {
			return
		}
		if c.Changes == nil {
			t.Fatal("nil changes")
		}
		for _, m := range c.Changes {
			if m.Indicators == nil || len(m.Indicators) > MaxIndicators {
				t.Fatalf("%s: indicators %v", m.Module, m.Indicators)
			}
			if sameInt(m.ScoreBefore, m.ScoreAfter) && sameString(m.LevelBefore, m.LevelAfter) {
				t.Fatalf("%s listed without a change", m.Module)
			}
		}
		c.Material(5)
		if _, err := json.Marshal(c); err != nil {
			t.Fatal(err)
		}
	})
}
