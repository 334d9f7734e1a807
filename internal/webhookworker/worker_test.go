package webhookworker_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/outbox"
	"github.com/locrisk/locrisk/internal/secretbox"
	"github.com/locrisk/locrisk/internal/sqlite"
	"github.com/locrisk/locrisk/internal/webhook"
	"github.com/locrisk/locrisk/internal/webhookworker"
)

// openStore opens path with the webhook outbox registered, waking sig.
func openStore(t testing.TB, path string, sig webhookworker.Signal) *sqlite.Store {
	t.Helper()
	st, err := sqlite.OpenWith(context.Background(), path,
		sqlite.Options{OnJobFinal: []locrisk.JobFinalHook{outbox.Hook(sig.Notify)}, Secrets: testSecrets(t)})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return st
}

// testSecrets is a box with a fixed key, for the signing secrets.
func testSecrets(t testing.TB) *secretbox.Box {
	t.Helper()
	b, err := secretbox.New(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixture is an account with one endpoint subscribed to both events.
type fixture struct {
	account  locrisk.Account
	endpoint locrisk.WebhookEndpoint
	secret   string
}

func newFixture(t testing.TB, st *sqlite.Store, url string) fixture {
	t.Helper()
	ctx := context.Background()
	a, err := st.CreateAccount(ctx, "acct", 1<<30, 1000)
	if err != nil {
		t.Fatal(err)
	}
	ep, secret, err := st.CreateWebhookEndpoint(ctx, locrisk.NewWebhookEndpoint{AccountID: a.ID, Name: "test", URL: url,
		Events: []string{webhook.EventJobCompleted, webhook.EventJobFailed}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return fixture{a, ep, secret}
}

// completeJob creates, claims and completes a job of the fixture's account,
// which writes one event and one delivery.
func completeJob(t testing.TB, st *sqlite.Store, f fixture) locrisk.Job {
	t.Helper()
	ctx := context.Background()
	j, _, err := st.CreateJob(ctx, locrisk.NewJob{AccountID: f.account.ID, Latitude: 37.77, Longitude: -122.42}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c, ok, err := st.ClaimJob(ctx, "test", time.Minute, time.Now())
	if err != nil || !ok || c.ID != j.ID {
		t.Fatalf("claim job: %v %v %v", c.ID, ok, err)
	}
	done, err := st.CompleteJob(ctx, j.ID, "test", locrisk.Report{DataVersion: "dv", Body: []byte(`{}`)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return done
}

// hit is a request the receiver got.
type hit struct {
	header http.Header
	body   []byte
	at     time.Time
}

// receiver answers with respond(n) for the n-th request (1-based); respond
// may block, on the request's context for instance.
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	hits    []hit
	arrived chan int
	respond func(r *http.Request, n int) int
}

func newReceiver(t testing.TB, respond func(r *http.Request, n int) int) *receiver {
	rc := &receiver{respond: respond, arrived: make(chan int, 1000)}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.hits = append(rc.hits, hit{r.Header.Clone(), b, time.Now()})
		n := len(rc.hits)
		rc.mu.Unlock()
		rc.arrived <- n
		w.WriteHeader(rc.respond(r, n))
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) all() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.hits)
}

func (rc *receiver) wait(t testing.TB, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got := <-rc.arrived:
			if got >= n {
				return
			}
		case <-timeout:
			t.Fatalf("receiver did not get request %d", n)
		}
	}
}

func ok204(*http.Request, int) int { return http.StatusNoContent }

// startWorker runs a worker until the test ends (or stop is called).
func startWorker(t testing.TB, st *sqlite.Store, cfg webhookworker.Config) (stop func()) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.AllowPrivate = true
	w := webhookworker.New(st, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func onlyDelivery(t testing.TB, st *sqlite.Store, f fixture) locrisk.WebhookDelivery {
	t.Helper()
	ds, err := st.ListWebhookDeliveries(context.Background(), f.account.ID, "", 10)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries: %v %v", ds, err)
	}
	return ds[0]
}

// TestPendingAcrossRestart: deliveries written while no worker runs (the
// process stopped right after the job completed) are sent by the next one.
func TestPendingAcrossRestart(t *testing.T) {
	rc := newReceiver(t, ok204)
	path := filepath.Join(t.TempDir(), "r.db")
	st := openStore(t, path, webhookworker.NewSignal())
	f := newFixture(t, st, rc.srv.URL)
	completeJob(t, st, f)
	completeJob(t, st, f)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	sig := webhookworker.NewSignal()
	st = openStore(t, path, sig)
	defer st.Close()
	startWorker(t, st, webhookworker.Config{Wake: sig})
	rc.wait(t, 2)
	waitStatus(t, st, f, locrisk.DeliverySucceeded, 2)
	if got := len(rc.all()); got != 2 {
		t.Errorf("receiver got %d requests, want 2", got)
	}
}

func waitStatus(t testing.TB, st *sqlite.Store, f fixture, status string, n int) []locrisk.WebhookDelivery {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ds, err := st.ListWebhookDeliveries(context.Background(), f.account.ID, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for _, d := range ds {
			if d.Status == status {
				k++
			}
		}
		if k >= n {
			return ds
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d deliveries %s: %+v", n, status, ds)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLeaseExpiryTakesOver: an attempt whose worker vanished (claimed,
// never recorded) is sent again by another worker once the lease ends.
func TestLeaseExpiryTakesOver(t *testing.T) {
	rc := newReceiver(t, ok204)
	sig := webhookworker.NewSignal()
	st := openStore(t, filepath.Join(t.TempDir(), "l.db"), sig)
	defer st.Close()
	f := newFixture(t, st, rc.srv.URL)
	completeJob(t, st, f)
	const lease = 300 * time.Millisecond
	claimed := time.Now()
	if _, ok, err := st.ClaimWebhookDelivery(context.Background(), lease, locrisk.DeliveryLimits{PerEndpoint: 2, PerAccount: 8}, claimed); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	startWorker(t, st, webhookworker.Config{Wake: sig, Lease: lease})
	rc.wait(t, 1)
	if at := rc.all()[0].at; at.Sub(claimed) < lease {
		t.Errorf("resent %v after the dead claim, before its %v lease ended", at.Sub(claimed), lease)
	}
	d := waitStatus(t, st, f, locrisk.DeliverySucceeded, 1)[0]
	if d.Attempts != 1 {
		t.Errorf("attempts %d, want 1 (the lost attempt left no outcome)", d.Attempts)
	}
}

// TestShutdownReleasesInFlight: an attempt cut off by shutdown is handed
// back uncounted and sent by the next worker.
func TestShutdownReleasesInFlight(t *testing.T) {
	rc := newReceiver(t, func(r *http.Request, n int) int {
		if n == 1 {
			<-r.Context().Done() // hang until the sender gives up
		}
		return http.StatusOK
	})
	sig := webhookworker.NewSignal()
	st := openStore(t, filepath.Join(t.TempDir(), "s.db"), sig)
	defer st.Close()
	f := newFixture(t, st, rc.srv.URL)
	completeJob(t, st, f)
	// Limits as high as the pool: only the turns can put the other
	// account first.
	stop := startWorker(t, st, webhookworker.Config{Workers: 32, PerEndpoint: 32, PerAccount: 32,
		Wake: sig, DrainTimeout: 100 * time.Millisecond})
	rc.wait(t, 1)
	start := time.Now()
	stop()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("shutdown took %v with a 100ms drain timeout", d)
	}
	d := onlyDelivery(t, st, f)
	if d.Status != locrisk.DeliveryPending || d.Attempts != 0 || d.LastAttemptUTC != nil {
		t.Fatalf("after shutdown: %+v", d)
	}
	// Released: claimable at once, not after the 30 s lease.
	startWorker(t, st, webhookworker.Config{Wake: sig})
	rc.wait(t, 2)
	d = waitStatus(t, st, f, locrisk.DeliverySucceeded, 1)[0]
	hits := rc.all()
	if d.Attempts != 1 || hits[0].header.Get(webhook.HeaderDelivery) != hits[1].header.Get(webhook.HeaderDelivery) {
		t.Errorf("delivery %+v; ids %s %s", d, hits[0].header.Get(webhook.HeaderDelivery), hits[1].header.Get(webhook.HeaderDelivery))
	}
	sameStandardID(t, d.EventID, hits, f.secret)
}

// sameStandardID checks that every request carries the event's id as
// webhook-id (the Standard Webhooks message id, the same on a repeated
// attempt) and verifies by that scheme.
func sameStandardID(t *testing.T, eventID string, hits []hit, secret string) {
	t.Helper()
	for i, h := range hits {
		if got := h.header.Values(webhook.HeaderWebhookID); len(got) != 1 || got[0] != eventID {
			t.Errorf("request %d: webhook-id %q, want the event id %s", i+1, got, eventID)
		}
		if err := webhook.VerifyStandard(secret, h.header, h.body, h.at); err != nil {
			t.Errorf("request %d: Standard Webhooks verification: %v", i+1, err)
		}
	}
}

// helperDBEnv names the database a re-executed test binary delivers from.
const helperDBEnv = "LOCRISK_DELIVERY_HELPER_DB"

// TestHelperWorkerProcess is not a test: run by TestSIGKILLRestart in a
// child process, it delivers from the named database until killed.
func TestHelperWorkerProcess(t *testing.T) {
	path := os.Getenv(helperDBEnv)
	if path == "" {
		t.Skip("only run by another test, as its child process: TestSIGKILLRestart")
	}
	sig := webhookworker.NewSignal()
	st := openStore(t, path, sig)
	w := webhookworker.New(st, webhookworker.Config{Wake: sig, AllowPrivate: true, Lease: time.Second, Logger: slog.New(slog.DiscardHandler)})
	w.Run(context.Background()) // until SIGKILL
}

// TestSIGKILLRestart: a worker process is killed with SIGKILL in the middle
// of an attempt; after its lease ends, a new worker sends the delivery
// again, with the same delivery id.
func TestSIGKILLRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("in -short mode: starts a child process")
	}
	release := make(chan struct{})
	rc := newReceiver(t, func(r *http.Request, n int) int {
		if n == 1 {
			select { // the child dies while this request is open
			case <-release:
			case <-r.Context().Done():
			}
			return http.StatusOK
		}
		return http.StatusOK
	})
	defer close(release)
	path := filepath.Join(t.TempDir(), "k.db")
	st := openStore(t, path, webhookworker.NewSignal())
	f := newFixture(t, st, rc.srv.URL)
	completeJob(t, st, f)
	st.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWorkerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperDBEnv+"="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rc.wait(t, 1)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = cmd.Wait()

	sig := webhookworker.NewSignal()
	st = openStore(t, path, sig)
	defer st.Close()
	d := onlyDelivery(t, st, f)
	if d.Status != locrisk.DeliveryPending || d.Attempts != 0 {
		t.Fatalf("after SIGKILL: %+v", d)
	}
	startWorker(t, st, webhookworker.Config{Wake: sig, Lease: time.Second})
	rc.wait(t, 2)
	d = waitStatus(t, st, f, locrisk.DeliverySucceeded, 1)[0]
	hits := rc.all()
	if len(hits) != 2 || hits[0].header.Get(webhook.HeaderDelivery) != d.ID || hits[1].header.Get(webhook.HeaderDelivery) != d.ID {
		t.Errorf("%d requests; delivery ids %q %q, want %s twice", len(hits), hits[0].header.Get(webhook.HeaderDelivery),
			hits[len(hits)-1].header.Get(webhook.HeaderDelivery), d.ID)
	}
	if err := webhook.Verify(f.secret, hits[1].header, hits[1].body, hits[1].at); err != nil {
		t.Errorf("resent delivery does not verify: %v", err)
	}
	sameStandardID(t, d.EventID, hits, f.secret)
	if gap := hits[1].at.Sub(killed); gap > 5*time.Second {
		t.Errorf("resent %v after the kill; the lease was 1s", gap)
	}
}

// completionToReceiver completes n jobs one at a time and returns, for each,
// the time from CompleteJob returning to the receiver getting the event.
func completionToReceiver(t testing.TB, n int) []time.Duration {
	rc := newReceiver(t, ok204)
	sig := webhookworker.NewSignal()
	st := openStore(t, filepath.Join(t.TempDir(), "b.db"), sig)
	t.Cleanup(func() { st.Close() })
	f := newFixture(t, st, rc.srv.URL)
	startWorker(t, st, webhookworker.Config{Wake: sig})
	out := make([]time.Duration, 0, n)
	for i := range n {
		completeJob(t, st, f)
		done := time.Now()
		rc.wait(t, i+1)
		out = append(out, rc.all()[i].at.Sub(done))
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkCompletionToReceiver reports the median delay from a job's final
// transaction committing to the receiver getting the event.
func BenchmarkCompletionToReceiver(b *testing.B) {
	ds := completionToReceiver(b, b.N)
	b.ReportMetric(float64(median(ds).Microseconds())/1000, "median-ms")
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)*95/100].Microseconds())/1000, "p95-ms")
}

