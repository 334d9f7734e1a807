package server

// The operations summary, GET /observability/current (docs/api.md,
// Operations summary), and the request statistics behind it.
//
// Every authenticated request is counted, after its response, into an
// in-memory aggregate per account and UTC hour: counts by outcome and a
// latency histogram (observeRequest: one mutex, a map lookup, a few
// increments). A flusher adds the aggregates to the request_stats table in
// one transaction every StatsFlushInterval (one second by default) and at
// Close. The summary reads the table and adds what is still in memory, so
// a caller sees its own requests at once and a restart loses at most what
// had not been flushed when the process died (nothing on a graceful stop).
//
// Unauthenticated requests (401, and 404/405 for paths no operation takes)
// belong to no account and are not counted.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/view"
)

// latencyBucketsMs are the upper bounds, in milliseconds, of the latency
// histogram's buckets; a last bucket above them holds everything slower
// (+Inf). A 1-2-5 series from half a millisecond (most requests of this API
// take about a millisecond) to ten seconds. The stored histograms are
// indexed by these buckets: change them only together with the data.
var latencyBucketsMs = [...]float64{0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}

// latencyBuckets is latencyBucketsMs as durations, for the hot path.
var latencyBuckets = func() [len(latencyBucketsMs)]time.Duration {
	var out [len(latencyBucketsMs)]time.Duration
	for i, ms := range latencyBucketsMs {
		out[i] = time.Duration(ms * float64(time.Millisecond))
	}
	return out
}()

// histogramLen is the number of histogram buckets, the +Inf one included.
const histogramLen = len(latencyBucketsMs) + 1

// latencyBucket is the index of the bucket holding d: the first whose upper
// bound is >= d.
func latencyBucket(d time.Duration) int {
	for i, b := range latencyBuckets {
		if d <= b {
			return i
		}
	}
	return len(latencyBuckets)
}

// histogramPercentile estimates the p-th percentile (0 < p <= 1) in
// milliseconds from a histogram over latencyBucketsMs, interpolating
// linearly inside the bucket that holds the rank (as Prometheus'
// histogram_quantile does). The result is only as precise as the bucket:
// 7.3 means "between 5 and 10 ms, about a third of the way". A rank in the
// +Inf bucket gives the largest finite bound (a lower bound of the truth).
// ok is false for an empty histogram. It is the view.LatencyPercentile the
// operations summary is rendered with.
func histogramPercentile(h []int64, p float64) (ms float64, ok bool) {
	var total int64
	for _, n := range h {
		total += n
	}
	if total == 0 {
		return 0, false
	}
	rank := p * float64(total)
	var cum int64
	for i, n := range h {
		if n == 0 {
			continue
		}
		if float64(cum+n) >= rank {
			if i >= len(latencyBucketsMs) {
				return latencyBucketsMs[len(latencyBucketsMs)-1], true
			}
			lo := 0.0
			if i > 0 {
				lo = latencyBucketsMs[i-1]
			}
			hi := latencyBucketsMs[i]
			return lo + (hi-lo)*(rank-float64(cum))/float64(n), true
		}
		cum += n
	}
	return latencyBucketsMs[len(latencyBucketsMs)-1], true
}

// statsKey is one account's hour (hour as Unix seconds of its start).
type statsKey struct {
	account string
	hour    int64
}

// requestRecorder holds the aggregates not yet in the database.
type requestRecorder struct {
	interval time.Duration // <= 0: no background flushing

	// flushMu is held exclusively while a flush moves aggregates from
	// memory to the database, and shared by readers that add the two, so a
	// reader never counts a batch twice or not at all.
	flushMu sync.RWMutex

	mu      sync.Mutex
	pending map[statsKey]*locrisk.RequestCounts
	// keyUses are the key uses not yet written (keyuse.go); keyNoted is
	// when each key's use was last noted, so a key is noted at most once
	// per keyUseGranularity.
	keyUses  map[string]time.Time
	keyNoted map[string]time.Time
	running  bool          // a flush loop is running
	done     chan struct{} // closed when the running loop ends
	closed   bool
	stop     chan struct{} // closed by Close
}

func newRequestRecorder(interval time.Duration) *requestRecorder {
	return &requestRecorder{interval: interval, pending: map[statsKey]*locrisk.RequestCounts{},
		keyUses: map[string]time.Time{}, keyNoted: map[string]time.Time{}, stop: make(chan struct{})}
}

// observeRequest is called once per request, after the response, by the
// outer middleware. The hour is taken from the server's clock (so tests can
// place requests in time); the latency is the real one.
func (s *Server) observeRequest(_ context.Context, info *reqInfo, status int, dur time.Duration) {
	if info == nil || info.accountID == "" {
		return
	}
	k := statsKey{account: info.accountID, hour: s.now().UTC().Truncate(time.Hour).Unix()}
	r := s.stats
	r.mu.Lock()
	c := r.pending[k]
	if c == nil {
		c = &locrisk.RequestCounts{Latency: make([]int64, histogramLen)}
		r.pending[k] = c
	}
	c.Total++
	switch {
	case status >= 500:
		c.ServerErrors++
	case status >= 400:
		c.ClientErrors++
	default:
		c.Succeeded++
	}
	if info.rateLimited {
		c.RateLimited++
	}
	c.Latency[latencyBucket(dur)]++
	start := !r.running && !r.closed && r.interval > 0
	if start {
		r.running = true
		r.done = make(chan struct{})
	}
	r.mu.Unlock()
	if start {
		go s.flushLoop(r.done)
	}
}

