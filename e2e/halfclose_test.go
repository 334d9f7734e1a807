package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// TestHalfClosedClientIsAnswered: a client that sends its requests and
// then closes its side of the connection (shutdown(SHUT_WR), as nc -N
// does) still reads the answers, and gets every one whole: net/http
// cancels the requests' context at the half-close, which made the
// requests touching the database answer 500.
func TestHalfClosedClientIsAnswered(t *testing.T) {
	db := filepath.Join(t.TempDir(), "halfclose.db")
	_, key := newAccountKey(t, db, "reports:create,reports:read")
	srv := startServer(t, nil, serveArgs(db)...)
	readiness(t, srv, "ready", time.Minute)
	c, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"latitude":37.7749,"longitude":-122.4194}`
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		jobsPath, key, len(body), body) +
		fmt.Sprintf("GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", jobsPath, key)
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	for i, want := range []int{http.StatusAccepted, http.StatusOK} {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i+1, err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("answer %d: %s, want %d", i+1, res.Status, want)
		}
	}
}
