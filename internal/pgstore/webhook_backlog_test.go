package pgstore

// A backlog of webhook deliveries, the case the claim's indexes are for:
// what a delivery claim and NextWebhookDue cost with tens of thousands of
// deliveries in the table, and how fast two nodes on one database work off
// 10,000 pending deliveries beside the SQLite store on one node.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/sqlite"
	"github.com/locrisk/locrisk/internal/webhookworker"
)

// backlogLimits are serve's default delivery limits.
var backlogLimits = locrisk.DeliveryLimits{PerEndpoint: webhookworker.DefaultPerEndpoint, PerAccount: webhookworker.DefaultPerAccount}

// backlogShape is how a backlog's deliveries are spread: over accounts,
// each with endpoints endpoints, one after another.
type backlogShape struct {
	name      string
	accounts  int
	endpoints int // per account
}

// backlogTarget is one endpoint of a backlog and its account.
type backlogTarget struct{ account, endpoint string }

// newBacklogTargets creates the shape's accounts and active endpoints on
// s, every endpoint sending to url.
func newBacklogTargets(t testing.TB, s locrisk.Store, shape backlogShape, url string, at time.Time) []backlogTarget {
	t.Helper()
	ctx := context.Background()
	var out []backlogTarget
	for a := range shape.accounts {
		acct, err := s.CreateAccount(ctx, fmt.Sprintf("backlog %d", a), 1<<30, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for e := range shape.endpoints {
			ep, _, err := s.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{AccountID: acct.ID,
				Name: fmt.Sprintf("hook %d", e), URL: url, Events: []string{"webhook.test"}}, at)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, backlogTarget{acct.ID, ep.ID})
		}
	}
	return out
}

// fillPostgres writes n pending deliveries on s, each of an event of its
// own, the j-th (from 0) due at from + j ms and to targets[j %
// len(targets)], or with inBlocks to targets[j * len(targets) / n] (the
// first endpoint's all due before the second's, and so on); prefix keeps
// the ids of several fills apart. Two statements, so that 100,000 take
// seconds, not minutes.
func fillPostgres(t testing.TB, s *Store, targets []backlogTarget, n int, from time.Time, prefix string, inBlocks bool) {
	t.Helper()
	ctx := context.Background()
	var accts, eps []string
	for _, tg := range targets {
		accts, eps = append(accts, tg.account), append(eps, tg.endpoint)
	}
	// k is the target's position (from 1) in the arrays of ids.
	k := `(j % $3 + 1)`
	if inBlocks {
		k = `(j::bigint * $3 / $5 + 1)`
	}
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_events (id, account_id, type, body, created_utc)
			SELECT 'evt_'||$1||j, (string_to_array($2, ' '))[`+k+`], 'webhook.test', '{"n":'||j||'}',
				$4::timestamptz + j * interval '1 millisecond'
			FROM generate_series(0, $5::int - 1) AS j`,
			prefix, strings.Join(accts, " "), len(targets), ms(from), n); err != nil {
			return fmt.Errorf("events: %w", err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries
				(id, event_id, endpoint_id, account_id, status, attempts, next_attempt_utc, created_utc)
			SELECT 'wd_'||$1||j, 'evt_'||$1||j, (string_to_array($6, ' '))[`+k+`],
				(string_to_array($2, ' '))[`+k+`], 'pending', 0, t, t
			FROM generate_series(0, $5::int - 1) AS j, LATERAL (SELECT $4::timestamptz + j * interval '1 millisecond' AS t) AS due`,
			prefix, strings.Join(accts, " "), len(targets), ms(from), n, strings.Join(eps, " "))
		if err != nil {
			return fmt.Errorf("deliveries: %w", err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("fill the backlog: %v", err)
	}
}

