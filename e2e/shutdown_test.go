package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestGracefulShutdown sends SIGTERM while a client is still creating jobs
// and the worker has a backlog: the server must exit 0 within its shutdown
// timeout, leave no job holding a lease (in-flight work finished or
// released), and lose no job it answered 202 for; a restart completes them
// all, each exactly once.
func TestGracefulShutdown(t *testing.T) {
	needSignals(t)
	t.Parallel()
	const shutdownTimeout = 5 * time.Second
	db := filepath.Join(t.TempDir(), "graceful.db")
	account, key := newAccountKey(t, db, "reports:create,reports:read")
	flags := []string{"--workers", "1", "--job-lease", "30s", "--shutdown-timeout", shutdownTimeout.String(),
		"--faults", "report.generate=transient:first=1"}
	first := startServer(t, nil, serveArgs(db, flags...)...)

	// A client creates jobs until the server stops answering. Every 202 is
	// a promise the restart must keep.
	var (
		mu       sync.Mutex
		accepted []string
		badResp  []string
	)
	enough := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for i := 0; ; i++ {
			p := fixturePoints[i%len(fixturePoints)]
			r, err := first.try(key, http.MethodPost, jobsPath, map[string]float64{"latitude": p.lat, "longitude": p.lon})
			if err != nil {
				return // the listener is gone
			}
			var j jobView
			mu.Lock()
			if r.status == http.StatusAccepted && json.Unmarshal(r.body, &j) == nil && j.JobID != "" {
				accepted = append(accepted, j.JobID)
			} else {
				// A request cut off by the shutdown may fail at the
				// transport level, but any answer must be a real one.
				badResp = append(badResp, string(r.body))
			}
			k := len(accepted)
			mu.Unlock()
			if k == 20 {
				close(enough)
			}
			if i > 2000 {
				return
			}
		}
	}()
	select {
	case <-enough:
	case <-stopped:
		t.Fatal("the client stopped before creating 20 jobs")
	case <-time.After(30 * time.Second):
		t.Fatal("creating 20 jobs took over 30 s")
	}

	// Let the worker complete a few jobs, so the stop meets jobs in every
	// state, with the client still sending.
	ro := openRO(t, db)
	waitCounts(t, ro, 30*time.Second, "a few jobs to complete", func(c map[string]int) bool { return c["completed"] >= 3 })

	code, took := first.signal(syscall.SIGTERM)
	if code != 0 {
		t.Errorf("SIGTERM: exit code %d, want 0", code)
	}
	if took > shutdownTimeout+time.Second {
		t.Errorf("SIGTERM: exit took %s, over the %s shutdown timeout", took, shutdownTimeout)
	}
	select {
	case <-stopped:
	case <-time.After(exitTimeout):
		t.Fatal("the client did not notice the server had stopped")
	}
	mu.Lock()
	ids := slices.Clone(accepted)
	mu.Unlock()
	if len(badResp) > 0 {
		t.Errorf("%d create requests got a non-202 answer during shutdown, first: %s", len(badResp), badResp[0])
	}
	logged := strings.Join(first.log.Lines(), "\n")
	if !strings.Contains(logged, `"msg":"stopped"`) {
		t.Errorf("no \"stopped\" log record after SIGTERM")
	}

	after := statusCounts(t, ro)
	t.Logf("SIGTERM after %d accepted jobs; exit %d in %s; jobs by status then: %v", len(ids), code, took.Round(time.Millisecond), after)
	if after["processing"] != 0 {
		t.Errorf("%d jobs still hold a lease after a graceful stop: %v", after["processing"], strandedJobs(t, ro))
	}
	if after["queued"] == 0 {
		t.Errorf("no job was left queued at SIGTERM (%v): the test did not exercise shutdown with a backlog", after)
	}
	if after["failed"] != 0 {
		t.Errorf("jobs failed: %v", after)
	}

	second := startServer(t, nil, serveArgs(db, flags...)...)
	waitCounts(t, ro, 30*time.Second, "every job to complete after the restart", func(c map[string]int) bool {
		return c["completed"] == len(ids) || c["failed"] > 0
	})
	checkExactlyOnce(t, ro, second, key, account, ids)
}
