// Package server is the HTTP API of locrisk: the operations of docs/api.md
// under /api/v1, with authentication by API key, scopes, a per-account rate
// limit, the JSON error shape and one log line per request, and the health
// endpoints /healthz and /readyz beside them.
//
// What it does not do: it does not generate reports (the scheduler in
// package jobs does, from the queue in package store) and it does not trust
// proxy headers: the client address used for IP allowlists is the host part
// of the connection's remote address, so a deployment behind a reverse proxy
// must not use allowlists unless the proxy connects from the allowed range.
// The rate limiter keeps its counters in memory, so they are per process and
// start from zero after a restart.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/apidoc"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/signing"
	"github.com/locrisk/locrisk/internal/version"
	"github.com/locrisk/locrisk/internal/view"
)

// Locator decides whether a coordinate is inside the supported coverage; it
// returns risk.ErrUnsupportedLocation when it is not. Outlines gives the
// state and county boundary rings the PDF locator map draws (nil when the
// county is unknown). *risk.Engine implements it.
type Locator interface {
	Locate(lat, lon float64) (risk.Location, error)
	Outlines(countyFIPS string) (state, county [][]geo.Point)
}

// Config holds the server's dependencies that are not the store or the
// engine.
type Config struct {
	// Logger receives one line per request; nil discards.
	Logger *slog.Logger
	// Now is the clock for key expiry, the key cache, rate-limit windows,
	// quota periods and job timestamps; nil means time.Now.
	Now func() time.Time
	// KeyCacheTTL is how long a key lookup (found or not) is reused.
	// docs/api.md (Authentication) promises that a new or revoked key takes
	// effect within one second, so 0 means one second, larger values are
	// clamped to one second, and a negative value disables the cache.
	KeyCacheTTL time.Duration
	// RateLimiter counts requests per account; nil means an in-memory
	// fixed-window limiter (NewMemoryRateLimiter).
	RateLimiter RateLimiter
	// StatsFlushInterval is how often the request statistics of the
	// operations summary go from memory to the database (observability.go);
	// 0 means one second, negative means only on FlushStats and Close.
	StatsFlushInterval time.Duration
	// Webhooks holds the endpoint URL rules of POST /webhooks (webhooks.go).
	Webhooks WebhookConfig
	// Probe is the readiness check's view of the database (GET /readyz,
	// health.go); nil means the store itself. The assembly passes a view
	// that gives up on another process's lock within ReadyDBWait.
	Probe WriteProber
	// MaxInFlight bounds the requests served at once; beyond it a request
	// is answered 503 server_busy (inflight.go). 0 means
	// DefaultMaxInFlight, negative means no bound.
	MaxInFlight int
	// Requests, if set, is told of every request once it is answered
	// (serve's metrics listener, docs/operations.md, Metrics); nil costs nothing.
	Requests RequestObserver
	// Health tells GET /readyz whether the engine's data and the workers
	// are there (health.go); nil reports both as not ready.
	Health Health
	// Version is what the Server header (locrisk/<version>) and GET
	// /readyz show; "" means version.String().
	Version string
	// Mounts are what the server serves beside the API (the web console,
	// docs/console.md); see Mount.
	Mounts []Mount
}

// Mount is a handler for the GET and HEAD requests under a path prefix
// outside the API, such as the web console's pages and files
// (docs/console.md). Its requests go through the outer middleware as the
// API's do (request id, the bound on requests in flight, the log line),
// but they take no key, are not rate limited or counted in the operations
// summary, and are no API operations: the OpenAPI document does not list
// them. The handler sets its own headers; the middleware's Cache-Control:
// no-store stands unless it replaces it.
type Mount struct {
	// Prefix is the path prefix, starting and ending with "/", such as
	// "/console/"; it may not be "/" nor lie under the API's prefix or
	// /.well-known/.
	Prefix  string
	Handler http.Handler
}

// check refuses a mount that would take paths of the API or of the
// server's own open routes.
func (m Mount) check() error {
	p := m.Prefix
	switch {
	case m.Handler == nil:
		return fmt.Errorf("server: mount %q has no handler", p)
	case len(p) < 3 || p[0] != '/' || p[len(p)-1] != '/' || uncleanPath(p):
		return fmt.Errorf("server: mount prefix %q is not a clean path /name/", p)
	case strings.HasPrefix(p, view.APIPrefix+"/") || strings.HasPrefix(view.APIPrefix+"/", p),
		strings.HasPrefix(p, "/.well-known/"),
		strings.TrimSuffix(p, "/") == HealthzPath, strings.TrimSuffix(p, "/") == ReadyzPath:
		return fmt.Errorf("server: mount prefix %q would take paths of the API", p)
	}
	return nil
}

