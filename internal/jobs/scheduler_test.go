package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/sqlite"
)

// fakeEngine is a test double for the risk engine: it returns a fixed
// assessment, or what fn decides, and counts calls.
type fakeEngine struct {
	calls atomic.Int64
	fn    func(ctx context.Context, call int64) error
}

func fixedAssessment(lat, lon float64) *risk.Assessment {
	score := 42
	// Every module key, null except hydrology, as the engine writes it.
	var ms risk.ModuleScores
	for _, k := range risk.ModuleKeys() {
		ms.Set(k, nil)
	}
	ms.Set("hydrology", &score)
	return &risk.Assessment{
		Location:    risk.Location{Latitude: lat, Longitude: lon, StateCode: "IL", StateName: "Illinois", CountyFIPS: "17031", CountyName: "Cook"},
		DataVersion: "test-data-1",
		Summary:     risk.Summary{OverallScore: 42, RiskLevel: "moderate", ModuleScores: ms},
	}
}

func (f *fakeEngine) Assess(ctx context.Context, lat, lon float64) (*risk.Assessment, error) {
	n := f.calls.Add(1)
	if f.fn != nil {
		if err := f.fn(ctx, n); err != nil {
			return nil, err
		}
	}
	return fixedAssessment(lat, lon), nil
}

func newStore(t testing.TB) *sqlite.Store {
	t.Helper()
	s, _ := newStoreAt(t)
	return s
}

