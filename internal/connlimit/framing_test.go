package connlimit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// scriptConn is a net.Conn whose reads return the chunks of a script, one
// chunk (or what fits of it) per read, then io.EOF.
type scriptConn struct {
	net.Conn // nil: only Read is used
	chunks   [][]byte
}

func (c *scriptConn) Read(p []byte) (int, error) {
	for len(c.chunks) > 0 && len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	return n, nil
}

// readThrough is what net/http reads of in, arriving in chunks of the
// given size, through an admitted connection's Read with a buffer of
// bufSize bytes; refused reports whether a head was refused.
func readThrough(t *testing.T, in string, chunk, bufSize int) (out string, refused bool) {
	t.Helper()
	var chunks [][]byte
	for s := in; len(s) > 0; {
		k := min(chunk, len(s))
		chunks = append(chunks, []byte(s[:k]))
		s = s[k:]
	}
	c := &conn{Conn: &scriptConn{chunks: chunks}}
	var got bytes.Buffer
	buf := make([]byte, bufSize)
	for range 10 * (len(in) + len(refusedLine) + 1) {
		n, err := c.Read(buf)
		got.Write(buf[:n])
		if err == io.EOF {
			return got.String(), c.refused.Load()
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
	}
	t.Fatalf("reads of %q never ended", in)
	return "", false
}

// Requests, and bodies that look like requests, empty lines included.
const (
	getReq    = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
	postBody  = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n\r\n"
	postReq   = "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 37\r\n\r\n" + postBody
	chunkReq  = "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunkBody
	chunkBody = "5;ext=1\r\nhello\r\n1A\r\n" + chunkData + "\r\n0\r\nTrailer: t\r\n\r\n"
	chunkData = "GET /x HTTP/1.1\r\nA: bb\r\n\r\n" // 0x1A bytes
	// conflictHead's blank line is where refusedLine goes.
	conflictHead = "POST /d HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n"
	conflictRest = "\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
)

// TestFramingFilter checks what net/http reads of a connection's bytes,
// however they arrive: pipelined requests unchanged, bodies that look like
// requests left alone, empty lines before a request line dropped, and a
// head with conflicting framing refused at its blank line, nothing after
// it read.
func TestFramingFilter(t *testing.T) {
	if len(postBody) != 37 || len(chunkData) != 0x1A {
		t.Fatalf("the test's bodies are %d and %d bytes long", len(postBody), len(chunkData))
	}
	tests := []struct {
		name, in, want string
		refused        bool
	}{
		{"pipelined GETs", getReq + getReq + getReq, getReq + getReq + getReq, false},
		{"bodies that look like requests", postReq + chunkReq + postReq, postReq + chunkReq + postReq, false},
		{"empty lines before a request line", "\r\n\n" + getReq + "\r\n" + getReq + "\n\r\n" + postReq + "\r\n" + getReq,
			getReq + getReq + postReq + getReq, false},
		{"bare LF line ends", "GET / HTTP/1.1\nHost: x\nContent-Length: 2\n\nab" + getReq,
			"GET / HTTP/1.1\nHost: x\nContent-Length: 2\n\nab" + getReq, false},
		{"a folded Content-Length", "POST / HTTP/1.1\r\nContent-Length:\r\n 4\r\n\r\n\r\n\r\n" + getReq,
			"POST / HTTP/1.1\r\nContent-Length:\r\n 4\r\n\r\n\r\n\r\n" + getReq, false},
		{"repeated equal lengths", "POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length:2 \r\n\r\nab" + getReq,
			"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length:2 \r\n\r\nab" + getReq, false},
		{"Content-Length and Transfer-Encoding", conflictHead + conflictRest, conflictHead + refusedLine, true},
		{"after pipelined requests", getReq + postReq + conflictHead + conflictRest + getReq,
			getReq + postReq + conflictHead + refusedLine, true},
		{"either order, any case, any coding", "PUT / HTTP/1.1\r\ntransfer-ENCODING: gzip\r\nX: y\r\nCONTENT-length: 0\r\nZ: z\r\n\r\n" + getReq,
			"PUT / HTTP/1.1\r\ntransfer-ENCODING: gzip\r\nX: y\r\nCONTENT-length: 0\r\nZ: z\r\n" + refusedLine, true},
		{"an invalid Content-Length too", "POST / HTTP/1.1\r\nContent-Length: x\r\nTransfer-Encoding: chunked\n\n0\n\n",
			"POST / HTTP/1.1\r\nContent-Length: x\r\nTransfer-Encoding: chunked\n" + refusedLine, true},
		{"Transfer-Encoding in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
			"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n" + refusedLine, true},
		{"Content-Length in HTTP/1.0", "POST / HTTP/1.0\r\nContent-Length: 2\r\n\r\nab" + getReq,
			"POST / HTTP/1.0\r\nContent-Length: 2\r\n\r\nab" + getReq, false},
		{"a Transfer-Encoding name with a space is another field", "POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\nContent-Length: 2\r\n\r\nab",
			"POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\nContent-Length: 2\r\n\r\nab", false},
		// Bytes net/http refuses itself (and closes after) stop the
		// framing: all that follows passes unchanged.
		{"not HTTP/1", "\x16\x03\x01" + conflictHead + conflictRest, "\x16\x03\x01" + conflictHead + conflictRest, false},
		{"an HTTP/2 upgrade", "PRI * HTTP/2.0\r\n\r\n" + conflictHead + conflictRest,
			"PRI * HTTP/2.0\r\n\r\n" + conflictHead + refusedLine, true},
		{"not a version", "GET / HTTP/1.10\r\n\r\n" + conflictHead + conflictRest,
			"GET / HTTP/1.10\r\n\r\n" + conflictHead + conflictRest, false},
		{"two lengths net/http refuses", "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n" + conflictHead,
			"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n" + conflictHead, false},
		{"a bad chunk size", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n" + conflictHead,
			"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n" + conflictHead, false},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 2, 3, 7, 64, 1 << 16} {
			for _, bufSize := range []int{1, 5, 4096} {
				got, refused := readThrough(t, tt.in, chunk, bufSize)
				if got != tt.want || refused != tt.refused {
					t.Fatalf("%s, chunks of %d, reads of %d:\n got %q refused=%v\nwant %q refused=%v",
						tt.name, chunk, bufSize, got, refused, tt.want, tt.refused)
				}
			}
		}
	}
}

