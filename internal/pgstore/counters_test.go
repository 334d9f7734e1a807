package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// The counters of migration 8 against the row-counting queries they
// replace, which stay here as the oracle, over random sequences of
// everything that changes a job or a delivery: creation (single and in
// batches, with rejected items), claims, lease takeovers, completion,
// failure, automatic and manual retries, releases, webhook deliveries
// succeeding, failing, retrying and redelivered, and the retention purge.

// The reads as they were before migration 8.
const (
	oraclePeriodUsageQuery = `SELECT
		COUNT(*) FILTER (WHERE status = 'queued') AS queued, COUNT(*) FILTER (WHERE status = 'processing') AS processing,
		COUNT(*) FILTER (WHERE status = 'completed') AS completed, COUNT(*) FILTER (WHERE status = 'failed') AS failed
		FROM report_jobs WHERE account_id = $1 AND created_utc >= $2 AND created_utc < $3`
	oracleUsageHistoryQuery = `SELECT day, bucket, SUM(created) AS created, SUM(completed) AS completed, SUM(failed) AS failed
		FROM (
			SELECT date_trunc('day', created_utc AT TIME ZONE 'UTC') AS day, bucket, 1 AS created, 0 AS completed, 0 AS failed
				FROM report_jobs WHERE account_id = $1 AND created_utc >= $2 AND created_utc < $3
			UNION ALL
			SELECT date_trunc('day', completed_utc AT TIME ZONE 'UTC'), bucket, 0,
				CASE WHEN status = 'completed' THEN 1 ELSE 0 END, CASE WHEN status = 'failed' THEN 1 ELSE 0 END
				FROM report_jobs WHERE account_id = $1 AND completed_utc >= $2 AND completed_utc < $3
				  AND status IN ('completed', 'failed')
		) AS e GROUP BY day, bucket`
	oracleBatchQuery = `SELECT b.id, b.account_id, b.name, b.total_items, b.created_utc,
			COUNT(*) FILTER (WHERE j.status IN ('queued', 'processing')) AS open,
			COUNT(*) FILTER (WHERE j.status = 'processing') AS processing,
			COUNT(*) FILTER (WHERE j.status = 'completed') AS completed,
			COUNT(*) FILTER (WHERE j.status = 'failed') AS failed,
			COUNT(*) FILTER (WHERE i.job_id IS NULL) AS rejected,
			MAX(j.completed_utc) AS last_final_utc
		FROM batches b JOIN batch_items i ON i.batch_id = b.id LEFT JOIN report_jobs j ON j.id = i.job_id
		WHERE b.id = $1 AND b.account_id = $2 GROUP BY b.id`
	oracleOpsJobsQuery = `SELECT
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = $1 AND created_utc >= $2 AND created_utc < $3) AS created,
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = $1 AND status = 'completed' AND completed_utc >= $2 AND completed_utc < $3) AS completed,
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = $1 AND status = 'failed' AND completed_utc >= $2 AND completed_utc < $3) AS failed,
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = $1 AND status = 'queued') AS queued,
		(SELECT COUNT(*) FROM report_jobs WHERE account_id = $1 AND status = 'processing') AS processing`
	oracleOpsWebhooksQuery = `SELECT
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = $1 AND created_utc >= $2 AND created_utc < $3) AS deliveries,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = $1 AND status = 'succeeded' AND delivered_utc >= $2 AND delivered_utc < $3) AS succeeded,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = $1 AND status = 'failed'
			AND COALESCE(last_attempt_utc, created_utc) >= $2 AND COALESCE(last_attempt_utc, created_utc) < $3) AS failed,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = $1 AND status = 'pending') AS pending`
	oracleOpsBatchesQuery = `SELECT
		(SELECT COUNT(*) FROM batches WHERE account_id = $1 AND created_utc >= $2 AND created_utc < $3) AS created,
		(SELECT COUNT(*) FROM batches WHERE account_id = $1 AND status = 'processing') AS processing,
		(SELECT COUNT(*) FROM batches WHERE account_id = $1 AND status = 'completed' AND completed_utc >= $2 AND completed_utc < $3) AS completed`
	oracleQueueDepthQuery = `SELECT
		(SELECT COUNT(*) FROM report_jobs WHERE status = 'queued') AS queued,
		(SELECT COUNT(*) FROM report_jobs WHERE status = 'processing') AS processing,
		(SELECT MIN(run_after_utc) FROM report_jobs WHERE status = 'queued') AS oldest,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending') AS pending`
)

