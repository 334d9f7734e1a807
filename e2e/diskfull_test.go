package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mountSmallFS mounts a tmpfs of size bytes under a temporary directory
// for the test and unmounts it at the end. It needs root (or a mount
// namespace), which CI has; elsewhere the test skips.
func mountSmallFS(t *testing.T, size string) string {
	t.Helper()
	// Not under t.TempDir(), which only its owner may enter: a
	// PostgreSQL cluster on it runs as another user.
	dir, err := os.MkdirTemp("", "locrisk-fs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("need root to mount a tmpfs: %v %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file in dir until the file system refuses, and returns it.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			break
		}
	}
	// The last bytes: a file system may take a smaller write still.
	for _, n := range []int{4096, 512, 1} {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	return path
}

// readiness polls /readyz until its status is want, or fails the test
// after timeout; it returns the last body.
func readiness(t *testing.T, srv *server, want string, timeout time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last map[string]any
	for {
		r, err := srv.try("", "GET", "/readyz", nil)
		if err == nil {
			_ = json.Unmarshal(r.body, &last)
			ok := (want == "ready") == (r.status == 200)
			if ok && last["status"] == want {
				return last
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz did not say %s within %s: last %v (%v)", want, timeout, last, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestReadyzFollowsAFullDisk: on a real file system that fills up,
// /readyz says not ready (the database check says why) although nothing
// was refused yet, stays not ready after a restart on the full disk, and
// says ready again once room returns, with no other write. Readiness leads
// the failures, so that traffic can leave a server that cannot write
// before its clients are refused.
func TestReadyzFollowsAFullDisk(t *testing.T) {
	fs := mountSmallFS(t, "256m")
	db := filepath.Join(fs, "full.db")
	newAccountKey(t, db, "reports:create,reports:read")
	srv := startServer(t, nil, serveArgs(db)...)
	readiness(t, srv, "ready", 2*time.Minute)

	filler := fill(t, fs)
	body := readiness(t, srv, "not_ready", 30*time.Second)
	if checks, _ := body["checks"].(map[string]any); !strings.Contains(strings.ToLower(checks["database"].(string)), "full") {
		t.Errorf("/readyz on a full disk: %v, want the database check to say storage full", body)
	}

	// A restart on the full disk: not ready from the start.
	if code, _ := srv.signal(syscall.SIGTERM); code != 0 {
		t.Fatalf("stop: exit %d", code)
	}
	srv = startServer(t, nil, serveArgs(db)...)
	for range 10 {
		if r, err := srv.try("", "GET", "/readyz", nil); err == nil && r.status == 200 {
			t.Fatalf("/readyz after a restart on a full disk: %d %s", r.status, r.body)
		}
		time.Sleep(300 * time.Millisecond)
	}

	// Room returns: ready again by the probe alone.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	readiness(t, srv, "ready", 2*time.Minute)
}

// TestFirstStartOnALittleDisk: a first start where the disk
// has too little room for the engine's reference (about twice its size,
// for the write-ahead log) does not try to save it, which would fill the
// disk and leave no room for any write; it says so in the log, with the
// room it needs, and stays not ready (/readyz says storage full) until
// that much room is free.
func TestFirstStartOnALittleDisk(t *testing.T) {
	fs := mountSmallFS(t, "24m")
	db := filepath.Join(fs, "small.db")
	newAccountKey(t, db, "reports:create,reports:read")
	// The built-in data, whose reference is tens of megabytes (the
	// fixture's is a few kilobytes).
	srv := startServer(t, nil, "serve", "--addr", "127.0.0.1:0", "--db", db, "--log-format", "json")
	readiness(t, srv, "not_ready", 2*time.Minute)
	deadline := time.Now().Add(2 * time.Minute)
	said := false
	for !said && time.Now().Before(deadline) {
		for _, line := range srv.log.Lines() {
			if strings.Contains(line, "reference not cached") && strings.Contains(line, "MB are left") {
				said = true
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !said {
		t.Fatalf("the log does not say that the reference was not saved for want of room:\n%s", strings.Join(srv.log.Lines(), "\n"))
	}
	body := readiness(t, srv, "not_ready", 10*time.Second)
	if checks, _ := body["checks"].(map[string]any); checks["database"] != "storage full" {
		t.Errorf("/readyz on a disk too small for the reference: %v, want the database check to say storage full", body)
	}
}
