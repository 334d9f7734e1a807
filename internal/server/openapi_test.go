package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/responses"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"

	"github.com/locrisk/locrisk/internal/apidoc"
)

// openAPIDoc is the OpenAPI document of package apidoc, parsed once for
// all tests of this package: building the validator takes far longer than
// validating a response, and it is read-only once built.
type openAPIDoc struct {
	model     *v3.Document
	validator validator.Validator
	schemas   schema_validation.SchemaValidator
}

var loadOpenAPIDoc = sync.OnceValues(func() (*openAPIDoc, error) {
	doc, err := libopenapi.NewDocument(apidoc.Load().JSON)
	if err != nil {
		return nil, fmt.Errorf("parse OpenAPI document: %w", err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("build OpenAPI model: %w", err)
	}
	v, errs := validator.NewValidator(doc, config.WithFormatAssertions())
	if len(errs) > 0 {
		return nil, fmt.Errorf("OpenAPI validator: %w", errors.Join(errs...))
	}
	return &openAPIDoc{model: &model.Model, validator: v, schemas: schema_validation.NewSchemaValidator(config.WithFormatAssertions())}, nil
})

func openAPI(t testing.TB) *openAPIDoc {
	t.Helper()
	c, err := loadOpenAPIDoc()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checked wraps h so that every response it gives is validated against the
// OpenAPI document once the handler returns: status, headers and body. A
// handler that aborts (a CSV cut short on purpose) is not validated, as no
// client receives a complete response.
func (e *env) checked(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &teeWriter{ResponseWriter: w}
		req := r.Clone(r.Context())
		h.ServeHTTP(tw, r)
		tw.finish()
		e.validateResponse(req, tw.status, tw.header, tw.body.Bytes())
	})
}

// checkedLater is checked for tests that time requests or run them
// concurrently: the responses are kept and validated when the test ends,
// so the validation's own work neither enters a measured time nor holds
// up the requests it runs beside.
func (e *env) checkedLater(h http.Handler) http.Handler {
	type recorded struct {
		req    *http.Request
		status int
		header http.Header
		body   []byte
	}
	var (
		mu   sync.Mutex
		seen []recorded
	)
	e.t.Cleanup(func() {
		for _, r := range seen {
			e.validateResponse(r.req, r.status, r.header, r.body)
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &teeWriter{ResponseWriter: w}
		req := r.Clone(r.Context())
		h.ServeHTTP(tw, r)
		tw.finish()
		mu.Lock()
		seen = append(seen, recorded{req, tw.status, tw.header, tw.body.Bytes()})
		mu.Unlock()
	})
}

// teeWriter passes a response through and keeps a copy of it.
type teeWriter struct {
	http.ResponseWriter
	status int
	header http.Header
	body   bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.header = w.ResponseWriter.Header().Clone()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *teeWriter) finish() {
	if w.status == 0 {
		w.status = http.StatusOK
		w.header = w.ResponseWriter.Header().Clone()
	}
}

// validateResponse fails the test when a response does not match the
// document. A request for an operation the document has (HEAD included,
// which the document lists beside every GET) is validated by the library
// as that operation's response. Any other request can only be answered by
// the middleware: 431, 500 and 503 are validated against the document's
// shared responses; 404 not_found and 405 method_not_allowed, which
// OpenAPI cannot attach to an operation the path lacks, against the Error
// schema and what info.description says of them, the 405's Allow header
// naming exactly the methods the document gives the path.
func (e *env) validateResponse(req *http.Request, status int, header http.Header, body []byte) {
	e.t.Helper()
	// What a Mount serves (the web console) is no API answer, and the
	// document rightly does not describe it; a 405 under a mount's prefix
	// is the server's, in the error shape, and mount_test.go checks it.
	for _, m := range e.mounts() {
		if strings.HasPrefix(req.URL.Path, m.Prefix) || req.URL.Path+"/" == m.Prefix {
			return
		}
	}
	c := openAPI(e.t)
	resp := &http.Response{StatusCode: status, Header: header, Body: io.NopCloser(bytes.NewReader(body)), Request: req}
	if status == http.StatusNotModified || status == http.StatusNoContent {
		resp.Body = http.NoBody
	}
	pathItem, op, tmpl := findOperation(c, req)
	if pathItem != nil {
		if ok, errs := c.validator.GetResponseBodyValidator().ValidateResponseBodyWithPathItem(req, resp, pathItem, tmpl); !ok {
			e.t.Errorf("OpenAPI: %s %s answered %d, which the document does not allow:%s\nbody: %.600s",
				req.Method, req.URL.Path, status, describe(errs), body)
		}
		// The document makes RateLimit-* optional on the 404s of operations
		// with a path parameter, for not_found; the resource's own code
		// comes after authentication and carries them.
		if status == http.StatusNotFound && len(op.Security) > 0 && bodyErrorCode(body) != codeNotFound && req.Method != http.MethodHead {
			for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
				if header.Get(h) == "" {
					e.t.Errorf("OpenAPI: %s %s answered 404 %s without %s", req.Method, req.URL.Path, bodyErrorCode(body), h)
				}
			}
		}
		return
	}
	if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
		e.validateUnmatched(c, req, resp, body)
		return
	}
	name := map[int]string{431: "HeadersTooLarge", 503: "Unavailable", 500: "InternalError"}[status]
	shared := c.model.Components.Responses.GetOrZero(name)
	if shared == nil {
		e.t.Errorf("OpenAPI: %s %s has no operation in the document, yet answered %d", req.Method, req.URL.Path, status)
		return
	}
	var errs []*liberrors.ValidationError
	if _, herrs := responses.ValidateResponseHeaders(req, resp, shared.Headers, "", fmt.Sprint(status)); len(herrs) > 0 {
		errs = append(errs, herrs...)
	}
	media := shared.Content.GetOrZero("application/json")
	if ct := header.Get("Content-Type"); ct != "application/json" {
		e.t.Errorf("OpenAPI: %s %s answered %d with Content-Type %q", req.Method, req.URL.Path, status, ct)
	}
	if _, serrs := c.schemas.ValidateSchemaBytes(media.Schema.Schema(), body); len(serrs) > 0 {
		errs = append(errs, serrs...)
	}
	if len(errs) > 0 {
		e.t.Errorf("OpenAPI: %s %s answered %d, unlike the document's %s response:%s\nbody: %.600s",
			req.Method, req.URL.Path, status, name, describe(errs), body)
	}
}