// The counter tables as their backfill computes them from the rows (the
// rows at zero left out): what the triggers must have kept them at.
const (
	recountUsage = `SELECT account_id, hour, bucket, SUM(op) AS open, SUM(co) AS completed, SUM(fa) AS failed,
			SUM(ec) AS ended_completed, SUM(ef) AS ended_failed
		FROM (
			SELECT account_id, date_trunc('hour', created_utc, 'UTC') AS hour, bucket,
				(status IN ('queued', 'processing'))::int AS op, (status = 'completed')::int AS co,
				(status = 'failed')::int AS fa, 0 AS ec, 0 AS ef
			FROM report_jobs
			UNION ALL
			SELECT account_id, date_trunc('hour', completed_utc, 'UTC'), bucket, 0, 0, 0,
				(status = 'completed')::int, (status = 'failed')::int
			FROM report_jobs WHERE completed_utc IS NOT NULL AND status IN ('completed', 'failed')
		) AS e
		GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`
	storedUsage = `SELECT account_id, hour, bucket, open, completed, failed, ended_completed, ended_failed FROM usage_hourly
		WHERE (open, completed, failed, ended_completed, ended_failed) <> (0, 0, 0, 0, 0) ORDER BY 1, 2, 3`
	recountQueue = `SELECT account_id, COUNT(*) AS jobs_open FROM report_jobs WHERE status IN ('queued', 'processing')
		GROUP BY 1 ORDER BY 1`
	storedQueue = `SELECT account_id, jobs_open FROM queue_counts WHERE jobs_open <> 0 ORDER BY 1`
	recountOps  = `SELECT account_id, hour, SUM(c) AS deliveries_created, SUM(s) AS deliveries_succeeded,
			SUM(bc) AS batches_created, SUM(bd) AS batches_completed
		FROM (
			SELECT account_id, date_trunc('hour', created_utc, 'UTC') AS hour, 1 AS c, 0 AS s, 0 AS bc, 0 AS bd
			FROM webhook_deliveries
			UNION ALL
			SELECT account_id, date_trunc('hour', delivered_utc, 'UTC'), 0, 1, 0, 0 FROM webhook_deliveries
			WHERE status = 'succeeded' AND delivered_utc IS NOT NULL
			UNION ALL
			SELECT account_id, date_trunc('hour', created_utc, 'UTC'), 0, 0, 1, 0 FROM batches
			UNION ALL
			SELECT account_id, date_trunc('hour', completed_utc, 'UTC'), 0, 0, 0, 1 FROM batches
			WHERE status = 'completed' AND completed_utc IS NOT NULL
		) AS e
		GROUP BY 1, 2 ORDER BY 1, 2`
	storedOps = `SELECT account_id, hour, deliveries_created, deliveries_succeeded, batches_created, batches_completed FROM ops_hourly
		WHERE (deliveries_created, deliveries_succeeded, batches_created, batches_completed) <> (0, 0, 0, 0) ORDER BY 1, 2`
	recountBatches = `SELECT b.id,
			COUNT(j.id) FILTER (WHERE j.status IN ('queued', 'processing')) AS items_open,
			COUNT(j.id) FILTER (WHERE j.status = 'completed') AS items_completed,
			COUNT(j.id) FILTER (WHERE j.status = 'failed') AS items_failed,
			COUNT(i.row_number) FILTER (WHERE i.job_id IS NULL) AS items_rejected
		FROM batches b LEFT JOIN batch_items i ON i.batch_id = b.id LEFT JOIN report_jobs j ON j.id = i.job_id
		GROUP BY b.id ORDER BY b.id`
	storedBatches = `SELECT id, items_open, items_completed, items_failed, items_rejected FROM batches ORDER BY id`
)

