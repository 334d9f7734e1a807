// Package metrics is serve's Prometheus metrics (docs/operations.md, Metrics): the
// series, the observers that feed them, and the handler of the metrics
// listener, which serve runs on an address of its own (--metrics-addr),
// never on the API's.
//
// A Metrics has its own registry: nothing is registered with the client
// library's global default one, so two services in one process (tests)
// keep their series apart. It implements the observer interfaces that the
// packages it measures declare (server.RequestObserver, jobs.Observer,
// webhookworker.Observer, store.Observer), so those packages do not import
// the client library; with metrics off they are given no observer and
// measure nothing.
//
// Every label has a bounded set of values: routes are the path patterns
// of the operations (never raw paths or ids), methods outside the HTTP
// standard ones are "other", outcomes and statuses are fixed lists.
package metrics

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/locrisk/locrisk"
)

// Path is where the metrics listener serves the metrics.
const Path = "/metrics"

const namespace = "locrisk"

// DefaultQueueTimeout bounds the queue depth query of one scrape.
const DefaultQueueTimeout = 2 * time.Second

// Config tunes New; zero fields take the defaults in brackets.
type Config struct {
	// QueueTimeout bounds the queue read of one scrape (WatchQueue)
	// [DefaultQueueTimeout].
	QueueTimeout time.Duration
	// Now is the clock of the queue's age [time.Now].
	Now func() time.Time
	// Logger receives the scrapes' errors [slog.Default()].
	Logger *slog.Logger
}

// Metrics holds the series. Its methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry
	cfg Config
	log *slog.Logger

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec

	jobAttempts prometheus.Counter
	jobOutcomes *prometheus.CounterVec
	jobDuration *prometheus.HistogramVec

	deliveries       *prometheus.CounterVec
	deliveryDuration *prometheus.HistogramVec

	writeWait   prometheus.Histogram
	writeBusy   prometheus.Counter
	commitGroup prometheus.Histogram
}

// Bucket bounds, in seconds.
var (
	// requestBuckets: most requests of this API take about a millisecond,
	// a PDF or a large batch some hundreds; the 1-2-5 series of the
	// operations summary (docs/api.md, Operations summary).
	requestBuckets = []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10}
	// deliveryBuckets: a receiver's answer, up to the 10 s attempt limit
	// (docs/webhooks.md).
	deliveryBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	// writeWaitBuckets: a hand-over between writers of one process takes
	// microseconds; a wait behind another process's lock, up to the busy
	// wait (docs/operations.md, Limits and defaults), seconds.
	writeWaitBuckets = []float64{0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2, 5}
	// commitGroupBuckets: write transactions per commit, from one (an
	// idle writer) to the store's cap of 256 (docs/operations.md, Limits and
	// defaults).
	commitGroupBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256}
)

// The outcome label values, as the observed packages name them
// (jobs.Outcome*, webhookworker.Outcome*, and reclaimed for a job whose
// worker's lease ran out). They are listed so that every series exists,
// at 0, from the first scrape.
var (
	jobOutcomes      = []string{"completed", "failed", "retried", "released", "reclaimed"}
	deliveryOutcomes = []string{"succeeded", "failed_attempt", "failed_final"}
)

