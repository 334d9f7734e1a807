package main

// The running service, as `locrisk serve` assembles, runs and stops it.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/locrisk/locrisk/internal/connlimit"
	"github.com/locrisk/locrisk/internal/filelock"
	"github.com/locrisk/locrisk/internal/jobs"
	"github.com/locrisk/locrisk/internal/metrics"
	"github.com/locrisk/locrisk/internal/retention"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/server"
	"github.com/locrisk/locrisk/internal/sharedrate"
	"github.com/locrisk/locrisk/internal/signing"
	"github.com/locrisk/locrisk/internal/sqlite"
	"github.com/locrisk/locrisk/internal/webhook"
	"github.com/locrisk/locrisk/internal/webhookworker"
)

// appConfig is what the service runs with: serve's flags, checked and
// parsed.
type appConfig struct {
	addr, db, dataDir         string
	secretKeyFile             string // --secret-key-file; empty: beside the database
	workers, maxAttempts      int
	jobLease, shutdownTimeout time.Duration
	faults                    jobs.Faults
	webhookSchedule           []time.Duration
	webhookScheduleSpec       string // as given, for the log
	webhookAllowPrivate       bool
	webhookWorkers            int // attempts in flight, whole server
	webhookPerEndpoint        int // attempts in flight to one endpoint
	webhookPerAccount         int // attempts in flight to one account's endpoints
	maxInFlight               int // requests served at once (server.Config.MaxInFlight)
	maxConnections            int // connections open at once, before the open file limit lowers it
	idleTimeout               time.Duration
	retention                 time.Duration // 0: keep everything
	metricsAddr               string        // --metrics-addr; empty: no metrics listener, nothing measured
	pprof                     bool          // --pprof: the runtime's profiles on the metrics listener
}

// The parts of the service as Run and Close use them. They are interfaces
// so that a test can stand in for each part and record the order of a stop.
type (
	// httpServer is an *http.Server.
	httpServer interface {
		Serve(net.Listener) error
		Shutdown(context.Context) error
	}
	// runner is a *jobs.Scheduler, a *webhookworker.Worker or a
	// *retention.Purger: Run works until its ctx ends, then drains and
	// returns.
	runner interface{ Run(context.Context) }
	// statsFlusher is a *server.Server: Close saves the request statistics
	// still in memory.
	statsFlusher interface{ Close(context.Context) error }
)