// FuzzFraming checks that the framing does not depend on how the bytes
// arrive, only ever drops bytes or refuses a head, and frames requests as
// net/http does: when net/http reads every request of what it is passed,
// bodies included, the framing has followed them all to the end.
func FuzzFraming(f *testing.F) {
	for _, s := range []string{getReq + postReq + chunkReq, conflictHead + conflictRest, "\r\n\r\n" + getReq + "\n" + getReq,
		"POST / HTTP/1.1\r\nContent-Length:\r\n 3\r\n\r\nabc", "\x16\x03\x01abc", "POST / HTTP/1.0\r\nContent-Length: 1\r\n\r\na"} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, in string, chunk uint8) {
		whole, refused := readThrough(t, in, len(in)+1, len(in)+len(refusedLine)+1)
		split, refused2 := readThrough(t, in, int(chunk%16)+1, int(chunk/16)+1)
		if whole != split || refused != refused2 {
			t.Fatalf("%q: read whole %q (refused %v), in chunks %q (refused %v)", in, whole, refused, split, refused2)
		}
		if !refused && readsWhole(whole) {
			c := &conn{Conn: &scriptConn{chunks: [][]byte{[]byte(in)}}}
			io.Copy(io.Discard, c)
			if c.fr.st != frameStart {
				t.Fatalf("%q: net/http reads every request of it, the framing ends in state %d", in, c.fr.st)
			}
		}
		kept := whole
		if refused {
			var ok bool
			if kept, ok = strings.CutSuffix(whole, refusedLine); !ok {
				t.Fatalf("%q refused without refusedLine: %q", in, whole)
			}
		}
		// What is kept is the input less some bytes: a subsequence.
		i := 0
		for j := 0; j < len(kept); j++ {
			for i < len(in) && in[i] != kept[j] {
				i++
			}
			if i == len(in) {
				t.Fatalf("%q: read %q, not a subsequence", in, kept)
			}
			i++
		}
	})
}