// fillSQLite writes the same deliveries as fillPostgres on the SQLite
// store, in one transaction.
func fillSQLite(t testing.TB, s *sqlite.Store, targets []backlogTarget, n int, from time.Time, prefix string) {
	t.Helper()
	err := s.WithTx(context.Background(), func(ctx context.Context, tx *sqlx.Tx) error {
		for j := range n {
			tg := targets[j%len(targets)]
			at := sqlite.FormatTime(from.Add(time.Duration(j) * time.Millisecond))
			ev, id := "evt_"+prefix+strconv.Itoa(j), "wd_"+prefix+strconv.Itoa(j)
			if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_events (id, account_id, type, body, created_utc)
				VALUES (?, ?, 'webhook.test', ?, ?)`, ev, tg.account, fmt.Sprintf(`{"n":%d}`, j), at); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries
					(id, event_id, endpoint_id, account_id, status, attempts, next_attempt_utc, created_utc)
				VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)`, id, ev, tg.endpoint, tg.account, at, at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("fill the backlog: %v", err)
	}
}

// planCost sums, over the nodes of an EXPLAIN (ANALYZE, FORMAT JSON)
// plan, the rows each node produced or filtered out, times its loops: how
// many rows the query touched.
func planCost(node map[string]any) float64 {
	num := func(k string) float64 { v, _ := node[k].(float64); return v }
	loops := max(num("Actual Loops"), 1)
	total := (num("Actual Rows") + num("Rows Removed by Filter") + num("Rows Removed by Index Recheck") +
		num("Rows Removed by Join Filter")) * loops
	if kids, ok := node["Plans"].([]any); ok {
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				total += planCost(m)
			}
		}
	}
	return total
}

// planSummary is one line of a plan: its nodes and the indexes they use,
// outermost first.
func planSummary(node map[string]any) string {
	s, _ := node["Node Type"].(string)
	if ix, ok := node["Index Name"].(string); ok {
		s += " " + ix
	} else if rel, ok := node["Relation Name"].(string); ok {
		s += " " + rel
	}
	if kids, ok := node["Plans"].([]any); ok {
		var parts []string
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				parts = append(parts, planSummary(m))
			}
		}
		s += "(" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// TestWebhookClaimPlans: the queries of a delivery claim and of
