package connlimit

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

const busyResponse = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 15\r\nConnection: close\r\n\r\n{\"busy\": true}\n"

// serve runs an http.Server on a Listener of at most max connections;
// handler answers every request.
func serve(t *testing.T, max int, handler http.Handler) (*Listener, string) {
	t.Helper()
	return serveWith(t, max, handler, nil)
}

// serveWith is serve with setup run on the Listener before it serves.
func serveWith(t *testing.T, max int, handler http.Handler, setup func(*Listener)) (*Listener, string) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(inner, max, func() []byte { return []byte(busyResponse) })
	if setup != nil {
		setup(l)
	}
	srv := &http.Server{Handler: handler, ConnState: l.ConnState, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l, inner.Addr().String()
}

// client is one raw HTTP/1.1 connection that keeps alive.
type client struct {
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{c: c, r: bufio.NewReader(c)}
}

// get sends one request and reads the response, within a generous
// deadline: a client that is left waiting fails instead of hanging.
func (cl *client) get(t *testing.T) (*http.Response, string) {
	t.Helper()
	cl.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(cl.c, "GET / HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	resp, err := http.ReadResponse(cl.r, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// closed reports whether the server has closed the connection.
func (cl *client) closed() bool {
	cl.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	_, err := cl.r.ReadByte()
	return err != nil && !os.IsTimeout(err)
}

// TestIdleConnectionsMakeRoom holds more idle keep-alive connections than
// the cap and checks each new client is still answered, the oldest idle
// idle connections giving way. LOCRISK_LOAD=1 holds 3,000 against a cap of
// 1,024, as an idle-connection flood would.
func TestIdleConnectionsMakeRoom(t *testing.T) {
	max, n := 4, 10
	if os.Getenv("LOCRISK_LOAD") == "1" {
		max, n = 1024, 3000
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	l, addr := serve(t, max, ok)
	clients := make([]*client, n)
	for i := range clients {
		clients[i] = dial(t, addr)
		if resp, body := clients[i].get(t); resp.StatusCode != http.StatusOK || body != "ok" {
			t.Fatalf("client %d: %d %q", i, resp.StatusCode, body)
		}
	}
	if open := l.Open(); open > max {
		t.Errorf("%d connections open, cap %d", open, max)
	}
	// The connections closed to make room are idle ones, the oldest first
	// (by when the server marked them idle, which can lag a response).
	if os.Getenv("LOCRISK_LOAD") != "1" {
		closed := 0
		for _, c := range clients[:n-1] {
			if c.closed() {
				closed++
			}
		}
		if closed < n-max {
			t.Errorf("%d of the first %d connections closed; want at least %d", closed, n-1, n-max)
		}
	}
	if resp, _ := clients[n-1].get(t); resp.StatusCode != http.StatusOK {
		t.Errorf("newest keep-alive connection: %d", resp.StatusCode)
	}
}

// TestBusyConnectionsRefuse fills the cap with requests in progress and
// checks a new connection gets the busy response at once, and is served
// again once a connection frees up.
func TestBusyConnectionsRefuse(t *testing.T) {
	const max = 3
	release := make(chan struct{})
	started := make(chan struct{}, max)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("hold") != "" {
			started <- struct{}{}
			<-release
		}
		io.WriteString(w, "ok")
	})
	l, addr := serve(t, max, h)
	held := make([]net.Conn, max)
	for i := range held {
		c := dial(t, addr)
		io.WriteString(c.c, "GET /?hold=1 HTTP/1.1\r\nHost: test\r\n\r\n")
		<-started
		held[i] = c.c
	}
	resp, body := dial(t, addr).get(t)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "busy") {
		t.Errorf("new connection with every slot busy: %d %q; want the busy response", resp.StatusCode, body)
	}
	close(release)
	for _, c := range held {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("held request: %v", err)
		}
	}
	// The held connections are idle now, or about to be: a new client is
	// served by closing one of them (retried while they finish going idle).
	for try := 0; ; try++ {
		resp, _ := dial(t, addr).get(t)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if try == 50 {
			t.Fatalf("new connection after the requests finished: %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if open := l.Open(); open > max {
		t.Errorf("%d connections open, cap %d", open, max)
	}
}

// testClock is a settable clock for the grace of new connections.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// waitOpen waits until the listener holds n connections.
func waitOpen(t *testing.T, l *Listener, n int) {
	t.Helper()
	for try := 0; l.Open() != n; try++ {
		if try == 500 {
			t.Fatalf("%d connections open, want %d", l.Open(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSilentConnectionsMakeRoom fills the cap with connections that send
// nothing or only part of their headers, as a client holding places would,
// and checks they keep new clients out only for the grace: after it each
// new client is served at once, the silent connections giving way oldest
// first (before, they held every place until ReadHeaderTimeout).
func TestSilentConnectionsMakeRoom(t *testing.T) {
	const max = 4
	clock := &testClock{t: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	l, addr := serveWith(t, max, ok, func(l *Listener) { l.now = clock.now })

	silent := make([]*client, max)
	for i := range silent {
		silent[i] = dial(t, addr)
		if i%2 == 1 {
			io.WriteString(silent[i].c, "GET / HTTP/1.1\r\nHost: te") // half the headers
		}
		waitOpen(t, l, i+1)
	}
	// More silent connections than the cap: the extra ones are refused.
	for range 3 {
		dial(t, addr)
	}

	// Within the grace a silent connection keeps its place.
	if resp, _ := dial(t, addr).get(t); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("new client while the silent connections are within the grace: %d, want 503", resp.StatusCode)
	}

	clock.advance(DefaultGrace)
	for i := range max {
		if resp, body := dial(t, addr).get(t); resp.StatusCode != http.StatusOK || body != "ok" {
			t.Fatalf("new client %d after the grace: %d %q, want 200", i, resp.StatusCode, body)
		}
	}
	for i, c := range silent {
		if !c.closed() {
			t.Errorf("silent connection %d still open after %d new clients were served", i, max)
		}
	}
	if open := l.Open(); open > max {
		t.Errorf("%d connections open, cap %d", open, max)
	}
}