// flushLoop flushes every interval while there is something to flush, and
// ends when memory is empty after a flush (the next request starts a new
// loop) or when Close is called. Failed flushes keep their data and are
// retried with a growing delay, up to a minute.
func (s *Server) flushLoop(done chan struct{}) {
	r := s.stats
	defer close(done)
	delay := r.interval
	t := time.NewTimer(delay)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		err := s.FlushStats(ctx)
		cancel()
		if err != nil {
			if strings.Contains(err.Error(), "sql: database is closed") {
				// The store is gone (its owner closed it without closing
				// the server first): nothing can be saved any more.
				s.log.Error("request statistics dropped: the database was closed before the server", "err", err)
				r.mu.Lock()
				r.running = false
				r.mu.Unlock()
				return
			}
			s.log.Warn("flushing request statistics failed; will retry", "err", err)
			delay = min(delay*2, time.Minute)
		} else {
			delay = r.interval
		}
		r.mu.Lock()
		if err == nil && len(r.pending) == 0 && len(r.keyUses) == 0 {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		t.Reset(delay)
	}
}

// FlushStats writes the request aggregates still in memory to the database
// in one transaction, and then the keys' noted uses (keyuse.go) in another.
// On failure they stay in memory for the next attempt.
func (s *Server) FlushStats(ctx context.Context) error {
	r := s.stats
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	return errors.Join(s.flushRequestCounts(ctx), s.flushKeyUses(ctx))
}

// flushRequestCounts is FlushStats' first half; the caller holds flushMu.
func (s *Server) flushRequestCounts(ctx context.Context) error {
	r := s.stats
	r.mu.Lock()
	batch := r.pending
	if len(batch) == 0 {
		r.mu.Unlock()
		return nil
	}
	r.pending = make(map[statsKey]*locrisk.RequestCounts, len(batch))
	r.mu.Unlock()

	rows := make([]locrisk.HourStats, 0, len(batch))
	for k, c := range batch {
		rows = append(rows, locrisk.HourStats{AccountID: k.account, Hour: time.Unix(k.hour, 0).UTC(), RequestCounts: *c})
	}
	err := s.store.AddRequestStats(ctx, rows)
	if err != nil {
		r.mu.Lock()
		for k, c := range batch {
			if cur := r.pending[k]; cur != nil {
				c.Add(*cur)
			}
			r.pending[k] = c
		}
		r.mu.Unlock()
	}
	return err
}

// Close stops the background flusher and flushes what is left. Call it
// after the HTTP server has stopped taking requests and before the store is
// closed; requests observed after Close stay in memory and are lost.
//
// The final flush is worth more than the caller's deadline: when ctx has
// already expired (a slow shutdown), it still gets a few seconds of its own.
// Waiting for a running flush is bounded by that flush's own timeout.
func (s *Server) Close(ctx context.Context) error {
	r := s.stats
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.stop)
	}
	done := r.done
	running := r.running
	r.mu.Unlock()
	if running {
		<-done
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), finalFlushTimeout)
		defer cancel()
	}
	return s.FlushStats(ctx)
}

// Time limits of flushes: a periodic one, and Close's last one when the
// caller's context has already run out.
const (
	flushTimeout      = 10 * time.Second
	finalFlushTimeout = 5 * time.Second
)

// requestCounts returns the account's request aggregates for the hours
// starting in [fromHour, toHour): stored plus still in memory.
func (s *Server) requestCounts(ctx context.Context, accountID string, fromHour, toHour time.Time) (locrisk.RequestCounts, error) {
	r := s.stats
	r.flushMu.RLock()
	defer r.flushMu.RUnlock()
	c, err := s.store.RequestStats(ctx, accountID, fromHour, toHour)
	if err != nil {
		return locrisk.RequestCounts{}, err
	}
	from, to := fromHour.Unix(), toHour.Unix()
	r.mu.Lock()
	for k, v := range r.pending {
		if k.account == accountID && k.hour >= from && k.hour < to {
			c.Add(*v)
		}
	}
	r.mu.Unlock()
	return c, nil
}

// Bounds of the operations summary (docs/api.md, Operations summary).
const (
	defaultOpsHours   = 24
	maxOpsHours       = 168
	maxRecentFailures = 20
)

// getObservability is GET /observability/current (docs/api.md, Operations
// summary): the caller's account over the last `hours` hours.
//
// Jobs, batches and deliveries are counted over the exact window;
// requests per whole UTC hour, every hour that overlaps the window (so with
// hours=1 at 12:30 the requests since 11:00). Counts of events (created,
// completed, failed, succeeded, deliveries) are those inside the window;
// counts of lasting states (queued, processing, pending) are as of now.
func (s *Server) getObservability(w http.ResponseWriter, r *http.Request, p *principal) error {
	q, err := parseQuery(r)
	if err != nil {
		return err
	}
	hours := defaultOpsHours
	if vs, ok := q["hours"]; ok {
		n, ok := parseBoundedInt(vs[0], 1, maxOpsHours)
		if !ok {
			return errorf(codeInvalidHours, "hours must be an integer from 1 to %d", maxOpsHours)
		}
		hours = n
	}
	now := s.now().UTC()
	from := now.Add(-time.Duration(hours) * time.Hour)
	ctx := r.Context()
	// The end is exclusive in the store; what happened at this very
	// millisecond belongs in the window too.
	end := now.Add(time.Millisecond)
	ops, err := s.store.OpsSummary(ctx, p.account.ID, from, end, maxRecentFailures)
	if err != nil {
		return err
	}
	rc, err := s.requestCounts(ctx, p.account.ID, from.Truncate(time.Hour), now.Truncate(time.Hour).Add(time.Hour))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view.NewOpsSummary(from, now, hours, ops, rc, histogramPercentile))
	return nil
}
