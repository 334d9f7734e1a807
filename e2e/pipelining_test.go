package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rawConn is one HTTP/1.1 connection to the server, written raw.
type rawConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, s *server) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawConn{c: c, r: bufio.NewReader(c)}
}

// answer reads the next response: its status, body and whether it closes
// the connection.
func (rc *rawConn) answer(t *testing.T, what string) (status int, body string, closing bool) {
	t.Helper()
	resp, err := http.ReadResponse(rc.r, nil)
	if err != nil {
		t.Fatalf("%s: no answer: %v", what, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s: body: %v", what, err)
	}
	return resp.StatusCode, string(b), resp.Close
}

// TestPipelinedRequests: requests written in one go, GETs and
// POSTs with bodies of either framing, are each answered, in order, on a
// connection that stays open; a request with both Content-Length and
// Transfer-Encoding is answered 400 and its connection closed (RFC 9112
// section 6.1), the requests before it answered, it and those after it
// never served, since a proxy in front may have framed it the other way
// and sent the rest as the next request (internal/connlimit, framing.go).
func TestPipelinedRequests(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "pipelining.db")
	_, key := newAccountKey(t, db, "reports:create,reports:read")
	srv := startServer(t, nil, serveArgs(db)...)

	p := fixturePoints[0]
	body := fmt.Sprintf(`{"latitude": %v, "longitude": %v}`, p.lat, p.lon)
	auth := "Host: test\r\nAuthorization: Bearer " + key + "\r\n"
	get := func(path string) string { return "GET " + path + " HTTP/1.1\r\n" + auth + "\r\n" }
	post := "POST " + jobsPath + " HTTP/1.1\r\n" + auth + fmt.Sprintf("Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	chunked := "POST " + jobsPath + " HTTP/1.1\r\n" + auth + fmt.Sprintf("Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	both := "POST " + jobsPath + " HTTP/1.1\r\n" + auth +
		fmt.Sprintf("Content-Type: application/json\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), len(body), body)

	listed := func(b string) int {
		var list struct{ Jobs []json.RawMessage }
		if err := json.Unmarshal([]byte(b), &list); err != nil {
			t.Fatalf("job list %q: %v", b, err)
		}
		return len(list.Jobs)
	}

	// Two GETs, then two POSTs, then a GET, each set in one write; a
	// client that ends a GET with one more CRLF is answered too.
	rc := dialRaw(t, srv)
	if _, err := io.WriteString(rc.c, get("/healthz")+"\r\n"+get("/readyz")); err != nil {
		t.Fatal(err)
	}
	for _, what := range []string{"GET /healthz", "GET /readyz"} {
		if status, b, closing := rc.answer(t, what); status != http.StatusOK || closing {
			t.Fatalf("pipelined %s: %d %s (close %v)", what, status, b, closing)
		}
	}
	if _, err := io.WriteString(rc.c, post+chunked+get(jobsPath)); err != nil {
		t.Fatal(err)
	}
	for _, what := range []string{"POST with Content-Length", "POST chunked"} {
		if status, b, closing := rc.answer(t, what); status != http.StatusAccepted || closing {
			t.Fatalf("pipelined %s: %d %s (close %v)", what, status, b, closing)
		}
	}
	status, b, closing := rc.answer(t, "GET jobs")
	if status != http.StatusOK || closing || listed(b) != 2 {
		t.Fatalf("pipelined GET of the jobs: %d %s (close %v); want 200 and the two jobs", status, b, closing)
	}
	// The connection is still open for more.
	io.WriteString(rc.c, get("/healthz"))
	if status, b, _ := rc.answer(t, "GET after the pipelined ones"); status != http.StatusOK {
		t.Fatalf("GET after the pipelined requests: %d %s", status, b)
	}

	// Content-Length and Transfer-Encoding: refused, connection closed.
	rc = dialRaw(t, srv)
	if _, err := io.WriteString(rc.c, get("/healthz")+both+get("/healthz")); err != nil {
		t.Fatal(err)
	}
	if status, b, _ := rc.answer(t, "GET before"); status != http.StatusOK {
		t.Fatalf("GET before the conflicting request: %d %s", status, b)
	}
	if status, b, closing := rc.answer(t, "Content-Length and Transfer-Encoding"); status != http.StatusBadRequest || !closing {
		t.Fatalf("POST with Content-Length and Transfer-Encoding: %d %q (close %v); want 400 and Connection: close", status, b, closing)
	}
	if _, err := rc.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the 400 the connection reads %v; want it closed", err)
	}
	r := srv.do(t, key, http.MethodGet, jobsPath, nil)
	if n := listed(string(r.body)); r.status != http.StatusOK || n != 2 {
		t.Errorf("jobs after the refused request: %d, %d jobs; want the 2 from before", r.status, n)
	}
	for _, line := range srv.log.Lines() {
		if strings.Contains(line, `"status":500`) {
			t.Errorf("a request was answered 500: %s", line)
		}
	}
}