// NextWebhookDue touch the same few rows and pages with 10,000 deliveries
// in the table as with none (and with 100,000 under LOCRISK_LOAD=1),
// whether PostgreSQL plans them for the parameters or generically, as it
// does for a prepared statement run many times. Half of each backlog is
// history, the rest pending, some of it leased, and 2,000 of it have just
// been claimed and delivered, leaving the dead row versions and index
// entries a drain leaves.
//
//	LOCRISK_TEST_POSTGRES=... go test -run WebhookClaimPlans -v ./internal/pgstore
func TestWebhookClaimPlans(t *testing.T) {
	server := serverDSN(t)
	sizes := []int{10_000}
	if os.Getenv("LOCRISK_LOAD") != "" {
		sizes = append(sizes, 100_000)
	}
	at := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	for _, n := range sizes {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			s := openFresh(t, server, Options{})
			ctx := context.Background()
			targets := newBacklogTargets(t, s, backlogShape{accounts: 3, endpoints: 4}, "https://hooks.example.com/x", at)
			// History: a quarter delivered to the active endpoints, a
			// quarter failed to an endpoint since disabled.
			fillPostgres(t, s, targets, n/4, at, "old", false)
			if _, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries
				SET status = 'succeeded', attempts = 1, next_attempt_utc = NULL, delivered_utc = created_utc`); err != nil {
				t.Fatal(err)
			}
			gone := newBacklogTargets(t, s, backlogShape{accounts: 1, endpoints: 1}, "https://hooks.example.com/gone", at)
			fillPostgres(t, s, gone, n/4, at, "gone", false)
			if _, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries
				SET status = 'failed', attempts = 1, next_attempt_utc = NULL WHERE endpoint_id = $1`, gone[0].endpoint); err != nil {
				t.Fatal(err)
			}
			if err := s.DisableWebhookEndpoint(ctx, gone[0].account, gone[0].endpoint, at); err != nil {
				t.Fatal(err)
			}
			// Pending: the rest, each endpoint's due after the one
			// before it, so that a claim for the last endpoint which
			// walked the due deliveries in time order would pass the
			// others' first.
			fillPostgres(t, s, targets, n-n/2, at.Add(time.Hour), "new", true)
			now := at.Add(2 * time.Hour)
			for range 2000 {
				task, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, backlogLimits, now)
				if err != nil || !ok {
					t.Fatalf("claim: %v %v", ok, err)
				}
				if _, err := s.RecordWebhookAttempt(ctx, task, locrisk.DeliveryAttempt{Success: true, Started: now}, now); err != nil {
					t.Fatal(err)
				}
			}
			for range 10 {
				if _, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, backlogLimits, now); err != nil || !ok {
					t.Fatalf("claim: %v %v", ok, err)
				}
			}
			if _, err := s.db.ExecContext(ctx, `ANALYZE`); err != nil {
				t.Fatal(err)
			}
			for _, q := range []struct {
				name  string
				claim bool // run after claimLock, as the claim is
				text  string
				args  []any
			}{
				{"claim", true, claimDelivery, []any{now, backlogLimits.PerEndpoint, backlogLimits.PerAccount, now.Add(time.Minute),
					locrisk.ErrorEndpointDisabled}},
				{"next due", false, nextDeliveryDue, []any{now, backlogLimits.PerEndpoint, backlogLimits.PerAccount}},
			} {
				for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
					p := explain(t, s, q.claim, mode, q.text, q.args)
					t.Logf("%s, %s: %.0f rows touched, %d pages, %.2f ms: %s", q.name, mode, p.rows, p.pages, p.ms, p.summary)
					// The claim walks the 12 active endpoints: a seek
					// each, and counts over the leased rows only: about
					// 200 rows and 300 pages.
					if p.rows > 1000 || p.pages > 1500 {
						t.Errorf("%s (%s) touches %.0f rows and %d pages with %d deliveries: it grows with the table",
							q.name, mode, p.rows, p.pages, n)
					}
				}
			}
		})
	}
}

// explained is what EXPLAIN ANALYZE says of a query: the rows it
// touched (planCost), the pages it read from the buffers or the disk, its
// execution time in milliseconds and its plan in one line.
type explained struct {
	rows    float64
	pages   int64
	ms      float64
	summary string
}

