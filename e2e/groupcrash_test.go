package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestCrashDuringGroupCommits kills the server with SIGKILL while 16
// clients create jobs as fast as it answers, each request with its own
// Idempotency-Key, so that the kill lands in the middle of commits shared
// by many requests while the workers complete jobs (docs/operations.md, The
// database file: writes commit in groups). After a restart on the same
// file:
//   - every job answered 202 is there, with the id the client was given
//     (a 202 is only sent after the group's commit);
//   - sending every request again with its key, answered or not, gives one
//     job per key: the id already given, or for a request cut off by the
//     kill either its job (it had committed) or a new one, never two;
//   - every job completes exactly once with exactly one report.
func TestCrashDuringGroupCommits(t *testing.T) {
	needSignals(t)
	t.Parallel()
	db := filepath.Join(t.TempDir(), "groupcrash.db")
	account, key := newAccountKey(t, db, "reports:create,reports:read")
	flags := []string{"--workers", "2", "--job-lease", "1s"}
	first := startServer(t, nil, serveArgs(db, flags...)...)

	const clients = 16
	type sent struct {
		key   string
		point point
		jobID string // "" when the kill cut the request off
	}
	var (
		mu       sync.Mutex
		requests []sent
		wg       sync.WaitGroup
		stop     = make(chan struct{})
		accepted = make(chan struct{}, 1<<16)
	)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s := sent{key: fmt.Sprintf("crash-%d-%d", c, i), point: fixturePoints[(c+i)%len(fixturePoints)]}
				status, id, err := createWithKey(first.base, key, s.key, s.point)
				if err == nil && status != http.StatusAccepted {
					t.Errorf("create %s: status %d", s.key, status)
					return
				}
				s.jobID = id
				mu.Lock()
				requests = append(requests, s)
				mu.Unlock()
				if err != nil {
					return // the server is gone
				}
				accepted <- struct{}{}
			}
		}()
	}
	// Kill once a few hundred creations are answered, with the clients
	// still sending.
	for range 300 {
		select {
		case <-accepted:
		case <-time.After(30 * time.Second):
			t.Fatal("creations stalled before the kill")
		}
	}
	first.kill()
	close(stop)
	wg.Wait()

	ro := openRO(t, db)
	stored := dbJobs(t, ro)
	answered, cut := 0, 0
	for _, s := range requests {
		if s.jobID == "" {
			cut++
			continue
		}
		answered++
		if _, ok := stored[s.jobID]; !ok {
			t.Errorf("job %s (key %s) was answered 202 but is not in the database after the kill", s.jobID, s.key)
		}
	}
	t.Logf("SIGKILL after %d creations answered, %d cut off; %d jobs in the file", answered, cut, len(stored))

	second := startServer(t, nil, serveArgs(db, flags...)...)
	ids := map[string]bool{}
	for _, s := range requests {
		status, id, err := createWithKey(second.base, key, s.key, s.point)
		if err != nil || status != http.StatusAccepted {
			t.Fatalf("create %s again: %d, %v", s.key, status, err)
		}
		if s.jobID != "" && id != s.jobID {
			t.Errorf("key %s: job %s after the restart, %s before", s.key, id, s.jobID)
		}
		if ids[id] {
			t.Errorf("job %s given for two keys", id)
		}
		ids[id] = true
	}
	waitCounts(t, ro, 60*time.Second, "every job to complete after the restart", func(c map[string]int) bool {
		return c["completed"] == len(ids) || c["failed"] > 0
	})
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	checkExactlyOnce(t, ro, second, key, account, list)
	for id, k := range completedTransitions(first.log, second.log) {
		if k > 1 {
			t.Errorf("job %s logged as completed %d times", id, k)
		}
	}
	if code, took := second.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d after %s, want 0", code, took)
	}
}

// createWithKey posts one job creation with an Idempotency-Key and returns
// the status and the job id; err is a transport error (the server died).
func createWithKey(base, apiKey, idemKey string, p point) (status int, jobID string, err error) {
	body, _ := json.Marshal(map[string]float64{"latitude": p.lat, "longitude": p.lon})
	req, err := http.NewRequest(http.MethodPost, base+jobsPath, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Idempotency-Key", idemKey)
	res, err := httpClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, "", err
	}
	var v struct {
		JobID string `json:"jobId"`
	}
	if res.StatusCode == http.StatusAccepted {
		if err := json.Unmarshal(b, &v); err != nil || v.JobID == "" {
			return res.StatusCode, "", fmt.Errorf("202 without a job id: %s", b)
		}
	}
	return res.StatusCode, v.JobID, nil
}
