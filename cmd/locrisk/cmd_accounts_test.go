package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/sqlite"
)

func TestAccountsManagement(t *testing.T) {
	db := filepath.Join(t.TempDir(), "accounts.db")
	env := map[string]string{"LOCRISK_DB": db}
	acct := strings.TrimSpace(cmd(t, env, "accounts", "create", "--name", "Acme").stdout)
	other := strings.TrimSpace(cmd(t, env, "accounts", "create", "--name", "Beta", "--monthly-quota", "5").stdout)

	list := func() []accountJSON {
		t.Helper()
		r := cmd(t, env, "accounts", "list", "--json")
		var out []accountJSON
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 || len(out) != 2 {
			t.Fatalf("accounts list --json: %+v (%v)", r, err)
		}
		// Accounts made in the same millisecond list in id order.
		if out[0].ID != acct {
			out[0], out[1] = out[1], out[0]
		}
		return out
	}
	got := list()
	if len(got) != 2 || got[0].ID != acct || got[0].Name != "Acme" || got[0].MonthlyQuota != 1000 || got[0].RateLimitPerMinute != 600 ||
		got[0].Status != "enabled" || got[0].DisabledUTC != nil || got[0].CreatedUTC == "" || got[1].ID != other || got[1].MonthlyQuota != 5 {
		t.Fatalf("accounts list --json = %+v", got)
	}
	r := cmd(t, env, "accounts", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "STATUS") || !strings.Contains(r.stdout, acct) || !strings.Contains(r.stdout, `"Acme"`) {
		t.Errorf("accounts list:\n%s", r.stdout)
	}

	// update: only what is given changes.
	r = cmd(t, env, "accounts", "update", acct, "--rate-limit", "120", "--json")
	var up accountJSON
	if err := json.Unmarshal([]byte(r.stdout), &up); err != nil || up.RateLimitPerMinute != 120 || up.MonthlyQuota != 1000 || up.Name != "Acme" {
		t.Errorf("accounts update --rate-limit: %+v (%v)", r, err)
	}
	r = cmd(t, env, "accounts", "update", "--monthly-quota", "0", "--name", "Acme EU", acct)
	if r.code != 0 || !strings.Contains(r.stdout, `"Acme EU"`) {
		t.Errorf("accounts update --monthly-quota --name: %+v", r)
	}
	if got := list()[0]; got.MonthlyQuota != 0 || got.Name != "Acme EU" || got.RateLimitPerMinute != 120 {
		t.Errorf("after updates: %+v", got)
	}

	// disable / enable.
	r = cmd(t, env, "accounts", "disable", acct)
	if r.code != 0 || r.stdout != "disabled "+acct+"\n" {
		t.Errorf("accounts disable: %+v", r)
	}
	if got := list(); got[0].Status != "disabled" || got[0].DisabledUTC == nil || got[1].Status != "enabled" {
		t.Errorf("after disable: %+v", got)
	}
	if r := cmd(t, env, "accounts", "list"); !strings.Contains(r.stdout, "disabled since") {
		t.Errorf("accounts list does not show the disabled account:\n%s", r.stdout)
	}
	if r := cmd(t, env, "accounts", "enable", acct); r.code != 0 || r.stdout != "enabled "+acct+"\n" {
		t.Errorf("accounts enable: %+v", r)
	}
	if got := list()[0]; got.Status != "enabled" || got.DisabledUTC != nil {
		t.Errorf("after enable: %+v", got)
	}

	bad := []struct {
		name string
		args []string
		code int
	}{
		{"update nothing", []string{"accounts", "update", acct}, 2},
		{"update without id", []string{"accounts", "update", "--rate-limit", "5"}, 2},
		{"update zero rate", []string{"accounts", "update", acct, "--rate-limit", "0"}, 2},
		{"update negative quota", []string{"accounts", "update", acct, "--monthly-quota", "-1"}, 2},
		{"update blank name", []string{"accounts", "update", acct, "--name", " "}, 2},
		{"update unknown", []string{"accounts", "update", "acct_nope", "--rate-limit", "5"}, 1},
		{"disable unknown", []string{"accounts", "disable", "acct_nope"}, 1},
		{"disable two", []string{"accounts", "disable", acct, other}, 2},
		{"enable without id", []string{"accounts", "enable"}, 2},
		{"list stray", []string{"accounts", "list", "x"}, 2},
	}
	for _, tt := range bad {
		r := cmd(t, env, tt.args...)
		if r.code != tt.code || r.stderr == "" || r.stdout != "" {
			t.Errorf("%s: exit %d stdout %q stderr %q; want exit %d with a message on stderr only", tt.name, r.code, r.stdout, r.stderr, tt.code)
		}
	}
	if r := cmd(t, env, "accounts", "disable", "acct_nope"); !strings.Contains(r.stderr, "acct_nope not found") {
		t.Errorf("unknown account message: %q", r.stderr)
	}
}

func TestKeyNames(t *testing.T) {
	db := filepath.Join(t.TempDir(), "keys.db")
	env := map[string]string{"LOCRISK_DB": db}
	acct := strings.TrimSpace(cmd(t, env, "accounts", "create", "--name", "Acme").stdout)
	r := cmd(t, env, "keys", "create", "--account", acct, "--scopes", "reports:read", "--name", "CI pipeline", "--json")
	var created struct{ ID, Name string }
	if err := json.Unmarshal([]byte(r.stdout), &created); err != nil || created.Name != "CI pipeline" {
		t.Fatalf("keys create --name --json: %+v (%v)", r, err)
	}
	cmd(t, env, "keys", "create", "--account", acct, "--scopes", "reports:read")
	for _, name := range []string{"two\nlines", strings.Repeat("x", locrisk.MaxKeyNameLen+1)} {
		if r := cmd(t, env, "keys", "create", "--account", acct, "--scopes", "reports:read", "--name", name); r.code != 2 {
			t.Errorf("keys create --name %q: exit %d, want 2", name, r.code)
		}
	}

	// The last use, as a running server records it.
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	used := time.Now().UTC().Add(90 * time.Second)
	if err := st.RecordKeyUse(context.Background(), []locrisk.KeyUse{{KeyID: created.ID, At: used}}); err != nil {
		t.Fatal(err)
	}

	r = cmd(t, env, "keys", "list", "--json")
	var listed []keyJSON
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || len(listed) != 2 {
		t.Fatalf("keys list --json: %q (%v)", r.stdout, err)
	}
	// Keys made in the same millisecond list in id order.
	if listed[0].ID != created.ID {
		listed[0], listed[1] = listed[1], listed[0]
	}
	if listed[0].Name != "CI pipeline" || listed[0].LastUsedUTC == nil || *listed[0].LastUsedUTC != apiTime(used) ||
		listed[1].Name != "" || listed[1].LastUsedUTC != nil {
		t.Errorf("keys list --json: %+v", listed)
	}
	if !strings.Contains(r.stdout, `"lastUsedUtc": null`) || !strings.Contains(r.stdout, `"name": ""`) {
		t.Errorf("keys list --json lacks the null lastUsedUtc or the empty name:\n%s", r.stdout)
	}
	r = cmd(t, env, "keys", "list")
	if !strings.Contains(r.stdout, "LAST-USED") || !strings.Contains(r.stdout, `"CI pipeline"`) || !strings.Contains(r.stdout, apiTime(used)) {
		t.Errorf("keys list:\n%s", r.stdout)
	}
}