// app is the running service: the HTTP API, the report job scheduler and
// the webhook delivery worker on one database. Build it with newApp, serve
// with Run, stop with Close.
type app struct {
	cfg appConfig
	log *slog.Logger

	ln   net.Listener
	http httpServer
	// The metrics listener and its server; both nil when --metrics-addr
	// is not given.
	metricsLn   net.Listener
	metricsHTTP httpServer
	jobs        runner
	deliveries  runner
	purge       runner
	stats       statsFlusher
	store       io.Closer

	mu             sync.Mutex
	dataLoaded     bool // the engine has its data (newApp loads it first)
	running        bool // Run has started the workers and the HTTP server
	stopping       bool // the stop signal came or Close has begun: /readyz answers 503
	closed         bool // Close has begun
	stopJobs       context.CancelFunc
	stopDeliveries context.CancelFunc
	stopPurge      context.CancelFunc
	jobsDone       chan struct{}
	deliveriesDone chan struct{}
	purgeDone      chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// newApp checks the data files, opens the database (with openStore, which
// registers the webhook outbox and its wake-up, and the store's observer
// obs, nil without metrics), loads the engine, builds the scheduler, the
// delivery worker and the API, and listens on the address, and on the
// metrics address if there is one. Nothing is served until Run. On an
// error everything opened so far is closed again.
func newApp(ctx context.Context, cfg appConfig, log *slog.Logger,
	openStore func(path string, wake func(), obs sqlite.Observer) (*sqlite.Store, error)) (*app, error) {
	if isPostgres(cfg.db) {
		// PostgreSQL: no serve lock, since several nodes share the
		// database (docs/postgres.md); SQLite's observer has no meaning.
		return newAppOn(ctx, cfg, log, func(wake func(), _ sqlite.Observer) (*serveBackend, error) {
			st, err := openPostgres(ctx, cfg.db, cfg.secretKeyFile, wake)
			if err != nil {
				return nil, err
			}
			// The rate limits count every node's requests (package
			// sharedrate), exchanged until the store is closed.
			rate := sharedrate.New(st, log, nil)
			rateCtx, stopRate := context.WithCancel(context.WithoutCancel(ctx))
			done := make(chan struct{})
			go func() { rate.Run(rateCtx); close(done) }()
			return &serveBackend{store: st, api: st, probe: st, rate: rate, stopRate: func() { stopRate(); <-done }}, nil
		})
	}
	return newAppOn(ctx, cfg, log, func(wake func(), obs sqlite.Observer) (*serveBackend, error) {
		// One server per database file (docs/operations.md, Limits and defaults): the
		// rate limits live in each server's memory, so a second server would
		// double them. db vacuum takes the same lock; the other commands do not.
		lock, err := lockServe(cfg.db)
		if err != nil {
			return nil, err
		}
		st, err := openStore(cfg.db, wake, obs)
		if err != nil {
			lock.Unlock()
			return nil, err
		}
		// A request's write waits at most server.DefaultDBBusyWait for
		// another process's lock before it is answered 503 database_busy,
		// and GET /readyz's probe at most server.ReadyDBWait
		// (docs/operations.md, Limits and defaults), while the workers keep
		// the store's own, longer wait.
		return &serveBackend{store: st, api: st.WithBusyWait(server.DefaultDBBusyWait),
			probe: st.WithBusyWait(server.ReadyDBWait), sqlite: st, lock: lock}, nil
	})
}

// newAppOn is newApp on the store openBackend opens.
func newAppOn(ctx context.Context, cfg appConfig, log *slog.Logger,
	openBackend func(wake func(), obs sqlite.Observer) (*serveBackend, error)) (*app, error) {
	// The data files first: without them there is nothing to serve, and no
	// database file should be created.
	dataFS, dataName, err := checkedDataPack(cfg.dataDir)
	if err != nil {
		return nil, err
	}

	// The outbox hook wakes the delivery worker, which needs the store, so
	// the signal between them comes first.
	wake := webhookworker.NewSignal()
	// With metrics off no part is given an observer, so nothing is
	// measured (docs/operations.md, Metrics). The observers are interfaces: each is
	// set only when there are metrics, never to a nil *metrics.Metrics.
	var (
		met        *metrics.Metrics
		storeObs   sqlite.Observer
		jobObs     jobs.Observer
		deliverObs webhookworker.Observer
		requestObs server.RequestObserver
	)
	if cfg.metricsAddr != "" {
		met = metrics.New(metrics.Config{Logger: log})
		storeObs, jobObs, deliverObs, requestObs = met, met, met, met
	}
	be, err := openBackend(wake.Notify, storeObs)
	if err != nil {
		return nil, err
	}
	st := be.store
	if be.sqlite != nil {
		releaseLeftLeases(ctx, be.sqlite, log)
	}
	// The report signing key: made on the first start, and opened now so
	// that a secret key file that does not open it stops the server here
	// rather than at its first report (docs/verification.md).
	key, created, err := signing.New(st, nil).Key(ctx)
	if err != nil {
		be.Close()
		return nil, fmt.Errorf("report signing key: %w", err)
	}
	if created {
		log.Info("created the report signing key", "key_id", key.ID)
	} else {
		log.Info("report signing key", "key_id", key.ID)
	}

	// The engine keeps its reference distributions in the database, so only
	// the first start after a data change builds them.
	log.Info("loading data", "data", dataName)
	eng, err := risk.Load(ctx, dataFS, log, st)
	if err != nil {
		be.Close()
		return nil, fmt.Errorf("loading data from %s: %w", dataName, err)
	}

	sched := jobs.New(st, eng, jobs.Config{Workers: cfg.workers, MaxAttempts: cfg.maxAttempts, Lease: cfg.jobLease,
		Faults: cfg.faults, Logger: log, DrainTimeout: cfg.shutdownTimeout, Observer: jobObs, OwnerPrefix: serveJobOwner})
	if cfg.faults.Enabled() {
		log.Warn("fault injection is on", "faults", cfg.faults.String())
	}
	deliveries := webhookworker.New(st, webhookworker.Config{Schedule: cfg.webhookSchedule, AllowPrivate: cfg.webhookAllowPrivate,
		Workers: cfg.webhookWorkers, PerEndpoint: cfg.webhookPerEndpoint,
		PerAccount: cfg.webhookPerAccount, Wake: wake, Logger: log, Observer: deliverObs})
	log.Info("webhook settings", "retry_schedule", cfg.webhookScheduleSpec, "attempts", webhook.MaxAttempts(cfg.webhookSchedule),
		"allow_private", cfg.webhookAllowPrivate, "workers", cfg.webhookWorkers, "per_endpoint", cfg.webhookPerEndpoint,
		"per_account", cfg.webhookPerAccount)

	purge := retention.New(st, retention.Config{Keep: cfg.retention, Logger: log})
	if be.sqlite != nil {
		purge = newPurger(be.sqlite, retention.Config{Keep: cfg.retention, Logger: log})
	}
	// A file created before incremental vacuum was the default keeps the
	// pages a purge frees for reuse instead of returning them (docs/operations.md,
	// "Limits and defaults").
	if be.sqlite != nil {
		if f, err := be.sqlite.FileStats(ctx); err == nil && !f.IncrementalOK {
			log.Warn("the database file does not give space back after purges; run 'locrisk db vacuum' once with the server stopped",
				"db", cfg.db, "auto_vacuum", f.AutoVacuum)
		}
	}

	// The app itself tells /readyz whether the data and the workers are
	// there (Health, below), so it exists before the API.
	a := &app{cfg: cfg, log: log, dataLoaded: true}
	api := newAPI(server.Config{Logger: log, RateLimiter: be.rateLimiter(), Webhooks: server.WebhookConfig{AllowPrivate: cfg.webhookAllowPrivate, Wake: wake.Notify},
		MaxInFlight: cfg.maxInFlight, Requests: requestObs, Health: a}, be, eng, sched.Notify)
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		be.Close()
		return nil, fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	// Each connection holds a file descriptor: the cap stays below the
	// open file limit, and idle keep-alive connections give way to new
	// clients at the cap (package connlimit).
	maxConns, lowered := connectionCap(cfg.maxConnections, openFileLimit())
	if lowered {
		log.Warn("--max-connections lowered to stay below the open file limit", "asked", cfg.maxConnections,
			"max_connections", maxConns, "open_file_limit", openFileLimit(), "headroom", fdHeadroom)
	}
	limited := connlimit.New(ln, maxConns, api.ConnBusyResponse)
	log.Info("connection limits", "max_connections", maxConns, "idle_timeout", cfg.idleTimeout, "max_in_flight", cfg.maxInFlight)
	httpSrv := &http.Server{
		Handler:           api.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       cfg.idleTimeout,
		MaxHeaderBytes:    server.HeaderReadLimit, // the documented limit is the handler's (server.MaxHeaderBytes)
		ConnState:         limited.ConnState,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	a.ln, a.http, a.jobs, a.deliveries, a.purge, a.stats, a.store = limited, httpSrv, sched, deliveries, purge, api, be
	if met != nil {
		// The metrics have a listener of their own, so they are never
		// served on the API's address (docs/operations.md, Metrics).
		met.WatchQueue(st)
		mln, err := net.Listen("tcp", cfg.metricsAddr)
		if err != nil {
			limited.Close()
			be.Close()
			return nil, fmt.Errorf("metrics: listen on %s: %w", cfg.metricsAddr, err)
		}
		a.metricsLn = mln
		handler, writeTimeout := met.Handler(), 30*time.Second
		if cfg.pprof {
			handler, writeTimeout = withProfiles(handler), maxProfileTime+10*time.Second
		}
		a.metricsHTTP = &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: 10 * time.Second,
			WriteTimeout:      writeTimeout,
			IdleTimeout:       cfg.idleTimeout,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		}
	}
	return a, nil
}

// serveJobOwner starts the lease owners of serve's job workers
// (jobs.Config.OwnerPrefix), so that a server can tell the job leases a
// server before it left from those of `locrisk report`'s worker.
const serveJobOwner = "srv_"

// releaseLeftLeases hands back the leases the server before this one left
// in the database (killed, or its machine lost), before the workers start:
// its webhook deliveries are due again at once and its jobs are taken over
// at once, instead of each waiting out its lease (30 s by default), during
// which the deliveries also counted against their endpoint's and
// account's attempts in flight (issue 28). serve may: it holds the file's
// exclusive lock (lockServe), so no other server uses these leases
// (store.ReleaseLeftLeases; docs/operations.md, Webhook delivery). Leases
// of servers of earlier versions, whose job workers had no prefix of
// their own, still expire as before. A failure is only logged: the leases
// then expire as they always did.
func releaseLeftLeases(ctx context.Context, st *sqlite.Store, log *slog.Logger) {
	left, err := st.ReleaseLeftLeases(ctx, serveJobOwner, time.Now())
	switch {
	case err != nil:
		log.Warn("could not release the leases a previous server left; they expire as usual", "err", err)
	case left.Jobs > 0 || left.Deliveries > 0:
		log.Info("released the leases a previous server left", "jobs", left.Jobs, "webhook_deliveries", left.Deliveries)
	}
}

// newAPI builds the HTTP API over the backend as serve serves it: the
// requests and GET /readyz on the backend's views of its store (for SQLite,
// with their busy waits). cfg.Probe is set here; loc decides coverage and
// notify wakes the scheduler, as in server.New.
func newAPI(cfg server.Config, be *serveBackend, loc server.Locator, notify func()) *server.Server {
	cfg.Probe = be.probe
	return server.New(cfg, be.api, loc, notify)
}

// newSQLiteAPI is newAPI on the SQLite store st, for the tests that need
// SQLite's locks under the API.
func newSQLiteAPI(cfg server.Config, st *sqlite.Store, loc server.Locator, notify func()) *server.Server {
	return newAPI(cfg, &serveBackend{store: st, api: st.WithBusyWait(server.DefaultDBBusyWait),
		probe: st.WithBusyWait(server.ReadyDBWait), sqlite: st}, loc, notify)
}

// lockServe takes the serve lock of the database file db: an exclusive
// flock on the file itself (package filelock), so that every name of the
// file, a hard link included, finds the same lock. db vacuum takes it too.
// The lock must stay held until the store on the file is closed: releasing
// it closes a descriptor of the database file, which drops SQLite's own
// locks in this process (see package filelock).
func lockServe(db string) (*filelock.Lock, error) {
	l, err := filelock.Acquire(db)
	if errors.Is(err, filelock.ErrLocked) {
		return nil, fmt.Errorf("another locrisk serve (or db vacuum) is already using the database %s (%w); "+
			"stop it first: two servers on one file would each apply the per-account rate limits and so double them "+
			"(accounts, keys, report and data commands may run beside the server)", db, err)
	}
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", db, err)
	}
	return l, nil
}

