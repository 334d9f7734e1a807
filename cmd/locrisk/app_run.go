package main

// Run and Close of the running service, and the order of a stop; the
// workers' part of GET /readyz, which follows them.

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/locrisk/locrisk/internal/metrics"
)

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
	a.log.Info("listening", "addr", a.ln.Addr().String(), "db", a.cfg.db.String(), "workers", a.cfg.workers,
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
