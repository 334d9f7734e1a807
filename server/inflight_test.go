package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestInFlightBound fills the slots by hand and checks the answers: a
// request beyond the bound gets 503 server_busy with Retry-After at once,
// and POSTs filling their half leave GETs served.
func TestInFlightBound(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 1000))
	e.srv.busy = newInFlight(4) // 2 slots for POSTs, 4 in all
	post := httptest.NewRequest("POST", jobsPath, nil)
	get := httptest.NewRequest("GET", jobsPath, nil)
	hold := func(r *http.Request) func() {
		t.Helper()
		release, ok := e.srv.busy.acquire(r)
		if !ok {
			t.Fatalf("no slot for %s", r.Method)
		}
		return release
	}
	body := `{"latitude": 40, "longitude": -74}`

	w1, w2 := hold(post), hold(post)
	if _, ok := e.srv.busy.acquire(post); ok {
		t.Fatal("a third POST got a slot of 2")
	}
	rec := e.do("POST", jobsPath, key, body)
	wantError(t, rec, http.StatusServiceUnavailable, "server_busy")
	if ra := rec.Header().Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After = %q, want 1", ra)
	}
	if rec := e.do("GET", jobsPath, key, ""); rec.Code != http.StatusOK {
		t.Errorf("GET beside full POST slots: %d %s", rec.Code, rec.Body)
	}

	r1, r2 := hold(get), hold(get)
	wantError(t, e.do("GET", jobsPath, key, ""), http.StatusServiceUnavailable, "server_busy")
	// Unknown paths are bounded too: the bound comes before routing.
	wantError(t, e.do("GET", "/nowhere", "", ""), http.StatusServiceUnavailable, "server_busy")

	for _, release := range []func(){w1, w2, r1, r2} {
		release()
	}
	if rec := e.do("POST", jobsPath, key, body); rec.Code != http.StatusAccepted {
		t.Errorf("POST after the slots were released: %d %s", rec.Code, rec.Body)
	}
}
