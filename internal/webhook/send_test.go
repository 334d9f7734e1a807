package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// Every test here talks only to httptest servers on 127.0.0.1.

func TestNewClientRefusesLoopback(t *testing.T) {
	var hits int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
	}))
	defer srv.Close()

	resp, err := NewClient(false).Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("client with allowPrivate=false connected to 127.0.0.1")
	}
	if !errors.Is(err, ErrAddressNotAllowed) {
		t.Errorf("error %v does not wrap ErrAddressNotAllowed", err)
	}
	var ae *AddressError
	if !errors.As(err, &ae) || ae.Class != ClassLoopback {
		t.Errorf("error %v: want an *AddressError of class loopback", err)
	}
	if !strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("error %q should name the address and say it is not allowed", err)
	}

	// Same server, by a name that resolves to loopback: the check is on the
	// dialled address, not on the text of the URL.
	resp, err = NewClient(false).Get(strings.Replace(srv.URL, "127.0.0.1", "localhost", 1))
	if err == nil {
		resp.Body.Close()
		t.Fatal("client with allowPrivate=false connected to localhost")
	}
	if !errors.Is(err, ErrAddressNotAllowed) {
		t.Errorf("localhost: error %v does not wrap ErrAddressNotAllowed", err)
	}

	mu.Lock()
	refusedHits := hits
	mu.Unlock()
	if refusedHits != 0 {
		t.Errorf("receiver got %d requests; want none", refusedHits)
	}

	resp, err = NewClient(true).Get(srv.URL)
	if err != nil {
		t.Fatalf("client with allowPrivate=true: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d, want 200", resp.StatusCode)
	}
}

func TestRefuseDisallowedControl(t *testing.T) {
	tests := []struct {
		address string
		ok      bool
	}{
		{"93.184.216.34:443", true},
		{"[2606:4700::1111]:443", true},
		{"127.0.0.1:80", false},
		{"[::1]:443", false},
		{"[::ffff:10.0.0.1]:443", false},
		{"169.254.169.254:80", false},
		{"[fe80::1%eth0]:443", false},
		{"not-an-address", false},
	}
	for _, tc := range tests {
		err := refuseDisallowed("tcp", tc.address, nil)
		if (err == nil) != tc.ok {
			t.Errorf("refuseDisallowed(%q) = %v, want ok=%v", tc.address, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrAddressNotAllowed) {
			t.Errorf("refuseDisallowed(%q) = %v, not ErrAddressNotAllowed", tc.address, err)
		}
	}
}

type captured struct {
	method string
	header http.Header
	body   []byte
}

// recorder is a receiver that stores what it got and answers with status.
type recorder struct {
	mu     sync.Mutex
	got    []captured
	status int
	body   string
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.got = append(rc.got, captured{r.Method, r.Header.Clone(), b})
	status, body := rc.status, rc.body
	rc.mu.Unlock()
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (rc *recorder) requests() []captured {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]captured(nil), rc.got...)
}

// testSecret is a signing secret as the service makes them: whsec_ and 40
// base62 characters.
const testSecret = "whsec_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB7cDE0f"

