package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHeaderBytes checks the size the handler sees against the bytes sent.
func TestHeaderBytes(t *testing.T) {
	raw := "GET /api/v1/usage/current?x=1 HTTP/1.1\r\nHost: example.test\r\nAuthorization: Bearer abc\r\n" +
		"X-A: 1\r\nX-A: 2\r\nAccept: */*\r\n\r\n"
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if got := headerBytes(r); got != len(raw) {
		t.Errorf("headerBytes = %d, want %d", got, len(raw))
	}
}

// TestHeaderLimits sends requests over a real connection to a server set
// up as serve sets it up: a request over the documented limit gets the
// JSON 431; beyond http.Server.MaxHeaderBytes, and for a malformed or
// unsupported request, net/http answers in plain text itself, as
// docs/api.md (Errors) says.
func TestHeaderLimits(t *testing.T) {
	e := newEnv(t)
	ts := httptest.NewUnstartedServer(e.checked(e.h))
	ts.Config.MaxHeaderBytes = HeaderReadLimit
	ts.Start()
	t.Cleanup(ts.Close)
	addr := ts.Listener.Addr().String()
	get := func(extra string) string {
		return "GET " + usageCurrentPath + " HTTP/1.1\r\nHost: test\r\n" + extra + "\r\n"
	}
	pad := func(n int) string { return "X-Pad: " + strings.Repeat("a", n) + "\r\n" }
	tests := []struct {
		name   string
		req    string
		status int
		code   string // "" for net/http's plain-text answer
	}{
		{"under the limit", get(pad(MaxHeaderBytes - 1024)), http.StatusUnauthorized, "invalid_api_key"},
		{"over the limit", get(pad(MaxHeaderBytes + 1)), http.StatusRequestHeaderFieldsTooLarge, "headers_too_large"},
		{"many headers over the limit", get(strings.Repeat(pad(1000), 70)), http.StatusRequestHeaderFieldsTooLarge, "headers_too_large"},
		{"over the read limit", get(pad(HeaderReadLimit + 8192)), http.StatusRequestHeaderFieldsTooLarge, ""},
		{"malformed request line", "NONSENSE\r\n\r\n", http.StatusBadRequest, ""},
		{"malformed header", get("no colon here\r\n"), http.StatusBadRequest, ""},
		{"no Host", "GET / HTTP/1.1\r\n\r\n", http.StatusBadRequest, ""},
		{"unknown HTTP version", "GET / HTTP/4.0\r\nHost: test\r\n\r\n", http.StatusHTTPVersionNotSupported, ""},
		{"unknown transfer coding", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: gzip\r\n\r\n", http.StatusNotImplemented, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			go io.WriteString(c, tt.req) // net/http may answer before reading it all
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d %q, want %d", resp.StatusCode, body, tt.status)
			}
			var eb errorBody
			isJSON := json.Unmarshal(body, &eb) == nil && eb.Error.Code != ""
			if tt.code == "" {
				if isJSON || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
					t.Errorf("net/http's own answer: %s %q", resp.Header.Get("Content-Type"), body)
				}
				return
			}
			if eb.Error.Code != tt.code || eb.Error.RequestID == "" {
				t.Errorf("body %q, want code %s in the error shape", body, tt.code)
			}
		})
	}
}
