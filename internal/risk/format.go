package risk

import (
	"math"
	"strconv"
)

// pct1 is a share as a percentile with one decimal, rounded down so the
// stated "more than X%" holds.
func pct1(share float64) float64 {
	return math.Floor(share*1000+1e-7) / 10
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// roundValue keeps indicator values readable without losing small
// probabilities: four significant digits.
func roundValue(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return f
}

// roundIndicator is roundValue except for whole counts, which are shown
// exactly: a county's 65,222 policies in force stay 65,222, as the
// narrative and the source say (docs/methodology.md, Hydrology module).
func roundIndicator(v float64, unit string) float64 {
	if unit == "count" && v == math.Trunc(v) && !math.IsInf(v, 0) {
		return v
	}
	return roundValue(v)
}

func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func formatValue(v float64, unit string) string {
	s := formatNumber(roundIndicator(v, unit))
	switch unit {
	case "", "count", "index", "score 0-100":
		return s
	case "probability":
		if v == 0 {
			return "none on record"
		}
		return formatNumber(roundValue(v*100)) + "%"
	case "percent":
		return s + "%"
	case "km":
		switch {
		case v < 0.01:
			return "under 0.01 km"
		case v < 1:
			return strconv.FormatFloat(v, 'f', 2, 64) + " km"
		}
		return strconv.FormatFloat(v, 'f', 1, 64) + " km"
	}
	return s + " " + unit
}
