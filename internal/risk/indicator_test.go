package risk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// checkIndicatorJSON asserts that every indicator of a, as JSON, has a
// number or null as its value and a string or null as its text, and
// returns how many carried a text.
func checkIndicatorJSON(t *testing.T, a *Assessment) (texts int) {
	t.Helper()
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Report struct {
			Modules map[string]struct {
				Indicators []map[string]json.RawMessage `json:"indicators"`
			} `json:"modules"`
		} `json:"report"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for mod, m := range doc.Report.Modules {
		for _, in := range m.Indicators {
			v, ok := in["value"]
			if !ok {
				t.Errorf("%s %s: no value", mod, in["id"])
			} else if v := bytes.TrimSpace(v); string(v) != "null" && (len(v) == 0 || v[0] == '"' || v[0] == '{' || v[0] == '[' || v[0] == 't' || v[0] == 'f') {
				t.Errorf("%s %s: value %s is not a number or null", mod, in["id"], v)
			}
			switch txt, ok := in["text"]; {
			case !ok:
				t.Errorf("%s %s: no text member", mod, in["id"])
			case string(txt) != "null":
				if txt[0] != '"' {
					t.Errorf("%s %s: text %s is not a string", mod, in["id"], txt)
				}
				texts++
			}
			// A capped distance says so in text as well as in its label
			// (docs/api.md): "none within N km" beside the value N.
			var label, text string
			_ = json.Unmarshal(in["label"], &label)
			_ = json.Unmarshal(in["text"], &text)
			if _, capped, ok := strings.Cut(label, "capped: "); ok {
				want := strings.TrimSuffix(capped, ")")
				if text != want {
					t.Errorf("%s %s: capped distance with text %q, want %q", mod, in["id"], text, want)
				} else if n := strings.TrimSuffix(strings.TrimPrefix(want, "none within "), " km"); string(in["value"]) != n {
					t.Errorf("%s %s: capped at %s km, value %s", mod, in["id"], n, in["value"])
				}
			}
			if string(in["unit"]) == `"count"` && string(in["value"]) != "null" {
				var f float64
				if json.Unmarshal(in["value"], &f) == nil && f != math.Trunc(f) && f > 1000 {
					t.Errorf("%s %s: count %v rounded", mod, in["id"], f)
				}
			}
		}
	}
	return texts
}

func TestFixtureIndicatorValuesAreNumbers(t *testing.T) {
	e := loadFixture(t)
	texts := 0
	// The covered places of TestFixtureCoverage.
	places := [][2]float64{{37.77, -122.42}, {41.88, -87.63}, {35.47, -97.52}, {25.76, -80.19}, {52.0, 179.5},
		{18.43, -66.06}, {13.45, 144.78}, {17.73, -64.75}, {15.2, 145.75}, {21.3, -157.85}, {-14.3, -170.7}}
	for _, p := range places {
		a, err := e.Assess(context.Background(), p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		texts += checkIndicatorJSON(t, a)
	}
	if texts == 0 {
		t.Error("no fixture indicator carried a text: the test checks nothing")
	}
}

// TestRealIndicatorValuesAreNumbers walks a half-degree grid over the
// states and territories on the real data: every indicator value of every
// report is a JSON number or null, its wording in text.
func TestRealIndicatorValuesAreNumbers(t *testing.T) {
	e := loadReal(t)
	// Under the race detector a one-degree grid: a quarter of the reports.
	step, least := 0.5, 3000
	if raceEnabled {
		step, least = 1, 750
	}
	reports, texts := 0, 0
	for lat := 17.0; lat <= 71.5; lat += step {
		for lon := -179.5; lon <= -64.0; lon += step {
			a, err := e.Assess(context.Background(), lat, lon)
			if errors.Is(err, ErrUnsupportedLocation) {
				continue
			}
			if err != nil {
				t.Fatalf("%v, %v: %v", lat, lon, err)
			}
			reports++
			texts += checkIndicatorJSON(t, a)
			if t.Failed() {
				t.Fatalf("at %v, %v", lat, lon)
			}
		}
	}
	if reports < least || texts < reports {
		t.Errorf("%d reports with %d texts: the walk missed most of the country", reports, texts)
	}
	t.Logf("%d reports, %d indicator texts", reports, texts)
}

// Reports stored before text existed had the wording in value; they read
// as a new report would.
func TestIndicatorReadsOldReports(t *testing.T) {
	tests := []struct {
		in        string
		value     *float64
		text      string
		wantError bool
	}{
		{`{"id":"a","value":"Not Applicable","unit":"score 0-100"}`, nil, "Not Applicable", false},
		{`{"id":"a","value":12.5,"unit":"km"}`, ptr(12.5), "", false},
		{`{"id":"a","value":100,"text":"none within 100 km","unit":"km"}`, ptr(100), "none within 100 km", false},
		{`{"id":"a","value":null,"text":"Love Canal","unit":"name"}`, nil, "Love Canal", false},
		{`{"id":"a","unit":"name"}`, nil, "", false},
		{`{"id":"a","value":true}`, nil, "", true},
	}
	for _, tt := range tests {
		var in Indicator
		err := json.Unmarshal([]byte(tt.in), &in)
		if (err != nil) != tt.wantError {
			t.Errorf("%s: error %v", tt.in, err)
			continue
		}
		if tt.wantError {
			continue
		}
		text := ""
		if in.Text != nil {
			text = *in.Text
		}
		if (in.Value == nil) != (tt.value == nil) || (in.Value != nil && *in.Value != *tt.value) || text != tt.text || in.ID != "a" {
			t.Errorf("%s: value %v text %q id %q", tt.in, in.Value, text, in.ID)
		}
	}
}

func ptr(v float64) *float64 { return &v }
