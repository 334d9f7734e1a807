// Package loadgen is the load client of the job creation benchmarks, the
// scale test and the whole-path measurement (docs/performance.md, Job
// creation, The whole path and A large database): concurrent clients,
// each on one kept-alive connection writing raw HTTP/1.1 and reading each
// answer with http.ReadResponse, as wrk does (the job creation target was
// first measured with wrk), rather than through an http.Client, whose
// transport costs several goroutine hand-offs per request. The clients
// share the machine's cores with the server they measure, and should take
// as little of them as they can, alike for every server.
//
// It is used by tests only, and is kept to the client: it imports neither
// package testing nor a database, and reports a failed request as an
// error. The glue to a *testing.B (b.RunParallel, b.ReportMetric) and the
// bare SQLite insert the benchmarks compare against live in the test files
// that use them: internal/server's and cmd/locrisk's bench_test.go, and
// e2e's.
package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locrisk/locrisk/internal/view"
)

// Clients is the number of concurrent clients: 32 connections, the load
// the job creation target was set for.
const Clients = 32

// Body is the body of every request sent: one coordinate.
var Body = []byte(`{"latitude": 40.7128, "longitude": -74.006}`)

// Sender appends the i-th request of a run, as raw HTTP/1.1, to buf.
type Sender func(buf []byte, i int64) []byte

// Post appends a POST of Body to path with the given extra header lines
// (each ending in CRLF) to buf.
func Post(buf []byte, path string, headers ...string) []byte {
	return PostBody(buf, path, Body, headers...)
}

// PostBody is Post with another body.
func PostBody(buf []byte, path string, body []byte, headers ...string) []byte {
	buf = append(buf, "POST "...)
	buf = append(buf, path...)
	buf = append(buf, " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "...)
	buf = strconv.AppendInt(buf, int64(len(body)), 10)
	buf = append(buf, "\r\n"...)
	for _, h := range headers {
		buf = append(buf, h...)
	}
	buf = append(buf, "\r\n"...)
	return append(buf, body...)
}

// Posts sends a POST of Body to path every time, with no other header:
// what a bare baseline handler takes.
func Posts(path string) Sender {
	return func(buf []byte, _ int64) []byte { return Post(buf, path) }
}

// CreateJobsAt sends job creations with the API key key and no
// Idempotency-Key, the i-th at points[i % len(points)] (latitude,
// longitude), so that the engine computes a different place each time.
func CreateJobsAt(key string, points [][2]float64) Sender {
	auth := "Authorization: Bearer " + key + "\r\n"
	bodies := make([][]byte, len(points))
	for i, p := range points {
		bodies[i] = fmt.Appendf(nil, `{"latitude": %.5f, "longitude": %.5f}`, p[0], p[1])
	}
	return func(buf []byte, i int64) []byte {
		return PostBody(buf, view.JobsPath, bodies[int(i)%len(bodies)], auth)
	}
}

// CreateJobs sends job creations with the API key key, each with an
// Idempotency-Key of its own.
func CreateJobs(key string) Sender {
	auth := "Authorization: Bearer " + key + "\r\n"
	return func(buf []byte, i int64) []byte {
		return Post(buf, view.JobsPath, auth, "Idempotency-Key: bench-"+strconv.FormatInt(i, 10)+"\r\n")
	}
}

// CreateJobsNoKey sends job creations with the API key key and no
// Idempotency-Key: the same request every time, the request the job
// creation target (at least the rate of a bare synchronous=NORMAL insert)
// was set for and first measured with wrk.
func CreateJobsNoKey(key string) Sender {
	auth := "Authorization: Bearer " + key + "\r\n"
	return func(buf []byte, _ int64) []byte { return Post(buf, view.JobsPath, auth) }
}

// Conn is one client's kept-alive connection.
type Conn struct {
	conn net.Conn
	br   *bufio.Reader
	buf  []byte
}

// Dial opens a client's connection to the listener at addr.
func Dial(addr string) (*Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &Conn{conn: c, br: bufio.NewReader(c)}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.conn.Close() }