func TestSendHeadersAndSignature(t *testing.T) {
	rc := &recorder{status: http.StatusOK, body: "ok"}
	srv := httptest.NewServer(rc)
	defer srv.Close()

	a := Attempt{
		URL:        srv.URL + "/hook",
		Secret:     testSecret,
		Event:      EventJobCompleted,
		DeliveryID: "wd_0123456789abcdefghijklmn",
		EventID:    "evt_0123456789abcdefghijklmn",
		Body:       []byte(`{"id":"evt_0123456789abcdefghijklmn","type":"report.job.completed"}`),
	}
	client := NewClient(true)
	t1 := time.Unix(1700000000, 0)
	t2 := t1.Add(10 * time.Second)
	r1 := Send(context.Background(), client, a, t1)
	r2 := Send(context.Background(), client, a, t2)
	for i, r := range []Result{r1, r2} {
		if !r.Success || r.StatusCode != 200 || r.Err != "" {
			t.Fatalf("attempt %d: %+v, want success", i+1, r)
		}
		if r.Excerpt != "ok" {
			t.Errorf("attempt %d: excerpt %q, want %q", i+1, r.Excerpt, "ok")
		}
		if r.Duration <= 0 {
			t.Errorf("attempt %d: duration %v, want > 0", i+1, r.Duration)
		}
	}

	got := rc.requests()
	if len(got) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(got))
	}
	wantTS := []string{"1700000000", "1700000010"}
	for i, c := range got {
		if c.method != http.MethodPost {
			t.Errorf("attempt %d: method %s, want POST", i+1, c.method)
		}
		if string(c.body) != string(a.Body) {
			t.Errorf("attempt %d: body %q, want %q", i+1, c.body, a.Body)
		}
		for name, want := range map[string]string{
			"Content-Type":  "application/json",
			"User-Agent":    UserAgent,
			HeaderEvent:     EventJobCompleted,
			HeaderDelivery:  a.DeliveryID,
			HeaderTimestamp: wantTS[i],
			// The Standard Webhooks headers: the event id, the same
			// timestamp.
			HeaderWebhookID:        a.EventID,
			HeaderWebhookTimestamp: wantTS[i],
		} {
			if v := c.header.Values(name); len(v) != 1 || v[0] != want {
				t.Errorf("attempt %d: header %s = %q, want [%q]", i+1, name, v, want)
			}
		}
		now := t1
		if i == 1 {
			now = t2
		}
		if err := Verify(a.Secret, c.header, c.body, now); err != nil {
			t.Errorf("attempt %d: receiver-side Verify: %v", i+1, err)
		}
		if err := Verify("whsec_wrong", c.header, c.body, now); !errors.Is(err, ErrSignatureMismatch) {
			t.Errorf("attempt %d: Verify with wrong secret = %v, want ErrSignatureMismatch", i+1, err)
		}
		if v := c.header.Values(HeaderWebhookSignature); len(v) != 1 || !strings.HasPrefix(v[0], "v1,") || strings.Contains(v[0], " ") {
			t.Errorf("attempt %d: webhook-signature %q, want one v1, value", i+1, v)
		}
		if err := VerifyStandard(a.Secret, c.header, c.body, now); err != nil {
			t.Errorf("attempt %d: receiver-side VerifyStandard: %v", i+1, err)
		}
		if err := VerifyStandard("whsec_"+strings.Repeat("A", 40), c.header, c.body, now); !errors.Is(err, ErrSignatureMismatch) {
			t.Errorf("attempt %d: VerifyStandard with wrong secret = %v, want ErrSignatureMismatch", i+1, err)
		}
	}
	if got[0].header.Get(HeaderSignature) == got[1].header.Get(HeaderSignature) {
		t.Error("signature did not change between attempts with different timestamps")
	}
	// The first attempt's headers, replayed 10 minutes later, are refused.
	if err := Verify(a.Secret, got[0].header, got[0].body, t1.Add(10*time.Minute)); !errors.Is(err, ErrTimestampOutsideTolerance) {
		t.Errorf("replayed attempt: Verify = %v, want ErrTimestampOutsideTolerance", err)
	}
}

// TestSendRefusesToSignHalf: an attempt that cannot carry both signatures
// is not sent at all.
func TestSendRefusesToSignHalf(t *testing.T) {
	rc := &recorder{status: http.StatusOK}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	for _, tc := range []struct {
		name, secret, eventID string
	}{
		{"secret not base64", "whsec_x", "evt_1"},
		{"no event id", testSecret, ""},
	} {
		r := Send(context.Background(), NewClient(true), Attempt{URL: srv.URL, Secret: tc.secret, Event: EventJobCompleted,
			DeliveryID: "wd_1", EventID: tc.eventID, Body: []byte(`{}`)}, time.Now())
		if r.Success || r.StatusCode != 0 || !strings.HasPrefix(r.Err, "cannot sign the delivery: ") {
			t.Errorf("%s: %+v, want a failure before any request", tc.name, r)
		}
	}
	if n := len(rc.requests()); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}

