package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/outbox"
	"github.com/locrisk/locrisk/internal/sqlite"
	"github.com/locrisk/locrisk/internal/view"
	"github.com/locrisk/locrisk/internal/webhook"
	"github.com/locrisk/locrisk/internal/webhookworker"
)

const webhooksPath = "/api/v1/webhooks"
const deliveriesPath = "/api/v1/webhooks/deliveries"

// whOptions shape a webhook test environment.
type whOptions struct {
	allowPrivate bool
	resolver     webhook.Resolver
	schedule     string // "" = no delivery worker
}

// newWebhookEnv is newEnv with the webhook outbox registered in the store,
// the server's webhook settings, and optionally a delivery worker running
// for the test's duration. The clock starts at the real time (deliveries
// are sent by the worker on the real clock); call e.sync before completing
// jobs so their times are current.
func newWebhookEnv(t *testing.T, o whOptions) *env {
	t.Helper()
	clock := &fakeClock{t: time.Now()}
	wake := webhookworker.NewSignal()
	path := filepath.Join(t.TempDir(), "test.db")
	st, err := sqlite.OpenWith(context.Background(), path,
		sqlite.Options{Now: clock.Now, OnJobFinal: []locrisk.JobFinalHook{outbox.Hook(wake.Notify)}, Secrets: testSecrets(t)})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	e := &env{t: t, clock: clock, st: st, path: path, logs: &syncBuffer{}}
	logger := slog.New(slog.NewJSONHandler(e.logs, nil))
	e.srv = New(Config{Logger: logger, Now: clock.Now, Webhooks: WebhookConfig{AllowPrivate: o.allowPrivate, Resolver: o.resolver, Wake: wake.Notify}},
		st, fakeLocator{}, func() { e.notified.Add(1) })
	e.h = e.srv.Handler()
	if o.schedule != "" {
		sched, err := webhook.ParseSchedule(o.schedule)
		if err != nil {
			t.Fatal(err)
		}
		w := webhookworker.New(st, webhookworker.Config{Schedule: sched, AllowPrivate: o.allowPrivate, Wake: wake,
			Logger: logger, PollInterval: 200 * time.Millisecond, DrainTimeout: time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { w.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	return e
}

// sync moves the test clock to the real time.
func (e *env) sync() { e.clock.Set(time.Now()) }

// received is one request a receiver got.
type received struct {
	method string
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a local webhook receiver; respond decides the answer to the
// n-th request (1-based).
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	got     []received
	respond func(n int) (int, string)
}

func newReceiver(t *testing.T, respond func(n int) (int, string)) *receiver {
	rc := &receiver{respond: respond}
	if rc.respond == nil {
		rc.respond = func(int) (int, string) { return http.StatusNoContent, "" }
	}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		validateEvent(t, r.Header, b)
		rc.mu.Lock()
		rc.got = append(rc.got, received{r.Method, r.Header.Clone(), b, time.Now()})
		n := len(rc.got)
		rc.mu.Unlock()
		status, body := rc.respond(n)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// createEndpoint posts an endpoint and insists on 201.
func (e *env) createEndpoint(key, name, url string, events ...string) view.CreatedWebhookEndpoint {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name, "url": url, "events": events})
	rec := e.do("POST", webhooksPath, key, string(body))
	if rec.Code != http.StatusCreated {
		e.t.Fatalf("create endpoint %s: status %d, body %s", url, rec.Code, rec.Body)
	}
	return decode[view.CreatedWebhookEndpoint](e.t, rec)
}

func (e *env) deliveries(key, query string) []view.WebhookDelivery {
	e.t.Helper()
	rec := e.do("GET", deliveriesPath+query, key, "")
	if rec.Code != http.StatusOK {
		e.t.Fatalf("list deliveries: %d %s", rec.Code, rec.Body)
	}
	return decode[view.WebhookDeliveryList](e.t, rec).Deliveries
}

func TestWebhookEndpointLifecycle(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true})
	key := e.allScopesKey(e.account(100, 100000))

	rec := e.do("POST", webhooksPath, key, `{"name": "Orders", "url": "https://hooks.example.com/locrisk?x=1",
		"events": ["report.job.failed", "report.job.completed", "report.job.failed"], "extra": true}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	if loc := rec.Header().Get("Location"); loc != "" {
		t.Errorf("Location = %q; no operation reads one endpoint, so none is sent", loc)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(rec.Body.Bytes(), &raw)
	var epRaw map[string]any
	json.Unmarshal(raw["endpoint"], &epRaw)
	if got := sortedKeys(raw); !slices.Equal(got, []string{"endpoint", "signingSecret"}) {
		t.Errorf("top-level keys %v", sortedKeys(raw))
	}
	if got := keysOf(epRaw); !slices.Equal(got, []string{"createdUtc", "disabledUtc", "events", "id", "isActive", "name", "url"}) {
		t.Errorf("endpoint keys %v", got)
	}
	created := decode[view.CreatedWebhookEndpoint](t, rec)
	ep := created.Endpoint
	if !ids.HasPrefix(ep.ID, ids.WebhookEndpoint) || ep.Name != "Orders" || ep.URL != "https://hooks.example.com/locrisk?x=1" ||
		!slices.Equal(ep.Events, []string{"report.job.failed", "report.job.completed"}) || !ep.IsActive ||
		ep.CreatedUTC != view.Time(e.clock.Now()) || ep.DisabledUTC != nil {
		t.Errorf("created endpoint %+v", ep)
	}
	if !strings.HasPrefix(created.SigningSecret, "whsec_") || len(created.SigningSecret) < len("whsec_")+32 {
		t.Errorf("signingSecret %q", created.SigningSecret)
	}

	e.clock.Advance(time.Second)
	second := e.createEndpoint(key, "Second", "https://hooks.example.com/2", "report.job.completed").Endpoint

	rec = e.do("GET", webhooksPath, key, "")
	if rec.Code != 200 {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	if strings.Contains(rec.Body.String(), created.SigningSecret) || strings.Contains(rec.Body.String(), "whsec_") {
		t.Error("the list shows a signing secret")
	}
	list := decode[view.WebhookEndpointList](t, rec).Endpoints
	if len(list) != 2 || list[0].ID != second.ID || list[1].ID != ep.ID {
		t.Fatalf("list = %+v, want newest first", list)
	}

	e.clock.Advance(time.Second)
	for i := range 2 { // DELETE twice: both 204
		rec = e.do("DELETE", webhooksPath+"/"+ep.ID, key, "")
		if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
			t.Fatalf("delete #%d: %d %q", i+1, rec.Code, rec.Body)
		}
	}
	list = decode[view.WebhookEndpointList](t, e.do("GET", webhooksPath, key, "")).Endpoints
	if len(list) != 2 || list[1].ID != ep.ID || list[1].IsActive || list[1].DisabledUTC == nil ||
		*list[1].DisabledUTC != view.Time(e.clock.Now()) || !list[0].IsActive {
		t.Errorf("after delete: %+v", list)
	}
	// The empty list is an empty array, not null.
	other := e.allScopesKey(e.account(100, 100000))
	if body := e.do("GET", webhooksPath, other, "").Body.String(); body != `{"endpoints":[],"limit":20,"nextCursor":null}`+"\n" {
		t.Errorf("empty list body %q", body)
	}
}

func sortedKeys(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// publicResolver is a fake DNS: every listed name resolves to its
// addresses, anything else fails.
type publicResolver map[string][]string

func (f publicResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	raw, ok := f[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, s := range raw {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func TestCreateWebhookValidation(t *testing.T) {
	res := publicResolver{
		"hooks.example.com":    {"93.184.216.34"},
		"internal.example.com": {"93.184.216.34", "10.1.2.3"},
		"meta.example.com":     {"169.254.169.254"},
		"vm":                   {"10.0.0.7"},
		"localhost":            {"127.0.0.1"},
	}
	// The one message of every refusal of a non-public host.
	const notPublic = "url " + webhook.ReasonNotPublic
	strict := newWebhookEnv(t, whOptions{resolver: res})
	lax := newWebhookEnv(t, whOptions{allowPrivate: true, resolver: res})
	body := func(name, url string, events string) string {
		n, _ := json.Marshal(name)
		u, _ := json.Marshal(url)
		return fmt.Sprintf(`{"name": %s, "url": %s, "events": %s}`, n, u, events)
	}
	good := `["report.job.completed"]`
	longURL := "https://hooks.example.com/" + strings.Repeat("a", 2048-len("https://hooks.example.com/"))
	pad := func(total int) string {
		head := `{"name": "n", "url": "https://hooks.example.com/", "events": ["report.job.failed"], "pad": "`
		return head + strings.Repeat("x", total-len(head)-2) + `"}`
	}
	tests := []struct {
		name    string
		lax     bool // run on the server with --webhook-allow-private
		body    string
		status  int
		code    string
		message string // substring of the message, if set
	}{
		{"valid", false, body("n", "https://hooks.example.com/h", good), 201, "", ""},
		{"url of exactly 2048 characters", false, body("n", longURL, good), 201, "", ""},
		{"name of 100 characters", false, body(strings.Repeat("é", 100), "https://hooks.example.com/", good), 201, "", ""},
		{"public IP literal", false, body("n", "https://93.184.216.34:8443/h", good), 201, "", ""},
		{"body of exactly 1 MiB", false, pad(1 << 20), 201, "", ""},
		{"body over 1 MiB", false, pad(1<<20 + 1), 413, "payload_too_large", ""},
		{"empty body", false, ``, 400, "invalid_request", ""},
		{"array body", false, `[]`, 400, "invalid_request", ""},
		{"null body", false, `null`, 400, "invalid_request", ""},
		{"malformed JSON", false, `{"name": "n",`, 400, "invalid_request", ""},

		{"name missing", false, `{"url": "https://hooks.example.com/", "events": ["report.job.failed"]}`, 400, "invalid_name", ""},
		{"name empty", false, body("", "https://hooks.example.com/", good), 400, "invalid_name", ""},
		{"name blank", false, body("   ", "https://hooks.example.com/", good), 400, "invalid_name", ""},
		{"name of 101 characters", false, body(strings.Repeat("é", 101), "https://hooks.example.com/", good), 400, "invalid_name", ""},
		{"name with a newline", false, body("a\nb", "https://hooks.example.com/", good), 400, "invalid_name", ""},
		{"name not a string", false, `{"name": 5, "url": "https://hooks.example.com/", "events": ["report.job.failed"]}`, 400, "invalid_name", ""},
		{"name null", false, `{"name": null, "url": "https://hooks.example.com/", "events": ["report.job.failed"]}`, 400, "invalid_name", ""},
		{"name checked before url and events", false, body("", "ftp://x", `[]`), 400, "invalid_name", ""},

		{"url missing", false, `{"name": "n", "events": ["report.job.failed"]}`, 400, "invalid_url", ""},
		{"url not a string", false, `{"name": "n", "url": ["https://hooks.example.com/"], "events": ["report.job.failed"]}`, 400, "invalid_url", ""},
		{"url empty", false, body("n", "", good), 400, "invalid_url", ""},
		{"url relative", false, body("n", "/hooks", good), 400, "invalid_url", ""},
		{"url of 2049 characters", false, body("n", longURL+"a", good), 400, "invalid_url", "2048"},
		{"http without allow-private", false, body("n", "http://example.com/h", good), 400, "invalid_url", "https"},
		{"ftp even with allow-private", true, body("n", "ftp://example.com/h", good), 400, "invalid_url", "https"},
		{"credentials", false, body("n", "https://user:pw@hooks.example.com/", good), 400, "invalid_url", "credentials"},
		{"credentials with allow-private", true, body("n", "http://user:pw@127.0.0.1/", good), 400, "invalid_url", "credentials"},
		{"fragment", false, body("n", "https://hooks.example.com/#x", good), 400, "invalid_url", "fragment"},
		{"loopback", false, body("n", "https://127.0.0.1/h", good), 400, "invalid_url", notPublic},
		{"private 10/8", false, body("n", "https://10.0.0.1/h", good), 400, "invalid_url", notPublic},
		{"private 172.16/12", false, body("n", "https://172.16.0.1/h", good), 400, "invalid_url", notPublic},
		{"private 192.168/16", false, body("n", "https://192.168.1.1/h", good), 400, "invalid_url", notPublic},
		{"metadata link-local", false, body("n", "https://169.254.169.254/latest", good), 400, "invalid_url", notPublic},
		{"CGNAT", false, body("n", "https://100.64.0.1/h", good), 400, "invalid_url", notPublic},
		{"multicast", false, body("n", "https://224.0.0.1/h", good), 400, "invalid_url", notPublic},
		{"unspecified", false, body("n", "https://0.0.0.0/h", good), 400, "invalid_url", notPublic},
		{"IPv6 loopback", false, body("n", "https://[::1]/h", good), 400, "invalid_url", notPublic},
		{"IPv6 link-local", false, body("n", "https://[fe80::1]/h", good), 400, "invalid_url", notPublic},
		{"IPv4-mapped IPv6 loopback", false, body("n", "https://[::ffff:127.0.0.1]/h", good), 400, "invalid_url", notPublic},
		{"host resolving to a private address", false, body("n", "https://internal.example.com/h", good), 400, "invalid_url", notPublic},
		{"host resolving to the metadata address", false, body("n", "https://meta.example.com/h", good), 400, "invalid_url", notPublic},
		// Every non-public host gets the one answer, whatever it resolves to
		// here: the message does not tell which internal names exist.
		{"internal name that resolves", false, body("n", "https://vm/h", good), 400, "invalid_url", notPublic},
		{"internal name that does not resolve", false, body("n", "https://nosuchhost/h", good), 400, "invalid_url", notPublic},
		{"localhost", false, body("n", "https://localhost/h", good), 400, "invalid_url", notPublic},
		{"repeated trailing dots", false, body("n", "https://vm../h", good), 400, "invalid_url", "valid domain name"},
		{"repeated trailing dots after an internal suffix", false, body("n", "https://foo.local../h", good), 400, "invalid_url", "valid domain name"},
		{"leading dot", false, body("n", "https://.example.com/h", good), 400, "invalid_url", "valid domain name"},
		{"host that does not resolve (checked when dialled)", false, body("n", "https://nowhere.example.com/h", good), 201, "", ""},
		{"loopback with allow-private", true, body("n", "http://127.0.0.1:9/h", good), 201, "", ""},
		{"private name with allow-private", true, body("n", "https://internal.example.com/h", good), 201, "", ""},

		{"events missing", false, `{"name": "n", "url": "https://hooks.example.com/"}`, 400, "invalid_events", ""},
		{"events empty", false, body("n", "https://hooks.example.com/", `[]`), 400, "invalid_events", ""},
		{"events null", false, body("n", "https://hooks.example.com/", `null`), 400, "invalid_events", ""},
		{"events a string", false, body("n", "https://hooks.example.com/", `"report.job.completed"`), 400, "invalid_events", ""},
		{"events with a number", false, body("n", "https://hooks.example.com/", `[1]`), 400, "invalid_events", ""},
		{"events with null", false, body("n", "https://hooks.example.com/", `["report.job.failed", null]`), 400, "invalid_events", ""},
		{"unknown event", false, body("n", "https://hooks.example.com/", `["report.job.completed", "report.job.started"]`), 400, "invalid_events", "report.job.started"},
		{"event name wrong case", false, body("n", "https://hooks.example.com/", `["Report.Job.Completed"]`), 400, "invalid_events", ""},
		{"url checked before events", false, body("n", "https://10.0.0.1/", `[]`), 400, "invalid_url", ""},
	}
	keys := map[bool]string{
		false: strict.allScopesKey(strict.account(100, 100000)),
		true:  lax.allScopesKey(lax.account(100, 100000)),
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := strict
			if tc.lax {
				e = lax
			}
			rec := e.do("POST", webhooksPath, keys[tc.lax], tc.body)
			if tc.code == "" {
				if rec.Code != tc.status {
					t.Fatalf("status %d, want %d; %s", rec.Code, tc.status, rec.Body)
				}
				return
			}
			wantError(t, rec, tc.status, tc.code)
			msg := decode[errorBody](t, rec).Error.Message
			if tc.message != "" && !strings.Contains(msg, tc.message) {
				t.Errorf("message %q does not mention %q", msg, tc.message)
			}
			if tc.message == notPublic && msg != notPublic {
				t.Errorf("message %q, want exactly %q", msg, notPublic)
			}
			// A refusal never tells the caller what a name resolved to.
			for _, leak := range []string{"10.1.2.3", "169.254.169.254"} {
				if strings.Contains(msg, leak) && !strings.Contains(tc.body, leak) {
					t.Errorf("message %q reveals %s", msg, leak)
				}
			}
		})
	}
}

