// Package sharedrate is the per-account rate limit of several locrisk
// nodes on one database (docs/postgres.md, Several nodes): a fixed
// one-minute window, as one server's in-memory limiter keeps
// (server.MemoryRateLimiter), whose counts every node shares through the
// store.
//
// Each node counts the requests it admits in memory and, every Interval,
// adds them to the store and reads back the window's totals over all
// nodes. A request is admitted while the last totals read, plus what this
// node admitted since, stay under the limit. So a request never waits for
// the database, and the limit holds per account across nodes up to what
// the other nodes admitted since their last exchange: at most (nodes - 1)
// × (an account's requests per node per Interval) more than the limit in
// one window. If the store cannot be reached, each node goes on with its
// own counts and the last totals it read.
package sharedrate

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/locrisk/locrisk/internal/server"
)

// Interval is how often a node exchanges its counts with the store.
const Interval = 250 * time.Millisecond

// Counts is the store's side: add this node's requests per account in
// the window that starts at window and return the window's totals over
// every node (pgstore.Store.AddRateCounts).
type Counts interface {
	AddRateCounts(ctx context.Context, window time.Time, deltas map[string]int) (map[string]int, error)
}

// Limiter implements server.RateLimiter over the shared counts. Run
// exchanges them; it is safe for concurrent use.
type Limiter struct {
	counts Counts
	log    *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	window  time.Time      // start of the window the maps below belong to
	totals  map[string]int // every node's requests, as last read (this node's sent ones included)
	pending map[string]int // admitted here and not yet sent
	sending map[string]int // sent, their totals not yet read back
}

var _ server.RateLimiter = (*Limiter)(nil)

// New returns a limiter over counts; now is the clock (nil: time.Now).
func New(counts Counts, log *slog.Logger, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Limiter{counts: counts, log: log, now: now, totals: map[string]int{}, pending: map[string]int{}, sending: map[string]int{}}
}

// roll moves to the window containing now (callers hold mu).
func (l *Limiter) roll(now time.Time) time.Time {
	start := now.UTC().Truncate(server.RateWindow)
	if start.After(l.window) {
		l.window = start
		clear(l.totals)
		clear(l.pending)
		clear(l.sending)
	}
	return l.window
}

func (l *Limiter) decide(accountID string, limit int, now time.Time, count bool) server.RateDecision {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := l.roll(now)
	used := l.totals[accountID] + l.sending[accountID] + l.pending[accountID]
	allowed := used < limit
	if count && allowed {
		used++
		l.pending[accountID]++
	}
	end := start.Add(server.RateWindow)
	return server.RateDecision{Allowed: allowed, Limit: limit, Used: used, Remaining: max(limit-used, 0),
		Reset: min(end.Sub(now), server.RateWindow), ResetsAt: end}
}

// Allow implements server.RateLimiter.
func (l *Limiter) Allow(accountID string, limit int, now time.Time) server.RateDecision {
	return l.decide(accountID, limit, now, true)
}

// Peek implements server.RateLimiter.
func (l *Limiter) Peek(accountID string, limit int, now time.Time) server.RateDecision {
	return l.decide(accountID, limit, now, false)
}

// Exchange sends what this node admitted since the last exchange and reads
// back every node's totals for the window.
func (l *Limiter) Exchange(ctx context.Context) error {
	l.mu.Lock()
	window := l.roll(l.now())
	deltas := l.pending
	l.pending = map[string]int{}
	for a, n := range deltas {
		l.sending[a] += n
	}
	l.mu.Unlock()

	totals, err := l.counts.AddRateCounts(ctx, window, deltas)

	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.window.Equal(window) {
		return err // the window moved on meanwhile; its counts are gone
	}
	for a, n := range deltas {
		l.sending[a] -= n
		if l.sending[a] <= 0 {
			delete(l.sending, a)
		}
	}
	if err != nil {
		// Not sent: count them here again, to send next time.
		for a, n := range deltas {
			l.pending[a] += n
		}
		return err
	}
	l.totals = totals
	return nil
}

// Run exchanges the counts every Interval until ctx ends, logging a
// failure once until an exchange succeeds again.
func (l *Limiter) Run(ctx context.Context) {
	t := time.NewTicker(Interval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := l.Exchange(ctx)
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			l.log.Warn("shared rate limit: cannot exchange counts with the database; each node counts alone until it can", "err", err)
			failing = true
		case err == nil && failing:
			l.log.Info("shared rate limit: counts exchanged again")
			failing = false
		}
	}
}
