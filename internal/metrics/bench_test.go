package metrics_test

import (
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/metrics"
)

// BenchmarkObserve is what the metrics add to each request, job attempt
// and write, from all cores at once (go test -bench . -run '^$'
// ./internal/metrics). With metrics off the observers are nil and not called.
func BenchmarkObserve(b *testing.B) {
	m := metrics.New(metrics.Config{Logger: quiet()})
	for _, bb := range []struct {
		name string
		fn   func()
	}{
		{"request", func() { m.ObserveRequest("/api/v1/location-risk/report-jobs/{jobId}", "GET", 200, time.Millisecond) }},
		{"job", func() { m.JobStarted(false); m.JobFinished("completed", time.Millisecond) }},
		{"write-wait", func() { m.WriteWait(time.Microsecond) }},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					bb.fn()
				}
			})
		})
	}
}
