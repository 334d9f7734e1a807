package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/loadgen"
	"github.com/locrisk/locrisk/internal/view"
)

// TestWholePathThroughput measures what a job is worth to a client: the
// jobs completed per second through the real binary with its workers
// running, side by side in one run with the engine's own rate on the same
// places (`locrisk score`) and with the bare-insert floor of job creation
// (docs/performance.md, The whole path). It prints the figures and their
// ratios; it asserts only that every accepted job completed exactly once.
//
//	LOCRISK_LOAD=1 go test -run WholePathThroughput -v -timeout 20m ./e2e
//
// LOCRISK_WHOLE_BURST sets the creation burst (default 8s: 32 connections
// for 8 s, the load the whole path's targets were first measured under,
// with wrk). LOCRISK_WHOLE_PROFILE=FILE also takes a CPU profile of the
// server from the burst's start for LOCRISK_WHOLE_PROFILE_SECONDS (default
// 20), written to FILE, for `go tool pprof FILE` (serve --pprof,
// docs/operations.md, Profiles). LOCRISK_WHOLE_WORKERS sets serve's
// --workers. LOCRISK_WHOLE_BASE=BINARY measures another build too (a
// baseline: `git worktree add` the commit, `go build -o` it), the two
// taking turns twice each, so that a change's cost is read side by side on
// this noisy machine. It also prints the ceiling no server can pass on
// these cores: jobs created at the bare insert's rate and computed at the
// engine's, one after the other.
func TestWholePathThroughput(t *testing.T) {
	if os.Getenv("LOCRISK_LOAD") == "" {
		t.Skip("need LOCRISK_LOAD=1: the whole-path measurement")
	}
	burst := 8 * time.Second
	if v := os.Getenv("LOCRISK_WHOLE_BURST"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("LOCRISK_WHOLE_BURST=%q: want a duration", v)
		}
		burst = d
	}
	dir := t.TempDir()
	points := coveredPoints(t, dir, 60000)
	t.Logf("%d covered places", len(points))

	// The engine's own rate on the same places, with the reference read
	// from the cache the first run wrote.
	cache := filepath.Join(dir, "ref.cache")
	in := filepath.Join(dir, "covered.csv")
	writePoints(t, in, points)
	engineRate := scoreRate(t, in, cache)
	engineCPU := scoreCPUPerPoint(t, in, points, cache)

	// The floor of job creation: one INSERT per request.
	base := baselineServer(t, "FULL")
	floor := runLoad(t, base.Listener.Addr().String(), loadgen.Clients, burst, loadgen.Posts("/"))

	// The whole path: a burst of creations while the workers run, then the
	// wait until every accepted job has completed. With a baseline binary
	// (LOCRISK_WHOLE_BASE), the two take turns, twice each, in this run.
	profile := os.Getenv("LOCRISK_WHOLE_PROFILE")
	bins := []string{binary}
	if base := os.Getenv("LOCRISK_WHOLE_BASE"); base != "" {
		bins = []string{base, binary, base, binary}
		profile = ""
	}
	for i, bin := range bins {
		name := "this build"
		if bin != binary {
			name = "baseline " + filepath.Base(bin)
		}
		w := wholePath(t, bin, filepath.Join(dir, fmt.Sprintf("whole%d.db", i)), points, burst, profile)
		t.Logf("[%s] creation: %d accepted in %s, %.0f jobs/s (p50 %.1f ms, p99 %.1f ms); bare insert %.0f req/s: %.0f%%",
			name, w.accepted, w.created.Elapsed.Round(time.Millisecond), w.created.Rate(), w.created.PctMS(50), w.created.PctMS(99),
			floor.Rate(), 100*w.created.Rate()/floor.Rate())
		t.Logf("[%s] whole path: %d completed %s after the burst began: %.0f jobs/s", name, w.done, w.total.Round(time.Millisecond), w.rate())
		t.Logf("[%s] engine (locrisk score, same places): %.0f places/s; the whole path is %.0f%% of it", name, engineRate, 100*w.rate()/engineRate)
		// The most any server could do on these cores: create at the bare
		// insert's rate and compute at the engine's, one after the other.
		ceiling := 1 / (1/floor.Rate() + 1/engineRate)
		t.Logf("[%s] ceiling (bare insert, then engine, on the same cores): %.0f jobs/s, %.0f%% of the engine; the whole path is %.0f%% of the ceiling",
			name, ceiling, 100*ceiling/engineRate, 100*w.rate()/ceiling)
		if w.done > 0 {
			perJob := w.cpu / time.Duration(w.done)
			t.Logf("[%s] cost: server CPU %d µs per completed job (%.1f CPU-s for %d jobs, creation included); engine CPU %d µs per point; ratio engine/server %.2f; stored %.0f bytes per completed job (%.1f MB, every table and index, after the shutdown's checkpoint)",
				name, perJob.Microseconds(), w.cpu.Seconds(), w.done, engineCPU.Microseconds(), float64(engineCPU)/float64(perJob),
				float64(w.dbBytes)/float64(w.done), float64(w.dbBytes)/1e6)
		}
	}
}