func TestWebhookEndpointLimitAPI(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true})
	key := e.allScopesKey(e.account(100, 100000))
	var first string
	for i := range locrisk.MaxActiveEndpoints {
		ep := e.createEndpoint(key, fmt.Sprint("e", i), "https://hooks.example.com/", "report.job.completed")
		if i == 0 {
			first = ep.Endpoint.ID
		}
	}
	body := `{"name": "one too many", "url": "https://hooks.example.com/", "events": ["report.job.completed"]}`
	wantError(t, e.do("POST", webhooksPath, key, body), 400, "endpoint_limit_reached")
	// Validation comes first: a bad body is invalid_*, not the limit.
	wantError(t, e.do("POST", webhooksPath, key, `{"name": "x", "url": "ftp://x", "events": ["report.job.completed"]}`), 400, "invalid_url")
	if rec := e.do("DELETE", webhooksPath+"/"+first, key, ""); rec.Code != 204 {
		t.Fatalf("delete: %d", rec.Code)
	}
	if rec := e.do("POST", webhooksPath, key, body); rec.Code != 201 {
		t.Fatalf("create after disabling one: %d %s", rec.Code, rec.Body)
	}
	if n := len(decode[view.WebhookEndpointList](t, e.do("GET", webhooksPath+"?limit=100", key, "")).Endpoints); n != locrisk.MaxActiveEndpoints+1 {
		t.Errorf("list has %d endpoints, want %d (disabled ones included)", n, locrisk.MaxActiveEndpoints+1)
	}
	wantError(t, e.do("POST", webhooksPath, key, body), 400, "endpoint_limit_reached")
}

