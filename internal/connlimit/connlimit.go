// Package connlimit caps the connections an http.Server holds open
// (docs/operations.md, Limits and defaults). Each accepted connection takes one
// file descriptor until it is closed; without a cap, idle keep-alive
// connections alone can use up the process's descriptors, after which
// accept fails and every client waits.
//
// At the cap a new connection is admitted by closing another one that is
// not in a request: one idle between requests (a client may never use it
// again, and HTTP clients retry a request on a reused connection closed
// under them), or a new one that has had the grace (DefaultGrace) to send
// its first request line and headers and has not (a client that means to
// send a request sends it at once; a connection that stays silent, or
// sends its headers a byte at a time, only holds a place). Of those, the
// one waiting longest is closed. Only when every other connection is in a
// request or younger than the grace is the new one refused: it is sent a
// short ready-made response and closed, never left waiting.
//
// net/http reports a connection as active only once it has read a
// complete request line and headers (ConnState); until then a new
// connection is StateNew and a kept-alive one StateIdle, so those two
// states are exactly "no complete request yet".
//
// Each admitted connection also follows the framing of the requests sent
// on it (framing.go): a request with both Content-Length and
// Transfer-Encoding is refused and its connection closed, as RFC 9112
// requires and net/http does not, and empty lines before a request line
// are ignored.
package connlimit

import (
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// refuseTime bounds how long a refused connection (or one whose request
// was refused for its framing) is kept to write the response and let the
// client read it.
const refuseTime = time.Second

// maxRefusing bounds the refused connections being answered at once; past
// it a refused connection is closed without an answer (or, refused for its
// framing, closed at once), so refusing never holds more than a few
// descriptors.
const maxRefusing = 32

// DefaultGrace is how long a new connection may take to send a complete
// first request before it may be closed to make room at the cap. It is
// well below the http.Server's ReadHeaderTimeout (10 s in locrisk serve),
// which closes such a connection anyway, and far above the time a client
// takes to write a request's headers.
const DefaultGrace = 2 * time.Second

// Listener is a net.Listener that holds at most Max connections open. Set
// the http.Server's ConnState to its ConnState method so it knows which
// connections are in a request.
type Listener struct {
	net.Listener
	max   int
	grace time.Duration
	busy  func() []byte // what to write to a refused connection
	now   func() time.Time

	mu    sync.Mutex
	conns map[*conn]connState // open connections

	refusing chan struct{}
}

// connState is where an open connection is.
type connState struct {
	active bool      // a complete request has been read and is being answered
	idle   bool      // between requests (keep-alive)
	since  time.Time // when it was accepted or went idle
}

// evictable reports whether the connection may be closed for a new one at
// now: idle, or new for at least grace.
func (s connState) evictable(now time.Time, grace time.Duration) bool {
	return !s.active && (s.idle || now.Sub(s.since) >= grace)
}

// New wraps inner so that at most n connections (at least 1) are open at
// once. busy gives what is written to a connection refused because all n
// are in use, typically a complete HTTP 503 response with Connection:
// close.
func New(inner net.Listener, n int, busy func() []byte) *Listener {
	return &Listener{Listener: inner, max: max(n, 1), grace: DefaultGrace, busy: busy, now: time.Now,
		conns: make(map[*conn]connState), refusing: make(chan struct{}, maxRefusing)}
}

// SetGrace changes how long a new connection may take to send its first
// request before it may be closed to make room (DefaultGrace). Call it
// before the first Accept.
func (l *Listener) SetGrace(d time.Duration) { l.grace = max(d, 0) }

// conn is an admitted connection; closing it frees its place. Its reads
// go through the request framing (framing.go).
type conn struct {
	net.Conn
	l    *Listener
	once sync.Once

	// Read's, which net/http never calls concurrently.
	fr      framing
	pending []byte // the rest of refusedLine, to be read
	// refused is set once the framing has refused a head, for Close.
	refused atomic.Bool
}

// Read reads the connection's bytes as the framing passes them on
// (framing.go): without CR and LF before a request line, and with
// refusedLine in place of the end of a refused head, after which nothing
// more is read.
func (c *conn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	if c.fr.refused() {
		return 0, io.EOF
	}
	for {
		n, err := c.Conn.Read(p)
		if c.fr.st == frameOff {
			return n, err
		}
		n, refuse := c.fr.filter(p[:n])
		if refuse {
			c.refused.Store(true)
			k := copy(p[n:], refusedLine)
			c.pending = []byte(refusedLine[k:])
			return n + k, nil
		}
		// Bytes all dropped (line ends before a request line): read on,
		// rather than return nothing.
		if n > 0 || err != nil || len(p) == 0 {
			return n, err
		}
	}
}

// Close frees the connection's place. A connection whose request was
// refused for its framing is closed gently (closeGently), so the client
// reads net/http's answer.
func (c *conn) Close() error {
	first := false
	c.once.Do(func() {
		first = true
		c.l.forget(c)
	})
	if first && c.refused.Load() {
		c.l.closeGently(c.Conn, nil, refusedDrain)
		return nil
	}
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

// admit records c if there is room, making room when needed by evicting
// the evictable connection that has waited longest.
func (l *Listener) admit(c *conn) (admitted bool, evicted *conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(l.conns) >= l.max {
		var since time.Time
		for o, st := range l.conns {
			if st.evictable(now, l.grace) && (evicted == nil || st.since.Before(since)) {
				evicted, since = o, st.since
			}
		}
		if evicted == nil {
			return false, nil
		}
		delete(l.conns, evicted)
	}
	l.conns[c] = connState{since: now}
	return true, evicted
}

func (l *Listener) forget(c *conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// ConnState is the http.Server's ConnState hook: it tells the listener
// which connections are in a request and which are idle between requests.
// StateNew keeps the time of the accept, from which the grace runs.
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
		l.conns[c] = connState{idle: true, since: l.now()}
	case http.StateActive:
		l.conns[c] = connState{active: true}
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

// refuse answers nc with the busy response and closes it (closeGently).
// It reads at most 64 KiB of the request: the server is busy.
func (l *Listener) refuse(nc net.Conn) { l.closeGently(nc, l.busy, 64<<10) }

// refusedDrain is how much of a request refused for its framing, and of
// what follows it, is read before its connection is closed: as much as
// the client may send in a request's body (docs/api.md: 1 MiB), within
// refuseTime.
const refusedDrain = 1 << 20

// closeGently writes answer() to nc, if answer is not nil, and closes it,
// in the background and within refuseTime, reading at most drain bytes of
// what the client still sends; with too many connections being closed so,
// it closes nc at once.
func (l *Listener) closeGently(nc net.Conn, answer func() []byte, drain int64) {
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
		if answer != nil {
			if _, err := nc.Write(answer()); err != nil {
				return
			}
		}
		// Closing with the request still unread would reset the
		// connection and could destroy the response before the client
		// reads it: half-close, then read what the client sent.
		if tc, ok := nc.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		}
		io.Copy(io.Discard, io.LimitReader(nc, drain))
	}()
}
