package view

import (
	"encoding/json"
	"fmt"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/webhook"
)

// JobEventType is the webhook event type that announces j's state:
// report.job.completed or report.job.failed for a final job, "" for a job
// that is still queued or processing.
func JobEventType(j locrisk.Job) string {
	switch j.Status {
	case locrisk.StatusCompleted:
		return webhook.EventJobCompleted
	case locrisk.StatusFailed:
		return webhook.EventJobFailed
	}
	return ""
}

// NewJobEvent is the webhook event, with id (evt_...), that announces j's
// final state (docs/api.md, Webhooks). Its data.job is j exactly as
// GET /location-risk/report-jobs/{jobId} shows it (NewJob), and since the
// event is as old as the transition it reports, its createdUtc is j's
// completedUtc. A job that is not final, or has no completion time, has no
// event.
func NewJobEvent(id string, j locrisk.Job) (webhook.Event, error) {
	typ := JobEventType(j)
	if typ == "" {
		return webhook.Event{}, fmt.Errorf("job %s is %s: only a final job has an event", j.ID, j.Status)
	}
	if j.CompletedUTC == nil {
		return webhook.Event{}, fmt.Errorf("final job %s has no completion time", j.ID)
	}
	data, err := json.Marshal(NewJob(j))
	if err != nil {
		return webhook.Event{}, fmt.Errorf("encode job %s: %w", j.ID, err)
	}
	return webhook.NewEvent(id, typ, *j.CompletedUTC, data), nil
}

// NewBatchEvent is the batch.completed event, with id (evt_...), for b,
// which has just become completed (docs/api.md, Webhooks). Its data.batch is
// b exactly as GET /location-risk/batches/{batchId} shows it (NewBatch);
// its createdUtc is b's completedUtc.
func NewBatchEvent(id string, b locrisk.Batch) (webhook.Event, error) {
	if b.Status != locrisk.BatchCompleted || b.CompletedUTC == nil {
		return webhook.Event{}, fmt.Errorf("batch %s is %s: only a completed batch has an event", b.ID, b.Status)
	}
	data, err := json.Marshal(NewBatch(b))
	if err != nil {
		return webhook.Event{}, fmt.Errorf("encode batch %s: %w", b.ID, err)
	}
	return webhook.NewBatchEvent(id, *b.CompletedUTC, data), nil
}
