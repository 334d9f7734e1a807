package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// stopLog records the steps of a stop, in the order they happen.
type stopLog struct {
	mu    sync.Mutex
	steps []string
}

func (l *stopLog) add(step string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps = append(l.steps, step)
}

func (l *stopLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.steps)
}

// fakeHTTP serves until Shutdown, which records "stop accepting" and checks
// that the job scheduler was already told to stop (requests and jobs drain
// side by side) and that the shutdown timeout bounds it.
type fakeHTTP struct {
	log     *stopLog
	timeout time.Duration
	jobs    *fakeRunner
	stopped chan struct{}
	once    sync.Once
}

func (f *fakeHTTP) Serve(ln net.Listener) error {
	<-f.stopped
	ln.Close()
	return http.ErrServerClosed
}

func (f *fakeHTTP) Shutdown(ctx context.Context) error {
	if !f.jobs.stopAsked() {
		f.log.add("stop accepting before the jobs were told to stop")
	}
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > f.timeout || ctx.Err() != nil {
		f.log.add("stop accepting without the shutdown timeout")
	}
	f.log.add("stop accepting")
	f.once.Do(func() { close(f.stopped) })
	return nil
}

// fakeRunner is the scheduler or the delivery worker: it runs until its
// ctx ends and then records its step. after, if set, is waited for first,
// so that the record of two parts that stop side by side has one order.
type fakeRunner struct {
	log     *stopLog
	step    string
	after   <-chan struct{}
	ctx     context.Context // set before started is closed
	started chan struct{}
	quit    bool // return at once, as a worker that stopped by itself
}

func newFakeRunner(log *stopLog, step string) *fakeRunner {
	return &fakeRunner{log: log, step: step, started: make(chan struct{})}
}

func (f *fakeRunner) Run(ctx context.Context) {
	f.ctx = ctx
	close(f.started)
	if f.quit {
		return
	}
	<-ctx.Done()
	if f.after != nil {
		<-f.after
	}
	f.log.add(f.step)
}

// stopAsked reports whether the runner runs and its ctx has ended.
func (f *fakeRunner) stopAsked() bool {
	select {
	case <-f.started:
		return f.ctx.Err() != nil
	case <-time.After(5 * time.Second):
		return false
	}
}

// fakeMetricsHTTP is the metrics listener's server: it serves until
// Shutdown, which records its step.
type fakeMetricsHTTP struct {
	log     *stopLog
	stopped chan struct{}
	once    sync.Once
}

func (f *fakeMetricsHTTP) Serve(ln net.Listener) error {
	<-f.stopped
	ln.Close()
	return http.ErrServerClosed
}

func (f *fakeMetricsHTTP) Shutdown(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		f.log.add("metrics stopped without the shutdown timeout")
	}
	f.log.add("metrics listener closed")
	f.once.Do(func() { close(f.stopped) })
	return nil
}

type fakeStats struct {
	log     *stopLog
	timeout time.Duration
	err     error
}

func (f *fakeStats) Close(ctx context.Context) error {
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > f.timeout {
		f.log.add("statistics flushed without the shutdown timeout")
	}
	f.log.add("statistics flushed")
	return f.err
}

type fakeStore struct{ log *stopLog }

func (f fakeStore) Close() error { f.log.add("store closed"); return nil }

// fakeApp is an app of fakes that records its stop in log.
func fakeApp(t *testing.T, log *stopLog, logOut *strings.Builder) (*app, *fakeStats) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mln.Close() })
	const timeout = 5 * time.Second
	jobs := newFakeRunner(log, "jobs drained")
	h := &fakeHTTP{log: log, timeout: timeout, jobs: jobs, stopped: make(chan struct{})}
	jobs.after = h.stopped // recorded after "stop accepting", though they run side by side
	stats := &fakeStats{log: log, timeout: timeout}
	return &app{
		cfg:         appConfig{shutdownTimeout: timeout, db: backendFor("fake.db"), workers: 1},
		log:         slog.New(slog.NewTextHandler(logOut, nil)),
		ln:          ln,
		http:        h,
		metricsLn:   mln,
		metricsHTTP: &fakeMetricsHTTP{log: log, stopped: make(chan struct{})},
		jobs:        jobs,
		deliveries:  newFakeRunner(log, "deliveries finished"),
		purge:       newFakeRunner(log, "purge stopped"),
		stats:       stats,
		store:       fakeStore{log},
	}, stats
}