// mounts are the env's server's mounts (none without a server).
func (e *env) mounts() []Mount {
	if e.srv == nil {
		return nil
	}
	return e.srv.mounts
}

// validateUnmatched checks a 404 or 405 answered to a request that no
// operation of the document takes: the Error shape with not_found or
// method_not_allowed, X-Request-Id and Cache-Control as the document's
// header components say, no RateLimit-* headers. A 405's Allow lists the
// methods the document gives the path; a 404 comes for a path the document
// does not have, or for an unclean one.
func (e *env) validateUnmatched(c *openAPIDoc, req *http.Request, resp *http.Response, body []byte) {
	e.t.Helper()
	status, header := resp.StatusCode, resp.Header
	fail := func(format string, args ...any) {
		e.t.Helper()
		e.t.Errorf("OpenAPI: %s %s answered %d: %s", req.Method, req.URL.Path, status, fmt.Sprintf(format, args...))
	}
	headers := orderedmap.New[string, *v3.Header]()
	for _, name := range []string{"X-Request-Id", "Cache-Control"} {
		headers.Set(name, c.model.Components.Headers.GetOrZero(name))
	}
	if _, errs := responses.ValidateResponseHeaders(req, resp, headers, "", fmt.Sprint(status)); len(errs) > 0 {
		fail("headers unlike the document:%s", describe(errs))
	}
	if rl := header.Get("RateLimit-Limit"); rl != "" {
		fail("RateLimit-Limit %q before authentication", rl)
	}
	if ct := header.Get("Content-Type"); ct != "application/json" {
		fail("Content-Type %q", ct)
	}
	if req.Method != http.MethodHead || len(body) > 0 {
		if _, errs := c.schemas.ValidateSchemaBytes(c.model.Components.Schemas.GetOrZero("Error").Schema(), body); len(errs) > 0 {
			fail("body unlike the Error schema:%s\nbody: %.600s", describe(errs), body)
		}
	}
	methods := documentedMethods(c, req.URL.Path)
	switch status {
	case http.StatusNotFound:
		if code := bodyErrorCode(body); code != codeNotFound && len(body) > 0 {
			fail("code %q, want %s", code, codeNotFound)
		}
		if len(methods) > 0 && !uncleanPath(req.URL.Path) {
			fail("the document gives this path %s", strings.Join(methods, ", "))
		}
	case http.StatusMethodNotAllowed:
		if code := bodyErrorCode(body); code != codeMethodNotAllowed && len(body) > 0 {
			fail("code %q, want %s", code, codeMethodNotAllowed)
		}
		if len(methods) == 0 {
			fail("the document does not have this path")
		}
		if allow, want := header.Get("Allow"), strings.Join(methods, ", "); allow != want {
			fail("Allow %q, but the document gives the path %q", allow, want)
		}
	}
}

