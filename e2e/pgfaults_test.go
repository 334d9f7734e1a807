package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// pgCluster is a PostgreSQL server of the test's own, in a temporary
// directory, listening on a unix socket there only, so that the test can
// restart it (LOCRISK_TEST_POSTGRES names a server the test may not stop).
type pgCluster struct {
	bin, dir string
	as       []string // runuser -u postgres --, when the test runs as root
	dsn      string
}

// startCluster makes and starts a cluster with initdb and pg_ctl, found
// where Debian keeps them or on PATH, or skips the test. Its directory is
// made in parent ("": the system's temporary directory).
func startCluster(t *testing.T, parent string) *pgCluster {
	t.Helper()
	c := &pgCluster{}
	if dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin"); len(dirs) > 0 {
		sort.Strings(dirs)
		c.bin = dirs[len(dirs)-1]
	} else if p, err := exec.LookPath("initdb"); err == nil {
		c.bin = filepath.Dir(p)
	} else {
		t.Skip("need PostgreSQL's server programs (initdb, pg_ctl): apt-get install postgresql")
	}
	dir, err := os.MkdirTemp(parent, "locrisk-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c.dir = dir
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: the cluster is the postgres user's.
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("need a postgres user to run PostgreSQL as root")
		}
		if out, err := exec.Command("chown", u.Username, dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
		c.as = []string{"runuser", "-u", "postgres", "--"}
	}
	c.run(t, "initdb", "-D", filepath.Join(dir, "data"), "-A", "trust", "-U", "postgres")
	c.ctl(t, "start")
	t.Cleanup(func() { c.run(t, "pg_ctl", "-D", filepath.Join(dir, "data"), "-m", "immediate", "stop") })
	c.dsn = "postgres:///postgres?host=" + dir + "&user=postgres"
	return c
}

