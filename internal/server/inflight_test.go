package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/ids"
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

// slowPost opens a connection to addr and starts a POST of a job that
// declares a 1,000-byte body and sends one byte of it, as a client
// holding slots with slow bodies would. Its answer, when one comes, is
// sent on the returned channel.
func slowPost(t *testing.T, addr, key string) <-chan *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", jobsPath, key)
	answer := make(chan *http.Response, 1)
	go func() {
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			answer <- resp
		}
		close(answer)
	}()
	return answer
}

// errorCode reads the error code of an answer in the error shape.
func errorCode(resp *http.Response) string {
	var body errorBody
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	return body.Error.Code
}

// TestAccountShareOfInFlight has one account send as many slow bodies as
// there are write slots and checks another account's POST is still
// served: the first account holds only its share (a quarter of the write
// slots) and its other POSTs are answered at once with 429
// too_many_requests_in_flight, before their bodies are read. Before the
// share, the slow bodies held every write slot and the other account got
// 503 server_busy until they ended.
func TestAccountShareOfInFlight(t *testing.T) {
	e := newEnv(t)
	acct1, acct2 := e.account(1000, 1000), e.account(1000, 1000)
	key1, key2 := e.allScopesKey(acct1), e.allScopesKey(acct2)
	e.srv.busy = newInFlight(8) // 4 write slots, 1 per account
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	addr := ts.Listener.Addr().String()

	answers := make([]<-chan *http.Response, 4)
	for i := range answers {
		answers[i] = slowPost(t, addr, key1)
	}
	// Every answer that comes is a refusal; the held POST waits for the
	// rest of its body.
	refused, deadline := 0, time.After(10*time.Second)
	for refused < 3 {
		select {
		case <-deadline:
			t.Fatalf("%d of 4 slow POSTs answered within 10 s, want 3\n%s", refused, e.logs)
		case <-time.After(10 * time.Millisecond):
		}
		for i, answer := range answers {
			select {
			case resp := <-answer:
				answers[i] = nil // a nil channel is never ready
				if resp == nil {
					t.Fatalf("slow POST %d: connection closed without an answer", i)
				}
				if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
					t.Errorf("slow POST %d: %d Retry-After %q; want 429 with Retry-After 1", i, resp.StatusCode, resp.Header.Get("Retry-After"))
				}
				if code := errorCode(resp); code != codeTooManyInFlight {
					t.Errorf("slow POST %d: code %q, want %q", i, code, codeTooManyInFlight)
				}
				refused++
			default:
			}
		}
	}
	if held := e.srv.busy.held(acct1.ID); held != 1 {
		t.Fatalf("account holds %d write slots, want 1", held)
	}

	req, _ := http.NewRequest("POST", ts.URL+jobsPath, strings.NewReader(`{"latitude": 40, "longitude": -74}`))
	req.Header.Set("Authorization", "Bearer "+key2)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("other account's POST beside the slow bodies: %d, want 202", resp.StatusCode)
	}
}

// TestSlowBodyTimesOut sends a body slower than allowed and checks it is
// answered 400 invalid_request once its time is up, freeing its slots,
// rather than held until the server's ReadTimeout (none in this test, so
// before the bound it was held until the client gave up).
func TestSlowBodyTimesOut(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 1000)
	key := e.allScopesKey(acct)
	e.srv.bodyTime = 200 * time.Millisecond
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)

	select {
	case resp := <-slowPost(t, ts.Listener.Addr().String(), key):
		if resp == nil {
			t.Fatal("connection closed without an answer")
		}
		if code := errorCode(resp); resp.StatusCode != http.StatusBadRequest || code != codeInvalidRequest {
			t.Errorf("slow body: %d %q, want 400 %s", resp.StatusCode, code, codeInvalidRequest)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("slow body still held after 10 s")
	}
	for try := 0; e.srv.busy.held(acct.ID) != 0; try++ {
		if try == 100 {
			t.Fatal("the slow body's slot was not given back")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
