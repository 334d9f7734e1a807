package retention

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

func TestCheckKeep(t *testing.T) {
	tests := []struct {
		keep time.Duration
		ok   bool
	}{
		{0, true},
		{MinKeep, true},
		{DefaultKeep, true},
		{MinKeep - time.Hour, false},
		{90 * 24 * time.Hour, false},
		{time.Hour, false},
	}
	for _, tt := range tests {
		if err := CheckKeep(tt.keep); (err == nil) != tt.ok {
			t.Errorf("CheckKeep(%s) = %v, want ok %v", tt.keep, err, tt.ok)
		}
	}
}

type fakeStore struct {
	policies []locrisk.PurgePolicy
	counts   locrisk.PurgeCounts
	vacuums  int
}

func (f *fakeStore) Purge(_ context.Context, p locrisk.PurgePolicy) (locrisk.PurgeCounts, error) {
	f.policies = append(f.policies, p)
	return f.counts, nil
}

func (f *fakeStore) reclaim(context.Context) (int64, error) {
	f.vacuums++
	return 12, nil
}

// TestOnce: the cut-off is the retention before now (none when off); the
// vacuum follows a purge that deleted something, never a dry run; one line
// is logged per run. Without Reclaim nothing is vacuumed (the last case).
func TestOnce(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		keep        time.Duration
		dry         bool
		deleted     int64
		wantBefore  time.Time
		wantVacuums int
		noReclaim   bool // a store that reclaims space by itself
	}{
		{"default", DefaultKeep, false, 5, now.Add(-DefaultKeep), 1, false},
		{"nothing deleted", DefaultKeep, false, 0, now.Add(-DefaultKeep), 0, false},
		{"dry run", DefaultKeep, true, 5, now.Add(-DefaultKeep), 0, false},
		{"off", 0, false, 5, time.Time{}, 1, false},
		{"no reclaim", DefaultKeep, false, 5, now.Add(-DefaultKeep), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &fakeStore{counts: locrisk.PurgeCounts{Reports: tt.deleted}}
			var logs strings.Builder
			cfg := Config{Keep: tt.keep, Now: func() time.Time { return now }, Reclaim: st.reclaim, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			if tt.noReclaim {
				cfg.Reclaim = nil
			}
			r, err := New(st, cfg).Once(context.Background(), tt.dry)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.policies) != 1 || !st.policies[0].Before.Equal(tt.wantBefore) || !st.policies[0].Now.Equal(now) || st.policies[0].DryRun != tt.dry {
				t.Errorf("policies %+v, want before %v", st.policies, tt.wantBefore)
			}
			if st.vacuums != tt.wantVacuums || (tt.wantVacuums == 1) != (r.FreedPages == 12) {
				t.Errorf("%d vacuums, freed %d; want %d", st.vacuums, r.FreedPages, tt.wantVacuums)
			}
			if n := strings.Count(logs.String(), "msg=\"retention purge\""); n != 1 || !strings.Contains(logs.String(), "reports=") {
				t.Errorf("log %q, want one line with the counts", logs.String())
			}
		})
	}
}

type cancelStore struct{ fakeStore }

func (c *cancelStore) Purge(ctx context.Context, p locrisk.PurgePolicy) (locrisk.PurgeCounts, error) {
	return locrisk.PurgeCounts{Jobs: 3}, ctx.Err()
}

// TestRunStops: Run purges at once, stops when its ctx ends, and a run cut
// short by the stop is logged as stopped, not as a failure.
func TestRunStops(t *testing.T) {
	var logs syncLog
	st := &cancelStore{}
	p := New(st, Config{Keep: DefaultKeep, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its ctx ended")
	}
	if s := logs.String(); !strings.Contains(s, `msg="retention purge stopped"`) || strings.Contains(s, "failed") {
		t.Errorf("log %q, want one stopped line", s)
	}
}

// syncLog is a strings.Builder safe for a logger in another goroutine.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