// TestAppCloseOrder: Close stops the retention purge, then stops accepting while the jobs drain, then
// saves the request statistics, then finishes the deliveries, then closes
// the metrics listener, then closes the database; a second Close does
// nothing more.
func TestAppCloseOrder(t *testing.T) {
	var steps stopLog
	var logOut strings.Builder
	a, stats := fakeApp(t, &steps, &logOut)
	stats.err = errors.New("disk full")

	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	time.Sleep(10 * time.Millisecond) // let it serve a moment
	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run after the stop signal: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after ctx ended")
	}
	if got := steps.get(); len(got) != 0 {
		t.Fatalf("Run stopped parts itself: %q", got)
	}

	done := make(chan error, 1)
	go func() { done <- a.Close(ctx) }() // ctx is cancelled, as in serve
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("Close did not return; steps so far %q", steps.get())
	}
	want := []string{"purge stopped", "stop accepting", "jobs drained", "statistics flushed", "deliveries finished", "metrics listener closed", "store closed"}
	if got := steps.get(); !slices.Equal(got, want) {
		t.Errorf("stop order\n got %q\nwant %q", got, want)
	}
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close returned %v, want the statistics error", err)
	}
	if !strings.Contains(logOut.String(), `msg="saving request statistics" err="disk full"`) {
		t.Errorf("the statistics error is not logged:\n%s", logOut.String())
	}
	for _, msg := range []string{`msg=listening`, `msg="metrics listening"`, `msg="shutting down"`} {
		if !strings.Contains(logOut.String(), msg) {
			t.Errorf("log lacks %s:\n%s", msg, logOut.String())
		}
	}

	// A second Close is harmless: nothing stops twice, same result.
	if err2 := a.Close(context.Background()); err2 != err {
		t.Errorf("second Close returned %v, want the first's %v", err2, err)
	}
	if got := steps.get(); !slices.Equal(got, want) {
		t.Errorf("after a second Close the steps are %q", got)
	}
	if err := a.Run(context.Background()); err == nil {
		t.Error("Run after Close succeeded")
	}
}

// TestAppCloseWithoutRun: a service built but never run closes its
// listeners, statistics and database, and waits for no worker.
func TestAppCloseWithoutRun(t *testing.T) {
	var steps stopLog
	var logOut strings.Builder
	a, _ := fakeApp(t, &steps, &logOut)
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := steps.get(), []string{"statistics flushed", "store closed"}; !slices.Equal(got, want) {
		t.Errorf("steps %q, want %q", got, want)
	}
	if _, err := a.ln.Accept(); err == nil {
		t.Error("the listener is still open")
	}
	if _, err := a.metricsLn.Accept(); err == nil {
		t.Error("the metrics listener is still open")
	}
}

// TestAppReadiness: the workers check of /readyz follows the service's
// life: not started, ready while running, "shutting down" from the stop
// signal on, and a worker that stopped by itself is named.
func TestAppReadiness(t *testing.T) {
	waitFor := func(a *app, want error) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			got := a.WorkersReady()
			if errors.Is(got, want) || (want == nil && got == nil) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("WorkersReady = %v, want %v", got, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	var steps stopLog
	var logOut strings.Builder
	a, _ := fakeApp(t, &steps, &logOut)
	a.dataLoaded = true
	if err := a.DataReady(); err != nil {
		t.Errorf("DataReady = %v", err)
	}
	waitFor(a, errNotStarted)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	waitFor(a, nil)
	cancel()
	<-ran
	waitFor(a, errShuttingDown)
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(a, errShuttingDown)

	for _, tt := range []struct {
		name string
		set  func(*app)
		want error
	}{
		{"scheduler", func(a *app) { a.jobs.(*fakeRunner).quit = true }, errSchedulerStopped},
		{"deliveries", func(a *app) { a.deliveries.(*fakeRunner).quit = true }, errDeliveryStopped},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := fakeApp(t, &stopLog{}, &strings.Builder{})
			tt.set(a)
			ctx, cancel := context.WithCancel(context.Background())
			ran := make(chan error, 1)
			go func() { ran <- a.Run(ctx) }()
			waitFor(a, tt.want)
			cancel()
			<-ran
			_ = a.Close(context.Background())
		})
	}
	b, _ := fakeApp(t, &stopLog{}, &strings.Builder{})
	if err := b.DataReady(); !errors.Is(err, errDataNotLoaded) {
		t.Errorf("DataReady without data = %v", err)
	}
}
