package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locrisk/locrisk/internal/ids"
)

// DefaultMaxInFlight is the number of requests served at once when
// Config.MaxInFlight is 0 (docs/operations.md, Limits and defaults).
const DefaultMaxInFlight = 256

// busyRetryAfter is the Retry-After of a server_busy answer: requests in
// flight last milliseconds, so a second is plenty.
const busyRetryAfter = time.Second

// inFlight bounds the requests being served at once. A request beyond the
// bound is answered at once with 503 server_busy rather than queued, so a
// flood costs each extra request a few hundred bytes, not a goroutine
// holding a 1 MiB body.
//
// Requests that may carry a body (any method but GET, HEAD and OPTIONS)
// are the expensive ones: they may hold at most half of the slots, so
// reads always find the other half free however many writes arrive. Two
// counting semaphores, taken without waiting, are all it needs.
//
// Once a request with a body is authenticated, its account may hold at
// most a quarter of the write half (accountShare): one key holder sending
// slow bodies cannot take every write slot from the other accounts. A
// request past its account's share is answered 429
// too_many_requests_in_flight before its body is read.
type inFlight struct {
	all        chan struct{} // one token per request in flight
	writes     chan struct{} // one token per request with a body in flight
	perAccount int           // writes one account may hold

	mu       sync.Mutex
	accounts map[string]int // writes held, by account id
}

// accountShare is the part of the write slots one account may hold: a
// quarter, so at least four accounts sending bodies at once are each
// served however the others behave.
const accountShare = 4

// newInFlight bounds requests to max (at least 2, so both classes get a
// slot); max < 0 means no bound (nil).
func newInFlight(max int) *inFlight {
	switch {
	case max < 0:
		return nil
	case max == 0:
		max = DefaultMaxInFlight
	case max < 2:
		max = 2
	}
	return &inFlight{all: make(chan struct{}, max), writes: make(chan struct{}, max/2),
		perAccount: (max/2 + accountShare - 1) / accountShare, accounts: make(map[string]int)}
}

// hasBody reports whether r is of a method that may carry a body, the
// class that takes a write slot.
func hasBody(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions
}

// acquire takes a slot for r without waiting; ok is false when none is
// free. release gives the slot back and must be called once when ok.
func (l *inFlight) acquire(r *http.Request) (release func(), ok bool) {
	if l == nil {
		return func() {}, true
	}
	write := hasBody(r)
	if write {
		select {
		case l.writes <- struct{}{}:
		default:
			return nil, false
		}
	}
	select {
	case l.all <- struct{}{}:
	default:
		if write {
			<-l.writes
		}
		return nil, false
	}
	return func() {
		<-l.all
		if write {
			<-l.writes
		}
	}, true
}

// acquireAccount takes one of account's share of the write slots without
// waiting; ok is false when the account holds its share already. release
// gives it back and must be called once when ok.
func (l *inFlight) acquireAccount(account string) (release func(), ok bool) {
	if l == nil {
		return func() {}, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.accounts[account] >= l.perAccount {
		return nil, false
	}
	l.accounts[account]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.accounts[account]--; l.accounts[account] <= 0 {
			delete(l.accounts, account)
		}
	}, true
}

// held is the number of write slots account holds.
func (l *inFlight) held(account string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accounts[account]
}

// Large request bodies take turns (docs/operations.md, Requests and
// memory). Checking and walking a body costs CPU in proportion to its
// length: about 10 ms for 1 MiB of 90,000 keys. The write half of the
// slots lets 128 such bodies be parsed at once, which on two cores left a
// bystander's plain GET waiting for a processor: p99 1.1 s with 200
// clients posting them. So a body longer than bigBody, once
// read, waits for one of bodyTurns' turns, as many as Go has processors,
// and holds it until its handler has picked its fields out (bodyParsed) or
// returns; reading a body takes no turn (a slow client must not hold one),
// nor does waiting for the database, and bodies of ordinary requests (a
// 100-item batch is under 32 KiB) never wait. The wait ends with the
// body's own time limit (body.go, limitBodyTime), after which the request
// is answered 503 server_busy: a flood of large bodies costs their
// senders time, not the other requests their processors.
const bigBody = 64 << 10

// bodyTurns are the turns large bodies take.
type bodyTurns struct {
	ch      chan struct{} // one token per turn held
	waiting atomic.Int64  // requests waiting for a turn
}

// newBodyTurns makes n turns (at least 1).
func newBodyTurns(n int) *bodyTurns { return &bodyTurns{ch: make(chan struct{}, max(n, 1))} }

// bodyTurn is one request's claim on a turn: set up for a request with a
// body (authed), taken once its body is read if it is large (readBody),
// given back when the handler returns. Only the request's goroutine uses
// it.
type bodyTurn struct {
	turns    *bodyTurns
	deadline time.Time // the body's time limit, which also bounds the wait
	held     bool
}

// take waits for a turn until the deadline; nil once it holds one, or
// when there is nothing to take.
func (t *bodyTurn) take(ctx context.Context) error {
	if t == nil || t.turns == nil || t.held {
		return nil
	}
	select {
	case t.turns.ch <- struct{}{}:
		t.held = true
		return nil
	default:
	}
	timer := time.NewTimer(time.Until(t.deadline))
	defer timer.Stop()
	t.turns.waiting.Add(1)
	defer t.turns.waiting.Add(-1)
	select {
	case t.turns.ch <- struct{}{}:
		t.held = true
		return nil
	case <-timer.C:
	case <-ctx.Done():
	}
	return &Error{Code: codeServerBusy, RetryAfter: busyRetryAfter,
		Message: "the server is busy reading other large request bodies; nothing was changed, retry shortly"}
}

// release gives the turn back, if held.
func (t *bodyTurn) release() {
	if t != nil && t.held {
		<-t.turns.ch
		t.held = false
	}
}

// accountBusyError is the answer to a request past its account's share.
func accountBusyError(share int) *Error {
	return &Error{Code: codeTooManyInFlight, RetryAfter: busyRetryAfter, Message: fmt.Sprintf(
		"this account already has %d requests with a body in progress, as many as it may; retry when one has finished", share)}
}

// busyError is the answer to a request beyond the bound.
func busyError() *Error {
	return &Error{Code: codeServerBusy, Message: "the server is serving as many requests as it allows; retry shortly", RetryAfter: busyRetryAfter}
}

// ConnBusyResponse is the complete HTTP/1.1 response written to a
// connection refused because the server holds as many connections as it
// allows (package connlimit): the same 503 server_busy as a request beyond
// the bound, with a request id of its own and the server's Server header.
func (s *Server) ConnBusyResponse() []byte {
	ae, id := busyError(), ids.New(ids.Request)
	body, _ := json.Marshal(errorBody{Error: errorDetail{Code: ae.Code, Message: ae.Message, RequestID: id}})
	body = append(body, '\n')
	head := fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"+
		"Retry-After: %d\r\nX-Request-Id: %s\r\nCache-Control: no-store\r\nServer: %s\r\nConnection: close\r\n\r\n",
		len(body), ceilSeconds(ae.RetryAfter), id, serverHeader(s.version))
	return append([]byte(head), body...)
}