func TestWebhookNotFoundAndIsolation(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true})
	keyA := e.allScopesKey(e.account(100, 100000))
	keyB := e.allScopesKey(e.account(100, 100000))
	epA := e.createEndpoint(keyA, "a", "https://hooks.example.com/a", "report.job.completed").Endpoint

	// B sees nothing of A's and cannot touch it.
	if list := decode[view.WebhookEndpointList](t, e.do("GET", webhooksPath, keyB, "")).Endpoints; len(list) != 0 {
		t.Errorf("B lists %d endpoints", len(list))
	}
	wantError(t, e.do("DELETE", webhooksPath+"/"+epA.ID, keyB, ""), 404, "webhook_endpoint_not_found")
	wantError(t, e.do("GET", deliveriesPath+"?endpointId="+epA.ID, keyB, ""), 404, "webhook_endpoint_not_found")
	if list := decode[view.WebhookEndpointList](t, e.do("GET", webhooksPath, keyA, "")).Endpoints; len(list) != 1 || !list[0].IsActive {
		t.Errorf("A's endpoint after B's DELETE: %+v", list)
	}

	for _, id := range []string{ids.New(ids.WebhookEndpoint), "we_x", "deliveries", ids.New(ids.Job), "we_" + strings.Repeat("a", 100)} {
		wantError(t, e.do("DELETE", webhooksPath+"/"+id, keyA, ""), 404, "webhook_endpoint_not_found")
	}
	for _, q := range []string{"?endpointId=" + ids.New(ids.WebhookEndpoint), "?endpointId=", "?endpointId=we_x", "?endpointId=" + ids.New(ids.Job)} {
		wantError(t, e.do("GET", deliveriesPath+q, keyA, ""), 404, "webhook_endpoint_not_found")
	}
	for _, q := range []string{"?limit=0", "?limit=101", "?limit=-1", "?limit=abc", "?limit=", "?limit=1.5", "?limit=+5",
		"?limit=0&endpointId=" + ids.New(ids.WebhookEndpoint)} { // 400 before 404
		wantError(t, e.do("GET", deliveriesPath+q, keyA, ""), 400, "invalid_limit")
	}
	wantError(t, e.do("GET", deliveriesPath+"?limit=%zz", keyA, ""), 400, "invalid_request")
	for _, q := range []string{"", "?limit=1", "?limit=100", "?endpointId=" + epA.ID, "?unknown=1"} {
		rec := e.do("GET", deliveriesPath+q, keyA, "")
		if rec.Code != 200 || rec.Body.String() != `{"deliveries":[]}`+"\n" {
			t.Errorf("GET deliveries%s: %d %s", q, rec.Code, rec.Body)
		}
	}
	// A disabled endpoint can still be used as a filter.
	e.do("DELETE", webhooksPath+"/"+epA.ID, keyA, "")
	if rec := e.do("GET", deliveriesPath+"?endpointId="+epA.ID, keyA, ""); rec.Code != 200 {
		t.Errorf("filter by a disabled endpoint: %d", rec.Code)
	}
}

