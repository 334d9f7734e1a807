package store

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCreateJob measures the durable create (idempotency lookup,
// quota count, insert job, remember key) with parallel callers.
func BenchmarkCreateJob(b *testing.B) {
	for _, par := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("callers=%d", par), func(b *testing.B) {
			s := newStore(b, Options{})
			a := newAccount(b, s, 1<<30)
			var n atomic.Int64
			b.SetParallelism(par)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					j := apiJob(a.ID)
					j.IdempotencyKey = fmt.Sprintf("k%d", n.Add(1))
					j.RequestHash = "h"
					if _, _, err := s.CreateJob(context.Background(), j, t0); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkClaimComplete measures one job's scheduler-side life: claim,
// store a report, complete.
func BenchmarkClaimComplete(b *testing.B) {
	s := newStore(b, Options{})
	ctx := context.Background()
	a := newAccount(b, s, 1<<30)
	body := make([]byte, 8<<10)
	for i := range body {
		body[i] = 'x'
	}
	for b.Loop() {
		b.StopTimer()
		if _, _, err := s.CreateJob(ctx, apiJob(a.ID), t0); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		j, ok, err := s.ClaimJob(ctx, "w", time.Minute, t0)
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
		if _, err := s.CompleteJob(ctx, j.ID, "w", Report{Body: body}, t0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateJobLatency reports the latency distribution of creates
// from 32 concurrent callers, the shape of a burst of API requests. The
// in-process write queue keeps the tail close to 32 commits' time; without
// it SQLite's sleeping busy handler let single calls wait over a second.
func BenchmarkCreateJobLatency(b *testing.B) {
	s := newStore(b, Options{})
	a := newAccount(b, s, 1<<30)
	const callers = 32
	var mu sync.Mutex
	var lat []time.Duration
	var next atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				j := apiJob(a.ID)
				j.IdempotencyKey = fmt.Sprintf("k%d", i)
				j.RequestHash = "h"
				start := time.Now()
				if _, _, err := s.CreateJob(context.Background(), j, t0); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(start)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	}
}