// explain runs EXPLAIN ANALYZE of query on a connection of its own, in a
// transaction rolled back afterwards, after claimLock if claim, with
// plan_cache_mode set to mode.
func explain(t *testing.T, s *Store, claim bool, mode, query string, args []any) explained {
	t.Helper()
	ctx := context.Background()
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if claim {
		if _, err := tx.ExecContext(ctx, claimLock, deliveryClaimLock); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.ExecContext(ctx, `SET LOCAL plan_cache_mode = `+mode); err != nil {
		t.Fatal(err)
	}
	var out string
	if err := tx.GetContext(ctx, &out, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+query, args...); err != nil {
		t.Fatalf("explain: %v", err)
	}
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
	return explained{rows: planCost(top), pages: int64(hit + read), ms: plans[0].ExecutionTime, summary: planSummary(top)}
}

// drainStats is how a drain went; drainByClaims also times its calls.
type drainStats struct {
	delivered int
	elapsed   time.Duration
	// claims that leased a delivery, claims that found none; the time
	// spent in each kind, and in recording.
	claims, empty        int64
	claimTime, emptyTime time.Duration
	recordTime           time.Duration
}

func (d drainStats) rate() float64 { return float64(d.delivered) / d.elapsed.Seconds() }

func (d drainStats) String() string {
	s := fmt.Sprintf("%d delivered in %.1f s, %.0f/s", d.delivered, d.elapsed.Seconds(), d.rate())
	if d.claims > 0 {
		s += fmt.Sprintf(" (claim %.2f ms, record %.2f ms", msPer(d.claimTime, d.claims), msPer(d.recordTime, d.claims))
		if d.empty > 0 {
			s += fmt.Sprintf(", %d claims finding nothing, %.2f ms", d.empty, msPer(d.emptyTime, d.empty))
		}
		s += ")"
	}
	return s
}

// msPer is total / n in milliseconds.
func msPer(total time.Duration, n int64) float64 {
	return float64(total) / float64(time.Millisecond) / float64(n)
}

// drainByClaims works a backlog of want deliveries off nodes as the
// delivery worker would with a receiver that answers at once: perNode
// goroutines on each node claim a delivery, record its success and claim
// again; a claim that finds nothing asks NextWebhookDue, as an idle
// worker does, and tries again a millisecond later. It stops when want
// are delivered or after deadline, and checks on the way that no delivery
// is handed out twice and that the attempts in flight stay within
// backlogLimits.
func drainByClaims(t *testing.T, nodes []locrisk.WebhookOutbox, perNode, want int, deadline time.Duration) drainStats {
	ctx := context.Background()
	var (
		mu         sync.Mutex
		seen       = map[string]bool{}
		byEndpoint = map[string]int{}
		byAccount  = map[string]int{}
		delivered  atomic.Int64
		failed     atomic.Bool
		wg         sync.WaitGroup
		st         drainStats
	)
	start := time.Now()
	stop := start.Add(deadline)
	for _, node := range nodes {
		for range perNode {
			wg.Go(func() {
				for int(delivered.Load()) < want && !failed.Load() && time.Now().Before(stop) {
					now := time.Now()
					task, ok, err := node.ClaimWebhookDelivery(ctx, 30*time.Second, backlogLimits, now)
					took := time.Since(now)
					mu.Lock()
					if ok {
						st.claims, st.claimTime = st.claims+1, st.claimTime+took
					} else {
						st.empty, st.emptyTime = st.empty+1, st.emptyTime+took
					}
					mu.Unlock()
					if err != nil {
						t.Errorf("claim: %v", err)
						failed.Store(true)
						return
					}
					if !ok {
						if _, _, err := node.NextWebhookDue(ctx, backlogLimits, now); err != nil {
							t.Errorf("next due: %v", err)
							failed.Store(true)
							return
						}
						time.Sleep(time.Millisecond)
						continue
					}
					mu.Lock()
					if seen[task.ID] {
						t.Errorf("delivery %s claimed twice", task.ID)
						failed.Store(true)
					}
					seen[task.ID] = true
					byEndpoint[task.EndpointID]++
					byAccount[task.AccountID]++
					if byEndpoint[task.EndpointID] > backlogLimits.PerEndpoint || byAccount[task.AccountID] > backlogLimits.PerAccount {
						t.Errorf("%d attempts in flight to endpoint %s, %d to its account: over the limits %+v",
							byEndpoint[task.EndpointID], task.EndpointID, byAccount[task.AccountID], backlogLimits)
						failed.Store(true)
					}
					mu.Unlock()
					// The attempt, which ends before the record starts:
					// counted from the claim's return to here, inside the
					// lease, the attempts in flight are never more than
					// the store holds leases for.
					runtime.Gosched()
					mu.Lock()
					byEndpoint[task.EndpointID]--
					byAccount[task.AccountID]--
					mu.Unlock()
					recorded := time.Now()
					status, err := node.RecordWebhookAttempt(ctx, task, locrisk.DeliveryAttempt{Success: true, ResponseStatus: 204,
						Started: now}, recorded)
					mu.Lock()
					st.recordTime += time.Since(recorded)
					mu.Unlock()
					if err != nil || status != locrisk.DeliverySucceeded {
						t.Errorf("record: %v %v", status, err)
						failed.Store(true)
						return
					}
					delivered.Add(1)
				}
			})
		}
	}
	wg.Wait()
	st.delivered, st.elapsed = int(delivered.Load()), time.Since(start)
	return st
}

// countingObserver counts the attempts the delivery workers recorded as
// succeeded.
type countingObserver struct{ n atomic.Int64 }

func (o *countingObserver) DeliveryAttempt(outcome string, _ time.Duration) {
	if outcome == webhookworker.OutcomeSucceeded {
		o.n.Add(1)
	}
}

// drainByWorkers runs serve's delivery worker (internal/webhookworker,
// default workers and limits) on each node, sending to receivers that
// answer 204 at once, until want deliveries are recorded as succeeded or
// deadline has passed.
func drainByWorkers(t *testing.T, nodes []locrisk.WebhookOutbox, want int, deadline time.Duration) drainStats {
	obs := &countingObserver{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	start := time.Now()
	for _, node := range nodes {
		w := webhookworker.New(node, webhookworker.Config{AllowPrivate: true, Observer: obs,
			Logger: slog.New(slog.DiscardHandler)})
		wg.Go(func() { w.Run(ctx) })
	}
	for int(obs.n.Load()) < want && time.Since(start) < deadline {
		time.Sleep(5 * time.Millisecond)
	}
	st := drainStats{delivered: int(obs.n.Load()), elapsed: time.Since(start)}
	cancel()
	wg.Wait()
	return st
}

// TestWebhookBacklogDrain measures how fast 10,000 pending webhook
// deliveries are worked off: by the SQLite store on one node, then by
// two PostgreSQL stores (two nodes, each its own connection pool) on one
// database, in one run. Two shapes: every delivery to one endpoint (the
// case that used to hold every claim up), and spread over 4 accounts of 5
// endpoints. Three drivers:
// claim-and-record loops on the stores (4 goroutines a node), and serve's
// delivery worker with its defaults sending to a local receiver that
// answers at once, or after 10 ms. The first two measure the stores; with
// a receiver that takes its time, the limits on attempts in flight bound
// both stores alike (one endpoint: 2 attempts at a time, about 200 a
// second).
//
//	LOCRISK_LOAD=1 LOCRISK_TEST_POSTGRES=... go test -run WebhookBacklogDrain -v -timeout 30m ./internal/pgstore
//
// LOCRISK_WEBHOOK_BACKLOG sets the number of deliveries (10,000);
// LOCRISK_WEBHOOK_DEADLINE bounds each drain (3m), after which it
// reports what it delivered; LOCRISK_WEBHOOK_ROUNDS repeats each pair of
// drains (1), since one round on a shared machine says little.
func TestWebhookBacklogDrain(t *testing.T) {
	if os.Getenv("LOCRISK_LOAD") == "" {
		t.Skip("need LOCRISK_LOAD=1: the webhook backlog measurement")
	}
	server := serverDSN(t)
	n := 10_000
	if v := os.Getenv("LOCRISK_WEBHOOK_BACKLOG"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			t.Fatalf("LOCRISK_WEBHOOK_BACKLOG=%q", v)
		}
	}
	deadline := 3 * time.Minute
	if v := os.Getenv("LOCRISK_WEBHOOK_DEADLINE"); v != "" {
		var err error
		if deadline, err = time.ParseDuration(v); err != nil {
			t.Fatalf("LOCRISK_WEBHOOK_DEADLINE=%q", v)
		}
	}
	rounds := 1
	if v := os.Getenv("LOCRISK_WEBHOOK_ROUNDS"); v != "" {
		var err error
		if rounds, err = strconv.Atoi(v); err != nil || rounds <= 0 {
			t.Fatalf("LOCRISK_WEBHOOK_ROUNDS=%q", v)
		}
	}
	receiver := func(delay time.Duration) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(delay)
			w.WriteHeader(http.StatusNoContent)
		}))
	}
	instant, slow := receiver(0), receiver(10*time.Millisecond)
	defer instant.Close()
	defer slow.Close()

	type driver struct {
		name  string
		url   string // the receiver the endpoints send to
		drain func(t *testing.T, nodes []locrisk.WebhookOutbox) drainStats
	}
	workers := func(t *testing.T, nodes []locrisk.WebhookOutbox) drainStats {
		return drainByWorkers(t, nodes, n, deadline)
	}
	drivers := []driver{
		{"claim loops", instant.URL, func(t *testing.T, nodes []locrisk.WebhookOutbox) drainStats {
			return drainByClaims(t, nodes, 4, n, deadline)
		}},
		{"delivery workers", instant.URL, workers},
		{"delivery workers, receiver answering in 10 ms", slow.URL, workers},
	}
	for _, shape := range []backlogShape{{"one endpoint", 1, 1}, {"4 accounts of 5 endpoints", 4, 5}} {
		for _, d := range drivers {
			t.Run(shape.name+"/"+d.name, func(t *testing.T) {
				for round := 1; round <= rounds; round++ {
					lite, pg := drainBoth(t, server, shape, d.url, n, d.drain)
					t.Logf("%d deliveries, %s, %s, round %d: SQLite, one node: %v; PostgreSQL, two nodes: %v, %.0f%% of SQLite's rate",
						n, shape.name, d.name, round, lite, pg, 100*pg.rate()/lite.rate())
					if lite.delivered < n || pg.delivered < n {
						t.Errorf("not all %d delivered within %v: SQLite %d, PostgreSQL %d", n, deadline, lite.delivered, pg.delivered)
					}
				}
			})
		}
	}
}

