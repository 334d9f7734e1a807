// Package outbox records the webhook events of report jobs, batches and
// watch items: a locrisk.JobFinalHook that, inside the transaction that
// moves a job to completed or failed, writes the event announcing it;
// when that job completed its batch, the batch.completed event; and when
// it re-scored a watch item whose report changed materially, marks the
// item changed and writes the report.changed event (changed.go); each
// event with one pending delivery per subscribed endpoint. Package
// webhookworker sends them.
//
// It sits beside the store rather than in the HTTP server: it needs the
// store's transaction (through the locrisk.Tx interface, not the SQL driver)
// and the job as the API shows it (package view), nothing of HTTP.
package outbox

import (
	"context"
	"fmt"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/view"
	"github.com/locrisk/locrisk/internal/webhook"
)

// Hook returns the locrisk.JobFinalHook that records webhook events
// (register it with the store, Options.OnJobFinal of internal/sqlite). Inside
// the transaction that moves a job to completed or failed, it writes one event, whose data.job is the job
// exactly as GET /location-risk/report-jobs/{jobId} now shows it
// (view.NewJobEvent), and one pending delivery per active endpoint of the
// job's account subscribed to the event type. Event and deliveries commit
// with the job's final state or not at all, so an event cannot be lost
// between the two. When no endpoint subscribes, nothing is written.
//
// wake (may be nil) is called after the rows are written, still inside the
// transaction, to rouse the delivery worker. That is early but safe: the
// worker's claim waits for the store's write slot, which the transaction
// holds until it has committed (see locrisk.WebhookOutbox).
func Hook(wake func()) locrisk.JobFinalHook {
	return func(ctx context.Context, tx locrisk.Tx, job locrisk.Job) error {
		wrote, err := jobEvent(ctx, tx, job)
		if err != nil {
			return fmt.Errorf("webhook outbox: %w", err)
		}
		if b, ok := tx.CompletedBatch(); ok {
			w, err := batchEvent(ctx, tx, job, b)
			if err != nil {
				return fmt.Errorf("webhook outbox: %w", err)
			}
			wrote = wrote || w
		}
		if c, ok := tx.WatchChange(); ok {
			w, err := changeEvent(ctx, tx, job, c)
			if err != nil {
				return fmt.Errorf("webhook outbox: %w", err)
			}
			wrote = wrote || w
		}
		if wrote && wake != nil {
			wake()
		}
		return nil
	}
}

// jobEvent writes the job's event for its subscribers; wrote is false when
// none subscribes.
func jobEvent(ctx context.Context, tx locrisk.Tx, job locrisk.Job) (wrote bool, err error) {
	typ := view.JobEventType(job)
	if typ == "" {
		return false, nil
	}
	if job.CompletedUTC == nil {
		return false, fmt.Errorf("final job %s has no completion time", job.ID)
	}
	endpoints, err := tx.WebhookSubscribers(ctx, job.AccountID, typ)
	if err != nil || len(endpoints) == 0 {
		return false, err
	}
	ev, err := view.NewJobEvent(ids.New(ids.Event), job)
	if err != nil {
		return false, err
	}
	return insert(ctx, tx, ev, job.AccountID, job.ID, *job.CompletedUTC, endpoints)
}

// batchEvent writes the batch.completed event of b, which job's transition
// completed, for its subscribers. The event row keeps job's id, so it goes
// with the batch's jobs when the retention purge removes them.
func batchEvent(ctx context.Context, tx locrisk.Tx, job locrisk.Job, b locrisk.Batch) (wrote bool, err error) {
	endpoints, err := tx.WebhookSubscribers(ctx, b.AccountID, webhook.EventBatchCompleted)
	if err != nil || len(endpoints) == 0 {
		return false, err
	}
	ev, err := view.NewBatchEvent(ids.New(ids.Event), b)
	if err != nil {
		return false, err
	}
	return insert(ctx, tx, ev, b.AccountID, job.ID, *b.CompletedUTC, endpoints)
}

func insert(ctx context.Context, tx locrisk.Tx, ev webhook.Event, accountID, jobID string, created time.Time, endpoints []string) (bool, error) {
	body, err := webhook.MarshalEvent(ev)
	if err != nil {
		return false, err
	}
	if _, err := tx.InsertWebhookEvent(ctx, locrisk.WebhookEvent{
		ID: ev.ID, AccountID: accountID, Type: ev.Type, JobID: jobID, Body: body, CreatedUTC: created,
	}, endpoints); err != nil {
		return false, err
	}
	return true, nil
}
