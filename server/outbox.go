package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jmoiron/sqlx"

	"locrisk/ids"
	"locrisk/store"
	"locrisk/view"
	"locrisk/webhook"
)

// WebhookOutbox returns the store.JobFinalHook that records webhook events
// (register it in store.Options.OnJobFinal). Inside the transaction that
// moves a job to completed or failed, it writes one event, whose data.job is
// the job exactly as GET /location-risk/report-jobs/{jobId} now shows it,
// and one pending delivery per active endpoint of the job's account
// subscribed to the event type. Event and deliveries commit with the job's
// final state or not at all, so an event cannot be lost between the two.
// When no endpoint subscribes, nothing is written.
//
// wake (may be nil) is called after the rows are written, still inside the
// transaction, to rouse the delivery worker. That is early but safe: the
// worker's claim waits for the store's write slot, which the transaction
// holds until it has committed (see store.ClaimWebhookDelivery).
func WebhookOutbox(wake func()) store.JobFinalHook {
	return func(ctx context.Context, tx *sqlx.Tx, job store.Job) error {
		var typ string
		switch job.Status {
		case store.StatusCompleted:
			typ = webhook.EventJobCompleted
		case store.StatusFailed:
			typ = webhook.EventJobFailed
		default:
			return nil
		}
		if job.CompletedUTC == nil {
			return fmt.Errorf("webhook outbox: final job %s has no completion time", job.ID)
		}
		endpoints, err := store.WebhookSubscribers(ctx, tx, job.AccountID, typ)
		if err != nil {
			return fmt.Errorf("webhook outbox: %w", err)
		}
		if len(endpoints) == 0 {
			return nil
		}
		data, err := json.Marshal(view.NewJob(job))
		if err != nil {
			return fmt.Errorf("webhook outbox: encode job %s: %w", job.ID, err)
		}
		// The event is as old as the transition it reports, so its
		// createdUtc equals the job's completedUtc.
		ev := webhook.NewEvent(ids.New(ids.Event), typ, *job.CompletedUTC, data)
		body, err := webhook.MarshalEvent(ev)
		if err != nil {
			return fmt.Errorf("webhook outbox: %w", err)
		}
		if _, err := store.InsertWebhookEvent(ctx, tx, store.WebhookEvent{
			ID: ev.ID, AccountID: job.AccountID, Type: typ, JobID: job.ID, Body: body, CreatedUTC: *job.CompletedUTC,
		}, endpoints); err != nil {
			return fmt.Errorf("webhook outbox: %w", err)
		}
		if wake != nil {
			wake()
		}
		return nil
	}
}
