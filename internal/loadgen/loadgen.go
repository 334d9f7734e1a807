// Package loadgen is the load client of the job creation benchmarks and
// the scale test (docs/performance.md, Job creation and A large
// database): concurrent clients, each on one kept-alive connection writing
// raw HTTP/1.1 and reading each answer with http.ReadResponse, as wrk
// does (issue 16 measured with it), rather than through an http.Client,
// whose transport costs several goroutine hand-offs per request. The
// clients share the machine's cores with the server they measure, and
// should take as little of them as they can, alike for every server.
//
// It is used by tests only: internal/server's (the API on its own) and
// cmd/locrisk's (the assembled API beside a bare SQLite insert).
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
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/view"
)

// Clients is the number of concurrent clients, as in issue 16's
// measurement (32 connections).
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
// Idempotency-Key: the same request every time, as issue 16 measured
// with wrk.
func CreateJobsNoKey(key string) Sender {
	auth := "Authorization: Bearer " + key + "\r\n"
	return func(buf []byte, _ int64) []byte { return Post(buf, view.JobsPath, auth) }
}

// conn is one client's kept-alive connection.
type conn struct {
	conn net.Conn
	br   *bufio.Reader
	buf  []byte
}

func dial(tb testing.TB, addr string) *conn {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	return &conn{conn: c, br: bufio.NewReader(c)}
}

// sendTimed sends the i-th request, reads the whole answer and insists on
// 202; it returns how long that took, or ok false once it has reported a
// failure.
func (c *conn) sendTimed(tb testing.TB, send Sender, i int64) (d time.Duration, ok bool) {
	c.buf = send(c.buf[:0], i)
	begin := time.Now()
	if _, err := c.conn.Write(c.buf); err != nil {
		tb.Error(err)
		return 0, false
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		tb.Error(err)
		return 0, false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		tb.Errorf("status %d", resp.StatusCode)
		return 0, false
	}
	return time.Since(begin), true
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

// Run sends requests to the listener at addr from clients concurrent
// clients, each one after the other on its own connection, for d, and
// insists on 202 for each.
func Run(tb testing.TB, addr string, clients int, d time.Duration, send Sender) Result {
	tb.Helper()
	conns := make([]*conn, clients)
	for i := range conns {
		conns[i] = dial(tb, addr)
		defer conns[i].conn.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var (
		n   atomic.Int64
		mu  sync.Mutex
		all []time.Duration
		wg  sync.WaitGroup
	)
	start := time.Now()
	for _, c := range conns {
		wg.Go(func() {
			var lat []time.Duration
			defer func() { mu.Lock(); all = append(all, lat...); mu.Unlock() }()
			for ctx.Err() == nil {
				d, ok := c.sendTimed(tb, send, n.Add(1))
				if !ok {
					return
				}
				lat = append(lat, d)
			}
		})
	}
	wg.Wait()
	return Result{Elapsed: time.Since(start), Lat: all}
}

// RunParallel is the b.N form of Run, for a benchmark of one server: it
// runs Clients goroutines, each on its own connection, and reports req/s,
// p50-ms and p99-ms.
func RunParallel(b *testing.B, addr string, send Sender) {
	var (
		n   atomic.Int64
		mu  sync.Mutex
		all []time.Duration
	)
	b.SetParallelism((Clients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c := dial(b, addr)
		defer c.conn.Close()
		var lat []time.Duration
		defer func() { mu.Lock(); all = append(all, lat...); mu.Unlock() }()
		for pb.Next() {
			d, ok := c.sendTimed(b, send, n.Add(1))
			if !ok {
				return
			}
			lat = append(lat, d)
		}
	})
	r := Result{Elapsed: b.Elapsed(), Lat: all}
	b.ReportMetric(r.Rate(), "req/s")
	b.ReportMetric(r.PctMS(50), "p50-ms")
	b.ReportMetric(r.PctMS(99), "p99-ms")
}
