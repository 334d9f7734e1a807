package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

// counterFill fills s with the history of two accounts: n jobs of each,
// created evenly over the 100 days before now (so the windows the reads
// cover hold n/100 of them a day), all ended within 10 minutes, one in 50
// failed, but for the backlog of now, the same at any n: 50 jobs queued
// and 20 processing of each account. The first account also has
// a batch of 4 jobs (ended) and a rejected item every 20th job's time,
// and a webhook delivery of each job's time, one in 200 failed, 20
// pending, the rest delivered in 2 seconds. Straight into the tables: the
// triggers of migration 8 count them as they go in. One statement writes
// each counter row many times over, and leaves all its versions behind at
// once, where a live database writes each job in a transaction of its
// own, whose update of a counter row stays on the row's page (fillfactor,
// migration 8) and is pruned as the page is read again; so the counter
// tables are then packed (VACUUM FULL), as they would be, and everything
// analyzed. It returns the first account, whose reads are measured.
func counterFill(t testing.TB, s *Store, n int, now time.Time) string {
	t.Helper()
	ctx := context.Background()
	var accts []string
	for range 2 {
		a, err := s.CreateAccount(ctx, "fill", 1<<30, 60)
		if err != nil {
			t.Fatal(err)
		}
		accts = append(accts, a.ID)
	}
	ep, _, err := s.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{AccountID: accts[0], Name: "hook",
		URL: "https://hooks.example.com/x", Events: []string{"report.job.completed"}}, now.AddDate(-5, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		// The jobs: the newest 50 of each account queued, the 20 before
		// processing, one in 50 of the rest failed.
		{`INSERT INTO report_jobs (id, account_id, bucket, latitude, longitude, status, attempts, error_code, error_message,
				error_transient, run_after_utc, lease_owner, lease_expires_utc, created_utc, updated_utc, completed_utc)
			SELECT 'job_fill' || a.k || '_' || i, a.id, (ARRAY['api', 'bulk', 'manual'])[1 + i % 3], 40, -100, st, 1,
				CASE WHEN st = 'failed' THEN 'generation_error' END, CASE WHEN st = 'failed' THEN 'boom' END,
				CASE WHEN st = 'failed' THEN false END, c,
				CASE WHEN st = 'processing' THEN 'w' END, CASE WHEN st = 'processing' THEN $3::timestamptz + interval '1 hour' END,
				c, c, CASE WHEN st IN ('completed', 'failed') THEN c + (i % 600) * interval '1 second' END
			FROM generate_series(1, $1::int) AS i,
				unnest($2::text[]) WITH ORDINALITY AS a(id, k),
				LATERAL (SELECT date_trunc('milliseconds', $3::timestamptz - (i::float8 / $1) * interval '100 days') AS c,
					CASE WHEN i <= 50 THEN 'queued' WHEN i <= 70 THEN 'processing' WHEN i % 50 = 0 THEN 'failed'
						ELSE 'completed' END AS st) AS x`,
			[]any{n, accts, now}},
		// The batches: 4 jobs ended a minute after creation, and an item
		// rejected.
		{`INSERT INTO batches (id, account_id, name, total_items, status, created_utc, completed_utc)
			SELECT 'bat_fill' || b, $2, '', 5, 'completed', c, c + interval '1 minute'
			FROM generate_series(4, $1::int / 20) AS b,
				LATERAL (SELECT date_trunc('milliseconds', $3::timestamptz - (b::float8 * 20 / $1) * interval '100 days') AS c) AS x`,
			[]any{n, accts[0], now}},
		{`INSERT INTO report_jobs (id, account_id, batch_id, bucket, latitude, longitude, status, attempts, run_after_utc,
				created_utc, updated_utc, completed_utc)
			SELECT 'job_fillb_' || b.id || '_' || r, b.account_id, b.id, 'bulk', 40, -100, 'completed', 1, b.created_utc,
				b.created_utc, b.created_utc, b.completed_utc
			FROM batches b, generate_series(1, 4) AS r WHERE b.id LIKE 'bat_fill%'`, nil},
		{`INSERT INTO batch_items (batch_id, row_number, latitude, longitude, job_id, error_code, error_message)
			SELECT b.id, r, 40, -100, CASE WHEN r <= 4 THEN 'job_fillb_' || b.id || '_' || r END,
				CASE WHEN r = 5 THEN 'invalid_latitude' END, CASE WHEN r = 5 THEN 'no' END
			FROM batches b, generate_series(1, 5) AS r WHERE b.id LIKE 'bat_fill%'`, nil},
		// The deliveries, each of its own event.
		{`INSERT INTO webhook_events (id, account_id, type, body, created_utc)
			SELECT 'evt_fill' || i, $2, 'webhook.test', '{}', date_trunc('milliseconds', $3::timestamptz - (i::float8 / $1) * interval '100 days')
			FROM generate_series(1, $1::int) AS i`, []any{n, accts[0], now}},
		{`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, account_id, status, attempts, next_attempt_utc,
				last_attempt_utc, delivered_utc, created_utc)
			SELECT 'whd_fill' || e.n, e.id, $1, e.account_id, st, 1, CASE WHEN st = 'pending' THEN e.created_utc END,
				CASE WHEN st <> 'pending' THEN e.created_utc + interval '1 second' END,
				CASE WHEN st = 'succeeded' THEN e.created_utc + interval '2 seconds' END, e.created_utc
			FROM (SELECT id, account_id, created_utc, substr(id, 9)::int AS n FROM webhook_events WHERE id LIKE 'evt_fill%') AS e,
				LATERAL (SELECT CASE WHEN e.n <= 20 THEN 'pending' WHEN e.n % 200 = 0 THEN 'failed'
					ELSE 'succeeded' END AS st) AS x`, []any{ep.ID}},
		{`VACUUM FULL usage_hourly, queue_counts, ops_hourly`, nil},
		{`VACUUM ANALYZE`, nil},
	} {
		if _, err := s.db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("fill: %v\n%s", err, q.sql)
		}
	}
	return accts[0]
}

