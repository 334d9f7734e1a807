package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

// How the server answers a store that cannot take a write in time. The
// store's side, SQLite's locks between processes and the busy waits the
// service is assembled with, is tested with the assembly (cmd/locrisk,
// dbbusy_test.go); here a store stands in whose writes fail as the real
// one's do.

// failingWrites is the store with its writes failing with err, as the
// SQLite store's fail with locrisk.ErrBusy when another process holds the
// database's write lock past the busy wait, and with
// locrisk.ErrWriteQueue when this process's own writes queue past the
// queue wait (docs/operations.md, Limits and defaults). Reads are the
// store's.
type failingWrites struct {
	Store
	err error
}

func (f failingWrites) CreateJob(context.Context, locrisk.NewJob, time.Time) (locrisk.Job, bool, error) {
	return locrisk.Job{}, false, fmt.Errorf("create job: %w", f.err)
}

func (f failingWrites) CreateBatch(context.Context, locrisk.NewBatch, time.Time) (locrisk.Batch, bool, error) {
	return locrisk.Batch{}, false, fmt.Errorf("create batch: %w", f.err)
}

func (f failingWrites) RetryJob(context.Context, string, string, time.Time) (locrisk.Job, error) {
	return locrisk.Job{}, fmt.Errorf("retry job: %w", f.err)
}

func (f failingWrites) ProbeWrite(context.Context) error { return fmt.Errorf("probe: %w", f.err) }

// TestStoreBusyAnswers: a write the store could not take is answered 503
// with Retry-After, database_busy when another process holds the lock,
// server_busy when this server's own writes queue too long and
// storage_full when the store has no room (before, 500 internal_error),
// never 500; nothing is queued for the workers, and reads keep working
// (docs/api.md, database_busy, server_busy and storage_full).
func TestStoreBusyAnswers(t *testing.T) {
	for _, tt := range []struct {
		err        error
		code       string
		retryAfter string
	}{
		{locrisk.ErrBusy, codeDatabaseBusy, "1"},
		{locrisk.ErrWriteQueue, codeServerBusy, "1"},
		{locrisk.ErrStorageFull, codeStorageFull, "30"},
	} {
		t.Run(tt.code, func(t *testing.T) {
			e := newEnv(t)
			acct := e.account(100, 600)
			key := e.allScopesKey(acct)
			failed := e.createJob(key, 40.7, -74)
			e.fail(failed.JobID, true)
			e.h = New(Config{Now: e.clock.Now}, failingWrites{Store: e.st, err: tt.err}, fakeLocator{}, func() { e.notified.Add(1) }).Handler()
			notified := e.notified.Load()
			for _, w := range []struct{ path, body string }{
				{jobsPath, `{"latitude": 40.7128, "longitude": -74.006}`},
				{batchesPath, batchBody(t, nil, validItems(2)...)},
				{jobsPath + "/" + failed.JobID + "/retry", ""},
			} {
				rec := e.do("POST", w.path, key, w.body)
				wantError(t, rec, http.StatusServiceUnavailable, tt.code)
				if ra := rec.Header().Get("Retry-After"); ra != tt.retryAfter {
					t.Errorf("POST %s: Retry-After = %q, want %s", w.path, ra, tt.retryAfter)
				}
			}
			if e.notified.Load() != notified {
				t.Error("the workers were notified of writes that failed")
			}
			if rec := e.do("GET", jobsPath, key, ""); rec.Code != http.StatusOK {
				t.Errorf("GET while writes fail: %d %s", rec.Code, rec.Body)
			}
		})
	}
}

// TestWriteQueueFullIsServerBusy: a write that queued past the store's
// queue wait behind this server's own writes is answered 503 server_busy
// with Retry-After and a message about writes, not database_busy; so is a
// write begun once the store is closing, with a message saying so.
func TestWriteQueueFullIsServerBusy(t *testing.T) {
	for _, tt := range []struct {
		err     error
		message string
	}{
		{locrisk.ErrWriteQueue, "busy with writes"},
		{locrisk.ErrClosed, "shutting down"},
	} {
		err := storeError(fmt.Errorf("create job: %w", tt.err), codeReportJobNotFound, time.Now())
		var ae *Error
		if !errors.As(err, &ae) || ae.Code != codeServerBusy || ae.RetryAfter <= 0 || !strings.Contains(ae.Message, tt.message) {
			t.Fatalf("storeError(%v) = %#v, want server_busy with Retry-After and %q", tt.err, err, tt.message)
		}
		if codeStatus[ae.Code] != http.StatusServiceUnavailable {
			t.Errorf("status %d", codeStatus[ae.Code])
		}
	}
}
