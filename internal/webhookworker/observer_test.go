package webhookworker_test

import (
	"maps"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/webhookworker"
)

// countingObserver counts the outcomes it is told of.
type countingObserver struct {
	mu        sync.Mutex
	outcomes  map[string]int
	durations []time.Duration
}

func (o *countingObserver) DeliveryAttempt(outcome string, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.outcomes == nil {
		o.outcomes = map[string]int{}
	}
	o.outcomes[outcome]++
	o.durations = append(o.durations, d)
}

func (o *countingObserver) snapshot() (map[string]int, []time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.outcomes), append([]time.Duration(nil), o.durations...)
}

// TestObserverSeesOutcomes: a delivery that fails twice on a two-attempt
// schedule is reported as one failed attempt and one final failure, and a
// delivery that succeeds as a success, each with the request's duration.
func TestObserverSeesOutcomes(t *testing.T) {
	const answerTime = 20 * time.Millisecond
	rc := newReceiver(t, func(_ *http.Request, n int) int {
		time.Sleep(answerTime)
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	sig := webhookworker.NewSignal()
	st := openStore(t, filepath.Join(t.TempDir(), "o.db"), sig)
	defer st.Close()
	f := newFixture(t, st, rc.srv.URL)
	obs := &countingObserver{}
	startWorker(t, st, webhookworker.Config{Wake: sig, Schedule: []time.Duration{10 * time.Millisecond}, Observer: obs})

	completeJob(t, st, f)
	waitStatus(t, st, f, locrisk.DeliveryFailed, 1)
	completeJob(t, st, f)
	waitStatus(t, st, f, locrisk.DeliverySucceeded, 1)

	want := map[string]int{webhookworker.OutcomeFailedAttempt: 1, webhookworker.OutcomeFailedFinal: 1, webhookworker.OutcomeSucceeded: 1}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, durations := obs.snapshot()
		if maps.Equal(got, want) {
			for _, d := range durations {
				if d < answerTime {
					t.Errorf("attempt duration %s, want at least the receiver's %s", d, answerTime)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("outcomes %v, want %v", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