// checkCounterTables fails the test unless every counter table holds what
// a recount of the rows gives.
func checkCounterTables(t *testing.T, s *Store, where string) {
	t.Helper()
	for _, q := range [][2]string{{storedUsage, recountUsage}, {storedQueue, recountQueue}, {storedOps, recountOps}, {storedBatches, recountBatches}} {
		have, want := selectStrings(t, s, q[0]), selectStrings(t, s, q[1])
		if !slices.Equal(have, want) {
			t.Fatalf("%s: stored counters\n%v\nwant, from the rows,\n%v", where, have, want)
		}
	}
	// A row left at zero by the purge is dropped from both sides above;
	// none may be below it.
	var negative int
	if err := s.db.Get(&negative, `SELECT COUNT(*) FROM usage_hourly
		WHERE LEAST(open, completed, failed, ended_completed, ended_failed) < 0`); err != nil || negative != 0 {
		t.Fatalf("%s: %d usage rows below zero (%v)", where, negative, err)
	}
}

// selectStrings runs q and renders each row as a string (times in UTC).
func selectStrings(t *testing.T, s *Store, q string) []string {
	t.Helper()
	rows, err := s.db.Queryx(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.SliceScan()
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if tm, ok := v.(time.Time); ok {
				vals[i] = tm.UTC().Format(time.RFC3339)
			}
		}
		// Counter rows at zero are what the purge leaves; they count as
		// absent.
		if allZero(vals[len(vals)-countColumns(q):]) {
			continue
		}
		out = append(out, fmt.Sprint(vals))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// countColumns is how many trailing columns of q's rows are counts.
func countColumns(q string) int {
	switch q {
	case recountUsage, storedUsage:
		return 5
	case recountOps, storedOps:
		return 4
	case recountQueue, storedQueue:
		return 1
	}
	return 0 // batches: every batch is listed, zero or not
}

func allZero(vals []any) bool {
	if len(vals) == 0 {
		return false
	}
	for _, v := range vals {
		if fmt.Sprint(v) != "0" {
			return false
		}
	}
	return true
}

// counterHistory drives a store through random changes of its jobs and
// deliveries.
type counterHistory struct {
	t     *testing.T
	s     *Store
	rng   *rand.Rand
	now   time.Time
	accts []string
	eps   map[string]string // the account's endpoint
	first time.Time         // the earliest time anything was created
	done  map[string]int
}

func newCounterHistory(t *testing.T, s *Store, seed uint64, accounts int) *counterHistory {
	h := &counterHistory{t: t, s: s, rng: rand.New(rand.NewPCG(seed, 8)), now: time.Date(2026, 9, 28, 21, 0, 0, 0, time.UTC),
		eps: map[string]string{}, done: map[string]int{}}
	h.first = h.now
	ctx := context.Background()
	for range accounts {
		a, err := s.CreateAccount(ctx, "counters", 1<<20, 60)
		if err != nil {
			t.Fatal(err)
		}
		h.accts = append(h.accts, a.ID)
		ep, _, err := s.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{AccountID: a.ID, Name: "hook",
			URL: "https://hooks.example.com/x", Events: []string{"report.job.completed", "report.job.failed"}}, h.now)
		if err != nil {
			t.Fatal(err)
		}
		h.eps[a.ID] = ep.ID
	}
	return h
}

// outboxHook writes an event of each job's end to its account's
// subscribed endpoints, as the service's outbox does.
func outboxHook(ctx context.Context, tx locrisk.Tx, job locrisk.Job) error {
	typ := "report.job.completed"
	if job.Status == locrisk.StatusFailed {
		typ = "report.job.failed"
	}
	eps, err := tx.WebhookSubscribers(ctx, job.AccountID, typ)
	if err != nil {
		return err
	}
	_, err = tx.InsertWebhookEvent(ctx, locrisk.WebhookEvent{ID: ids.New(ids.Event), AccountID: job.AccountID, Type: typ,
		JobID: job.ID, Body: []byte(`{}`), CreatedUTC: *job.CompletedUTC}, eps)
	return err
}