// Run starts the job scheduler and the delivery worker, serves HTTP, and
// returns when ctx is done (nil) or the HTTP server fails (its error). The
// workers keep running past ctx until Close drains them. Run is called
// once, and not after Close.
func (a *app) Run(ctx context.Context) error {
	a.mu.Lock()
	if a.running || a.closed {
		a.mu.Unlock()
		return errors.New("the service is already running or closed")
	}
	a.running = true
	// Both workers outlive ctx: Close stops them, in its order.
	jobsCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	a.stopJobs, a.jobsDone = stopJobs, make(chan struct{})
	go func() { a.jobs.Run(jobsCtx); close(a.jobsDone) }()
	// The delivery worker outlives the scheduler's drain, so events of jobs
	// finished while draining go out now rather than at the next start.
	delivCtx, stopDeliveries := context.WithCancel(context.WithoutCancel(ctx))
	a.stopDeliveries, a.deliveriesDone = stopDeliveries, make(chan struct{})
	go func() { a.deliveries.Run(delivCtx); close(a.deliveriesDone) }()
	// The retention purge runs now and then every hour, in transactions
	// short enough for the others to write between them.
	purgeCtx, stopPurge := context.WithCancel(context.WithoutCancel(ctx))
	a.stopPurge, a.purgeDone = stopPurge, make(chan struct{})
	go func() { a.purge.Run(purgeCtx); close(a.purgeDone) }()
	a.mu.Unlock()

	serveErr := make(chan error, 2)
	if a.metricsHTTP != nil {
		go func() {
			if err := a.metricsHTTP.Serve(a.metricsLn); !errors.Is(err, http.ErrServerClosed) {
				serveErr <- fmt.Errorf("metrics: %w", err)
			}
		}()
		a.log.Info("metrics listening", "addr", a.metricsLn.Addr().String(), "path", metrics.Path)
	}
	go func() { serveErr <- a.http.Serve(a.ln) }()
	a.log.Info("listening", "addr", a.ln.Addr().String(), "db", redactDB(a.cfg.db), "workers", a.cfg.workers,
		"retention", a.cfg.retention.String())

	select {
	case <-ctx.Done():
		a.mu.Lock()
		a.stopping = true
		a.mu.Unlock()
		a.log.Info("shutting down", "timeout", a.cfg.shutdownTimeout)
		return nil
	case err := <-serveErr:
		if errors.Is(err, http.ErrServerClosed) {
			return nil // Close came before ctx ended
		}
		a.log.Error("http server stopped", "err", err)
		return fmt.Errorf("http server: %w", err)
	}
}

