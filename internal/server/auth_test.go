package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// keyAllowing is an all-scopes key restricted to the given networks.
func keyAllowing(t *testing.T, cidrs string) locrisk.NewKey {
	return locrisk.NewKey{Scopes: locrisk.AllScopes(), AllowedCIDRs: mustPrefixes(t, cidrs)}
}

// operation is one of those docs/api.md numbers, with a request that passes every check
// after the scope check, and the status that request then gets.
type operation struct {
	num          int
	method, path string
	body         string
	scope        string // the scope docs/api.md names
	usage        bool   // also open to reports:read on scopeVersion 1 keys
	okStatus     int
}

func operations() []operation {
	job := jobsPath + "/" + ids.New(ids.Job)
	rep := "/api/v1/location-risk/reports/" + ids.NewReportID()
	bat := "/api/v1/location-risk/batches/" + ids.New(ids.Batch)
	wl := "/api/v1/location-risk/watchlists/" + ids.New(ids.Watchlist)
	return []operation{
		{1, "POST", jobsPath, `{"latitude": 40.7, "longitude": -74}`, "reports:create", false, 202},
		{2, "GET", jobsPath, "", "reports:read", false, 200},
		{3, "GET", job, "", "reports:read", false, 404},
		{4, "POST", job + "/retry", "", "reports:create", false, 404},
		{5, "GET", rep, "", "reports:read", false, 404},
		{6, "GET", rep + "/pdf", "", "reports:pdf", false, 404},
		{7, "POST", "/api/v1/location-risk/batches", `{"items": [{"latitude": 40.7, "longitude": -74}]}`, "bulk:create", false, 202},
		{8, "GET", bat, "", "bulk:read", false, 404},
		{9, "GET", bat + "/items", "", "bulk:read", false, 404},
		{10, "GET", bat + "/results.csv", "", "bulk:read", false, 404},
		{11, "GET", "/api/v1/usage/current", "", "usage:read", true, 200},
		{12, "GET", "/api/v1/usage/history", "", "usage:read", true, 200},
		{13, "GET", "/api/v1/observability/current", "", "usage:read", true, 200},
		{14, "GET", "/api/v1/webhooks", "", "webhooks:read", false, 200},
		// An IP literal: the URL check resolves host names, and tests make no DNS queries.
		{15, "POST", "/api/v1/webhooks", `{"name": "n", "url": "https://93.184.216.34/h", "events": ["report.job.completed"]}`, "webhooks:write", false, 201},
		{16, "DELETE", "/api/v1/webhooks/" + ids.New(ids.WebhookEndpoint), "", "webhooks:write", false, 404},
		{17, "GET", "/api/v1/webhooks/deliveries", "", "webhooks:read", false, 200},
		{18, "GET", "/api/v1/location-risk/batches", "", "bulk:read", false, 200},
		{19, "POST", "/api/v1/webhooks/" + ids.New(ids.WebhookEndpoint) + "/test", "", "webhooks:write", false, 404},
		{20, "POST", "/api/v1/webhooks/deliveries/" + ids.New(ids.Delivery) + "/redeliver", "", "webhooks:write", false, 404},
		{21, "GET", rep + "/changes?since=" + ids.NewReportID(), "", "reports:read", false, 404},
		{22, "POST", "/api/v1/location-risk/watchlists", `{"items": [{"latitude": 40.7, "longitude": -74}]}`, "watchlists:write", false, 201},
		{23, "GET", "/api/v1/location-risk/watchlists", "", "watchlists:read", false, 200},
		{24, "GET", wl, "", "watchlists:read", false, 404},
		{25, "DELETE", wl, "", "watchlists:write", false, 404},
		{26, "POST", wl + "/items", `{"items": [{"latitude": 40.7, "longitude": -74}]}`, "watchlists:write", false, 404},
		{27, "DELETE", wl + "/items", `{"itemIds": ["wli_x"]}`, "watchlists:write", false, 404},
		{28, "GET", wl + "/items", "", "watchlists:read", false, 404},
		{29, "POST", wl + "/rescore", "", "watchlists:write", false, 404},
	}
}

func TestEveryOperationIsRouted(t *testing.T) {
	e := newEnv(t)
	const documented = 29 // docs/api.md, Operations
	if got := len(e.srv.routeTable()); got != documented {
		t.Fatalf("route table has %d operations, want %d", got, documented)
	}
	if got := len(operations()); got != documented {
		t.Fatalf("test table has %d operations, want %d", got, documented)
	}
}