// pick returns a random id of the rows cond selects, or "".
func (h *counterHistory) pick(q string) string {
	var ids []string
	if err := h.s.db.Select(&ids, q+` ORDER BY id`); err != nil {
		h.t.Fatal(err)
	}
	if len(ids) == 0 {
		return ""
	}
	return ids[h.rng.IntN(len(ids))]
}

// step makes one random change and moves the clock on by up to a few
// hours (now and then by days, so things end on other days and months
// than they began).
func (h *counterHistory) step() {
	t, s, ctx := h.t, h.s, context.Background()
	h.now = h.now.Add(time.Duration(h.rng.IntN(3*3600*1000)) * time.Millisecond)
	if h.rng.IntN(20) == 0 {
		h.now = h.now.Add(time.Duration(1+h.rng.IntN(4)) * 24 * time.Hour)
	}
	acct := h.accts[h.rng.IntN(len(h.accts))]
	var name string
	ignore := func(err error) {
		t.Helper()
		if err != nil && !errors.Is(err, locrisk.ErrLeaseLost) && !errors.Is(err, locrisk.ErrNotRetryable) {
			t.Fatalf("%s: %v", name, err)
		}
		if err == nil {
			h.done[name]++
		}
	}
	ops := []string{"create", "create", "batch", "claim", "claim", "claim", "claim", "complete", "complete", "complete",
		"fail", "fail", "retry", "requeue", "deliver", "deliver", "deliver", "redeliver", "purge", "wait"}
	name = ops[h.rng.IntN(len(ops))]
	switch name {
	case "create":
		b := locrisk.Buckets()[h.rng.IntN(3)]
		_, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: acct, Bucket: b, Latitude: 40, Longitude: -100}, h.now)
		ignore(err)
	case "batch":
		var items []locrisk.NewBatchItem
		lat, lon := 40.0, -100.0
		for i := range 1 + h.rng.IntN(5) {
			if h.rng.IntN(4) == 0 {
				items = append(items, locrisk.NewBatchItem{ExternalID: fmt.Sprint("r", i), ErrorCode: "invalid_latitude", ErrorMessage: "no"})
			} else {
				items = append(items, locrisk.NewBatchItem{ExternalID: fmt.Sprint("v", i), Latitude: &lat, Longitude: &lon})
			}
		}
		_, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: acct, Items: items}, h.now)
		ignore(err)
	case "claim":
		// Now and then far enough ahead that a lease has expired and the
		// claim takes a processing job over.
		at := h.now
		if h.rng.IntN(5) == 0 {
			at = at.Add(2 * time.Hour)
		}
		_, _, err := s.ClaimJob(ctx, "w", time.Hour, at)
		ignore(err)
	case "complete":
		if id := h.pick(`SELECT id FROM report_jobs WHERE status = 'processing'`); id != "" {
			_, err := s.CompleteJob(ctx, id, "w", locrisk.Report{DataVersion: "v", Body: []byte(`{}`)}, h.workerClock())
			ignore(err)
		}
	case "fail":
		if id := h.pick(`SELECT id FROM report_jobs WHERE status = 'processing'`); id != "" {
			_, err := s.FailJob(ctx, id, "w", "generation_error", "boom", h.rng.IntN(2) == 0, h.workerClock())
			ignore(err)
		}
	case "retry":
		if id := h.pick(`SELECT id FROM report_jobs WHERE status = 'failed'`); id != "" {
			var owner string
			if err := s.db.Get(&owner, `SELECT account_id FROM report_jobs WHERE id = $1`, id); err != nil {
				t.Fatal(err)
			}
			_, err := s.RetryJob(ctx, owner, id, h.now)
			ignore(err)
		}
	case "requeue":
		if id := h.pick(`SELECT id FROM report_jobs WHERE status = 'processing'`); id != "" {
			if h.rng.IntN(2) == 0 {
				ignore(s.RetryLater(ctx, id, "w", h.now.Add(time.Minute), "engine_busy", "later", h.now))
			} else {
				ignore(s.ReleaseJob(ctx, id, "w", h.now))
			}
		}
	case "deliver":
		task, ok, err := s.ClaimWebhookDelivery(ctx, time.Hour, locrisk.DeliveryLimits{PerEndpoint: 5, PerAccount: 10}, h.now)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return
		}
		a := locrisk.DeliveryAttempt{Started: h.now.Add(-time.Duration(h.rng.IntN(60)) * time.Second)}
		switch h.rng.IntN(4) {
		case 0, 1:
			a.Success, a.ResponseStatus = true, 200
		case 2:
			next := h.now.Add(time.Minute)
			a.Error, a.NextAttempt = "try again", &next
		default:
			a.Error = "gone"
		}
		_, err = s.RecordWebhookAttempt(ctx, task, a, h.workerClock())
		ignore(err)
	case "redeliver":
		var d struct {
			ID      string `db:"id"`
			Account string `db:"account_id"`
		}
		err := s.db.Get(&d, `SELECT id, account_id FROM webhook_deliveries WHERE status = 'failed' ORDER BY id LIMIT 1`)
		if errors.Is(err, sql.ErrNoRows) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.RedeliverWebhook(ctx, d.Account, d.ID, h.now)
		ignore(err)
	case "purge":
		if h.rng.IntN(3) == 0 {
			before := h.now.Add(-time.Duration(h.rng.IntN(20*24)) * time.Hour)
			c, err := s.Purge(ctx, locrisk.PurgePolicy{Before: before, Now: h.now, Batch: 1 + h.rng.IntN(7)})
			ignore(err)
			h.done["purged jobs"] += int(c.Jobs)
			h.done["purged batches"] += int(c.Batches)
			h.done["purged deliveries"] += int(c.Deliveries)
		}
	case "wait":
		h.now = h.now.Add(time.Duration(h.rng.IntN(48)) * time.Hour)
	}
}

