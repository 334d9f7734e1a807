package locrisk

// What a new record is, and what a stored one means, as every store has it:
// the job, batch, key and endpoint a creation makes from its request; a
// batch's state and its items as the API shows them, derived from what is
// stored; what an idempotency key already taken means for a request; when
// the quota refuses; the period usage and the recent failures of the
// operations summary. A store supplies the ids and the rows; the rules
// are here once.

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Job is the job j creates: id, queued and runnable at now, created and
// updated at now, no attempts. j is Normalized.
func (j NewJob) Job(id string, now time.Time) Job {
	return Job{ID: id, AccountID: j.AccountID, Bucket: j.Bucket, Latitude: j.Latitude, Longitude: j.Longitude,
		Status: StatusQueued, RunAfterUTC: now, CreatedUTC: now, UpdatedUTC: now}
}

// Batch is the batch nb creates with id at now, valid of its items
// becoming jobs (NewBatch.Validate): processing with those queued and the
// others rejected, or, when none is valid, completed at once.
func (nb NewBatch) Batch(id string, valid int, now time.Time) Batch {
	b := Batch{ID: id, AccountID: nb.AccountID, Name: nb.Name, TotalItems: len(nb.Items), Status: BatchProcessing,
		Counts: BatchCounts{Queued: valid, Rejected: len(nb.Items) - valid}, CreatedUTC: now}
	if valid == 0 {
		b.Status, b.CompletedUTC = BatchCompleted, &now
	}
	return b
}

// ItemJob is the job of the batch b's valid item it, made with id at now:
// a bulk job like any other new one.
func (b Batch) ItemJob(id string, it NewBatchItem, now time.Time) Job {
	j := NewJob{AccountID: b.AccountID, Bucket: BucketBulk, Latitude: *it.Latitude, Longitude: *it.Longitude}.Job(id, now)
	j.BatchID = &b.ID
	return j
}

// SetCounts sets b's counts and, from them, its status and completion: a
// batch is completed once none of its items is queued or processing, at
// the latest end of its jobs (lastEnd), or at its creation when none
// ended (every item rejected).
func (b *Batch) SetCounts(c BatchCounts, lastEnd *time.Time) {
	b.Counts, b.Status, b.CompletedUTC = c, BatchProcessing, nil
	if c.Queued+c.Processing > 0 {
		return
	}
	b.Status = BatchCompleted
	done := b.CreatedUTC
	if lastEnd != nil {
		done = *lastEnd
	}
	b.CompletedUTC = &done
}

// BatchItemRecord is a batch item as a store reads it: the item's own
// columns, its job's and its report's (nil where NULL). Stores select
// these column names.
type BatchItemRecord struct {
	RowNumber        int      `db:"row_number"`
	ExternalID       string   `db:"external_id"`
	Latitude         *float64 `db:"latitude"`
	Longitude        *float64 `db:"longitude"`
	JobID            *string  `db:"job_id"`
	ItemErrorCode    *string  `db:"item_error_code"`
	ItemErrorMessage *string  `db:"item_error_message"`
	JobStatus        *string  `db:"job_status"`
	ReportID         *string  `db:"report_id"`
	JobErrorCode     *string  `db:"job_error_code"`
	JobErrorMessage  *string  `db:"job_error_message"`
	OverallScore     *int     `db:"overall_score"`
	RiskLevel        *string  `db:"risk_level"`
	ModuleScores     *string  `db:"module_scores"` // ModulesJSON's form
}

// Item is the item as the API shows it: a rejected item (no job) with its
// own error; otherwise its job's status, with the report and its scores
// once completed, and the job's error only once failed (a queued job may
// still carry the error of an attempt being retried).
func (r BatchItemRecord) Item() BatchItem {
	it := BatchItem{RowNumber: r.RowNumber, ExternalID: r.ExternalID, Latitude: r.Latitude, Longitude: r.Longitude, JobID: r.JobID}
	if r.JobID == nil {
		it.Status = ItemRejected
		it.ErrorCode, it.ErrorMessage = r.ItemErrorCode, r.ItemErrorMessage
		return it
	}
	if r.JobStatus != nil {
		it.Status = *r.JobStatus
	}
	switch it.Status {
	case StatusCompleted:
		it.ReportID = r.ReportID
		if r.OverallScore != nil {
			it.Score, it.RiskLevel = r.OverallScore, r.RiskLevel
			it.ModuleScores = ParseModuleScores(r.ModuleScores)
		}
	case StatusFailed:
		it.ErrorCode, it.ErrorMessage = r.JobErrorCode, r.JobErrorMessage
	}
	return it
}

// Key is the key k creates: id, the secret's hint (its first 8 characters,
// "lrk_" and 4 of the random part), the normalized scopes, version and
// allowlist, created at now and expiring ExpiresIn later (never when 0),
// to the millisecond.
func (k NewKey) Key(id, secret string, now time.Time) (APIKey, error) {
	scopes, version, cidrs, err := k.Normalized()
	if err != nil {
		return APIKey{}, err
	}
	now = now.UTC().Truncate(time.Millisecond)
	key := APIKey{ID: id, AccountID: k.AccountID, Name: k.Name, SecretHint: secret[:min(len(secret), secretHintLen)],
		Scopes: scopes, ScopeVersion: version, AllowedCIDRs: cidrs, CreatedUTC: now}
	if k.ExpiresIn > 0 {
		t := now.Add(k.ExpiresIn).Truncate(time.Millisecond)
		key.ExpiresUTC = &t
	}
	return key, nil
}

