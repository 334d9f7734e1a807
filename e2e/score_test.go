package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestScorePipes: `locrisk score --in - --out -` between pipes, as a shell
// runs it: every row comes out once, in order, stdout holds only the CSV
// and stderr (not a terminal) the summary without a progress bar.
func TestScorePipes(t *testing.T) {
	const n = 3000
	var in strings.Builder
	in.WriteString("externalId,latitude,longitude,n\n")
	for i := range n {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&in, "chi-%d,41.8781,-87.6298,%d\n", i, i)
		case 1:
			fmt.Fprintf(&in, "mia-%d,25.7617,-80.1918,%d\n", i, i)
		default:
			fmt.Fprintf(&in, "sea-%d,10,10,%d\n", i, i)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "score", "--in", "-", "--out", "-", "--workers", "3")
	cmd.Env = childEnv(map[string]string{"LOCRISK_DATA_DIR": fixtureData})
	cmd.Stdin = strings.NewReader(in.String())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("score: %v\n%s", err, errb.String())
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatalf("stdout is not CSV: %v", err)
	}
	if len(recs) != n+1 || recs[0][0] != "rowNumber" || recs[0][len(recs[0])-1] != "n" {
		t.Fatalf("%d records, header %q", len(recs), recs[0])
	}
	for i, rec := range recs[1:] {
		status := rec[4]
		want := "completed"
		if i%3 == 2 {
			want = "rejected"
		}
		if rec[0] != fmt.Sprint(i+1) || rec[len(rec)-1] != fmt.Sprint(i) || status != want {
			t.Fatalf("row %d: %q", i+1, rec)
		}
	}
	for _, want := range []string{"rows      3000\n", "scored    2000\n", "rejected  1000 (unsupported_location 1000)\n"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	if strings.ContainsAny(errb.String(), "\r\x1b") {
		t.Errorf("a progress bar on a stderr that is not a terminal: %q", errb.String())
	}
}

// TestScoreInterrupt: SIGINT during a run that reads an endless pipe ends
// it with exit 1, and the output file is not left behind half written.
func TestScoreInterrupt(t *testing.T) {
	needSignals(t)
	dir := t.TempDir()
	outPath := filepath.Join(dir, "scored.csv")
	cmd := exec.Command(binary, "score", "--in", "-", "--out", outPath)
	cmd.Env = childEnv(map[string]string{"LOCRISK_DATA_DIR": fixtureData})
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Feed rows until the process stops reading.
	fed := make(chan int)
	go func() {
		rows := 0
		if _, err := io.WriteString(stdin, "externalId,latitude,longitude\n"); err == nil {
			for {
				if _, err := io.WriteString(stdin, "x,41.8781,-87.6298\n"); err != nil {
					break
				}
				rows++
			}
		}
		fed <- rows
	}()
	// Wait for the temporary output to grow: rows are being scored.
	deadline := time.Now().Add(startTimeout)
	for {
		tmp, _ := filepath.Glob(filepath.Join(dir, ".scored.csv.*.tmp"))
		if len(tmp) == 1 {
			if st, err := os.Stat(tmp[0]); err == nil && st.Size() > 100_000 {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no output growing after %s; stderr %s", startTimeout, errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(exitTimeout):
		cmd.Process.Kill()
		t.Fatal("score did not stop after SIGINT")
	}
	stdin.Close()
	<-fed
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(errb.String(), "interrupted after") {
		t.Errorf("exit %v, stderr %s; want exit 1 and 'interrupted after'", err, errb.String())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