func (c *pgCluster) run(t *testing.T, prog string, args ...string) {
	t.Helper()
	cmd := append(append([]string{}, c.as...), filepath.Join(c.bin, prog))
	out, err := exec.Command(cmd[0], append(cmd[1:], args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", prog, strings.Join(args, " "), err, out)
	}
}

// ctl runs pg_ctl start or restart and waits until the server accepts
// connections.
func (c *pgCluster) ctl(t *testing.T, action string) {
	t.Helper()
	c.run(t, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-o", "-k "+c.dir+" -c listen_addresses=''",
		"-l", filepath.Join(c.dir, "server.log"), "-m", "fast", "-w", action)
}

// TestPostgresRestartAnswersNo500: requests keep coming while the
// PostgreSQL server restarts; every answer is a success or a retryable
// 503 with Retry-After (database_unavailable), never a 500, and once the
// server is back, requests succeed again without a restart of locrisk.
// Every job acknowledged with 202 exists afterwards. A database restart is
// an outage a client can wait out, so it must be told to retry, and must
// not lose what it was told was accepted.
func TestPostgresRestartAnswersNo500(t *testing.T) {
	needSignals(t)
	pg := startCluster(t, "")
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "secret.key")
	if err := os.WriteFile(keyFile, []byte("AqEaQ/JgH50qGV87unxFR5QfHqjrRvwD6Ppacg9bIOQ=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"LOCRISK_DB": pg.dsn, "LOCRISK_SECRET_KEY_FILE": keyFile}
	account := mustCLI(t, env, "accounts", "create", "--name", "restart", "--monthly-quota", "1000000", "--rate-limit", "1000000")
	key := mustCLI(t, env, "keys", "create", "--account", account, "--scopes", "reports:create,reports:read")
	srv := startServer(t, env, "serve", "--addr", "127.0.0.1:0", "--data-dir", fixtureData, "--log-format", "json")
	readiness(t, srv, "ready", 2*time.Minute)

	var (
		mu       sync.Mutex
		statuses = map[string]int{}
		accepted []string
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	for g := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				var r response
				var err error
				if i%2 == 0 {
					r, err = srv.try(key, "POST", jobsPath, map[string]any{"latitude": 37.77 + float64(g)/1000, "longitude": -122.42 + float64(i%10)/10000})
				} else {
					r, err = srv.try(key, "GET", jobsPath+"?limit=5", nil)
				}
				if err != nil {
					t.Errorf("transport error: %v", err)
					return
				}
				code := r.object(t)["error"]
				label := fmt.Sprint(r.status)
				if e, ok := code.(map[string]any); ok {
					label += " " + fmt.Sprint(e["code"])
					if r.status == 503 && r.header.Get("Retry-After") == "" {
						t.Errorf("503 without Retry-After: %s", r.body)
					}
				}
				mu.Lock()
				statuses[label]++
				if r.status == 202 {
					if id, ok := r.object(t)["jobId"].(string); ok {
						accepted = append(accepted, id)
					}
				}
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	time.Sleep(2 * time.Second)
	pg.ctl(t, "restart")
	time.Sleep(3 * time.Second)
	stop.Store(true)
	wg.Wait()
	t.Logf("answers through the restart: %v", statuses)
	for label, n := range statuses {
		if strings.HasPrefix(label, "500") {
			t.Errorf("%d answers %s through a PostgreSQL restart, want none", n, label)
		}
	}
	// Back to work without restarting locrisk.
	readiness(t, srv, "ready", time.Minute)
	if r := srv.do(t, key, "POST", jobsPath, map[string]any{"latitude": 37.7749, "longitude": -122.4194}); r.status != 202 {
		t.Errorf("a creation after the restart: %d %s", r.status, r.body)
	}
	for _, id := range accepted {
		if r := srv.do(t, key, "GET", jobsPath+"/"+id, nil); r.status != 200 {
			t.Errorf("job %s was acknowledged before the restart; now %d %s", id, r.status, r.body)
		}
	}
}

// TestPostgresReadyzFollowsAFullDisk: the PostgreSQL server's data on a
// small file system that fills up: /readyz says not ready (within the
// time a proof of room holds, with no request refused first), stays not
// ready for a locrisk started on the full disk, and is ready again once
// room returns. Readiness leads the failures, so that traffic can leave a
// node that cannot write before its clients are refused.
func TestPostgresReadyzFollowsAFullDisk(t *testing.T) {
	needSignals(t)
	fs := mountSmallFS(t, "256m")
	if err := os.Chmod(fs, 0o777); err != nil {
		t.Fatal(err)
	}
	pg := startCluster(t, fs)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "secret.key")
	if err := os.WriteFile(keyFile, []byte("AqEaQ/JgH50qGV87unxFR5QfHqjrRvwD6Ppacg9bIOQ=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"LOCRISK_DB": pg.dsn, "LOCRISK_SECRET_KEY_FILE": keyFile}
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", fixtureData, "--log-format", "json"}
	srv := startServer(t, env, args...)
	readiness(t, srv, "ready", 2*time.Minute)

	// PostgreSQL frees space by itself (a checkpoint recycles the
	// write-ahead log and unlinks dropped files), so the disk is kept
	// full: the filler takes whatever is freed.
	filler := fill(t, fs)
	stopFilling := make(chan struct{})
	filling := make(chan struct{})
	go func() {
		defer close(filling)
		for {
			select {
			case <-stopFilling:
				return
			case <-time.After(100 * time.Millisecond):
				topUp(filler)
			}
		}
	}()
	body := readiness(t, srv, "not_ready", time.Minute)
	t.Logf("/readyz on the full disk: %v", body)

	if code, _ := srv.signal(syscall.SIGTERM); code != 0 {
		t.Fatalf("stop: exit %d", code)
	}
	srv = startServer(t, env, args...)
	for range 10 {
		if r, err := srv.try("", "GET", "/readyz", nil); err == nil && r.status == 200 {
			t.Fatalf("/readyz after a restart on a full disk: %d %s", r.status, r.body)
		}
		time.Sleep(300 * time.Millisecond)
	}
	close(stopFilling)
	<-filling
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	readiness(t, srv, "ready", 2*time.Minute)
}

// topUp appends to the filler file until the file system refuses again.
func topUp(path string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			return
		}
	}
}