// readsWhole reports whether net/http reads s as requests to its end,
// each whole, body included.
func readsWhole(s string) bool {
	r := bufio.NewReader(strings.NewReader(s))
	for {
		if _, err := r.Peek(1); err == io.EOF {
			return true
		}
		req, err := http.ReadRequest(r)
		if err != nil {
			return false
		}
		// The versions the server takes (net/http, http1ServerSupportsRequest).
		if req.ProtoMajor != 1 && (req.Proto != "HTTP/2.0" || req.Method != "PRI" || req.RequestURI != "*") {
			return false
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return false
		}
	}
}

// pipelinedServer serves, on a Listener, a handler that answers each
// request with its method, path and body, and counts the requests it saw.
func pipelinedServer(t *testing.T) (addr string, seen *atomic.Int32) {
	t.Helper()
	seen = new(atomic.Int32)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, body)
	})
	_, addr = serve(t, 8, h)
	return addr, seen
}

// readResponses reads n responses from r, failing on any error.
func readResponses(t *testing.T, r *bufio.Reader, n int) []string {
	t.Helper()
	var got []string
	for i := range n {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("response %d of %d: %v (got %q)", i+1, n, err, got)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("response %d body: %v", i+1, err)
		}
		got = append(got, fmt.Sprintf("%d %s", resp.StatusCode, body))
	}
	return got
}

// TestPipelinedRequestsAnswered sends requests in one write, GETs and
// POSTs with bodies of both framings, bodies that look like requests and
// an empty line between two requests, and checks each is answered, in
// order, and the connection stays open for more.
func TestPipelinedRequestsAnswered(t *testing.T) {
	addr, seen := pipelinedServer(t)
	c := dial(t, addr)
	c.c.SetDeadline(time.Now().Add(10 * time.Second))
	in := getReq + postReq + chunkReq + getReq + "\r\n" + getReq +
		"PUT /folded HTTP/1.1\nHost: x\nContent-Length:\n 4\n\n\r\n\r\n" + getReq
	if _, err := io.WriteString(c.c, in); err != nil {
		t.Fatal(err)
	}
	want := []string{"200 GET /a ", "200 POST /b " + postBody, "200 POST /c hello" + chunkData, "200 GET /a ", "200 GET /a ",
		"200 PUT /folded \r\n\r\n", "200 GET /a "}
	if got := readResponses(t, c.r, len(want)); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("pipelined answers:\n got %q\nwant %q", got, want)
	}
	if resp, body := c.get(t); resp.StatusCode != http.StatusOK || body != "GET / " {
		t.Errorf("a request after the pipelined ones: %d %q", resp.StatusCode, body)
	}
	if n := seen.Load(); n != int32(len(want)+1) {
		t.Errorf("handler saw %d requests, want %d", n, len(want)+1)
	}
}

// TestConflictingFramingRefused sends, after two pipelined requests, one
// with both Content-Length and Transfer-Encoding and a large body: the two
// are answered, the third is answered 400 with Connection: close without
// reaching the handler, the connection is closed, and the client reads the
// 400 whole although it was still sending (no reset).
func TestConflictingFramingRefused(t *testing.T) {
	addr, seen := pipelinedServer(t)
	c := dial(t, addr)
	c.c.SetDeadline(time.Now().Add(10 * time.Second))
	body := strings.Repeat("a", 256<<10)
	conflict := fmt.Sprintf("POST /d HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n",
		len(body), len(body), body)
	writeErr := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c.c, getReq+postReq+conflict+getReq)
		writeErr <- err
	}()
	got := readResponses(t, c.r, 2)
	if want := []string{"200 GET /a ", "200 POST /b " + postBody}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("requests before the refused one: %q, want %q", got, want)
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatalf("no answer to the request with Content-Length and Transfer-Encoding: %v", err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !resp.Close {
		t.Errorf("request with Content-Length and Transfer-Encoding: %d, close %v; want 400 and Connection: close", resp.StatusCode, resp.Close)
	}
	if _, err := c.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after the refusal the connection reads %v, want EOF", err)
	}
	<-writeErr // the write may fail or not once the server has closed
	if n := seen.Load(); n != 2 {
		t.Errorf("handler saw %d requests, want 2 (the refused one and the one after it never reach it)", n)
	}
}