// RequestObserver watches the requests the server answers. It is called
// on every request, so it must be quick and safe for concurrent use.
type RequestObserver interface {
	// ObserveRequest reports one answered request: route is the path
	// pattern of the operation that took it, as registered in routes.go
	// ("/api/v1/location-risk/jobs/{jobId}"), or "" when none did (an
	// unknown path or method, or a request refused before routing);
	// method is the request's, as the client sent it; d runs from the
	// request's arrival to the end of its response.
	ObserveRequest(route, method string, status int, d time.Duration)
}

// Store is what the API serves from: the domain's operations (package
// locrisk, service.go) that requests use. The server holds no storage of its
// own and knows no backend: how long a write may wait for the database is
// the store's setting, chosen where the service is assembled (cmd/locrisk,
// newAPI: DefaultDBBusyWait), and its ErrBusy and ErrWriteQueue are
// answered 503 (errors.go).
type Store interface {
	locrisk.Keys
	locrisk.Jobs
	locrisk.Batches
	locrisk.Watchlists
	locrisk.Webhooks
	locrisk.Usage
	locrisk.SigningKeys
	WriteProber
}

// WriteProber checks that the database could take a write now, writing
// nothing (locrisk.Store's ProbeWrite): ErrBusy when another process holds
// the lock, ErrStorageFull while the store has no room to write.
type WriteProber interface {
	ProbeWrite(ctx context.Context) error
}

// DefaultDBBusyWait is the request paths' wait for another process's
// write lock (docs/operations.md, Limits and defaults), which the assembly
// gives the store the server uses. It is shorter than the store's own
// wait, which the background workers keep, so a client hears 503 with
// Retry-After well within its own timeout. Writes queued behind this
// server's own (a few milliseconds each) are not bound by it: the store
// tells the two apart.
const DefaultDBBusyWait = 2 * time.Second

// maxKeyCacheTTL is the bound of docs/api.md (Authentication) on how long a
// changed key may be served from a stale cache entry.
const maxKeyCacheTTL = time.Second

// Server serves the API. It is safe for concurrent use.
type Server struct {
	log     *slog.Logger
	now     func() time.Time
	store   Store
	signer  *signing.Signer // signs the reports served (docs/verification.md)
	loc     Locator
	notify  func()
	keys    *keyCache
	limiter RateLimiter
	stats   *requestRecorder
	busy    *inFlight
	turns   *bodyTurns // large bodies parsed at once (inflight.go)
	// bodyTime is the base of the time a body may take (body.go);
	// DefaultBodyTime, shorter in tests.
	bodyTime time.Duration
	handler  http.Handler
	reqObs   RequestObserver // nil: no metrics
	version  string
	health   Health
	probe    WriteProber // the readiness probe's view: waits at most ReadyDBWait
	apiDoc   apidoc.Document

	webhooks WebhookConfig
	mounts   []Mount // served beside the API (routes.go)
}

// New builds a server over the store st. loc decides coverage for new jobs;
// notify (may be nil) is called after jobs are queued so an idle worker
// picks them up at once.
func New(cfg Config, st Store, loc Locator, notify func()) *Server {
	s := &Server{
		log:      cfg.Logger,
		now:      cfg.Now,
		loc:      loc,
		notify:   notify,
		limiter:  cfg.RateLimiter,
		busy:     newInFlight(cfg.MaxInFlight),
		turns:    newBodyTurns(runtime.GOMAXPROCS(0)),
		bodyTime: DefaultBodyTime,
		reqObs:   cfg.Requests,
		version:  cfg.Version,
		health:   cfg.Health,
		apiDoc:   apidoc.Load(),

		webhooks: cfg.Webhooks,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.store, s.probe = st, cfg.Probe

	if s.probe == nil && st != nil {
		s.probe = st
	}
	if s.version == "" {
		s.version = version.String()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if st != nil {
		s.signer = signing.New(st, s.now)
	}
	if s.notify == nil {
		s.notify = func() {}
	}
	if s.limiter == nil {
		s.limiter = NewMemoryRateLimiter()
	}
	flush := cfg.StatsFlushInterval
	if flush == 0 {
		flush = time.Second
	}
	s.stats = newRequestRecorder(flush)
	ttl := cfg.KeyCacheTTL
	switch {
	case ttl == 0 || ttl > maxKeyCacheTTL:
		ttl = maxKeyCacheTTL
	case ttl < 0:
		ttl = 0
	}
	s.keys = newKeyCache(ttl, s.lookupKey)
	for _, m := range cfg.Mounts {
		if err := m.check(); err != nil {
			panic(err) // a mistake of the program that assembles the server
		}
	}
	s.mounts = cfg.Mounts
	s.handler = s.routes()
	return s
}

// Handler returns the http.Handler serving every route.
func (s *Server) Handler() http.Handler { return s.handler }

// lookupKey is the key cache's source: the store, by secret.
func (s *Server) lookupKey(ctx context.Context, secret string) (locrisk.APIKey, locrisk.Account, error) {
	return s.store.KeyBySecret(ctx, secret)
}
