package locrisk

import (
	"time"
)

// Account owns keys, jobs and reports; quota and rate limit are per account.
type Account struct {
	ID                 string
	Name               string
	MonthlyQuota       int // report jobs per calendar month (UTC)
	RateLimitPerMinute int
	CreatedUTC         time.Time
	// DisabledUTC is when the account was disabled; nil while it is
	// enabled. A disabled account's keys do not authenticate.
	DisabledUTC *time.Time
}

// Disabled reports whether the account is disabled.
func (a Account) Disabled() bool { return a.DisabledUTC != nil }

// Defaults from docs/api.md (Command line).
const (
	DefaultMonthlyQuota = 1000
	DefaultRateLimit    = 600
)

// AccountUpdate is a change to an account; nil fields stay as they are.
type AccountUpdate struct {
	Name         *string
	MonthlyQuota *int // 0 or more
	RateLimit    *int // requests per minute, 1 or more
}
