package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/jobs"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/geo"
	"github.com/locrisk/locrisk/internal/secretbox"
	"github.com/locrisk/locrisk/internal/sqlite"
	"github.com/locrisk/locrisk/internal/view"
)

// t0 is ten seconds into a UTC minute, so a fresh rate-limit window has 50
// seconds left.
var t0 = time.Date(2026, 11, 22, 12, 0, 10, 0, time.UTC)

// fakeClock is a settable clock shared by the server and the store.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Coordinates the fake locator treats specially.
const (
	latLocatorFails = 12.5 // Locate returns a non-coverage error
	latPanics       = 13.5 // Locate panics
)

var errLocatorBroken = errors.New("coverage layer unavailable")

// fakeLocator covers the northern-western quarter of the globe (so every
// coordinate with latitude > 0 and longitude < 0 is "in the US"), and, as
// the real coverage has Guam east of Greenwich, a box around Guam,
// except for the special latitudes above. It is a test double for
// *risk.Engine.
type fakeLocator struct{}

func (fakeLocator) Locate(lat, lon float64) (risk.Location, error) {
	switch {
	case lat == latLocatorFails:
		return risk.Location{}, errLocatorBroken
	case lat == latPanics:
		panic("fake locator: deliberate panic")
	case lat > 0 && lat < 90 && lon < 0 && lon > -180:
		return risk.Location{Latitude: lat, Longitude: lon, StateCode: "XX"}, nil
	case lat > 13.2 && lat < 13.7 && lon > 144.6 && lon < 145:
		return risk.Location{Latitude: lat, Longitude: lon, StateCode: "GU"}, nil
	}
	return risk.Location{}, risk.ErrUnsupportedLocation
}

// Outlines has no boundaries to offer; the PDF then draws its map box with
// the point only.
func (fakeLocator) Outlines(string) (state, county [][]geo.Point) { return nil, nil }

// syncBuffer collects log output from concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// env is one server over a fresh database file.
type env struct {
	t        testing.TB
	clock    *fakeClock
	st       *sqlite.Store
	path     string // the database file, for a restart on it (restartEnv)
	srv      *Server
	h        http.Handler
	logs     *syncBuffer
	notified atomic.Int64
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, Config{})
}

// newEnvWith is newEnv with cfg's fields; the logger and the clock are the
// env's.
func newEnvWith(t testing.TB, cfg Config) *env {
	t.Helper()
	return newEnvStore(t, cfg, sqlite.Options{})
}

// newEnvStore is newEnvWith over a store opened with opt; the clock and
// the signing secrets' key are the env's.
func newEnvStore(t testing.TB, cfg Config, opt sqlite.Options) *env {
	t.Helper()
	clock := &fakeClock{t: t0}
	path := filepath.Join(t.TempDir(), "test.db")
	opt.Now, opt.Secrets = clock.Now, testSecrets(t)
	st, err := sqlite.OpenWith(context.Background(), path, opt)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	e := &env{t: t, clock: clock, st: st, path: path, logs: &syncBuffer{}}
	logger := slog.New(slog.NewJSONHandler(e.logs, nil))
	cfg.Logger, cfg.Now = logger, clock.Now
	if cfg.Probe == nil {
		cfg.Probe = st.WithBusyWait(ReadyDBWait)
	}
	// The request paths' busy wait, as serve assembles it (cmd/locrisk).
	e.srv = New(cfg, st.WithBusyWait(DefaultDBBusyWait), fakeLocator{}, func() { e.notified.Add(1) })
	e.h = e.srv.Handler()
	return e
}