// counterRead is one read of migration 8's counters, or the row-counting
// read it replaced (the oracles of counters_test.go).
type counterRead struct {
	name string
	text string
	args []any
	old  bool
}

// counterReads are the reads of the account at now: each that uses the
// counters, and each query it replaced.
func counterReads(acct, batchID string, now time.Time) []counterRead {
	day := now.Truncate(24 * time.Hour)
	histFrom, histTo := day.AddDate(0, 0, -89), day.AddDate(0, 0, 1)
	mFrom, mTo := locrisk.MonthStart(now), locrisk.NextMonthStart(now)
	wFrom := now.Add(-7*24*time.Hour + 17*time.Minute) // a week, from 17 minutes into an hour, to now
	events, eventArgs := opsEventsQuery(opsEventRanges(wFrom, now, now))
	list, listArgs := pageQuery(locrisk.Page{Limit: 100}, batchSelect+` WHERE b.account_id = $1`, []any{acct}, "b.", "")
	return []counterRead{
		{"usage history, 90 days", usageHistoryQuery, []any{acct, histFrom, histTo}, false},
		{"usage history, 90 days", oracleUsageHistoryQuery, []any{acct, histFrom, histTo}, true},
		{"period usage", periodUsageQuery, []any{acct, mFrom, mTo}, false},
		{"period usage", oraclePeriodUsageQuery, []any{acct, mFrom, mTo}, true},
		{"summary of a week: events", events, append([]any{acct}, eventArgs...), false},
		{"summary of a week: jobs now", opsJobsNow, []any{acct}, false},
		{"summary of a week: jobs", oracleOpsJobsQuery, []any{acct, wFrom, now}, true},
		{"summary of a week: batches now", opsBatchesProcessing, []any{acct}, false},
		{"summary of a week: batches", oracleOpsBatchesQuery, []any{acct, wFrom, now}, true},
		{"summary of a week: webhooks", opsWebhookCounts, []any{acct, wFrom, now}, false},
		{"summary of a week: webhooks", oracleOpsWebhooksQuery, []any{acct, wFrom, now}, true},
		{"summary of a week: recent failures", opsRecentFailures, []any{acct, wFrom, now, 10, locrisk.FailureReportJob,
			locrisk.FailureWebhookDelivery, locrisk.CodeWebhookDeliveryFailed}, false},
		{"queue depth", queueDepthQuery, nil, false},
		{"queue depth", oracleQueueDepthQuery, nil, true},
		{"batch", batchSelect + ` WHERE b.id = $1 AND b.account_id = $2`, []any{batchID, acct}, false},
		{"batch", oracleBatchQuery, []any{batchID, acct}, true},
		{"batches, a page of 100", list, listArgs, false},
	}
}

// tableRows is how many rows of the named tables the plan's scans read
// (produced or filtered out, times their loops), and whether one scanned
// a whole table.
func tableRows(node map[string]any, tables map[string]bool) (rows float64, seqScan bool) {
	num := func(k string) float64 { v, _ := node[k].(float64); return v }
	if rel, _ := node["Relation Name"].(string); tables[rel] {
		rows = (num("Actual Rows") + num("Rows Removed by Filter") + num("Rows Removed by Index Recheck")) * max(num("Actual Loops"), 1)
		seqScan = node["Node Type"] == "Seq Scan"
	}
	if kids, ok := node["Plans"].([]any); ok {
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				r, seq := tableRows(m, tables)
				rows, seqScan = rows+r, seqScan || seq
			}
		}
	}
	return rows, seqScan
}

