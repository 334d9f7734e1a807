package server

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"
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
	h := New(Config{Now: e.clock.Now, DBBusyWait: wait}, e.st, fakeLocator{}, func() {}).Handler()
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
