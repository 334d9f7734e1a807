package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/view"
	"github.com/locrisk/locrisk/internal/webhook"
)

// fakeTx is a store.Tx that records what the hook writes.
type fakeTx struct {
	subscribers map[string][]string // by event type
	err         error
	asked       []string // event types looked up
	events      []locrisk.WebhookEvent
	endpoints   [][]string
	batch       *locrisk.Batch // what CompletedBatch reports
	change      *locrisk.WatchChange
	reports     map[string]locrisk.Report // what ReadReport finds
	read        []string                  // reports read
	marked      []string                  // items marked changed, with the time
}

func (f *fakeTx) WatchChange() (locrisk.WatchChange, bool) {
	if f.change == nil {
		return locrisk.WatchChange{}, false
	}
	return *f.change, true
}

func (f *fakeTx) ReadReport(_ context.Context, id string) (locrisk.Report, error) {
	f.read = append(f.read, id)
	r, ok := f.reports[id]
	if !ok {
		return locrisk.Report{}, locrisk.ErrNotFound
	}
	return r, nil
}

func (f *fakeTx) MarkWatchItemChanged(_ context.Context, itemID string, at time.Time) error {
	f.marked = append(f.marked, itemID+" "+at.Format(time.RFC3339))
	return f.err
}

func (f *fakeTx) CompletedBatch() (locrisk.Batch, bool) {
	if f.batch == nil {
		return locrisk.Batch{}, false
	}
	return *f.batch, true
}

func (f *fakeTx) WebhookSubscribers(_ context.Context, accountID, eventType string) ([]string, error) {
	f.asked = append(f.asked, accountID+" "+eventType)
	return f.subscribers[eventType], f.err
}

func (f *fakeTx) InsertWebhookEvent(_ context.Context, ev locrisk.WebhookEvent, endpointIDs []string) ([]string, error) {
	f.events = append(f.events, ev)
	f.endpoints = append(f.endpoints, endpointIDs)
	return endpointIDs, f.err
}

func TestHook(t *testing.T) {
	ctx := context.Background()
	done := time.Date(2026, 3, 1, 12, 0, 0, 700e6, time.UTC)
	rid := "rep"
	completed := locrisk.Job{ID: "job_1", AccountID: "acct_1", Status: locrisk.StatusCompleted, ReportID: &rid,
		CreatedUTC: done, UpdatedUTC: done, CompletedUTC: &done}
	wakes := 0
	hook := Hook(func() { wakes++ })

	// Not final: nothing looked up, nothing written.
	tx := &fakeTx{}
	if err := hook(ctx, tx, locrisk.Job{ID: "job_0", Status: locrisk.StatusProcessing}); err != nil || len(tx.asked) != 0 {
		t.Fatalf("processing job: err %v, lookups %v", err, tx.asked)
	}
	// No subscriber: nothing written, no wake.
	if err := hook(ctx, tx, completed); err != nil || len(tx.events) != 0 || wakes != 0 {
		t.Fatalf("no subscriber: err %v, %d events, %d wakes", err, len(tx.events), wakes)
	}
	if want := "acct_1 " + webhook.EventJobCompleted; len(tx.asked) != 1 || tx.asked[0] != want {
		t.Errorf("lookups %v, want [%s]", tx.asked, want)
	}

	// Subscribers: one event for all of them, whose body is view's event.
	tx = &fakeTx{subscribers: map[string][]string{webhook.EventJobCompleted: {"we_1", "we_2"}}}
	if err := hook(ctx, tx, completed); err != nil {
		t.Fatal(err)
	}
	if len(tx.events) != 1 || strings.Join(tx.endpoints[0], ",") != "we_1,we_2" || wakes != 1 {
		t.Fatalf("%d events to %v, %d wakes", len(tx.events), tx.endpoints, wakes)
	}
	ev := tx.events[0]
	wantEv, err := view.NewJobEvent(ev.ID, completed)
	if err != nil {
		t.Fatal(err)
	}
	wantBody, _ := webhook.MarshalEvent(wantEv)
	if ev.AccountID != "acct_1" || ev.Type != webhook.EventJobCompleted || ev.JobID != "job_1" ||
		!ev.CreatedUTC.Equal(done) || string(ev.Body) != string(wantBody) {
		t.Errorf("event %+v\nbody %s\nwant %s", ev, ev.Body, wantBody)
	}
	var body webhook.Event
	if err := json.Unmarshal(ev.Body, &body); err != nil || body.ID != ev.ID || body.CreatedUTC != "2026-03-01T12:00:00Z" {
		t.Errorf("body %s (%v)", ev.Body, err)
	}

	// Errors roll the transition back: the store's, and a final job
	// without a completion time.
	boom := errors.New("boom")
	tx = &fakeTx{subscribers: tx.subscribers, err: boom}
	if err := hook(ctx, tx, completed); !errors.Is(err, boom) {
		t.Errorf("store error: %v", err)
	}
	failed := completed
	failed.Status, failed.CompletedUTC = locrisk.StatusFailed, nil
	if err := hook(ctx, &fakeTx{}, failed); err == nil || !strings.Contains(err.Error(), "no completion time") {
		t.Errorf("failed job without completion time: %v", err)
	}
}

