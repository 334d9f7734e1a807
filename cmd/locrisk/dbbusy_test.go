package main

// The API as serve assembles it (newAPI) on a database another process
// locks, or this process's own writes hold up: the busy waits the service
// is assembled with, over SQLite's locks. How the server answers a store's
// ErrBusy and ErrWriteQueue is tested in internal/server with a stand-in
// store; here the store is the real one on a file.

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/server"
	"github.com/locrisk/locrisk/internal/sqlite"
	"github.com/locrisk/locrisk/internal/view"
)

// anywhere is a server.Locator that covers every coordinate: these tests
// are about the database, not coverage.
type anywhere struct{}

func (anywhere) Locate(lat, lon float64) (risk.Location, error) {
	return risk.Location{Latitude: lat, Longitude: lon, StateCode: "XX"}, nil
}

func (anywhere) Outlines(string) (state, county [][]geo.Point) { return nil, nil }

// ready is a server.Health with the data and the workers there.
type ready struct{}

func (ready) DataReady() error    { return nil }
func (ready) WorkersReady() error { return nil }

// apiEnv is the API as serve assembles it over a store on a fresh file,
// opened as the commands open it (with the webhook outbox), with one
// account whose quota and rate limit are out of reach.
type apiEnv struct {
	t    testing.TB
	path string
	st   *sqlite.Store
	api  *server.Server
	key  string
}

func newAPIEnv(t testing.TB, cfg server.Config) *apiEnv {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "api.db")
	st, err := sqliteBackend{path: path}.openWith(ctx, nil, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	acct, err := st.CreateAccount(ctx, "busy", 1<<30, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := st.CreateKey(ctx, locrisk.NewKey{AccountID: acct.ID, Scopes: locrisk.AllScopes()})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	api := newSQLiteAPI(cfg, st, anywhere{}, nil)
	t.Cleanup(func() { api.Close(context.Background()) })
	return &apiEnv{t: t, path: path, st: st, api: api, key: key}
}

// newSQLiteAPI is newAPI on the SQLite store st, as serve assembles it on
// a file, for the tests that need SQLite's locks under the API.
func newSQLiteAPI(cfg server.Config, st *sqlite.Store, loc server.Locator, notify func()) *server.Server {
	return newAPI(cfg, newSQLiteServe("", st, nil), loc, notify)
}

// do serves one request with the account's key.
func (a *apiEnv) do(method, path, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+a.key)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	a.api.Handler().ServeHTTP(rec, r)
	return rec
}

// foreignLock holds the database's write lock from a connection of its
// own, as another process does (a sqlite3 shell after BEGIN IMMEDIATE),
// until release.
func (a *apiEnv) foreignLock() (release func()) {
	a.t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+a.path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		a.t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		a.t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		a.t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
				a.t.Error(err)
			}
			conn.Close()
			db.Close()
		})
	}
	a.t.Cleanup(release)
	return release
}

const oneJob = `{"latitude": 40.7128, "longitude": -74.006}`

// errorCode is the error.code of an error answer.
func errorCode(rec *httptest.ResponseRecorder) string {
	var m struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &m)
	return m.Error.Code
}

// TestDatabaseBusy: while another process holds the database's write lock,
// a request that writes answers 503 database_busy with Retry-After after
// the API's busy wait (server.DefaultDBBusyWait), not a 500 after the
// store's (store.DefaultBusyWait); reads keep working (WAL), and writes
// work again once the lock is gone (docs/api.md, database_busy).
func TestDatabaseBusy(t *testing.T) {
	a := newAPIEnv(t, server.Config{})
	release := a.foreignLock()

	start := time.Now()
	rec := a.do("POST", view.JobsPath, oneJob)
	took := time.Since(start)
	if rec.Code != http.StatusServiceUnavailable || errorCode(rec) != "database_busy" {
		t.Fatalf("POST while locked: %d %s, want 503 database_busy", rec.Code, rec.Body)
	}
	if ra := rec.Header().Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After = %q, want 1", ra)
	}
	if took < server.DefaultDBBusyWait || took >= sqlite.DefaultBusyWait {
		t.Errorf("answered after %s, want the API's busy wait of %s, not the store's %s", took, server.DefaultDBBusyWait, sqlite.DefaultBusyWait)
	}
	if rec := a.do("GET", view.JobsPath, ""); rec.Code != http.StatusOK {
		t.Errorf("GET while locked: %d %s, want 200", rec.Code, rec.Body)
	}

	release()
	if rec := a.do("POST", view.JobsPath, oneJob); rec.Code != http.StatusAccepted {
		t.Errorf("POST after the lock is gone: %d %s, want 202", rec.Code, rec.Body)
	}
}