// New makes the metrics with a registry of their own, holding the Go
// runtime and process collectors beside locrisk's series.
func New(cfg Config) *Metrics {
	if cfg.QueueTimeout <= 0 {
		cfg.QueueTimeout = DefaultQueueTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		cfg: cfg,
		log: cfg.Logger,
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "http", Name: "requests_total",
			Help: "API requests answered, by route pattern (\"unmatched\" when no operation took the request), method and status code."},
			[]string{"route", "method", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "http", Name: "request_duration_seconds",
			Help: "Time from a request's arrival to the end of its response, by route pattern and method.", Buckets: requestBuckets},
			[]string{"route", "method"}),
		jobAttempts: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Subsystem: "job", Name: "attempts_total",
			Help: "Report job attempts started by this process's workers."}),
		jobOutcomes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "job", Name: "outcomes_total",
			Help: "Report job attempts by outcome: completed, failed, retried (transient failure, queued after a backoff), released (cut short by shutdown), reclaimed (taken over after its worker's lease expired)."},
			[]string{"outcome"}),
		jobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "job", Name: "duration_seconds",
			Help: "Time from an attempt's start to its recorded outcome, by outcome (completed, failed, retried, released).", Buckets: requestBuckets},
			[]string{"outcome"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "webhook", Name: "deliveries_total",
			Help: "Webhook delivery attempts by outcome: succeeded, failed_attempt (due again), failed_final."},
			[]string{"outcome"}),
		deliveryDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "webhook", Name: "attempt_duration_seconds",
			Help: "Time a webhook delivery attempt's request took, by outcome.", Buckets: deliveryBuckets},
			[]string{"outcome"}),
		writeWait: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "db", Name: "write_wait_seconds",
			Help: "Time a database write waited for this process's write slot.", Buckets: writeWaitBuckets}),
		writeBusy: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Subsystem: "db", Name: "busy_errors_total",
			Help: "Database writes that failed because the write lock stayed held past the busy wait (database_busy)."}),
		commitGroup: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "db", Name: "commit_group_size",
			Help: "Write transactions that shared one commit (group commit).", Buckets: commitGroupBuckets}),
	}
	for _, o := range jobOutcomes {
		m.jobOutcomes.WithLabelValues(o)
	}
	for _, o := range deliveryOutcomes {
		m.deliveries.WithLabelValues(o)
	}
	m.reg.MustRegister(m.httpRequests, m.httpDuration, m.jobAttempts, m.jobOutcomes, m.jobDuration,
		m.deliveries, m.deliveryDuration, m.writeWait, m.writeBusy, m.commitGroup,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// WatchQueue adds the queue gauges, read from src on every scrape. It is
// separate from New because the store that src is takes the metrics as
// its observer when it opens. Call it once, before serving.
func (m *Metrics) WatchQueue(src locrisk.QueueStats) {
	m.reg.MustRegister(newQueueCollector(src, m.cfg.QueueTimeout, m.cfg.Now, m.log))
}

// Handler serves the metrics at Path in the Prometheus text format, and
// nothing else. A part that cannot be read (the queue query timed out) is
// logged and left out; the rest is served.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+Path, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(m.log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	}))
	return mux
}

// Registry is the registry of the series, for tests that gather them.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// unmatchedRoute is the route label of requests no operation took.
const unmatchedRoute = "unmatched"

// ObserveRequest counts an answered API request (server.RequestObserver).
func (m *Metrics) ObserveRequest(route, method string, status int, d time.Duration) {
	if route == "" {
		route = unmatchedRoute
	}
	method = methodLabel(method)
	m.httpRequests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.httpDuration.WithLabelValues(route, method).Observe(d.Seconds())
}

// methodLabel keeps the standard methods and folds any other token a
// client may send into "other", so a client cannot add series.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

// JobStarted counts an attempt, and a reclaim (jobs.Observer).
func (m *Metrics) JobStarted(reclaimed bool) {
	m.jobAttempts.Inc()
	if reclaimed {
		m.jobOutcomes.WithLabelValues("reclaimed").Inc()
	}
}

// JobFinished counts an attempt's outcome and observes its duration
// (jobs.Observer).
func (m *Metrics) JobFinished(outcome string, d time.Duration) {
	m.jobOutcomes.WithLabelValues(outcome).Inc()
	m.jobDuration.WithLabelValues(outcome).Observe(d.Seconds())
}

// DeliveryAttempt counts a webhook attempt's outcome and observes its
// duration (webhookworker.Observer).
func (m *Metrics) DeliveryAttempt(outcome string, d time.Duration) {
	m.deliveries.WithLabelValues(outcome).Inc()
	m.deliveryDuration.WithLabelValues(outcome).Observe(d.Seconds())
}

// WriteWait observes a write's wait for the write slot (store.Observer).
func (m *Metrics) WriteWait(d time.Duration) { m.writeWait.Observe(d.Seconds()) }

// WriteBusy counts a write that failed busy (store.Observer).
func (m *Metrics) WriteBusy() { m.writeBusy.Inc() }

// GroupCommit observes how many write transactions shared a commit
// (store.Observer).
func (m *Metrics) GroupCommit(size int) { m.commitGroup.Observe(float64(size)) }