// A transition that completed its batch also writes batch.completed for the
// endpoints subscribed to it, with the batch as view renders it, keeping
// the completing job's id; without subscribers nothing more is written.
func TestHookBatchCompleted(t *testing.T) {
	ctx := context.Background()
	done := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	bid := "bat_1"
	job := locrisk.Job{ID: "job_9", AccountID: "acct_1", BatchID: &bid, Status: locrisk.StatusFailed,
		CreatedUTC: done, UpdatedUTC: done, CompletedUTC: &done}
	b := locrisk.Batch{ID: bid, AccountID: "acct_1", TotalItems: 2, Status: locrisk.BatchCompleted,
		Counts: locrisk.BatchCounts{Completed: 1, Failed: 1}, CreatedUTC: done.Add(-time.Minute), CompletedUTC: &done}
	wakes := 0
	hook := Hook(func() { wakes++ })

	tests := []struct {
		name      string
		subs      map[string][]string
		batch     *locrisk.Batch
		wantTypes []string
		wantWakes int
	}{
		{"batch still open", map[string][]string{webhook.EventBatchCompleted: {"we_1"}}, nil, nil, 0},
		{"completed, nobody subscribed", map[string][]string{webhook.EventJobFailed: {"we_1"}}, &b, []string{webhook.EventJobFailed}, 1},
		{"completed and subscribed", map[string][]string{webhook.EventBatchCompleted: {"we_2"}}, &b, []string{webhook.EventBatchCompleted}, 1},
		{"both", map[string][]string{webhook.EventJobFailed: {"we_1"}, webhook.EventBatchCompleted: {"we_1", "we_2"}}, &b,
			[]string{webhook.EventJobFailed, webhook.EventBatchCompleted}, 1},
	}
	for _, tc := range tests {
		wakes = 0
		tx := &fakeTx{subscribers: tc.subs, batch: tc.batch}
		if err := hook(ctx, tx, job); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var types []string
		for i, ev := range tx.events {
			types = append(types, ev.Type)
			if ev.JobID != job.ID {
				t.Errorf("%s: event %s keeps job %q, want %s", tc.name, ev.Type, ev.JobID, job.ID)
			}
			if ev.Type != webhook.EventBatchCompleted {
				continue
			}
			if strings.Join(tx.endpoints[i], ",") != strings.Join(tc.subs[webhook.EventBatchCompleted], ",") {
				t.Errorf("%s: batch event to %v", tc.name, tx.endpoints[i])
			}
			var body struct {
				Type       string
				CreatedUTC string `json:"createdUtc"`
				Data       map[string]json.RawMessage
			}
			if err := json.Unmarshal(ev.Body, &body); err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(view.NewBatch(b))
			if string(body.Data["batch"]) != string(want) || len(body.Data) != 1 || body.CreatedUTC != "2026-03-01T12:00:00Z" {
				t.Errorf("%s: body %s", tc.name, ev.Body)
			}
		}
		if strings.Join(types, ",") != strings.Join(tc.wantTypes, ",") || wakes != tc.wantWakes {
			t.Errorf("%s: events %v and %d wakes, want %v and %d", tc.name, types, wakes, tc.wantTypes, tc.wantWakes)
		}
	}
}