// secretHintLen is the length of a key's SecretHint: "lrk_" and the first
// 4 characters of the random part.
const secretHintLen = len("lrk_") + 4

// Endpoint is the endpoint ne creates with id at now: active, its events
// a copy of ne's.
func (ne NewWebhookEndpoint) Endpoint(id string, now time.Time) WebhookEndpoint {
	return WebhookEndpoint{ID: id, AccountID: ne.AccountID, Name: ne.Name, URL: ne.URL,
		Events: append([]string(nil), ne.Events...), Active: true, CreatedUTC: now}
}

// jobEventPrefix starts the types of the events about one report job, the
// only ones whose delivery names a jobId (docs/api.md, Webhooks).
const jobEventPrefix = "report.job."

// DeliveryJobID is the job a delivery of an event of eventType about
// jobID names: a report.job.* event's job; nil for the others
// (batch.completed keeps its job for the purge, not for the API).
func DeliveryJobID(eventType string, jobID *string) *string {
	if !strings.HasPrefix(eventType, jobEventPrefix) {
		return nil
	}
	return jobID
}

// IdempotentReplay decides what a request with hash, at now, makes of an
// idempotency key already taken by a request with storedHash at created
// that made resourceID: expired when the key is forgotten (the request
// creates afresh and takes the key over); otherwise the resource to
// replay when the request is the same, or ErrIdempotencyConflict.
func IdempotentReplay(storedHash, resourceID string, created time.Time, hash string, now time.Time) (replay string, expired bool, err error) {
	switch {
	case IdempotencyExpired(created, now):
		return "", true, nil
	case storedHash != hash:
		return "", false, ErrIdempotencyConflict
	}
	return resourceID, false, nil
}

// CheckQuota is the quota's verdict once n jobs have been counted, with
// used the account's count for now's month after them and limit its
// quota: nil when they fit, else a *QuotaError with the count before them.
func CheckQuota(limit, used, n int, now time.Time) error {
	if used > limit {
		return &QuotaError{Limit: limit, Used: used - n, ResetsAt: NextMonthStart(now)}
	}
	return nil
}

// NewPeriodUsage is the usage of a's billing period at now before any
// count: its quota and the period's bounds.
func NewPeriodUsage(a Account, now time.Time) PeriodUsage {
	return PeriodUsage{Limit: a.MonthlyQuota, Start: MonthStart(now), End: NextMonthStart(now)}
}

// UsageCounters are a period's jobs as both stores' usage counters keep
// them: queued and processing together as open, since a claim changes no
// counter, with the jobs processing now counted beside them; and the jobs
// charged to the period's quota (quota_usage).
type UsageCounters struct {
	Open       int `db:"open"`
	Processing int `db:"processing"`
	Completed  int `db:"completed"`
	Failed     int `db:"failed"`
	Charged    int `db:"charged"`
}

// SetCounts sets the period's jobs by their status now from the counters.
// Every job created in it was charged to the quota, whatever its status,
// but for the re-scores of watch items, which are jobs the quota does not
// count (docs/api.md, Watchlists).
func (u *PeriodUsage) SetCounts(c UsageCounters) {
	u.Queued, u.Processing, u.Completed, u.Failed = c.Open-c.Processing, c.Processing, c.Completed, c.Failed
	u.Created = c.Open + c.Completed + c.Failed
	u.Charged = c.Charged
}

// Kinds and code of the operations summary's recent failures (docs/api.md,
// Operations summary).
const (
	FailureReportJob       = "report_job"
	FailureWebhookDelivery = "webhook_delivery"
	// CodeWebhookDeliveryFailed is the code of a delivery that ran out of
	// attempts; its message is the last error recorded.
	CodeWebhookDeliveryFailed = "webhook_delivery_failed"
)

// RecentFailures orders failures newest first, ids breaking ties so the
// order is stable, and keeps at most limit of them.
func RecentFailures(fs []Failure, limit int) []Failure {
	sort.Slice(fs, func(i, k int) bool {
		if !fs[i].OccurredUTC.Equal(fs[k].OccurredUTC) {
			return fs[i].OccurredUTC.After(fs[k].OccurredUTC)
		}
		return fs[i].ID > fs[k].ID
	})
	if len(fs) > max(limit, 0) {
		fs = fs[:max(limit, 0)]
	}
	return fs
}

// ItemCursor is the cursor a store reads a batch's items from, a
// BatchItemRecord a row (a *sqlx.Rows).
type ItemCursor interface {
	Next() bool
	StructScan(dest any) error
	Err() error
}

// EachBatchItem calls fn with each item of the batch's cursor, in the
// cursor's order, and stops at fn's first error, which it returns
// unchanged (BatchItems in service.go).
func EachBatchItem(batchID string, rows ItemCursor, fn func(BatchItem) error) error {
	for rows.Next() {
		var r BatchItemRecord
		if err := rows.StructScan(&r); err != nil {
			return fmt.Errorf("read item of batch %s: %w", batchID, err)
		}
		if err := fn(r.Item()); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list items of batch %s: %w", batchID, err)
	}
	return nil
}