// wholeRun is one whole-path measurement.
type wholeRun struct {
	created        loadgen.Result
	accepted, done int
	total          time.Duration
	// cpu is the server's user and system CPU time from just before the
	// burst to the end of the drain; dbBytes what the database files grew
	// by over the same span, measured after the server stopped.
	cpu     time.Duration
	dbBytes int64
}

func (w wholeRun) rate() float64 { return float64(w.done) / w.total.Seconds() }

// wholePath runs the binary bin's server on a new database db with its
// workers, sends a burst of job creations, and waits until every accepted
// job has completed; with profile, it also takes a CPU profile of the
// server into that file.
func wholePath(t *testing.T, bin, db string, points [][2]float64, burst time.Duration, profile string) wholeRun {
	t.Helper()
	env := map[string]string{"LOCRISK_DB": db}
	account := strings.TrimSpace(mustRun(t, bin, env, "accounts", "create", "--name", t.Name(), "--monthly-quota", "1000000", "--rate-limit", "1000000"))
	key := strings.TrimSpace(mustRun(t, bin, env, "keys", "create", "--account", account, "--scopes", "reports:create,reports:read,usage:read"))
	args := []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-format", "json"}
	if w := os.Getenv("LOCRISK_WHOLE_WORKERS"); w != "" {
		args = append(args, "--workers", w)
	}
	if profile != "" {
		args = append(args, "--metrics-addr", "127.0.0.1:0", "--pprof")
	}
	srv := startBinary(t, bin, nil, args...)
	defer func() {
		if !srv.exited() {
			srv.signal(os.Interrupt)
		}
	}()
	profiled := make(chan error, 1)
	if profile != "" {
		seconds := os.Getenv("LOCRISK_WHOLE_PROFILE_SECONDS")
		if seconds == "" {
			seconds = "20"
		}
		url := "http://" + srv.metricsAddr(t) + "/debug/pprof/profile?seconds=" + seconds
		go func() { profiled <- fetchTo(url, profile) }()
	} else {
		profiled <- nil
	}
	before := dbFilesSize(db)
	cpu0 := processCPU(t, srv.cmd.Process.Pid)
	start := time.Now()
	w := wholeRun{created: runLoad(t, srv.addr, loadgen.Clients, burst, loadgen.CreateJobsAt(key, points))}
	w.accepted = len(w.created.Lat)
	j := waitDrained(t, srv, key, start)
	w.done, w.total = j.Completed, time.Since(start)
	w.cpu = processCPU(t, srv.cmd.Process.Pid) - cpu0
	failed := j.Failed
	if err := <-profiled; err != nil {
		t.Errorf("profile: %v", err)
	}
	if w.done+failed != w.accepted || failed != 0 {
		t.Errorf("%d accepted, %d completed and %d failed", w.accepted, w.done, failed)
	}
	srv.signal(os.Interrupt)
	w.dbBytes = dbFilesSize(db) - before
	return w
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat:
// 100 on every Linux architecture Go supports (proc(5)).
const clockTicks = 100

// processCPU is the user plus system CPU time the process pid and all its
// threads, live or ended, have used so far (/proc/PID/stat, utime and
// stime; 10 ms resolution, so measure seconds of work).
func processCPU(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Skipf("no /proc to read the server's CPU time from: %v", err)
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// count fields from the last ')'. utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		tb.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		tb.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// dbFilesSize is the size of the SQLite database db with its -wal file.
func dbFilesSize(db string) int64 {
	var n int64
	for _, f := range []string{db, db + "-wal"} {
		if fi, err := os.Stat(f); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// mustRun runs the binary bin and fails unless it exits 0; it returns
// stdout.
func mustRun(tb testing.TB, bin string, env map[string]string, args ...string) string {
	tb.Helper()
	r := runBinary(tb, bin, env, args...)
	if r.code != 0 {
		tb.Fatalf("%s %s: %s", bin, strings.Join(args, " "), r)
	}
	return r.stdout
}

// coveredPoints draws n random places in the contiguous United States'
// bounding box (scripts/sample-portfolio's box, a fixed seed) and keeps the
// ones inside coverage, as `locrisk score` decides it.
func coveredPoints(t *testing.T, dir string, n int) [][2]float64 {
	t.Helper()
	r := rand.New(rand.NewPCG(15, 28))
	all := make([][2]float64, n)
	for i := range all {
		all[i] = [2]float64{24.5 + r.Float64()*24.9, -124.8 + r.Float64()*57.9}
	}
	in, out := filepath.Join(dir, "all.csv"), filepath.Join(dir, "all-scored.csv")
	writePoints(t, in, all)
	runScore(t, in, out, filepath.Join(dir, "ref.cache"))
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(bufio.NewReader(f)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	var covered [][2]float64
	for _, rec := range recs[1:] {
		if rec[col["status"]] != "completed" {
			continue
		}
		lat, _ := strconv.ParseFloat(rec[col["latitude"]], 64)
		lon, _ := strconv.ParseFloat(rec[col["longitude"]], 64)
		covered = append(covered, [2]float64{lat, lon})
	}
	if len(covered) < n/3 {
		t.Fatalf("only %d of %d places covered", len(covered), n)
	}
	return covered
}

func writePoints(t *testing.T, path string, points [][2]float64) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("externalId,latitude,longitude\n")
	for i, p := range points {
		fmt.Fprintf(&b, "p%d,%.5f,%.5f\n", i, p[0], p[1])
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runScore runs `locrisk score` on the built-in data and returns its
// summary (stderr).
func runScore(t *testing.T, in, out, cache string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "score", "--reference-cache", cache, "--in", in, "--out", out)
	cmd.Env = childEnv(nil)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("score: %v\n%s", err, stderr.String())
	}
	return stderr.String()
}

// scoreCPUPerPoint is the engine's CPU time per point: the user and
// system CPU of `locrisk score` on every point of the file in, less that of
// a run on the first point alone (the start-up: loading the data and
// reading the reference from cache), divided by the points less one.
func scoreCPUPerPoint(t *testing.T, in string, points [][2]float64, cache string) time.Duration {
	t.Helper()
	one := filepath.Join(filepath.Dir(in), "one.csv")
	writePoints(t, one, points[:1])
	cpu := func(file string) time.Duration {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, binary, "score", "--reference-cache", cache, "--in", file, "--out", file+".out")
		cmd.Env = childEnv(nil)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("score: %v\n%s", err, stderr.String())
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	startup := cpu(one)
	all := cpu(in)
	return (all - startup) / time.Duration(len(points)-1)
}

var scoreRateLine = regexp.MustCompile(`(?m)^rate\s+(\d+) rows/s`)

// scoreRate is the rate `locrisk score` reports for the file in: rows per
// second of scoring, the loading of the data excluded.
func scoreRate(t *testing.T, in, cache string) float64 {
	t.Helper()
	summary := runScore(t, in, filepath.Join(filepath.Dir(in), "scored.csv"), cache)
	m := scoreRateLine.FindStringSubmatch(summary)
	if m == nil {
		t.Fatalf("no rate in the summary:\n%s", summary)
	}
	rate, _ := strconv.ParseFloat(m[1], 64)
	return rate
}

// fetchTo writes the body of a GET of url to the file path.
func fetchTo(url, path string) error {
	client := &http.Client{Timeout: 3 * time.Minute}
	res, err := client.Get(url)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, res.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestBacklogDrain measures how fast the real binary works off a backlog,
// and what the backlog costs another account meanwhile (the targets: at
// least 2,000 jobs/s, and the other account's job done within 1 s). One
// server, whose single worker is held by an injected delay, takes a
// backlog of LOCRISK_DRAIN_JOBS (default 30,000) jobs from account A and
// stops; a second server starts on the database with its default workers
// and is timed until the backlog is gone, while account B creates a job
// every 100 ms and waits for it to complete. It prints the figures and
// asserts only that every job completed.
//
//	LOCRISK_LOAD=1 go test -run BacklogDrain -v -timeout 20m ./e2e
func TestBacklogDrain(t *testing.T) {
	if os.Getenv("LOCRISK_LOAD") == "" {
		t.Skip("need LOCRISK_LOAD=1: the backlog measurement")
	}
	backlog := 30000
	if v := os.Getenv("LOCRISK_DRAIN_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("LOCRISK_DRAIN_JOBS=%q: want a positive number", v)
		}
		backlog = n
	}
	dir := t.TempDir()
	points := coveredPoints(t, dir, 60000)
	db := filepath.Join(dir, "drain.db")
	_, keyA := newAccountKey(t, db, "reports:create,reports:read,usage:read")
	_, keyB := newAccountKey(t, db, "reports:create,reports:read")

	// The backlog: created while the only worker is held up.
	hold := startServer(t, nil, "serve", "--addr", "127.0.0.1:0", "--db", db, "--log-format", "json",
		"--workers", "1", "--faults", "report.generate=delay:ms=600000", "--shutdown-timeout", "1s")
	queued := 0
	for queued < backlog {
		queued += len(runLoad(t, hold.addr, loadgen.Clients, 250*time.Millisecond, loadgen.CreateJobsAt(keyA, points)).Lat)
	}
	hold.signal(os.Interrupt)
	t.Logf("backlog: %d jobs queued", queued)

	args := []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-format", "json"}
	profile := os.Getenv("LOCRISK_WHOLE_PROFILE")
	if profile != "" {
		args = append(args, "--metrics-addr", "127.0.0.1:0", "--pprof")
	}
	srv := startServer(t, nil, args...)
	start := time.Now()
	profiled := make(chan error, 1)
	if profile != "" {
		url := "http://" + srv.metricsAddr(t) + "/debug/pprof/profile?seconds=10"
		go func() { profiled <- fetchTo(url, profile) }()
	} else {
		profiled <- nil
	}
	probes := make(chan time.Duration, 1000)
	stop := make(chan struct{})
	go func() {
		defer close(probes)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			p := points[i%len(points)]
			begin := time.Now()
			if err := createAndWait(srv, keyB, p, time.Minute); err != nil {
				t.Errorf("account B: %v", err)
				return
			}
			probes <- time.Since(begin)
		}
	}()
	j := waitDrained(t, srv, keyA, start)
	drain, done := time.Since(start), j.Completed
	if j.Failed != 0 || j.Completed != queued {
		t.Errorf("%d queued: %+v", queued, j)
	}
	close(stop)
	if err := <-profiled; err != nil {
		t.Errorf("profile: %v", err)
	}
	var took []time.Duration
	for d := range probes {
		took = append(took, d)
	}
	slices.Sort(took)
	if len(took) == 0 {
		t.Fatal("no job of account B completed during the drain")
	}
	t.Logf("drain: %d jobs in %s from the server's start: %.0f jobs/s", done, drain.Round(time.Millisecond), float64(done)/drain.Seconds())
	t.Logf("account B meanwhile: %d jobs, create to completed p50 %s, max %s",
		len(took), took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
}

// createAndWait creates a job at p and polls it until it has completed,
// without failing the test from its goroutine.
func createAndWait(srv *server, key string, p [2]float64, timeout time.Duration) error {
	r, err := srv.try(key, "POST", jobsPath, map[string]float64{"latitude": p[0], "longitude": p[1]})
	if err != nil {
		return err
	}
	var j jobView
	if err := json.Unmarshal(r.body, &j); err != nil || r.status != http.StatusAccepted {
		return fmt.Errorf("create: %d %s", r.status, r.body)
	}
	deadline := time.Now().Add(timeout)
	for j.Status != "completed" {
		if j.Status == "failed" || time.Now().After(deadline) {
			return fmt.Errorf("job %s: %s", j.JobID, j.Status)
		}
		time.Sleep(5 * time.Millisecond)
		r, err := srv.try(key, "GET", jobsPath+"/"+j.JobID, nil)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(r.body, &j); err != nil {
			return fmt.Errorf("GET job: %d %s", r.status, r.body)
		}
	}
	return nil
}

// TestStoresSideBySide measures job creation and the whole path on each
// store in one run, so that the stores' figures in docs/postgres.md
// (Performance) come from the same machine at the same time: SQLite, one
// node on PostgreSQL, and two nodes on PostgreSQL sharing the burst's
// clients, each on a fresh database, in turns, twice. The PostgreSQL
// server is LOCRISK_TEST_POSTGRES's, on this machine.
//
//	LOCRISK_LOAD=1 LOCRISK_TEST_POSTGRES=postgres://... go test -run StoresSideBySide -v -timeout 30m ./e2e
func TestStoresSideBySide(t *testing.T) {
	if os.Getenv("LOCRISK_LOAD") == "" {
		t.Skip("need LOCRISK_LOAD=1: the side-by-side measurement")
	}
	burst := 6 * time.Second
	dir := t.TempDir()
	points := coveredPoints(t, dir, 60000)
	keyFile := filepath.Join(dir, "secret.key")
	if err := os.WriteFile(keyFile, []byte("c2VjcmV0LWtleS1vZi10aGUtdHdvLW5vZGUtdGVzdCE=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	type setup struct {
		name  string
		nodes int
		pg    bool
	}
	setups := []setup{{"sqlite", 1, false}, {"postgres, 1 node", 1, true}, {"postgres, 2 nodes", 2, true}}
	for round := range 2 {
		for i, s := range setups {
			db := filepath.Join(dir, fmt.Sprintf("side-%d-%d.db", round, i))
			env := map[string]string{"LOCRISK_DB": db}
			if s.pg {
				env = map[string]string{"LOCRISK_DB": postgresDB(t), "LOCRISK_SECRET_KEY_FILE": keyFile}
			}
			account := mustCLI(t, env, "accounts", "create", "--name", "side", "--monthly-quota", "1000000", "--rate-limit", "1000000")
			key := mustCLI(t, env, "keys", "create", "--account", account, "--scopes", "reports:create,reports:read,usage:read")
			var nodes []*server
			for range s.nodes {
				nodes = append(nodes, startServer(t, env, "serve", "--addr", "127.0.0.1:0", "--log-format", "json"))
			}
			start := time.Now()
			results := make([]loadgen.Result, len(nodes))
			var wg sync.WaitGroup
			for n, srv := range nodes {
				wg.Go(func() {
					var err error
					results[n], err = loadgen.Run(srv.addr, loadgen.Clients/len(nodes), burst, loadgen.CreateJobsAt(key, points))
					if err != nil {
						t.Errorf("%s, node %d: %v", s.name, n, err)
					}
				})
			}
			wg.Wait()
			var created loadgen.Result
			for _, r := range results {
				created.Lat = append(created.Lat, r.Lat...)
				created.Elapsed = max(created.Elapsed, r.Elapsed)
			}
			if j := waitDrained(t, nodes[0], key, start); j.Completed != len(created.Lat) {
				t.Errorf("%s: %d accepted, %+v", s.name, len(created.Lat), j)
			}
			total := time.Since(start)
			t.Logf("[%s] creation %.0f jobs/s (p50 %.1f ms, p99 %.1f ms); whole path %d jobs in %s: %.0f jobs/s",
				s.name, created.Rate(), created.PctMS(50), created.PctMS(99), len(created.Lat), total.Round(time.Millisecond),
				float64(len(created.Lat))/total.Seconds())
			for _, n := range nodes {
				n.signal(os.Interrupt)
			}
		}
	}
}

// jobCounts are the account's jobs by status, as GET /usage/current shows
// them.
type jobCounts struct{ Queued, Processing, Completed, Failed int }

// waitDrained polls the account's usage until none of its jobs is queued
// or processing and returns the counts then; 15 minutes after start it
// fails the test.
func waitDrained(t *testing.T, srv *server, key string, start time.Time) jobCounts {
	t.Helper()
	for {
		var u struct {
			APIReportJobs jobCounts `json:"apiReportJobs"`
		}
		if err := json.Unmarshal(srv.do(t, key, "GET", view.UsageCurrentPath, nil).body, &u); err != nil {
			t.Fatal(err)
		}
		j := u.APIReportJobs
		if j.Queued+j.Processing == 0 {
			return j
		}
		if time.Since(start) > 15*time.Minute {
			t.Fatalf("after %s: %+v", time.Since(start), j)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
