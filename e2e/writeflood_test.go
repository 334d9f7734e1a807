package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestWriteFlood is the load check of docs/operations.md (Limits and defaults, The
// database file): one server alone, 1,500 job creations sent 120 at a time
// (LOCRISK_LOAD_CREATES changes the total). No other process touches the
// database, so none may be answered database_busy; it logs the statuses
// and the latency. The server's workers generate the reports meanwhile,
// on the real data sets when LOCRISK_DATA_DIR is set (then they compete
// for the CPU as in production), else on the fixtures. Opt-in, some
// seconds:
//
//	LOCRISK_LOAD=1 LOCRISK_DATA_DIR=... go test -count=1 ./e2e -run TestWriteFlood -v
func TestWriteFlood(t *testing.T) {
	if os.Getenv("LOCRISK_LOAD") != "1" {
		t.Skip("need LOCRISK_LOAD=1: the write flood")
	}
	total, inFlight := 1500, 120
	if v := os.Getenv("LOCRISK_LOAD_CREATES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("LOCRISK_LOAD_CREATES=%q", v)
		}
		total = n
	}
	db := filepath.Join(t.TempDir(), "flood.db")
	_, key := newAccountKey(t, db, "reports:create,reports:read")
	dataArgs := []string{"--data-dir", fixtureData}
	if os.Getenv("LOCRISK_BENCH_REAL") != "" {
		dataArgs = nil // the built-in data
	}
	srv := startServer(t, nil, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-format", "json"}, dataArgs...)...)

	type result struct {
		status int
		code   string
		took   time.Duration
	}
	results := make([]result, total)
	body := map[string]float64{"latitude": 37.77, "longitude": -122.42}
	sem := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range total {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			t0 := time.Now()
			r, err := srv.try(key, http.MethodPost, jobsPath, body)
			res := result{status: r.status, took: time.Since(t0)}
			if err != nil {
				res.code = "transport: " + err.Error()
			} else if r.status != http.StatusAccepted {
				var e struct {
					Error struct{ Code string } `json:"error"`
				}
				_ = json.Unmarshal(r.body, &e)
				res.code = e.Error.Code
			}
			results[i] = res
		})
	}
	wg.Wait()
	elapsed := time.Since(start)

	codes := map[string]int{}
	var took []time.Duration
	for _, r := range results {
		codes[strconv.Itoa(r.status)+" "+r.code]++
		took = append(took, r.took)
	}
	slices.Sort(took)
	t.Logf("%d creations, %d at a time, in %s: %v; latency p50 %s, p99 %s, max %s", total, inFlight,
		elapsed.Round(time.Millisecond), codes, took[len(took)/2].Round(time.Millisecond),
		took[len(took)*99/100].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
	if n := codes["503 database_busy"]; n > 0 {
		t.Errorf("%d creations answered database_busy with no other process on the database", n)
	}
	if codes["202 "] != total {
		t.Errorf("not every creation was accepted: %v", codes)
	}
}
