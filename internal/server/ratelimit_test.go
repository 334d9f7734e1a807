package server

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

func TestRateLimitHeadersAndWindow(t *testing.T) {
	e := newEnv(t) // the clock starts 10 s into a minute
	acct := e.account(1000, 3)
	key := e.allScopesKey(acct)
	noScope, _ := e.key(acct, locrisk.NewKey{Scopes: []string{"webhooks:read"}})
	otherKey := e.allScopesKey(e.account(1000, 3))

	type step struct {
		advance   time.Duration
		key       string
		status    int
		remaining string
		reset     string
	}
	steps := []step{
		{0, key, 200, "2", "50"},
		{15 * time.Second, key, 200, "1", "35"},
		{0, noScope, 403, "0", "35"}, // a 403 counts too
		{0, key, 429, "0", "35"},
		{0, noScope, 429, "0", "35"}, // the rate limit is checked before the scope
		{34 * time.Second, key, 429, "0", "1"},
		{500 * time.Millisecond, key, 429, "0", "1"},  // rounded up, never 0
		{500 * time.Millisecond, key, 200, "2", "60"}, // 12:01:00 starts a new window
		{0, otherKey, 200, "2", "60"},                 // per account
	}
	for i, s := range steps {
		e.clock.Advance(s.advance)
		rec := e.do("GET", jobsPath, s.key, "")
		if rec.Code != s.status {
			t.Fatalf("step %d: status %d, want %d; %s", i, rec.Code, s.status, rec.Body)
		}
		h := rec.Header()
		if h.Get("RateLimit-Limit") != "3" || h.Get("RateLimit-Remaining") != s.remaining || h.Get("RateLimit-Reset") != s.reset {
			t.Errorf("step %d: RateLimit-Limit %q Remaining %q Reset %q, want 3 %s %s", i,
				h.Get("RateLimit-Limit"), h.Get("RateLimit-Remaining"), h.Get("RateLimit-Reset"), s.remaining, s.reset)
		}
		if s.status == 429 {
			wantError(t, rec, 429, "rate_limit_exceeded")
			if h.Get("Retry-After") != s.reset {
				t.Errorf("step %d: Retry-After %q, want %s", i, h.Get("Retry-After"), s.reset)
			}
		} else if h.Get("Retry-After") != "" {
			t.Errorf("step %d: Retry-After on a %d", i, s.status)
		}
	}
}

func TestRateLimitUnauthenticatedDoesNotCount(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 1)
	revoked, id := e.key(acct, locrisk.NewKey{Scopes: locrisk.AllScopes()})
	if err := e.st.RevokeKey(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	good := e.allScopesKey(acct)
	for range 3 {
		wantError(t, e.do("GET", jobsPath, revoked, ""), 401, "invalid_api_key")
	}
	if rec := e.do("GET", jobsPath, good, ""); rec.Code != 200 {
		t.Fatalf("status %d after 401s: they must not use the account's allowance", rec.Code)
	}
}

func TestMemoryRateLimiter(t *testing.T) {
	m := NewMemoryRateLimiter()
	at := func(sec float64) time.Time {
		return t0.Truncate(time.Minute).Add(time.Duration(sec * float64(time.Second)))
	}

	d := m.Peek("a", 2, at(0))
	if !d.Allowed || d.Used != 0 || d.Remaining != 2 || d.Reset != time.Minute || !d.ResetsAt.Equal(at(60)) {
		t.Errorf("peek on an empty window = %+v", d)
	}
	for i, want := range []bool{true, true, false, false} {
		d := m.Allow("a", 2, at(10))
		if d.Allowed != want {
			t.Errorf("request %d: allowed %v, want %v", i+1, d.Allowed, want)
		}
		if d.Used > 2 || d.Remaining < 0 {
			t.Errorf("request %d: used %d remaining %d", i+1, d.Used, d.Remaining)
		}
	}
	if d := m.Peek("a", 2, at(59.999)); d.Allowed || d.Used != 2 || d.Remaining != 0 {
		t.Errorf("peek on a full window = %+v", d)
	}
	// A clock stepping back does not hand out a fresh allowance.
	if d := m.Allow("a", 2, at(-30)); d.Allowed || d.Reset > time.Minute {
		t.Errorf("after the clock stepped back: %+v", d)
	}
	if d := m.Allow("a", 2, at(60)); !d.Allowed || d.Remaining != 1 || d.Reset != time.Minute {
		t.Errorf("new window: %+v", d)
	}
	// The limit is the account's current one: raising it takes effect at once.
	if d := m.Allow("a", 5, at(61)); !d.Allowed || d.Remaining != 3 {
		t.Errorf("raised limit: %+v", d)
	}
}

func TestMemoryRateLimiterConcurrent(t *testing.T) {
	m := NewMemoryRateLimiter()
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := map[string]int{}
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acct := "acct" + strconv.Itoa(g%2)
			for range 100 {
				if m.Allow(acct, 150, t0).Allowed {
					mu.Lock()
					allowed[acct]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if allowed["acct0"] != 150 || allowed["acct1"] != 150 {
		t.Errorf("allowed %v, want exactly 150 per account", allowed)
	}
}
