package locrisk

import (
	"time"
)

// Batch statuses, and the item status of an item refused at creation (the
// other item statuses are its job's).
const (
	BatchProcessing = "processing"
	BatchCompleted  = "completed"
	ItemRejected    = "rejected"
)

// NewBatch describes a batch to create. The caller (the API) has already
// decided which items are valid: an item with ErrorCode set is stored as
// rejected and gets no job; every other item becomes a report job in
// BucketBulk.
type NewBatch struct {
	AccountID      string
	Name           string
	Items          []NewBatchItem // at least one, in request order
	IdempotencyKey string         // "" = none
	RequestHash    string         // hex SHA-256 of the canonical request; compared on replay
}

// NewBatchItem is one item of a new batch.
type NewBatchItem struct {
	ExternalID string
	// The coordinate as sent; nil when the item carried no usable number
	// (a rejected item only).
	Latitude, Longitude *float64
	// ErrorCode and ErrorMessage are set for a rejected item and empty for
	// a valid one.
	ErrorCode, ErrorMessage string
}

// BatchCounts is how many items of a batch are in each state.
type BatchCounts struct {
	Queued, Processing, Completed, Failed, Rejected int
}

// Batch is a batch with its state derived from its items and their jobs at
// the moment it was read.
type Batch struct {
	ID           string
	AccountID    string
	Name         string
	TotalItems   int
	Status       string // BatchProcessing or BatchCompleted
	Counts       BatchCounts
	CreatedUTC   time.Time
	CompletedUTC *time.Time // set once Status is BatchCompleted
}

// ProgressPercent is the share of items in a final state (completed,
// failed, rejected), rounded down, so 100 means exactly "all done".
func (b Batch) ProgressPercent() int {
	if b.TotalItems <= 0 {
		return 0
	}
	done := b.Counts.Completed + b.Counts.Failed + b.Counts.Rejected
	return done * 100 / b.TotalItems
}

// BatchItem is one item of a batch as it stands: its own fields, its job's
// status and error, and the scores of its report once completed.
type BatchItem struct {
	RowNumber           int
	ExternalID          string
	Latitude, Longitude *float64
	Status              string // a job status, or ItemRejected
	JobID               *string
	ReportID            *string
	Score               *int            // summary.overallScore of the report
	RiskLevel           *string         // summary.riskLevel of the report
	ModuleScores        map[string]*int // summary.moduleScores by module key; a nil score where the module has no data
	// ErrorCode and ErrorMessage are set for a rejected item and for an
	// item whose job failed, and nil otherwise.
	ErrorCode, ErrorMessage *string
}
