package server

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/loadgen"
	"github.com/locrisk/locrisk/internal/outbox"
	"github.com/locrisk/locrisk/internal/sqlite"
	"github.com/locrisk/locrisk/internal/view"
	"github.com/locrisk/locrisk/internal/webhook"
)

// TestScale is the large-database measurement (docs/performance.md, A
// large database), which shows that job creation and reads stay fast as
// the jobs pile up: it
// fills a database with jobs and what comes with them (reports, batches
// and their items, webhook events and deliveries) for several accounts
// through the store's operations (fillScale), measures job creation on it in turns with an empty database
// in the same run, then the latency of every read endpoint as the account
// holding most of the jobs. It is opt-in because the fill
// takes minutes at its default size:
//
//	LOCRISK_LOAD=1 go test ./internal/server -run 'TestScale$' -v -timeout 1h
//
// LOCRISK_SCALE_JOBS sets the number of jobs (default 200000). Each report
// body is a compact stand-in of about 300 bytes rather than a real ~19 KB
// report: the read endpoints measured here never read report bodies, and
// 2 million real bodies would need ~38 GB. The normal suite runs the same
// scenario small (TestScaleSmall).
func TestScale(t *testing.T) {
	if os.Getenv("LOCRISK_LOAD") == "" {
		t.Skip("need LOCRISK_LOAD=1: the scale measurement")
	}
	n := 200_000
	if v := os.Getenv("LOCRISK_SCALE_JOBS"); v != "" {
		x, err := strconv.Atoi(v)
		if err != nil || x < 1000 {
			t.Fatalf("LOCRISK_SCALE_JOBS=%q: want a number >= 1000", v)
		}
		n = x
	}
	r := runScale(t, n, 3*time.Second, 300)
	r.log(t)
}

// TestScaleSmall is TestScale at a size the normal suite can afford. It
// asserts no timings (the machine is shared): every request it makes,
// a cursor deep in the list included, must succeed.
func TestScaleSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("in -short mode")
	}
	r := runScale(t, 3000, 100*time.Millisecond, 5)
	r.log(t)
	for _, rd := range r.reads {
		if len(rd.lat) == 0 {
			t.Errorf("%s: no request measured", rd.name)
		}
	}
}

// Shape of the fill: scaleAccounts accounts, the first (the one measured)
// holding scaleHeavyShare of the jobs; jobs spread evenly over the
// scaleDays days before the clock; one job in scaleBulkEvery made by a
// batch of scaleBatchItems items; one webhook event and delivery per job.
const (
	scaleAccounts   = 4
	scaleHeavyShare = 0.7
	scaleDays       = 90
	scaleBulkEvery  = 10
	scaleBatchItems = 100
	// Job creation is measured in this many rounds of the window on each
	// database, taking turns.
	scaleCreateRounds = 3
)

type scaleRead struct {
	name string
	lat  []time.Duration
}

type scaleResult struct {
	jobs              int
	fill              time.Duration
	emptyCreate       loadgen.Result
	fullCreate        loadgen.Result
	reads             []scaleRead
	heavyJobs, sample int
}

func (r scaleResult) log(t *testing.T) {
	t.Logf("scale: %d jobs (%d of them the measured account's), filled in %s (%.0f jobs/s)",
		r.jobs, r.heavyJobs, r.fill.Round(time.Second), float64(r.jobs)/r.fill.Seconds())
	t.Logf("job creation, %d clients, %d rounds in turns: empty %.0f req/s (p99 %.1f ms), full %.0f req/s (p99 %.1f ms): %.0f%% of empty",
		loadgen.Clients, scaleCreateRounds, r.emptyCreate.Rate(), r.emptyCreate.PctMS(99), r.fullCreate.Rate(), r.fullCreate.PctMS(99),
		100*r.fullCreate.Rate()/r.emptyCreate.Rate())
	t.Logf("%-34s %8s %8s %8s %9s  (one at a time, at most %d each)", "read endpoint", "p50 ms", "p99 ms", "max ms", "requests", r.sample)
	for _, rd := range r.reads {
		lr := loadgen.Result{Lat: rd.lat}
		t.Logf("%-34s %8.2f %8.2f %8.2f %9d", rd.name, lr.PctMS(50), lr.PctMS(99), lr.PctMS(100), len(rd.lat))
	}
}

