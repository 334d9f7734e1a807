// Package outbox records the webhook events of report jobs: a
// store.JobFinalHook that, inside the transaction that moves a job to
// completed or failed, writes the event announcing it and one pending
// delivery per subscribed endpoint. Package delivery sends them.
//
// It sits beside the store rather than in the HTTP server: it needs the
// store's transaction (through the store.Tx interface, not the SQL driver)
// and the job as the API shows it (package view), nothing of HTTP.
package outbox

import (
	"context"
	"fmt"

	"locrisk/ids"
	"locrisk/store"
	"locrisk/view"
	"locrisk/webhook"
)

// Hook returns the store.JobFinalHook that records webhook events (register
// it in store.Options.OnJobFinal). Inside the transaction that moves a job
// to completed or failed, it writes one event, whose data.job is the job
// exactly as GET /location-risk/report-jobs/{jobId} now shows it
// (view.NewJobEvent), and one pending delivery per active endpoint of the
// job's account subscribed to the event type. Event and deliveries commit
// with the job's final state or not at all, so an event cannot be lost
// between the two. When no endpoint subscribes, nothing is written.
//
// wake (may be nil) is called after the rows are written, still inside the
// transaction, to rouse the delivery worker. That is early but safe: the
// worker's claim waits for the store's write slot, which the transaction
// holds until it has committed (see store.ClaimWebhookDelivery).
func Hook(wake func()) store.JobFinalHook {
	return func(ctx context.Context, tx store.Tx, job store.Job) error {
		typ := view.JobEventType(job)
		if typ == "" {
			return nil
		}
		if job.CompletedUTC == nil {
			return fmt.Errorf("webhook outbox: final job %s has no completion time", job.ID)
		}
		endpoints, err := tx.WebhookSubscribers(ctx, job.AccountID, typ)
		if err != nil {
			return fmt.Errorf("webhook outbox: %w", err)
		}
		if len(endpoints) == 0 {
			return nil
		}
		ev, err := view.NewJobEvent(ids.New(ids.Event), job)
		if err != nil {
			return fmt.Errorf("webhook outbox: %w", err)
		}
		body, err := webhook.MarshalEvent(ev)
		if err != nil {
			return fmt.Errorf("webhook outbox: %w", err)
		}
		if _, err := tx.InsertWebhookEvent(ctx, store.WebhookEvent{
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
