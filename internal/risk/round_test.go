package risk

import "testing"

// Counts are shown exactly; other quantities keep four significant digits.
func TestRoundIndicator(t *testing.T) {
	tests := []struct {
		v    float64
		unit string
		want float64
		text string
	}{
		{65222, "count", 65222, "65222"},
		{1234567, "count", 1234567, "1234567"},
		{0, "count", 0, "0"},
		{2.345678, "count", 2.346, "2.346"}, // a fractional count is an average, rounded
		{65222, "index", 65220, "65220"},
		{0.000123456, "probability", 0.0001235, "0.01235%"},
		{123.456, "index", 123.5, "123.5"},
	}
	for _, tt := range tests {
		if got := roundIndicator(tt.v, tt.unit); got != tt.want {
			t.Errorf("roundIndicator(%v, %q) = %v, want %v", tt.v, tt.unit, got, tt.want)
		}
		if got := formatValue(tt.v, tt.unit); got != tt.text {
			t.Errorf("formatValue(%v, %q) = %q, want %q", tt.v, tt.unit, got, tt.text)
		}
	}
}
