package locrisk

// The window of a usage history (Usage.UsageHistory in service.go): which
// arguments it takes, which days it spans, and the shape of its answer,
// one entry per day and bucket with zeros where nothing happened. Stores
// only count; the window and the zero-filling are the same for all.

import (
	"fmt"
	"time"
)

// UsageWindow is a checked usage-history request: Days days from the UTC
// day From (00:00 UTC), in the order of Buckets.
type UsageWindow struct {
	From    time.Time
	Days    int
	Buckets []string
}

// NewUsageWindow checks a usage-history request and returns its window:
// days must be at least 1 and each bucket a usage bucket; no buckets means
// all of them, in Buckets order. firstDay may be any instant of its UTC
// day. Bad arguments are ErrInvalid.
func NewUsageWindow(firstDay time.Time, days int, buckets []string) (UsageWindow, error) {
	if days < 1 {
		return UsageWindow{}, fmt.Errorf("%w: usage history needs at least one day, got %d", ErrInvalid, days)
	}
	if len(buckets) == 0 {
		buckets = Buckets()
	}
	for _, b := range buckets {
		if !ValidBucket(b) {
			return UsageWindow{}, fmt.Errorf("%w: unknown bucket %q", ErrInvalid, b)
		}
	}
	f := firstDay.UTC()
	from := time.Date(f.Year(), f.Month(), f.Day(), 0, 0, 0, 0, time.UTC)
	return UsageWindow{From: from, Days: days, Buckets: buckets}, nil
}

// To is the end of the window: 00:00 UTC of the day after its last.
func (w UsageWindow) To() time.Time { return w.From.AddDate(0, 0, w.Days) }

// Fill returns the window's history from counts, the days and buckets a
// store found something for (each with Day any instant of its UTC day;
// a count outside the window or of another bucket is ignored): one entry
// per day and bucket, oldest first and, within a day, in the window's
// bucket order, zeros where counts has none.
func (w UsageWindow) Fill(counts []DailyUsage) []DailyUsage {
	type key struct {
		day    string
		bucket string
	}
	got := make(map[key]DailyUsage, len(counts))
	for _, c := range counts {
		got[key{c.Day.UTC().Format(time.DateOnly), c.Bucket}] = c
	}
	out := make([]DailyUsage, 0, w.Days*len(w.Buckets))
	for d := range w.Days {
		day := w.From.AddDate(0, 0, d)
		ds := day.Format(time.DateOnly)
		for _, b := range w.Buckets {
			u := got[key{ds, b}]
			u.Day, u.Bucket = day, b
			out = append(out, u)
		}
	}
	return out
}