// workerClock is the time a worker ends a job or records a delivery at:
// now, or, one time in three, up to a few hours earlier (workers' clocks
// differ), so things do not always end in the order they are done.
func (h *counterHistory) workerClock() time.Time {
	if h.rng.IntN(3) == 0 {
		return h.now.Add(-time.Duration(h.rng.IntN(4*3600*1000)) * time.Millisecond)
	}
	return h.now
}

// check compares the counter tables with a recount and every read that
// uses them with its oracle.
func (h *counterHistory) check(where string) {
	t, s, ctx := h.t, h.s, context.Background()
	t.Helper()
	checkCounterTables(t, s, where)
	from := time.Date(h.first.Year(), h.first.Month(), h.first.Day(), 0, 0, 0, 0, time.UTC)
	days := int(h.now.Sub(from).Hours()/24) + 2
	for _, a := range h.accts {
		for _, at := range []time.Time{h.now, h.now.AddDate(0, -1, 0), h.first} {
			got, err := s.PeriodUsage(ctx, a, at)
			if err != nil {
				t.Fatal(err)
			}
			want := got
			var c struct {
				Queued     int `db:"queued"`
				Processing int `db:"processing"`
				Completed  int `db:"completed"`
				Failed     int `db:"failed"`
			}
			if err := s.db.Get(&c, oraclePeriodUsageQuery, a, got.Start, got.End); err != nil {
				t.Fatal(err)
			}
			want.Queued, want.Processing, want.Completed, want.Failed = c.Queued, c.Processing, c.Completed, c.Failed
			want.Created = c.Queued + c.Processing + c.Completed + c.Failed
			if got != want {
				t.Fatalf("%s: period usage of %s at %s = %+v, want %+v", where, a, at, got, want)
			}
		}
		got, err := s.UsageHistory(ctx, a, from, days, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := oracleUsageHistory(t, s, a, from, days); !reflect.DeepEqual(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s: usage of %s on %s: %+v, want %+v", where, a, got[i].Day.Format(time.DateOnly), got[i], want[i])
				}
			}
			t.FailNow()
		}
		var batches []string
		if err := s.db.Select(&batches, `SELECT id FROM batches WHERE account_id = $1`, a); err != nil {
			t.Fatal(err)
		}
		for _, id := range batches {
			got, err := s.GetBatch(ctx, a, id)
			if err != nil {
				t.Fatal(err)
			}
			var r batchRow // the same columns, aggregated from the items
			if err := s.db.Get(&r, oracleBatchQuery, id, a); err != nil {
				t.Fatal(err)
			}
			if want := r.batch(); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: batch %s = %+v, want %+v", where, id, got, want)
			}
		}
		// Windows of the operations summary: random ends, some on the
		// hour, some ending at the store's now or after it.
		for range 6 {
			span := h.now.Sub(h.first)
			f := h.first.Add(time.Duration(h.rng.Int64N(int64(span)))).Truncate(time.Millisecond)
			to := f.Add(time.Duration(h.rng.Int64N(int64(72 * time.Hour)))).Truncate(time.Millisecond)
			switch h.rng.IntN(4) {
			case 0:
				f = f.Truncate(time.Hour)
			case 1:
				to = to.Truncate(time.Hour)
			case 2:
				to = h.now
			}
			checkOps(t, s, where, a, f, to)
		}
	}
	got, err := s.QueueDepth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Queued     int          `db:"queued"`
		Processing int          `db:"processing"`
		Oldest     sql.NullTime `db:"oldest"`
		Pending    int          `db:"pending"`
	}
	if err := s.db.Get(&d, oracleQueueDepthQuery); err != nil {
		t.Fatal(err)
	}
	want := locrisk.QueueDepth{JobsQueued: d.Queued, JobsProcessing: d.Processing, DeliveriesQueued: d.Pending}
	if d.Oldest.Valid {
		want.OldestRunnable = d.Oldest.Time.UTC()
	}
	if got != want {
		t.Fatalf("%s: queue depth %+v, want %+v", where, got, want)
	}
}

