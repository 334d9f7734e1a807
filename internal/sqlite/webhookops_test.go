package sqlite

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/storetest"
)

func testEvent(at time.Time) locrisk.WebhookEvent {
	return locrisk.WebhookEvent{ID: ids.New(ids.Event), Type: "webhook.test", Body: []byte(`{"test":true}`), CreatedUTC: at}
}

// The last items of a batch completing at the same moment in concurrent
// transactions complete the batch in exactly one of them; a manual retry
// that reopens the batch and completes it again completes it once more.
func TestBatchCompletedExactlyOnce(t *testing.T) {
	for round := range 5 {
		var mu sync.Mutex
		completions := map[string]int{}
		hook := func(ctx context.Context, tx locrisk.Tx, job locrisk.Job) error {
			if b, ok := tx.CompletedBatch(); ok {
				if b.Status != locrisk.BatchCompleted || b.CompletedUTC == nil || b.ID != *job.BatchID ||
					b.Counts.Queued+b.Counts.Processing != 0 {
					t.Errorf("CompletedBatch reported %+v", b)
				}
				mu.Lock()
				completions[b.ID]++
				mu.Unlock()
			}
			return nil
		}
		s := newStore(t, Options{OnJobFinal: []locrisk.JobFinalHook{hook}})
		ctx := context.Background()
		a := newAccount(t, s, 1000)
		const n = 8
		var items []locrisk.NewBatchItem
		for i := range n {
			items = append(items, validItem("", 30+float64(i), -90))
		}
		items = append(items, rejectedItem("r", "invalid_latitude", nil, nil))
		b, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: items}, t0)
		if err != nil {
			t.Fatal(err)
		}
		var held []locrisk.Job
		for range n {
			j, ok, err := s.ClaimJob(ctx, "w", time.Hour, t0)
			if err != nil || !ok {
				t.Fatalf("claim: %v %v", ok, err)
			}
			held = append(held, j)
		}
		var wg sync.WaitGroup
		for i, j := range held {
			wg.Add(1)
			go func() {
				defer wg.Done()
				at := t0.Add(time.Second)
				var err error
				if i%2 == 0 {
					_, err = s.CompleteJob(ctx, j.ID, "w", locrisk.Report{DataVersion: "dv", Body: summaryBody(t, 10, "low", [6]*int{})}, at)
				} else {
					_, err = s.FailJob(ctx, j.ID, "w", "generation_failed", "boom", true, at)
				}
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if completions[b.ID] != 1 {
			t.Fatalf("round %d: batch completed %d times, want 1", round, completions[b.ID])
		}
		if round > 0 {
			continue
		}
		// Reopened by a manual retry, completed again: once more.
		retried, err := s.RetryJob(ctx, a.ID, held[1].ID, t0.Add(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		storetest.ClaimJob(t, s, retried.ID, t0.Add(3*time.Second))
		if _, err := s.CompleteJob(ctx, retried.ID, "tw", locrisk.Report{DataVersion: "dv", Body: summaryBody(t, 10, "low", [6]*int{})},
			t0.Add(4*time.Second)); err != nil {
			t.Fatal(err)
		}
		if completions[b.ID] != 2 {
			t.Errorf("after retry and completion: %d completions, want 2", completions[b.ID])
		}
	}
}

// A batch whose items were all rejected is completed at creation and
// never reported as completed by a job's transition.
func TestAllRejectedBatchNotReported(t *testing.T) {
	called := false
	s := newStore(t, Options{OnJobFinal: []locrisk.JobFinalHook{func(ctx context.Context, tx locrisk.Tx, job locrisk.Job) error {
		_, called = tx.CompletedBatch()
		return nil
	}}})
	a := newAccount(t, s, 10)
	if _, _, err := s.CreateBatch(context.Background(), locrisk.NewBatch{AccountID: a.ID,
		Items: []locrisk.NewBatchItem{rejectedItem("r", "invalid_latitude", nil, nil)}}, t0); err != nil {
		t.Fatal(err)
	}
	if called {
		t.Error("an all-rejected batch was reported")
	}
}

// Migration 9 rebuilds the events and deliveries tables: rows written at
// version 8 are all there afterwards, references intact, and an event
// without a job can then be written.
func TestMigration9KeepsWebhookRows(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/v8.db"
	all, err := embeddedMigrations()
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Secrets: testSecrets(t, 7), Now: func() time.Time { return t0 }}
	s, err := openMigrated(ctx, path, opt, all[:8])
	if err != nil {
		t.Fatal(err)
	}
	a := newAccount(t, s, 10)
	newEndpoint(t, s, a.ID, t0)
	before := newEvent(t, s, a.ID, evCompleted, t0)
	s.Close()

	s, err = OpenWith(ctx, path, opt)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	defer s.Close()
	d := storetest.DeliveryByID(t, s, a.ID, before[0])
	if d.Status != locrisk.DeliveryPending || d.JobID == nil {
		t.Errorf("delivery after the upgrade: %+v", d)
	}
	var bad []struct {
		Table  string `db:"table"`
		RowID  int64  `db:"rowid"`
		Parent string `db:"parent"`
		FKID   int    `db:"fkid"`
	}
	if err := s.db.SelectContext(ctx, &bad, `PRAGMA foreign_key_check`); err != nil || len(bad) != 0 {
		t.Errorf("foreign key check: %v %v", bad, err)
	}
	err = s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		ev := testEvent(t0)
		ev.AccountID = a.ID
		_, err := txOps{tx}.InsertWebhookEvent(ctx, ev, nil)
		return err
	})
	if err != nil {
		t.Errorf("an event without a job after the upgrade: %v", err)
	}
}

// A disabled endpoint's test events and their deliveries go with it when
// the purge removes it; an endpoint still referred to by a job's event
// stays until that job goes.
func TestPurgeTestEvents(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	tested := newEndpoint(t, s, a.ID, t0)
	withJob := newEndpoint(t, s, a.ID, t0)
	for _, ep := range []locrisk.WebhookEndpoint{tested, withJob} {
		ev := testEvent(t0)
		if _, err := s.QueueTestWebhook(ctx, a.ID, ep.ID, ev); err != nil {
			t.Fatal(err)
		}
	}
	newEvent(t, s, a.ID, evCompleted, t0) // to both endpoints
	// The job event's delivery to tested is gone with its job in real life;
	// here, delete it so only the test event refers to tested.
	if _, err := s.db.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE endpoint_id = ? AND event_id IN
		(SELECT id FROM webhook_events WHERE job_id IS NOT NULL)`, tested.ID); err != nil {
		t.Fatal(err)
	}
	for _, ep := range []locrisk.WebhookEndpoint{tested, withJob} {
		if err := s.DisableWebhookEndpoint(ctx, a.ID, ep.ID, t0); err != nil {
			t.Fatal(err)
		}
	}
	later := t0.Add(48 * time.Hour)
	c, err := s.Purge(ctx, locrisk.PurgePolicy{Before: t0.Add(time.Hour), Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoints != 1 || c.Events != 1 || c.Deliveries != 1 {
		t.Errorf("purged %+v, want the tested endpoint with its test event and delivery", c)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM webhook_endpoints WHERE id = ?`, tested.ID); n != 0 {
		t.Error("the tested endpoint is still there")
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM webhook_events WHERE job_id IS NULL`); n != 1 {
		t.Errorf("%d test events left, want withJob's 1", n)
	}
}
