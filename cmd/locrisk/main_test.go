package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/sqlite"
)

// fixtureData is the hand-written fixture world the engine loads in tests.
const fixtureData = "../../testdata/data"

type result struct {
	code           int
	stdout, stderr string
}

// cmd runs the command line in-process with the given environment.
func cmd(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	code := run(context.Background(), args, lookup, strings.NewReader(""), &out, &errb)
	return result{code, out.String(), errb.String()}
}

func TestHelp(t *testing.T) {
	tests := []struct {
		args     []string
		code     int
		contains []string
	}{
		{nil, 2, nil},
		{[]string{"-h"}, 0, []string{"Commands:", "keys create", "data check", "LOCRISK_"}},
		{[]string{"help"}, 0, []string{"Commands:"}},
		{[]string{"bogus"}, 2, nil},
		{[]string{"keys"}, 2, nil},
		{[]string{"keys", "rotate"}, 2, nil},
		{[]string{"keys", "-h"}, 0, []string{"keys create", "keys list", "keys revoke"}},
		{[]string{"serve", "--bogus"}, 2, nil},
		{[]string{"serve", "-h"}, 0, []string{"--addr", "$LOCRISK_ADDR", "--data-dir", "$LOCRISK_DATA_DIR", "--workers", "--job-max-attempts",
			"--webhook-retry-schedule", "--webhook-workers", "--webhook-per-endpoint", "--webhook-per-account", "$LOCRISK_WEBHOOK_PER_ACCOUNT", "--webhook-allow-private", "--faults", "--log-format", "--retention", "$LOCRISK_RETENTION", "--max-in-flight", "--max-connections", "--idle-timeout", "--memory-limit", "$LOCRISK_MEMORY_LIMIT", "512MiB", "Examples:", "127.0.0.1:8080"}},
		{[]string{"accounts", "create", "-h"}, 0, []string{"--name", "--monthly-quota", "(default 1000)", "--rate-limit", "(default 600)", "--json", "Examples:"}},
		{[]string{"keys", "create", "--help"}, 0, []string{"--account", "--scopes", "--expires-in", "--allow-ip", "--scope-version", "$LOCRISK_SCOPE_VERSION", "--name", "usage:read", "Examples:"}},
		{[]string{"keys", "list", "-h"}, 0, []string{"--account", "--json", "last use", "Examples:"}},
		{[]string{"accounts", "-h"}, 0, []string{"accounts list", "accounts update", "accounts disable", "accounts enable"}},
		{[]string{"accounts", "update", "-h"}, 0, []string{"ACCOUNT_ID", "--name", "--monthly-quota", "--rate-limit", "Examples:"}},
		{[]string{"accounts", "disable", "-h"}, 0, []string{"ACCOUNT_ID", "within a second", "Examples:"}},
		{[]string{"version", "-h"}, 0, []string{"--json", "Examples:"}},
		{[]string{"keys", "revoke", "-h"}, 0, []string{"KEY_ID", "Examples:"}},
		{[]string{"data", "check", "-h"}, 0, []string{"--data-dir", "Examples:"}},
		{[]string{"db", "purge", "-h"}, 0, []string{"--retention", "(default 180d)", "$LOCRISK_RETENTION", "--dry-run", "Examples:"}},
		{[]string{"db", "vacuum", "-h"}, 0, []string{"--db", "Examples:"}},
		{[]string{"db", "purge", "--retention", "90d"}, 2, nil},
	}
	for _, tt := range tests {
		r := cmd(t, nil, tt.args...)
		if r.code != tt.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tt.args, r.code, tt.code, r.stderr)
		}
		for _, s := range tt.contains {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("%v: help lacks %q", tt.args, s)
			}
		}
		if tt.code == 2 && r.stderr == "" {
			t.Errorf("%v: usage error without a message", tt.args)
		}
	}
}

