package main

// `locrisk serve`: the HTTP API, the job scheduler and the webhook delivery
// worker on one database, and their graceful stop.

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"time"

	"locrisk/delivery"
	"locrisk/jobs"
	"locrisk/risk"
	"locrisk/server"
	"locrisk/webhook"
)

type serveConfig struct {
	addr, db, dataDir, faults, logFormat, webhookSchedule string
	workers, maxAttempts                                  int
	webhookAllowPrivate                                   bool
	shutdownTimeout, jobLease                             time.Duration
}

func (c *cli) serve(args []string) error {
	var cfg serveConfig
	f := c.newFlags("serve", "[flags]", `
Runs the HTTP API (under /api/v1) and the report job workers, on one
SQLite database file. The engine loads every public data set from
--data-dir at start-up; if any is missing, serve exits at once and names
what is missing and where its publisher offers it.

SIGTERM or SIGINT stops it gracefully: it stops accepting connections,
lets requests and jobs in hand finish (bounded by --shutdown-timeout),
releases unfinished jobs back to the queue, and exits 0.`, `
  locrisk serve --data-dir ../shared/data
  locrisk serve --addr 0.0.0.0:8080 --db /var/lib/locrisk/locrisk.db --workers 4
  LOCRISK_DATA_DIR=../shared/data LOCRISK_LOG_FORMAT=json locrisk serve
  locrisk serve --data-dir ../shared/data --faults report.generate=transient:first=1`)
	f.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "`host:port` to listen on")
	f.StringVar(&cfg.db, "db", "./locrisk.db", "SQLite database `file` (created if absent)")
	f.StringVar(&cfg.dataDir, "data-dir", "", "`directory` holding the public data sets (required)")
	f.IntVar(&cfg.workers, "workers", runtime.NumCPU(), "report job worker goroutines")
	f.IntVar(&cfg.maxAttempts, "job-max-attempts", 3, "attempts per job before a transient failure is final")
	f.StringVar(&cfg.webhookSchedule, "webhook-retry-schedule", webhook.DefaultScheduleSpec, "comma-separated `delays` between webhook delivery attempts")
	f.BoolVar(&cfg.webhookAllowPrivate, "webhook-allow-private", false, "allow webhook URLs on private/loopback addresses and plain http (testing only)")
	f.StringVar(&cfg.faults, "faults", "", "inject failures for resilience tests: `SPEC` such as report.generate=transient:first=1 or report.generate=permanent:rate=0.5")
	f.StringVar(&cfg.logFormat, "log-format", "text", "log `format` on stderr: text or json")
	f.DurationVar(&cfg.jobLease, "job-lease", 30*time.Second, "how long a worker holds a job; a job whose worker died runs again after this")
	f.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long a graceful stop waits for requests and jobs")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	if cfg.workers < 1 {
		return usagef("--workers must be at least 1, got %d", cfg.workers)
	}
	if cfg.maxAttempts < 1 {
		return usagef("--job-max-attempts must be at least 1, got %d", cfg.maxAttempts)
	}
	if cfg.jobLease < time.Second {
		return usagef("--job-lease must be at least 1s, got %s", cfg.jobLease)
	}
	if cfg.shutdownTimeout <= 0 {
		return usagef("--shutdown-timeout must be positive")
	}
	schedule, err := webhook.ParseSchedule(cfg.webhookSchedule)
	if err != nil {
		return usagef("--webhook-retry-schedule: %v", err)
	}
	faults, err := jobs.ParseFaults(cfg.faults)
	if err != nil {
		return usagef("--faults: %v", err)
	}
	var handler slog.Handler
	switch cfg.logFormat {
	case "text":
		handler = slog.NewTextHandler(c.stderr, nil)
	case "json":
		handler = slog.NewJSONHandler(c.stderr, nil)
	default:
		return usagef("--log-format must be text or json, got %q", cfg.logFormat)
	}
	log := slog.New(handler)
	if cfg.dataDir == "" {
		return usagef("no data directory: set --data-dir (or LOCRISK_DATA_DIR) to the directory holding the public data sets; " +
			"'locrisk data check --data-dir DIR' lists every file the engine needs and where its publisher offers it")
	}

	// The data files first: without them there is nothing to serve, and no
	// database file should be created.
	if err := risk.CheckFiles(cfg.dataDir); err != nil {
		return fmt.Errorf("loading data from %s: %w", cfg.dataDir, err)
	}

	// The outbox hook wakes the delivery worker, which needs the store, so
	// the signal between them comes first.
	wake := delivery.NewSignal()
	st, err := c.openStoreNotify(cfg.db, wake.Notify)
	if err != nil {
		return err
	}
	defer st.Close()

	// The engine keeps its reference distributions in the database, so only
	// the first start after a data change builds them.
	eng, err := risk.Load(c.ctx, cfg.dataDir, log, st)
	if err != nil {
		return fmt.Errorf("loading data from %s: %w", cfg.dataDir, err)
	}

	sched := jobs.New(st, eng, jobs.Config{Workers: cfg.workers, MaxAttempts: cfg.maxAttempts, Lease: cfg.jobLease,
		Faults: faults, Logger: log, DrainTimeout: cfg.shutdownTimeout})
	if faults.Enabled() {
		log.Warn("fault injection is on", "faults", faults.String())
	}
	deliveries := delivery.New(st, delivery.Config{Schedule: schedule, AllowPrivate: cfg.webhookAllowPrivate, Wake: wake, Logger: log})
	log.Info("webhook settings", "retry_schedule", cfg.webhookSchedule, "attempts", webhook.MaxAttempts(schedule),
		"allow_private", cfg.webhookAllowPrivate)

	api := server.New(server.Config{Logger: log, Webhooks: server.WebhookConfig{AllowPrivate: cfg.webhookAllowPrivate}}, st, eng, sched.Notify)
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	httpSrv := &http.Server{
		Handler:           api.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(handler, slog.LevelWarn),
	}

	schedCtx, stopSched := context.WithCancel(context.WithoutCancel(c.ctx))
	defer stopSched()
	schedDone := make(chan struct{})
	go func() { sched.Run(schedCtx); close(schedDone) }()
	deliveriesDone := make(chan struct{})
	// The delivery worker outlives the scheduler's drain, so events of jobs
	// finished while draining go out now rather than at the next start.
	delivCtx, stopDeliveries := context.WithCancel(context.WithoutCancel(c.ctx))
	defer stopDeliveries()
	go func() { deliveries.Run(delivCtx); close(deliveriesDone) }()

	serveErr := make(chan error, 1)
	go func() { serveErr <- httpSrv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "db", cfg.db, "workers", cfg.workers)

	var failed error
	select {
	case <-c.ctx.Done():
		log.Info("shutting down", "timeout", cfg.shutdownTimeout)
	case err := <-serveErr:
		failed = fmt.Errorf("http server: %w", err)
		log.Error("http server stopped", "err", err)
	}
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), cfg.shutdownTimeout)
	defer cancel()
	// Requests and jobs in hand drain side by side, so the whole stop stays
	// within --shutdown-timeout (plus a moment to release cut-off jobs).
	stopSched()
	if err := httpSrv.Shutdown(shutCtx); err != nil {
		log.Warn("http shutdown incomplete", "err", err)
	}
	<-schedDone
	// Attempts in flight finish or are released (due again at the next start).
	stopDeliveries()
	<-deliveriesDone
	if err := api.Close(shutCtx); err != nil { // saves the request statistics still in memory
		log.Warn("saving request statistics", "err", err)
	}
	if err := st.Close(); err != nil {
		log.Warn("closing database", "err", err)
	}
	if failed != nil {
		return failed
	}
	log.Info("stopped")
	return nil
}
