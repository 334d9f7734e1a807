package storetest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

// The suite must catch a store that breaks an invariant. memStore is a
// small in-memory store of just what the invariants use; each flaw makes
// it break one invariant the way a careless implementation would (a check
// and a write in two steps, a claim without a lock, a queue without
// turns). The faithful store passes all four; each flawed one fails the
// invariant it breaks.

type flaw int

const (
	faithful        flaw = iota
	quotaRace            // reads the usage, then inserts, in two steps
	idempotencyRace      // looks the key up, then inserts, in two steps
	claimRace            // picks a job, then takes it, in two steps
	completeTwice        // completes whatever the owner once held
	noTurns              // serves the oldest job first, whatever its account
)

func (f flaw) String() string {
	return [...]string{"faithful", "quotaRace", "idempotencyRace", "claimRace", "completeTwice", "noTurns"}[f]
}

// window widens the gap a two-step flaw leaves between its steps, as a
// network round trip to a database server would.
func window() {
	runtime.Gosched()
	time.Sleep(200 * time.Microsecond)
}

type memStore struct {
	locrisk.Store // the operations the invariants never call: nil
	flaw          flaw

	mu         sync.Mutex
	seq        int
	accounts   map[string]locrisk.Account
	jobs       []*memJob
	keys       map[string]*memJob // by account and idempotency key
	reports    map[string]locrisk.Report
	lastServed map[string]int // account → claim sequence number
	claims     int
}

type memJob struct {
	job   locrisk.Job
	hash  string
	owner string
	lease time.Time
}

func newMemStore(f flaw) *memStore {
	return &memStore{flaw: f, accounts: map[string]locrisk.Account{}, keys: map[string]*memJob{},
		reports: map[string]locrisk.Report{}, lastServed: map[string]int{}}
}

func (m *memStore) id(prefix string) string {
	m.seq++
	return fmt.Sprintf("%s_%08d", prefix, m.seq)
}

func (m *memStore) CreateAccount(_ context.Context, name string, quota, rate int) (locrisk.Account, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := locrisk.Account{ID: m.id("acct"), Name: name, MonthlyQuota: quota, RateLimitPerMinute: rate}
	m.accounts[a.ID] = a
	return a, nil
}

// used counts the account's jobs created in now's month.
func (m *memStore) used(accountID string, now time.Time) int {
	n := 0
	for _, j := range m.jobs {
		if j.job.AccountID == accountID && !j.job.CreatedUTC.Before(locrisk.MonthStart(now)) && j.job.CreatedUTC.Before(locrisk.NextMonthStart(now)) {
			n++
		}
	}
	return n
}

func (m *memStore) CreateJob(_ context.Context, nj locrisk.NewJob, now time.Time) (locrisk.Job, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.accounts[nj.AccountID]
	if !ok {
		return locrisk.Job{}, false, locrisk.ErrNotFound
	}
	key := nj.AccountID + "\x00" + nj.IdempotencyKey
	if nj.IdempotencyKey != "" {
		prev := m.keys[key]
		if m.flaw == idempotencyRace {
			m.mu.Unlock()
			window()
			m.mu.Lock()
		}
		if prev != nil {
			if prev.hash != nj.RequestHash {
				return locrisk.Job{}, false, locrisk.ErrIdempotencyConflict
			}
			return prev.job, true, nil
		}
	}
	used := m.used(a.ID, now)
	if m.flaw == quotaRace {
		m.mu.Unlock()
		window()
		m.mu.Lock()
	}
	if used >= a.MonthlyQuota {
		return locrisk.Job{}, false, &locrisk.QuotaError{Limit: a.MonthlyQuota, Used: used, ResetsAt: locrisk.NextMonthStart(now)}
	}
	now = now.Truncate(time.Millisecond)
	j := &memJob{job: locrisk.Job{ID: m.id("job"), AccountID: a.ID, Bucket: locrisk.BucketAPI, Latitude: nj.Latitude, Longitude: nj.Longitude,
		Status: locrisk.StatusQueued, RunAfterUTC: now, CreatedUTC: now, UpdatedUTC: now}, hash: nj.RequestHash}
	m.jobs = append(m.jobs, j)
	if nj.IdempotencyKey != "" {
		m.keys[key] = j
	}
	return j.job, false, nil
}

func (m *memStore) ListJobs(_ context.Context, accountID, status string, _ int, _ string) ([]locrisk.Job, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []locrisk.Job
	for _, j := range slices.Backward(m.jobs) {
		if j.job.AccountID == accountID && (status == "" || j.job.Status == status) {
			out = append(out, j.job)
		}
	}
	return out, "", nil
}