// Send sends the i-th request of send, reads the whole answer and insists
// on 202; it returns how long that took.
func (c *Conn) Send(send Sender, i int64) (time.Duration, error) {
	c.buf = send(c.buf[:0], i)
	begin := time.Now()
	if _, err := c.conn.Write(c.buf); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return 0, fmt.Errorf("loadgen: status %d, want 202", resp.StatusCode)
	}
	return time.Since(begin), nil
}

// Result is what one run measured.
type Result struct {
	Elapsed time.Duration
	Lat     []time.Duration // one per answered request
}

// Rate is the answered requests per second.
func (r Result) Rate() float64 { return float64(len(r.Lat)) / r.Elapsed.Seconds() }

// PctMS is the p-th percentile of the latencies in milliseconds.
func (r Result) PctMS(p int) float64 {
	if len(r.Lat) == 0 {
		return 0
	}
	s := slices.Clone(r.Lat)
	slices.Sort(s)
	return float64(s[min(len(s)*p/100, len(s)-1)].Microseconds()) / 1000
}

// Add adds o's time and requests to r.
func (r *Result) Add(o Result) {
	r.Elapsed += o.Elapsed
	r.Lat = append(r.Lat, o.Lat...)
}

// Report hands r's rate and its p50 and p99 latencies to report, under
// the units req/s, p50-ms and p99-ms: pass a benchmark's ReportMetric.
func (r Result) Report(report func(n float64, unit string)) {
	report(r.Rate(), "req/s")
	report(r.PctMS(50), "p50-ms")
	report(r.PctMS(99), "p99-ms")
}

// Run sends requests to the listener at addr from clients concurrent
// clients, each one after the other on its own connection, for d, and
// insists on 202 for each. A client stops at its first failure; Run
// returns what was answered and the first failure, once every client has
// stopped.
func Run(addr string, clients int, d time.Duration, send Sender) (Result, error) {
	conns := make([]*Conn, clients)
	for i := range conns {
		c, err := Dial(addr)
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return Result{}, err
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	p := &Parallel{send: send}
	start := time.Now()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { p.client(c, func() bool { return ctx.Err() == nil }) })
	}
	wg.Wait()
	return p.Result(time.Since(start)), p.Err()
}

// Parallel is a run whose clients are started by someone else, such as a
// benchmark's b.RunParallel, each calling Client; it numbers their
// requests as one sequence and gathers their latencies.
type Parallel struct {
	addr string
	send Sender
	n    atomic.Int64

	mu    sync.Mutex
	lat   []time.Duration
	first error
}

// NewParallel is a run of send against the listener at addr.
func NewParallel(addr string, send Sender) *Parallel {
	return &Parallel{addr: addr, send: send}
}

// Parallelism is the value for a benchmark's SetParallelism that makes
// about Clients goroutines at the current GOMAXPROCS.
func Parallelism() int {
	procs := runtime.GOMAXPROCS(0)
	return (Clients + procs - 1) / procs
}

// Client runs one client on a connection of its own, sending while next
// says so; it returns its first failure, having stopped there.
func (p *Parallel) Client(next func() bool) error {
	c, err := Dial(p.addr)
	if err != nil {
		p.fail(err)
		return err
	}
	defer c.Close()
	return p.client(c, next)
}

func (p *Parallel) client(c *Conn, next func() bool) error {
	var lat []time.Duration
	defer func() { p.mu.Lock(); p.lat = append(p.lat, lat...); p.mu.Unlock() }()
	for next() {
		d, err := c.Send(p.send, p.n.Add(1))
		if err != nil {
			p.fail(err)
			return err
		}
		lat = append(lat, d)
	}
	return nil
}

func (p *Parallel) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first == nil {
		p.first = err
	}
}

// Err is the first failure of any client, or nil.
func (p *Parallel) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first
}

// Result is what the clients measured, over elapsed.
func (p *Parallel) Result(elapsed time.Duration) Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Result{Elapsed: elapsed, Lat: slices.Clone(p.lat)}
}