// testSecrets is a box with a fixed key, for the signing secrets.
func testSecrets(t testing.TB) *secretbox.Box {
	t.Helper()
	b, err := secretbox.New(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// account makes an account with the given monthly quota and rate limit.
func (e *env) account(quota, ratePerMinute int) locrisk.Account {
	e.t.Helper()
	a, err := e.st.CreateAccount(context.Background(), "acct", quota, ratePerMinute)
	if err != nil {
		e.t.Fatalf("create account: %v", err)
	}
	return a
}

// key makes a key for acct and returns its secret and id.
func (e *env) key(acct locrisk.Account, nk locrisk.NewKey) (secret, id string) {
	e.t.Helper()
	nk.AccountID = acct.ID
	k, secret, err := e.st.CreateKey(context.Background(), nk)
	if err != nil {
		e.t.Fatalf("create key: %v", err)
	}
	return secret, k.ID
}

// allScopesKey is a current-version key with every scope.
func (e *env) allScopesKey(acct locrisk.Account) string {
	s, _ := e.key(acct, locrisk.NewKey{Scopes: locrisk.AllScopes()})
	return s
}

// reqOpt adjusts a request before it is served.
type reqOpt func(*http.Request)

func withHeader(k, v string) reqOpt { return func(r *http.Request) { r.Header.Add(k, v) } }
func fromAddr(addr string) reqOpt   { return func(r *http.Request) { r.RemoteAddr = addr } }
func noAuth() reqOpt                { return func(r *http.Request) { r.Header.Del("Authorization") } }

// do serves one request; a non-empty key is sent as a Bearer token.
func (e *env) do(method, path, key, body string, opts ...reqOpt) *httptest.ResponseRecorder {
	e.t.Helper()
	var r *http.Request
	if body == "" {
		r = httptest.NewRequest(method, path, nil)
	} else {
		r = httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	for _, o := range opts {
		o(r)
	}
	rec := httptest.NewRecorder()
	e.checked(e.h).ServeHTTP(rec, r)
	if id := rec.Header().Get("X-Request-Id"); !ids.HasPrefix(id, ids.Request) {
		e.t.Errorf("%s %s: X-Request-Id = %q, want req_ id", method, path, id)
	}
	return rec
}

const jobsPath = "/api/v1/location-risk/report-jobs"

// createJob posts a job and insists on 202.
func (e *env) createJob(key string, lat, lon float64, opts ...reqOpt) view.Job {
	e.t.Helper()
	body, _ := json.Marshal(map[string]float64{"latitude": lat, "longitude": lon})
	rec := e.do("POST", jobsPath, key, string(body), opts...)
	if rec.Code != http.StatusAccepted {
		e.t.Fatalf("create job: status %d, body %s", rec.Code, rec.Body)
	}
	return decode[view.Job](e.t, rec)
}

// complete runs the scheduler's side for a queued job: claim it and store
// a report, returning the report id.
func (e *env) complete(jobID string) string {
	e.t.Helper()
	ctx := context.Background()
	j := e.claim(jobID)
	a := sampleAssessment(j.Latitude, j.Longitude)
	rep, err := jobs.ReportOf(&a)
	if err != nil {
		e.t.Fatal(err)
	}
	rep.DataVersion = "dv-test"
	done, err := e.st.CompleteJob(ctx, jobID, "test-worker", rep, e.clock.Now())
	if err != nil {
		e.t.Fatalf("complete job: %v", err)
	}
	return *done.ReportID
}

// fail claims a job and marks it failed.
func (e *env) fail(jobID string, transient bool) {
	e.t.Helper()
	e.claim(jobID)
	if _, err := e.st.FailJob(context.Background(), jobID, "test-worker", "report_generation_failed", "the engine failed", transient, e.clock.Now()); err != nil {
		e.t.Fatalf("fail job: %v", err)
	}
}

// claim claims queued jobs until it gets jobID, then puts the others back.
func (e *env) claim(jobID string) locrisk.Job {
	e.t.Helper()
	ctx := context.Background()
	var others []string
	defer func() {
		for _, id := range others {
			if err := e.st.ReleaseJob(ctx, id, "test-worker", e.clock.Now()); err != nil {
				e.t.Fatalf("release %s: %v", id, err)
			}
		}
	}()
	for {
		j, ok, err := e.st.ClaimJob(ctx, "test-worker", time.Hour, e.clock.Now())
		if err != nil || !ok {
			e.t.Fatalf("claim job %s: ok=%v err=%v", jobID, ok, err)
		}
		if j.ID == jobID {
			return j
		}
		others = append(others, j.ID)
	}
}

func intp(v int) *int { return &v }

// contractModules are the six module keys docs/api.md (Reports) fixes, in
// report order: the keys of summary.moduleScores and report.modules and the
// module columns of results.csv.
var contractModules = [6]string{"hydrology", "severeWeather", "wildfire", "earthquake", "landslide", "environmentalExposure"}

// sampleAssessment is a plausible engine output, with the links empty as the
// engine leaves them: every module key present, environmentalExposure
// without data.
func sampleAssessment(lat, lon float64) risk.Assessment {
	lvl := "high"
	scores := [6]*int{intp(20), intp(30), intp(40), intp(95), intp(50), nil}
	a := risk.Assessment{
		Location:    risk.Location{Latitude: lat, Longitude: lon, StateCode: "CA", StateName: "California", CountyFIPS: "06075", CountyName: "San Francisco"},
		DataVersion: "dv-test",
		Summary: risk.Summary{
			OverallScore: 64, RiskLevel: "high", Confidence: risk.Confidence{Level: "medium", Score: 0.6},
			TopRisks:        []risk.TopRisk{{Module: "earthquake", Score: 95, RiskLevel: "very_high", Reason: "strong shaking"}},
			Recommendations: []risk.Recommendation{{Module: "earthquake", Priority: "high", Text: "retrofit"}},
			ReviewFlags:     []risk.ReviewFlag{{Code: "module_no_data", Message: "environmentalExposure has no data"}},
		},
		Report: risk.Full{
			Sources:     []risk.SourceRef{{ID: "usgs_nshm", Name: "NSHM"}},
			Methodology: risk.Methodology{Version: "test-1"},
		},
	}
	for i, k := range contractModules {
		a.Summary.ModuleScores.Set(k, scores[i])
		var perils []risk.Peril
		if spec, ok := risk.ModuleByKey(k); ok {
			for _, p := range spec.Perils {
				perils = append(perils, risk.Peril{Peril: p.Key, Title: p.Title, Score: scores[i], Resolution: "county"})
			}
		}
		a.Summary.Perils.Set(k, perils)
		// The other modules are left without data, as the engine reports
		// them then: basis no_data, low confidence (docs/api.md, Reports).
		mr := risk.ModuleReport{Basis: "no_data", Confidence: risk.Confidence{Level: "low"}}
		if k == "earthquake" {
			mr = risk.ModuleReport{Score: intp(95), RiskLevel: &lvl, Basis: "hazard_data", Confidence: risk.Confidence{Level: "medium", Score: 0.6}, Perils: perils}
		}
		a.Report.Modules.Set(k, mr)
	}
	return a
}

// decode parses a JSON response body.
func decode[T any](t testing.TB, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %T: %v; body %s", v, err, rec.Body)
	}
	return v
}

// keysOf returns the sorted keys of a JSON object.
func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// wantError checks status, code and the exact error shape, including that
// error.requestId equals the X-Request-Id header.
func wantError(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if rec.Code != status {
		t.Errorf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
		return
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var body map[string]map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("error body is not {error:{...}}: %v; %s", err, rec.Body)
	}
	if len(body) != 1 || body["error"] == nil {
		t.Fatalf("error body has top-level keys other than error: %s", rec.Body)
	}
	e := body["error"]
	if got := keysOf(e); !slices.Equal(got, []string{"code", "message", "requestId"}) {
		t.Errorf("error keys = %v, want code, message, requestId", got)
	}
	if e["code"] != code {
		t.Errorf("error.code = %v, want %s; body %s", e["code"], code, rec.Body)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Errorf("error.message is empty")
	}
	if e["requestId"] != rec.Header().Get("X-Request-Id") {
		t.Errorf("error.requestId = %v, X-Request-Id = %q", e["requestId"], rec.Header().Get("X-Request-Id"))
	}
}

func mustPrefixes(t *testing.T, s string) []netip.Prefix {
	t.Helper()
	ps, err := locrisk.ParseCIDRs(s)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// walkPages reads a list operation page by page (docs/api.md, the job
// list's limit and cursor): GET path?limit=limit, then with each page's
// nextCursor, until a page has none. Every page must answer 200 and the
// walk must end within maxPages. It returns the pages in order.
func walkPages[P any](t *testing.T, e *env, key, path string, limit, maxPages int, next func(P) *string) []P {
	t.Helper()
	var pages []P
	cursor := ""
	for {
		if len(pages) == maxPages {
			t.Fatalf("%s: paging does not end within %d pages", path, maxPages)
		}
		q := fmt.Sprintf("%s?limit=%d", path, limit)
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		rec := e.do("GET", q, key, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("page %d: status %d %s", len(pages), rec.Code, rec.Body)
		}
		page := decode[P](t, rec)
		pages = append(pages, page)
		c := next(page)
		if c == nil {
			return pages
		}
		cursor = *c
	}
}

// Reading back what requests stored. The server's tests check stored
// state only through the domain's operations (package locrisk, service.go)
// or the API itself, never through the database's schema: the server
// depends on those interfaces alone (docs/architecture.md), so its tests
// hold for any store that implements them.

// storedJobs returns every job of the account, newest first, only those
// of status unless it is "", paging ListJobs to the end as a client pages
// GET /location-risk/report-jobs.
func storedJobs(tb testing.TB, st locrisk.Jobs, accountID, status string) []locrisk.Job {
	tb.Helper()
	var all []locrisk.Job
	cursor := ""
	for {
		page, next, err := st.ListJobs(context.Background(), accountID, status, 1000, cursor)
		if err != nil {
			tb.Fatalf("list jobs of %s: %v", accountID, err)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		cursor = next
	}
}

// storedBatches returns every batch of the account, newest first, paging
// ListBatches to the end.
func storedBatches(tb testing.TB, st locrisk.Batches, accountID string) []locrisk.Batch {
	tb.Helper()
	var all []locrisk.Batch
	cursor := ""
	for {
		page, next, err := st.ListBatches(context.Background(), accountID, 1000, cursor)
		if err != nil {
			tb.Fatalf("list batches of %s: %v", accountID, err)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		cursor = next
	}
}

// storedItems returns the items of the account's batch, in input order.
func storedItems(tb testing.TB, st locrisk.Batches, accountID, batchID string) []locrisk.BatchItem {
	tb.Helper()
	var items []locrisk.BatchItem
	err := st.BatchItems(context.Background(), accountID, batchID, func(it locrisk.BatchItem) error {
		items = append(items, it)
		return nil
	})
	if err != nil {
		tb.Fatalf("items of batch %s: %v", batchID, err)
	}
	return items
}

// storedReports checks that every completed job among jobs has exactly
// one report of its own: a report id, which no other of the jobs shares,
// naming a report GetReport finds for that job and account. It returns
// the number of reports, one per completed job. A second report row for
// one job cannot be seen through the operations; the store rules it out
// (its schema keeps one report per job, internal/sqlite/schema.sql), and
// the engine's call count, where a test has one, shows a report made
// twice.
func storedReports(tb testing.TB, st locrisk.Jobs, jobs []locrisk.Job) int {
	tb.Helper()
	owner := map[string]string{}
	for _, j := range jobs {
		if j.Status != locrisk.StatusCompleted {
			if j.ReportID != nil {
				tb.Errorf("job %s is %s with report %s", j.ID, j.Status, *j.ReportID)
			}
			continue
		}
		if j.ReportID == nil {
			tb.Errorf("completed job %s has no report", j.ID)
			continue
		}
		if other, dup := owner[*j.ReportID]; dup {
			tb.Errorf("jobs %s and %s share the report %s", other, j.ID, *j.ReportID)
		}
		owner[*j.ReportID] = j.ID
		r, err := st.GetReport(context.Background(), j.AccountID, *j.ReportID)
		if err != nil || r.JobID != j.ID {
			tb.Errorf("report %s of job %s: job %q, %v", *j.ReportID, j.ID, r.JobID, err)
		}
	}
	return len(owner)
}

// accountIDs returns the ids of every account in e's store, so that a
// test can count what all of them stored.
func (e *env) accountIDs() []string {
	e.t.Helper()
	accts, err := e.st.ListAccounts(context.Background())
	if err != nil {
		e.t.Fatalf("list accounts: %v", err)
	}
	ids := make([]string, len(accts))
	for i, a := range accts {
		ids[i] = a.ID
	}
	return ids
}

// everyJob returns the jobs of every account.
func (e *env) everyJob() []locrisk.Job {
	e.t.Helper()
	var all []locrisk.Job
	for _, id := range e.accountIDs() {
		all = append(all, storedJobs(e.t, e.st, id, "")...)
	}
	return all
}

// everyBatch returns the batches of every account.
func (e *env) everyBatch() []locrisk.Batch {
	e.t.Helper()
	var all []locrisk.Batch
	for _, id := range e.accountIDs() {
		all = append(all, storedBatches(e.t, e.st, id)...)
	}
	return all
}

// everyDelivery returns the webhook deliveries of every account.
func (e *env) everyDelivery() []locrisk.WebhookDelivery {
	e.t.Helper()
	const most = 1000 // ListWebhookDeliveries' largest page
	var all []locrisk.WebhookDelivery
	for _, id := range e.accountIDs() {
		ds, err := e.st.ListWebhookDeliveries(context.Background(), id, "", most)
		if err != nil {
			e.t.Fatalf("list deliveries of %s: %v", id, err)
		}
		if len(ds) == most {
			e.t.Fatalf("account %s has %d deliveries or more: too many to count in one page", id, most)
		}
		all = append(all, ds...)
	}
	return all
}

// quotaCharged is what the account's quota counter holds for the clock's
// month: the jobs charged to its quota, which the store checks a creation
// against. The counter is read the one way the operations show it: with
// the quota set to 0 for the moment, a creation is refused with a
// *QuotaError that gives it (Used); the refused creation changes nothing,
// and the quota is put back.
func (e *env) quotaCharged(accountID string) int {
	e.t.Helper()
	ctx := context.Background()
	a, err := e.st.GetAccount(ctx, accountID)
	if err != nil {
		e.t.Fatal(err)
	}
	zero := 0
	if _, err := e.st.UpdateAccount(ctx, accountID, locrisk.AccountUpdate{MonthlyQuota: &zero}); err != nil {
		e.t.Fatal(err)
	}
	defer func() {
		if _, err := e.st.UpdateAccount(ctx, accountID, locrisk.AccountUpdate{MonthlyQuota: &a.MonthlyQuota}); err != nil {
			e.t.Fatal(err)
		}
	}()
	_, _, err = e.st.CreateJob(ctx, locrisk.NewJob{AccountID: accountID, Latitude: 40, Longitude: -100}, e.clock.Now())
	var qe *locrisk.QuotaError
	if !errors.As(err, &qe) {
		e.t.Fatalf("creation with no quota: %v, want a *QuotaError", err)
	}
	return qe.Used
}
