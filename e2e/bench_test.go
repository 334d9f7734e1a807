package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkCreateToCompleted measures, under light load (one job at a
// time), the time from sending POST .../report-jobs to the first GET of the
// job that reads completed, polling the job back to back. It reports the
// median as p50-ms (the target: at most 5 ms since group commit, 20 ms
// before it), the 95th percentile as p95-ms and the 99th as
// p99-ms. Use -benchtime 200x or more for a p99 worth reading. The server uses the real data sets when
// LOCRISK_DATA_DIR is set (a realistic engine), else the fixtures.
//
//	go test -run '^$' -bench CreateToCompleted -benchtime 300x ./e2e
func BenchmarkCreateToCompleted(b *testing.B) {
	dataArgs, data := []string{"--data-dir", fixtureData}, "fixtures"
	if os.Getenv("LOCRISK_BENCH_REAL") != "" {
		dataArgs, data = nil, "the built-in data"
	}
	db := filepath.Join(b.TempDir(), "bench.db")
	_, key := newAccountKey(b, db, "reports:create,reports:read")
	srv := startServer(b, nil, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-format", "json"}, dataArgs...)...)
	b.Logf("engine on %s", data)

	body := map[string]float64{"latitude": 37.77, "longitude": -122.42}
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		r, err := srv.try(key, http.MethodPost, jobsPath, body)
		if err != nil || r.status != http.StatusAccepted {
			b.Fatalf("create: %v %d %s", err, r.status, r.body)
		}
		var j jobView
		if err := json.Unmarshal(r.body, &j); err != nil {
			b.Fatal(err)
		}
		for deadline := start.Add(10 * time.Second); j.Status != "completed"; {
			if j.Status == "failed" || time.Now().After(deadline) {
				b.Fatalf("job %s: %s (%+v)", j.JobID, j.Status, j.Error)
			}
			r, err = srv.try(key, http.MethodGet, jobsPath+"/"+j.JobID, nil)
			if err != nil || r.status != http.StatusOK {
				b.Fatalf("get: %v %d %s", err, r.status, r.body)
			}
			if err := json.Unmarshal(r.body, &j); err != nil {
				b.Fatal(err)
			}
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	ms := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.95), "p95-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}
