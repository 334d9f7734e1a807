package server

// The health endpoints, outside /api/v1 and without authentication
// (docs/api.md, Health and version): GET /healthz says the process answers;
// GET /readyz says whether it can do its work now, for a load balancer or
// an orchestrator to send traffic only when it can.

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/locrisk/locrisk"
)

// Paths of the health endpoints.
const (
	HealthzPath = "/healthz"
	ReadyzPath  = "/readyz"
)

// Health is what GET /readyz asks of the parts of the service the server
// does not own; the app that assembles them provides it. Each method returns
// nil when its part is ready, else an error whose message is the short
// reason /readyz shows ("shutting down", "job scheduler stopped").
type Health interface {
	// DataReady reports whether the engine has its data loaded.
	DataReady() error
	// WorkersReady reports whether the report job scheduler and the webhook
	// delivery worker are running; during a graceful stop it returns an
	// error saying so.
	WorkersReady() error
}

// Readiness bounds (docs/api.md, Health and version).
const (
	// ReadyDBWait bounds the database probe: another process holding the
	// write lock longer than this makes the server not ready rather than
	// leaving the probe hanging (Config.Probe is a view of the store that
	// waits no longer).
	ReadyDBWait = time.Second
	// readyRetryAfter is the Retry-After of a 503 from /readyz.
	readyRetryAfter = 5 * time.Second
)

// errNoHealth is the reason given when the server was built without a
// Health: nothing then says the data and workers are there.
var errNoHealth = errors.New("not reported")

// ReadyChecks is the checks member of GET /readyz: "ok" or a short reason
// each.
type ReadyChecks struct {
	Database string `json:"database"`
	Data     string `json:"data"`
	Workers  string `json:"workers"`
}

// ReadyView is the body of GET /readyz.
type ReadyView struct {
	Status  string      `json:"status"` // ready or not_ready
	Version string      `json:"version"`
	Checks  ReadyChecks `json:"checks"`
}

// healthz answers 200 whenever the process can serve a request at all. It
// does no I/O, and the outer middleware answers it before the bound on
// requests in flight, so an overloaded server is not mistaken for a dead
// one and restarted.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz runs the three checks and answers 200 when all pass, else 503
// with Retry-After.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	v := ReadyView{Status: "ready", Version: s.version, Checks: ReadyChecks{
		Database: s.databaseReady(r.Context()),
		Data:     reason(s.healthOr().DataReady()),
		Workers:  reason(s.healthOr().WorkersReady()),
	}}
	status := http.StatusOK
	if v.Checks.Database != "ok" || v.Checks.Data != "ok" || v.Checks.Workers != "ok" {
		v.Status, status = "not_ready", http.StatusServiceUnavailable
		w.Header().Set("Retry-After", strconv.FormatInt(ceilSeconds(readyRetryAfter), 10))
	}
	writeJSON(w, status, v)
}

// databaseReady probes the database with a write that writes nothing
// (WriteProber), waiting at most ReadyDBWait. While the store has no room
// to write (a write was refused with ErrStorageFull) the probe fails so
// too, until it finds room again (the SQLite store's ProbeWrite).
func (s *Server) databaseReady(ctx context.Context) string {
	if s.probe == nil {
		return "no database"
	}
	ctx, cancel := context.WithTimeout(ctx, ReadyDBWait)
	defer cancel()
	err := s.probe.ProbeWrite(ctx)
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, locrisk.ErrBusy):
		return "locked by another process"
	case errors.Is(err, locrisk.ErrStorageFull):
		return "storage full"
	case errors.Is(err, locrisk.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, context.DeadlineExceeded):
		return "no write within " + ReadyDBWait.String()
	case ctx.Err() != nil:
		return "probe cancelled"
	}
	s.log.WarnContext(ctx, "readiness: database write probe failed", "err", err)
	return "write failed"
}

func (s *Server) healthOr() Health {
	if s.health == nil {
		return noHealth{}
	}
	return s.health
}

// noHealth is the Health of a server built without one.
type noHealth struct{}

func (noHealth) DataReady() error    { return errNoHealth }
func (noHealth) WorkersReady() error { return errNoHealth }

// reason is "ok" for nil, else the error's message.
func reason(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// serverHeader is the Server header of every response: locrisk/<version>
// (docs/api.md, Health and version).
func serverHeader(v string) string { return "locrisk/" + v }