func TestSendOutcomes(t *testing.T) {
	var followed sync.Mutex
	followedHits := 0
	mux := http.NewServeMux()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target", http.StatusFound)
	})
	mux.HandleFunc("/redirect307", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/target", func(w http.ResponseWriter, r *http.Request) {
		followed.Lock()
		followedHits++
		followed.Unlock()
	})
	mux.HandleFunc("/accepted", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	})
	mux.HandleFunc("/nocontent", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "boom\r\n\x1b[31mstack trace\x00 here")
	})
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusGone)
	})
	big := strings.Repeat("é", 2000) + strings.Repeat("x", 1<<20) // 1 MiB+ body
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, big)
	})
	mux.HandleFunc("/badutf8", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte("bad\xff\xfe utf8 \xc3"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	tests := []struct {
		path        string
		success     bool
		status      int
		errContains string
		excerpt     string // exact, when not "-"
	}{
		{"/accepted", true, 202, "", ""},
		{"/nocontent", true, 204, "", ""},
		{"/redirect", false, 302, "redirect not followed (status 302)", "-"},
		{"/redirect307", false, 307, "redirect not followed (status 307)", "-"},
		{"/error", false, 500, "status 500", "boom [31mstack trace here"},
		{"/gone", false, 410, "status 410", "gone"},
		{"/big", false, 502, "status 502", strings.Repeat("é", 100)},
		{"/badutf8", false, 400, "status 400", "bad\uFFFD\uFFFD utf8 \uFFFD"},
		{"/missing", false, 404, "status 404", "404 page not found"},
	}
	client := NewClient(true)
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			r := Send(context.Background(), client, Attempt{
				URL: srv.URL + tc.path, Secret: testSecret, Event: EventJobFailed,
				DeliveryID: "wd_x", EventID: "evt_x", Body: []byte(`{}`),
			}, time.Now())
			if r.Success != tc.success || r.StatusCode != tc.status {
				t.Fatalf("result %+v, want success=%v status=%d", r, tc.success, tc.status)
			}
			if tc.errContains == "" && r.Err != "" || !strings.Contains(r.Err, tc.errContains) {
				t.Errorf("Err %q, want it to contain %q", r.Err, tc.errContains)
			}
			if tc.excerpt != "-" && r.Excerpt != tc.excerpt {
				t.Errorf("Excerpt %q, want %q", r.Excerpt, tc.excerpt)
			}
			checkExcerpt(t, r.Excerpt)
		})
	}
	followed.Lock()
	defer followed.Unlock()
	if followedHits != 0 {
		t.Errorf("redirect target was requested %d times; redirects must not be followed", followedHits)
	}
}

func checkExcerpt(t *testing.T, s string) {
	t.Helper()
	if len(s) > 200 {
		t.Errorf("excerpt is %d bytes, limit 200", len(s))
	}
	if !utf8.ValidString(s) {
		t.Errorf("excerpt %q is not valid UTF-8", s)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			t.Errorf("excerpt %q contains control character %U", s, r)
		}
	}
}

func TestSendSlowReceiverTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := Send(ctx, NewClient(true), Attempt{URL: srv.URL, Secret: testSecret, Event: EventJobCompleted, DeliveryID: "wd_x", EventID: "evt_x", Body: []byte(`{}`)}, time.Now())
	elapsed := time.Since(start)
	if r.Success || r.StatusCode != 0 {
		t.Fatalf("result %+v, want a failure without status", r)
	}
	if r.Err != "timed out" {
		t.Errorf("Err %q, want %q", r.Err, "timed out")
	}
	if elapsed > 5*time.Second {
		t.Errorf("Send took %v despite a 150ms deadline", elapsed)
	}
}

