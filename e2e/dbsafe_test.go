package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOneServerPerDatabase: a second serve on the same database file exits
// at once with a message naming the file, whatever name it is given (the
// same path, a symbolic link, a hard link with its own key file), and so
// does db vacuum, while the other commands keep working beside the first;
// a server killed with SIGKILL leaves no stale lock.
func TestOneServerPerDatabase(t *testing.T) {
	needSignals(t)
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "one.db")
	first := startServer(t, nil, serveArgs(db)...)

	hard, soft := filepath.Join(dir, "hard.db"), filepath.Join(dir, "soft.db")
	if err := os.Link(db, hard); err != nil {
		t.Fatal(err)
	}
	keyFile, err := os.ReadFile(db + ".key")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hard+".key", keyFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(db, soft); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"same path", serveArgs(db), []string{"another locrisk serve (or db vacuum) is already using the database", "one.db", "stop it first"}},
		{"symbolic link", serveArgs(soft), []string{"already using the database", "soft.db"}},
		{"hard link", serveArgs(hard), []string{"already using the database", "hard.db"}},
		{"db vacuum", []string{"db", "vacuum", "--db", db}, []string{"a locrisk serve is using the database", "one.db", "stop the server first"}},
	}
	for _, tt := range tests {
		r := runCLI(t, nil, tt.args...)
		if r.code == 0 {
			t.Errorf("%s beside a running server: %s; want a non-zero exit", tt.name, r)
		}
		for _, want := range tt.want {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", tt.name, want, r.stderr)
			}
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

// TestSecretsAtRest: serve creates the database and its key file readable
// by the owner only; the signing secret an endpoint is created with is not
// in the database file; another key, or a key file given but absent, stops
// serve with a message saying what to do.
func TestSecretsAtRest(t *testing.T) {
	needSignals(t)
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "sealed.db")
	srv := startServer(t, nil, serveArgs(db, "--webhook-allow-private")...)
	_, key := newAccountKey(t, db, "webhooks:read,webhooks:write")
	res := srv.do(t, key, "POST", "/api/v1/webhooks", map[string]any{
		"name": "hook", "url": "http://127.0.0.1:9/hook", "events": []string{"report.job.completed"}})
	if res.status != 201 {
		t.Fatalf("POST /webhooks: %d %s", res.status, res.body)
	}
	secret, _ := res.object(t)["signingSecret"].(string)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("signingSecret %q", secret)
	}
	if code, _ := srv.signal(syscall.SIGTERM); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM", code)
	}

	for _, p := range []string{db, db + ".key"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(p), m)
		}
	}
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(secret)) {
		t.Error("the database file contains the signing secret")
	}

	other := filepath.Join(dir, "other.key")
	if err := os.WriteFile(other, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"another key", map[string]string{"LOCRISK_SECRET_KEY_FILE": other},
			[]string{"does not open the webhook signing secrets", "other.key"}},
		{"key file absent", map[string]string{"LOCRISK_SECRET_KEY_FILE": filepath.Join(dir, "absent.key")},
			[]string{"absent.key", "head -c 32 /dev/urandom | base64"}},
	}
	for _, tt := range tests {
		r := runCLI(t, tt.env, serveArgs(db)...)
		if r.code == 0 {
			t.Errorf("%s: serve exited 0; want a refusal", tt.name)
		}
		for _, want := range tt.want {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", tt.name, want, r.stderr)
			}
		}
	}
}
