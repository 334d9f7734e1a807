package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"locrisk/ids"
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

// TestConnBusyResponse reads the refusal of package connlimit as a client
// would: a 503 in the error shape, closing the connection.
func TestConnBusyResponse(t *testing.T) {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(newEnv(t).srv.ConnBusyResponse())), nil)
	if err != nil {
		t.Fatal(err)
	}
	var body errorBody
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || !resp.Close || resp.Header.Get("Retry-After") != "1" ||
		body.Error.Code != codeServerBusy || body.Error.RequestID != resp.Header.Get("X-Request-Id") || !ids.HasPrefix(body.Error.RequestID, ids.Request) {
		t.Errorf("refusal: %d close=%v %v %+v", resp.StatusCode, resp.Close, resp.Header, body)
	}
}
