package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLargeBodiesTakeTurns: a body over bigBody is parsed only with a
// turn, of which there are as many as Go's processors (inflight.go,
// bodyTurns), while ordinary requests need none. With every turn taken,
// large bodies wait (before, each was parsed at once, 128 side by side on
// two cores, and a bystander's GET waited for a processor, p99 1.1 s);
// meanwhile another account's GET and a job with a small body are served
// at once; each large body goes ahead when a turn is free. One whose wait
// outlasts its body's time limit is answered 503 server_busy.
func TestLargeBodiesTakeTurns(t *testing.T) {
	e := newEnv(t)
	if got := cap(e.srv.turns.ch); got != runtime.GOMAXPROCS(0) {
		t.Errorf("%d turns, want one per processor (%d)", got, runtime.GOMAXPROCS(0))
	}
	hostile := e.allScopesKey(e.account(1000, 1000))
	other := e.allScopesKey(e.account(1000, 1000))
	body := manyKeysBody()

	// Every turn is taken (as by large bodies being parsed).
	for range cap(e.srv.turns.ch) {
		e.srv.turns.ch <- struct{}{}
	}
	const n = 6
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Go(func() {
			r := httptest.NewRequest("POST", jobsPath, bytes.NewReader(body))
			r.Header.Set("Authorization", "Bearer "+hostile)
			rec := httptest.NewRecorder()
			e.checkedLater(e.h).ServeHTTP(rec, r)
			codes[i] = rec.Code
		})
	}
	waitFor(t, "every large body waiting for a turn", func() bool { return e.srv.turns.waiting.Load() == n })
	if rec := e.do("GET", jobsPath+"?limit=1", other, ""); rec.Code != http.StatusOK {
		t.Errorf("GET while large bodies wait: %d %s", rec.Code, rec.Body)
	}
	if rec := e.do("POST", jobsPath, other, `{"latitude": 40.7, "longitude": -74}`); rec.Code != http.StatusAccepted {
		t.Errorf("small POST while large bodies wait: %d %s", rec.Code, rec.Body)
	}
	if w := e.srv.turns.waiting.Load(); w != n {
		t.Errorf("%d large bodies waiting after the other requests, want %d", w, n)
	}
	// One turn frees: one large body goes ahead, and, done with it, hands
	// it on to the next, until all are through.
	<-e.srv.turns.ch
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusAccepted {
			t.Errorf("large body %d: %d, want 202", i, c)
		}
	}

	// A wait past the body's time limit is answered 503 server_busy
	// (just over bigBody: about a second of time).
	e.srv.turns.ch <- struct{}{} // every turn taken again
	e.srv.bodyTime = time.Millisecond
	small := `{"latitude": 40.7, "longitude": -74, "pad": "` + strings.Repeat("x", bigBody) + `"}`
	start := time.Now()
	rec := e.do("POST", jobsPath, hostile, small)
	wantError(t, rec, http.StatusServiceUnavailable, codeServerBusy)
	if rec.Header().Get("Retry-After") != "1" || time.Since(start) < time.Second {
		t.Errorf("turn wait ran out after %v with Retry-After %q, want the body's time (over 1 s) and 1", time.Since(start), rec.Header().Get("Retry-After"))
	}
	for range cap(e.srv.turns.ch) {
		<-e.srv.turns.ch
	}
}