func TestSendErrorsAreSanitised(t *testing.T) {
	// A listener that is closed at once gives "connection refused" on a port
	// that nobody listens on.
	srv := httptest.NewServer(http.NotFoundHandler())
	deadURL := srv.URL
	srv.Close()

	tests := []struct {
		name   string
		client *http.Client
		url    string
		want   string
	}{
		{"loopback refused by the dialer", NewClient(false), deadURL, "destination address not allowed (loopback)"},
		{"connection refused", NewClient(true), deadURL, "connection refused"},
		{"bad url", NewClient(true), "://nope", "invalid endpoint url"},
	}
	for _, tc := range tests {
		r := Send(context.Background(), tc.client, Attempt{URL: tc.url, Secret: testSecret, EventID: "evt_x", Body: []byte(`{}`)}, time.Now())
		if r.Success || r.Err != tc.want {
			t.Errorf("%s: result %+v, want Err %q", tc.name, r, tc.want)
		}
		if strings.Contains(r.Err, "127.0.0.1") || strings.ContainsAny(r.Err, "\r\n") {
			t.Errorf("%s: Err %q leaks the address or spans lines", tc.name, r.Err)
		}
	}
}

func TestExcerpt(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{"plain", 200, "plain"},
		{"  a\n\n\tb  ", 200, "a b"},
		{"line1\r\nline2", 200, "line1 line2"},
		{"abcdef", 3, "abc"},
		{"ab cdef", 3, "ab"},
		{"ééé", 5, "éé"}, // never cut inside a rune
		{"a\u2028b", 200, "a b"},
		{"\x00\x01\x7f", 200, ""},
		{"x\xffy", 200, "x\uFFFDy"},
	}
	for _, tc := range tests {
		if got := Excerpt([]byte(tc.in), tc.limit); got != tc.want {
			t.Errorf("Excerpt(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
	}
}

func TestSanitizeError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"address", &url.Error{Op: "Post", URL: "https://h/x?token=s3cret", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &AddressError{Addr: netip.MustParseAddr("10.0.0.7"), Class: ClassPrivate}}}, "destination address not allowed (private)"},
		{"unparseable dial address", fmt.Errorf("dial: %w", ErrAddressNotAllowed), "destination address not allowed"},
		{"deadline", &url.Error{Op: "Post", URL: "https://h/", Err: context.DeadlineExceeded}, "timed out"},
		{"canceled", &url.Error{Op: "Post", URL: "https://h/", Err: context.Canceled}, "canceled"},
		{"dns not found", &url.Error{Op: "Post", URL: "https://h/", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "h", IsNotFound: true}}}, "DNS lookup failed: host not found"},
		{"dns other", &net.DNSError{Err: "server misbehaving", Name: "h", Server: "10.0.0.53:53"}, "DNS lookup failed"},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, "connection refused"},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, "connection reset by receiver"},
		{"unreachable", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}, "receiver unreachable"},
		{"eof", &url.Error{Op: "Post", URL: "https://h/", Err: io.EOF}, "connection closed by receiver before a response"},
		{"other, multi-line", &url.Error{Op: "Post", URL: "https://h/?token=s3cret", Err: errors.New("weird\nthing\x00 happened")}, "request failed: weird thing happened"},
		{"other, long", errors.New(strings.Repeat("x", 500)), "request failed: " + strings.Repeat("x", 200-len("request failed: "))},
	}
	for _, tc := range tests {
		got := sanitizeError(tc.err)
		if got != tc.want {
			t.Errorf("%s: sanitizeError(%v) = %q, want %q", tc.name, tc.err, got, tc.want)
		}
		if len(got) > 200 || strings.Contains(got, "s3cret") || strings.Contains(got, "10.0.0") {
			t.Errorf("%s: %q is too long or leaks the URL or an address", tc.name, got)
		}
	}
}

