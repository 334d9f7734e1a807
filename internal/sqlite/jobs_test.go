package sqlite

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

func apiJob(acct string) locrisk.NewJob {
	return locrisk.NewJob{AccountID: acct, Bucket: locrisk.BucketAPI, Latitude: 37.77, Longitude: -122.42}
}

func countRows(t testing.TB, s *Store, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.db.GetContext(context.Background(), &n, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func TestListJobsBadCursor(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	good := locrisk.EncodeCursor(t0, "job_0123456789abcdefghijKLMN")
	if _, _, err := s.ListJobs(ctx, a.ID, "", 10, good); err != nil {
		t.Fatalf("well-formed cursor: %v", err)
	}
	for _, c := range []string{
		"!!!",
		good + "=",
		enc("v1\x002026-11-22T10:00:00.000Z"),
		enc("v2\x002026-11-22T10:00:00.000Z\x00job_0123456789abcdefghijKLMN"),
		enc("v1\x002026-11-22\x00job_0123456789abcdefghijKLMN"),
		enc("v1\x002026-11-22T10:00:00.000Z\x00bat_0123456789abcdefghijKLMN"),
		enc("v1\x002026-11-22T10:00:00.000Z\x00job_' OR 1=1 --"),
	} {
		if _, _, err := s.ListJobs(ctx, a.ID, "", 10, c); !errors.Is(err, locrisk.ErrBadCursor) {
			t.Errorf("cursor %q: err = %v, want ErrBadCursor", c, err)
		}
	}
}

// makeJobIn moves a fresh job of acct to the given status through the
// scheduler-side calls and returns it.
func makeJobIn(t *testing.T, s *Store, acct, status string, transient bool) locrisk.Job {
	t.Helper()
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, apiJob(acct), t0)
	if err != nil {
		t.Fatal(err)
	}
	if status == locrisk.StatusQueued {
		return j
	}
	c, ok, err := s.ClaimJob(ctx, "w", 100*time.Hour, t0)
	if err != nil || !ok || c.ID != j.ID {
		t.Fatalf("claim %s: %v %v %v", j.ID, c.ID, ok, err)
	}
	switch status {
	case locrisk.StatusProcessing:
		return c
	case locrisk.StatusCompleted:
		c, err = s.CompleteJob(ctx, j.ID, "w", locrisk.Report{DataVersion: "v", Body: []byte(`{}`)}, t0)
	case locrisk.StatusFailed:
		c, err = s.FailJob(ctx, j.ID, "w", "generation_failed", "failed", transient, t0)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The unique job_id on reports is the last line of defence: even a second
// report with a fresh id for a completed job is refused.
func TestOneReportPerJob(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	j := makeJobIn(t, s, a.ID, locrisk.StatusCompleted, false)
	second, err := s.encodeReport(locrisk.Report{ID: "11111111-1111-4111-8111-111111111111", JobID: j.ID, AccountID: a.ID, GeneratedUTC: t0, Body: []byte("{}")})
	if err != nil {
		t.Fatal(err)
	}
	err = s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error { return insertReport(ctx, tx, second) })
	if err == nil {
		t.Error("a second report for one job was stored")
	}
}

func TestJobFinalHooks(t *testing.T) {
	var calls []string
	fail := false
	var s *Store
	hook := func(ctx context.Context, tx locrisk.Tx, job locrisk.Job) error {
		// The hook sees the job's final state inside the transaction: the
		// job is the row the transition's UPDATE returned, and the stored
		// row is not committed yet (a read beside the transaction still
		// finds the job processing).
		var status string
		if err := s.db.GetContext(ctx, &status, `SELECT status FROM report_jobs WHERE id = ?`, job.ID); err != nil {
			return err
		}
		calls = append(calls, job.Status+"/"+status)
		if fail {
			return errors.New("outbox full")
		}
		return nil
	}
	s = newStore(t, Options{OnJobFinal: []locrisk.JobFinalHook{hook}})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	makeJobIn(t, s, a.ID, locrisk.StatusCompleted, false)
	makeJobIn(t, s, a.ID, locrisk.StatusFailed, true)
	if want := []string{"completed/processing", "failed/processing"}; !slices.Equal(calls, want) {
		t.Errorf("hook calls %v, want %v", calls, want)
	}
	// A failing hook rolls the transition back: no report, job still held.
	fail = true
	j := makeJobIn(t, s, a.ID, locrisk.StatusProcessing, false)
	if _, err := s.CompleteJob(ctx, j.ID, "w", locrisk.Report{Body: []byte("{}")}, t0); err == nil {
		t.Fatal("complete succeeded although its hook failed")
	}
	got, _ := s.GetJob(ctx, a.ID, j.ID)
	if got.Status != locrisk.StatusProcessing || countRows(t, s, `SELECT COUNT(*) FROM reports WHERE job_id = ?`, j.ID) != 0 {
		t.Errorf("after a failed hook: status %s", got.Status)
	}
}

// Every query of the claim reads an index in the claim's order: no table
// scan and no sort, whatever the queue holds. The only scan allowed is the
// walk over the waiting accounts' turns, which stops at the first account
// with a runnable job.
func TestClaimQueryPlans(t *testing.T) {
	s := newStore(t, Options{})
	tests := []struct {
		name, query string
		uses        []string // indexes the plan must use
	}{
		{"precheck", claimPrecheck, []string{"job_queue_accounts_turns", "report_jobs_queued", "report_jobs_leases"}},
		{"expired lease", claimExpired, []string{"report_jobs_leases"}},
		{"next turn", claimNextTurn, []string{"job_queue_accounts_turns", "report_jobs_queued"}},
		{"take turn", claimTakeTurn, []string{"job_queue_accounts_by_claim"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := queryPlan(t, s, tt.query, "x", "x")
			all := strings.Join(plan, "\n")
			for _, p := range plan {
				if strings.Contains(p, "TEMP B-TREE") || (strings.HasPrefix(p, "SCAN ") && p != "SCAN q USING INDEX job_queue_accounts_turns" && p != "SCAN CONSTANT ROW") {
					t.Errorf("plan step %q:\n%s", p, all)
				}
			}
			for _, ix := range tt.uses {
				if !slices.ContainsFunc(plan, func(p string) bool {
					return strings.HasSuffix(p, "INDEX "+ix) || strings.Contains(p, "INDEX "+ix+" ")
				}) {
					t.Errorf("plan does not use %s:\n%s", ix, all)
				}
			}
		})
	}
}

// queryPlan returns the detail column of EXPLAIN QUERY PLAN for q with
// args bound, one step per element.
func queryPlan(t *testing.T, s *Store, q string, args ...any) []string {
	t.Helper()
	rows, err := s.db.QueryxContext(context.Background(), `EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// A database migrated from version 3 with jobs already queued serves them
// in turns like new ones.
func TestClaimAfterMigration(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	a, b := newAccount(t, s, 100), newAccount(t, s, 100)
	fillAt(t, s, a.ID, 5, t0)
	fillAt(t, s, b.ID, 1, t0.Add(time.Second))
	// Back to version 3: the turns are gone; migration 004 rebuilds them.
	// A version 3 file has report_jobs_runnable (migration 011 drops it),
	// which 004's backfill reads the queued jobs by, oldest runnable first.
	undoMigration7(t, s)
	if _, err := s.db.ExecContext(ctx, `DROP TABLE job_queue_accounts; DROP INDEX report_jobs_queued;
		DROP INDEX report_jobs_leases; DROP TRIGGER report_jobs_queue_insert; DROP TRIGGER report_jobs_queue_update;
		DROP TRIGGER report_jobs_dequeue_update; DROP TRIGGER report_jobs_dequeue_delete;
		CREATE INDEX report_jobs_runnable ON report_jobs(status, run_after_utc);
		PRAGMA user_version = 3`); err != nil {
		t.Fatal(err)
	}
	ms, err := embeddedMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.migrate(ctx, ms); err != nil {
		t.Fatal(err)
	}
	var accts []string
	for range 3 {
		c, ok, err := s.ClaimJob(ctx, "w", time.Minute, t0.Add(time.Minute))
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		accts = append(accts, c.AccountID)
	}
	if want := []string{a.ID, b.ID, a.ID}; !slices.Equal(accts, want) {
		t.Errorf("claims after the migration went to %v, want %v", accts, want)
	}
}

// has_queued (migration 004) says whether the account has a queued job
// after every transition in and out of the queue, including a row
// deleted: a stale 0 would leave its jobs unclaimed, a stale 1 would make
// every claim look at it.
func TestQueueTurnsFollowJobs(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 100)
	var job locrisk.Job
	steps := []struct {
		name string
		do   func() error
		want int
	}{
		{"created", func() (err error) { job, _, err = s.CreateJob(ctx, apiJob(a.ID), t0); return err }, 1},
		{"claimed", claimed(t, s, &job, "w"), 0},
		{"released", func() error { return s.ReleaseJob(ctx, job.ID, "w", t0) }, 1},
		{"claimed again", claimed(t, s, &job, "w"), 0},
		{"retry later", func() error {
			return s.RetryLater(ctx, job.ID, "w", t0.Add(time.Minute), "generation_failed", "x", t0)
		}, 1},
		{"claimed after backoff", claimed(t, s, &job, "w"), 0},
		{"failed", func() error { _, err := s.FailJob(ctx, job.ID, "w", "generation_failed", "x", true, t0); return err }, 0},
		{"retried by hand", func() error { _, err := s.RetryJob(ctx, a.ID, job.ID, t0); return err }, 1},
		{"deleted", func() error {
			_, err := s.db.ExecContext(ctx, `DELETE FROM report_jobs WHERE id = ?`, job.ID)
			return err
		}, 0},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := countRows(t, s, `SELECT has_queued FROM job_queue_accounts WHERE account_id = ?`, a.ID); got != st.want {
			t.Errorf("after %s: has_queued %d, want %d", st.name, got, st.want)
		}
	}
}

// claimed is a step that claims the next job as owner, late enough for
// any backoff, and stores it in job.
func claimed(t *testing.T, s *Store, job *locrisk.Job, owner string) func() error {
	return func() error {
		j, ok, err := s.ClaimJob(context.Background(), owner, time.Minute, t0.Add(time.Hour))
		if err == nil && !ok {
			err = errors.New("nothing claimed")
		}
		*job = j
		return err
	}
}

// fillAt queues n jobs for the account, created and runnable at at.
func fillAt(t *testing.T, s *Store, accountID string, n int, at time.Time) {
	t.Helper()
	err := s.WithTx(context.Background(), func(ctx context.Context, tx *sqlx.Tx) error {
		for range n {
			j := locrisk.Job{ID: ids.New(ids.Job), AccountID: accountID, Bucket: locrisk.BucketBulk, Latitude: 30, Longitude: -90,
				Status: locrisk.StatusQueued, RunAfterUTC: at, CreatedUTC: at, UpdatedUTC: at}
			if err := insertJob(context.Background(), tx, j); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
