package hydrology

import (
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/hazard"
)

func indicator(tb testing.TB, m hazard.Measurement, id string) hazard.Indicator {
	tb.Helper()
	for _, in := range m.Indicators {
		if in.ID == id {
			return in
		}
	}
	tb.Fatalf("indicator %s missing; have %v", id, ids(m))
	return hazard.Indicator{}
}

func value(tb testing.TB, m hazard.Measurement, id string) float64 {
	tb.Helper()
	return indicator(tb, m, id).Value
}

// find returns the indicator with id, if present.
func find(m hazard.Measurement, id string) (hazard.Indicator, bool) {
	for _, in := range m.Indicators {
		if in.ID == id {
			return in, true
		}
	}
	return hazard.Indicator{}, false
}

func has(m hazard.Measurement, id string) bool {
	for _, in := range m.Indicators {
		if in.ID == id {
			return true
		}
	}
	return false
}

func ids(m hazard.Measurement) []string {
	var out []string
	for _, in := range m.Indicators {
		out = append(out, in.ID)
	}
	return out
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