func TestSendTLSFailures(t *testing.T) {
	// Self-signed, so not trusted by NewClient; its handshake error log is
	// expected noise.
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	plainSrv := httptest.NewServer(http.NotFoundHandler())
	defer plainSrv.Close()
	hangUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer hangUp.Close()

	tests := []struct {
		name, url, want string
	}{
		{"untrusted certificate", tlsSrv.URL, "TLS certificate verification failed"},
		{"https to a plain HTTP server", strings.Replace(plainSrv.URL, "http://", "https://", 1), "request failed: http: server gave HTTP response to HTTPS client"},
		{"receiver hangs up", hangUp.URL, "connection closed by receiver before a response"},
	}
	client := NewClient(true)
	for _, tc := range tests {
		r := Send(context.Background(), client, Attempt{URL: tc.url, Secret: testSecret, EventID: "evt_x", Body: []byte(`{}`)}, time.Now())
		if r.Success || r.StatusCode != 0 || r.Err != tc.want {
			t.Errorf("%s: result %+v, want Err %q", tc.name, r, tc.want)
		}
	}
}

// TestSanitizeErrorHidesResolution: what an internal name resolved to (its
// addresses, the DNS server asked) never reaches the stored error text,
// whatever shape the client's error has.
func TestSanitizeErrorHidesResolution(t *testing.T) {
	dialTo := func(ip string, inner error) error {
		return &url.Error{Op: "Post", URL: "https://db.example.com/hook", Err: &net.OpError{
			Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.ParseIP(ip), Port: 443}, Err: inner}}
	}
	tests := []struct {
		name string
		err  error
		want string // prefix
	}{
		{"dns server in a failure", &url.Error{Op: "Post", URL: "https://db.example.com/", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "server misbehaving", Name: "db.example.com", Server: "10.0.0.53:53"}}}, "DNS lookup failed"},
		{"dns not found", &net.DNSError{Err: "no such host", Name: "x.example.com", Server: "[fd00::53]:53", IsNotFound: true}, "DNS lookup failed: host not found"},
		{"refused address", dialTo("10.1.2.3", &AddressError{Addr: netip.MustParseAddr("10.1.2.3"), Class: "private"}), "destination address not allowed (private)"},
		{"unknown errno", dialTo("10.1.2.3", &os.SyscallError{Syscall: "connect", Err: syscall.EPERM}), "request failed"},
		{"address in an opaque message", dialTo("10.1.2.3", errors.New("odd failure talking to 10.1.2.3:443 via 10.0.0.53")), "request failed: odd failure talking to [address] via [address]"},
		{"v6 address in an opaque message", errors.New("no route to [fe80::1%eth0]:443, tried fd00::7."), "request failed: no route to [address], tried [address]."},
		{"addr error", &net.AddrError{Err: "unexpected address", Addr: "192.168.1.9"}, "request failed: address [address]: unexpected address"},
	}
	leaks := []string{"10.1.2.3", "10.0.0.53", "fd00::53", "fe80::1", "fd00::7", "192.168.1.9"}
	for _, tc := range tests {
		got := sanitizeError(tc.err)
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want prefix %q", tc.name, got, tc.want)
		}
		for _, l := range leaks {
			if strings.Contains(got, l) {
				t.Errorf("%s: %q reveals %s", tc.name, got, l)
			}
		}
	}
}

func TestRedactAddresses(t *testing.T) {
	tests := []struct{ in, want string }{
		{"deadline exceeded, cafe added", "deadline exceeded, cafe added"},
		{"dial 1.2.3.4:80: x", "dial [address]: x"},
		{"host 1.2 and 2001:db8::1", "host 1.2 and [address]"},
		{"version 1.2.3 build", "version 1.2.3 build"},
	}
	for _, tc := range tests {
		if got := redactAddresses(tc.in); got != tc.want {
			t.Errorf("redactAddresses(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
