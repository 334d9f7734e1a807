package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	accountIDRe = regexp.MustCompile(`^acct_[0-9A-Za-z]{20,}$`)
	keyIDRe     = regexp.MustCompile(`^key_[0-9A-Za-z_-]{20,}$`)
	secretRe    = regexp.MustCompile(`^lrk_[0-9A-Za-z]{32,}$`)
	flagLineRe  = regexp.MustCompile(`(?m)^  --([a-z][a-z-]*)`)
)

// TestStartupWithoutData: serve refuses to start on a data folder that is
// not a usable pack, at once, before it creates a database, and with a
// message that says what is wrong; data check lists the layers. Without
// --data-dir it serves the built-in data (TestBuiltInData).
func TestStartupWithoutData(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	// A pack whose manifest lists files that are not there.
	partial := filepath.Join(tmp, "partial")
	if err := os.Mkdir(partial, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(fixtureData, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(partial, "manifest.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	// A pack with one byte of one file changed, its size kept: the
	// checksum, not the size, gives it away, still before a database is
	// made.
	flipped := filepath.Join(tmp, "flipped")
	if err := os.CopyFS(flipped, os.DirFS(fixtureData)); err != nil {
		t.Fatal(err)
	}
	npl := filepath.Join(flipped, "environmental", "epa_superfund_npl_sites_2022-09.csv")
	b, err := os.ReadFile(npl)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(npl, b, 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(tmp, "never.db")

	for _, tc := range []struct {
		dir  string
		want []string
	}{
		{empty, []string{"no manifest.json", "locrisk data export DIR"}},
		{partial, []string{"34 file(s)", "boundaries/us-atlas-2023-4.0.0_counties-10m.json: missing",
			"earthquake/usgs_nshm2018_pga_2pct50yr_BC_conus_0p05deg.csv"}},
		{filepath.Join(tmp, "nowhere"), []string{"nowhere: no such file or directory"}},
		{flipped, []string{"environmental/epa_superfund_npl_sites_2022-09.csv: sha256 "}},
	} {
		start := time.Now()
		r := runCLI(t, nil, "serve", "--addr", "127.0.0.1:0", "--db", db, "--data-dir", tc.dir)
		took := time.Since(start)
		if r.code == 0 {
			t.Fatalf("serve on %s: %s", tc.dir, r)
		}
		if took > 5*time.Second {
			t.Errorf("serve on %s took %s to give up", tc.dir, took)
		}
		for _, want := range append(tc.want, "loading data from "+tc.dir) {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("serve on %s: stderr lacks %q:\n%s", tc.dir, want, r.stderr)
			}
		}
		for _, made := range []string{db, db + ".key"} {
			if _, err := os.Stat(made); !os.IsNotExist(err) {
				t.Errorf("serve on %s created %s (stat: %v)", tc.dir, made, err)
			}
		}
	}

	tests := []struct {
		name string
		env  map[string]string
		args []string
		ok   bool
	}{
		{"fixtures by flag", nil, []string{"data", "check", "--data-dir", fixtureData}, true},
		{"fixtures by environment", map[string]string{"LOCRISK_DATA_DIR": fixtureData}, []string{"data", "check"}, true},
		{"files missing", nil, []string{"data", "check", "--data-dir", partial}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.env, tt.args...)
			if (r.code == 0) != tt.ok {
				t.Fatalf("%s", r)
			}
			// Every layer is listed either way.
			for _, layer := range []string{"census-counties-2023", "usgs-nshm-2018-pga", "noaa-spc-tornado-tracks",
				"gshhg-shorelines", "usfs-wrc-v1", "nasa-glc", "epa-superfund-npl"} {
				if !strings.Contains(r.stdout, layer) {
					t.Errorf("data check output lacks layer %s:\n%s", layer, r.stdout)
				}
			}
			if tt.ok && (strings.Contains(r.stdout, "MISSING") || !strings.Contains(r.stdout, "layers loaded")) {
				t.Errorf("data check on the fixtures:\n%s", r.stdout)
			}
			if !tt.ok && (!strings.Contains(r.stdout, "MISSING") || !strings.Contains(r.stderr, "missing")) {
				t.Errorf("data check on a pack without its files: %s", r)
			}
		})
	}
}

// TestCLIContract checks the operator command line of docs/api.md (Command
// line) against the real binary and a server sharing its database file.
func TestCLIContract(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "cli.db")
	env := map[string]string{"LOCRISK_DB": db}

	t.Run("help", func(t *testing.T) {
		for _, args := range [][]string{{"-h"}, {"serve", "-h"}, {"accounts", "create", "-h"}, {"keys", "create", "-h"},
			{"keys", "list", "-h"}, {"keys", "revoke", "-h"}, {"data", "check", "-h"}, {"accounts", "list", "-h"},
			{"accounts", "update", "-h"}, {"accounts", "disable", "-h"}, {"accounts", "enable", "-h"}, {"version", "-h"}} {
			r := runCLI(t, nil, args...)
			if r.code != 0 || !strings.Contains(r.stdout, "Usage") {
				t.Errorf("locrisk %s: %s; want exit 0 and usage on stdout", strings.Join(args, " "), r)
			}
			// Every flag names its environment variable.
			for _, m := range flagLineRe.FindAllStringSubmatch(r.stdout, -1) {
				env := "LOCRISK_" + strings.ToUpper(strings.ReplaceAll(m[1], "-", "_"))
				if !strings.Contains(r.stdout, "[$"+env+"]") {
					t.Errorf("locrisk %s -h: flag --%s does not mention %s", strings.Join(args[:len(args)-1], " "), m[1], env)
				}
			}
		}
	})

	acct := mustCLI(t, env, "accounts", "create", "--name", "Acme", "--rate-limit", "100000")
	if !accountIDRe.MatchString(acct) {
		t.Fatalf("accounts create printed %q, want only an account id", acct)
	}
	var acctJSON map[string]any
	r := runCLI(t, env, "accounts", "create", "--name", "Beta", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &acctJSON); err != nil || len(acctJSON) != 1 || !accountIDRe.MatchString(str(acctJSON["id"])) {
		t.Errorf("accounts create --json: %s", r)
	}

	secret := mustCLI(t, env, "keys", "create", "--account", acct, "--scopes", "reports:read,reports:create")
	if !secretRe.MatchString(secret) {
		t.Fatalf("keys create printed %q, want only a secret", secret)
	}
	var kj struct {
		ID        string   `json:"id"`
		Key       string   `json:"key"`
		AccountID string   `json:"accountId"`
		Scopes    []string `json:"scopes"`
	}
	r = runCLI(t, env, "keys", "create", "--account", acct, "--scopes", "reports:read,reports:create", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &kj); err != nil || !keyIDRe.MatchString(kj.ID) || !secretRe.MatchString(kj.Key) ||
		kj.AccountID != acct || !sameSet(kj.Scopes, []string{"reports:read", "reports:create"}) {
		t.Errorf("keys create --json: %s", r)
	}

	for _, bad := range []struct {
		name string
		args []string
		msg  string
	}{
		{"unknown account", []string{"keys", "create", "--account", "acct_doesnotexist00000000", "--scopes", "reports:read"}, "acct_doesnotexist00000000"},
		{"unknown scope", []string{"keys", "create", "--account", acct, "--scopes", "reports:read,reports:delete"}, "reports:delete"},
		{"revoke unknown key", []string{"keys", "revoke", "key_doesnotexist000000000"}, "key_doesnotexist000000000"},
		{"accounts create without name", []string{"accounts", "create"}, "--name"},
	} {
		r := runCLI(t, env, bad.args...)
		if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, bad.msg) {
			t.Errorf("%s: %s; want a non-zero exit and a message naming %q on stderr", bad.name, r, bad.msg)
		}
	}

	// keys list --json shows the keys but never a secret.
	r = runCLI(t, env, "keys", "list", "--account", acct, "--json")
	var listed []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || len(listed) != 2 {
		t.Fatalf("keys list --json: %s", r)
	}
	if !slices.ContainsFunc(listed, func(k map[string]any) bool { return k["id"] == kj.ID }) {
		t.Errorf("keys list --json lacks key %s: %s", kj.ID, r.stdout)
	}
	for _, s := range []string{secret, kj.Key, secret[len(secret)-16:], kj.Key[len(kj.Key)-16:]} {
		if strings.Contains(r.stdout+runCLI(t, env, "keys", "list").stdout, s) {
			t.Errorf("keys list shows (part of) a secret: %q", s)
		}
	}

	// A server configured only through the environment, sharing the file.
	srv := startServer(t, map[string]string{"LOCRISK_DB": db, "LOCRISK_ADDR": "127.0.0.1:0", "LOCRISK_DATA_DIR": fixtureData,
		"LOCRISK_WORKERS": "1", "LOCRISK_LOG_FORMAT": "json"}, "serve")
	var listening map[string]any
	for _, rec := range srv.log.records() {
		if rec["msg"] == "listening" {
			listening = rec
		}
	}
	if listening == nil || listening["workers"] != float64(1) || listening["db"] != db {
		t.Errorf("serve did not take LOCRISK_LOG_FORMAT/LOCRISK_WORKERS/LOCRISK_DB: listening record %v", listening)
	}
	list := func(key string) response { return srv.do(t, key, http.MethodGet, jobsPath, nil) }
	if got := list(secret); got.status != http.StatusOK {
		t.Fatalf("list jobs with a CLI-made key: %d %s", got.status, got.body)
	}

	// Accounts and keys made while the server runs, through the
	// environment only, work at once (the contract allows a second).
	envOnly := map[string]string{"LOCRISK_DB": db, "LOCRISK_NAME": "Env Co", "LOCRISK_RATE_LIMIT": "77", "LOCRISK_JSON": "true"}
	r = runCLI(t, envOnly, "accounts", "create")
	var envAcct struct{ ID string }
	if err := json.Unmarshal([]byte(r.stdout), &envAcct); err != nil || !accountIDRe.MatchString(envAcct.ID) {
		t.Fatalf("accounts create from the environment (LOCRISK_JSON=true): %s", r)
	}
	r = runCLI(t, map[string]string{"LOCRISK_DB": db, "LOCRISK_ACCOUNT": envAcct.ID, "LOCRISK_SCOPES": "usage:read"},
		"keys", "create", "--scopes", "reports:read") // the flag beats LOCRISK_SCOPES
	envKey := strings.TrimSpace(r.stdout)
	if r.code != 0 || !secretRe.MatchString(envKey) {
		t.Fatalf("keys create from the environment: %s", r)
	}
	var got response
	waitUntil(t, time.Second, "a new key to be accepted", func() bool { got = list(envKey); return got.status == http.StatusOK })
	if lim := got.header.Get("RateLimit-Limit"); lim != "77" {
		t.Errorf("RateLimit-Limit %q for an account made with LOCRISK_RATE_LIMIT=77", lim)
	}
	if got := srv.do(t, envKey, http.MethodPost, jobsPath, map[string]float64{"latitude": 37.77, "longitude": -122.42}); got.status != http.StatusForbidden {
		t.Errorf("create with a reports:read key (--scopes beat LOCRISK_SCOPES): %d %s, want 403", got.status, got.body)
	}
	r = runCLI(t, map[string]string{"LOCRISK_DB": db, "LOCRISK_ACCOUNT": envAcct.ID, "LOCRISK_JSON": "1"}, "keys", "list")
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || len(listed) != 1 || listed[0]["accountId"] != envAcct.ID {
		t.Errorf("keys list with LOCRISK_ACCOUNT and LOCRISK_JSON: %s", r)
	}

	// Revocation from the command line reaches the running server within
	// a second, though the server has the key in its cache.
	if got := list(kj.Key); got.status != http.StatusOK {
		t.Fatalf("list jobs with the --json key: %d %s", got.status, got.body)
	}
	mustCLI(t, env, "keys", "revoke", kj.ID)
	if got := list(kj.Key); got.status == http.StatusOK {
		t.Logf("revoked key still accepted right after revoke (cached; allowed for up to 1 s)")
	}
	waitUntil(t, time.Second+250*time.Millisecond, "the revoked key to get 401", func() bool {
		got = list(kj.Key)
		return got.status == http.StatusUnauthorized
	})
	var e struct {
		Error struct{ Code, RequestID string }
	}
	if err := json.Unmarshal(got.body, &e); err != nil || e.Error.Code == "" || e.Error.RequestID != got.header.Get("X-Request-Id") {
		t.Errorf("401 body %s", got.body)
	}
	if got := list(secret); got.status != http.StatusOK {
		t.Errorf("the account's other key: %d after revoking %s", got.status, kj.ID)
	}
	r = runCLI(t, env, "keys", "list", "--account", acct, "--json")
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil {
		t.Fatalf("keys list --json: %s", r)
	}
	for _, k := range listed {
		if revoked := k["revokedUtc"] != nil; revoked != (k["id"] == kj.ID) {
			t.Errorf("after revoking %s, keys list shows %v", kj.ID, k)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func str(v any) string { s, _ := v.(string); return s }

// waitUntil polls cond every 10 ms and fails the test if it does not hold
// within limit.
func waitUntil(tb testing.TB, limit time.Duration, what string, cond func() bool) {
	tb.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			tb.Fatalf("waited %s for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