// TestSlowEndpointDelaysOnlyItself: one account's receivers sleep seconds
// on every delivery and have a backlog larger than the worker pool;
// another account's delivery, written after that backlog, still arrives
// within a second. Each slow endpoint never has more than PerEndpoint
// attempts open at once, and the slow account never more than PerAccount:
// with 20 slow endpoints (the most an account may have) the per-endpoint
// limit alone would let it hold 40 workers, more than the default pool.
func TestSlowEndpointDelaysOnlyItself(t *testing.T) {
	tests := []struct {
		name      string
		cfg       webhookworker.Config
		endpoints int // the slow account's endpoints
		backlog   int // the slow account's completed jobs, each a delivery per endpoint
		perEP     int // the per-endpoint limit in effect
		perAcct   int // the per-account limit in effect
	}{
		{"small pool", webhookworker.Config{Workers: 4, PerEndpoint: 2, PerAccount: 3}, 1, 20, 2, 3},
		{"defaults", webhookworker.Config{}, 1, 100, webhookworker.DefaultPerEndpoint, webhookworker.DefaultPerAccount},
		{"20 slow endpoints, small pool", webhookworker.Config{Workers: 6, PerEndpoint: 2, PerAccount: 4}, locrisk.MaxActiveEndpoints, 3, 2, 4},
		{"20 slow endpoints, defaults", webhookworker.Config{}, locrisk.MaxActiveEndpoints, 5,
			webhookworker.DefaultPerEndpoint, webhookworker.DefaultPerAccount},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			var mu sync.Mutex
			open, maxOpen := 0, 0
			openAt, maxAt := map[string]int{}, 0 // by endpoint (URL path)
			slow := newReceiver(t, func(r *http.Request, _ int) int {
				mu.Lock()
				open++
				openAt[r.URL.Path]++
				maxOpen, maxAt = max(maxOpen, open), max(maxAt, openAt[r.URL.Path])
				mu.Unlock()
				defer func() { mu.Lock(); open--; openAt[r.URL.Path]--; mu.Unlock() }()
				select { // a receiver that takes seconds to answer
				case <-time.After(4 * time.Second):
				case <-release:
				case <-r.Context().Done():
				}
				return http.StatusNoContent
			})
			fast := newReceiver(t, ok204)
			sig := webhookworker.NewSignal()
			st := openStore(t, filepath.Join(t.TempDir(), "f.db"), sig)
			defer st.Close()
			fs := newFixture(t, st, slow.srv.URL+"/0")
			for i := 1; i < tc.endpoints; i++ {
				if _, _, err := st.CreateWebhookEndpoint(context.Background(), locrisk.NewWebhookEndpoint{AccountID: fs.account.ID,
					Name: "slow", URL: fmt.Sprintf("%s/%d", slow.srv.URL, i), Events: []string{webhook.EventJobCompleted}}, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			ff := newFixture(t, st, fast.srv.URL)
			for range tc.backlog {
				completeJob(t, st, fs)
			}
			cfg := tc.cfg
			cfg.Wake, cfg.DrainTimeout = sig, 100*time.Millisecond
			stop := startWorker(t, st, cfg)
			defer stop()
			defer close(release) // before stop: let the slow attempts end
			// The slow account holds every worker it may; a moment more
			// lets the worker claim beyond its limits if it would.
			slow.wait(t, min(tc.perAcct, tc.perEP*tc.endpoints, cmp.Or(tc.cfg.Workers, webhookworker.DefaultWorkers)))
			time.Sleep(300 * time.Millisecond)

			start := time.Now()
			completeJob(t, st, ff)
			fast.wait(t, 1)
			d := time.Since(start)
			t.Logf("fast receiver served %v after its job completed, %d slow deliveries pending", d, tc.backlog*tc.endpoints)
			if d > time.Second {
				t.Errorf("fast receiver served %v after its job completed, behind a slow account; want under 1s", d)
			}
			mu.Lock()
			defer mu.Unlock()
			if maxAt > tc.perEP {
				t.Errorf("a slow endpoint had %d attempts open at once, limit %d", maxAt, tc.perEP)
			}
			if maxOpen > tc.perAcct {
				t.Errorf("the slow account had %d attempts open at once, limit %d", maxOpen, tc.perAcct)
			}
		})
	}
}

