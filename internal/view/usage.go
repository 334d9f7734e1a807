package view

import (
	"time"

	"github.com/locrisk/locrisk"
)

// Quota names in the quotas array of GET /usage/current (docs/api.md,
// Current usage).
const (
	QuotaReportJobs        = "report_jobs"
	QuotaRequestsPerMinute = "requests_per_minute"
)

// UsageCurrent is the response of GET /usage/current (docs/api.md, Current
// usage).
type UsageCurrent struct {
	APIVersion    string        `json:"apiVersion"`
	GeneratedUTC  string        `json:"generatedUtc"`
	AccountID     string        `json:"accountId"`
	Quotas        []Quota       `json:"quotas"`
	APIReportJobs APIReportJobs `json:"apiReportJobs"`
}

// Quota is one limit and where the account stands against it. The
// report_jobs quota has a billing period (periodStartUtc); the request rate
// has a window (windowSeconds). Each leaves the other's field out rather
// than sending it as null, as docs/api.md shows them.
type Quota struct {
	Name           string  `json:"name"`
	Limit          int     `json:"limit"`
	Used           int     `json:"used"`
	Remaining      int     `json:"remaining"`
	PeriodStartUTC *string `json:"periodStartUtc,omitempty"`
	WindowSeconds  *int    `json:"windowSeconds,omitempty"`
	ResetsAtUTC    string  `json:"resetsAtUtc"`
}

// APIReportJobs counts the report jobs created in the current period
// (every bucket, as the quota does) by their status now.
type APIReportJobs struct {
	Created        int    `json:"created"`
	Queued         int    `json:"queued"`
	Processing     int    `json:"processing"`
	Completed      int    `json:"completed"`
	Failed         int    `json:"failed"`
	PeriodStartUTC string `json:"periodStartUtc"`
}

// RateUsage is where an account stands in its current rate-limit window.
// The limiter belongs to the server, so the server fills this in; the view
// only shows it.
type RateUsage struct {
	Limit     int
	Used      int // requests admitted in the window so far
	Remaining int
	Window    time.Duration // the length of every window
	ResetsAt  time.Time     // when the current window ends
}

// NewUsageCurrent renders the account's usage at now: the report_jobs quota
// of period u first, then the request rate, in the order docs/api.md lists
// them.
func NewUsageCurrent(accountID string, now time.Time, u locrisk.PeriodUsage, rate RateUsage) UsageCurrent {
	periodStart := Time(u.Start)
	window := int(rate.Window / time.Second)
	return UsageCurrent{
		APIVersion:   APIVersion,
		GeneratedUTC: Time(now),
		AccountID:    accountID,
		Quotas: []Quota{
			{Name: QuotaReportJobs, Limit: u.Limit, Used: u.Charged, Remaining: u.Remaining(),
				PeriodStartUTC: &periodStart, ResetsAtUTC: Time(u.End)},
			{Name: QuotaRequestsPerMinute, Limit: rate.Limit, Used: rate.Used, Remaining: rate.Remaining,
				WindowSeconds: &window, ResetsAtUTC: Time(rate.ResetsAt)},
		},
		APIReportJobs: APIReportJobs{
			Created: u.Created, Queued: u.Queued, Processing: u.Processing,
			Completed: u.Completed, Failed: u.Failed, PeriodStartUTC: periodStart,
		},
	}
}

// UsageHistory is the response of GET /usage/history (docs/api.md, Usage
// history).
type UsageHistory struct {
	APIVersion string             `json:"apiVersion"`
	AccountID  string             `json:"accountId"`
	FromUTC    string             `json:"fromUtc"`
	ToUTC      string             `json:"toUtc"`
	Days       int                `json:"days"`
	Bucket     *string            `json:"bucket"` // null: all buckets
	Items      []UsageHistoryItem `json:"items"`
}

// UsageHistoryItem is one day and bucket.
type UsageHistoryItem struct {
	DateUTC    string `json:"dateUtc"`
	Bucket     string `json:"bucket"`
	ReportJobs int    `json:"reportJobs"`
	Completed  int    `json:"completed"`
	Failed     int    `json:"failed"`
}

// NewUsageHistory renders the history of the last days UTC days up to now,
// one item per entry of hist in its order (the store gives every day and
// bucket, zeros included, oldest first). bucket is the one bucket asked
// for, "" for all of them (null). fromUtc is midnight of the first day, so
// it comes from hist; an empty hist, which the store never gives for
// days >= 1, leaves it "".
func NewUsageHistory(accountID string, now time.Time, days int, bucket string, hist []locrisk.DailyUsage) UsageHistory {
	v := UsageHistory{
		APIVersion: APIVersion,
		AccountID:  accountID,
		ToUTC:      Time(now),
		Days:       days,
		Bucket:     optString(bucket),
		Items:      make([]UsageHistoryItem, 0, len(hist)),
	}
	for i, d := range hist {
		if i == 0 {
			v.FromUTC = Time(d.Day)
		}
		v.Items = append(v.Items, UsageHistoryItem{DateUTC: d.Day.Format(time.DateOnly), Bucket: d.Bucket,
			ReportJobs: d.ReportJobs, Completed: d.Completed, Failed: d.Failed})
	}
	return v
}