// documentedMethods lists, sorted and upper case, the methods of every
// operation whose path template matches path: what ServeMux puts in the
// Allow header of a 405, if the document and the routes agree.
func documentedMethods(c *openAPIDoc, path string) []string {
	var methods []string
	for tmpl, item := range c.model.Paths.PathItems.FromOldest() {
		if !templateRegexp(tmpl).MatchString(path) {
			continue
		}
		for method := range item.GetOperations().KeysFromOldest() {
			if m := strings.ToUpper(method); !slices.Contains(methods, m) {
				methods = append(methods, m)
			}
		}
	}
	slices.Sort(methods)
	return methods
}

// bodyErrorCode is the error.code of an error body, "" for any other body.
func bodyErrorCode(body []byte) string {
	var b struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &b)
	return b.Error.Code
}

// findOperation is the document's operation for the request's method and
// path, or nil. It picks as ServeMux does: among the templates that match
// the path and have the method, the one with the fewest parameters, so
// DELETE /webhooks/deliveries is operation 16 with endpointId
// "deliveries", as the server routes it.
func findOperation(c *openAPIDoc, req *http.Request) (*v3.PathItem, *v3.Operation, string) {
	var (
		best     *v3.PathItem
		bestOp   *v3.Operation
		bestTmpl string
	)
	for tmpl, item := range c.model.Paths.PathItems.FromOldest() {
		if !templateRegexp(tmpl).MatchString(req.URL.Path) {
			continue
		}
		op := item.GetOperations().GetOrZero(strings.ToLower(req.Method))
		if op == nil {
			continue
		}
		if best == nil || strings.Count(tmpl, "{") < strings.Count(bestTmpl, "{") {
			best, bestOp, bestTmpl = item, op, tmpl
		}
	}
	return best, bestOp, bestTmpl
}

// templateRegexp matches the paths of an OpenAPI path template: a
// {parameter} is one non-empty segment.
func templateRegexp(tmpl string) *regexp.Regexp {
	parts := strings.Split(tmpl, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			parts[i] = "[^/]+"
		} else {
			parts[i] = regexp.QuoteMeta(p)
		}
	}
	return regexp.MustCompile("^" + strings.Join(parts, "/") + "$")
}

func describe(errs []*liberrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  - %s: %s", e.Message, e.Reason)
		for _, se := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n      %s (at %s, schema %s)", se.Reason, se.FieldPath, se.KeywordLocation)
		}
	}
	return b.String()
}

// TestOpenAPIDocumentValid checks that the document is valid OpenAPI 3.1.
func TestOpenAPIDocumentValid(t *testing.T) {
	c := openAPI(t)
	if ok, errs := c.validator.ValidateDocument(); !ok {
		t.Fatalf("the OpenAPI document is not valid OpenAPI 3.1:%s", describe(errs))
	}
	if v := c.model.Version; v != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", v)
	}
	var raw map[string]any
	if err := json.Unmarshal(apidoc.Load().JSON, &raw); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
}

