package loadgen

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/view"
)

// recorder is a server answering 202 to every POST and keeping what it
// was sent, or answering status to the failAt-th request.
type recorder struct {
	mu     sync.Mutex
	seen   []*http.Request
	bodies [][]byte
	n      atomic.Int64
	failAt int64
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.seen = append(rc.seen, r)
	rc.bodies = append(rc.bodies, body)
	rc.mu.Unlock()
	if rc.n.Add(1) == rc.failAt {
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func TestRunAnswersEveryRequest(t *testing.T) {
	rc := &recorder{}
	ts := httptest.NewServer(rc)
	defer ts.Close()
	r, err := Run(ts.Listener.Addr().String(), 4, 50*time.Millisecond, CreateJobs("k1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Lat) == 0 || r.Elapsed < 50*time.Millisecond || r.Rate() <= 0 {
		t.Fatalf("result %d requests in %s", len(r.Lat), r.Elapsed)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.seen) != len(r.Lat) {
		t.Errorf("server saw %d requests, client counted %d", len(rc.seen), len(r.Lat))
	}
	keys := map[string]bool{}
	for i, req := range rc.seen {
		if req.Method != http.MethodPost || req.URL.Path != view.JobsPath {
			t.Fatalf("request %s %s", req.Method, req.URL.Path)
		}
		if got := req.Header.Get("Authorization"); got != "Bearer k1" {
			t.Fatalf("Authorization %q", got)
		}
		if !bytes.Equal(rc.bodies[i], Body) {
			t.Fatalf("body %q", rc.bodies[i])
		}
		k := req.Header.Get("Idempotency-Key")
		if k == "" || keys[k] {
			t.Fatalf("Idempotency-Key %q empty or repeated", k)
		}
		keys[k] = true
	}
}

func TestRunReportsAFailure(t *testing.T) {
	rc := &recorder{failAt: 3}
	ts := httptest.NewServer(rc)
	defer ts.Close()
	r, err := Run(ts.Listener.Addr().String(), 2, 50*time.Millisecond, Posts("/"))
	if err == nil {
		t.Fatal("a 429 answered, no error")
	}
	if rc.n.Load() < 3 || len(r.Lat) != int(rc.n.Load())-1 {
		t.Errorf("%d answered of %d sent", len(r.Lat), rc.n.Load())
	}
}

func TestRunCannotDial(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	addr := ts.Listener.Addr().String()
	ts.Close()
	if _, err := Run(addr, 2, time.Millisecond, Posts("/")); err == nil {
		t.Fatal("no error from a closed listener")
	}
}

func TestParallelClients(t *testing.T) {
	rc := &recorder{}
	ts := httptest.NewServer(rc)
	defer ts.Close()
	points := [][2]float64{{40.7128, -74.006}, {37.7749, -122.4194}}
	p := NewParallel(ts.Listener.Addr().String(), CreateJobsAt("k2", points))
	const clients, each = 3, 5
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			left := each
			if err := p.Client(func() bool { left--; return left >= 0 }); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	r := p.Result(time.Second)
	if len(r.Lat) != clients*each {
		t.Fatalf("%d answered, want %d", len(r.Lat), clients*each)
	}
	metrics := map[string]float64{}
	r.Report(func(n float64, unit string) { metrics[unit] = n })
	if metrics["req/s"] != clients*each || metrics["p99-ms"] < metrics["p50-ms"] {
		t.Errorf("metrics %v", metrics)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	places := map[string]bool{}
	for _, b := range rc.bodies {
		places[string(b)] = true
	}
	if len(places) != len(points) {
		t.Errorf("%d bodies, want one per point", len(places))
	}
	if Parallelism() < 1 {
		t.Errorf("Parallelism %d", Parallelism())
	}
}

func TestPctMS(t *testing.T) {
	var r Result
	if r.PctMS(99) != 0 {
		t.Fatal("no latencies, not 0")
	}
	for i := range 100 {
		r.Lat = append(r.Lat, time.Duration(100-i)*time.Millisecond)
	}
	if got := r.PctMS(50); got != 51 {
		t.Errorf("p50 %v ms, want 51", got)
	}
	if got := r.PctMS(100); got != 100 {
		t.Errorf("p100 %v ms, want 100", got)
	}
	r.Add(Result{Elapsed: time.Second, Lat: []time.Duration{time.Millisecond}})
	if len(r.Lat) != 101 || r.Elapsed != time.Second {
		t.Errorf("Add: %d, %s", len(r.Lat), r.Elapsed)
	}
}