// TestWebhookDeliveryEndToEnd: a completed and a failed job each reach the
// receiver once, signed, with the headers of docs/api.md (Delivery and
// signing), and with data.job byte for byte what GET shows for the job.
func TestWebhookDeliveryEndToEnd(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true, schedule: "1h"})
	key := e.allScopesKey(e.account(100, 100000))
	rc := newReceiver(t, nil)
	created := e.createEndpoint(key, "e2e", rc.srv.URL+"/hook?src=locrisk", "report.job.completed", "report.job.failed")

	done := e.createJob(key, 37.77, -122.42)
	failed := e.createJob(key, 41.88, -87.63)
	e.sync()
	e.complete(done.JobID)
	doneView := e.do("GET", jobsPath+"/"+done.JobID, key, "").Body.Bytes()
	time.Sleep(2 * time.Millisecond) // so the second event is the newer one
	e.sync()
	e.fail(failed.JobID, true)
	failedView := e.do("GET", jobsPath+"/"+failed.JobID, key, "").Body.Bytes()
	waitFor(t, "two deliveries", func() bool { return len(rc.requests()) >= 2 })
	time.Sleep(50 * time.Millisecond)
	got := rc.requests()
	if len(got) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(got))
	}

	list := e.deliveries(key, "")
	if len(list) != 2 {
		t.Fatalf("deliveries list has %d entries, want 2", len(list))
	}
	byJob := map[string]view.WebhookDelivery{}
	for _, d := range list {
		if d.JobID == nil {
			t.Fatalf("job event delivery without a jobId: %+v", d)
		}
		byJob[*d.JobID] = d
	}
	wantViews := map[string][]byte{done.JobID: doneView, failed.JobID: failedView}
	wantTypes := map[string]string{done.JobID: "report.job.completed", failed.JobID: "report.job.failed"}
	for _, r := range got {
		if r.method != http.MethodPost {
			t.Errorf("method %s", r.method)
		}
		var ev struct {
			ID, Type, APIVersion, CreatedUTC string
			Data                             map[string]json.RawMessage
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(r.body, &top); err != nil {
			t.Fatalf("body %s: %v", r.body, err)
		}
		if k := sortedKeys(top); !slices.Equal(k, []string{"apiVersion", "createdUtc", "data", "id", "type"}) {
			t.Errorf("event keys %v", k)
		}
		json.Unmarshal(r.body, &ev)
		var job view.Job
		if err := json.Unmarshal(ev.Data["job"], &job); err != nil || len(ev.Data) != 1 {
			t.Fatalf("data %s: %v", top["data"], err)
		}
		want := bytes.TrimSuffix(wantViews[job.JobID], []byte("\n"))
		if !bytes.Equal(ev.Data["job"], want) {
			t.Errorf("data.job\n%s\nGET shows\n%s", ev.Data["job"], want)
		}
		d := byJob[job.JobID]
		if !ids.HasPrefix(ev.ID, ids.Event) || ev.Type != wantTypes[job.JobID] || ev.APIVersion != "v1" ||
			ev.CreatedUTC != *job.CompletedUTC || d.EventID != ev.ID {
			t.Errorf("event %+v (delivery %+v)", ev, d)
		}
		for name, want := range map[string]string{
			"Content-Type":     "application/json",
			"Service-Event":    wantTypes[job.JobID],
			"Service-Delivery": d.ID,
		} {
			if v := r.header.Values(name); len(v) != 1 || v[0] != want {
				t.Errorf("%s = %q, want %q", name, v, want)
			}
		}
		if !ids.HasPrefix(r.header.Get("Service-Delivery"), ids.Delivery) {
			t.Errorf("Service-Delivery %q", r.header.Get("Service-Delivery"))
		}
		if err := webhook.Verify(created.SigningSecret, r.header, r.body, r.at); err != nil {
			t.Errorf("Verify: %v", err)
		}
		// The Standard Webhooks headers too, and both schemes with the
		// importable verifier.
		verified(t, created.SigningSecret, r)
		if r.header.Get("webhook-id") != d.EventID {
			t.Errorf("webhook-id %q, want the event id %s", r.header.Get("webhook-id"), d.EventID)
		}
		stdTampered := bytes.Replace(r.body, []byte(`"v1"`), []byte(`"v2"`), 1)
		if err := webhook.VerifyStandard(created.SigningSecret, r.header, stdTampered, r.at); !errors.Is(err, webhook.ErrSignatureMismatch) {
			t.Errorf("VerifyStandard of a tampered body: %v", err)
		}
		if err := webhook.VerifyStandard(created.SigningSecret, r.header, r.body, r.at.Add(6*time.Minute)); !errors.Is(err, webhook.ErrTimestampOutsideTolerance) {
			t.Errorf("VerifyStandard 6 minutes later: %v", err)
		}
		if err := webhook.Verify("whsec_wrong", r.header, r.body, r.at); !errors.Is(err, webhook.ErrSignatureMismatch) {
			t.Errorf("Verify with a wrong secret: %v", err)
		}
		tampered := bytes.Replace(r.body, []byte(`"v1"`), []byte(`"v2"`), 1)
		if err := webhook.Verify(created.SigningSecret, r.header, tampered, r.at); !errors.Is(err, webhook.ErrSignatureMismatch) {
			t.Errorf("Verify of a tampered body: %v", err)
		}
		if err := webhook.Verify(created.SigningSecret, r.header, r.body, r.at.Add(6*time.Minute)); !errors.Is(err, webhook.ErrTimestampOutsideTolerance) {
			t.Errorf("Verify 6 minutes later: %v", err)
		}
		// Signed when sent, not when the event was written.
		if ts := r.header.Get("Service-Timestamp"); ts != fmt.Sprint(r.at.Unix()) && ts != fmt.Sprint(r.at.Unix()-1) {
			t.Errorf("Service-Timestamp %s, received at %d", ts, r.at.Unix())
		}
		if d.EndpointID != created.Endpoint.ID || d.Event != wantTypes[job.JobID] || d.Status != "succeeded" ||
			d.Attempts != 1 || d.ResponseStatus == nil || *d.ResponseStatus != 204 || d.Error != nil ||
			d.LastAttemptUTC == nil || d.NextAttemptUTC != nil || d.DeliveredUTC == nil || d.CreatedUTC != *job.CompletedUTC {
			t.Errorf("delivery %+v", d)
		}
	}
	// The log has one line per attempt and never the secret.
	logs := e.logs.String()
	if n := strings.Count(logs, `"msg":"webhook attempt"`); n != 2 {
		t.Errorf("%d attempt log lines, want 2", n)
	}
	if strings.Contains(logs, created.SigningSecret) {
		t.Error("the log contains the signing secret")
	}
	// Exact field set of a delivery.
	var raw map[string][]map[string]any
	json.Unmarshal(e.do("GET", deliveriesPath+"?limit=1", key, "").Body.Bytes(), &raw)
	if len(raw["deliveries"]) != 1 {
		t.Fatalf("limit=1 gave %d deliveries", len(raw["deliveries"]))
	}
	if k := keysOf(raw["deliveries"][0]); !slices.Equal(k, []string{"attempts", "createdUtc", "deliveredUtc", "endpointId", "error",
		"event", "eventId", "id", "jobId", "lastAttemptUtc", "nextAttemptUtc", "responseStatus", "status"}) {
		t.Errorf("delivery keys %v", k)
	}
	if raw["deliveries"][0]["jobId"] != failed.JobID {
		t.Errorf("newest delivery is for %v, want the failed job (completed later)", raw["deliveries"][0]["jobId"])
	}
}

