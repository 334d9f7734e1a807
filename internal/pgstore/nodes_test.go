package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/storetest"
)

// TestTwoNodesRace: two stores on one database, each with its own
// connection pool, as two locrisk nodes are, creating jobs and batches
// against one account's quota and idempotency keys at once. The
// invariants of storetest spread single jobs over pools
// (TestInvariantsAcrossNodes); this adds batches, whose quota is all or
// nothing, and jobs and batches drawing on one quota together.
func TestTwoNodesRace(t *testing.T) {
	server := serverDSN(t)
	now := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	lat, lon := 37.0, -122.0
	batch := func(acct string, items int, key string) locrisk.NewBatch {
		b := locrisk.NewBatch{AccountID: acct, Name: "race", IdempotencyKey: key}
		if key != "" {
			b.RequestHash = "hash-" + key
		}
		for i := range items {
			b.Items = append(b.Items, locrisk.NewBatchItem{ExternalID: fmt.Sprint(i), Latitude: &lat, Longitude: &lon})
		}
		return b
	}
	job := func(acct, key string) locrisk.NewJob {
		j := locrisk.NewJob{AccountID: acct, Latitude: lat, Longitude: lon, IdempotencyKey: key}
		if key != "" {
			j.RequestHash = "hash-" + key
		}
		return j
	}
	// Each call creates one job or one batch on the node it is given and
	// says what it made: its id, whether it replayed, and the error.
	type made struct {
		id       string
		replayed bool
		err      error
	}
	for _, tt := range []struct {
		name  string
		quota int
		calls int
		call  func(s *Store, acct string, i int) made
		// What the outcome must be: distinct resources created, fresh
		// creations, quota refusals, and the jobs the account then holds.
		// -1 for a count the order of the calls decides.
		wantResources, wantFresh, wantOverQuota, wantJobs int
		// slack: the jobs may fall short of wantJobs by this much (a batch
		// of two refused with one job of quota left, the single jobs
		// having run first).
		slack int
	}{
		{"batches of 3 against a quota of 10", 10, 12, func(s *Store, acct string, i int) made {
			b, r, err := s.CreateBatch(context.Background(), batch(acct, 3, ""), now)
			return made{b.ID, r, err}
		}, 3, 3, 9, 9, 0},
		{"one batch idempotency key", 100, 12, func(s *Store, acct string, i int) made {
			b, r, err := s.CreateBatch(context.Background(), batch(acct, 4, "one-batch"), now)
			return made{b.ID, r, err}
		}, 1, 1, 0, 4, 0},
		{"jobs and batches of 2 on one quota of 7", 7, 20, func(s *Store, acct string, i int) made {
			if i%2 == 0 {
				j, r, err := s.CreateJob(context.Background(), job(acct, ""), now)
				return made{j.ID, r, err}
			}
			b, r, err := s.CreateBatch(context.Background(), batch(acct, 2, ""), now)
			return made{b.ID, r, err}
		}, -1, -1, -1, 7, 1},
		{"one job idempotency key, quota of 1", 1, 16, func(s *Store, acct string, i int) made {
			j, r, err := s.CreateJob(context.Background(), job(acct, "one-job"), now)
			return made{j.ID, r, err}
		}, 1, 1, 0, 1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			first := openFresh(t, server, Options{})
			second, err := Open(context.Background(), first.dsn, Options{Secrets: testSecrets(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { second.Close() })
			nodes := []*Store{first, second}
			acct, err := first.CreateAccount(context.Background(), "race", tt.quota, 600)
			if err != nil {
				t.Fatal(err)
			}
			results := make([]made, tt.calls)
			var start, done sync.WaitGroup
			start.Add(1)
			for i := range tt.calls {
				done.Add(1)
				go func() {
					defer done.Done()
					start.Wait()
					results[i] = tt.call(nodes[i%2], acct.ID, i)
				}()
			}
			start.Done()
			done.Wait()
			resources, fresh, over := map[string]bool{}, 0, 0
			for _, r := range results {
				switch {
				case r.err == nil:
					resources[r.id] = true
					if !r.replayed {
						fresh++
					}
				case errors.Is(r.err, locrisk.ErrQuotaExceeded):
					over++
				default:
					t.Errorf("unexpected error: %v", r.err)
				}
			}
			if tt.wantResources >= 0 && (len(resources) != tt.wantResources || fresh != tt.wantFresh || over != tt.wantOverQuota) {
				t.Errorf("%d resources, %d fresh, %d over quota; want %d, %d, %d",
					len(resources), fresh, over, tt.wantResources, tt.wantFresh, tt.wantOverQuota)
			}
			var jobs, used int
			if err := first.db.GetContext(context.Background(), &jobs, `SELECT COUNT(*) FROM report_jobs WHERE account_id = $1`, acct.ID); err != nil {
				t.Fatal(err)
			}
			u, err := second.PeriodUsage(context.Background(), acct.ID, now)
			if err != nil {
				t.Fatal(err)
			}
			used = u.Created
			if jobs != used || jobs > tt.wantJobs || jobs < tt.wantJobs-tt.slack || used > tt.quota {
				t.Errorf("%d jobs stored, %d counted against the quota of %d; want %d (at least %d)",
					jobs, used, tt.quota, tt.wantJobs, tt.wantJobs-tt.slack)
			}
		})
	}
}

// TestRescoreOnceAcrossNodes: four stores on one database, as four nodes
// started on a new data release together, each planning the release's
// re-scores and claiming them: every watch item gets exactly one re-score
// job (storetest.RescoreOnceAcrossNodes).
func TestRescoreOnceAcrossNodes(t *testing.T) {
	server := serverDSN(t)
	first := openFresh(t, server, Options{})
	nodes := []locrisk.Store{first}
	for range 3 {
		s, err := Open(context.Background(), first.dsn, Options{Secrets: testSecrets(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		nodes = append(nodes, s)
	}
	storetest.RescoreOnceAcrossNodes(t, nodes)
}
