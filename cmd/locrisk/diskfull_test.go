package main

// The API as serve assembles it (newAPI) over a database that has no room
// to grow: SQLite refuses writes with SQLITE_FULL as on a full disk. The
// store is made full with its page limit (store.SetMaxPages), since a test
// cannot fill a disk; how the server answers the store's ErrStorageFull is
// also tested in internal/server with a stand-in store.

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/locrisk/locrisk/internal/server"
	"github.com/locrisk/locrisk/internal/view"
)

// TestStorageFull: on a full database, job creations are answered 503
// storage_full with Retry-After (before: 500 internal_error) and /readyz
// reports the database not ready (before: ready, since its probe writes
// nothing); reads go on. When room returns, /readyz finds it by itself,
// with no other write, and creations are accepted again; every creation
// that was answered 202 is there.
func TestStorageFull(t *testing.T) {
	ctx := context.Background()
	a := newAPIEnv(t, server.Config{Health: ready{}, MaxInFlight: -1})
	readyz := func() server.ReadyView {
		t.Helper()
		var v server.ReadyView
		rec := a.do("GET", server.ReadyzPath, "")
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("readyz: %d %s", rec.Code, rec.Body)
		}
		return v
	}
	if v := readyz(); v.Status != "ready" {
		t.Fatalf("readyz before: %+v", v)
	}
	if err := a.st.SetMaxPages(ctx, 1); err != nil { // no page beyond the file's
		t.Fatal(err)
	}

	var accepted []string
	refused := false
	for i := 0; i < 5000 && !refused; i++ {
		rec := a.do("POST", view.JobsPath, oneJob)
		switch rec.Code {
		case http.StatusAccepted:
			var j view.Job
			if err := json.Unmarshal(rec.Body.Bytes(), &j); err != nil {
				t.Fatal(err)
			}
			accepted = append(accepted, j.JobID)
		case http.StatusServiceUnavailable:
			refused = true
			if errorCode(rec) != "storage_full" || rec.Header().Get("Retry-After") != "30" {
				t.Fatalf("creation on a full database: %d %s (Retry-After %q), want 503 storage_full with Retry-After 30",
					rec.Code, rec.Body, rec.Header().Get("Retry-After"))
			}
		default:
			t.Fatalf("creation on a full database: %d %s", rec.Code, rec.Body)
		}
	}
	if !refused {
		t.Fatal("5000 creations at the page limit were all accepted")
	}
	v := readyz()
	if v.Status != "not_ready" || v.Checks.Database != "storage full" {
		t.Errorf("readyz on a full database: %+v, want not_ready, database storage full", v)
	}
	if rec := a.do("GET", view.JobsPath, ""); rec.Code != http.StatusOK {
		t.Errorf("GET on a full database: %d %s", rec.Code, rec.Body)
	}

	if err := a.st.SetMaxPages(ctx, 0); err != nil { // room returns
		t.Fatal(err)
	}
	if v := readyz(); v.Status != "ready" {
		t.Errorf("readyz once room returned, nothing else written: %+v, want ready", v)
	}
	if rec := a.do("POST", view.JobsPath, oneJob); rec.Code != http.StatusAccepted {
		t.Errorf("creation once room returned: %d %s", rec.Code, rec.Body)
	}
	for _, id := range accepted {
		if rec := a.do("GET", view.JobPath(id), ""); rec.Code != http.StatusOK {
			t.Errorf("job %s, answered 202 at the page limit: %d %s", id, rec.Code, rec.Body)
		}
	}
	t.Logf("%d creations accepted at the page limit before the first storage_full", len(accepted))
}
