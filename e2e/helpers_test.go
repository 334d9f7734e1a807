package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // read-only checks of the server's database file
)

// Set once by TestMain.
var (
	binary      string // the locrisk binary under test
	fixtureData string // absolute path of testdata/data
)

// Bounds on every wait, generous for a loaded 2-core CI machine.
const (
	startTimeout = 30 * time.Second // engine load + listen
	cliTimeout   = 30 * time.Second
	exitTimeout  = 20 * time.Second
)

func TestMain(m *testing.M) {
	flag.Parse()
	code, err := buildAndRun(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// buildAndRun builds the binary from the module root (the parent of this
// package's directory, where `go test` runs us) into a temporary directory
// and runs the tests. The binary is built without -race even when the tests
// are: the race detector would slow the server several times over and
// distort the latency measurements, and the server's own packages have their
// own race-instrumented tests.
func buildAndRun(m *testing.M) (int, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return 0, err
	}
	fixtureData = filepath.Join(root, "testdata", "data")
	tmp, err := os.MkdirTemp("", "locrisk-e2e-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	binary = filepath.Join(tmp, "locrisk")
	if runtime.GOOS == "windows" {
		binary += ".exe"
	}
	// `go test` puts its own GOROOT/bin first on PATH, so this is the same
	// toolchain that builds the tests.
	gotool, err := exec.LookPath("go")
	if err != nil {
		return 0, fmt.Errorf("the go command is needed to build the binary: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	build := exec.CommandContext(ctx, gotool, "build", "-o", binary, "./cmd/locrisk")
	build.Dir = root
	// GOFLAGS might carry -race from the caller; the binary is built plain.
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("go build of %s failed: %w\n%s", root, err, out)
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "e2e: built %s in %s\n", filepath.Base(binary), time.Since(start).Round(time.Millisecond))
	}
	return m.Run(), nil
}

// needSignals skips tests that rely on SIGKILL/SIGTERM semantics.
func needSignals(tb testing.TB) {
	tb.Helper()
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		tb.Skipf("need SIGKILL and SIGTERM: %s has neither (a crash or shutdown test)", runtime.GOOS)
	}
}

// childEnv is this process's environment without any LOCRISK_* variable
// (so a developer's LOCRISK_DATA_DIR or LOCRISK_DB never leaks into a test),
// plus set.
func childEnv(set map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOCRISK_") {
			env = append(env, kv)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

// ---- the command line ----

type cliResult struct {
	code           int
	stdout, stderr string
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
}

// runCLI runs the binary to completion with the given LOCRISK_* environment.
func runCLI(tb testing.TB, env map[string]string, args ...string) cliResult {
	tb.Helper()
	return runBinary(tb, binary, env, args...)
}

// runBinary is runCLI with the binary bin (a baseline build, in the
// measurements that compare two).
func runBinary(tb testing.TB, bin string, env map[string]string, args ...string) cliResult {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = childEnv(env)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.Exited():
		code = ee.ExitCode()
	default:
		tb.Fatalf("locrisk %s: %v (stderr %q)", strings.Join(args, " "), err, errb.String())
	}
	return cliResult{code, out.String(), errb.String()}
}

// mustCLI runs the binary and fails unless it exits 0; it returns stdout
// without the trailing newline.
func mustCLI(tb testing.TB, env map[string]string, args ...string) string {
	tb.Helper()
	r := runCLI(tb, env, args...)
	if r.code != 0 {
		tb.Fatalf("locrisk %s: %s", strings.Join(args, " "), r)
	}
	return strings.TrimRight(r.stdout, "\n")
}

// newAccountKey creates an account (with quota and rate limit high enough
// for tests that poll) and a key with the given scopes in the database file
// db, through the command line, and returns the account id and the secret.
func newAccountKey(tb testing.TB, db, scopes string) (account, secret string) {
	tb.Helper()
	env := map[string]string{"LOCRISK_DB": db}
	account = mustCLI(tb, env, "accounts", "create", "--name", tb.Name(), "--monthly-quota", "1000000", "--rate-limit", "1000000")
	secret = mustCLI(tb, env, "keys", "create", "--account", account, "--scopes", scopes)
	return account, secret
}

// ---- a running server ----

// procLog collects a process's stderr line by line, and spots the
// "listening" line that gives the address.
type procLog struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
	addr    chan string // receives the listening address once
	sent    bool
}

// textListening finds the address in the text log format
// (`... msg=listening addr=127.0.0.1:1234 ...`).
var textListening = regexp.MustCompile(`\bmsg=listening\b.*?\baddr=(\S+)`)

func (l *procLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		l.lines = append(l.lines, line)
		if l.sent {
			continue
		}
		if addr := listeningAddr(line); addr != "" {
			l.sent = true
			l.addr <- addr
		}
	}
	return len(p), nil
}