// TestBacklogOfOneAccountDoesNotQueueAhead: one account's endpoints refuse
// connections and it has a backlog of deliveries due before another
// account's new one. Its attempts fail at once, and the limits on attempts
// in flight are set as high as the pool, so nothing but the claim's turns
// between accounts puts the other account's delivery first: it is served
// within a second instead of after the backlog.
func TestBacklogOfOneAccountDoesNotQueueAhead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there any more: every attempt is refused
	fast := newReceiver(t, ok204)
	sig := webhookworker.NewSignal()
	st := openStore(t, filepath.Join(t.TempDir(), "b.db"), sig)
	defer st.Close()
	fb := newFixture(t, st, refused+"/0")
	for i := 1; i < 5; i++ {
		if _, _, err := st.CreateWebhookEndpoint(context.Background(), locrisk.NewWebhookEndpoint{AccountID: fb.account.ID,
			Name: "refused", URL: fmt.Sprintf("%s/%d", refused, i), Events: []string{webhook.EventJobCompleted}}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	ff := newFixture(t, st, fast.srv.URL)
	const backlog = 300 // jobs, five deliveries each
	for range backlog {
		completeJob(t, st, fb)
	}
	// Limits as high as the pool: only the turns can put the other
	// account first.
	stop := startWorker(t, st, webhookworker.Config{Workers: 32, PerEndpoint: 32, PerAccount: 32,
		Wake: sig, DrainTimeout: 100 * time.Millisecond})
	defer stop()

	start := time.Now()
	completeJob(t, st, ff)
	fast.wait(t, 1)
	d := time.Since(start)
	t.Logf("fast receiver served %v after its job completed, behind %d due deliveries of another account", d, 5*backlog)
	if d > time.Second {
		t.Errorf("fast receiver served %v after its job completed, behind another account's backlog; want under 1s", d)
	}
}