// TestWebhookRetries: a receiver that fails twice gets the event a third
// time; the delivery id stays, the signature is fresh each time.
func TestWebhookRetries(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true, schedule: "20ms,1s"})
	key := e.allScopesKey(e.account(100, 100000))
	rc := newReceiver(t, func(n int) (int, string) {
		if n <= 2 {
			return http.StatusInternalServerError, "database\r\nunavailable \x1b[31m" + strings.Repeat("x", 500)
		}
		return http.StatusOK, "thanks"
	})
	created := e.createEndpoint(key, "flaky", rc.srv.URL, "report.job.completed")
	job := e.createJob(key, 37.77, -122.42)
	e.sync()
	e.complete(job.JobID)

	// After the first failure the delivery is pending with a next attempt.
	waitFor(t, "first attempt recorded", func() bool {
		ds := e.deliveries(key, "")
		return len(ds) == 1 && ds[0].Attempts >= 1
	})
	waitFor(t, "three attempts", func() bool { return len(rc.requests()) >= 3 })
	waitFor(t, "success recorded", func() bool { return e.deliveries(key, "")[0].Status == "succeeded" })
	got := rc.requests()
	if len(got) != 3 {
		t.Fatalf("receiver got %d requests, want 3", len(got))
	}
	id := got[0].header.Get("Service-Delivery")
	msgID := got[0].header.Get("webhook-id")
	for i, r := range got {
		if r.header.Get("Service-Delivery") != id {
			t.Errorf("attempt %d: Service-Delivery %s, first was %s", i+1, r.header.Get("Service-Delivery"), id)
		}
		// The Standard Webhooks message id does not change on a retry.
		if r.header.Get("webhook-id") != msgID {
			t.Errorf("attempt %d: webhook-id %s, first was %s", i+1, r.header.Get("webhook-id"), msgID)
		}
		if err := webhook.Verify(created.SigningSecret, r.header, r.body, r.at); err != nil {
			t.Errorf("attempt %d: Verify: %v", i+1, err)
		}
		verified(t, created.SigningSecret, r)
		if !bytes.Equal(r.body, got[0].body) {
			t.Errorf("attempt %d: body differs from the first", i+1)
		}
	}
	if got[0].header.Get("Service-Timestamp") == got[2].header.Get("Service-Timestamp") ||
		got[0].header.Get("Service-Signature") == got[2].header.Get("Service-Signature") ||
		got[0].header.Get("webhook-signature") == got[2].header.Get("webhook-signature") {
		t.Error("attempts 1 and 3 (over a second apart) carry the same timestamp or signature")
	}
	if gap := got[1].at.Sub(got[0].at); gap < 20*time.Millisecond {
		t.Errorf("second attempt %v after the first, schedule says 20ms", gap)
	}
	if gap := got[2].at.Sub(got[1].at); gap < time.Second {
		t.Errorf("third attempt %v after the second, schedule says 1s", gap)
	}
	d := e.deliveries(key, "")[0]
	if d.ID != id || d.Attempts != 3 || d.Status != "succeeded" || *d.ResponseStatus != 200 || d.Error != nil || d.DeliveredUTC == nil {
		t.Errorf("delivery %+v", d)
	}
}