// Close stops the service, in this order:
//
//  0. the retention purge stops (between two of its short transactions,
//     so at once): it is upkeep, and should not compete with the drain;
//  1. stop accepting: the HTTP server closes its listener and waits for
//     requests in hand (http.Server.Shutdown), while the scheduler, told
//     to stop at the same moment, drains the jobs in hand, so that both
//     stay within the shutdown timeout;
//  2. once both are done, the delivery worker finishes or releases its
//     attempts in flight, including events of jobs finished while
//     draining;
//  3. the request statistics still in memory are saved;
//  4. the metrics listener (if any) stops, after a scrape in hand, so
//     scrapes see the whole drain; it goes before the database, which
//     its queue gauges read;
//  5. the database is closed.
//
// The shutdown timeout starts when Close is called; ctx gives values only,
// since it is usually the serving context, already cancelled. Problems are
// logged as warnings and also returned. Close without Run closes the
// listener, the statistics and the database. A second Close does nothing
// more and returns the first one's result.
func (a *app) Close(ctx context.Context) error {
	a.closeOnce.Do(func() { a.closeErr = a.close(ctx) })
	return a.closeErr
}

func (a *app) close(ctx context.Context) error {
	a.mu.Lock()
	a.closed, a.stopping = true, true
	running := a.running
	a.mu.Unlock()

	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.shutdownTimeout)
	defer cancel()
	var errs []error
	warn := func(msg string, err error) {
		if err != nil {
			a.log.Warn(msg, "err", err)
			errs = append(errs, fmt.Errorf("%s: %w", msg, err))
		}
	}
	if running {
		a.stopPurge()
		<-a.purgeDone
		// Requests and jobs in hand drain side by side, so the whole stop
		// stays within the shutdown timeout (plus a moment to release
		// cut-off jobs).
		a.stopJobs()
		warn("http shutdown incomplete", a.http.Shutdown(shutCtx))
		<-a.jobsDone
		// No request or job adds to the statistics any more: flush them
		// while the last webhook attempts run.
		warn("saving request statistics", a.stats.Close(shutCtx))
		// Attempts in flight finish or are released (due again at the next
		// start); deliveries go last so the events of jobs that finished
		// during the drain still go out.
		a.stopDeliveries()
		<-a.deliveriesDone
		if a.metricsHTTP != nil {
			warn("metrics shutdown incomplete", a.metricsHTTP.Shutdown(shutCtx))
		}
	} else {
		a.ln.Close() // never served, so still open
		if a.metricsLn != nil {
			a.metricsLn.Close()
		}
		warn("saving request statistics", a.stats.Close(shutCtx))
	}
	warn("closing database", a.store.Close())
	return errors.Join(errs...)
}