// TestOpenAPICoversRoutes checks that every route of routes.go has its
// operation in the document with the same number and scope, and that every
// operation of the document is routed. A GET route also answers HEAD
// (ServeMux does so, and says so in Allow), so the document has a HEAD
// operation beside every GET, with the same number and scope.
func TestOpenAPICoversRoutes(t *testing.T) {
	c := openAPI(t)
	e := newEnv(t)
	type opKey struct{ method, path string }
	documented := map[opKey]*v3.Operation{}
	for tmpl, item := range c.model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			documented[opKey{strings.ToUpper(method), tmpl}] = op
		}
	}
	// answered is the methods a route pattern answers.
	answered := func(pattern string) (methods []string, path string) {
		method, path, _ := strings.Cut(pattern, " ")
		if method == http.MethodGet {
			return []string{http.MethodGet, http.MethodHead}, path
		}
		return []string{method}, path
	}
	routed := map[opKey]bool{}
	for i, rt := range e.srv.routeTable() {
		methods, path := answered(rt.pattern)
		for _, method := range methods {
			k := opKey{method, path}
			routed[k] = true
			op := documented[k]
			if op == nil {
				t.Errorf("route %d (%s) answers %s, which has no operation in the OpenAPI document", i+1, rt.pattern, method)
				continue
			}
			if n := extensionInt(t, op, "x-locrisk-operation"); n != i+1 {
				t.Errorf("%s %s: x-locrisk-operation = %d, want %d (its row in routes.go)", method, path, n, i+1)
			}
			if scope := extensionString(t, op, "x-locrisk-scope"); scope != rt.access.scope {
				t.Errorf("%s %s: x-locrisk-scope = %q, want %q", method, path, scope, rt.access.scope)
			}
			if !strings.Contains(op.Description, "`"+rt.access.scope+"`") {
				t.Errorf("%s %s: description does not name the scope %s", method, path, rt.access.scope)
			}
			if len(op.Security) == 0 {
				t.Errorf("%s %s: no security requirement", method, path)
			}
		}
	}
	for _, rt := range e.srv.openRoutes() {
		methods, path := answered(rt.pattern)
		for _, method := range methods {
			k := opKey{method, path}
			routed[k] = true
			op := documented[k]
			if op == nil {
				t.Errorf("open route %s answers %s, which has no operation in the OpenAPI document", rt.pattern, method)
				continue
			}
			if op.Security == nil || len(op.Security) != 0 {
				t.Errorf("open route %s %s: the document must say security: [] (no key)", method, path)
			}
		}
	}
	for k := range documented {
		if !routed[k] {
			t.Errorf("the document has %s %s, which no route serves", k.method, k.path)
		}
	}
}

func extensionInt(t *testing.T, op *v3.Operation, name string) int {
	t.Helper()
	var n int
	if node := op.Extensions.GetOrZero(name); node == nil || node.Decode(&n) != nil {
		return -1
	}
	return n
}

func extensionString(t *testing.T, op *v3.Operation, name string) string {
	t.Helper()
	var s string
	if node := op.Extensions.GetOrZero(name); node == nil || node.Decode(&s) != nil {
		return ""
	}
	return s
}

