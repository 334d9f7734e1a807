package jobs

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

// countingObserver is an Observer that counts what it is told.
type countingObserver struct {
	mu        sync.Mutex
	started   int
	reclaimed int
	outcomes  map[string]int
	durations []time.Duration
}

func (o *countingObserver) JobStarted(reclaimed bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started++
	if reclaimed {
		o.reclaimed++
	}
}

func (o *countingObserver) JobFinished(outcome string, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.outcomes == nil {
		o.outcomes = map[string]int{}
	}
	o.outcomes[outcome]++
	o.durations = append(o.durations, d)
}

// waitFor polls until the observer has seen want outcomes in all, since
// the observer hears of an outcome just after the store records it.
func (o *countingObserver) waitFor(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		o.mu.Lock()
		n := len(o.durations)
		o.mu.Unlock()
		if n >= want || time.Now().After(deadline) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestObserverSeesAttempts: every attempt is reported started and then
// finished with its outcome and a duration that covers the engine's work.
func TestObserverSeesAttempts(t *testing.T) {
	const engineTime = 20 * time.Millisecond
	slow := func(context.Context, int64) error { time.Sleep(engineTime); return nil }
	tests := []struct {
		name     string
		faults   string
		fn       func(context.Context, int64) error
		started  int
		outcomes map[string]int
	}{
		{"completed", "", slow, 1, map[string]int{OutcomeCompleted: 1}},
		{"retried then completed", "report.generate=transient:first=1", nil, 2, map[string]int{OutcomeRetried: 1, OutcomeCompleted: 1}},
		{"failed after retries", "report.generate=transient", nil, 2, map[string]int{OutcomeRetried: 1, OutcomeFailed: 1}},
		{"failed at once", "report.generate=permanent", nil, 1, map[string]int{OutcomeFailed: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			faults, err := ParseFaults(tt.faults)
			if err != nil {
				t.Fatal(err)
			}
			obs := &countingObserver{}
			h := start(t, &fakeEngine{fn: tt.fn}, Config{Faults: faults, MaxAttempts: 2, Observer: obs})
			h.waitTerminal(t, h.create(t).ID, 5*time.Second)
			total := 0
			for _, n := range tt.outcomes {
				total += n
			}
			obs.waitFor(t, total)
			h.stop()
			obs.mu.Lock()
			defer obs.mu.Unlock()
			if obs.started != tt.started || obs.reclaimed != 0 || !maps.Equal(obs.outcomes, tt.outcomes) {
				t.Errorf("started %d (reclaimed %d), outcomes %v; want started %d, outcomes %v",
					obs.started, obs.reclaimed, obs.outcomes, tt.started, tt.outcomes)
			}
			if tt.fn != nil && (len(obs.durations) == 0 || obs.durations[0] < engineTime) {
				t.Errorf("durations %v, want the first at least the engine's %s", obs.durations, engineTime)
			}
		})
	}
}

// TestObserverSeesReclaim: a job taken over from a dead worker is reported
// as reclaimed when its new attempt starts.
func TestObserverSeesReclaim(t *testing.T) {
	h := start(t, &fakeEngine{}, Config{Workers: 1})
	h.stop() // the store only; the scheduler under test runs below
	j, _, err := h.st.CreateJob(context.Background(), locrisk.NewJob{AccountID: h.acct.ID, Latitude: 1, Longitude: 2}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := h.st.ClaimJob(context.Background(), "dead-worker", 50*time.Millisecond, time.Now()); !ok || err != nil {
		t.Fatal(ok, err)
	}
	obs := &countingObserver{}
	sched := New(h.st, &fakeEngine{}, Config{Workers: 1, PollInterval: 20 * time.Millisecond, Logger: quietLogger(), Observer: obs})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sched.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	h.waitTerminal(t, j.ID, 5*time.Second)
	obs.waitFor(t, 1)
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.started != 1 || obs.reclaimed != 1 || obs.outcomes[OutcomeCompleted] != 1 {
		t.Errorf("started %d, reclaimed %d, outcomes %v; want 1, 1, one completed", obs.started, obs.reclaimed, obs.outcomes)
	}
}
