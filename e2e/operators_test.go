package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAccountDisableWhileServing: the accounts commands, another process,
// reach a running server: a disabled account's key gets a revoked key's
// 401 within a second, and works again within a second of enabling; a new
// rate limit applies within a second. Health, version and the keys' last
// use are checked on the same server.
func TestAccountDisableWhileServing(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "ops.db")
	env := map[string]string{"LOCRISK_DB": db}
	acct, secret := newAccountKey(t, db, "reports:read")
	_, otherSecret := newAccountKey(t, db, "reports:read")
	revoked := mustCLI(t, env, "keys", "create", "--account", acct, "--scopes", "reports:read", "--name", "to revoke", "--json")
	var rk struct{ ID, Key string }
	if err := json.Unmarshal([]byte(revoked), &rk); err != nil {
		t.Fatal(err)
	}
	mustCLI(t, env, "keys", "revoke", rk.ID)
	srv := startServer(t, nil, serveArgs(db)...)
	list := func(key string) response { return srv.do(t, key, http.MethodGet, jobsPath, nil) }

	// Health and version.
	var ver struct{ Version string }
	if err := json.Unmarshal([]byte(mustCLI(t, nil, "version", "--json")), &ver); err != nil || ver.Version == "" {
		t.Fatalf("version --json: %v", err)
	}
	if got := srv.do(t, "", http.MethodGet, "/healthz", nil); got.status != 200 || strings.TrimSpace(string(got.body)) != `{"status":"ok"}` {
		t.Errorf("/healthz: %d %s", got.status, got.body)
	}
	var ready struct {
		Status, Version string
		Checks          map[string]string
	}
	got := srv.do(t, "", http.MethodGet, "/readyz", nil)
	if err := json.Unmarshal(got.body, &ready); err != nil || got.status != 200 || ready.Status != "ready" || ready.Version != ver.Version ||
		ready.Checks["database"] != "ok" || ready.Checks["data"] != "ok" || ready.Checks["workers"] != "ok" {
		t.Errorf("/readyz: %d %s; version command says %q", got.status, got.body, ver.Version)
	}
	for _, r := range []response{got, list(secret), list("lrk_nonsense"), srv.do(t, "", http.MethodGet, "/nowhere", nil)} {
		if s := r.header.Get("Server"); s != "locrisk/"+ver.Version {
			t.Errorf("status %d: Server %q, want locrisk/%s", r.status, s, ver.Version)
		}
	}

	if got := list(secret); got.status != http.StatusOK {
		t.Fatalf("before disabling: %d %s", got.status, got.body)
	}
	mustCLI(t, env, "accounts", "disable", acct)
	disabledAt := time.Now()
	var refused response
	waitUntil(t, time.Second+250*time.Millisecond, "the disabled account's key to get 401", func() bool {
		refused = list(secret)
		return refused.status == http.StatusUnauthorized
	})
	t.Logf("disabled account refused %s after the command exited", time.Since(disabledAt).Round(time.Millisecond))
	ref := list(rk.Key)
	type errBody struct {
		Error struct{ Code, Message string }
	}
	var a, b errBody
	_ = json.Unmarshal(refused.body, &a)
	_ = json.Unmarshal(ref.body, &b)
	if a.Error.Code != "invalid_api_key" || a != b || refused.header.Get("WWW-Authenticate") != ref.header.Get("WWW-Authenticate") {
		t.Errorf("disabled account's 401 %s differs from a revoked key's %s", refused.body, ref.body)
	}
	if got := list(otherSecret); got.status != http.StatusOK {
		t.Errorf("another account's key while one is disabled: %d", got.status)
	}
	r := runCLI(t, env, "accounts", "list", "--json")
	if !strings.Contains(r.stdout, `"status": "disabled"`) {
		t.Errorf("accounts list --json while disabled: %s", r)
	}

	mustCLI(t, env, "accounts", "enable", acct)
	waitUntil(t, time.Second+250*time.Millisecond, "the enabled account's key to work again", func() bool {
		return list(secret).status == http.StatusOK
	})

	mustCLI(t, env, "accounts", "update", acct, "--rate-limit", "5000")
	waitUntil(t, time.Second+250*time.Millisecond, "the new rate limit to apply", func() bool {
		return list(secret).header.Get("RateLimit-Limit") == "5000"
	})

	// The key's use reaches keys list with the request statistics (every
	// second), not at a graceful stop only.
	waitUntil(t, 3*time.Second, "keys list to show the key's last use", func() bool {
		var keys []map[string]any
		r := runCLI(t, env, "keys", "list", "--account", acct, "--json")
		if json.Unmarshal([]byte(r.stdout), &keys) != nil {
			return false
		}
		for _, k := range keys {
			if k["id"] != rk.ID && k["lastUsedUtc"] != nil {
				return true
			}
		}
		return false
	})
}
