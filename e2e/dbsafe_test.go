package e2e

import (
	"bytes"
	"os"
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

// TestServeRefusesDamagedDatabase: serve on a file that is not a SQLite
// database exits non-zero naming the file and what to do, and leaves the
// file as it was.
func TestServeRefusesDamagedDatabase(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "damaged.db")
	garbage := bytes.Repeat([]byte("not a database, only garbage. "), 1000)
	if err := os.WriteFile(db, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, nil, serveArgs(db)...)
	if r.code == 0 {
		t.Fatalf("serve on a damaged file: %s; want a non-zero exit", r)
	}
	for _, want := range []string{"damaged database file", "damaged.db", "restore the file from a backup"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if b, err := os.ReadFile(db); err != nil || !bytes.Equal(b, garbage) {
		t.Errorf("the damaged file changed (%v)", err)
	}
}
