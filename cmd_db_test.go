package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestDBPurge: the command purges a database (here, nothing old yet) and
// says what it did; a dry run deletes nothing; vacuum switches the mode.
func TestDBPurge(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	env := map[string]string{"LOCRISK_DB": db}
	if r := cmd(t, env, "accounts", "create", "--name", "Acme"); r.code != 0 {
		t.Fatalf("accounts create: %+v", r)
	}
	for _, args := range [][]string{{"--dry-run", "--json"}, {"--json", "--retention", "0"}} {
		r := cmd(t, env, append([]string{"db", "purge"}, args...)...)
		if r.code != 0 {
			t.Fatalf("db purge %v: %+v", args, r)
		}
		var out struct {
			DryRun  bool             `json:"dryRun"`
			Deleted map[string]int64 `json:"deleted"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Deleted == nil {
			t.Fatalf("db purge %v output %q: %v", args, r.stdout, err)
		}
		if out.DryRun != (args[0] == "--dry-run") || out.Deleted["reports"] != 0 {
			t.Errorf("db purge %v: %+v", args, out)
		}
		if !strings.Contains(r.stderr, "retention purge") {
			t.Errorf("db purge %v logged %q, want the run's line", args, r.stderr)
		}
	}
	r := cmd(t, env, "db", "purge")
	if r.code != 0 || !strings.Contains(r.stdout, "reports") || !strings.Contains(r.stdout, "freed pages") {
		t.Errorf("db purge: %+v", r)
	}
	if r := cmd(t, env, "db", "vacuum"); r.code != 0 || !strings.Contains(r.stdout, "incremental vacuum on") {
		t.Errorf("db vacuum: %+v", r)
	}
}
