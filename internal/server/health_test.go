package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/store"
	"github.com/locrisk/locrisk/internal/version"
)

// fakeHealth is a settable Health.
type fakeHealth struct {
	mu            sync.Mutex
	data, workers error
}

func (h *fakeHealth) DataReady() error    { h.mu.Lock(); defer h.mu.Unlock(); return h.data }
func (h *fakeHealth) WorkersReady() error { h.mu.Lock(); defer h.mu.Unlock(); return h.workers }
func (h *fakeHealth) set(data, workers error) {
	h.mu.Lock()
	h.data, h.workers = data, workers
	h.mu.Unlock()
}

// healthEnv is newEnv with a Health the test controls.
func healthEnv(t *testing.T) (*env, *fakeHealth) {
	e := newEnv(t)
	h := &fakeHealth{}
	e.srv.health = h
	return e, h
}

func TestHealthz(t *testing.T) {
	e, _ := healthEnv(t)
	for _, method := range []string{"GET", "HEAD"} {
		rec := e.do(method, "/healthz", "", "")
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s /healthz: %d %v", method, rec.Code, rec.Header())
		}
		if method == "GET" && rec.Body.String() != `{"status":"ok"}`+"\n" {
			t.Errorf("GET /healthz body %q", rec.Body)
		}
	}
	wantError(t, e.do("POST", "/healthz", "", ""), http.StatusMethodNotAllowed, "method_not_allowed")

	// Answered with every slot taken: a busy server is not a dead one.
	e.srv.busy = newInFlight(2)
	for range 2 {
		release, ok := e.srv.busy.acquire(httptest.NewRequest("GET", "/", nil))
		if !ok {
			t.Fatal("no slot")
		}
		defer release()
	}
	if rec := e.do("GET", "/healthz", "", ""); rec.Code != http.StatusOK {
		t.Errorf("/healthz with every slot taken: %d %s", rec.Code, rec.Body)
	}
	wantError(t, e.do("GET", "/readyz", "", ""), http.StatusServiceUnavailable, "server_busy")
}

func TestReadyz(t *testing.T) {
	errShutdown := errors.New("shutting down")
	tests := []struct {
		name          string
		data, workers error
		noHealth      bool
		want          ReadyChecks
	}{
		{"ready", nil, nil, false, ReadyChecks{"ok", "ok", "ok"}},
		{"data not loaded", errors.New("engine not loaded"), nil, false, ReadyChecks{"ok", "engine not loaded", "ok"}},
		{"shutting down", nil, errShutdown, false, ReadyChecks{"ok", "ok", "shutting down"}},
		{"workers stopped", nil, errors.New("job scheduler stopped"), false, ReadyChecks{"ok", "ok", "job scheduler stopped"}},
		{"no health given", nil, nil, true, ReadyChecks{"ok", "not reported", "not reported"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, h := healthEnv(t)
			h.set(tt.data, tt.workers)
			if tt.noHealth {
				e.srv.health = nil
			}
			rec := e.do("GET", "/readyz", "", "")
			v := decode[ReadyView](t, rec)
			ready := tt.want == ReadyChecks{"ok", "ok", "ok"}
			wantStatus, wantState := http.StatusServiceUnavailable, "not_ready"
			if ready {
				wantStatus, wantState = http.StatusOK, "ready"
			}
			if rec.Code != wantStatus || v.Status != wantState || v.Checks != tt.want || v.Version != version.String() {
				t.Errorf("readyz: %d %+v; want %d %s %+v", rec.Code, v, wantStatus, wantState, tt.want)
			}
			if ra := rec.Header().Get("Retry-After"); (ra == "5") == ready {
				t.Errorf("Retry-After = %q with status %d", ra, rec.Code)
			}
		})
	}
}

// TestReadyzDatabaseLocked: another process holding the write lock makes
// the server not ready within about readyDBWait, instead of hanging, and
// ready again once the lock is gone.
func TestReadyzDatabaseLocked(t *testing.T) {
	e, _ := healthEnv(t)
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
	rec := e.do("GET", "/readyz", "", "")
	took := time.Since(start)
	v := decode[ReadyView](t, rec)
	if rec.Code != http.StatusServiceUnavailable || v.Status != "not_ready" || v.Checks.Database != "locked by another process" || v.Checks.Data != "ok" {
		t.Errorf("readyz under a foreign lock: %d %+v", rec.Code, v)
	}
	// Bounded by readyDBWait, not by the store's 5 s busy wait (generous
	// for a loaded machine).
	if took >= store.DefaultBusyWait {
		t.Errorf("readyz took %s under a foreign lock", took)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if rec := e.do("GET", "/readyz", "", ""); rec.Code != http.StatusOK {
		t.Errorf("readyz after the lock is gone: %d %s", rec.Code, rec.Body)
	}
}

// TestServerHeader: every response names the version, errors and
// unrouted paths included, and so does the connection refusal.
func TestServerHeader(t *testing.T) {
	e, _ := healthEnv(t)
	key := e.allScopesKey(e.account(100, 1000))
	want := "locrisk/" + version.String()
	tests := []struct {
		name, method, path, key string
		status                  int
	}{
		{"operation", "GET", jobsPath, key, 200},
		{"no key", "GET", jobsPath, "", 401},
		{"unknown path", "GET", "/nowhere", "", 404},
		{"wrong method", "PUT", jobsPath, key, 405},
		{"healthz", "GET", "/healthz", "", 200},
		{"readyz", "GET", "/readyz", "", 200},
	}
	for _, tt := range tests {
		rec := e.do(tt.method, tt.path, tt.key, "")
		if rec.Code != tt.status || rec.Header().Get("Server") != want {
			t.Errorf("%s: %d Server %q; want %d %q", tt.name, rec.Code, rec.Header().Get("Server"), tt.status, want)
		}
	}
	e.srv.busy = newInFlight(2)
	release, _ := e.srv.busy.acquire(httptest.NewRequest("GET", "/", nil))
	release2, _ := e.srv.busy.acquire(httptest.NewRequest("GET", "/", nil))
	if rec := e.do("GET", jobsPath, key, ""); rec.Code != 503 || rec.Header().Get("Server") != want {
		t.Errorf("server_busy: %d Server %q", rec.Code, rec.Header().Get("Server"))
	}
	release()
	release2()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(e.srv.ConnBusyResponse())), nil)
	if err != nil || resp.Header.Get("Server") != want {
		t.Errorf("connection refusal: Server %q (%v)", resp.Header.Get("Server"), err)
	}
}