// runScale fills a database with n jobs and measures, as TestScale says.
// window is each job-creation measurement's length, reads the number of
// requests to each read endpoint.
func runScale(t *testing.T, n int, window time.Duration, reads int) scaleResult {
	const readBudget = 20 * time.Second
	ctx := context.Background()
	// The outbox hook writes each completed job's event and delivery, as
	// serve's store does (cmd/locrisk).
	e := newEnvStore(t, Config{}, sqlite.Options{OnJobFinal: []locrisk.JobFinalHook{outbox.Hook(nil)}})
	accts := make([]locrisk.Account, scaleAccounts)
	for i := range accts {
		accts[i] = e.account(1<<30, 1<<30)
	}
	key := e.allScopesKey(accts[0])
	ts := httptest.NewServer(e.h)
	defer ts.Close()
	client := benchClient(ts)
	r := scaleResult{jobs: n, sample: reads}

	// The empty database job creation is compared with: a second server
	// of its own, measured in turns with the filled one below, so that
	// what else the shared machine is doing weighs on both alike.
	e0 := newEnv(t)
	ts0 := httptest.NewServer(e0.h)
	defer ts0.Close()
	send0 := loadgen.CreateJobs(e0.allScopesKey(e0.account(1<<30, 1<<30)))

	start := time.Now()
	f := fillScale(t, ctx, e, accts, n)
	r.fill = time.Since(start)
	r.heavyJobs = len(f.heavyJobs)

	// Creation runs as another account of the fill: its tens of thousands
	// of queued jobs, created within the hour, would otherwise be the
	// measured account's backlog, which its operations summary counts
	// row by row (docs/performance.md, "A large database").
	send := loadgen.CreateJobs(e.allScopesKey(accts[1]))
	for round := range scaleCreateRounds {
		// Each round its own idempotency keys.
		next := func(s loadgen.Sender) loadgen.Sender {
			return func(buf []byte, i int64) []byte { return s(buf, i+int64(round)<<40) }
		}
		for _, run := range []struct {
			into *loadgen.Result
			ts   *httptest.Server
			send loadgen.Sender
		}{{&r.emptyCreate, ts0, next(send0)}, {&r.fullCreate, ts, next(send)}} {
			res, err := loadgen.Run(run.ts.Listener.Addr().String(), loadgen.Clients, window, run.send)
			if err != nil {
				t.Fatal(err)
			}
			run.into.Add(res)
		}
	}

	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	deep := func() string { return url.QueryEscape(pick(f.deep)) }
	for _, rd := range []struct {
		name string
		path func() string
	}{
		{"job list, first page (100)", func() string { return jobsPath + "?limit=100" }},
		{"job list, deep cursor (100)", func() string { return jobsPath + "?limit=100&cursor=" + deep() }},
		{"job list, completed, first page", func() string { return jobsPath + "?limit=100&status=completed" }},
		{"one job", func() string { return view.JobPath(pick(f.heavyJobs)) }},
		{"batch list, first page", func() string { return view.BatchesPath + "?limit=100" }},
		{"one batch", func() string { return view.BatchPath(pick(f.batches)) }},
		{"batch items (100)", func() string { return view.BatchItemsPath(pick(f.batches)) }},
		{"usage current", func() string { return view.UsageCurrentPath }},
		{"usage history, 30 days", func() string { return view.UsageHistoryPath }},
		{"usage history, 90 days", func() string { return view.UsageHistoryPath + "?days=90" }},
		{"operations summary", func() string { return view.ObservabilityPath }},
		{"operations summary, 168 hours", func() string { return view.ObservabilityPath + "?hours=168" }},
		{"webhook deliveries, first page", func() string { return view.WebhookDeliveriesPath + "?limit=100" }},
	} {
		res := scaleRead{name: rd.name}
		// A slow endpoint at a large scale stops after readBudget (with at
		// least 20 requests), so the run ends in minutes; the log shows
		// how many requests each p99 is from.
		until := time.Now().Add(readBudget)
		for i := 0; i < reads && (i < 20 || time.Now().Before(until)); i++ {
			req, _ := http.NewRequest("GET", ts.URL+rd.path(), nil)
			req.Header.Set("Authorization", "Bearer "+key)
			begin := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", rd.name, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			took := time.Since(begin)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: GET %s: status %d %s", rd.name, req.URL.Path, resp.StatusCode, body)
			}
			if strings.Contains(rd.name, "(100)") && strings.Count(string(body), `"latitude"`) < 100 {
				t.Fatalf("%s: fewer than 100 items: %.300s", rd.name, body)
			}
			res.lat = append(res.lat, took)
		}
		r.reads = append(r.reads, res)
	}
	return r
}

