package webhook

import (
	"fmt"
	"strings"
	"time"
)

// DefaultScheduleSpec is the retry schedule of docs/api.md (Webhooks): the
// delays after each failed attempt. Seven delays mean eight attempts in all.
const DefaultScheduleSpec = "10s,1m,5m,30m,2h,8h,24h"

// maxScheduleItems keeps a typo (or a pasted list) from scheduling deliveries
// for months.
const maxScheduleItems = 50

// DefaultSchedule returns the parsed DefaultScheduleSpec (a fresh slice each
// call, so callers may modify it).
func DefaultSchedule() []time.Duration {
	s, err := ParseSchedule(DefaultScheduleSpec)
	if err != nil {
		panic("webhook: default schedule does not parse: " + err.Error())
	}
	return s
}

// ParseSchedule parses a --webhook-retry-schedule value: comma-separated Go
// durations ("10s", "1m", "1h30m", "500ms"), each positive, spaces around
// items allowed. N delays mean N+1 attempts. An empty value, an empty item,
// a zero or negative delay, a missing or unknown unit, and more than 50 items
// are errors that name the offending item.
func ParseSchedule(spec string) ([]time.Duration, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("webhook retry schedule is empty: give comma-separated delays such as %q", DefaultScheduleSpec)
	}
	items := strings.Split(spec, ",")
	if len(items) > maxScheduleItems {
		return nil, fmt.Errorf("webhook retry schedule has %d delays; at most %d are allowed", len(items), maxScheduleItems)
	}
	out := make([]time.Duration, 0, len(items))
	for i, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("webhook retry schedule item %d is empty (stray comma?) in %q", i+1, spec)
		}
		d, err := time.ParseDuration(item)
		if err != nil {
			return nil, fmt.Errorf("webhook retry schedule item %d %q is not a duration: use a number with a unit (ms, s, m, h), e.g. 10s or 2h", i+1, item)
		}
		if d <= 0 {
			return nil, fmt.Errorf("webhook retry schedule item %d %q must be positive", i+1, item)
		}
		out = append(out, d)
	}
	return out, nil
}

// MaxAttempts is the total number of attempts a schedule allows: the first
// plus one per delay.
func MaxAttempts(schedule []time.Duration) int { return len(schedule) + 1 }

// NextAttempt says when the next attempt is due after attemptsMade attempts,
// the last of which was made at last. It returns false when the schedule is
// exhausted and the delivery is failed. With attemptsMade <= 0 nothing has
// been tried yet and the first attempt is due at last (i.e. now).
func NextAttempt(schedule []time.Duration, attemptsMade int, last time.Time) (time.Time, bool) {
	if attemptsMade <= 0 {
		return last, true
	}
	if attemptsMade > len(schedule) {
		return time.Time{}, false
	}
	return last.Add(schedule[attemptsMade-1]), true
}
