package server

import (
	"net/http"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/view"
)

// The usage endpoints (docs/api.md, Usage, quotas and rate limits). Both
// accept usage:read or, on scopeVersion 1 keys, reports:read (usageAccess in
// routes.go).

// Quota names in the quotas array of GET /usage/current.
const (
	quotaReportJobs        = "report_jobs"
	quotaRequestsPerMinute = "requests_per_minute"
)

// Bounds of GET /usage/history.
const (
	defaultHistoryDays = 30
	maxHistoryDays     = 90
)

// UsageCurrentView is the response of GET /usage/current.
type UsageCurrentView struct {
	APIVersion    string            `json:"apiVersion"`
	GeneratedUTC  string            `json:"generatedUtc"`
	AccountID     string            `json:"accountId"`
	Quotas        []QuotaView       `json:"quotas"`
	APIReportJobs APIReportJobsView `json:"apiReportJobs"`
}

// QuotaView is one limit and where the account stands against it. The
// report_jobs quota has a billing period (periodStartUtc); the request rate
// has a window (windowSeconds).
type QuotaView struct {
	Name           string  `json:"name"`
	Limit          int     `json:"limit"`
	Used           int     `json:"used"`
	Remaining      int     `json:"remaining"`
	PeriodStartUTC *string `json:"periodStartUtc,omitempty"`
	WindowSeconds  *int    `json:"windowSeconds,omitempty"`
	ResetsAtUTC    string  `json:"resetsAtUtc"`
}

// APIReportJobsView counts the report jobs created in the current period
// (every bucket, as the quota does) by their status now.
type APIReportJobsView struct {
	Created        int    `json:"created"`
	Queued         int    `json:"queued"`
	Processing     int    `json:"processing"`
	Completed      int    `json:"completed"`
	Failed         int    `json:"failed"`
	PeriodStartUTC string `json:"periodStartUtc"`
}

// getUsageCurrent is GET /usage/current (docs/api.md, Usage, quotas and
// rate limits). The request-rate quota includes the request asking (it was
// counted before the handler ran).
func (s *Server) getUsageCurrent(w http.ResponseWriter, r *http.Request, p *principal) error {
	now := s.now()
	u, err := s.store.PeriodUsage(r.Context(), p.account.ID, now)
	if err != nil {
		return err
	}
	rate := s.limiter.Peek(p.account.ID, p.account.RateLimitPerMinute, now)
	periodStart := view.Time(u.Start)
	window := int(RateWindow / time.Second)
	v := UsageCurrentView{
		APIVersion:   view.APIVersion,
		GeneratedUTC: view.Time(now),
		AccountID:    p.account.ID,
		Quotas: []QuotaView{
			{Name: quotaReportJobs, Limit: u.Limit, Used: u.Created, Remaining: u.Remaining(),
				PeriodStartUTC: &periodStart, ResetsAtUTC: view.Time(u.End)},
			{Name: quotaRequestsPerMinute, Limit: rate.Limit, Used: rate.Used, Remaining: rate.Remaining,
				WindowSeconds: &window, ResetsAtUTC: view.Time(rate.ResetsAt)},
		},
		APIReportJobs: APIReportJobsView{
			Created: u.Created, Queued: u.Queued, Processing: u.Processing,
			Completed: u.Completed, Failed: u.Failed, PeriodStartUTC: periodStart,
		},
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// UsageHistoryView is the response of GET /usage/history.
type UsageHistoryView struct {
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

// getUsageHistory is GET /usage/history (docs/api.md, Usage, quotas and
// rate limits): the last `days` UTC days, today included (so fromUtc is
// 00:00 of the first day and toUtc is now), one item per day and bucket,
// zeros included, oldest first, buckets in the order api, bulk, manual.
// reportJobs counts the jobs created that day; completed and failed the
// jobs that reached that final state that day. A parameter that is present
// must be valid, empty included.
func (s *Server) getUsageHistory(w http.ResponseWriter, r *http.Request, p *principal) error {
	q, err := parseQuery(r)
	if err != nil {
		return err
	}
	days := defaultHistoryDays
	if vs, ok := q["days"]; ok {
		n, ok := parseBoundedInt(vs[0], 1, maxHistoryDays)
		if !ok {
			return errorf(codeInvalidDays, "days must be an integer from 1 to %d", maxHistoryDays)
		}
		days = n
	}
	var buckets []string
	var bucket *string
	if vs, ok := q["bucket"]; ok {
		if !locrisk.ValidBucket(vs[0]) {
			return errorf(codeInvalidBucket, "bucket must be one of api, bulk, manual")
		}
		buckets = []string{vs[0]}
		bucket = &vs[0]
	}
	now := s.now().UTC()
	first := now.AddDate(0, 0, -(days - 1))
	hist, err := s.store.UsageHistory(r.Context(), p.account.ID, first, days, buckets)
	if err != nil {
		return err
	}
	v := UsageHistoryView{
		APIVersion: view.APIVersion,
		AccountID:  p.account.ID,
		ToUTC:      view.Time(now),
		Days:       days,
		Bucket:     bucket,
		Items:      make([]UsageHistoryItem, 0, len(hist)),
	}
	for i, d := range hist {
		if i == 0 {
			v.FromUTC = view.Time(d.Day)
		}
		v.Items = append(v.Items, UsageHistoryItem{DateUTC: d.Day.Format(time.DateOnly), Bucket: d.Bucket,
			ReportJobs: d.ReportJobs, Completed: d.Completed, Failed: d.Failed})
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}