// TestCounterReadPlans: the reads that use the counters of migration 8
// read no more rows of the jobs, batches and deliveries than the backlog
// of now (the jobs processing, each account's first queued job), the part
// hour at a window's start and the failures a summary lists, with 10,000
// jobs of the account held over 100 days (and as many of another;
// counterFill) and, under LOCRISK_LOAD=1, 100,000, whether PostgreSQL
// plans them for the parameters or generically; each is logged beside
// the row-counting query it replaced, which reads every job of its
// window.
//
//	LOCRISK_LOAD=1 LOCRISK_TEST_POSTGRES=... go test -run CounterReadPlans -v ./internal/pgstore
func TestCounterReadPlans(t *testing.T) {
	server := serverDSN(t)
	sizes := []int{10_000}
	if os.Getenv("LOCRISK_LOAD") != "" {
		sizes = append(sizes, 100_000)
	}
	now := time.Date(2026, 11, 22, 10, 41, 0, 0, time.UTC)
	big := map[string]bool{"report_jobs": true, "webhook_deliveries": true, "batches": true, "batch_items": true, "webhook_events": true}
	for _, n := range sizes {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			s := openFresh(t, server, Options{})
			start := time.Now()
			acct := counterFill(t, s, n, now)
			t.Logf("filled in %.1f s", time.Since(start).Seconds())
			var batchID string
			if err := s.db.Get(&batchID, `SELECT id FROM batches WHERE account_id = $1 ORDER BY created_utc DESC LIMIT 1`, acct); err != nil {
				t.Fatal(err)
			}
			for _, r := range counterReads(acct, batchID, now) {
				for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
					p := explainRows(t, s, mode, r.text, r.args, big)
					which := "counters"
					if r.old {
						which = "rows (before)"
					}
					t.Logf("%-36s %-14s %-18s %8.0f rows of the tables, %6d pages, %8.2f ms: %.300s",
						r.name, which, mode, p.tableRows, p.pages, p.ms, p.summary)
					if r.old {
						continue
					}
					// The jobs processing (20 of each account), a queued
					// job of each account, the pending deliveries (20),
					// ten failures of each kind, a page of 100 batches,
					// and the 17 minutes of the hour a week's summary
					// starts in, the one part that grows with the jobs (a
					// dozen jobs and deliveries at 100,000): a hundred or
					// so.
					if p.tableRows > 300 || p.seqScan {
						t.Errorf("%s (%s) reads %.0f rows of the tables (a scan of a whole table: %v) with %d jobs: it grows with them",
							r.name, mode, p.tableRows, p.seqScan, n)
					}
				}
			}
		})
	}
}

// explainedRows is explained with the rows of the big tables read.
type explainedRows struct {
	explained
	tableRows float64
	seqScan   bool
}

// explainRows explains query (explain, webhook_backlog_test.go) and
// counts the rows its scans of tables read.
func explainRows(t *testing.T, s *Store, mode, query string, args []any, tables map[string]bool) explainedRows {
	t.Helper()
	ctx := context.Background()
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SET LOCAL plan_cache_mode = `+mode); err != nil {
		t.Fatal(err)
	}
	var out string
	if err := tx.GetContext(ctx, &out, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+query, args...); err != nil {
		t.Fatalf("explain: %v\n%s", err, query)
	}
	p, top := parseExplain(t, out)
	p.tableRows, p.seqScan = tableRows(top, tables)
	return p
}

// parseExplain reads EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) output.
func parseExplain(t *testing.T, out string) (explainedRows, map[string]any) {
	t.Helper()
	var plans []struct {
		Plan          map[string]any `json:"Plan"`
		ExecutionTime float64        `json:"Execution Time"`
	}
	if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("explain output %q: %v", out, err)
	}
	top := plans[0].Plan
	hit, _ := top["Shared Hit Blocks"].(float64)
	read, _ := top["Shared Read Blocks"].(float64)
	return explainedRows{explained: explained{rows: planCost(top), pages: int64(hit + read), ms: plans[0].ExecutionTime,
		summary: planSummary(top)}}, top
}

// BenchmarkCounterReads times each read at two sizes of the account's
// history, the counters' reads beside the row-counting reads they
// replaced:
//
//	LOCRISK_TEST_POSTGRES=... go test -run '^$' -bench CounterReads -benchtime 200x ./internal/pgstore
func BenchmarkCounterReads(b *testing.B) {
	server := os.Getenv(serverEnv)
	if server == "" {
		b.Skipf("need %s", serverEnv)
	}
	now := time.Date(2026, 11, 22, 10, 41, 0, 0, time.UTC)
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint("jobs=", n), func(b *testing.B) {
			s := openFresh(b, server, Options{})
			acct := counterFill(b, s, n, now)
			var batchID string
			if err := s.db.Get(&batchID, `SELECT id FROM batches WHERE account_id = $1 ORDER BY created_utc DESC LIMIT 1`, acct); err != nil {
				b.Fatal(err)
			}
			for _, r := range counterReads(acct, batchID, now) {
				which := "counters"
				if r.old {
					which = "rows"
				}
				b.Run(strings.NewReplacer(" ", "_", ",", "", ":", "").Replace(r.name)+"/"+which, func(b *testing.B) {
					ctx := context.Background()
					for b.Loop() {
						rows, err := s.db.QueryContext(ctx, r.text, r.args...)
						if err != nil {
							b.Fatal(err)
						}
						for rows.Next() {
						}
						if err := rows.Err(); err != nil {
							b.Fatal(err)
						}
						rows.Close()
					}
				})
			}
		})
	}
}
