package jobs

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/queue"
)

// The lane starts re-scores only once no caller's job is runnable: with
// callers' jobs queued and re-scores planned, a worker's claims take the
// callers' jobs first, every one, then the re-scores, then nothing.
func TestRescoreLaneWaitsForCallers(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a, err := st.CreateAccount(ctx, "a", 100, 600)
	if err != nil {
		t.Fatal(err)
	}
	v2 := locrisk.ScoreVersions{Data: "test-data-2", Methodology: "m"}
	s := New(st, &fakeEngine{}, Config{Workers: 1, Now: func() time.Time { return now },
		Rescore: &Rescore{Queue: st, Versions: v2, Rate: 1000}})
	k := &jobKind{Scheduler: s, owners: []string{"w0"}}
	claim := func() (*run, bool) {
		t.Helper()
		r, ok, err := k.Claim(ctx, queue.Claim{Worker: 0, Now: now, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return r, ok
	}
	// Three items, scored at the data the fake engine reports.
	items := []locrisk.NewWatchItem{{Latitude: 41, Longitude: -87}, {Latitude: 41.1, Longitude: -87}, {Latitude: 41.2, Longitude: -87}}
	if _, _, err := st.CreateWatchlist(ctx, locrisk.NewWatchlist{AccountID: a.ID, Items: items}, now); err != nil {
		t.Fatal(err)
	}
	for range items {
		r, ok := claim()
		if !ok || r.job.WatchItemID == nil {
			t.Fatalf("claim of an item's first job: %+v %v", r, ok)
		}
		rep, err := ReportOf(fixedAssessment(r.job.Latitude, r.job.Longitude))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.CompleteJob(ctx, r.job.ID, r.owner, rep, now); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if _, _, err := st.CreateJob(ctx, locrisk.NewJob{AccountID: a.ID, Latitude: 40, Longitude: -100}, now); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := st.PlanRescores(ctx, v2, now); err != nil || n != 3 {
		t.Fatalf("planned %d, %v", n, err)
	}
	var order []string
	for {
		r, ok := claim()
		if !ok {
			break
		}
		kind := "caller"
		if r.job.WatchItemID != nil {
			kind = "rescore"
		}
		order = append(order, kind)
	}
	if want := []string{"caller", "caller", "rescore", "rescore", "rescore"}; !slices.Equal(order, want) {
		t.Errorf("claims %v, want %v", order, want)
	}
}

// The lane's rate: a node starts at most Rate re-scores a second, up to a
// poll interval's worth at once; a claim that finds nothing planned costs
// nothing; rate 0 starts none.
func TestRescoreLaneRate(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		rate float64
		at   []time.Duration // times of the takes after t0
		want []bool
	}{
		{"2 per second", 2, []time.Duration{0, 0, 400 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond},
			[]bool{true, false, false, true, false}},
		{"20 per second, 5 at once", 20, []time.Duration{0, 0, 0, 0, 0, 0, 50 * time.Millisecond},
			[]bool{true, true, true, true, true, false, true}},
		{"off", 0, []time.Duration{0, time.Hour}, []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newRescoreLane(&Rescore{Queue: emptyRescores{}, Rate: tc.rate}, 250*time.Millisecond)
			for i, d := range tc.at {
				if got := l.take(t0.Add(d)); got != tc.want[i] {
					t.Errorf("take %d at +%s = %v, want %v", i, d, got, tc.want[i])
				}
			}
		})
	}
	l := newRescoreLane(&Rescore{Queue: emptyRescores{}, Rate: 2}, 250*time.Millisecond)
	for range 3 {
		if _, ok, err := l.claim(context.Background(), "w", time.Minute, t0); ok || err != nil {
			t.Fatalf("claim with nothing planned: %v %v", ok, err)
		}
	}
	if !l.take(t0) {
		t.Error("claims that found nothing spent the rate")
	}
}

// emptyRescores is a lane with nothing planned.
type emptyRescores struct{ locrisk.RescoreQueue }

func (emptyRescores) ClaimRescore(context.Context, string, locrisk.ScoreVersions, time.Duration, time.Time) (locrisk.Job, bool, error) {
	return locrisk.Job{}, false, nil
}
