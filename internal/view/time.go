package view

import "time"

// TimeLayout is the API's time format: RFC 3339, UTC, whole seconds.
const TimeLayout = "2006-01-02T15:04:05Z"

// Time formats t for the API, truncating to the second so a time never
// appears later than it happened.
func Time(t time.Time) string { return t.UTC().Truncate(time.Second).Format(TimeLayout) }

// TimePtr is Time for optional times: nil stays nil (JSON null).
func TimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Time(*t)
	return &s
}