// checkOps compares the counts of the account's operations summary over
// [from, to) with the oracle's.
func checkOps(t *testing.T, s *Store, where, acct string, from, to time.Time) {
	t.Helper()
	o, err := s.OpsSummary(context.Background(), acct, from, to, 3)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Created    int `db:"created"`
		Completed  int `db:"completed"`
		Failed     int `db:"failed"`
		Queued     int `db:"queued"`
		Processing int `db:"processing"`
	}
	var want locrisk.OpsSummary
	if err := s.db.Get(&j, oracleOpsJobsQuery, acct, from, to); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Get(&want.Webhooks, oracleOpsWebhooksQuery, acct, from, to); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Get(&want.Batches, oracleOpsBatchesQuery, acct, from, to); err != nil {
		t.Fatal(err)
	}
	want.Jobs = locrisk.JobOps{Created: j.Created, Completed: j.Completed, Failed: j.Failed, Queued: j.Queued, Processing: j.Processing}
	g := o.Jobs
	g.CompletionP50, g.CompletionP95 = nil, nil
	if g != want.Jobs || o.Webhooks != want.Webhooks || o.Batches != want.Batches {
		t.Fatalf("%s: summary of %s over [%s, %s): %+v %+v %+v\nwant %+v %+v %+v", where, acct,
			from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano), g, o.Webhooks, o.Batches, want.Jobs, want.Webhooks, want.Batches)
	}
}

