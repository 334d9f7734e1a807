package main

// How the commands open the database: the store applies its own migrations;
// every process that can finish a job registers the webhook outbox.

import (
	"errors"
	"fmt"

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
	return c.openStoreWith(path, store.Options{OnJobFinal: []store.JobFinalHook{outbox.Hook(wake)}})
}

// openStoreWith opens the database with opt. A damaged file is refused
// with a message that names it and says what to do.
func (c *cli) openStoreWith(path string, opt store.Options) (*store.Store, error) {
	if path == "" {
		return nil, usagef("--db is empty")
	}
	st, err := store.OpenWith(c.ctx, path, opt)
	if errors.Is(err, store.ErrCorrupt) {
		return nil, fmt.Errorf("refusing to use the damaged database file %s: %w; "+
			"stop every process using it, keep a copy, and restore the file from a backup "+
			"(sqlite3's .recover command may salvage rows into a new file); "+
			"README.md, Limits and defaults", path, err)
	}
	return st, err
}

// openServeStore is openStoreNotify for serve: it also checks the file's
// integrity (PRAGMA quick_check) before serving from it, which reads the
// whole file and so is left out of the short commands.
func (c *cli) openServeStore(path string, wake func()) (*store.Store, error) {
	return c.openStoreWith(path, store.Options{
		OnJobFinal:     []store.JobFinalHook{outbox.Hook(wake)},
		IntegrityCheck: true,
	})
}
