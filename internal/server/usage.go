package server

import (
	"net/http"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/view"
)

// The usage endpoints (docs/api.md, Usage, quotas and rate limits). Both
// accept usage:read or, on scopeVersion 1 keys, reports:read (usageAccess in
// routes.go).

// Bounds of GET /usage/history.
const (
	defaultHistoryDays = 30
	maxHistoryDays     = 90
)

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
	writeJSON(w, http.StatusOK, view.NewUsageCurrent(p.account.ID, now, u, view.RateUsage{
		Limit: rate.Limit, Used: rate.Used, Remaining: rate.Remaining, Window: RateWindow, ResetsAt: rate.ResetsAt}))
	return nil
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
	var bucket string // "": all of them
	if vs, ok := q["bucket"]; ok {
		if !locrisk.ValidBucket(vs[0]) {
			return errorf(codeInvalidBucket, "bucket must be one of api, bulk, manual")
		}
		buckets = []string{vs[0]}
		bucket = vs[0]
	}
	now := s.now().UTC()
	first := now.AddDate(0, 0, -(days - 1))
	hist, err := s.store.UsageHistory(r.Context(), p.account.ID, first, days, buckets)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view.NewUsageHistory(p.account.ID, now, days, bucket, hist))
	return nil
}
