package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
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

// probeFunc is a WriteProber.
type probeFunc func(ctx context.Context) error

func (f probeFunc) ProbeWrite(ctx context.Context) error { return f(ctx) }

// TestReadyzDatabaseProbe: /readyz asks the probe (Config.Probe) within
// ReadyDBWait, and a probe that cannot write, another process holding the
// lock (locrisk.ErrBusy), no room (locrisk.ErrStorageFull) or no answer in
// time, makes the server not ready
// with the reason, and ready again once the probe writes. That the
// assembly's probe gives up on a foreign SQLite lock within ReadyDBWait
// is tested with the assembly (cmd/locrisk, dbbusy_test.go).
func TestReadyzDatabaseProbe(t *testing.T) {
	var probeErr error
	var deadlines []time.Duration
	probe := probeFunc(func(ctx context.Context) error {
		dl, ok := ctx.Deadline()
		if !ok {
			deadlines = append(deadlines, -1)
			return probeErr
		}
		deadlines = append(deadlines, time.Until(dl))
		if errors.Is(probeErr, context.DeadlineExceeded) {
			<-ctx.Done()
			return ctx.Err()
		}
		return probeErr
	})
	e := newEnvWith(t, Config{Probe: probe})
	e.srv.health = &fakeHealth{}
	for _, tt := range []struct {
		err    error
		reason string
	}{
		{nil, "ok"},
		{fmt.Errorf("probe: %w", locrisk.ErrBusy), "locked by another process"},
		{fmt.Errorf("probe: %w", locrisk.ErrStorageFull), "storage full"},
		{context.DeadlineExceeded, "no write within " + ReadyDBWait.String()},
		{errors.New("disk I/O error"), "write failed"},
		{nil, "ok"},
	} {
		probeErr = tt.err
		rec := e.do("GET", "/readyz", "", "")
		v := decode[ReadyView](t, rec)
		wantCode, wantStatus := http.StatusOK, "ready"
		if tt.reason != "ok" {
			wantCode, wantStatus = http.StatusServiceUnavailable, "not_ready"
		}
		if rec.Code != wantCode || v.Status != wantStatus || v.Checks.Database != tt.reason || v.Checks.Data != "ok" {
			t.Errorf("readyz with the probe answering %v: %d %+v, want %d %s and database %q", tt.err, rec.Code, v, wantCode, wantStatus, tt.reason)
		}
		if d := deadlines[len(deadlines)-1]; d <= 0 || d > ReadyDBWait {
			t.Errorf("probe asked with %v left, want at most ReadyDBWait (%v)", d, ReadyDBWait)
		}
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
