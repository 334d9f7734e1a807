package server

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"runtime/debug"
	"strings"
	"time"

	"github.com/locrisk/locrisk/internal/ids"
)

// reqInfo is what the outer middleware learns about a request as it passes
// through the inner layers (the account, once authenticated), for the log
// line and the request statistics.
type reqInfo struct {
	id          string
	pattern     string // route path pattern, "" when no route matched
	accountID   string // "" until authenticated
	rateLimited bool
	// turn is the request's claim on a turn to parse a large body
	// (inflight.go, bodyTurns); nil for a request without a body.
	turn *bodyTurn
}

type reqInfoKey struct{}

func infoOf(r *http.Request) *reqInfo {
	if in, ok := r.Context().Value(reqInfoKey{}).(*reqInfo); ok {
		return in
	}
	return nil
}

// requestID is the X-Request-Id of r, "" outside the middleware.
func requestID(r *http.Request) string {
	if in := infoOf(r); in != nil {
		return in.id
	}
	return ""
}

// maxLoggedPath bounds the raw path logged for unmatched requests.
const maxLoggedPath = 200

// serve is the outermost handler: request id, panic recovery, the bound
// on requests in flight, the header size limit, the JSON 404/405 answers for requests no route
// takes, and the log line.
//
// The mux is asked first which pattern matches (mux.Handler does not run
// anything); only when none does is its own (plain-text) answer run against
// a throwaway writer to learn whether it is a 405 and which methods the path
// allows, so the Allow header always agrees with the registered routes.
// requestWorkLimit bounds a request's work once the client can no longer
// cut it short (serve): far above what any request takes.
const requestWorkLimit = 2 * time.Minute

func (s *Server) serve(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &reqInfo{id: ids.New(ids.Request)}
		// A request's work is not cut short when the client closes its
		// side of the connection. net/http cancels the request's context
		// then, also for a client that only half-closed after sending its
		// requests (shutdown(SHUT_WR), nc -N) and still reads the
		// answers, which were 500s. The work is short and bounded
		// anyway (the body's time, the database's lock wait), and
		// requestWorkLimit bounds the rest.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), requestWorkLimit)
		defer cancel()
		r = r.WithContext(context.WithValue(ctx, reqInfoKey{}, info))
		sw := &statusWriter{ResponseWriter: w}
		sw.Header().Set("X-Request-Id", info.id)
		sw.Header().Set("Cache-Control", "no-store")
		sw.Header().Set("Server", serverHeader(s.version))

		defer func() {
			v := recover()
			if v == http.ErrAbortHandler {
				panic(v) // a deliberate abort, not a bug: let net/http drop the connection quietly
			}
			// A panic after the header went out leaves a half-written
			// response; only the connection can be dropped then.
			abort := v != nil && sw.wroteHeader
			if v != nil {
				s.log.ErrorContext(r.Context(), "panic serving request",
					"request_id", info.id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if !abort {
					s.writeError(sw, r, &Error{Code: codeInternal, Message: "internal error; quote the requestId when reporting it"})
				}
			}
			dur := time.Since(start)
			status := sw.statusCode()
			attrs := []any{
				"method", r.Method,
				"pattern", info.pattern,
				"status", status,
				"duration_ms", float64(dur.Microseconds()) / 1000,
				"request_id", info.id,
				"account_id", info.accountID,
			}
			if info.pattern == "" {
				p := r.URL.Path
				if len(p) > maxLoggedPath {
					p = p[:maxLoggedPath]
				}
				attrs = append(attrs, "path", p)
			}
			s.log.InfoContext(r.Context(), "request", attrs...)
			s.observeRequest(r.Context(), info, status, dur)
			if s.reqObs != nil {
				s.reqObs.ObserveRequest(info.pattern, r.Method, status, dur)
			}
			if abort {
				panic(http.ErrAbortHandler)
			}
		}()

		// The liveness check is answered before the bound on requests in
		// flight: it does no I/O, and an overloaded server must not look
		// dead to whatever restarts dead ones (health.go).
		if r.URL.Path == HealthzPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			info.pattern = HealthzPath
			s.healthz(sw, r)
			return
		}
		// Past the bound on requests in flight nothing else is done: no
		// route lookup, no authentication, no body read.
		release, ok := s.busy.acquire(r)
		if !ok {
			s.writeError(sw, r, busyError())
			return
		}
		defer release()
		// Past the bound, a body the handler leaves unread is read and
		// dropped before the answer goes out (body.go, drainBody).
		if r.ContentLength != 0 {
			body := &countingBody{ReadCloser: r.Body}
			r.Body = body
			sw.beforeHeader = func() { s.drainBody(sw, r, body) }
			defer sw.answering()
		}
		// net/http reads up to HeaderReadLimit; the documented limit is
		// enforced here so its answer has the error shape.
		if headerBytes(r) > MaxHeaderBytes {
			s.writeError(sw, r, headersTooLarge())
			return
		}

		// ServeMux answers an unclean path ("//", "/./", "/../") with its
		// own HTML redirect; no client of this API sends one on purpose, so
		// it is a JSON 404 like any other unknown path.
		if _, pattern := mux.Handler(r); pattern != "" && !uncleanPath(r.URL.Path) {
			// Patterns are "METHOD /path"; the method is logged on its own.
			info.pattern = pattern
			if _, path, ok := strings.Cut(pattern, " "); ok {
				info.pattern = path
			}
			mux.ServeHTTP(sw, r)
			return
		}
		s.unmatched(sw, r, mux)
	})
}

// uncleanPath reports whether ServeMux would redirect p to a cleaned form
// (its own rule: path.Clean, keeping a trailing slash).
func uncleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return true
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np != p
}

// unmatched answers a request that no route takes: 405 with Allow when the
// path exists for other methods, 404 otherwise.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request, mux *http.ServeMux) {
	h, _ := mux.Handler(r)
	probe := &probeWriter{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		allow := probe.header.Get("Allow")
		w.Header().Set("Allow", allow)
		s.writeError(w, r, errorf(codeMethodNotAllowed, "method %s is not allowed here; allowed: %s", r.Method, allow))
		return
	}
	s.writeError(w, r, errorf(codeNotFound, "no API operation at this path"))
}

// probeWriter records the status and headers of the mux's fallback answer
// and discards its body.
type probeWriter struct {
	header http.Header
	status int
}

func (p *probeWriter) Header() http.Header { return p.header }
func (p *probeWriter) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}
func (p *probeWriter) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}

// statusWriter remembers the status sent, for the log line and so the panic
// handler knows whether an error body can still be written. beforeHeader,
// if set, runs once just before the status line goes out (drainBody).
type statusWriter struct {
	http.ResponseWriter
	status       int
	wroteHeader  bool
	beforeHeader func()
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.answering()
		w.status = code
		w.wroteHeader = true
	}
	w.ResponseWriter.WriteHeader(code)
}

// answering runs beforeHeader, once; the middleware also calls it when
// the handler returns without having written anything, before net/http
// sends its implicit answer.
func (w *statusWriter) answering() {
	if f := w.beforeHeader; f != nil {
		w.beforeHeader = nil
		f()
	}
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) statusCode() int {
	if !w.wroteHeader {
		return http.StatusOK
	}
	return w.status
}

// Flush lets streaming handlers (the batch CSV) flush through the wrapper.
func (w *statusWriter) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
