package locrisk

// The completion percentiles of the operations summary (JobOps) as every
// store reads them: from histograms of completion times kept by UTC hour and
// UTC day rather than from every job, so their cost does not grow with the
// jobs of the window. Which periods cover a window, and how a rank is read
// from the buckets, are the same whatever the store; only the query
// differs.

import (
	"math"
	"time"
)

// HistogramBucket is one bucket of a completion-time histogram summed over
// a window: the value reported for the times it holds (within 5% of each
// of them) and how many jobs it holds.
type HistogramBucket struct {
	ValueMs int64 `db:"value_ms"`
	Jobs    int64 `db:"jobs"`
}

// HistogramRank is the p-th percentile (0 < p <= 1) of the times counted
// in h (buckets in ascending order) by the nearest-rank method: the value
// of the bucket holding the smallest time with at least p of the times at
// or below it; nil for no times. The rank is counted exactly over the
// buckets, so the answer is within 5% of the exact nearest-rank value of
// the same jobs.
func HistogramRank(h []HistogramBucket, p float64) *time.Duration {
	var n int64
	for _, b := range h {
		n += b.Jobs
	}
	if n == 0 {
		return nil
	}
	// p*n in floating point can land a hair above an integer (0.95*20 is
	// 19.000000000000004); the epsilon keeps an exact rank exact.
	rank := min(max(int64(math.Ceil(p*float64(n)-1e-9)), 1), n)
	var seen int64
	for _, b := range h {
		if seen += b.Jobs; seen >= rank {
			v := time.Duration(b.ValueMs) * time.Millisecond
			return &v
		}
	}
	panic("unreachable: the rank is at most the count")
}

// SetCompletionPercentiles sets j's CompletionP50 and CompletionP95 from
// the window's histogram h (HistogramRank).
func (j *JobOps) SetCompletionPercentiles(h []HistogramBucket) {
	j.CompletionP50 = HistogramRank(h, 0.50)
	j.CompletionP95 = HistogramRank(h, 0.95)
}

// CompletionPeriods are the periods of the completion histograms that
// together cover every UTC hour overlapping a window, each [start, end):
// the hours before the first whole UTC day among them, the whole days,
// and the hours after the last whole day. A part with nothing in it is an
// empty range (start equal to end).
type CompletionPeriods struct {
	HoursBefore, Days, HoursAfter [2]time.Time
}

// CompletionPeriodsOf is the CompletionPeriods of [from, to), in UTC; ok is
// false for an empty window. Each hour the window touches counts in full,
// as the request counts do (docs/api.md, Operations summary), and the
// whole days are read from day rows, so a week costs at most 46 hours and
// 7 days of buckets.
func CompletionPeriodsOf(from, to time.Time) (p CompletionPeriods, ok bool) {
	if !from.Before(to) {
		return p, false
	}
	const day = 24 * time.Hour
	lo, hi := from.UTC().Truncate(time.Hour), to.UTC().Truncate(time.Hour)
	if hi.Before(to) {
		hi = hi.Add(time.Hour)
	}
	// UTC days are whole multiples of 24 hours from Go's zero time, so
	// Truncate finds midnight.
	d0, d1 := lo.Truncate(day), hi.Truncate(day)
	if d0.Before(lo) {
		d0 = d0.Add(day)
	}
	if !d0.Before(d1) {
		// No whole day among the hours: every hour from its hour rows.
		d0, d1 = hi, hi
	}
	return CompletionPeriods{HoursBefore: [2]time.Time{lo, d0}, Days: [2]time.Time{d0, d1}, HoursAfter: [2]time.Time{d1, hi}}, true
}