// TestScopes runs every operation with a key holding each single scope (and
// the scopeVersion 1 variants): the named scope passes, every other gets
// 403 insufficient_scope; no key gets 401.
func TestScopes(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000000, 1000000)
	type keyCase struct {
		name    string
		scope   string
		version int
	}
	var keys []keyCase
	for _, s := range locrisk.AllScopes() {
		keys = append(keys, keyCase{s, s, 2})
	}
	keys = append(keys,
		keyCase{"reports:read v1", "reports:read", 1},
		keyCase{"reports:create v1", "reports:create", 1},
		keyCase{"usage:read v1", "usage:read", 1},
	)
	secrets := map[string]string{}
	for _, k := range keys {
		secrets[k.name], _ = e.key(acct, locrisk.NewKey{Scopes: []string{k.scope}, ScopeVersion: k.version})
	}
	for _, op := range operations() {
		t.Run(fmt.Sprintf("op%d", op.num), func(t *testing.T) {
			wantError(t, e.do(op.method, op.path, "", op.body), http.StatusUnauthorized, "invalid_api_key")
			for _, k := range keys {
				allowed := k.scope == op.scope || (op.usage && k.version == 1 && k.scope == "reports:read")
				rec := e.do(op.method, op.path, secrets[k.name], op.body)
				for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
					if rec.Header().Get(h) == "" {
						t.Errorf("%s: authenticated response lacks %s", k.name, h)
					}
				}
				if !allowed {
					if rec.Code != http.StatusForbidden {
						t.Errorf("key %s: status %d, want 403", k.name, rec.Code)
						continue
					}
					wantError(t, rec, http.StatusForbidden, "insufficient_scope")
					continue
				}
				want := op.okStatus
				if rec.Code != want {
					t.Errorf("key %s: status %d, want %d; body %s", k.name, rec.Code, want, rec.Body)
				}
			}
		})
	}
}