// TestHelpCommandColumn: in the command list of `locrisk -h`, every
// summary starts in the same column, at least two spaces past the longest
// command, and every command of the table is listed.
func TestHelpCommandColumn(t *testing.T) {
	r := cmd(t, nil, "-h")
	_, list, ok := strings.Cut(r.stdout, "Commands:\n")
	if !ok {
		t.Fatalf("no command list:\n%s", r.stdout)
	}
	list, _, _ = strings.Cut(list, "\n\n")
	lines := strings.Split(list, "\n")
	if len(lines) != len(commands()) {
		t.Fatalf("%d lines in the command list, want %d:\n%s", len(lines), len(commands()), list)
	}
	column := -1
	for i, k := range commands() {
		line := lines[i]
		rest, ok := strings.CutPrefix(line, "  "+k.path)
		if !ok || !strings.HasPrefix(rest, "  ") || !strings.HasSuffix(line, k.summary) {
			t.Errorf("line %q, want %q, two spaces or more, then %q", line, "  "+k.path, k.summary)
			continue
		}
		at := len(line) - len(k.summary)
		if column < 0 {
			column = at
		}
		if at != column {
			t.Errorf("the summary of %q starts in column %d, the first one's in %d:\n%s", k.path, at, column, list)
		}
	}
}

