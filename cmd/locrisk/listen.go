package main

// The listeners of the running service: the API's, under the connection
// cap, and with --metrics-addr the metrics', with --pprof the runtime's
// profiles beside them.

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/locrisk/locrisk/internal/connlimit"
	"github.com/locrisk/locrisk/internal/metrics"
	"github.com/locrisk/locrisk/internal/server"
)

// listen listens on the API's address and, with met, on the metrics
// address, and builds their HTTP servers; Run serves them. On an error
// the listener it opened is closed again.
func (a *app) listen(api *server.Server, met *metrics.Metrics) error {
	cfg, log := a.cfg, a.log
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
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
	a.ln = limited
	a.http = &http.Server{
		Handler:           api.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       cfg.idleTimeout,
		MaxHeaderBytes:    server.HeaderReadLimit, // the documented limit is the handler's (server.MaxHeaderBytes)
		ConnState:         limited.ConnState,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if met == nil {
		return nil
	}
	// The metrics have a listener of their own, so they are never served
	// on the API's address (docs/operations.md, Metrics).
	mln, err := net.Listen("tcp", cfg.metricsAddr)
	if err != nil {
		limited.Close()
		return fmt.Errorf("metrics: listen on %s: %w", cfg.metricsAddr, err)
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
	return nil
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