// newStoreAt opens a fresh store and returns its file's path too, for the
// tests that read the database directly.
func newStoreAt(t testing.TB) (*sqlite.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jobs.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// rawDB opens a second connection to the database file for reading.
func rawDB(t testing.TB, path string) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// harness runs a scheduler for one test and stops it at cleanup.
type harness struct {
	st     *sqlite.Store
	dbPath string
	sched  *Scheduler
	acct   locrisk.Account
	cancel context.CancelFunc
	done   chan struct{}
	poll   time.Duration // how often waitTerminal looks
}

func start(t testing.TB, eng Assessor, cfg Config) *harness {
	t.Helper()
	st, path := newStoreAt(t)
	acct, err := st.CreateAccount(context.Background(), "jobs test", 1<<30, 600)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	if cfg.BackoffBase == 0 {
		cfg.BackoffBase = 5 * time.Millisecond
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 20 * time.Millisecond
	}
	if cfg.Workers == 0 {
		cfg.Workers = 2
	}
	h := &harness{st: st, dbPath: path, acct: acct, sched: New(st, eng, cfg), done: make(chan struct{}), poll: 2 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.sched.Run(ctx); close(h.done) }()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	h.cancel()
	<-h.done
}

func (h *harness) create(t testing.TB) locrisk.Job {
	t.Helper()
	j, _, err := h.st.CreateJob(context.Background(), locrisk.NewJob{AccountID: h.acct.ID, Latitude: 41.88, Longitude: -87.63}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h.sched.Notify()
	return j
}

// waitTerminal polls until the job is completed or failed.
func (h *harness) waitTerminal(t testing.TB, id string, within time.Duration) locrisk.Job {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		j, err := h.st.GetJob(context.Background(), h.acct.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Terminal() {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s (attempts %d) after %v", id, j.Status, j.Attempts, within)
		}
		time.Sleep(h.poll)
	}
}

func TestJobCompletes(t *testing.T) {
	eng := &fakeEngine{}
	h := start(t, eng, Config{})
	j := h.create(t)
	done := h.waitTerminal(t, j.ID, 5*time.Second)
	if done.Status != locrisk.StatusCompleted || done.Attempts != 1 || done.ReportID == nil || done.ErrorCode != nil {
		t.Fatalf("job %+v", done)
	}
	r, err := h.st.GetReport(context.Background(), h.acct.ID, *done.ReportID)
	if err != nil {
		t.Fatal(err)
	}
	var got risk.Assessment
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatalf("report body: %v", err)
	}
	want, _ := json.Marshal(fixedAssessment(41.88, -87.63))
	if string(r.Body) != string(want) || r.DataVersion != "test-data-1" || r.JobID != j.ID {
		t.Errorf("report %s / %s / %s", r.Body, r.DataVersion, r.JobID)
	}
	if eng.calls.Load() != 1 {
		t.Errorf("engine called %d times", eng.calls.Load())
	}
}

func TestJobOutcomes(t *testing.T) {
	transientOnce := func(_ context.Context, call int64) error {
		if call == 1 {
			return &Error{Code: CodeTransient, Message: "upstream busy", Transient: true}
		}
		return nil
	}
	tests := []struct {
		name          string
		faults        string
		fn            func(context.Context, int64) error
		wantStatus    string
		wantAttempts  int
		wantCode      string
		wantTransient bool
		wantCalls     int64
	}{
		{"plain", "", nil, locrisk.StatusCompleted, 1, "", false, 1},
		{"transient fault on attempt 1", "report.generate=transient:first=1", nil, locrisk.StatusCompleted, 2, "", false, 1},
		{"always transient", "report.generate=transient", nil, locrisk.StatusFailed, 3, CodeTransient, true, 0},
		{"transient beyond max attempts", "report.generate=transient:first=3", nil, locrisk.StatusFailed, 3, CodeTransient, true, 0},
		{"permanent fault", "report.generate=permanent", nil, locrisk.StatusFailed, 1, CodePermanent, false, 0},
		{"permanent fault at rate 1", "report.generate=permanent:rate=1", nil, locrisk.StatusFailed, 1, CodePermanent, false, 0},
		{"engine transient error once", "", transientOnce, locrisk.StatusCompleted, 2, "", false, 2},
		{"unsupported location", "", func(context.Context, int64) error { return fmt.Errorf("locate: %w", risk.ErrUnsupportedLocation) },
			locrisk.StatusFailed, 1, CodeUnsupported, false, 1},
		{"unexpected engine error", "", func(context.Context, int64) error { return errors.New("disk on fire") },
			locrisk.StatusFailed, 1, CodePermanent, false, 1},
		{"engine panic", "", func(context.Context, int64) error { panic("nil map") },
			locrisk.StatusFailed, 1, CodePermanent, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			faults, err := ParseFaults(tt.faults)
			if err != nil {
				t.Fatal(err)
			}
			eng := &fakeEngine{fn: tt.fn}
			h := start(t, eng, Config{Faults: faults, MaxAttempts: 3})
			j := h.waitTerminal(t, h.create(t).ID, 10*time.Second)
			if j.Status != tt.wantStatus || j.Attempts != tt.wantAttempts {
				t.Errorf("status %s after %d attempts, want %s after %d", j.Status, j.Attempts, tt.wantStatus, tt.wantAttempts)
			}
			if got := eng.calls.Load(); got != tt.wantCalls {
				t.Errorf("engine called %d times, want %d", got, tt.wantCalls)
			}
			if tt.wantStatus == locrisk.StatusCompleted {
				if j.ReportID == nil || j.ErrorCode != nil || j.ErrorTransient != nil {
					t.Errorf("completed job %+v", j)
				}
				return
			}
			if j.ErrorCode == nil || *j.ErrorCode != tt.wantCode || j.ErrorTransient == nil || *j.ErrorTransient != tt.wantTransient ||
				j.ErrorMessage == nil || *j.ErrorMessage == "" || j.ReportID != nil {
				t.Errorf("failed job: code %v transient %v message %v report %v", deref(j.ErrorCode), derefB(j.ErrorTransient), deref(j.ErrorMessage), j.ReportID)
			}
			if tt.wantCode == CodePermanent && tt.fn != nil && *j.ErrorMessage != "report generation failed with an internal error" {
				t.Errorf("internal detail leaked into the job: %q", *j.ErrorMessage)
			}
		})
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func derefB(p *bool) string {
	if p == nil {
		return "<nil>"
	}
	return fmt.Sprint(*p)
}

// docs/api.md, Command line: with transient:first=N, a job retried through the API
// continues its attempt count, so it succeeds once past N.
func TestManualRetryContinuesAttempts(t *testing.T) {
	faults, _ := ParseFaults("report.generate=transient:first=2")
	h := start(t, &fakeEngine{}, Config{Faults: faults, MaxAttempts: 2})
	j := h.waitTerminal(t, h.create(t).ID, 5*time.Second)
	if j.Status != locrisk.StatusFailed || j.Attempts != 2 || !*j.ErrorTransient {
		t.Fatalf("first run: %+v", j)
	}
	if _, err := h.st.RetryJob(context.Background(), h.acct.ID, j.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	h.sched.Notify()
	j = h.waitTerminal(t, j.ID, 5*time.Second)
	if j.Status != locrisk.StatusCompleted || j.Attempts != 3 {
		t.Errorf("after retry: status %s attempts %d, want completed on attempt 3", j.Status, j.Attempts)
	}
}

// A job whose worker died (lease held, never finished) is run by another.
func TestExpiredLeaseIsReclaimed(t *testing.T) {
	h := start(t, &fakeEngine{}, Config{Workers: 1})
	h.stop() // start the store only; run the scheduler below
	j, _, _ := h.st.CreateJob(context.Background(), locrisk.NewJob{AccountID: h.acct.ID, Latitude: 1, Longitude: 2}, time.Now())
	if _, ok, err := h.st.ClaimJob(context.Background(), "dead-worker", 100*time.Millisecond, time.Now()); !ok || err != nil {
		t.Fatal(ok, err)
	}
	sched := New(h.st, &fakeEngine{}, Config{Workers: 1, PollInterval: 20 * time.Millisecond, Logger: quietLogger()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sched.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	got := h.waitTerminal(t, j.ID, 5*time.Second)
	if got.Status != locrisk.StatusCompleted || got.Attempts != 2 {
		t.Errorf("reclaimed job: status %s attempts %d, want completed on attempt 2", got.Status, got.Attempts)
	}
}

// A job whose workers keep dying mid-attempt is failed (transient, so it
// can be retried by hand) once its attempts are used up, not run forever.
func TestJobWhoseWorkersDieIsFailed(t *testing.T) {
	h := start(t, &fakeEngine{}, Config{Workers: 1})
	h.stop()
	ctx := context.Background()
	j, _, _ := h.st.CreateJob(ctx, locrisk.NewJob{AccountID: h.acct.ID, Latitude: 1, Longitude: 2}, time.Now())
	// Two workers in a row die holding the job (attempts 1 and 2).
	now := time.Now()
	for i := range 2 {
		c, ok, err := h.st.ClaimJob(ctx, fmt.Sprint("dead-", i), time.Millisecond, now.Add(time.Duration(i)*10*time.Millisecond))
		if !ok || err != nil || c.ID != j.ID {
			t.Fatalf("claim %d: %v %v", i, ok, err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	sched := New(h.st, &fakeEngine{}, Config{Workers: 1, MaxAttempts: 2, PollInterval: 20 * time.Millisecond, Logger: quietLogger()})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { sched.Run(runCtx); close(done) }()
	defer func() { cancel(); <-done }()
	got := h.waitTerminal(t, j.ID, 5*time.Second)
	if got.Status != locrisk.StatusFailed || got.ErrorTransient == nil || !*got.ErrorTransient || got.ErrorCode == nil || *got.ErrorCode != CodeTransient {
		t.Fatalf("job after its workers died twice with MaxAttempts 2: %+v", got)
	}
	// A manual retry runs it again, and this time it completes.
	if _, err := h.st.RetryJob(ctx, h.acct.ID, j.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	sched.Notify()
	if got := h.waitTerminal(t, j.ID, 5*time.Second); got.Status != locrisk.StatusCompleted {
		t.Fatalf("after a manual retry: %+v", got)
	}
}

// Every job of a burst completes exactly once.
func TestBurstCompletesOnce(t *testing.T) {
	eng := &fakeEngine{}
	h := start(t, eng, Config{Workers: 4, PollInterval: time.Hour})
	var ids []string
	for range 60 {
		ids = append(ids, h.create(t).ID)
	}
	for _, id := range ids {
		if j := h.waitTerminal(t, id, 10*time.Second); j.Status != locrisk.StatusCompleted || j.Attempts != 1 {
			t.Errorf("job %s: %s after %d attempts", id, j.Status, j.Attempts)
		}
	}
	var reports int
	if err := rawDB(t, h.dbPath).Get(&reports, `SELECT COUNT(*) FROM reports`); err != nil || reports != 60 {
		t.Errorf("%d reports (err %v), want 60", reports, err)
	}
	if eng.calls.Load() != 60 {
		t.Errorf("engine called %d times, want 60", eng.calls.Load())
	}
}

// With polling effectively off, Notify alone must get a job done quickly.
func TestNotifyWakesIdleWorker(t *testing.T) {
	h := start(t, &fakeEngine{}, Config{Workers: 2, PollInterval: time.Hour})
	time.Sleep(50 * time.Millisecond) // let the workers go idle
	for i := range 5 {
		begin := time.Now()
		j := h.waitTerminal(t, h.create(t).ID, 2*time.Second)
		if j.Status != locrisk.StatusCompleted {
			t.Fatalf("job %d: %s", i, j.Status)
		}
		// Generous: the median is a few milliseconds (BenchmarkCreateToCompleted);
		// this only proves the wake-up does not wait for a poll.
		if d := time.Since(begin); d > 500*time.Millisecond {
			t.Errorf("job %d took %v from create to completed", i, d)
		}
	}
}

// blockingEngine holds every Assess until released or its context ends.
type blockingEngine struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blockingEngine) Assess(ctx context.Context, lat, lon float64) (*risk.Assessment, error) {
	b.entered <- struct{}{}
	select {
	case <-b.release:
		return fixedAssessment(lat, lon), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestRunDrainsJobInHand(t *testing.T) {
	eng := &blockingEngine{entered: make(chan struct{}, 1), release: make(chan struct{})}
	h := start(t, eng, Config{Workers: 1, DrainTimeout: 5 * time.Second})
	j := h.create(t)
	<-eng.entered
	h.cancel()
	select {
	case <-h.done:
		t.Fatal("Run returned with a job in hand")
	case <-time.After(50 * time.Millisecond):
	}
	close(eng.release)
	select {
	case <-h.done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the job finished")
	}
	got, _ := h.st.GetJob(context.Background(), h.acct.ID, j.ID)
	if got.Status != locrisk.StatusCompleted {
		t.Errorf("drained job is %s, want completed", got.Status)
	}
	// A job created after shutdown stays queued for the next start.
	late := h.create(t)
	time.Sleep(30 * time.Millisecond)
	if got, _ := h.st.GetJob(context.Background(), h.acct.ID, late.ID); got.Status != locrisk.StatusQueued {
		t.Errorf("job created after shutdown is %s", got.Status)
	}
}

func TestRunReleasesAfterDrainTimeout(t *testing.T) {
	eng := &blockingEngine{entered: make(chan struct{}, 1), release: make(chan struct{})}
	h := start(t, eng, Config{Workers: 1, DrainTimeout: 100 * time.Millisecond})
	j := h.create(t)
	<-eng.entered
	begin := time.Now()
	h.cancel()
	select {
	case <-h.done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the drain timeout")
	}
	if d := time.Since(begin); d < 100*time.Millisecond || d > 2*time.Second {
		t.Errorf("Run returned %v after cancel, want just over the 100ms drain timeout", d)
	}
	got, _ := h.st.GetJob(context.Background(), h.acct.ID, j.ID)
	if got.Status != locrisk.StatusQueued || got.Attempts != 0 {
		t.Errorf("cut-short job: %s with %d attempts, want queued with 0 (released, uncounted)", got.Status, got.Attempts)
	}
}

func TestBackoff(t *testing.T) {
	s := New(nil, nil, Config{BackoffBase: 200 * time.Millisecond, BackoffMax: time.Second})
	want := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}
	for i, w := range want {
		if got := s.Backoff(i + 1); got != w {
			t.Errorf("Backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
	if got := s.Backoff(1000); got != time.Second {
		t.Errorf("Backoff(1000) = %v", got)
	}
}

// BenchmarkCreateToCompleted measures the time from a durable create (plus
// Notify) to the job being completed, under light load (one job at a time).
func BenchmarkCreateToCompleted(b *testing.B) {
	h := start(b, &fakeEngine{}, Config{Workers: 2, PollInterval: time.Hour})
	h.poll = 100 * time.Microsecond
	var mu sync.Mutex
	var lat []time.Duration
	for b.Loop() {
		begin := time.Now()
		j := h.create(b)
		h.waitTerminal(b, j.ID, 5*time.Second)
		mu.Lock()
		lat = append(lat, time.Since(begin))
		mu.Unlock()
	}
	reportPercentiles(b, lat)
}