func listeningAddr(line string) string {
	if strings.HasPrefix(line, "{") {
		var rec struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" {
			return rec.Addr
		}
		return ""
	}
	if m := textListening.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return ""
}

// Lines returns the complete lines so far.
func (l *procLog) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// records returns the JSON log records so far (lines that are not JSON are
// skipped).
func (l *procLog) records() []map[string]any {
	var out []map[string]any
	for _, line := range l.Lines() {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}

type server struct {
	tb   testing.TB
	cmd  *exec.Cmd
	log  *procLog
	addr string
	base string // http://addr
	done chan struct{}

	// Set when done is closed.
	state   *os.ProcessState
	waitErr error
}

// serveArgs is the command line of a test server on a free loopback port
// with JSON logs and the fixture data, plus extra flags.
func serveArgs(db string, extra ...string) []string {
	return append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--data-dir", fixtureData, "--log-format", "json"}, extra...)
}

// startServer starts the binary with args and env and waits until it
// listens. The process is killed when the test ends, whatever happened.
func startServer(tb testing.TB, env map[string]string, args ...string) *server {
	tb.Helper()
	return startBinary(tb, binary, env, args...)
}

// startServerWithin is startServer waiting up to within for the address:
// a first start on a data version builds the engine's reference, which
// takes tens of seconds with the built-in data on a loaded machine.
func startServerWithin(tb testing.TB, within time.Duration, env map[string]string, args ...string) *server {
	tb.Helper()
	return startBinaryWithin(tb, binary, within, env, args...)
}

// startBinary is startServer with the binary bin.
func startBinary(tb testing.TB, bin string, env map[string]string, args ...string) *server {
	tb.Helper()
	return startBinaryWithin(tb, bin, startTimeout, env, args...)
}

// startBinaryWithin is startBinary waiting up to timeout for the
// listening line (a first start on the built-in data builds the engine's
// reference first, which takes a minute or more).
func startBinaryWithin(tb testing.TB, bin string, timeout time.Duration, env map[string]string, args ...string) *server {
	tb.Helper()
	s := &server{tb: tb, log: &procLog{addr: make(chan string, 1)}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Env = childEnv(env)
	s.cmd.Stdout = io.Discard
	s.cmd.Stderr = s.log
	if err := s.cmd.Start(); err != nil {
		tb.Fatalf("start locrisk: %v", err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		s.state = s.cmd.ProcessState
		close(s.done)
	}()
	tb.Cleanup(func() {
		if !s.exited() {
			_ = s.cmd.Process.Kill()
			select {
			case <-s.done:
			case <-time.After(exitTimeout):
				tb.Errorf("locrisk pid %d did not die after SIGKILL", s.cmd.Process.Pid)
			}
		}
		if tb.Failed() {
			s.dumpLog(60)
		}
	})
	select {
	case s.addr = <-s.log.addr:
	case <-s.done:
		s.dumpLog(60)
		tb.Fatalf("locrisk exited before listening: %v", s.waitErr)
	case <-time.After(timeout):
		tb.Fatalf("locrisk did not report a listening address within %s", timeout)
	}
	s.base = "http://" + s.addr
	return s
}

func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *server) dumpLog(n int) {
	lines := s.log.Lines()
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	s.tb.Logf("last %d lines of the server's stderr:\n%s", len(lines), strings.Join(lines, "\n"))
}

// signal sends sig and waits (bounded) for the process to exit; it returns
// the exit code (-1 when killed by a signal) and how long the exit took.
func (s *server) signal(sig os.Signal) (code int, took time.Duration) {
	s.tb.Helper()
	start := time.Now()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.tb.Fatalf("signal %v: %v", sig, err)
	}
	select {
	case <-s.done:
	case <-time.After(exitTimeout):
		s.tb.Fatalf("locrisk did not exit within %s of %v", exitTimeout, sig)
	}
	return s.state.ExitCode(), time.Since(start)
}

func (s *server) kill() { s.signal(syscall.SIGKILL) }

// ---- HTTP ----

var httpClient = &http.Client{Timeout: 15 * time.Second}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request to the server; body, when not nil, is sent as JSON.
func (s *server) do(tb testing.TB, key, method, path string, body any) response {
	tb.Helper()
	r, err := s.try(key, method, path, body)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// try is do that returns transport errors instead of failing the test.
func (s *server) try(key, method, path string, body any) (response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return response{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		return response{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := httpClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return response{}, err
	}
	return response{res.StatusCode, res.Header, b}, nil
}

// object decodes a JSON object body.
func (r response) object(tb testing.TB) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		tb.Fatalf("response %d is not a JSON object: %v: %q", r.status, err, r.body)
	}
	return m
}

const jobsPath = "/api/v1/location-risk/report-jobs"

type point struct {
	name     string
	lat, lon float64
	fips     string
}

// fixturePoints are covered by the fixture world (internal/risk/engine_test.go).
var fixturePoints = []point{
	{"San Francisco", 37.77, -122.42, "06075"},
	{"Chicago", 41.88, -87.63, "17031"},
	{"Miami", 25.76, -80.19, "12086"},
	{"Oklahoma City", 35.47, -97.52, "40109"},
	{"San Juan", 18.43, -66.06, "72127"},
	{"Guam", 13.45, 144.78, "66010"},
}

// createJob posts one job and returns its id; anything but 202 fails.
func (s *server) createJob(tb testing.TB, key string, p point) string {
	tb.Helper()
	r := s.do(tb, key, http.MethodPost, jobsPath, map[string]float64{"latitude": p.lat, "longitude": p.lon})
	if r.status != http.StatusAccepted {
		tb.Fatalf("create job at %s: %d %s", p.name, r.status, r.body)
	}
	id, _ := r.object(tb)["jobId"].(string)
	if id == "" {
		tb.Fatalf("create job: no jobId in %s", r.body)
	}
	return id
}

// jobView is the part of a job the tests read.
type jobView struct {
	JobID    string `json:"jobId"`
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
	Result   *struct {
		ReportID  string `json:"reportId"`
		ReportURL string `json:"reportUrl"`
		PDFURL    string `json:"pdfUrl"`
	} `json:"result"`
	Error *struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		Transient bool   `json:"transient"`
	} `json:"error"`
}

