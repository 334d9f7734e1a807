// Package storetest is the behaviour every store of the locrisk domain must
// have: the contract of the service interfaces (service.go at the root),
// checked through those interfaces alone, so that it runs unchanged against
// the SQLite store and any store after it (docs/architecture.md, Stores).
//
// A store's own tests call Run with a Harness that opens a fresh, empty
// store. Run checks the operations one concern at a time and then the four
// concurrency invariants (invariants.go): a quota is never overshot, one
// idempotency key makes one job, a job is claimed by one worker at a time
// and completed once, and accounts take turns. RunInvariants runs those
// alone; this package's own tests run them against deliberately broken
// stores to show that each one fails.
//
// A few helpers that bring a store to a state through its interfaces
// (ClaimJob, EndJob, QueueJob, BatchItems, DeliveryByID) are exported for
// the stores' own tests.
//
// What only one backend has (SQLite's query plans, migrations of old
// files, busy waits, group commit) is tested beside that store, not here.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

// Harness opens stores for the suite.
type Harness struct {
	// Open returns a new, empty store for one test and closes it when the
	// test ends (t.Cleanup).
	Open func(t testing.TB, cfg Config) locrisk.Store
}

// Config is what a test asks of the store it opens.
type Config struct {
	// Now is the clock of the operations that take no time argument
	// (creating accounts and keys, revoking, disabling); never nil.
	Now func() time.Time
	// OnJobFinal hooks run, in order, inside every job's final transition
	// (locrisk.JobFinalHook).
	OnJobFinal []locrisk.JobFinalHook
}

// t0 is the suite's clock: a Sunday in the middle of a month, so that a
// quota period and the days of the usage history have room on both sides.
var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// open opens a store whose clock stands at t0.
func (h Harness) open(t testing.TB) locrisk.Store {
	t.Helper()
	return h.Open(t, Config{Now: func() time.Time { return t0 }})
}

// A test is one check of the suite.
type test struct {
	name string
	fn   func(t testing.TB, h Harness)
}

// Run runs the whole suite against the stores h opens, each check in a
// subtest of its own.
func Run(t *testing.T, h Harness) {
	groups := []struct {
		name  string
		tests []test
	}{
		{"Accounts", accountTests},
		{"Keys", keyTests},
		{"Jobs", jobTests},
		{"JobQueue", queueTests},
		{"Batches", batchTests},
		{"Watchlists", watchlistTests},
		{"Webhooks", webhookTests},
		{"Usage", usageTests},
		{"Retention", retentionTests},
		{"ReferenceCache", referenceTests},
		{"SigningKeys", signingKeyTests},
		{"Validation", validationTests},
		{"Invariants", invariants},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tt := range g.tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					tt.fn(t, h)
				})
			}
		})
	}
}

// RunInvariants runs the four concurrency invariants alone.
func RunInvariants(t *testing.T, h Harness) {
	for _, tt := range invariants {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, h) })
	}
}

// newAccount makes an account with the given monthly quota and a rate
// limit that never matters here.
func newAccount(t testing.TB, s locrisk.Store, quota int) locrisk.Account {
	t.Helper()
	a, err := s.CreateAccount(context.Background(), "Test account", quota, 600)
	if err != nil {
		t.Fatalf("create account: %v", err)
	}
	return a
}

// apiJob is a job of the API bucket at a fixed point.
func apiJob(accountID string) locrisk.NewJob {
	return locrisk.NewJob{AccountID: accountID, Bucket: locrisk.BucketAPI, Latitude: 37.77, Longitude: -122.42}
}

// listJobs returns every job of the account, newest first, paging through
// ListJobs.
func listJobs(t testing.TB, s locrisk.Store, accountID, status string) []locrisk.Job {
	t.Helper()
	var all []locrisk.Job
	cursor := ""
	for {
		page, next, err := s.ListJobs(context.Background(), accountID, status, 1000, cursor)
		if err != nil {
			t.Fatalf("list jobs: %v", err)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		cursor = next
	}
}

// makeJob creates a job of the account and brings it to status with owner
// "w" (a long lease): queued, processing, completed (with a report) or
// failed (transient or not).
func makeJob(t testing.TB, s locrisk.Store, accountID, status string, transient bool) locrisk.Job {
	t.Helper()
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, apiJob(accountID), t0)
	if err != nil {
		t.Fatal(err)
	}
	if status == locrisk.StatusQueued {
		return j
	}
	c, ok, err := s.ClaimJob(ctx, "w", 100*time.Hour, t0)
	if err != nil || !ok || c.ID != j.ID {
		t.Fatalf("claim %s: got %q %v %v", j.ID, c.ID, ok, err)
	}
	switch status {
	case locrisk.StatusProcessing:
		return c
	case locrisk.StatusCompleted:
		c, err = s.CompleteJob(ctx, j.ID, "w", locrisk.Report{DataVersion: "v", Body: []byte(`{}`)}, t0)
	case locrisk.StatusFailed:
		c, err = s.FailJob(ctx, j.ID, "w", "generation_failed", "failed", transient, t0)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}
