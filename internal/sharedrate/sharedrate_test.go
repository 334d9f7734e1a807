package sharedrate

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// memCounts is the store's shared counts in memory.
type memCounts struct {
	mu     sync.Mutex
	window time.Time
	counts map[string]int
	fail   bool
}

func (m *memCounts) AddRateCounts(_ context.Context, window time.Time, deltas map[string]int) (map[string]int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return nil, errors.New("database down")
	}
	if !window.Equal(m.window) {
		m.window, m.counts = window, map[string]int{}
	}
	for a, n := range deltas {
		m.counts[a] += n
	}
	out := map[string]int{}
	for a, n := range m.counts {
		out[a] = n
	}
	return out, nil
}

// TestLimitAcrossNodes: three nodes admitting one account's requests in
// turn, exchanging every 10 requests each, admit the limit and at most
// what the other nodes admitted since their last exchange beyond it; a
// new window starts afresh; another account is not affected.
func TestLimitAcrossNodes(t *testing.T) {
	now := time.Date(2026, 11, 28, 8, 0, 10, 0, time.UTC)
	clock := func() time.Time { return now }
	shared := &memCounts{}
	nodes := []*Limiter{New(shared, nil, clock), New(shared, nil, clock), New(shared, nil, clock)}
	const limit, exchangeEvery = 100, 10
	admitted := 0
	for i := range 600 {
		n := nodes[i%len(nodes)]
		if n.Allow("a", limit, now).Allowed {
			admitted++
		}
		if i%(exchangeEvery*len(nodes)) == exchangeEvery*len(nodes)-1 {
			for _, n := range nodes {
				if err := n.Exchange(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// Between exchanges each node sees the others' last totals only: the
	// overshoot is at most the other nodes' admissions in one interval.
	bound := limit + (len(nodes)-1)*exchangeEvery
	if admitted < limit || admitted > bound {
		t.Errorf("admitted %d, want %d to %d", admitted, limit, bound)
	}
	if d := nodes[0].Peek("b", limit, now); !d.Allowed || d.Used != 0 {
		t.Errorf("another account: %+v", d)
	}
	now = now.Add(time.Minute)
	if d := nodes[1].Allow("a", limit, now); !d.Allowed || d.Used != 1 {
		t.Errorf("next window: %+v", d)
	}
}

// TestStoreDown: while the store cannot be reached, a node keeps counting
// alone and sends its counts once it can.
func TestStoreDown(t *testing.T) {
	now := time.Date(2026, 11, 28, 8, 0, 10, 0, time.UTC)
	shared := &memCounts{fail: true}
	n := New(shared, nil, func() time.Time { return now })
	for range 5 {
		n.Allow("a", 10, now)
	}
	if err := n.Exchange(context.Background()); err == nil {
		t.Fatal("exchange with the store down succeeded")
	}
	if d := n.Peek("a", 10, now); d.Used != 5 {
		t.Errorf("after a failed exchange: used %d, want the 5 still counted", d.Used)
	}
	shared.fail = false
	if err := n.Exchange(context.Background()); err != nil {
		t.Fatal(err)
	}
	if shared.counts["a"] != 5 {
		t.Errorf("the store has %d, want the 5 sent once it came back", shared.counts["a"])
	}
	if d := n.Peek("a", 10, now); d.Used != 5 {
		t.Errorf("after the exchange: used %d, want 5", d.Used)
	}
}