func (s *server) getJob(tb testing.TB, key, id string) jobView {
	tb.Helper()
	r := s.do(tb, key, http.MethodGet, jobsPath+"/"+id, nil)
	if r.status != http.StatusOK {
		tb.Fatalf("GET job %s: %d %s", id, r.status, r.body)
	}
	var j jobView
	if err := json.Unmarshal(r.body, &j); err != nil {
		tb.Fatalf("GET job %s: %v", id, err)
	}
	return j
}

// waitJob polls a job until it is terminal.
func (s *server) waitJob(tb testing.TB, key, id string, timeout time.Duration) jobView {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		j := s.getJob(tb, key, id)
		if j.Status == "completed" || j.Status == "failed" {
			return j
		}
		if time.Now().After(deadline) {
			tb.Fatalf("job %s still %s after %s", id, j.Status, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ---- the database, read-only ----

// openRO opens the server's SQLite file read-only; in WAL mode it reads
// beside the running server without blocking it.
func openRO(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	return db
}

// statusCounts counts the jobs by status.
func statusCounts(tb testing.TB, db *sql.DB) map[string]int {
	tb.Helper()
	rows, err := db.Query(`SELECT status, count(*) FROM report_jobs GROUP BY status`)
	if err != nil {
		tb.Fatalf("count jobs: %v", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			tb.Fatalf("count jobs: %v", err)
		}
		out[st] = n
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("count jobs: %v", err)
	}
	return out
}

// waitCounts polls the database until cond holds.
func waitCounts(tb testing.TB, db *sql.DB, timeout time.Duration, what string, cond func(map[string]int) bool) map[string]int {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c := statusCounts(tb, db)
		if cond(c) {
			return c
		}
		if time.Now().After(deadline) {
			tb.Fatalf("waited %s for %s; jobs by status: %v", timeout, what, c)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dbJob is one report_jobs row with its report, if any.
type dbJob struct {
	id, status         string
	attempts           int
	reportID           sql.NullString
	reports            int // reports rows with this job_id
	reportRowID        sql.NullString
	reportAccount      sql.NullString
	leaseOwner         sql.NullString
	accountID, errCode sql.NullString
}

func dbJobs(tb testing.TB, db *sql.DB) map[string]dbJob {
	tb.Helper()
	rows, err := db.Query(`SELECT j.id, j.status, j.attempts, j.report_id, j.lease_owner, j.account_id, j.error_code,
		(SELECT count(*) FROM reports r WHERE r.job_id = j.id),
		(SELECT r.id FROM reports r WHERE r.job_id = j.id),
		(SELECT r.account_id FROM reports r WHERE r.job_id = j.id)
		FROM report_jobs j`)
	if err != nil {
		tb.Fatalf("read jobs: %v", err)
	}
	defer rows.Close()
	out := map[string]dbJob{}
	for rows.Next() {
		var j dbJob
		if err := rows.Scan(&j.id, &j.status, &j.attempts, &j.reportID, &j.leaseOwner, &j.accountID, &j.errCode,
			&j.reports, &j.reportRowID, &j.reportAccount); err != nil {
			tb.Fatalf("read jobs: %v", err)
		}
		out[j.id] = j
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("read jobs: %v", err)
	}
	return out
}

// completedTransitions counts, per job, the "job transition ... to
// completed" log records in logs.
func completedTransitions(logs ...*procLog) map[string]int {
	n := map[string]int{}
	for _, l := range logs {
		for _, rec := range l.records() {
			if rec["msg"] == "job transition" && rec["to"] == "completed" {
				id, _ := rec["job_id"].(string)
				n[id]++
			}
		}
	}
	return n
}
