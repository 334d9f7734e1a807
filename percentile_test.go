package locrisk

import (
	"testing"
	"time"
)

// The nearest rank over buckets, as both stores read their histograms.
func TestHistogramRank(t *testing.T) {
	ms := func(v int64) *time.Duration { d := time.Duration(v) * time.Millisecond; return &d }
	for _, tt := range []struct {
		name string
		h    []HistogramBucket
		p    float64
		want *time.Duration
	}{
		{"empty", nil, 0.5, nil},
		{"no jobs", []HistogramBucket{{ValueMs: 7}}, 0.5, nil},
		{"one job", []HistogramBucket{{ValueMs: 7, Jobs: 1}}, 0.95, ms(7)},
		{"median in the first", []HistogramBucket{{10, 10}, {20, 10}}, 0.5, ms(10)},
		{"p95 of 20 is the 19th", []HistogramBucket{{10, 18}, {20, 1}, {30, 1}}, 0.95, ms(20)},
		{"p95 of 21 is the 20th", []HistogramBucket{{10, 18}, {20, 1}, {30, 2}}, 0.95, ms(30)},
	} {
		got := HistogramRank(tt.h, tt.p)
		if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The periods that cover a window's hours: whole UTC days from their day
// rows, the hours around them from their hour rows.
func TestCompletionPeriodsOf(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UTC()
	}
	// periods builds the want from the six bounds, in hour precision
	// ("2026-11-22T10").
	periods := func(b ...string) CompletionPeriods {
		var ts [6]time.Time
		for i, s := range b {
			ts[i] = at(s + ":00:00Z")
		}
		return CompletionPeriods{HoursBefore: [2]time.Time{ts[0], ts[1]}, Days: [2]time.Time{ts[2], ts[3]},
			HoursAfter: [2]time.Time{ts[4], ts[5]}}
	}
	tests := []struct {
		from, to string
		want     CompletionPeriods
	}{
		// Within a day: the hours that overlap, counted in full.
		{"2026-11-22T10:37:12.5Z", "2026-11-22T11:37:12.5Z", periods(
			"2026-11-22T10", "2026-11-22T12", "2026-11-22T12", "2026-11-22T12", "2026-11-22T12", "2026-11-22T12")},
		{"2026-11-22T10:00:00Z", "2026-11-22T11:00:00Z", periods(
			"2026-11-22T10", "2026-11-22T11", "2026-11-22T11", "2026-11-22T11", "2026-11-22T11", "2026-11-22T11")},
		// 24 hours not on a day: no whole day among them.
		{"2026-11-21T10:37:00Z", "2026-11-22T10:37:00Z", periods(
			"2026-11-21T10", "2026-11-22T11", "2026-11-22T11", "2026-11-22T11", "2026-11-22T11", "2026-11-22T11")},
		// A week: six whole days and the hours around them.
		{"2026-11-15T10:37:00Z", "2026-11-22T10:37:00Z", periods(
			"2026-11-15T10", "2026-11-16T00", "2026-11-16T00", "2026-11-22T00", "2026-11-22T00", "2026-11-22T11")},
		// Whole days: no hours.
		{"2026-11-20T00:00:00Z", "2026-11-22T00:00:00Z", periods(
			"2026-11-20T00", "2026-11-20T00", "2026-11-20T00", "2026-11-22T00", "2026-11-22T00", "2026-11-22T00")},
		// Ends a millisecond into a day: that day's first hour.
		{"2026-11-21T00:00:00Z", "2026-11-22T00:00:00.001Z", periods(
			"2026-11-21T00", "2026-11-21T00", "2026-11-21T00", "2026-11-22T00", "2026-11-22T00", "2026-11-22T01")},
		// Another zone is the same instants.
		{"2026-11-21T19:00:00-05:00", "2026-11-22T19:30:00-05:00", periods(
			"2026-11-22T00", "2026-11-22T00", "2026-11-22T00", "2026-11-23T00", "2026-11-23T00", "2026-11-23T01")},
	}
	for _, tc := range tests {
		got, ok := CompletionPeriodsOf(at(tc.from), at(tc.to))
		if !ok || got != tc.want {
			t.Errorf("[%s, %s): %+v (%v), want %+v", tc.from, tc.to, got, ok, tc.want)
		}
	}
	t0 := at("2026-11-22T10:00:00Z")
	if _, ok := CompletionPeriodsOf(t0, t0); ok {
		t.Error("an empty window has periods")
	}
}