func TestWebhookScheduleExhausted(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true, schedule: "20ms,40ms"})
	key := e.allScopesKey(e.account(100, 100000))
	rc := newReceiver(t, func(n int) (int, string) { return http.StatusBadGateway, "upstream\nbroken" })
	e.createEndpoint(key, "down", rc.srv.URL, "report.job.failed")
	job := e.createJob(key, 37.77, -122.42)
	e.sync()
	e.fail(job.JobID, false)
	waitFor(t, "delivery failed", func() bool {
		ds := e.deliveries(key, "")
		return len(ds) == 1 && ds[0].Status == "failed"
	})
	time.Sleep(100 * time.Millisecond) // nothing more comes
	if n := len(rc.requests()); n != 3 {
		t.Errorf("receiver got %d requests, want 3 (2 delays = 3 attempts)", n)
	}
	d := e.deliveries(key, "")[0]
	if d.Attempts != 3 || *d.ResponseStatus != 502 || d.Error == nil || d.NextAttemptUTC != nil || d.DeliveredUTC != nil ||
		*d.Error != "receiver responded with status 502: upstream broken" {
		t.Errorf("delivery %+v", d)
	}
}

func TestWebhookErrorExcerptIsShortAndSanitised(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true, schedule: "1h"})
	key := e.allScopesKey(e.account(100, 100000))
	rc := newReceiver(t, func(n int) (int, string) {
		return http.StatusInternalServerError, "line1\r\nline2\x00\x1b[31m" + strings.Repeat("secret-data ", 1000)
	})
	e.createEndpoint(key, "noisy", rc.srv.URL, "report.job.completed")
	job := e.createJob(key, 37.77, -122.42)
	e.sync()
	e.complete(job.JobID)
	waitFor(t, "attempt recorded", func() bool { return e.deliveries(key, "")[0].Attempts == 1 })
	d := e.deliveries(key, "")[0]
	if d.Status != "pending" || d.NextAttemptUTC == nil || d.Error == nil {
		t.Fatalf("delivery %+v", d)
	}
	msg := *d.Error
	if len(msg) > 200 || strings.ContainsAny(msg, "\r\n\x00\x1b") || !strings.HasPrefix(msg, "receiver responded with status 500: line1 line2") {
		t.Errorf("error %q is not a short single-line excerpt", msg)
	}
}

