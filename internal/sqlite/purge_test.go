package sqlite

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/sqlpurge"
	"github.com/locrisk/locrisk/internal/storetest"
)

const day = 24 * time.Hour

// finishJob creates a job of acct at created and brings it to status
// (completed or failed) at ended, with a report body when completed.
func finishJob(t testing.TB, s *Store, acct string, created, ended time.Time, status string, body []byte) locrisk.Job {
	t.Helper()
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, apiJob(acct), created)
	if err != nil {
		t.Fatal(err)
	}
	c, ok, err := s.ClaimJob(ctx, "w", time.Hour, created)
	if err != nil || !ok || c.ID != j.ID {
		t.Fatalf("claim %s: %v %v %v", j.ID, c.ID, ok, err)
	}
	if status == locrisk.StatusCompleted {
		_, err = s.CompleteJob(ctx, j.ID, "w", locrisk.Report{DataVersion: "v", Body: body}, ended)
	} else {
		_, err = s.FailJob(ctx, j.ID, "w", "generation_failed", "failed", false, ended)
	}
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// jobEvent records a webhook event of job for the endpoints at at, as the
// outbox does, and sets its deliveries to status.
func jobEvent(t testing.TB, s *Store, acct, jobID, status string, at time.Time, endpoints ...string) {
	t.Helper()
	ctx := context.Background()
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		ds, err := txOps{tx}.InsertWebhookEvent(ctx, locrisk.WebhookEvent{ID: ids.New(ids.Event), AccountID: acct, Type: evFailed,
			JobID: jobID, Body: []byte(`{}`), CreatedUTC: at}, endpoints)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if status == locrisk.DeliveryPending {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = 1, next_attempt_utc = NULL,
				last_attempt_utc = ?, delivered_utc = CASE WHEN ? = 'succeeded' THEN ? END WHERE id = ?`,
				status, FormatTime(at), status, FormatTime(at), d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// retentionSnapshot is what the API reads about the retained window: the
// 90 days of usage history and the 168 hours of the operations summary.
type retentionSnapshot struct {
	History []locrisk.DailyUsage
	Ops     locrisk.OpsSummary
	Stats   locrisk.RequestCounts
}

func snapshot(t testing.TB, s *Store, acct string, now time.Time) retentionSnapshot {
	t.Helper()
	ctx := context.Background()
	var r retentionSnapshot
	var err error
	today := now.UTC().Truncate(day)
	if r.History, err = s.UsageHistory(ctx, acct, today.Add(-89*day), 90, nil); err != nil {
		t.Fatal(err)
	}
	if r.Ops, err = s.OpsSummary(ctx, acct, now.Add(-168*time.Hour), now, 20); err != nil {
		t.Fatal(err)
	}
	if r.Stats, err = s.RequestStats(ctx, acct, now.Add(-168*time.Hour).Truncate(time.Hour), now.Truncate(time.Hour)); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPurge(t *testing.T) {
	ctx := context.Background()
	now := t0
	clock := now.Add(-400 * day)
	s := newStore(t, Options{Now: func() time.Time { return clock }})
	a := newAccount(t, s, 1<<20)
	retention := 180 * day
	before := now.Add(-retention)
	old := now.Add(-300 * day)
	recent := now.Add(-3 * day)

	// Endpoints: one active; one disabled long ago with nothing left that
	// refers to it (goes); one disabled long ago whose deliveries of a
	// retained job refer to it (stays).
	active := newEndpoint(t, s, a.ID, old)
	gone := newEndpoint(t, s, a.ID, old)
	referenced := newEndpoint(t, s, a.ID, old)
	for _, e := range []string{gone.ID, referenced.ID} {
		if err := s.DisableWebhookEndpoint(ctx, a.ID, e, old.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}

	// Old single jobs, completed and failed, with delivered events: they go.
	body := []byte(`{"report":"` + strings.Repeat("x", 2000) + `"}`)
	var goneJobs []string
	for i := range 20 {
		at := old.Add(time.Duration(i) * time.Hour)
		status := locrisk.StatusCompleted
		if i%4 == 0 {
			status = locrisk.StatusFailed
		}
		j := finishJob(t, s, a.ID, at, at.Add(time.Minute), status, body)
		jobEvent(t, s, a.ID, j.ID, locrisk.DeliverySucceeded, at.Add(2*time.Minute), active.ID)
		goneJobs = append(goneJobs, j.ID)
	}
	// An old job whose delivery is still pending stays, and so does the
	// disabled endpoint it was addressed to.
	pending := finishJob(t, s, a.ID, old, old.Add(time.Minute), locrisk.StatusFailed, nil)
	jobEvent(t, s, a.ID, pending.ID, locrisk.DeliveryPending, old.Add(2*time.Minute), referenced.ID)

	// Keys: revoked long ago and expired long ago go; the live one stays.
	revoked, _, err := s.CreateKey(ctx, locrisk.NewKey{AccountID: a.ID, Scopes: []string{locrisk.ScopeReportsRead}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeKey(ctx, revoked.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateKey(ctx, locrisk.NewKey{AccountID: a.ID, Scopes: []string{locrisk.ScopeReportsRead}, ExpiresIn: day}); err != nil {
		t.Fatal(err)
	}
	clock = now
	live, _, err := s.CreateKey(ctx, locrisk.NewKey{AccountID: a.ID, Scopes: []string{locrisk.ScopeReportsRead}})
	if err != nil {
		t.Fatal(err)
	}

	// Request statistics: an old hour goes, the retained ones stay.
	var stats []locrisk.HourStats
	for _, h := range []time.Time{old, now.Add(-100 * time.Hour), now.Add(-2 * time.Hour)} {
		stats = append(stats, locrisk.HourStats{AccountID: a.ID, Hour: h.Truncate(time.Hour),
			RequestCounts: locrisk.RequestCounts{Total: 3, Succeeded: 2, ClientErrors: 1, Latency: make([]int64, 4)}})
	}
	if err := s.AddRequestStats(ctx, stats); err != nil {
		t.Fatal(err)
	}

	// The retained window: jobs and deliveries of the last days, one
	// created just inside the 90 days of usage history, one still queued.
	var keptJobs []string
	for i, at := range []time.Time{now.Add(-89 * day), now.Add(-150 * time.Hour), recent, now.Add(-time.Hour)} {
		status := []string{locrisk.StatusCompleted, locrisk.StatusFailed}[i%2]
		j := finishJob(t, s, a.ID, at, at.Add(time.Minute), status, body)
		jobEvent(t, s, a.ID, j.ID, []string{locrisk.DeliverySucceeded, locrisk.DeliveryFailed}[i%2], at.Add(time.Hour), active.ID)
		keptJobs = append(keptJobs, j.ID)
	}
	// An old completed batch goes with its items and jobs; an old batch with
	// a job still queued stays, all of it.
	items := []locrisk.NewBatchItem{validItem("a", 40, -100), validItem("b", 41, -101), rejectedItem("c", "invalid_coordinates", nil, nil)}
	done, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: items}, old)
	if err != nil {
		t.Fatal(err)
	}
	open, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: items}, old)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range storetest.BatchItems(t, s, a.ID, done.ID) {
		if it.JobID != nil {
			completeBatchJob(t, s, *it.JobID, body, old.Add(time.Hour))
		}
	}
	openItems := storetest.BatchItems(t, s, a.ID, open.ID)
	completeBatchJob(t, s, *openItems[0].JobID, body, old.Add(time.Hour))

	queued, _, err := s.CreateJob(ctx, apiJob(a.ID), now)
	if err != nil {
		t.Fatal(err)
	}
	keptJobs = append(keptJobs, queued.ID, pending.ID)

	want := snapshot(t, s, a.ID, now)
	if want.Ops.Jobs.Completed == 0 || want.Ops.Jobs.Failed == 0 || want.Stats.Total == 0 {
		t.Fatalf("the retained window should not be empty: %+v", want)
	}
	allRows := func() map[string]int {
		m := map[string]int{}
		for _, tb := range []string{"report_jobs", "reports", "batches", "batch_items", "webhook_events", "webhook_deliveries",
			"webhook_endpoints", "api_keys", "request_stats", "quota_usage", "idempotency_keys"} {
			m[tb] = countRows(t, s, `SELECT COUNT(*) FROM `+tb)
		}
		return m
	}
	rowsBefore := allRows()

	policy := locrisk.PurgePolicy{Before: before, Now: now, Batch: 7}
	dry := policy
	dry.DryRun = true
	dc, err := s.Purge(ctx, dry)
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if got := allRows(); !reflect.DeepEqual(got, rowsBefore) {
		t.Errorf("dry run changed the tables: %v, was %v", got, rowsBefore)
	}

	c, err := s.Purge(ctx, policy)
	if err != nil {
		t.Fatalf("purge: %v", err)
	}
	if dc != c {
		t.Errorf("dry run counted %+v, the purge deleted %+v", dc, c)
	}
	wantCounts := locrisk.PurgeCounts{
		Jobs: 20 + 2, Reports: 15 + 2, Batches: 1, BatchItems: 3, Events: 20, Deliveries: 20,
		Endpoints: 1, Keys: 2, RequestStats: 1,
		// The month of the old jobs and batches, January 2026.
		QuotaCounters: 1,
	}
	if c != wantCounts {
		t.Errorf("purge deleted %+v\nwant %+v", c, wantCounts)
	}

	// Nothing the API reads about the retained window changed.
	if got := snapshot(t, s, a.ID, now); !reflect.DeepEqual(got, want) {
		t.Errorf("the retained window changed:\n got %+v\nwant %+v", got, want)
	}
	for _, id := range goneJobs {
		if _, err := s.GetJob(ctx, a.ID, id); err == nil {
			t.Errorf("old job %s is still there", id)
		}
	}
	for _, id := range keptJobs {
		if _, err := s.GetJob(ctx, a.ID, id); err != nil {
			t.Errorf("retained job %s: %v", id, err)
		}
	}
	if _, err := s.GetBatch(ctx, a.ID, done.ID); err == nil {
		t.Errorf("old completed batch still there")
	}
	if _, err := s.GetBatch(ctx, a.ID, open.ID); err != nil {
		t.Errorf("batch with a queued job: %v", err)
	}
	if n := len(storetest.BatchItems(t, s, a.ID, open.ID)); n != 3 {
		t.Errorf("batch with a queued job has %d items, want 3", n)
	}
	if _, err := s.GetWebhookEndpoint(ctx, a.ID, gone.ID); err == nil {
		t.Errorf("old disabled endpoint still there")
	}
	for _, e := range []string{active.ID, referenced.ID} {
		if _, err := s.GetWebhookEndpoint(ctx, a.ID, e); err != nil {
			t.Errorf("endpoint %s: %v", e, err)
		}
	}
	keys, err := s.ListKeys(ctx, a.ID)
	if err != nil || len(keys) != 1 || keys[0].ID != live.ID {
		t.Errorf("keys after purge: %+v %v, want only %s", keys, err, live.ID)
	}
	var fk []struct {
		Table  string `db:"table"`
		RowID  *int64 `db:"rowid"`
		Parent string `db:"parent"`
		FKID   int    `db:"fkid"`
	}
	if err := s.db.SelectContext(ctx, &fk, `PRAGMA foreign_key_check`); err != nil || len(fk) > 0 {
		t.Errorf("foreign key check: %+v %v", fk, err)
	}

	// A second run finds nothing more.
	if c, err := s.Purge(ctx, policy); err != nil || c.Total() != 0 {
		t.Errorf("second purge: %+v %v", c, err)
	}
}

// TestPurgeReclaimsSpace: deleting many reports frees pages, and the
// incremental vacuum gives them back, so the file shrinks.
func TestPurgeReclaimsSpace(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "big.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := newAccount(t, s, 1<<20)
	// Random bodies, which compression cannot shrink (reports.go), so
	// that each report takes pages of its own.
	r := rand.New(rand.NewPCG(4, 2))
	old := t0.Add(-400 * day)
	for i := range 200 {
		noise := make([]byte, 14<<10)
		for j := range noise {
			noise[j] = byte(r.Uint32())
		}
		body := []byte(`{"r":"` + base64.StdEncoding.EncodeToString(noise) + `"}`)
		at := old.Add(time.Duration(i) * time.Minute)
		finishJob(t, s, a.ID, at, at, locrisk.StatusCompleted, body)
	}
	if _, err := s.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	f0, err := s.FileStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !f0.IncrementalOK {
		t.Fatalf("a new file should use incremental auto-vacuum: %+v", f0)
	}
	c, err := s.Purge(ctx, locrisk.PurgePolicy{Before: t0.Add(-180 * day), Now: t0})
	if err != nil || c.Reports != 200 {
		t.Fatalf("purge: %+v %v", c, err)
	}
	f1, err := s.FileStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f1.FreePages < f0.Pages/2 {
		t.Errorf("free pages after the purge %d, want most of the %d", f1.FreePages, f0.Pages)
	}
	freed, err := s.IncrementalVacuum(ctx, 64)
	if err != nil || freed != f1.FreePages {
		t.Errorf("vacuum freed %d (%v), want %d", freed, err, f1.FreePages)
	}
	f2, err := s.FileStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f2.FreePages != 0 || f2.Pages > f0.Pages/4 {
		t.Errorf("after the vacuum: %+v, before the purge %+v", f2, f0)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > f0.Bytes()/4 {
		t.Errorf("file is %d bytes after the vacuum, %d before the purge", fi.Size(), f0.Bytes())
	}
}

// TestVacuumSwitchesOldFile: a file created without incremental
// auto-vacuum switches with one Vacuum.
func TestVacuumSwitchesOldFile(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	conn, err := s.db.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"PRAGMA auto_vacuum = 0", "VACUUM"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(fmt.Errorf("%s: %w", q, err))
		}
	}
	conn.Close()
	if f, err := s.FileStats(ctx); err != nil || f.IncrementalOK {
		t.Fatalf("setup: %+v %v", f, err)
	}
	if n, err := s.IncrementalVacuum(ctx, 10); err != nil || n != 0 {
		t.Errorf("incremental vacuum of a file not in the mode: %d %v", n, err)
	}
	if err := s.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	if f, err := s.FileStats(ctx); err != nil || !f.IncrementalOK {
		t.Errorf("after Vacuum: %+v %v", f, err)
	}
}

// TestPurgeQueryPlans: every pick of the purge and every delete of what
// references a purged row walks an index, never a whole table (the purge
// runs beside the service on tables of millions of rows).
func TestPurgeQueryPlans(t *testing.T) {
	s := newStore(t, Options{})
	x := "x"
	steps := []purgeStep{batchesStep(x), singleJobsStep(x), endpointsStep(x), keysStep(x), requestStatsStep(x),
		quotaCountersStep(x), idempotencyStep(x)}
	var queries []string
	for _, st := range steps {
		queries = append(queries, st.pick)
	}
	var c locrisk.PurgeCounts
	for _, d := range append(sqlpurge.JobDeletes(`SELECT id FROM report_jobs WHERE batch_id IN (?)`, &c), sqlpurge.JobDeletes(`?`, &c)...) {
		queries = append(queries, strings.Replace(d.SQL, "(?)", "('x')", 1))
	}
	for _, q := range queries {
		q = strings.NewReplacer("?1", "'x'", "?2", "'x'", "?3", "'x'", "?4", "10", "(?)", "('x')", "?", "'x'").Replace(q)
		plan := queryPlan(t, s, q)
		for _, p := range plan {
			// api_keys is a few rows per account: its walk needs no index.
			if strings.HasPrefix(p, "SCAN ") && !strings.Contains(p, "INDEX") && !strings.Contains(p, "api_keys") {
				t.Errorf("full scan %q in\n%s\nplan %v", p, q, plan)
			}
		}
	}
}
