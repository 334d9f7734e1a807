package locrisk

import (
	"time"
)

// Job statuses (docs/api.md, Report jobs).
const (
	StatusQueued     = "queued"
	StatusProcessing = "processing"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
)

// ValidStatus reports whether s is one of the four job statuses.
func ValidStatus(s string) bool {
	switch s {
	case StatusQueued, StatusProcessing, StatusCompleted, StatusFailed:
		return true
	}
	return false
}

// Usage buckets: single API jobs, batch children, operator-made jobs.
const (
	BucketAPI    = "api"
	BucketBulk   = "bulk"
	BucketManual = "manual"
)

// Job is a report job. The error fields are set while a failed job waits
// for its automatic retry (status queued, last error kept for operators) and
// on a failed job; the API shows them only for status failed.
//
// The db tags name the report_jobs columns every store has; a store reads
// the times itself (they are stored differently in each) and so they carry
// none.
type Job struct {
	ID             string     `db:"id"`
	AccountID      string     `db:"account_id"`
	BatchID        *string    `db:"batch_id"`
	Bucket         string     `db:"bucket"`
	Latitude       float64    `db:"latitude"`
	Longitude      float64    `db:"longitude"`
	Status         string     `db:"status"`
	Attempts       int        `db:"attempts"` // generation attempts started, across retries
	ErrorCode      *string    `db:"error_code"`
	ErrorMessage   *string    `db:"error_message"`
	ErrorTransient *bool      `db:"error_transient"`
	ReportID       *string    `db:"report_id"`
	WatchItemID    *string    `db:"watch_item_id"` // the watch item it scores (docs/api.md, Watchlists); nil for other jobs
	RunAfterUTC    time.Time  `db:"-"`
	CreatedUTC     time.Time  `db:"-"`
	UpdatedUTC     time.Time  `db:"-"`
	CompletedUTC   *time.Time `db:"-"` // completed or failed
	// Reclaimed is set by ClaimJob when the job was taken over from a
	// worker whose lease ran out (it died or hung mid-attempt).
	Reclaimed bool `db:"-"`
}

// Terminal reports whether the job is completed or failed.
func (j Job) Terminal() bool { return j.Status == StatusCompleted || j.Status == StatusFailed }

// IdempotencyTTL is how long an idempotency key is remembered (docs/api.md,
// Idempotency): a request under a key older than this creates afresh.
const IdempotencyTTL = 24 * time.Hour

// NewJob describes a job to create.
type NewJob struct {
	AccountID      string
	Bucket         string // BucketAPI, BucketBulk or BucketManual; "" means BucketAPI
	Latitude       float64
	Longitude      float64
	IdempotencyKey string // "" = none
	RequestHash    string // hex SHA-256 of the canonical request; compared on replay
}
