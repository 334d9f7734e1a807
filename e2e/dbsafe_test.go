package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOneServerPerDatabase: a second serve on the same database file exits
// at once with a message naming the file, while the other commands keep
// working beside the first; a server killed with SIGKILL leaves no stale
// lock.
func TestOneServerPerDatabase(t *testing.T) {
	needSignals(t)
	t.Parallel()
	db := filepath.Join(t.TempDir(), "one.db")
	first := startServer(t, nil, serveArgs(db)...)

	r := runCLI(t, nil, serveArgs(db)...)
	if r.code == 0 {
		t.Fatalf("a second serve on %s: %s; want a non-zero exit", db, r)
	}
	for _, want := range []string{"another locrisk serve is already using the database", "one.db", "stop it first"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("second serve: stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if first.exited() {
		t.Fatal("the first server stopped")
	}

	// The other commands share the file with the running server.
	_, key := newAccountKey(t, db, "reports:create,reports:read")
	mustCLI(t, map[string]string{"LOCRISK_DB": db}, "keys", "list")
	if res := first.do(t, key, "GET", jobsPath, nil); res.status != 200 {
		t.Fatalf("GET %s with a key made beside the server: %d %s", jobsPath, res.status, res.body)
	}

	first.kill()
	second := startServer(t, nil, serveArgs(db)...)
	if res := second.do(t, key, "GET", jobsPath, nil); res.status != 200 {
		t.Fatalf("GET %s after a restart: %d %s", jobsPath, res.status, res.body)
	}
}
