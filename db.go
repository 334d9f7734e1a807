package main

// How the commands open the database: the store applies its own migrations;
// every process that can finish a job registers the webhook outbox.

import (
	"locrisk/outbox"
	"locrisk/store"
)

// openStore is openStoreNotify without a wake-up: a running server's
// delivery worker finds the events at its next poll.
func (c *cli) openStore(path string) (*store.Store, error) { return c.openStoreNotify(path, nil) }

// openStoreNotify opens the database with the webhook outbox registered, so
// that every process that can finish a job (serve, and report with its own
// worker) records the job's webhook events. wake rouses this process's
// delivery worker; without one (nil), a running server's worker finds the
// events at its next poll.
func (c *cli) openStoreNotify(path string, wake func()) (*store.Store, error) {
	if path == "" {
		return nil, usagef("--db is empty")
	}
	return store.OpenWith(c.ctx, path, store.Options{OnJobFinal: []store.JobFinalHook{outbox.Hook(wake)}})
}