// pick is the job a claim takes: the oldest runnable job of the account
// served longest ago (never served first), or, with noTurns, the oldest
// runnable job of any account.
func (m *memStore) pick(now time.Time) *memJob {
	var best *memJob
	for _, j := range m.jobs {
		runnable := j.job.Status == locrisk.StatusQueued && !j.job.RunAfterUTC.After(now)
		if !runnable {
			continue
		}
		if best == nil {
			best = j
			continue
		}
		if m.flaw != noTurns {
			ja, ba := m.lastServed[j.job.AccountID], m.lastServed[best.job.AccountID]
			if ja != ba {
				if ja < ba {
					best = j
				}
				continue
			}
		}
		if j.job.CreatedUTC.Before(best.job.CreatedUTC) {
			best = j
		}
	}
	return best
}

func (m *memStore) ClaimJob(_ context.Context, owner string, lease time.Duration, now time.Time) (locrisk.Job, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j := m.pick(now)
	if j == nil {
		return locrisk.Job{}, false, nil
	}
	if m.flaw == claimRace {
		m.mu.Unlock()
		window()
		m.mu.Lock()
	}
	m.claims++
	m.lastServed[j.job.AccountID] = m.claims
	j.owner, j.lease = owner, now.Add(lease)
	j.job.Status, j.job.Attempts = locrisk.StatusProcessing, j.job.Attempts+1
	return j.job, true, nil
}

func (m *memStore) CompleteJob(_ context.Context, jobID, owner string, r locrisk.Report, now time.Time) (locrisk.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, j := range m.jobs {
		if j.job.ID != jobID {
			continue
		}
		held := j.owner == owner && (j.job.Status == locrisk.StatusProcessing || m.flaw == completeTwice)
		if !held {
			return locrisk.Job{}, locrisk.ErrLeaseLost
		}
		if m.flaw == completeTwice {
			m.mu.Unlock()
			window()
			m.mu.Lock()
		}
		r.ID, r.JobID, r.AccountID, r.GeneratedUTC = m.id("rep"), j.job.ID, j.job.AccountID, now
		m.reports[r.ID] = r
		at := now.Truncate(time.Millisecond)
		j.job.Status, j.job.ReportID, j.job.CompletedUTC = locrisk.StatusCompleted, &r.ID, &at
		return j.job, nil
	}
	return locrisk.Job{}, locrisk.ErrNotFound
}

func (m *memStore) GetReport(_ context.Context, accountID, reportID string) (locrisk.Report, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.reports[reportID]
	if !ok || r.AccountID != accountID {
		return locrisk.Report{}, locrisk.ErrNotFound
	}
	return r, nil
}

// recorder is a testing.TB that records failures instead of failing the
// test it wraps, so a test can assert that a check fails.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed bool
	msgs   []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recorder) Fail()             { r.Errorf("failed") }
func (r *recorder) FailNow()          { r.Fatalf("failed") }
func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

// check runs one invariant against st in a goroutine of its own (a Fatal
// ends only that goroutine) and returns what it reported.
func check(t *testing.T, fn func(testing.TB, Harness), st *memStore) *recorder {
	r := &recorder{TB: t}
	h := Harness{Open: func(testing.TB, Config) locrisk.Store { return st }}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r, h)
	}()
	<-done
	return r
}

// TestInvariantsCatchBrokenStores: the faithful store passes every
// invariant; each flawed store fails the invariant it breaks.
func TestInvariantsCatchBrokenStores(t *testing.T) {
	breaks := map[string]flaw{
		"QuotaNeverOvershot":         quotaRace,
		"OneJobPerIdempotencyKey":    idempotencyRace,
		"ClaimExclusiveCompleteOnce": claimRace,
		"AccountsTakeTurns":          noTurns,
	}
	for _, inv := range invariants {
		t.Run(inv.name, func(t *testing.T) {
			if r := check(t, inv.fn, newMemStore(faithful)); r.Failed() {
				t.Fatalf("the faithful store fails:\n%s", strings.Join(r.msgs, "\n"))
			}
			f, ok := breaks[inv.name]
			if !ok {
				t.Fatalf("no flawed store breaks %s", inv.name)
			}
			flaws := []flaw{f}
			if f == claimRace {
				flaws = append(flaws, completeTwice)
			}
			for _, f := range flaws {
				if r := check(t, inv.fn, newMemStore(f)); !r.Failed() {
					t.Errorf("flaw %s passes %s", f, inv.name)
				} else {
					t.Logf("flaw %s caught: %s", f, r.msgs[0])
				}
			}
		})
	}
}
