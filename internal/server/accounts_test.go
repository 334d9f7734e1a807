package server

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

// errorMessage is the error body's code and message, without the request
// id, to compare two refusals.
func errorMessage(t *testing.T, body []byte) [2]string {
	t.Helper()
	var b errorBody
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("not an error body: %s", body)
	}
	return [2]string{b.Error.Code, b.Error.Message}
}

// TestDisabledAccount: within one second of being disabled (another
// process's write, seen through the key cache) an account's keys get
// exactly a revoked key's 401; enabled again, they work within a second.
func TestDisabledAccount(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acct := e.account(100, 1000)
	key := e.allScopesKey(acct)
	revoked, revokedID := e.key(acct, locrisk.NewKey{Scopes: locrisk.AllScopes()})
	if err := e.st.RevokeKey(ctx, revokedID); err != nil {
		t.Fatal(err)
	}
	other := e.allScopesKey(e.account(100, 1000))
	if rec := e.do("GET", jobsPath, key, ""); rec.Code != 200 {
		t.Fatalf("before disabling: %d", rec.Code)
	}
	if _, err := e.st.SetAccountDisabled(ctx, acct.ID, true); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	rec := e.do("GET", jobsPath, key, "")
	wantError(t, rec, http.StatusUnauthorized, "invalid_api_key")
	ref := e.do("GET", jobsPath, revoked, "")
	if got, want := errorMessage(t, rec.Body.Bytes()), errorMessage(t, ref.Body.Bytes()); got != want {
		t.Errorf("disabled account's answer %v differs from a revoked key's %v", got, want)
	}
	if rec.Header().Get("WWW-Authenticate") != ref.Header().Get("WWW-Authenticate") {
		t.Errorf("WWW-Authenticate differs: %q vs %q", rec.Header().Get("WWW-Authenticate"), ref.Header().Get("WWW-Authenticate"))
	}
	if rec := e.do("GET", jobsPath, other, ""); rec.Code != 200 {
		t.Errorf("another account's key: %d", rec.Code)
	}

	if _, err := e.st.SetAccountDisabled(ctx, acct.ID, false); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	if rec := e.do("GET", jobsPath, key, ""); rec.Code != 200 {
		t.Errorf("after enabling: %d %s", rec.Code, rec.Body)
	}
}

// TestAccountUpdatesApply: a new rate limit applies within a second (the
// key cache holds the account), a new quota to the next job at once (it is
// read in the job's write transaction).
func TestAccountUpdatesApply(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acct := e.account(1, 3)
	key := e.allScopesKey(acct)
	for range 3 {
		e.do("GET", jobsPath, key, "")
	}
	wantError(t, e.do("GET", jobsPath, key, ""), http.StatusTooManyRequests, "rate_limit_exceeded")
	rate := 10
	if _, err := e.st.UpdateAccount(ctx, acct.ID, locrisk.AccountUpdate{RateLimit: &rate}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second) // same one-minute window (t0 is 10 s into it)
	rec := e.do("GET", jobsPath, key, "")
	if rec.Code != 200 || rec.Header().Get("RateLimit-Limit") != "10" {
		t.Errorf("after raising the rate limit: %d RateLimit-Limit %q", rec.Code, rec.Header().Get("RateLimit-Limit"))
	}

	e.createJob(key, 40, -74)
	wantError(t, e.do("POST", jobsPath, key, `{"latitude": 40, "longitude": -74}`), http.StatusTooManyRequests, "quota_exceeded")
	quota := 2
	if _, err := e.st.UpdateAccount(ctx, acct.ID, locrisk.AccountUpdate{MonthlyQuota: &quota}); err != nil {
		t.Fatal(err)
	}
	e.createJob(key, 40, -74) // no clock change: at once
}

// TestKeyLastUse: a key's use is written with the request statistics, at
// most once a minute, and never by the request itself.
func TestKeyLastUse(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acct := e.account(100, 1000)
	key, id := e.key(acct, locrisk.NewKey{Scopes: locrisk.AllScopes(), Name: "ci"})
	_, unusedID := e.key(acct, locrisk.NewKey{Scopes: locrisk.AllScopes()})
	lastUse := func(keyID string) *time.Time {
		t.Helper()
		keys, err := e.st.ListKeys(ctx, acct.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k.ID == keyID {
				return k.LastUsedUTC
			}
		}
		t.Fatalf("key %s not listed", keyID)
		return nil
	}
	e.do("GET", jobsPath, key, "")
	if got := lastUse(id); got != nil {
		t.Errorf("last use written by the request itself: %v", got)
	}
	flush := func() {
		t.Helper()
		if err := e.srv.FlushStats(ctx); err != nil {
			t.Fatal(err)
		}
	}
	flush()
	if got := lastUse(id); got == nil || !got.Equal(t0) {
		t.Errorf("last use after a flush = %v, want %v", got, t0)
	}
	// Within the minute: noted once only, so the stored time stays.
	e.clock.Advance(30 * time.Second)
	e.do("GET", jobsPath, key, "")
	flush()
	if got := lastUse(id); got == nil || !got.Equal(t0) {
		t.Errorf("last use 30 s later = %v, want %v still", got, t0)
	}
	e.clock.Advance(31 * time.Second)
	e.do("GET", jobsPath, key, "")
	flush()
	if got := lastUse(id); got == nil || !got.Equal(t0.Add(61*time.Second)) {
		t.Errorf("last use a minute later = %v, want %v", got, t0.Add(61*time.Second))
	}
	if got := lastUse(unusedID); got != nil {
		t.Errorf("unused key has last use %v", got)
	}
	// A refused key is not a use.
	if err := e.st.RevokeKey(ctx, id); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Minute)
	e.do("GET", jobsPath, key, "")
	flush()
	if got := lastUse(id); got == nil || !got.Equal(t0.Add(61*time.Second)) {
		t.Errorf("refused request moved last use to %v", got)
	}
}