// Reasons GET /readyz gives for the workers (docs/api.md, Health and
// version).
var (
	errShuttingDown     = errors.New("shutting down")
	errNotStarted       = errors.New("not started")
	errSchedulerStopped = errors.New("job scheduler stopped")
	errDeliveryStopped  = errors.New("webhook worker stopped")
	errDataNotLoaded    = errors.New("not loaded")
)

// DataReady is the data check of GET /readyz (server.Health): the engine
// loaded every data set before the service was built.
func (a *app) DataReady() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.dataLoaded {
		return errDataNotLoaded
	}
	return nil
}

// WorkersReady is the workers check of GET /readyz (server.Health): the
// job scheduler and the webhook delivery worker run, and no stop has begun.
func (a *app) WorkersReady() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.stopping:
		return errShuttingDown
	case !a.running:
		return errNotStarted
	case isClosed(a.jobsDone):
		return errSchedulerStopped
	case isClosed(a.deliveriesDone):
		return errDeliveryStopped
	}
	return nil
}

// isClosed reports whether the channel c is closed (c is one of the
// workers' done channels, closed when Run returns).
func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// maxProfileTime is the longest CPU profile or execution trace the
// metrics listener serves with --pprof (its write timeout follows it).
const maxProfileTime = 2 * time.Minute

// withProfiles serves the Go runtime's profiles at /debug/pprof/ beside the
// metrics (docs/operations.md, Profiles): how a job's time divides between
// the engine, the store and the HTTP layer is read from them under load
// (docs/performance.md, The whole path). (Importing net/http/pprof also
// registers the handlers on http.DefaultServeMux, which locrisk never
// serves.)
func withProfiles(metricsHandler http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", metricsHandler)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