// oracleUsageHistory is UsageHistory (all buckets) from the rows.
func oracleUsageHistory(t *testing.T, s *Store, accountID string, from time.Time, days int) []locrisk.DailyUsage {
	t.Helper()
	var rows []struct {
		Day       time.Time `db:"day"`
		Bucket    string    `db:"bucket"`
		Created   int       `db:"created"`
		Completed int       `db:"completed"`
		Failed    int       `db:"failed"`
	}
	if err := s.db.Select(&rows, oracleUsageHistoryQuery, accountID, from, from.AddDate(0, 0, days)); err != nil {
		t.Fatal(err)
	}
	type key struct{ day, bucket string }
	got := map[key]locrisk.DailyUsage{}
	for _, r := range rows {
		got[key{r.Day.Format(time.DateOnly), r.Bucket}] = locrisk.DailyUsage{ReportJobs: r.Created, Completed: r.Completed, Failed: r.Failed}
	}
	var out []locrisk.DailyUsage
	for d := range days {
		day := from.AddDate(0, 0, d)
		for _, b := range locrisk.Buckets() {
			u := got[key{day.Format(time.DateOnly), b}]
			u.Day, u.Bucket = day, b
			out = append(out, u)
		}
	}
	return out
}

// TestCountersMatchRowCounts: after every few random changes, the counter
// tables hold what a recount of the rows gives, and every read that uses
// them answers what the row-counting queries it replaced answer.
func TestCountersMatchRowCounts(t *testing.T) {
	server := serverDSN(t)
	steps := 400
	if testing.Short() {
		steps = 120
	}
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			s := openFresh(t, server, Options{OnJobFinal: []locrisk.JobFinalHook{outboxHook}})
			h := newCounterHistory(t, s, seed, 3)
			s.now = func() time.Time { return h.now }
			for i := range steps {
				h.step()
				if i%40 == 39 {
					h.check(fmt.Sprint("step ", i+1))
				}
			}
			h.check("end")
			// The sequence did what it is for.
			for _, op := range []string{"create", "batch", "claim", "complete", "fail", "retry", "requeue", "deliver", "redeliver",
				"purged jobs", "purged batches", "purged deliveries"} {
				if h.done[op] == 0 {
					t.Errorf("no %s in %v", op, h.done)
				}
			}
			t.Logf("%v", h.done)
		})
	}
}

// undoMigration8 takes the database back to migration 7: without the
// counters, their triggers and indexes.
func undoMigration8(t *testing.T, s *Store) {
	t.Helper()
	undoMigration9(t, s) // a database of migration 7 has none of 9 either
	if _, err := s.db.Exec(`
		DROP TABLE usage_hourly, queue_counts, ops_hourly;
		DROP FUNCTION report_jobs_counters, report_jobs_batch_counts, batch_items_rejected, webhook_deliveries_counters,
			batches_counters CASCADE;
		ALTER TABLE batches DROP COLUMN items_open, DROP COLUMN items_completed, DROP COLUMN items_failed, DROP COLUMN items_rejected;
		DROP INDEX report_jobs_processing, report_jobs_failed, batches_by_status, webhook_deliveries_succeeded, webhook_deliveries_failed;
		DELETE FROM schema_migrations WHERE version = 8`); err != nil {
		t.Fatal(err)
	}
}

// undoMigration9 takes the database back to migration 8: without the
// watchlists.
func undoMigration9(t *testing.T, s *Store) {
	t.Helper()
	if _, err := s.db.Exec(`
		DROP TABLE watch_rescores, watch_items, watchlists;
		ALTER TABLE report_jobs DROP COLUMN watch_item_id;
		DELETE FROM schema_migrations WHERE version = 9`); err != nil {
		t.Fatal(err)
	}
}

