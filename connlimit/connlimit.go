// Package connlimit caps the connections an http.Server holds open
// (README.md, Limits and defaults). Each accepted connection takes one
// file descriptor until it is closed; without a cap, idle keep-alive
// connections alone can use up the process's descriptors, after which
// accept fails and every client waits.
//
// At the cap a new connection is admitted by closing the connection that
// has been idle longest (an idle keep-alive connection is one a client may
// never use again, and HTTP clients retry a request on a reused connection
// closed under them). Only when no connection is idle is the new one
// refused: it is sent a short ready-made response and closed, never left
// waiting.
package connlimit

import (
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// refuseTime bounds how long a refused connection is kept to write the
// response and let the client read it.
const refuseTime = time.Second

// maxRefusing bounds the refused connections being answered at once; past
// it a refused connection is closed without an answer, so refusing never
// holds more than a few descriptors.
const maxRefusing = 32

// Listener is a net.Listener that holds at most Max connections open. Set
// the http.Server's ConnState to its ConnState method so it knows which
// connections are idle.
type Listener struct {
	net.Listener
	max  int
	busy func() []byte // what to write to a refused connection

	mu    sync.Mutex
	conns map[*conn]time.Time // open connections: when they went idle, zero while not idle

	refusing chan struct{}
}

// New wraps inner so that at most n connections (at least 1) are open at
// once. busy gives what is written to a connection refused because all n
// are in use, typically a complete HTTP 503 response with Connection:
// close.
func New(inner net.Listener, n int, busy func() []byte) *Listener {
	return &Listener{Listener: inner, max: max(n, 1), busy: busy,
		conns: make(map[*conn]time.Time), refusing: make(chan struct{}, maxRefusing)}
}

// conn is an admitted connection; closing it frees its place.
type conn struct {
	net.Conn
	l    *Listener
	once sync.Once
}

func (c *conn) Close() error {
	c.once.Do(func() { c.l.forget(c) })
	return c.Conn.Close()
}

// Accept returns the next admitted connection. Refused connections are
// answered in the background and never returned.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c := &conn{Conn: nc, l: l}
		admitted, evicted := l.admit(c)
		if evicted != nil {
			evicted.Close()
		}
		if admitted {
			return c, nil
		}
		l.refuse(nc)
	}
}

// admit records c if there is room, making room by evicting the
// connection idle longest when needed.
func (l *Listener) admit(c *conn) (admitted bool, evicted *conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) >= l.max {
		var since time.Time
		for o, idle := range l.conns {
			if !idle.IsZero() && (evicted == nil || idle.Before(since)) {
				evicted, since = o, idle
			}
		}
		if evicted == nil {
			return false, nil
		}
		delete(l.conns, evicted)
	}
	l.conns[c] = time.Time{}
	return true, evicted
}

func (l *Listener) forget(c *conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// ConnState is the http.Server's ConnState hook: it tells the listener
// which connections are idle between requests.
func (l *Listener) ConnState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, open := l.conns[c]; !open {
		return
	}
	switch state {
	case http.StateIdle:
		l.conns[c] = time.Now()
	case http.StateNew, http.StateActive:
		l.conns[c] = time.Time{}
	case http.StateHijacked, http.StateClosed:
		delete(l.conns, c)
	}
}

// Open is the number of connections held open now.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// refuse answers nc with the busy response and closes it, in the
// background and within refuseTime; with too many refusals under way it
// closes nc at once.
func (l *Listener) refuse(nc net.Conn) {
	select {
	case l.refusing <- struct{}{}:
	default:
		nc.Close()
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(refuseTime))
		if _, err := nc.Write(l.busy()); err != nil {
			return
		}
		// Closing with the request still unread would reset the
		// connection and could destroy the response before the client
		// reads it: half-close, then read what the client sent.
		if tc, ok := nc.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		}
		io.Copy(io.Discard, io.LimitReader(nc, 64<<10))
	}()
}
