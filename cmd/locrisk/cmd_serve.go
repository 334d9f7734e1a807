package main

// `locrisk serve`: its flags and their checks. The service itself is app
// (app.go), and the order in which it stops is its Close (app_run.go).

import (
	"flag"
	"log/slog"
	"net"
	"runtime/debug"
	"time"

	"github.com/locrisk/locrisk/internal/jobs"
	"github.com/locrisk/locrisk/internal/retention"
	"github.com/locrisk/locrisk/internal/server"
	"github.com/locrisk/locrisk/internal/webhook"
	"github.com/locrisk/locrisk/internal/webhookworker"
)

func (c *cli) serve(args []string) error {
	var cfg appConfig
	var db, faults, logFormat, retain, memoryLimit string
	f := c.newFlags("serve", "[flags]", `
Runs the HTTP API (under /api/v1) and the report job workers, on one
SQLite database file. The engine loads the public data built into the
binary, or the data pack in --data-dir (docs/data.md), checked against its
manifest; if a file is missing or changed, serve exits at once, before it
creates anything, and names it.

SIGTERM or SIGINT stops it gracefully: it stops accepting connections,
lets requests and jobs in hand finish (bounded by --shutdown-timeout),
releases unfinished jobs back to the queue, and exits 0.`, `
  locrisk serve
  locrisk serve --addr 0.0.0.0:8080 --db /var/lib/locrisk/locrisk.db --workers 4
  LOCRISK_LOG_FORMAT=json locrisk serve
  locrisk serve --data-dir ./pack
  locrisk serve --faults report.generate=transient:first=1
  locrisk serve --metrics-addr 127.0.0.1:9464
  locrisk serve --rescore-rate 5`)
	f.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "`host:port` to listen on")
	f.StringVar(&db, "db", "./locrisk.db", "SQLite database `file` (created if absent), or a postgres:// URL (docs/postgres.md)")
	f.StringVar(&cfg.dataDir, "data-dir", "", dataFlagUsage)
	f.StringVar(&cfg.secretKeyFile, "secret-key-file", "", "`file` with the key (32 bytes, base64 or hex) that seals webhook signing secrets and the report signing key at rest (default for SQLite: the --db file name + \".key\", created if absent; required for PostgreSQL)")
	f.IntVar(&cfg.workers, "workers", jobs.DefaultWorkers(), "report job worker goroutines")
	f.IntVar(&cfg.maxAttempts, "job-max-attempts", 3, "attempts per job before a transient failure is final")
	f.StringVar(&cfg.webhookScheduleSpec, "webhook-retry-schedule", webhook.DefaultScheduleSpec, "comma-separated `delays` between webhook delivery attempts")
	f.IntVar(&cfg.webhookWorkers, "webhook-workers", webhookworker.DefaultWorkers, "webhook delivery attempts in flight at most, whole server")
	f.IntVar(&cfg.webhookPerEndpoint, "webhook-per-endpoint", webhookworker.DefaultPerEndpoint, "webhook delivery attempts in flight at most to one endpoint, so a slow receiver delays only itself")
	f.IntVar(&cfg.webhookPerAccount, "webhook-per-account", webhookworker.DefaultPerAccount, "webhook delivery attempts in flight at most to one account's endpoints together, so an account with many slow receivers delays only itself")
	f.BoolVar(&cfg.webhookAllowPrivate, "webhook-allow-private", false, "allow webhook URLs on private/loopback addresses and plain http (testing only)")
	f.StringVar(&faults, "faults", "", "inject failures for resilience tests: `SPEC` such as report.generate=transient:first=1 or report.generate=permanent:rate=0.5")
	f.StringVar(&logFormat, "log-format", "text", "log `format` on stderr: text or json")
	f.DurationVar(&cfg.jobLease, "job-lease", 30*time.Second, "how long a worker holds a job; a job whose worker died runs again after this")
	f.StringVar(&retain, "retention", "180d", "how long finished jobs, reports, batches, webhook records, old keys and request statistics are kept (`duration` such as 180d or 4320h; at least 91d; 0 keeps everything)")
	f.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long a graceful stop waits for requests and jobs")
	f.IntVar(&cfg.maxInFlight, "max-in-flight", server.DefaultMaxInFlight, "requests served at once (POSTs take at most half, one account a quarter of those); beyond it a request is answered 503 server_busy (429 too_many_requests_in_flight past the account's share)")
	f.IntVar(&cfg.maxConnections, "max-connections", defaultMaxConnections, "connections held open at once (lowered to stay below the open file limit); at the cap the longest idle one is closed, or a new one is answered 503")
	f.DurationVar(&cfg.idleTimeout, "idle-timeout", 30*time.Second, "how long an idle keep-alive connection is kept open")
	f.StringVar(&memoryLimit, "memory-limit", defaultMemoryLimit, "soft memory `limit` of the Go runtime: a size with its unit (MiB, GiB, ...), at least 64MiB, or off; without this flag an operator's GOMEMLIMIT applies")
	f.StringVar(&cfg.metricsAddr, "metrics-addr", "", "`host:port` of a separate listener serving Prometheus metrics at /metrics (default: none, and nothing is measured)")
	f.Float64Var(&cfg.rescoreRate, "rescore-rate", jobs.DefaultRescoreRate, "watch item re-scores this server starts per second at most, only while no caller's job waits (docs/operations.md, Re-scoring); 0 starts none")
	f.BoolVar(&cfg.pprof, "pprof", false, "also serve the Go runtime's profiles (CPU, heap, goroutines, execution trace) at /debug/pprof/ on the metrics listener; needs --metrics-addr")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	cfg.db = backendFor(db)
	if err := checkMetricsAddr(cfg.metricsAddr, cfg.addr); err != nil {
		return err
	}
	if cfg.pprof && cfg.metricsAddr == "" {
		return usagef("--pprof needs --metrics-addr: the profiles are served on the metrics listener, never on the API's")
	}
	memoryLimitGiven := false
	f.Visit(func(fl *flag.Flag) { memoryLimitGiven = memoryLimitGiven || fl.Name == "memory-limit" })
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
	if cfg.webhookPerEndpoint < 1 {
		return usagef("--webhook-per-endpoint must be at least 1, got %d", cfg.webhookPerEndpoint)
	}
	if cfg.webhookWorkers < cfg.webhookPerEndpoint {
		return usagef("--webhook-workers must be at least --webhook-per-endpoint (%d), got %d", cfg.webhookPerEndpoint, cfg.webhookWorkers)
	}
	// per endpoint <= per account <= workers: an account's limit below one
	// endpoint's would silently lower that one, and above the pool it
	// would not limit anything (docs/operations.md, Limits and defaults).
	if cfg.webhookPerAccount < cfg.webhookPerEndpoint {
		return usagef("--webhook-per-account must be at least --webhook-per-endpoint (%d), got %d", cfg.webhookPerEndpoint, cfg.webhookPerAccount)
	}
	if cfg.webhookWorkers < cfg.webhookPerAccount {
		return usagef("--webhook-workers must be at least --webhook-per-account (%d), got %d", cfg.webhookPerAccount, cfg.webhookWorkers)
	}
	if !(cfg.rescoreRate >= 0 && cfg.rescoreRate <= 10000) { // NaN too
		return usagef("--rescore-rate must be from 0 to 10000 a second, got %v", cfg.rescoreRate)
	}
	if cfg.maxInFlight < 2 {
		return usagef("--max-in-flight must be at least 2, got %d", cfg.maxInFlight)
	}
	if cfg.maxConnections < 1 {
		return usagef("--max-connections must be at least 1, got %d", cfg.maxConnections)
	}
	if cfg.idleTimeout < time.Second {
		return usagef("--idle-timeout must be at least 1s, got %s", cfg.idleTimeout)
	}
	memLimit, err := parseMemoryLimit(memoryLimit)
	if err != nil {
		return usagef("--memory-limit: %v", err)
	}
	if cfg.retention, err = parseRetention(retain); err != nil {
		return usagef("--retention: %v", err)
	}
	if cfg.webhookSchedule, err = webhook.ParseSchedule(cfg.webhookScheduleSpec); err != nil {
		return usagef("--webhook-retry-schedule: %v", err)
	}
	if cfg.faults, err = jobs.ParseFaults(faults); err != nil {
		return usagef("--faults: %v", err)
	}
	var handler slog.Handler
	switch logFormat {
	case "text":
		handler = slog.NewTextHandler(c.stderr, nil)
	case "json":
		handler = slog.NewJSONHandler(c.stderr, nil)
	default:
		return usagef("--log-format must be text or json, got %q", logFormat)
	}
	log := slog.New(handler)

	// The soft limit makes the collector work harder as the heap nears it,
	// rather than letting a burst of large requests grow the process
	// (docs/operations.md, Limits and defaults).
	limit, apply, from := chooseMemoryLimit(memoryLimitGiven, memLimit, c.env)
	if apply {
		debug.SetMemoryLimit(limit)
	}
	log.Info("memory limit", "limit", formatByteSize(debug.SetMemoryLimit(-1)), "from", from)

	a, err := newApp(c.ctx, cfg, log)
	if err != nil {
		return err
	}
	failed := a.Run(c.ctx)
	// Close logs what it could not finish; a stop that was incomplete still
	// exits 0.
	_ = a.Close(c.ctx)
	if failed != nil {
		return failed
	}
	log.Info("stopped")
	return nil
}

// checkMetricsAddr checks --metrics-addr: empty (no metrics), or a
// host:port with a port, not the API's own address, since metrics are
// never served on the API listener (docs/operations.md, Metrics).
func checkMetricsAddr(metricsAddr, apiAddr string) error {
	if metricsAddr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(metricsAddr)
	if err != nil {
		return usagef("--metrics-addr must be host:port, got %q", metricsAddr)
	}
	if port == "" {
		return usagef("--metrics-addr needs a port, got %q", metricsAddr)
	}
	if port != "0" && metricsAddr == apiAddr {
		return usagef("--metrics-addr must differ from --addr (%s): metrics have a listener of their own", apiAddr)
	}
	return nil
}

// parseRetention reads a retention period: a duration (4320h), a number of
// days (180d), or 0 for none; see retention.CheckKeep.
func parseRetention(s string) (time.Duration, error) {
	if s == "0" || s == "0d" {
		return 0, nil
	}
	d, err := parseLifetime(s)
	if err != nil {
		return 0, err
	}
	return d, retention.CheckKeep(d)
}
