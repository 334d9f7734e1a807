package sqlite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/storetest"
)

// TestReleaseLeftLeases: a server killed mid-work leaves leases behind; the
// next one on the file hands them back before its workers start. Before,
// the dead process's delivery leases kept counting against the
// per-endpoint limit for their 30 s, so nothing went to that endpoint
// meanwhile, and its jobs waited the job lease out after every restart.
// Deliveries come back due at once with no attempt counted (one of a
// disabled endpoint fails), the jobs of serve's workers (the prefix) are
// taken over at once with the lost attempt counted, and a job another
// process's worker holds (locrisk report's) keeps its lease.
func TestReleaseLeftLeases(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 100)
	ep := newEndpoint(t, s, a.ID, t0)
	first := newEvent(t, s, a.ID, evCompleted, t0)[0]
	one := locrisk.DeliveryLimits{PerEndpoint: 1, PerAccount: 1}
	if _, ok, err := s.ClaimWebhookDelivery(ctx, 30*time.Second, one, t0); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	gone := newEndpoint(t, s, a.ID, t0)
	goneDelivery := newEvent(t, s, a.ID, evCompleted, t0)
	if _, ok, err := s.ClaimWebhookDelivery(ctx, 30*time.Second, locrisk.DeliveryLimits{PerEndpoint: 1, PerAccount: 2}, t0); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if err := s.DisableWebhookEndpoint(ctx, a.ID, gone.ID, t0); err != nil {
		t.Fatal(err)
	}

	// Two workers hold a job each: a dead server's and locrisk report's.
	held := map[string]string{}
	for _, owner := range []string{"srv_dead-0", "wrk_report-0"} {
		j, ok, err := s.ClaimJob(ctx, owner, 30*time.Second, t0.Add(time.Second))
		if err != nil || !ok {
			t.Fatalf("claim job: %v %v", ok, err)
		}
		held[owner] = j.ID
	}

	restart := t0.Add(5 * time.Second) // well within every lease
	left, err := s.ReleaseLeftLeases(ctx, "srv_", restart)
	if err != nil {
		t.Fatal(err)
	}
	if left != (LeftLeases{Jobs: 1, Deliveries: 2}) {
		t.Errorf("released %+v, want 1 job and 2 deliveries", left)
	}

	// The delivery is claimable at once, within the endpoint's limit of 1.
	task, ok, err := s.ClaimWebhookDelivery(ctx, 30*time.Second, one, restart)
	if err != nil || !ok || task.ID != first || task.EndpointID != ep.ID || task.Attempts != 0 {
		t.Errorf("claim after the release: %+v %v %v, want delivery %s again, no attempt counted", task, ok, err, first)
	}
	if d := storetest.DeliveryByID(t, s, a.ID, goneDelivery[1]); d.Status != locrisk.DeliveryFailed || d.Error == nil || *d.Error != locrisk.ErrorEndpointDisabled {
		t.Errorf("released delivery of a disabled endpoint: %+v", d)
	}

	// serve's job is taken over at once, its lost attempt counted; then
	// the queued ones; the report command's keeps its lease.
	j, ok, err := s.ClaimJob(ctx, "srv_new-0", 30*time.Second, restart)
	if err != nil || !ok || j.ID != held["srv_dead-0"] || !j.Reclaimed || j.Attempts != 2 {
		t.Errorf("first claim after the release: %+v %v %v, want %s taken over at attempt 2", j, ok, err, held["srv_dead-0"])
	}
	for i := 1; ; i++ {
		j, ok, err := s.ClaimJob(ctx, fmt.Sprint("srv_new-", i), 30*time.Second, restart)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if j.ID == held["wrk_report-0"] || j.Reclaimed {
			t.Errorf("claimed %+v, the report command's job", j)
		}
	}
}