// scaleFill is what fillScale made that the reads need.
type scaleFill struct {
	heavyJobs []string // the measured account's jobs, newest first
	deep      []string // cursors of the measured account's job list, from half way down
	batches   []string // the measured account's batches of scaleBatchItems items
}

// scaleMake is one creation of the fill: a job, or a batch of jobs, of one
// account at one time.
type scaleMake struct {
	acct    int
	created time.Time
	coords  [][2]float64 // one job, or a batch's items
	bulk    bool
}

// fillScale makes n completed jobs spread over accts, with a webhook event
// and a delivered delivery each, through the store's own operations, as
// the service would have over the scaleDays days before the clock: each
// job created at its time, claimed, completed 3 ms later with a report
// (the outbox hook writing its event and delivery in that transaction),
// and the delivery recorded as succeeded when the job completed. Writers
// run side by side, so their transactions share commits (group commit,
// docs/operations.md, The database file): filling is not what is
// measured.
func fillScale(t *testing.T, ctx context.Context, e *env, accts []locrisk.Account, n int) scaleFill {
	t.Helper()
	const writers = 16
	from := t0.Add(-scaleDays * 24 * time.Hour)
	for _, a := range accts {
		// Never called: the deliveries are recorded below, not sent.
		if _, _, err := e.st.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{AccountID: a.ID, Name: "scale",
			URL: "https://127.0.0.1:9/hook", Events: []string{webhook.EventJobCompleted}}, from); err != nil {
			t.Fatal(err)
		}
	}

	// What to create: one job in scaleBulkEvery a batch's, each batch
	// taking its account's next scaleBatchItems bulk jobs at the time of
	// the first.
	step := scaleDays * 24 * time.Hour / time.Duration(n)
	var makes []scaleMake
	open := make([]int, len(accts)) // index in makes of each account's batch being filled, -1 for none
	for i := range open {
		open[i] = -1
	}
	for i := range n {
		a := 0
		if float64(i%100) >= 100*scaleHeavyShare {
			a = 1 + i%(scaleAccounts-1)
		}
		coord := [2]float64{25 + float64(i%2000)/100, -70 - float64(i%5000)/100}
		if i%scaleBulkEvery != 0 {
			makes = append(makes, scaleMake{acct: a, created: from.Add(time.Duration(i) * step), coords: [][2]float64{coord}})
			continue
		}
		if open[a] < 0 || len(makes[open[a]].coords) == scaleBatchItems {
			open[a] = len(makes)
			makes = append(makes, scaleMake{acct: a, created: from.Add(time.Duration(i) * step), bulk: true})
		}
		makes[open[a]].coords = append(makes[open[a]].coords, coord)
	}

	var (
		f  scaleFill
		mu sync.Mutex
	)
	each := func(what string, work func(w int) (more bool, err error)) {
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				for {
					more, err := work(w)
					if err != nil {
						errs <- fmt.Errorf("%s: %w", what, err)
						return
					}
					if !more {
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
	}
	var next atomic.Int64
	each("create", func(int) (bool, error) {
		i := int(next.Add(1)) - 1
		if i >= len(makes) {
			return false, nil
		}
		m := makes[i]
		acct := accts[m.acct].ID
		if !m.bulk {
			_, _, err := e.st.CreateJob(ctx, locrisk.NewJob{AccountID: acct, Bucket: locrisk.BucketAPI,
				Latitude: m.coords[0][0], Longitude: m.coords[0][1]}, m.created)
			return true, err
		}
		nb := locrisk.NewBatch{AccountID: acct, Name: "scale"}
		for k, c := range m.coords {
			nb.Items = append(nb.Items, locrisk.NewBatchItem{ExternalID: fmt.Sprint("row-", k+1), Latitude: &c[0], Longitude: &c[1]})
		}
		b, _, err := e.st.CreateBatch(ctx, nb, m.created)
		if err == nil && m.acct == 0 && len(m.coords) == scaleBatchItems {
			mu.Lock()
			f.batches = append(f.batches, b.ID)
			mu.Unlock()
		}
		return true, err
	})
	each("complete", func(w int) (bool, error) {
		owner := fmt.Sprint("scale-", w)
		j, ok, err := e.st.ClaimJob(ctx, owner, time.Hour, t0)
		if err != nil || !ok {
			return false, err
		}
		body := fmt.Sprintf(`{"location":{"latitude":%g,"longitude":%g,"stateCode":"XX"},"overall":{"score":%d,"level":"moderate"},"hazards":[{"id":"flood","score":41},{"id":"wildfire","score":12},{"id":"earthquake","score":7},{"id":"severe_weather","score":55}],"note":"compact stand-in for a real report body"}`,
			j.Latitude, j.Longitude, int(j.Latitude*100)%100)
		_, err = e.st.CompleteJob(ctx, j.ID, owner, locrisk.Report{DataVersion: "scale", Body: []byte(body)}, j.CreatedUTC.Add(3*time.Millisecond))
		return true, err
	})
	limits := locrisk.DeliveryLimits{PerEndpoint: writers, PerAccount: writers}
	each("deliver", func(int) (bool, error) {
		d, ok, err := e.st.ClaimWebhookDelivery(ctx, time.Hour, limits, t0)
		if err != nil || !ok {
			return false, err
		}
		j, err := e.st.GetJob(ctx, d.AccountID, d.JobID)
		if err != nil {
			return false, err
		}
		done := *j.CompletedUTC
		_, err = e.st.RecordWebhookAttempt(ctx, d, locrisk.DeliveryAttempt{Success: true, ResponseStatus: 200, Started: done}, done)
		return true, err
	})

	// The fill is what the measurement assumes: every job completed, in
	// the scaleDays days (and the day the last one ended), none left in
	// the queue, no delivery pending.
	completed := 0
	for _, a := range accts {
		days, err := e.st.UsageHistory(ctx, a.ID, from, scaleDays+1, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range days {
			completed += d.Completed
		}
		ops, err := e.st.OpsSummary(ctx, a.ID, t0.Add(-time.Hour), t0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ops.Jobs.Queued != 0 || ops.Jobs.Processing != 0 || ops.Webhooks.Pending != 0 {
			t.Fatalf("account %s after the fill: jobs %+v, webhooks %+v; want nothing queued or pending", a.ID, ops.Jobs, ops.Webhooks)
		}
	}
	if completed != n {
		t.Fatalf("%d jobs completed by the fill, want %d", completed, n)
	}

	// The measured account's jobs, and cursors deep in its list: the
	// list's own (a cursor is opaque to clients, docs/api.md, List jobs),
	// from half way down, each with a full page behind it.
	cursor := ""
	for {
		page, nextCursor, err := e.st.ListJobs(ctx, accts[0].ID, "", 100, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range page {
			f.heavyJobs = append(f.heavyJobs, j.ID)
		}
		if nextCursor == "" {
			break
		}
		cursor = nextCursor
		f.deep = append(f.deep, cursor)
	}
	total := len(f.heavyJobs)
	var deep []string
	for k, c := range f.deep {
		if seen := 100 * (k + 1); seen >= total/2 && total-seen >= 100 {
			deep = append(deep, c)
		}
	}
	if f.deep = deep; len(deep) == 0 || len(f.batches) == 0 {
		t.Fatalf("fill too small to measure: %d jobs of the measured account, %d deep cursors, %d full batches", total, len(deep), len(f.batches))
	}
	return f
}