func TestAccountsAndKeys(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cli.db")
	env := map[string]string{"LOCRISK_DB": db}

	r := cmd(t, env, "accounts", "create", "--name", "Acme")
	acct := strings.TrimSpace(r.stdout)
	if r.code != 0 || !regexp.MustCompile(`^acct_[0-9A-Za-z]{20,}$`).MatchString(acct) {
		t.Fatalf("accounts create: %+v", r)
	}
	r = cmd(t, env, "accounts", "create", "--name", "Beta", "--json")
	var created map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &created); err != nil || len(created) != 1 || !strings.HasPrefix(created["id"], "acct_") {
		t.Errorf("accounts create --json printed %q", r.stdout)
	}

	// The environment fills flags; the command line beats it.
	envQ := map[string]string{"LOCRISK_DB": db, "LOCRISK_NAME": "From env", "LOCRISK_MONTHLY_QUOTA": "5", "LOCRISK_RATE_LIMIT": "9"}
	fromEnv := strings.TrimSpace(cmd(t, envQ, "accounts", "create").stdout)
	fromFlag := strings.TrimSpace(cmd(t, envQ, "accounts", "create", "--monthly-quota", "7").stdout)
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, c := range []struct {
		id           string
		quota, limit int
	}{{acct, 1000, 600}, {fromEnv, 5, 9}, {fromFlag, 7, 9}} {
		a, err := st.GetAccount(context.Background(), c.id)
		if err != nil || a.MonthlyQuota != c.quota || a.RateLimitPerMinute != c.limit {
			t.Errorf("account %q: %+v %v; want quota %d rate %d", c.id, a, err, c.quota, c.limit)
		}
	}

	usage := []struct {
		name string
		env  map[string]string
		args []string
		code int
	}{
		{"no name", env, []string{"accounts", "create"}, 2},
		{"negative quota", env, []string{"accounts", "create", "--name", "x", "--monthly-quota", "-1"}, 2},
		{"bad env number", map[string]string{"LOCRISK_DB": db, "LOCRISK_RATE_LIMIT": "many"}, []string{"accounts", "create", "--name", "x"}, 2},
		{"stray argument", env, []string{"accounts", "create", "--name", "x", "extra"}, 2},
		{"no account", env, []string{"keys", "create", "--scopes", "reports:read"}, 2},
		{"no scopes", env, []string{"keys", "create", "--account", acct}, 2},
		{"unknown scope", env, []string{"keys", "create", "--account", acct, "--scopes", "reports:read,reports:write"}, 2},
		{"bad cidr", env, []string{"keys", "create", "--account", acct, "--scopes", "reports:read", "--allow-ip", "10.0.0.0/40"}, 2},
		{"bad version", env, []string{"keys", "create", "--account", acct, "--scopes", "reports:read", "--scope-version", "3"}, 2},
		{"bad expiry", env, []string{"keys", "create", "--account", acct, "--scopes", "reports:read", "--expires-in", "soon"}, 2},
		{"zero expiry", env, []string{"keys", "create", "--account", acct, "--scopes", "reports:read", "--expires-in", "0s"}, 2},
		{"unknown account", env, []string{"keys", "create", "--account", "acct_nope", "--scopes", "reports:read"}, 1},
		{"revoke without id", env, []string{"keys", "revoke"}, 2},
		{"revoke unknown", env, []string{"keys", "revoke", "key_nope"}, 1},
		{"data check with an argument", nil, []string{"data", "check", "extra"}, 2},
		{"data export without a folder", nil, []string{"data", "export"}, 2},
		{"data export into a file", nil, []string{"data", "export", "main_test.go"}, 1},
	}
	for _, u := range usage {
		r := cmd(t, u.env, u.args...)
		if r.code != u.code || r.stderr == "" || r.stdout != "" {
			t.Errorf("%s: exit %d stdout %q stderr %q; want exit %d with a message on stderr only", u.name, r.code, r.stdout, r.stderr, u.code)
		}
	}
	if r := cmd(t, env, "keys", "create", "--account", "acct_nope", "--scopes", "reports:read"); !strings.Contains(r.stderr, "acct_nope not found") {
		t.Errorf("unknown account message: %q", r.stderr)
	}

	r = cmd(t, env, "keys", "create", "--account", acct, "--scopes", "reports:create, reports:read", "--expires-in", "30d", "--allow-ip", "203.0.113.0/24,::1")
	secret := strings.TrimSpace(r.stdout)
	if r.code != 0 || !regexp.MustCompile(`^lrk_[0-9A-Za-z]{32,}$`).MatchString(secret) {
		t.Fatalf("keys create: %+v", r)
	}
	k, _, err := st.KeyBySecret(context.Background(), secret)
	if err != nil || k.ExpiresUTC == nil || len(k.AllowedCIDRs) != 2 || len(k.Scopes) != 2 || k.ScopeVersion != 2 {
		t.Errorf("created key %+v, %v", k, err)
	} else if d := k.ExpiresUTC.Sub(k.CreatedUTC); d != 30*24*time.Hour {
		t.Errorf("30d key expires after %v", d)
	}

	r = cmd(t, env, "keys", "create", "--account", acct, "--scopes", "reports:read", "--scope-version", "1", "--json")
	var kj struct {
		ID, Key, AccountID string
		Scopes             []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &kj); err != nil || !strings.HasPrefix(kj.ID, "key_") || !strings.HasPrefix(kj.Key, "lrk_") ||
		kj.AccountID != acct || len(kj.Scopes) != 1 || kj.Scopes[0] != "reports:read" {
		t.Errorf("keys create --json printed %q", r.stdout)
	}
	if !strings.Contains(r.stdout, `"accountId"`) {
		t.Errorf("keys create --json lacks accountId: %q", r.stdout)
	}
	if legacy, _, err := st.KeyBySecret(context.Background(), kj.Key); err != nil || legacy.ScopeVersion != 1 {
		t.Errorf("--scope-version 1 key: %+v %v", legacy, err)
	}

	// list: table and JSON, filtered by account.
	r = cmd(t, env, "keys", "list")
	if r.code != 0 || !strings.Contains(r.stdout, kj.ID) || !strings.Contains(r.stdout, k.ID) || !strings.Contains(r.stdout, "HINT") ||
		strings.Contains(r.stdout, secret[8:]) {
		t.Errorf("keys list:\n%s", r.stdout)
	}
	var listed []map[string]any
	r = cmd(t, env, "keys", "list", "--account", acct, "--json")
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || len(listed) != 2 {
		t.Fatalf("keys list --json: %q (%v)", r.stdout, err)
	}
	if listed[0]["revokedUtc"] != nil || listed[0]["expiresUtc"] == nil {
		t.Errorf("listed key %v", listed[0])
	}
	r = cmd(t, env, "keys", "list", "--account", created["id"], "--json")
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("keys list for an account without keys printed %q, want []", r.stdout)
	}

	// revoke, with the flag after the positional argument.
	r = cmd(t, nil, "keys", "revoke", k.ID, "--db", db)
	if r.code != 0 {
		t.Fatalf("keys revoke: %+v", r)
	}
	if got, _, _ := st.KeyBySecret(context.Background(), secret); got.RevokedUTC == nil {
		t.Error("key not revoked")
	}
	r = cmd(t, env, "keys", "list", "--account", acct, "--json")
	_ = json.Unmarshal([]byte(r.stdout), &listed)
	if listed[0]["revokedUtc"] == nil {
		t.Errorf("revoked key listed as %v", listed[0])
	}
}

