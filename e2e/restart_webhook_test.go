package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk/webhookverify"
)

// TestWebhookAfterKill kills the server (SIGKILL) while a webhook attempt
// is in flight, so the delivery's lease is left in the database, and
// restarts it on the same file with one attempt in flight allowed per
// endpoint and per account. Before, the dead server's lease counted
// against both limits until it expired (30 s): neither the cut-off
// delivery nor a new one to the same receiver left the restarted server
// before then. Now the restarted server hands its predecessor's leases
// back before its workers start (store.ReleaseLeftLeases), and both leave
// within 2 s of its start, so that a receiver waits for a restart, not
// for a dead server's lease to run out.
func TestWebhookAfterKill(t *testing.T) {
	needSignals(t)
	t.Parallel()
	// The receiver holds the first attempt until the client goes away (the
	// killed server), then answers every attempt at once.
	type hit struct {
		delivery string
		at       time.Time
		header   http.Header
		body     []byte
	}
	var (
		mu   sync.Mutex
		hits []hit
	)
	inFlight, quit := make(chan struct{}, 1), make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read to the end: only then does net/http notice the client
		// going away (and end r's context).
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		hits = append(hits, hit{r.Header.Get("Service-Delivery"), time.Now(), r.Header.Clone(), body})
		first := len(hits) == 1
		mu.Unlock()
		if first {
			inFlight <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-quit:
			}
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	defer close(quit)
	// arrived returns when delivery id first arrived after since.
	arrived := func(id string, since time.Time) (time.Time, bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, h := range hits {
			if h.delivery == id && h.at.After(since) {
				return h.at, true
			}
		}
		return time.Time{}, false
	}

	db := filepath.Join(t.TempDir(), "webhooks.db")
	_, key := newAccountKey(t, db, "webhooks:read,webhooks:write")
	flags := []string{"--webhook-allow-private", "--webhook-per-endpoint", "1", "--webhook-per-account", "1"}
	first := startServer(t, nil, serveArgs(db, flags...)...)
	r := first.do(t, key, http.MethodPost, "/api/v1/webhooks", map[string]any{
		"name": "receiver", "url": receiver.URL, "events": []string{"report.job.completed"}})
	if r.status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", r.status, r.body)
	}
	endpoint := r.object(t)["endpoint"].(map[string]any)["id"].(string)
	secret := r.object(t)["signingSecret"].(string)
	testEvent := func(s *server) string {
		t.Helper()
		r := s.do(t, key, http.MethodPost, "/api/v1/webhooks/"+endpoint+"/test", nil)
		if r.status != http.StatusAccepted {
			t.Fatalf("test event: %d %s", r.status, r.body)
		}
		return r.object(t)["id"].(string)
	}
	cutOff := testEvent(first)
	select {
	case <-inFlight:
	case <-time.After(30 * time.Second):
		t.Fatal("the first attempt did not reach the receiver")
	}
	first.kill()
	killed := time.Now()

	second := startServer(t, nil, serveArgs(db, flags...)...)
	// started is when the restarted server answers; its workers start just
	// before it listens, so the cut-off delivery may leave before then
	// (a negative time below), and arrivals are looked for from the kill.
	started := time.Now()
	fresh := testEvent(second)
	const within = 2 * time.Second
	for _, id := range []string{cutOff, fresh} {
		deadline := time.Now().Add(40 * time.Second) // past the 30 s lease, to tell slow from stuck
		for {
			at, ok := arrived(id, killed)
			if ok {
				took := at.Sub(started)
				t.Logf("delivery %s reached the receiver %v after the restart", id, took.Round(time.Millisecond))
				if took > within {
					t.Errorf("delivery %s left %v after the restart, want within %v", id, took.Round(time.Millisecond), within)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("delivery %s never reached the receiver after the restart", id)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !second.logged("released the leases a previous server left") {
		t.Error("the restarted server did not log the leases it released")
	}
	// Every attempt verifies by both schemes, and the cut-off delivery's
	// attempts, before and after the kill, carry the one Standard Webhooks
	// message id: its event's (docs/webhooks.md, Standard Webhooks).
	mu.Lock()
	defer mu.Unlock()
	msgIDs := map[string]map[string]bool{}
	for _, h := range hits {
		if err := webhookverify.VerifyHeader(secret, h.header, h.body, h.at, 0); err != nil {
			t.Errorf("delivery %s: %v", h.delivery, err)
		}
		if err := webhookverify.VerifyStandardHeader(secret, h.header, h.body, h.at, 0); err != nil {
			t.Errorf("delivery %s, Standard Webhooks: %v", h.delivery, err)
		}
		var ev struct{ ID string }
		if err := json.Unmarshal(h.body, &ev); err != nil || h.header.Get(webhookverify.HeaderWebhookID) != ev.ID {
			t.Errorf("delivery %s: webhook-id %q, body id %q (%v)", h.delivery, h.header.Get(webhookverify.HeaderWebhookID), ev.ID, err)
		}
		if msgIDs[h.delivery] == nil {
			msgIDs[h.delivery] = map[string]bool{}
		}
		msgIDs[h.delivery][h.header.Get(webhookverify.HeaderWebhookID)] = true
	}
	if len(msgIDs[cutOff]) != 1 || len(msgIDs[fresh]) != 1 {
		t.Errorf("webhook-id values per delivery: %v, want one each", msgIDs)
	}
}

// logged reports whether the server has logged a line with message msg.
func (s *server) logged(msg string) bool {
	for _, rec := range s.log.records() {
		if rec["msg"] == msg {
			return true
		}
	}
	return false
}
