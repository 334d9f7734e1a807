package e2e

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestCrashRecovery kills the server with SIGKILL while jobs are in every
// state, restarts it on the same file, and checks that every job completes
// exactly once with exactly one report. One worker, a 1 s lease and a
// fault that fails every job's first attempt (200 ms backoff before the
// second) spread the work out so the kill lands mid-way; the test kills as
// soon as it sees a job in `processing`, so usually a job is stranded with
// a live lease and has to be reclaimed after the lease expires.
func TestCrashRecovery(t *testing.T) {
	needSignals(t)
	t.Parallel()
	const n = 60
	db := filepath.Join(t.TempDir(), "crash.db")
	account, key := newAccountKey(t, db, "reports:create,reports:read")
	flags := []string{"--workers", "1", "--job-lease", "1s", "--job-max-attempts", "5",
		"--faults", "report.generate=transient:first=1"}

	first := startServer(t, nil, serveArgs(db, flags...)...)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = first.createJob(t, key, fixturePoints[i%len(fixturePoints)])
	}

	// Kill once some but not all jobs are done, preferably while one is
	// being processed. Reading the file tightly is cheap next to the
	// worker's write transactions.
	ro := openRO(t, db)
	var before map[string]int
	deadline := time.Now().Add(30 * time.Second)
	for {
		c := statusCounts(t, ro)
		if c["completed"] >= n/4 && (c["processing"] > 0 || c["completed"] >= 3*n/4) {
			break
		}
		if c["completed"] == n {
			t.Fatalf("all %d jobs completed before the test could kill the server: %v", n, c)
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs did not progress: %v", c)
		}
		time.Sleep(time.Millisecond)
	}
	first.kill()
	before = statusCounts(t, ro)
	if before["completed"] == n {
		t.Fatalf("the kill came too late: every job had already completed (%v)", before)
	}
	if before["failed"] > 0 {
		t.Fatalf("jobs failed before the kill: %v", before)
	}
	stranded := strandedJobs(t, ro)
	t.Logf("SIGKILL with jobs by status %v; %d stranded in processing with a lease", before, len(stranded))
	preAttempts := map[string]int{}
	for id, j := range dbJobs(t, ro) {
		preAttempts[id] = j.attempts
	}

	// A fresh process on the same file finishes the rest: queued jobs at
	// once, stranded ones once their lease has expired.
	restarted := time.Now()
	second := startServer(t, nil, serveArgs(db, flags...)...)
	waitCounts(t, ro, 30*time.Second, "every job to complete after the restart", func(c map[string]int) bool {
		return c["completed"] == n || c["failed"] > 0
	})
	t.Logf("after the restart, every job completed within %s", time.Since(restarted).Round(time.Millisecond))
	for _, id := range stranded {
		j := second.getJob(t, key, id)
		if j.Status != "completed" || j.Attempts <= preAttempts[id] {
			t.Errorf("stranded job %s: status %s, attempts %d (was %d at the kill); want completed by a new attempt",
				id, j.Status, j.Attempts, preAttempts[id])
		}
	}
	checkExactlyOnce(t, ro, second, key, account, ids)

	// The logs of both runs agree: no job was completed twice.
	for id, k := range completedTransitions(first.log, second.log) {
		if k > 1 {
			t.Errorf("job %s logged as completed %d times", id, k)
		}
	}
	code, took := second.signal(syscall.SIGTERM)
	if code != 0 {
		t.Errorf("after recovery, SIGTERM: exit %d after %s, want 0", code, took)
	}
}

// strandedJobs lists the jobs left in processing, sorted.
func strandedJobs(tb testing.TB, db *sql.DB) []string {
	tb.Helper()
	var out []string
	for id, j := range dbJobs(tb, db) {
		if j.status == "processing" {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// checkExactlyOnce asserts that the database holds exactly the jobs ids,
// each completed with exactly one report of its own, and that the API
// agrees: every job reads completed and its report resolves.
func checkExactlyOnce(t *testing.T, ro *sql.DB, s *server, key, account string, ids []string) {
	t.Helper()
	jobs := dbJobs(t, ro)
	if len(jobs) != len(ids) {
		t.Errorf("database holds %d jobs, want %d", len(jobs), len(ids))
	}
	reportIDs := map[string]bool{}
	for _, id := range ids {
		j, ok := jobs[id]
		switch {
		case !ok:
			t.Errorf("job %s is missing from the database", id)
			continue
		case j.status != "completed":
			t.Errorf("job %s: status %s (error %v), want completed", id, j.status, j.errCode.String)
		case j.reports != 1:
			t.Errorf("job %s has %d reports rows, want 1", id, j.reports)
		case !j.reportID.Valid || j.reportID.String != j.reportRowID.String:
			t.Errorf("job %s: report_id %v, but its reports row is %v", id, j.reportID, j.reportRowID)
		case j.reportAccount.String != account || j.accountID.String != account:
			t.Errorf("job %s: account %v, report account %v, want %s", id, j.accountID, j.reportAccount, account)
		case j.leaseOwner.Valid:
			t.Errorf("completed job %s still has lease owner %s", id, j.leaseOwner.String)
		}
		if reportIDs[j.reportID.String] {
			t.Errorf("report %s belongs to two jobs", j.reportID.String)
		}
		reportIDs[j.reportID.String] = true
	}
	var reports, distinctJobs int
	if err := ro.QueryRow(`SELECT count(*), count(DISTINCT job_id) FROM reports`).Scan(&reports, &distinctJobs); err != nil {
		t.Fatalf("count reports: %v", err)
	}
	if reports != len(ids) || distinctJobs != len(ids) {
		t.Errorf("reports table: %d rows for %d distinct jobs, want %d and %d", reports, distinctJobs, len(ids), len(ids))
	}

	// The API view of the same jobs, a few requests at a time.
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, id := range ids {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			// Errors only: t.Fatal may not be called from this goroutine.
			r, err := s.try(key, http.MethodGet, jobsPath+"/"+id, nil)
			var j jobView
			if err == nil && r.status == http.StatusOK {
				err = json.Unmarshal(r.body, &j)
			}
			if err != nil || r.status != http.StatusOK {
				t.Errorf("GET job %s: %v %d %s", id, err, r.status, r.body)
				return
			}
			if j.Status != "completed" || j.Result == nil || j.Result.ReportID == "" {
				t.Errorf("GET job %s: status %s, result %+v", id, j.Status, j.Result)
				return
			}
			if want := jobs[id].reportID.String; j.Result.ReportID != want {
				t.Errorf("GET job %s: reportId %s, database says %s", id, j.Result.ReportID, want)
			}
			r, err = s.try(key, http.MethodGet, j.Result.ReportURL, nil)
			var rep struct{ ReportID, JobID string }
			if err == nil && r.status == http.StatusOK {
				err = json.Unmarshal(r.body, &rep)
			}
			if err != nil || r.status != http.StatusOK {
				t.Errorf("GET %s: %v %d %s", j.Result.ReportURL, err, r.status, r.body)
				return
			}
			if rep.ReportID != j.Result.ReportID || rep.JobID != id {
				t.Errorf("GET %s: reportId %s jobId %s, want %s and %s", j.Result.ReportURL, rep.ReportID, rep.JobID, j.Result.ReportID, id)
			}
		})
	}
	wg.Wait()
}