func TestServeStartupErrors(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "never.db")
	tests := []struct {
		name    string
		args    []string
		code    int
		mention string
	}{
		{"data folder that does not exist", []string{"serve", "--db", db, "--data-dir", filepath.Join(dir, "nowhere")}, 1, "nowhere: no such file or directory"},
		{"data folder that is a file", []string{"serve", "--db", db, "--data-dir", filepath.Join(fixtureData, "manifest.json")}, 1, "is not a directory"},
		{"missing data", []string{"serve", "--db", db, "--data-dir", filepath.Join(dir, "empty")}, 1, "empty"},
		{"bad faults", []string{"serve", "--db", db, "--data-dir", fixtureData, "--faults", "report.generate=sometimes"}, 2, "--faults"},
		{"bad schedule", []string{"serve", "--db", db, "--data-dir", fixtureData, "--webhook-retry-schedule", "10s,-1m"}, 2, "--webhook-retry-schedule"},
		{"bad log format", []string{"serve", "--db", db, "--data-dir", fixtureData, "--log-format", "xml"}, 2, "--log-format"},
		{"no workers", []string{"serve", "--db", db, "--data-dir", fixtureData, "--workers", "0"}, 2, "--workers"},
		{"no attempts", []string{"serve", "--db", db, "--data-dir", fixtureData, "--job-max-attempts", "0"}, 2, "--job-max-attempts"},
		{"bad memory limit", []string{"serve", "--db", db, "--data-dir", fixtureData, "--memory-limit", "512MB"}, 2, "--memory-limit"},
		{"memory limit without a unit", []string{"serve", "--db", db, "--data-dir", fixtureData, "--memory-limit", "10"}, 2, "no unit"},
		{"memory limit of 1KiB", []string{"serve", "--db", db, "--data-dir", fixtureData, "--memory-limit", "1KiB"}, 2, "smallest limit, 64MiB"},
		{"memory limit below the floor", []string{"serve", "--db", db, "--data-dir", fixtureData, "--memory-limit", "63MiB"}, 2, "--memory-limit"},
		{"no connections", []string{"serve", "--db", db, "--data-dir", fixtureData, "--max-connections", "0"}, 2, "--max-connections"},
		{"no idle time", []string{"serve", "--db", db, "--data-dir", fixtureData, "--idle-timeout", "0s"}, 2, "--idle-timeout"},
		{"no requests in flight", []string{"serve", "--db", db, "--data-dir", fixtureData, "--max-in-flight", "1"}, 2, "--max-in-flight"},
		{"no webhook slot per endpoint", []string{"serve", "--db", db, "--data-dir", fixtureData, "--webhook-per-endpoint", "0"}, 2, "--webhook-per-endpoint"},
		{"fewer webhook workers than one endpoint takes", []string{"serve", "--db", db, "--data-dir", fixtureData, "--webhook-workers", "2", "--webhook-per-endpoint", "3"}, 2, "--webhook-workers"},
		{"fewer webhook workers than one account takes", []string{"serve", "--db", db, "--data-dir", fixtureData, "--webhook-workers", "4"}, 2, "--webhook-per-account"},
		{"no webhook slot per account", []string{"serve", "--db", db, "--data-dir", fixtureData, "--webhook-per-account", "0"}, 2, "--webhook-per-account"},
		{"account limit below the endpoint limit", []string{"serve", "--db", db, "--data-dir", fixtureData, "--webhook-per-endpoint", "3", "--webhook-per-account", "2"}, 2, "--webhook-per-account"},
		{"account limit above the pool", []string{"serve", "--db", db, "--data-dir", fixtureData, "--webhook-workers", "8", "--webhook-per-account", "9"}, 2, "--webhook-workers"},
		{"retention too short", []string{"serve", "--db", db, "--data-dir", fixtureData, "--retention", "30d"}, 2, "--retention"},
		{"retention not a duration", []string{"serve", "--db", db, "--data-dir", fixtureData, "--retention", "soon"}, 2, "--retention"},
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		start := time.Now()
		r := cmd(t, nil, tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.mention) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d mentioning %q", tt.name, r.code, r.stderr, tt.code, tt.mention)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v to fail", tt.name, d)
		}
	}
	// The per-account limit from its environment variable is checked too.
	if r := cmd(t, map[string]string{"LOCRISK_WEBHOOK_PER_ACCOUNT": "40"}, "serve", "--db", db, "--data-dir", fixtureData); r.code != 2 ||
		!strings.Contains(r.stderr, "--webhook-per-account (40)") {
		t.Errorf("LOCRISK_WEBHOOK_PER_ACCOUNT=40: exit %d, stderr %q; want exit 2 naming the limit", r.code, r.stderr)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a failed start created the database file (stat: %v)", err)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServe runs the server on the fixture data, with accounts and keys made
// by the command line on the same file while it runs, creates a job through
// the API, waits for the report, and stops it with a cancel (the signal).
func TestServe(t *testing.T) {
	db := filepath.Join(t.TempDir(), "serve.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	env := map[string]string{"LOCRISK_DATA_DIR": fixtureData, "LOCRISK_DB": db, "LOCRISK_LOG_FORMAT": "json"}
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--workers", "2", "--faults", "report.generate=transient:first=1"},
			func(k string) (string, bool) { v, ok := env[k]; return v, ok }, strings.NewReader(""), &bytes.Buffer{}, &stderr)
	}()

	var addr string
	deadline := time.Now().Add(30 * time.Second)
	for addr == "" {
		select {
		case code := <-done:
			t.Fatalf("serve exited %d early:\n%s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listening line after 30s:\n%s", stderr.String())
		}
		sc := bufio.NewScanner(strings.NewReader(stderr.String()))
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				addr = line.Addr
			}
		}
		time.Sleep(20 * time.Millisecond)
	}

	acct := strings.TrimSpace(cmd(t, env, "accounts", "create", "--name", "Serve test").stdout)
	secret := strings.TrimSpace(cmd(t, env, "keys", "create", "--account", acct, "--scopes", "reports:create,reports:read").stdout)
	if secret == "" {
		t.Fatal("no key")
	}
	req, _ := http.NewRequest("POST", "http://"+addr+"/api/v1/location-risk/report-jobs", strings.NewReader(`{"latitude": 41.8781, "longitude": -87.6298}`))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	var job struct {
		JobID, Status string
		Attempts      int
		Result        *struct{ ReportID string }
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("create job: %s", resp.Status)
	}
	json.NewDecoder(resp.Body).Decode(&job)
	resp.Body.Close()
	for deadline := time.Now().Add(10 * time.Second); job.Status != "completed"; {
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s", job.JobID, job.Status)
		}
		time.Sleep(20 * time.Millisecond)
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/location-risk/report-jobs/"+job.JobID, nil)
		req.Header.Set("X-API-Key", secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(resp.Body).Decode(&job)
		resp.Body.Close()
	}
	if job.Attempts != 2 || job.Result == nil {
		t.Errorf("job with transient:first=1 completed as %+v, want attempt 2 with a result", job)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve exited %d after the stop signal:\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	log := stderr.String()
	// The retention purge runs at start-up and logs its counts; a new file
	// gives space back, so there is no advice to vacuum it.
	for _, want := range []string{`"msg":"listening"`, `"msg":"job transition"`, `"msg":"stopped"`, `"msg":"retention purge"`, `"report_jobs":0`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s", want)
		}
	}
	if strings.Contains(log, "db vacuum") {
		t.Errorf("a new file is told to vacuum:\n%s", log)
	}
	if t.Failed() {
		fmt.Println(log)
	}
}
