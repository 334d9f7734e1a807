package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/store"
)

// TestDatabaseBusy: while another process holds the database's write lock
// (a sqlite3 shell after BEGIN IMMEDIATE), a request that writes answers
// 503 database_busy with Retry-After after the server's busy wait, not a
// 500 after the store's; reads keep working (WAL), and writes work again
// once the lock is gone.
func TestDatabaseBusy(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(100, 600))
	const wait = 200 * time.Millisecond
	h := New(Config{Now: e.clock.Now}, e.st.WithBusyWait(wait), fakeLocator{}, func() {}).Handler()
	do := func(method, path, body string) (int, http.Header, map[string]any) {
		t.Helper()
		e.h = h
		rec := e.do(method, path, key, body)
		var m map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &m)
		return rec.Code, rec.Header(), m
	}

	ctx := context.Background()
	conn, err := e.db.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}

	const body = `{"latitude": 40.7128, "longitude": -74.006}`
	start := time.Now()
	code, hdr, m := do("POST", jobsPath, body)
	took := time.Since(start)
	if code != http.StatusServiceUnavailable {
		t.Fatalf("POST while locked: %d %v, want 503", code, m)
	}
	if ra := hdr.Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After = %q, want 1", ra)
	}
	if errObj, _ := m["error"].(map[string]any); errObj["code"] != codeDatabaseBusy {
		t.Errorf("body %v, want error code %s", m, codeDatabaseBusy)
	}
	if took < wait {
		t.Errorf("answered after %s, before the busy wait of %s", took, wait)
	}
	if code, _, m := do("GET", jobsPath, ""); code != http.StatusOK {
		t.Errorf("GET while locked: %d %v, want 200", code, m)
	}

	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if code, _, m := do("POST", jobsPath, body); code != http.StatusAccepted {
		t.Errorf("POST after the lock is gone: %d %v, want 202", code, m)
	}
}

// TestWriteQueueIsNotDatabaseBusy: many job creations at once on one
// server, queueing far longer than the busy wait behind each other, are
// all accepted (before, those that queued past the busy wait were answered
// 503 database_busy, "locked by another process", with no other process);
// while another process holds the lock, the creations queued behind the
// stuck one are still answered database_busy, promptly.
func TestWriteQueueIsNotDatabaseBusy(t *testing.T) {
	const body = `{"latitude": 40.7128, "longitude": -74.006}`
	post := func(e *env, h http.Handler, key string, n int) []*httptest.ResponseRecorder {
		t.Helper()
		e.h = h
		recs := make([]*httptest.ResponseRecorder, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { recs[i] = e.do("POST", jobsPath, key, body) })
		}
		wg.Wait()
		return recs
	}

	t.Run("own writes", func(t *testing.T) {
		e := newEnv(t)
		key := e.allScopesKey(e.account(1<<30, 1<<30))
		// A write of this process holds the store for three busy waits
		// while 120 creations queue behind it: a slow store. The holder
		// is inside its transaction, not asking SQLite for the lock, so
		// the queue is this server's own. (A busy wait of a few
		// milliseconds would let a scheduling stall of the holder's
		// BEGIN on a loaded machine pass for another process's lock.)
		const busyWait = 50 * time.Millisecond
		// No in-flight bound: one account sends all 120, beyond its share.
		h := New(Config{Now: e.clock.Now, MaxInFlight: -1}, e.st.WithBusyWait(busyWait), fakeLocator{}, func() {}).Handler()
		held, free, holderDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			holderDone <- e.st.WithTx(context.Background(), func(context.Context, *sqlx.Tx) error { close(held); <-free; return nil })
		}()
		<-held
		time.AfterFunc(3*busyWait, func() { close(free) })
		codes := map[int]int{}
		var other string
		recs := post(e, h, key, 120)
		if err := <-holderDone; err != nil {
			t.Fatalf("holding write: %v", err)
		}
		for _, rec := range recs {
			codes[rec.Code]++
			if rec.Code != http.StatusAccepted && other == "" {
				other = rec.Body.String()
			}
		}
		if codes[http.StatusAccepted] != 120 {
			t.Errorf("120 creations at once: statuses %v, want all 202; first other: %s", codes, other)
		}
	})

	t.Run("another process's lock", func(t *testing.T) {
		e := newEnv(t)
		key := e.allScopesKey(e.account(1<<30, 1<<30))
		h := New(Config{Now: e.clock.Now}, e.st.WithBusyWait(100*time.Millisecond), fakeLocator{}, func() {}).Handler()
		ctx := context.Background()
		conn, err := e.db.Connx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		recs := post(e, h, key, 20)
		took := time.Since(start)
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			var m struct {
				Error struct{ Code string } `json:"error"`
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &m)
			if rec.Code != http.StatusServiceUnavailable || m.Error.Code != codeDatabaseBusy || rec.Header().Get("Retry-After") != "1" {
				t.Errorf("creation under another process's lock: %d %s, want 503 %s with Retry-After 1", rec.Code, rec.Body, codeDatabaseBusy)
			}
		}
		// Far below the store's queue wait: the queue saw the holder held
		// up by the lock (loose bound for a loaded machine).
		if took > store.DefaultQueueWait/2 {
			t.Errorf("20 creations under the lock took %s", took)
		}
	})
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
