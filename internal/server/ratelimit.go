package server

import (
	"sync"
	"time"
)

// RateLimiter counts requests per account in fixed windows (docs/api.md,
// Usage, quotas and rate limits). Implementations must be safe for
// concurrent use.
type RateLimiter interface {
	// Allow counts one request of account against limit per window at time
	// now and says whether it may proceed.
	Allow(accountID string, limit int, now time.Time) RateDecision
	// Peek reports the account's current window without counting a request
	// (for the usage endpoint).
	Peek(accountID string, limit int, now time.Time) RateDecision
}

// RateDecision is the state of an account's window after a request.
type RateDecision struct {
	Allowed   bool
	Limit     int
	Used      int           // requests admitted in the current window
	Remaining int           // requests still admitted in the current window
	Reset     time.Duration // until the current window ends
	ResetsAt  time.Time     // when the current window ends
}

// RateWindow is the length of a rate-limit window.
const RateWindow = time.Minute

// MemoryRateLimiter keeps one counter per account in memory. Windows are
// aligned to the UTC clock minute (12:00:00 to 12:01:00, ...), not to an
// account's first request, so the reset time is the same for everyone and
// easy to reason about; a caller can therefore send up to twice the limit
// across a minute boundary, the usual trade-off of fixed windows. Refused
// requests are not added to the count, so Used never exceeds the limit.
// Counters live only as long as the process.
type MemoryRateLimiter struct {
	mu     sync.Mutex
	counts map[string]int
	window time.Time // start of the window the counts belong to
}

// NewMemoryRateLimiter returns an empty limiter.
func NewMemoryRateLimiter() *MemoryRateLimiter {
	return &MemoryRateLimiter{counts: make(map[string]int)}
}

// roll moves to the window containing now, dropping every old counter (a
// fixed window needs nothing from the previous one). Callers hold mu.
func (m *MemoryRateLimiter) roll(now time.Time) time.Time {
	start := now.UTC().Truncate(RateWindow)
	if !start.Equal(m.window) {
		if start.After(m.window) {
			clear(m.counts)
			m.window = start
		}
		// A clock that steps back into an earlier window keeps counting in
		// the later one rather than granting a fresh allowance.
	}
	return m.window
}

func (m *MemoryRateLimiter) decide(accountID string, limit int, now time.Time, count bool) RateDecision {
	m.mu.Lock()
	defer m.mu.Unlock()
	start := m.roll(now)
	used := m.counts[accountID]
	allowed := used < limit
	if count && allowed {
		used++
		m.counts[accountID] = used
	}
	end := start.Add(RateWindow)
	return RateDecision{
		Allowed:   allowed,
		Limit:     limit,
		Used:      used,
		Remaining: max(limit-used, 0),
		Reset:     min(end.Sub(now), RateWindow),
		ResetsAt:  end,
	}
}

// Allow implements RateLimiter.
func (m *MemoryRateLimiter) Allow(accountID string, limit int, now time.Time) RateDecision {
	return m.decide(accountID, limit, now, true)
}

// Peek implements RateLimiter.
func (m *MemoryRateLimiter) Peek(accountID string, limit int, now time.Time) RateDecision {
	return m.decide(accountID, limit, now, false)
}
