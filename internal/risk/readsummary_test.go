package risk

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestReadSummary(t *testing.T) {
	score := func(n int) *int { return &n }
	a := Assessment{
		Location:    Location{Latitude: 41.88, Longitude: -87.63, CountyFIPS: "17031"},
		DataVersion: "dv",
		Summary: Summary{
			OverallScore: 64, RiskLevel: "high", Confidence: Confidence{Level: "medium", Score: 0.6},
			TopRisks: []TopRisk{{Module: "earthquake", Score: 95, RiskLevel: "very_high", Reason: "shaking"}},
		},
		Report: Full{Methodology: Methodology{Version: "m"}},
	}
	for i, k := range ModuleKeys() {
		v := score(i * 10)
		if i == 2 {
			v = nil // a module no data covers
		}
		a.Summary.ModuleScores.Set(k, v)
		a.Report.Modules.Set(k, ModuleReport{Score: score(99), Narrative: "not the summary"})
	}
	body, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(a.Summary)

	check := func(name string, body []byte) {
		t.Helper()
		s, err := ReadSummary(body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, _ := json.Marshal(s); !bytes.Equal(got, want) {
			t.Errorf("%s: summary\n%s\nwant\n%s", name, got, want)
		}
	}
	check("engine order", body)

	// The full report after the summary is not read: a body cut off (or
	// broken) there still yields the summary.
	cut := bytes.Clone(body[:bytes.Index(body, []byte(`,"report":`))+len(`,"report":`)])
	check("report cut off", append(cut, `{"modules": [broken`...))

	// Members in another order (a map's, say) are skipped to the summary.
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		t.Fatal(err)
	}
	reordered, _ := json.Marshal(members) // keys sorted: report before summary
	if bytes.Index(reordered, []byte(`"report"`)) > bytes.Index(reordered, []byte(`"summary"`)) {
		t.Fatalf("test body is not reordered: %s", reordered)
	}
	check("report first", reordered)

	for _, bad := range []string{``, `[]`, `"x"`, `{}`, `{"location":{}}`, `{"summary":`, `{"summary":{"overallScore":"high"}}`} {
		if _, err := ReadSummary([]byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "read summary: ") {
			t.Errorf("ReadSummary(%q) = %v, want a read summary error", bad, err)
		}
	}
}

func TestReadScores(t *testing.T) {
	score := func(n int) *int { return &n }
	var s Summary
	s.OverallScore, s.RiskLevel = 71, "high"
	for i, k := range ModuleKeys() {
		v := score(i * 10)
		if i == 1 {
			v = nil // a module no data covers
		}
		s.ModuleScores.Set(k, v)
	}
	body, err := json.Marshal(Assessment{Summary: s})
	if err != nil {
		t.Fatal(err)
	}
	overall, level, modules, err := ReadScores(body)
	if err != nil || overall != 71 || level != "high" {
		t.Fatalf("ReadScores = %d %q %v, want 71 high", overall, level, err)
	}
	// Every module key, a module without data as a present key with a nil
	// score (never a 0).
	if len(modules) != len(ModuleKeys()) {
		t.Errorf("modules %v, want the keys %v", modules, ModuleKeys())
	}
	for i, k := range ModuleKeys() {
		got, ok := modules[k]
		switch {
		case !ok:
			t.Errorf("no score for %s", k)
		case i == 1 && got != nil:
			t.Errorf("%s = %d, want nil", k, *got)
		case i != 1 && (got == nil || *got != i*10):
			t.Errorf("%s = %v, want %d", k, got, i*10)
		}
	}
	if _, _, _, err := ReadScores([]byte(`{}`)); err == nil {
		t.Error("ReadScores of a body without a summary succeeded")
	}
}