func TestUnauthorizedVariants(t *testing.T) {
	e := newEnv(t)
	acct := e.account(100, 1000)
	good := e.allScopesKey(acct)
	revoked, revokedID := e.key(acct, locrisk.NewKey{Scopes: locrisk.AllScopes()})
	if err := e.st.RevokeKey(context.Background(), revokedID); err != nil {
		t.Fatal(err)
	}
	expiring, _ := e.key(acct, locrisk.NewKey{Scopes: locrisk.AllScopes(), ExpiresIn: time.Hour})
	v4Only, _ := e.key(acct, keyAllowing(t, "203.0.113.0/24"))
	v6Only, _ := e.key(acct, keyAllowing(t, "2001:db8:1::/48"))
	host, _ := e.key(acct, keyAllowing(t, "198.51.100.7"))

	tests := []struct {
		name   string
		opts   []reqOpt
		status int
	}{
		{"no key", nil, 401},
		{"bearer good", []reqOpt{withHeader("Authorization", "Bearer "+good)}, 200},
		{"bearer scheme any case", []reqOpt{withHeader("Authorization", "bEaReR "+good)}, 200},
		{"x-api-key good", []reqOpt{withHeader("X-API-Key", good)}, 200},
		{"bearer wrong", []reqOpt{withHeader("Authorization", "Bearer "+ids.NewSecret(ids.KeySecret))}, 401},
		{"x-api-key wrong", []reqOpt{withHeader("X-API-Key", ids.NewSecret(ids.KeySecret))}, 401},
		{"not a key", []reqOpt{withHeader("Authorization", "Bearer hello")}, 401},
		{"key truncated", []reqOpt{withHeader("Authorization", "Bearer "+good[:len(good)-1])}, 401},
		{"basic scheme", []reqOpt{withHeader("Authorization", "Basic "+good)}, 401},
		{"bearer empty", []reqOpt{withHeader("Authorization", "Bearer ")}, 401},
		{"huge key", []reqOpt{withHeader("X-API-Key", "lrk_"+strings.Repeat("a", 5000))}, 401},
		{"revoked bearer", []reqOpt{withHeader("Authorization", "Bearer "+revoked)}, 401},
		{"revoked x-api-key", []reqOpt{withHeader("X-API-Key", revoked)}, 401},
		{"ipv4 allowed", []reqOpt{withHeader("X-API-Key", v4Only), fromAddr("203.0.113.9:5000")}, 200},
		{"ipv4-mapped ipv6 allowed", []reqOpt{withHeader("X-API-Key", v4Only), fromAddr("[::ffff:203.0.113.9]:5000")}, 200},
		{"ipv4 outside", []reqOpt{withHeader("X-API-Key", v4Only), fromAddr("203.0.114.9:5000")}, 401},
		{"ipv4 list, ipv6 client", []reqOpt{withHeader("X-API-Key", v4Only), fromAddr("[2001:db8:1::5]:5000")}, 401},
		{"ipv6 allowed", []reqOpt{withHeader("Authorization", "Bearer "+v6Only), fromAddr("[2001:db8:1:ff::5]:443")}, 200},
		{"ipv6 allowed with zone", []reqOpt{withHeader("Authorization", "Bearer "+v6Only), fromAddr("[2001:db8:1::5%eth0]:443")}, 200},
		{"ipv6 outside", []reqOpt{withHeader("Authorization", "Bearer "+v6Only), fromAddr("[2001:db8:2::5]:443")}, 401},
		{"ipv6 list, ipv4 client", []reqOpt{withHeader("Authorization", "Bearer "+v6Only), fromAddr("203.0.113.9:5000")}, 401},
		{"single host allowed", []reqOpt{withHeader("X-API-Key", host), fromAddr("198.51.100.7:1")}, 200},
		{"single host other", []reqOpt{withHeader("X-API-Key", host), fromAddr("198.51.100.8:1")}, 401},
		{"forwarded header not trusted", []reqOpt{withHeader("X-API-Key", host), fromAddr("192.0.2.1:1"), withHeader("X-Forwarded-For", "198.51.100.7")}, 401},
		{"unparseable remote address", []reqOpt{withHeader("X-API-Key", host), fromAddr("somewhere")}, 401},
	}
	var message string
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("GET", jobsPath, "", "", tc.opts...)
			if tc.status == 200 {
				if rec.Code != 200 {
					t.Fatalf("status %d, want 200; %s", rec.Code, rec.Body)
				}
				return
			}
			wantError(t, rec, 401, "invalid_api_key")
			if rec.Header().Get("RateLimit-Limit") != "" {
				t.Errorf("401 carries rate-limit headers")
			}
			if rec.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("401 lacks WWW-Authenticate")
			}
			m := decode[errorBody](t, rec).Error.Message
			if message == "" {
				message = m
			} else if m != message {
				t.Errorf("401 message %q differs from %q: every bad key must look the same", m, message)
			}
		})
	}

	t.Run("expired", func(t *testing.T) {
		if rec := e.do("GET", jobsPath, expiring, ""); rec.Code != 200 {
			t.Fatalf("before expiry: status %d", rec.Code)
		}
		e.clock.Advance(time.Hour)
		wantError(t, e.do("GET", jobsPath, expiring, ""), 401, "invalid_api_key")
		if rec := e.do("GET", jobsPath, good, ""); rec.Code != 200 {
			t.Fatalf("non-expiring key after an hour: status %d", rec.Code)
		}
	})
}

