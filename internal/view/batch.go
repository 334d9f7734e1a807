package view

import (
	"github.com/locrisk/locrisk"
)

// Batch is a batch as the API shows it (docs/api.md, Batches).
type Batch struct {
	BatchID         string      `json:"batchId"`
	Name            *string     `json:"name"` // null when none was given
	Status          string      `json:"status"`
	TotalItems      int         `json:"totalItems"`
	ProgressPercent int         `json:"progressPercent"`
	Counts          BatchCounts `json:"counts"`
	CreatedUTC      string      `json:"createdUtc"`
	CompletedUTC    *string     `json:"completedUtc"` // null until completed
	StatusURL       string      `json:"statusUrl"`
	ItemsURL        string      `json:"itemsUrl"`
	CSVURL          string      `json:"csvUrl"`
}

// BatchCounts is how many items are in each state.
type BatchCounts struct {
	Queued     int `json:"queued"`
	Processing int `json:"processing"`
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
	Rejected   int `json:"rejected"`
}

// NewBatch renders b.
func NewBatch(b locrisk.Batch) Batch {
	return Batch{
		BatchID:         b.ID,
		Name:            optString(b.Name),
		Status:          b.Status,
		TotalItems:      b.TotalItems,
		ProgressPercent: b.ProgressPercent(),
		Counts: BatchCounts{
			Queued: b.Counts.Queued, Processing: b.Counts.Processing, Completed: b.Counts.Completed,
			Failed: b.Counts.Failed, Rejected: b.Counts.Rejected,
		},
		CreatedUTC:   Time(b.CreatedUTC),
		CompletedUTC: TimePtr(b.CompletedUTC),
		StatusURL:    BatchPath(b.ID),
		ItemsURL:     BatchItemsPath(b.ID),
		CSVURL:       BatchCSVPath(b.ID),
	}
}

// BatchList is the response of GET /location-risk/batches (docs/api.md,
// Batches): a page of batches, each as GET /location-risk/batches/{batchId}
// shows it.
type BatchList struct {
	Batches    []Batch `json:"batches"`
	Limit      int     `json:"limit"`
	NextCursor *string `json:"nextCursor"`
}

// NewBatchList renders one page of batches; next is the cursor of the
// following page, "" on the last one.
func NewBatchList(batches []locrisk.Batch, limit int, next string) BatchList {
	out := BatchList{Batches: make([]Batch, 0, len(batches)), Limit: limit}
	for _, b := range batches {
		out.Batches = append(out.Batches, NewBatch(b))
	}
	if next != "" {
		out.NextCursor = &next
	}
	return out
}

// BatchItems is the response of GET /location-risk/batches/{batchId}/items.
type BatchItems struct {
	BatchID string      `json:"batchId"`
	Items   []BatchItem `json:"items"`
}

// BatchItem is one item. Every field is always present; those that do not
// apply (yet) are null.
type BatchItem struct {
	RowNumber   int             `json:"rowNumber"`
	ExternalID  *string         `json:"externalId"`
	Latitude    *float64        `json:"latitude"`
	Longitude   *float64        `json:"longitude"`
	Status      string          `json:"status"`
	ReportJobID *string         `json:"reportJobId"`
	ReportID    *string         `json:"reportId"`
	Score       *int            `json:"score"`
	RiskLevel   *string         `json:"riskLevel"`
	Error       *BatchItemError `json:"error"`
}

// BatchItemError is why an item was rejected or its job failed.
type BatchItemError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// NewBatchItem renders it.
func NewBatchItem(it locrisk.BatchItem) BatchItem {
	v := BatchItem{
		RowNumber:   it.RowNumber,
		ExternalID:  optString(it.ExternalID),
		Latitude:    it.Latitude,
		Longitude:   it.Longitude,
		Status:      it.Status,
		ReportJobID: it.JobID,
		ReportID:    it.ReportID,
		Score:       it.Score,
		RiskLevel:   it.RiskLevel,
	}
	if it.ErrorCode != nil {
		v.Error = &BatchItemError{Code: *it.ErrorCode}
		if it.ErrorMessage != nil {
			v.Error.Message = *it.ErrorMessage
		}
	}
	return v
}

// optString is nil for "" (an absent optional label), else &s.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