// TestCountersBackfill: migration 8 fills its counters from the rows a
// database of migration 7 holds, to what the triggers would have kept.
func TestCountersBackfill(t *testing.T) {
	s := openFresh(t, serverDSN(t), Options{OnJobFinal: []locrisk.JobFinalHook{outboxHook}})
	h := newCounterHistory(t, s, 11, 3)
	s.now = func() time.Time { return h.now }
	for range 300 {
		h.step()
	}
	undoMigration8(t, s)
	var n int
	if err := s.db.Get(&n, `SELECT COUNT(*) FROM batches`); err != nil || n == 0 {
		t.Fatalf("no batches to backfill (%d, %v)", n, err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.check("after the backfill")
}

// TestCountersAcrossNodes: two nodes (two connection pools) creating,
// claiming, ending and retrying the jobs of the same accounts, creating
// batches, and delivering the webhooks the ends write, all at once, leave
// counters that match a recount: no increment is lost between concurrent
// transactions, and the retries that follow a deadlock count once.
func TestCountersAcrossNodes(t *testing.T) {
	opt := Options{OnJobFinal: []locrisk.JobFinalHook{outboxHook}}
	first := openFresh(t, serverDSN(t), opt)
	opt.Secrets = testSecrets(t)
	second, err := Open(context.Background(), first.dsn, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	ctx := context.Background()
	var accts []string
	for range 2 {
		a, err := first.CreateAccount(ctx, "nodes", 1<<20, 60)
		if err != nil {
			t.Fatal(err)
		}
		accts = append(accts, a.ID)
		if _, _, err := first.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{AccountID: a.ID, Name: "hook",
			URL: "https://hooks.example.com/x", Events: []string{"report.job.completed", "report.job.failed"}}, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 6, 30, 23, 40, 0, 0, time.UTC) // the hours, days and months change during the run
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		s := []*Store{first, second}[g%2]
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 30))
			for i := range 60 {
				now := base.Add(time.Duration(i) * time.Minute)
				acct := accts[rng.IntN(len(accts))]
				var err error
				switch rng.IntN(7) {
				case 5, 6:
					var task locrisk.DeliveryTask
					var ok bool
					task, ok, err = s.ClaimWebhookDelivery(ctx, time.Hour, locrisk.DeliveryLimits{PerEndpoint: 8, PerAccount: 8}, now)
					if err != nil || !ok {
						break
					}
					a := locrisk.DeliveryAttempt{Success: rng.IntN(3) > 0, ResponseStatus: 200, Started: now}
					if !a.Success {
						a.Error, a.ResponseStatus = "gone", 0
					}
					_, err = s.RecordWebhookAttempt(ctx, task, a, now)
				case 0:
					lat, lon := 40.0, -100.0
					_, _, err = s.CreateBatch(ctx, locrisk.NewBatch{AccountID: acct, Items: []locrisk.NewBatchItem{
						{Latitude: &lat, Longitude: &lon}, {ErrorCode: "invalid_latitude", ErrorMessage: "no"}}}, now)
				case 1, 2:
					_, _, err = s.CreateJob(ctx, locrisk.NewJob{AccountID: acct, Bucket: locrisk.Buckets()[rng.IntN(3)], Latitude: 1, Longitude: 1}, now)
				default:
					owner := fmt.Sprint("w", g)
					var j locrisk.Job
					var ok bool
					if j, ok, err = s.ClaimJob(ctx, owner, time.Hour, now); err != nil || !ok {
						break
					}
					end := now.Add(time.Duration(rng.IntN(90)) * time.Minute)
					if rng.IntN(3) == 0 {
						_, err = s.FailJob(ctx, j.ID, owner, "generation_error", "boom", true, end)
						if err == nil && rng.IntN(2) == 0 {
							_, err = s.RetryJob(ctx, j.AccountID, j.ID, end)
						}
					} else {
						_, err = s.CompleteJob(ctx, j.ID, owner, locrisk.Report{DataVersion: "v", Body: []byte(`{}`)}, end)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkCounterTables(t, first, "after two nodes")
	var ended, delivered int
	if err := first.db.Get(&ended, `SELECT COUNT(*) FROM report_jobs WHERE status IN ('completed', 'failed')`); err != nil || ended == 0 {
		t.Fatalf("no job ended (%v)", err)
	}
	if err := first.db.Get(&delivered, `SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'succeeded'`); err != nil || delivered == 0 {
		t.Fatalf("no webhook delivered (%v)", err)
	}
}