// TestKeyChangesWithinOneSecond: a revoked key stops working within one
// second; a new key works at once; lookups within the cache TTL hit the
// database once.
func TestKeyChangesWithinOneSecond(t *testing.T) {
	e := newEnv(t)
	var lookups atomic.Int64
	inner := e.srv.keys.lookup
	e.srv.keys.lookup = func(ctx context.Context, s string) (locrisk.APIKey, locrisk.Account, error) {
		lookups.Add(1)
		return inner(ctx, s)
	}
	acct := e.account(100, 1000)
	key, id := e.key(acct, locrisk.NewKey{Scopes: locrisk.AllScopes()})
	for range 5 {
		if rec := e.do("GET", jobsPath, key, ""); rec.Code != 200 {
			t.Fatalf("status %d", rec.Code)
		}
	}
	if n := lookups.Load(); n != 1 {
		t.Errorf("5 requests within the TTL made %d lookups, want 1", n)
	}
	if err := e.st.RevokeKey(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	wantError(t, e.do("GET", jobsPath, key, ""), 401, "invalid_api_key")

	// A brand-new key works on its first request, even right after the same
	// account's other key was refused.
	fresh := e.allScopesKey(acct)
	if rec := e.do("GET", jobsPath, fresh, ""); rec.Code != 200 {
		t.Fatalf("new key: status %d", rec.Code)
	}
}

func TestKeyCacheTTLConfig(t *testing.T) {
	tests := []struct {
		in, want time.Duration
	}{
		{0, time.Second}, {250 * time.Millisecond, 250 * time.Millisecond}, {time.Minute, time.Second}, {-1, 0},
	}
	for _, tc := range tests {
		s := New(Config{KeyCacheTTL: tc.in}, nil, fakeLocator{}, nil)
		if s.keys.ttl != tc.want {
			t.Errorf("KeyCacheTTL %v: cache ttl %v, want %v", tc.in, s.keys.ttl, tc.want)
		}
	}
}

func TestKeyCacheIsBounded(t *testing.T) {
	c := newKeyCache(time.Second, func(context.Context, string) (locrisk.APIKey, locrisk.Account, error) {
		return locrisk.APIKey{}, locrisk.Account{}, locrisk.ErrNotFound
	})
	for i := range maxKeyCacheEntries + 10 {
		if _, _, found, err := c.get(context.Background(), fmt.Sprintf("lrk_%d", i), t0); err != nil || found {
			t.Fatalf("get: found=%v err=%v", found, err)
		}
	}
	if n := len(c.entries); n > maxKeyCacheEntries {
		t.Errorf("cache holds %d entries, bound is %d", n, maxKeyCacheEntries)
	}
}

// TestCheckOrder covers the check order of docs/api.md (Authentication,
// scopes and check order) where two checks could both fail:
// 401 < 429 rate < 403 < 400 < 404 < 422 < 409 < 429 quota.
func TestCheckOrder(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1, 2)
	full := e.allScopesKey(acct)
	readOnly, _ := e.key(acct, locrisk.NewKey{Scopes: []string{"reports:read"}})

	// 403 before 400: a bad body with a key lacking reports:create.
	wantError(t, e.do("POST", jobsPath, readOnly, `{"latitude": "x"}`), 403, "insufficient_scope")
	// The 403 counted against the rate limit (2 per minute): one left.
	rec := e.do("POST", jobsPath, full, `{"latitude": 40, "longitude": -100}`, withHeader("Idempotency-Key", "k1"))
	if rec.Code != 202 || rec.Header().Get("RateLimit-Remaining") != "0" {
		t.Fatalf("create: status %d remaining %q", rec.Code, rec.Header().Get("RateLimit-Remaining"))
	}
	// 429 rate before 403 and before 400.
	wantError(t, e.do("POST", jobsPath, readOnly, `{"latitude": "x"}`), 429, "rate_limit_exceeded")
	// 401 before 429: a bad key is 401 even for a rate-limited account.
	wantError(t, e.do("GET", jobsPath, "lrk_"+strings.Repeat("x", 40), ""), 401, "invalid_api_key")

	e.clock.Advance(time.Minute)
	// 400 before 422: bad Idempotency-Key with an uncovered coordinate.
	wantError(t, e.do("POST", jobsPath, full, `{"latitude": -40, "longitude": 100}`, withHeader("Idempotency-Key", "")), 400, "invalid_idempotency_key")
	// 422 before 409: key k1 reused with another payload that is outside coverage.
	wantError(t, e.do("POST", jobsPath, full, `{"latitude": -40, "longitude": 100}`, withHeader("Idempotency-Key", "k1")), 422, "unsupported_location")

	e.clock.Advance(time.Minute)
	// 409 before 429 quota (the quota of 1 is used): k1 with another covered payload.
	wantError(t, e.do("POST", jobsPath, full, `{"latitude": 41, "longitude": -100}`, withHeader("Idempotency-Key", "k1")), 409, "idempotency_conflict")
	// And a new job is over quota.
	wantError(t, e.do("POST", jobsPath, full, `{"latitude": 41, "longitude": -100}`), 429, "quota_exceeded")

	e.clock.Advance(time.Minute)
	// 400 before 404 on reports: bad detail on an unknown report.
	wantError(t, e.do("GET", "/api/v1/location-risk/reports/"+ids.NewReportID()+"?detail=x", full, ""), 400, "invalid_detail")
}