// TestWebhookNoDeliveryToDisabledUnsubscribedOrOthers: only the active,
// subscribed endpoint of the job's own account is called.
func TestWebhookNoDeliveryToDisabledUnsubscribedOrOthers(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true, schedule: "1h"})
	keyA := e.allScopesKey(e.account(100, 100000))
	keyB := e.allScopesKey(e.account(100, 100000))
	wanted := newReceiver(t, nil)
	disabledRc := newReceiver(t, nil)
	unsubscribed := newReceiver(t, nil)
	otherAccount := newReceiver(t, nil)
	e.createEndpoint(keyA, "completed only", wanted.srv.URL, "report.job.completed")
	dis := e.createEndpoint(keyA, "disabled", disabledRc.srv.URL, "report.job.completed", "report.job.failed").Endpoint
	e.createEndpoint(keyA, "failed only", unsubscribed.srv.URL, "report.job.failed")
	e.createEndpoint(keyB, "B", otherAccount.srv.URL, "report.job.completed", "report.job.failed")
	if rec := e.do("DELETE", webhooksPath+"/"+dis.ID, keyA, ""); rec.Code != 204 {
		t.Fatal(rec.Code)
	}
	job := e.createJob(keyA, 37.77, -122.42)
	e.sync()
	e.complete(job.JobID)
	waitFor(t, "the subscribed endpoint", func() bool { return len(wanted.requests()) == 1 })
	time.Sleep(150 * time.Millisecond)
	for name, rc := range map[string]*receiver{"disabled": disabledRc, "unsubscribed": unsubscribed, "other account": otherAccount} {
		if n := len(rc.requests()); n != 0 {
			t.Errorf("%s endpoint got %d requests", name, n)
		}
	}
	if n := len(wanted.requests()); n != 1 {
		t.Errorf("subscribed endpoint got %d requests, want 1", n)
	}
	if ds := e.deliveries(keyA, ""); len(ds) != 1 {
		t.Errorf("A has %d deliveries, want 1", len(ds))
	}
	if ds := e.deliveries(keyB, ""); len(ds) != 0 {
		t.Errorf("B has %d deliveries, want 0", len(ds))
	}
}