// TestWriteQueueIsNotDatabaseBusy: many job creations at once, queueing
// far longer than the API's busy wait behind this process's own writes,
// are all accepted (before, those that queued past the busy wait were
// answered 503 database_busy, "locked by another process", with no other
// process); while another process holds the lock, the creations queued
// behind the stuck one are still answered database_busy, promptly.
func TestWriteQueueIsNotDatabaseBusy(t *testing.T) {
	post := func(a *apiEnv, n int) []*httptest.ResponseRecorder {
		recs := make([]*httptest.ResponseRecorder, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { recs[i] = a.do("POST", view.JobsPath, oneJob) })
		}
		wg.Wait()
		return recs
	}

	t.Run("own writes", func(t *testing.T) {
		// No in-flight bound: one account sends all 120, beyond its share.
		a := newAPIEnv(t, server.Config{MaxInFlight: -1})
		// A write of this process holds the store for three of the API's
		// busy waits while 120 creations queue behind it: a slow store.
		// The holder is inside its transaction, not asking SQLite for the
		// lock, so the queue is this server's own.
		held, free, holderDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			holderDone <- a.st.WithTx(context.Background(), func(context.Context, *sqlx.Tx) error { close(held); <-free; return nil })
		}()
		<-held
		time.AfterFunc(3*server.DefaultDBBusyWait, func() { close(free) })
		recs := post(a, 120)
		if err := <-holderDone; err != nil {
			t.Fatalf("holding write: %v", err)
		}
		codes := map[int]int{}
		var other string
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
		a := newAPIEnv(t, server.Config{})
		release := a.foreignLock()
		start := time.Now()
		recs := post(a, 20)
		took := time.Since(start)
		release()
		for _, rec := range recs {
			if rec.Code != http.StatusServiceUnavailable || errorCode(rec) != "database_busy" || rec.Header().Get("Retry-After") != "1" {
				t.Errorf("creation under another process's lock: %d %s, want 503 database_busy with Retry-After 1", rec.Code, rec.Body)
			}
		}
		// Far below the store's queue wait: the queue saw the holder held
		// up by the lock (loose bound for a loaded machine).
		if took > sqlite.DefaultQueueWait/2 {
			t.Errorf("20 creations under the lock took %s", took)
		}
	})
}

// TestReadyzDatabaseLocked: another process holding the write lock makes
// the server not ready within about server.ReadyDBWait, instead of
// hanging, and ready again once the lock is gone (docs/api.md, Health and
// version).
func TestReadyzDatabaseLocked(t *testing.T) {
	a := newAPIEnv(t, server.Config{Health: ready{}})
	if rec := a.do("GET", server.ReadyzPath, ""); rec.Code != http.StatusOK {
		t.Fatalf("readyz before the lock: %d %s", rec.Code, rec.Body)
	}
	release := a.foreignLock()
	start := time.Now()
	rec := a.do("GET", server.ReadyzPath, "")
	took := time.Since(start)
	var v server.ReadyView
	_ = json.Unmarshal(rec.Body.Bytes(), &v)
	if rec.Code != http.StatusServiceUnavailable || v.Status != "not_ready" || v.Checks.Database != "locked by another process" || v.Checks.Data != "ok" {
		t.Errorf("readyz under a foreign lock: %d %+v", rec.Code, v)
	}
	// Bounded by ReadyDBWait, not by the store's busy wait (generous for
	// a loaded machine).
	if took >= sqlite.DefaultBusyWait {
		t.Errorf("readyz took %s under a foreign lock", took)
	}
	release()
	if rec := a.do("GET", server.ReadyzPath, ""); rec.Code != http.StatusOK {
		t.Errorf("readyz after the lock is gone: %d %s", rec.Code, rec.Body)
	}
}
