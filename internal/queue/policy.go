package queue

import "time"

// Policy is a kind's retry policy: after a retryable failure of the given
// attempt (counting from 1; smaller values count as 1), the delay before
// the next attempt, or false when no attempt is left and the failure is
// final.
type Policy interface {
	Next(attempt int) (delay time.Duration, ok bool)
}

// Never retries: every failure is final.
type Never struct{}

// Next always says no attempt is left.
func (Never) Next(int) (time.Duration, bool) { return 0, false }

// Backoff allows Attempts attempts in all, waiting Base * 2^(attempt-1)
// after a failed attempt, capped at Max.
type Backoff struct {
	Base     time.Duration
	Max      time.Duration
	Attempts int
}

// Delay is the wait after the given failed attempt, whether or not another
// attempt is allowed.
func (b Backoff) Delay(attempt int) time.Duration {
	d := b.Base
	// Doubling stops at the cap, so a large attempt cannot overflow.
	for i := 1; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// Next gives the delay while attempts are left.
func (b Backoff) Next(attempt int) (time.Duration, bool) {
	if max(attempt, 1) >= b.Attempts {
		return 0, false
	}
	return b.Delay(attempt), true
}

// Schedule is a fixed list of delays: the n-th failed attempt is followed
// by Schedule[n-1]; N delays allow N+1 attempts.
type Schedule []time.Duration

// Next gives the scheduled delay while the schedule lasts.
func (s Schedule) Next(attempt int) (time.Duration, bool) {
	attempt = max(attempt, 1)
	if attempt > len(s) {
		return 0, false
	}
	return s[attempt-1], true
}