// TestWebhookDeleteStopsPendingDeliveries: a delivery waiting for its retry
// is failed by DELETE and never sent again.
func TestWebhookDeleteStopsPendingDeliveries(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true, schedule: "300ms"})
	key := e.allScopesKey(e.account(100, 100000))
	rc := newReceiver(t, func(int) (int, string) { return http.StatusServiceUnavailable, "" })
	ep := e.createEndpoint(key, "x", rc.srv.URL, "report.job.completed").Endpoint
	job := e.createJob(key, 37.77, -122.42)
	e.sync()
	e.complete(job.JobID)
	waitFor(t, "first attempt recorded", func() bool { return e.deliveries(key, "")[0].Attempts == 1 })
	if rec := e.do("DELETE", webhooksPath+"/"+ep.ID, key, ""); rec.Code != 204 {
		t.Fatal(rec.Code)
	}
	hits := len(rc.requests())
	d := e.deliveries(key, "")[0]
	if d.Status != "failed" || d.Error == nil || *d.Error != locrisk.ErrorEndpointDisabled || d.NextAttemptUTC != nil || d.Attempts != 1 {
		t.Errorf("delivery after DELETE: %+v", d)
	}
	time.Sleep(500 * time.Millisecond) // past the retry's due time
	if n := len(rc.requests()); n != hits || n != 1 {
		t.Errorf("receiver got %d requests (had %d at DELETE), want 1", n, hits)
	}
	// A job completed after the DELETE makes no delivery at all.
	job2 := e.createJob(key, 37.77, -122.42)
	e.sync()
	e.complete(job2.JobID)
	if ds := e.deliveries(key, ""); len(ds) != 1 {
		t.Errorf("%d deliveries after a job completed post-DELETE, want 1", len(ds))
	}
}

// TestWebhookDNSRebinding: a host that resolved to a public address when the
// endpoint was created, but to loopback when delivering, is refused at
// connect time.
func TestWebhookDNSRebinding(t *testing.T) {
	rc := newReceiver(t, nil)
	port := rc.srv.URL[strings.LastIndex(rc.srv.URL, ":")+1:]
	// The endpoint stands for one whose host resolved to a public address
	// when it was created and has since been rebound to loopback:
	// localhost, which the real resolver the worker uses reads as
	// 127.0.0.1. Creation refuses that name (webhook.InternalName), as
	// checked here, so the endpoint is made with the store, past the API's
	// URL rules, as the rebinding slipped past them.
	e := newWebhookEnv(t, whOptions{schedule: "1h"})
	acct := e.account(100, 100000)
	key := e.allScopesKey(acct)
	hook := "https://localhost:" + port + "/hook"
	wantError(t, e.do("POST", webhooksPath, key, `{"name": "rebind", "url": "`+hook+`", "events": ["report.job.completed"]}`),
		http.StatusBadRequest, "invalid_url")
	if _, _, err := e.st.CreateWebhookEndpoint(context.Background(), locrisk.NewWebhookEndpoint{AccountID: acct.ID, Name: "rebind",
		URL: hook, Events: []string{"report.job.completed"}}, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	job := e.createJob(key, 37.77, -122.42)
	e.sync()
	e.complete(job.JobID)
	waitFor(t, "attempt recorded", func() bool { return e.deliveries(key, "")[0].Attempts == 1 })
	d := e.deliveries(key, "")[0]
	if d.Status != "pending" || d.ResponseStatus != nil || d.Error == nil || !strings.HasPrefix(*d.Error, "destination address not allowed") {
		t.Errorf("delivery %+v", d)
	}
	if strings.Contains(*d.Error, "127.0.0.1") {
		t.Errorf("error %q names the address", *d.Error)
	}
	if n := len(rc.requests()); n != 0 {
		t.Errorf("receiver got %d requests", n)
	}
}
