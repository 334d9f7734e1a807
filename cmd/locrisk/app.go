package main

// The running service, as `locrisk serve` assembles it (newApp); Run and
// Close, which start and stop it, are app_run.go, its listeners listen.go.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/console"
	"github.com/locrisk/locrisk/internal/jobs"
	"github.com/locrisk/locrisk/internal/metrics"
	"github.com/locrisk/locrisk/internal/retention"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/server"
	"github.com/locrisk/locrisk/internal/signing"
	"github.com/locrisk/locrisk/internal/version"
	"github.com/locrisk/locrisk/internal/webhook"
	"github.com/locrisk/locrisk/internal/webhookworker"
)

// appConfig is what the service runs with: serve's flags, checked and
// parsed.
type appConfig struct {
	addr, dataDir             string
	db                        backend // --db
	secretKeyFile             string  // --secret-key-file; empty: beside the database
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
	rescoreRate               float64       // --rescore-rate: watch item re-scores started per second at most; 0 none
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

// newApp checks the data files, opens the database (the backend's store
// for serve, with the webhook outbox and its wake-up), loads the engine,
// builds the scheduler, the delivery worker and the API, and listens on
// the address, and on the metrics address if there is one. Nothing is
// served until Run. On an error everything opened so far is closed again.
func newApp(ctx context.Context, cfg appConfig, log *slog.Logger) (*app, error) {
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
		jobObs     jobs.Observer
		deliverObs webhookworker.Observer
		requestObs server.RequestObserver
	)
	if cfg.metricsAddr != "" {
		met = metrics.New(metrics.Config{Logger: log})
		jobObs, deliverObs, requestObs = met, met, met
	}
	st, err := cfg.db.openServe(ctx, serveOptions{keyFile: cfg.secretKeyFile, wake: wake.Notify, metrics: met, log: log})
	if err != nil {
		return nil, err
	}
	st.releaseLeftLeases(ctx, log)
	// The report signing key: made on the first start, and opened now so
	// that a secret key file that does not open it stops the server here
	// rather than at its first report (docs/verification.md).
	key, created, err := signing.New(st, nil).Key(ctx)
	if err != nil {
		st.Close()
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
		st.Close()
		return nil, fmt.Errorf("loading data from %s: %w", dataName, err)
	}

	// The re-score lane follows the versions this engine serves
	// (docs/operations.md, Re-scoring).
	rescore := &jobs.Rescore{Queue: st, Rate: cfg.rescoreRate, Versions: locrisk.ScoreVersions{
		Data: eng.DataVersion(), Methodology: risk.MethodologyVersion, Engine: version.String()}}
	sched := jobs.New(st, eng, jobs.Config{Workers: cfg.workers, MaxAttempts: cfg.maxAttempts, Lease: cfg.jobLease,
		Faults: cfg.faults, Logger: log, DrainTimeout: cfg.shutdownTimeout, Observer: jobObs, OwnerPrefix: serveJobOwner,
		Rescore: rescore})
	if cfg.faults.Enabled() {
		log.Warn("fault injection is on", "faults", cfg.faults.String())
	}
	deliveries := webhookworker.New(st, webhookworker.Config{Schedule: cfg.webhookSchedule, AllowPrivate: cfg.webhookAllowPrivate,
		Workers: cfg.webhookWorkers, PerEndpoint: cfg.webhookPerEndpoint,
		PerAccount: cfg.webhookPerAccount, Wake: wake, Logger: log, Observer: deliverObs})
	log.Info("webhook settings", "retry_schedule", cfg.webhookScheduleSpec, "attempts", webhook.MaxAttempts(cfg.webhookSchedule),
		"allow_private", cfg.webhookAllowPrivate, "workers", cfg.webhookWorkers, "per_endpoint", cfg.webhookPerEndpoint,
		"per_account", cfg.webhookPerAccount)
	purge := st.purger(retention.Config{Keep: cfg.retention, Logger: log})
	st.adviseVacuum(ctx, log)

	// The web console beside the API, its maps drawn from the engine's
	// boundaries (docs/console.md).
	con, err := console.New(console.Config{Geography: eng, Version: version.String(), Logger: log})
	if err != nil {
		st.Close()
		return nil, err
	}

	// The app itself tells /readyz whether the data and the workers are
	// there (its Health methods, app_run.go), so it exists before the API.
	a := &app{cfg: cfg, log: log, dataLoaded: true}
	api := newAPI(server.Config{Logger: log, RateLimiter: st.rateLimiter(), Webhooks: server.WebhookConfig{AllowPrivate: cfg.webhookAllowPrivate, Wake: wake.Notify},
		MaxInFlight: cfg.maxInFlight, Requests: requestObs, Health: a,
		Mounts: []server.Mount{{Prefix: console.Prefix, Handler: con}}}, st, eng, sched.Notify)
	a.jobs, a.deliveries, a.purge, a.stats, a.store = sched, deliveries, purge, api, st
	if met != nil {
		met.WatchQueue(st)
	}
	if err := a.listen(api, met); err != nil {
		st.Close()
		return nil, err
	}
	return a, nil
}

// serveJobOwner starts the lease owners of serve's job workers
// (jobs.Config.OwnerPrefix), so that a server can tell the job leases a
// server before it left from those of `locrisk report`'s worker.
const serveJobOwner = "srv_"

// newAPI builds the HTTP API over st as serve serves it: the requests and
// GET /readyz on the backend's views of its store (for SQLite, with their
// busy waits). cfg.Probe is set here; loc decides coverage and notify
// wakes the scheduler, as in server.New.
func newAPI(cfg server.Config, st serveStore, loc server.Locator, notify func()) *server.Server {
	cfg.Probe = st.probe()
	return server.New(cfg, st.api(), loc, notify)
}