// drainBoth fills a backlog of n deliveries of the shape to url on a new
// SQLite store and drains it, then does the same on a new PostgreSQL
// database with two stores (nodes).
func drainBoth(t *testing.T, server string, shape backlogShape, url string, n int,
	drain func(t *testing.T, nodes []locrisk.WebhookOutbox) drainStats) (lite, pg drainStats) {
	ctx := context.Background()
	at := time.Now().Add(-time.Hour)
	ls, err := sqlite.OpenWith(ctx, filepath.Join(t.TempDir(), "locrisk.db"), sqlite.Options{Secrets: testSecrets(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	fillSQLite(t, ls, newBacklogTargets(t, ls, shape, url, at), n, at, "b")
	lite = drain(t, []locrisk.WebhookOutbox{ls})

	first := openFresh(t, server, Options{})
	second, err := Open(ctx, first.dsn, Options{Secrets: testSecrets(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	fillPostgres(t, first, newBacklogTargets(t, first, shape, url, at), n, at, "b", false)
	if _, err := first.db.ExecContext(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	pg = drain(t, []locrisk.WebhookOutbox{first, second})
	return lite, pg
}

// BenchmarkWebhookClaim measures a delivery claim on PostgreSQL (and the
// release that puts the delivery back, so that every iteration sees the
// same backlog) with 1,000, 10,000 and 100,000 pending deliveries spread
// over 4 accounts of 5 endpoints: a claim reads, per endpoint it looks
// at, the leases in force and one due delivery, so it costs the same at
// each size.
//
//	LOCRISK_TEST_POSTGRES=... go test ./internal/pgstore -run '^$' -bench WebhookClaim -benchtime 2000x
func BenchmarkWebhookClaim(b *testing.B) {
	server := os.Getenv(serverEnv)
	if server == "" {
		b.Skipf("need %s, the URL of a PostgreSQL server to test on (docs/postgres.md#testing)", serverEnv)
	}
	at := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			s := openFresh(b, server, Options{})
			ctx := context.Background()
			fillPostgres(b, s, newBacklogTargets(b, s, backlogShape{accounts: 4, endpoints: 5}, "https://hooks.example.com/x", at),
				n, at, "b", false)
			if _, err := s.db.ExecContext(ctx, `ANALYZE`); err != nil {
				b.Fatal(err)
			}
			now := at.Add(time.Hour)
			for b.Loop() {
				task, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, backlogLimits, now)
				if err != nil || !ok {
					b.Fatal(ok, err)
				}
				if err := s.ReleaseWebhookDelivery(ctx, task); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