// TestOpenAPIServed checks GET /api/v1/openapi.json: no key needed, the
// embedded document byte for byte, a strong ETag that answers 304, and no
// RateLimit headers, as no account is charged.
func TestOpenAPIServed(t *testing.T) {
	e := newEnv(t)
	rec := e.do("GET", "/api/v1/openapi.json", "", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d, body %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if !bytes.Equal(rec.Body.Bytes(), apidoc.Load().JSON) {
		t.Error("body is not the embedded document")
	}
	etag := rec.Header().Get("ETag")
	if etag != apidoc.Load().ETag || !strings.HasPrefix(etag, `"`) {
		t.Errorf("ETag = %q, want %q", etag, apidoc.Load().ETag)
	}
	if rl := rec.Header().Get("RateLimit-Limit"); rl != "" {
		t.Errorf("RateLimit-Limit = %q on an unauthenticated answer", rl)
	}
	for _, tc := range []struct {
		inm  string
		want int
	}{
		{etag, http.StatusNotModified},
		{"W/" + etag, http.StatusNotModified},
		{`"other"`, http.StatusOK},
	} {
		rec := e.do("GET", "/api/v1/openapi.json", "", "", withHeader("If-None-Match", tc.inm))
		if rec.Code != tc.want {
			t.Errorf("If-None-Match %s: status %d, want %d", tc.inm, rec.Code, tc.want)
		}
		if tc.want == http.StatusNotModified && rec.Body.Len() != 0 {
			t.Errorf("304 with a body")
		}
	}
	// A key is not needed, and a bad one is not looked at.
	if rec := e.do("GET", "/api/v1/openapi.json", "lrk_nonsense", ""); rec.Code != http.StatusOK {
		t.Errorf("with a bad key: status %d", rec.Code)
	}
	wantError(t, e.do("POST", "/api/v1/openapi.json", "", ""), http.StatusMethodNotAllowed, codeMethodNotAllowed)
}

// TestOpenAPICheckCatchesDrift checks that the validation of recorded
// responses fails on a response unlike the document: a renamed field, a
// missing header, an undeclared status.
func TestOpenAPICheckCatchesDrift(t *testing.T) {
	job := `{"jobId":"job_7Hs2Kq9XmR4tB1vNz8LpW3cY","status":"queued","statusUrl":"/api/v1/location-risk/report-jobs/job_7Hs2Kq9XmR4tB1vNz8LpW3cY","pollAfterSeconds":1,"latitude":1,"longitude":-1,"batchId":null,"attempts":0,"createdUtc":"2026-11-22T10:00:02Z","updatedUtc":"2026-11-22T10:00:02Z"}`
	good := func() http.Header {
		return http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req_7Hs2Kq9XmR4tB1vNz8LpW3cY"}, "Cache-Control": {"no-store"},
			"Ratelimit-Limit": {"600"}, "Ratelimit-Remaining": {"599"}, "Ratelimit-Reset": {"50"}}
	}
	for _, tc := range []struct {
		name   string
		status int
		header func() http.Header
		body   string
		fails  bool
	}{
		{"as documented", 200, good, job, false},
		{"renamed field", 200, good, strings.Replace(job, `"attempts"`, `"attempt"`, 1), true},
		{"extra field", 200, good, strings.Replace(job, `{`, `{"x":1,`, 1), true},
		{"state field in the wrong state", 200, good, strings.Replace(job, `"attempts"`, `"completedUtc":"2026-11-22T10:00:02Z","attempts"`, 1), true},
		{"time not in UTC form", 200, good, strings.Replace(job, `10:00:02Z"`, `10:00:02+00:00"`, 1), true},
		{"missing RateLimit header", 200, func() http.Header { h := good(); h.Del("RateLimit-Reset"); return h }, job, true},
		{"undeclared status", 418, good, job, true},
		{"wrong error code for the status", 404, good, `{"error":{"code":"batch_not_found","message":"m","requestId":"req_7Hs2Kq9XmR4tB1vNz8LpW3cY"}}`, true},
		{"documented error", 404, good, `{"error":{"code":"report_job_not_found","message":"m","requestId":"req_7Hs2Kq9XmR4tB1vNz8LpW3cY"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingTB{TB: t}
			e := &env{t: rec}
			req := httptest.NewRequest("GET", "/api/v1/location-risk/report-jobs/job_7Hs2Kq9XmR4tB1vNz8LpW3cY", nil)
			e.validateResponse(req, tc.status, tc.header(), []byte(tc.body))
			if rec.failed != tc.fails {
				t.Errorf("validation failed = %v, want %v; %s", rec.failed, tc.fails, rec.msgs)
			}
		})
	}
}

// recordingTB records failures instead of failing the test.
type recordingTB struct {
	testing.TB
	failed bool
	msgs   []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.failed = true
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

// validateEvent fails the test when a webhook delivery (its headers and
// body) is unlike the event of that type in the document's webhooks.
func validateEvent(t testing.TB, header http.Header, body []byte) {
	t.Helper()
	c := openAPI(t)
	typ := header.Get("Service-Event")
	item := c.model.Webhooks.GetOrZero(typ)
	if item == nil || item.Post == nil {
		t.Errorf("OpenAPI: delivery of event %q, which the document's webhooks do not have", typ)
		return
	}
	for _, p := range item.Post.Parameters {
		v := header.Get(p.Name)
		if v == "" {
			if p.Required != nil && *p.Required {
				t.Errorf("OpenAPI: %s delivery lacks the %s header", typ, p.Name)
			}
			continue
		}
		quoted, _ := json.Marshal(v)
		if ok, errs := c.schemas.ValidateSchemaBytes(p.Schema.Schema(), quoted); !ok {
			t.Errorf("OpenAPI: %s delivery: header %s = %q:%s", typ, p.Name, v, describe(errs))
		}
	}
	media := item.Post.RequestBody.Content.GetOrZero("application/json")
	if ok, errs := c.schemas.ValidateSchemaBytes(media.Schema.Schema(), body); !ok {
		t.Errorf("OpenAPI: %s delivery body unlike the document:%s\nbody: %.600s", typ, describe(errs), body)
	}
}

// TestOpenAPIErrorCodes checks that every code of codeStatus appears among
// the error codes the document lists, under a response of the code's status,
// and that the document lists no code the server does not have (besides
// those of operations not routed yet).
func TestOpenAPIErrorCodes(t *testing.T) {
	var doc any
	if err := json.Unmarshal(apidoc.Load().JSON, &doc); err != nil {
		t.Fatal(err)
	}
	// listed[code] holds the statuses of the responses that list it.
	listed := map[string]map[string]bool{}
	var walk func(v any, status string)
	walk = func(v any, status string) {
		switch v := v.(type) {
		case map[string]any:
			if e, ok := v["error"].(map[string]any); ok {
				props, _ := e["properties"].(map[string]any)
				if code, ok := props["code"].(map[string]any); ok {
					enum, _ := code["enum"].([]any)
					for _, c := range enum {
						if listed[c.(string)] == nil {
							listed[c.(string)] = map[string]bool{}
						}
						listed[c.(string)][status] = true
					}
				}
			}
			for k, child := range v {
				if len(k) == 3 && k[0] >= '1' && k[0] <= '5' {
					walk(child, k)
				} else {
					walk(child, status)
				}
			}
		case []any:
			for _, child := range v {
				walk(child, status)
			}
		}
	}
	walk(doc, "")
	// Shared responses sit under components.responses by name; their
	// status is where operations refer to them, so map them by name.
	shared := map[string]string{"Unauthorized": "401", "Forbidden": "403", "TooManyRequests": "429", "TooManyRequestsOrQuota": "429",
		"HeadersTooLarge": "431", "InternalError": "500", "Unavailable": "503"}
	responses := doc.(map[string]any)["components"].(map[string]any)["responses"].(map[string]any)
	for name, status := range shared {
		r, ok := responses[name]
		if !ok {
			t.Errorf("components.responses.%s is missing", name)
			continue
		}
		walk(r, status)
	}
	// Codes a batch item carries (docs/api.md, Batches) but no response
	// answers at the top level: the item error's description names them.
	itemOnly := []string{codeInvalidExternalID}
	itemDoc := fmt.Sprint(doc.(map[string]any)["components"].(map[string]any)["schemas"].(map[string]any)["BatchItemError"])
	for _, code := range itemOnly {
		if !strings.Contains(itemDoc, code) {
			t.Errorf("item error code %s is not named in the BatchItemError schema", code)
		}
	}
	// A 405 answers a method the path has no operation for, which OpenAPI
	// gives no place: info.description states it.
	unattached := []string{codeMethodNotAllowed}
	info := fmt.Sprint(doc.(map[string]any)["info"].(map[string]any)["description"])
	for _, code := range unattached {
		if !strings.Contains(info, fmt.Sprintf("%d %s", codeStatus[code], code)) {
			t.Errorf("info.description does not state %d %s", codeStatus[code], code)
		}
		if listed[code] != nil {
			t.Errorf("the document lists %s under a response, yet it is in unattached", code)
		}
	}
	for code, status := range codeStatus {
		if slices.Contains(itemOnly, code) || slices.Contains(unattached, code) {
			continue
		}
		if !listed[code][fmt.Sprint(status)] {
			t.Errorf("error code %s (%d) is not listed under any %d response of the document", code, status, status)
		}
	}
	for code := range listed {
		if _, ok := codeStatus[code]; !ok {
			t.Errorf("the document lists error code %s, which codeStatus does not have", code)
		}
	}
}

// TestOpenAPIRoutingAnswers asks the server, for every path of the
// document, what the document says of the requests no operation takes
// there: each method the path lacks is 405 with an Allow header naming the
// path's methods in the document (HEAD included, as ServeMux adds it to
// every GET), and each path parameter left empty, "." or ".." (in clear or
// percent-encoded) is 404 not_found, which the operations with that
// parameter must list. Every answer is validated against the document by
// the env, so a path whose Allow disagrees with the document fails here.
func TestOpenAPIRoutingAnswers(t *testing.T) {
	c := openAPI(t)
	e := newEnv(t)
	key := e.allScopesKey(e.account(100, 1000))
	param := regexp.MustCompile(`\{[^}]+\}`)
	for tmpl, item := range c.model.Paths.PathItems.FromOldest() {
		path := param.ReplaceAllString(tmpl, "p1")
		var have []string
		for method := range item.GetOperations().KeysFromOldest() {
			have = append(have, strings.ToUpper(method))
		}
		// A method another template of the same path has is routed there
		// (DELETE /webhooks/deliveries is operation 16).
		taken := documentedMethods(c, path)
		for _, method := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
			if slices.Contains(taken, method) {
				continue
			}
			rec := e.do(method, path, key, "")
			if rec.Code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: status %d, want 405", method, path, rec.Code)
			}
		}
		if !param.MatchString(tmpl) {
			continue
		}
		for _, value := range []string{"", ".", "..", "%2E", "%2E%2E"} {
			path := param.ReplaceAllString(tmpl, value)
			for _, method := range have {
				rec := e.do(method, path, key, "")
				if rec.Code != http.StatusNotFound || (method != "HEAD" && bodyErrorCode(rec.Body.Bytes()) != codeNotFound) {
					t.Errorf("%s %s: status %d %s, want 404 not_found", method, path, rec.Code, rec.Body)
				}
			}
		}
	}
}
