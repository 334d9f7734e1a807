package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/filelock"
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

// TestDBCommandsNeedTheFile: the commands that only read or change an
// existing database refuse a missing file, naming it, and do not create
// it; accounts create, the documented first step, still does.
func TestDBCommandsNeedTheFile(t *testing.T) {
	dir := t.TempDir()
	tests := [][]string{
		{"db", "purge", "--dry-run"},
		{"db", "purge"},
		{"db", "vacuum"},
		{"keys", "list"},
		{"keys", "create", "--account", "acc_x", "--scopes", "reports:read"},
		{"keys", "revoke", "key_x"},
	}
	for _, args := range tests {
		db := filepath.Join(dir, "nonexist.db")
		r := cmd(t, nil, append(args, "--db", db)...)
		if r.code == 0 || !strings.Contains(r.stderr, "no database file") || !strings.Contains(r.stderr, "nonexist.db") {
			t.Errorf("%v on a missing file: %+v; want a refusal naming it", args, r)
		}
		if _, err := os.Stat(db); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%v created the missing file (%v)", args, err)
		}
	}
	db := filepath.Join(dir, "new.db")
	if r := cmd(t, nil, "accounts", "create", "--name", "Acme", "--db", db); r.code != 0 {
		t.Errorf("accounts create on a new file: %+v", r)
	}
}

// TestDBVacuumRefusesWhileServed: db vacuum takes the serve lock, so it
// refuses a database a server holds, and leaves the lock free after it.
func TestDBVacuumRefusesWhileServed(t *testing.T) {
	if !filelock.Supported {
		t.Skip("need flock: this system has none")
	}
	db := filepath.Join(t.TempDir(), "v.db")
	if r := cmd(t, nil, "accounts", "create", "--name", "Acme", "--db", db); r.code != 0 {
		t.Fatalf("accounts create: %+v", r)
	}
	lock, err := lockServe(db)
	if err != nil {
		t.Fatal(err)
	}
	r := cmd(t, nil, "db", "vacuum", "--db", db)
	if r.code == 0 || !strings.Contains(r.stderr, "stop the server first") {
		t.Errorf("db vacuum while served: %+v; want a refusal", r)
	}
	if err := lock.Unlock(); err != nil {
		t.Fatal(err)
	}
	if r := cmd(t, nil, "db", "vacuum", "--db", db); r.code != 0 {
		t.Fatalf("db vacuum after the server: %+v", r)
	}
	again, err := lockServe(db)
	if err != nil {
		t.Fatalf("the serve lock after a vacuum: %v", err)
	}
	again.Unlock()
}
