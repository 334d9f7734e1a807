package filelock

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLockExcludes(t *testing.T) {
	if !Supported {
		t.Skip("need flock: this system has none")
	}
	path := filepath.Join(t.TempDir(), "x.lock")
	first, err := Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Errorf("lock file mode %v, want 0600", m)
	}
	// flock locks belong to the open file, so a second open in this
	// process is refused like another process would be.
	_, err = Acquire(path)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Acquire: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("second Acquire: %q does not name the file", err)
	}
	if err := first.Unlock(); err != nil {
		t.Fatal(err)
	}
	again, err := Acquire(path)
	if err != nil {
		t.Fatalf("Acquire after Unlock: %v", err)
	}
	again.Unlock()
}

// TestLockFollowsTheFile: the lock belongs to the file, so its other names
// (a hard link, a symbolic link) are refused while it is held, and taking
// it neither writes to the file nor changes it.
func TestLockFollowsTheFile(t *testing.T) {
	if !Supported {
		t.Skip("need flock: this system has none")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "x.db")
	content := []byte("SQLite format 3\x00 and more")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.db")
	if err := os.Link(path, hard); err != nil {
		t.Skipf("need hard links: %v", err)
	}
	soft := filepath.Join(dir, "soft.db")
	if err := os.Symlink(path, soft); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(hard)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, soft, hard} {
		if _, err := Acquire(p); !errors.Is(err, ErrLocked) {
			t.Errorf("Acquire(%s) while %s is held: %v, want ErrLocked", filepath.Base(p), filepath.Base(hard), err)
		}
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != string(content) {
		t.Errorf("the locked file changed: %q, %v", b, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the locked file's mode changed: %v", err)
	}
}

// TestLockDiesWithProcess: a holder killed with SIGKILL leaves no stale lock.
func TestLockDiesWithProcess(t *testing.T) {
	if !Supported {
		t.Skip("need flock: this system has none")
	}
	if os.Getenv("FILELOCK_HOLD") != "" {
		return // the child: see below
	}
	path := filepath.Join(t.TempDir(), "x.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHold$")
	cmd.Env = append(os.Environ(), "FILELOCK_HOLD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "held" {
		t.Fatalf("child: %q, %v", line, err)
	}
	if _, err := Acquire(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("Acquire while the child holds it: %v, want ErrLocked", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	var l *Lock
	deadline := time.Now().Add(10 * time.Second)
	for l == nil {
		l, err = Acquire(path)
		if err != nil && time.Now().After(deadline) {
			t.Fatalf("Acquire after the holder was killed: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	l.Unlock()
}

// TestHelperHold is the child of TestLockDiesWithProcess: it takes the lock,
// says so, and waits to be killed.
func TestHelperHold(t *testing.T) {
	path := os.Getenv("FILELOCK_HOLD")
	if path == "" {
		t.Skip("only run by another test, as its child process: TestLockDiesWithProcess")
	}
	if _, err := Acquire(path); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("held")
	time.Sleep(time.Minute)
	os.Exit(0)
}
