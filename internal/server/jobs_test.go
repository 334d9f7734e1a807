package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/view"
)

func TestCreateJobBody(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	pad := func(total int) string {
		head := `{"latitude": 40, "longitude": -100, "pad": "`
		tail := `"}`
		return head + strings.Repeat("x", total-len(head)-len(tail)) + tail
	}
	tests := []struct {
		name   string
		body   string
		status int
		code   string
	}{
		{"valid", `{"latitude": 40.7128, "longitude": -74.006}`, 202, ""},
		{"integers", `{"latitude": 40, "longitude": -74}`, 202, ""},
		{"exponent", `{"latitude": 4.07e1, "longitude": -7.4E1}`, 202, ""},
		{"unknown fields ignored", `{"latitude": 40, "longitude": -74, "note": "x", "nested": {"a": [1]}}`, 202, ""},
		{"whitespace around", " \n\t{\"latitude\": 40, \"longitude\": -74}\n ", 202, ""},
		{"body of exactly 1 MiB", pad(1 << 20), 202, ""},
		{"body over 1 MiB", pad(1<<20 + 1), 413, "payload_too_large"},
		{"empty body", ``, 400, "invalid_request"},
		{"array", `[{"latitude": 40, "longitude": -74}]`, 400, "invalid_request"},
		{"string", `"40,-74"`, 400, "invalid_request"},
		{"null", `null`, 400, "invalid_request"},
		{"number", `40`, 400, "invalid_request"},
		{"truncated", `{"latitude": 40, "longitude": -74`, 400, "invalid_request"},
		{"trailing data", `{"latitude": 40, "longitude": -74} {}`, 400, "invalid_request"},
		{"not json", `latitude=40&longitude=-74`, 400, "invalid_request"},
		{"invalid UTF-8 in a string", "{\"latitude\": 40, \"longitude\": -74, \"note\": \"caf\xe9\"}", 400, "invalid_request"},
		{"invalid UTF-8 in a key", "{\"latitude\": 40, \"longitude\": -74, \"\xff\": 1}", 400, "invalid_request"},
		{"surrogate half in UTF-8", "{\"latitude\": 40, \"longitude\": -74, \"note\": \"\xed\xa0\x80\"}", 400, "invalid_request"},
		{"valid UTF-8 and escapes", "{\"latitude\": 40, \"longitude\": -74, \"note\": \"café \\u00e9 \\ud83d\\ude00\"}", 202, ""},
		{"latitude missing", `{"longitude": -74}`, 400, "invalid_latitude"},
		{"latitude string", `{"latitude": "40", "longitude": -74}`, 400, "invalid_latitude"},
		{"latitude null", `{"latitude": null, "longitude": -74}`, 400, "invalid_latitude"},
		{"latitude bool", `{"latitude": true, "longitude": -74}`, 400, "invalid_latitude"},
		{"latitude object", `{"latitude": {"v": 40}, "longitude": -74}`, 400, "invalid_latitude"},
		{"latitude array", `{"latitude": [40], "longitude": -74}`, 400, "invalid_latitude"},
		{"latitude above 90", `{"latitude": 90.000001, "longitude": -74}`, 400, "invalid_latitude"},
		{"latitude below -90", `{"latitude": -91, "longitude": -74}`, 400, "invalid_latitude"},
		{"latitude overflows", `{"latitude": 1e400, "longitude": -74}`, 400, "invalid_latitude"},
		{"Latitude wrong case", `{"Latitude": 40, "longitude": -74}`, 400, "invalid_latitude"},
		{"both bad: latitude first", `{"latitude": 100, "longitude": 200}`, 400, "invalid_latitude"},
		{"longitude missing", `{"latitude": 40}`, 400, "invalid_longitude"},
		{"longitude string", `{"latitude": 40, "longitude": "-74"}`, 400, "invalid_longitude"},
		{"longitude above 180", `{"latitude": 40, "longitude": 180.5}`, 400, "invalid_longitude"},
		{"longitude below -180", `{"latitude": 40, "longitude": -180.0001}`, 400, "invalid_longitude"},
		{"range edges are valid input (then coverage)", `{"latitude": 90, "longitude": -180}`, 422, "unsupported_location"},
		{"other range edges", `{"latitude": -90, "longitude": 180}`, 422, "unsupported_location"},
		{"outside coverage", `{"latitude": -33.87, "longitude": 151.21}`, 422, "unsupported_location"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", jobsPath, key, tc.body)
			if tc.code != "" {
				wantError(t, rec, tc.status, tc.code)
				return
			}
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d; %s", rec.Code, tc.status, rec.Body)
			}
		})
	}
}

// TestJSONContentType: every operation that reads a JSON body (1, 7, 15,
// and 19 when it has a body) takes a body declared as application/json or
// application/...+json, with any parameters and in any case, or declared
// not at all; any other Content-Type is 415 unsupported_media_type, whose
// message repeats what was sent and says what to send (docs/api.md,
// Errors). Op 19's empty body needs no Content-Type.
func TestJSONContentType(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true})
	key := e.allScopesKey(e.account(1000, 100000))
	rec := e.do("POST", webhooksPath, key, `{"name": "ct", "url": "http://127.0.0.1:9/h", "events": ["report.job.completed"]}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", rec.Code, rec.Body)
	}
	endpoint := decode[view.CreatedWebhookEndpoint](t, rec).Endpoint.ID
	ops := []struct {
		name, path, body string
		status           int // of a body declared as JSON
	}{
		{"report job", jobsPath, `{"latitude": 40.7, "longitude": -74}`, 202},
		{"batch", batchesPath, batchBody(t, "ct", validItems(1)...), 202},
		{"webhook endpoint", webhooksPath, `{"name": "n", "url": "http://127.0.0.1:9/h", "events": ["report.job.failed"]}`, 201},
		{"test event", "/api/v1/webhooks/" + endpoint + "/test", `{}`, 202},
	}
	const absent = "<absent>"
	tests := []struct {
		contentType string
		ok          bool
		message     string // substring of a 415's message
	}{
		{absent, true, ""},
		{"", true, ""},
		{"application/json", true, ""},
		{"application/json; charset=utf-8", true, ""},
		{"Application/JSON; Charset=UTF-8", true, ""},
		{"application/json;charset", true, ""}, // a broken parameter: still JSON
		{"application/merge-patch+json", true, ""},
		{"application/vnd.api+json; charset=utf-8", true, ""},
		{"text/plain", false, `Content-Type: "text/plain"`},
		{"text/plain; charset=utf-8", false, `"text/plain; charset=utf-8"`},
		{"application/x-www-form-urlencoded", false, "add -H 'Content-Type: application/json'"},
		{"multipart/form-data; boundary=x", false, `"multipart/form-data; boundary=x"`},
		{"text/json", false, "send"},
		{"application/jsonp", false, "send"},
		{"application/+json", false, "send"},
		{"json", false, `"json"`},
		{strings.Repeat("x", 300), false, strings.Repeat("x", 100) + `..."`},
	}
	for _, op := range ops {
		for _, tc := range tests {
			t.Run(op.name+"/"+tc.contentType, func(t *testing.T) {
				rec := e.do("POST", op.path, key, op.body, func(r *http.Request) {
					if tc.contentType == absent {
						r.Header.Del("Content-Type")
					} else {
						r.Header.Set("Content-Type", tc.contentType)
					}
				})
				if tc.ok {
					if rec.Code != op.status {
						t.Fatalf("status %d, want %d; %s", rec.Code, op.status, rec.Body)
					}
					return
				}
				wantError(t, rec, http.StatusUnsupportedMediaType, "unsupported_media_type")
				msg := errorMessage(t, rec.Body.Bytes())[1]
				if !strings.Contains(msg, tc.message) || !strings.Contains(msg, "send a JSON object with Content-Type: application/json") {
					t.Errorf("message %s, want it to name what was sent (%q) and to send Content-Type: application/json", msg, tc.message)
				}
			})
		}
	}
	// 415 comes before the body is read: a declared length over 1 MiB is
	// not 413, and the body's faults are not looked at.
	textPlain := func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }
	rec = e.do("POST", jobsPath, key, `not json`, textPlain, func(r *http.Request) { r.ContentLength = 2 << 20 })
	wantError(t, rec, http.StatusUnsupportedMediaType, "unsupported_media_type")
	// A Content-Type given twice must say JSON both times.
	rec = e.do("POST", jobsPath, key, `{"latitude": 40.7, "longitude": -74}`, withHeader("Content-Type", "text/plain"))
	wantError(t, rec, http.StatusUnsupportedMediaType, "unsupported_media_type")
	// Op 19 without a body takes any Content-Type: there is nothing to read.
	rec = e.do("POST", "/api/v1/webhooks/"+endpoint+"/test", key, "", withHeader("Content-Type", "application/x-www-form-urlencoded"))
	if rec.Code != http.StatusAccepted {
		t.Errorf("empty test event body with a form Content-Type: %d %s", rec.Code, rec.Body)
	}
	// Operations without a body do not look at it.
	for _, path := range []string{jobsPath, batchesPath, webhooksPath} {
		if rec := e.do("GET", path, key, "", withHeader("Content-Type", "text/plain")); rec.Code != http.StatusOK {
			t.Errorf("GET %s with Content-Type text/plain: %d %s", path, rec.Code, rec.Body)
		}
	}
}

func TestCreateJobResponse(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 1000)
	key := e.allScopesKey(acct)
	rec := e.do("POST", jobsPath, key, `{"latitude": 40.7128, "longitude": -74.006}`)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	v := decode[view.Job](t, rec)
	if !ids.HasPrefix(v.JobID, ids.Job) {
		t.Errorf("jobId %q", v.JobID)
	}
	if loc := rec.Header().Get("Location"); loc != "/api/v1/location-risk/report-jobs/"+v.JobID {
		t.Errorf("Location = %q", loc)
	}
	if v.StatusURL != rec.Header().Get("Location") {
		t.Errorf("statusUrl %q != Location", v.StatusURL)
	}
	if v.Status != "queued" || v.PollAfterSeconds < 1 || v.Latitude != 40.7128 || v.Longitude != -74.006 || v.Attempts != 0 {
		t.Errorf("job = %+v", v)
	}
	if v.CreatedUTC != "2026-11-22T12:00:10Z" || v.UpdatedUTC != v.CreatedUTC {
		t.Errorf("times = %s, %s", v.CreatedUTC, v.UpdatedUTC)
	}
	if n := e.notified.Load(); n != 1 {
		t.Errorf("notify called %d times, want 1", n)
	}
	// The job is retrievable at its Location.
	got := e.do("GET", rec.Header().Get("Location"), key, "")
	if got.Code != 200 || decode[view.Job](t, got).JobID != v.JobID {
		t.Errorf("GET Location: %d %s", got.Code, got.Body)
	}
}

// TestJobShapes checks the exact fields of a job in each state.
func TestJobShapes(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 1000))
	queued := e.createJob(key, 40, -100)
	processing := e.createJob(key, 41, -100)
	completed := e.createJob(key, 42, -100)
	failed := e.createJob(key, 43, -100)
	e.claim(processing.JobID)
	e.clock.Advance(3 * time.Second)
	reportID := e.complete(completed.JobID)
	e.fail(failed.JobID, false)

	base := []string{"attempts", "batchId", "createdUtc", "jobId", "latitude", "longitude", "pollAfterSeconds", "status", "statusUrl", "updatedUtc"}
	tests := []struct {
		id     string
		status string
		extra  []string
		poll   float64
	}{
		{queued.JobID, "queued", nil, 1},
		{processing.JobID, "processing", nil, 1},
		{completed.JobID, "completed", []string{"completedUtc", "result"}, 0},
		{failed.JobID, "failed", []string{"completedUtc", "error"}, 0},
	}
	timeRE := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	for _, tc := range tests {
		t.Run(tc.status, func(t *testing.T) {
			rec := e.do("GET", jobsPath+"/"+tc.id, key, "")
			if rec.Code != 200 {
				t.Fatalf("status %d", rec.Code)
			}
			m := decode[map[string]any](t, rec)
			want := slices.Sorted(slices.Values(append(slices.Clone(base), tc.extra...)))
			if got := keysOf(m); !slices.Equal(got, want) {
				t.Errorf("keys = %v, want %v", got, want)
			}
			if m["status"] != tc.status || m["pollAfterSeconds"] != tc.poll || m["batchId"] != nil {
				t.Errorf("status %v poll %v batchId %v", m["status"], m["pollAfterSeconds"], m["batchId"])
			}
			for _, f := range []string{"createdUtc", "updatedUtc", "completedUtc"} {
				if v, ok := m[f]; ok && !timeRE.MatchString(v.(string)) {
					t.Errorf("%s = %v, not RFC 3339 UTC seconds", f, v)
				}
			}
		})
	}
	c := decode[view.Job](t, e.do("GET", jobsPath+"/"+completed.JobID, key, ""))
	wantResult := view.JobResult{ReportID: reportID, ReportURL: "/api/v1/location-risk/reports/" + reportID, PDFURL: "/api/v1/location-risk/reports/" + reportID + "/pdf"}
	if c.Result == nil || *c.Result != wantResult {
		t.Errorf("result = %+v, want %+v", c.Result, wantResult)
	}
	if c.CompletedUTC == nil || *c.CompletedUTC != "2026-11-22T12:00:13Z" || c.Attempts != 1 {
		t.Errorf("completed job = %+v", c)
	}
	f := decode[view.Job](t, e.do("GET", jobsPath+"/"+failed.JobID, key, ""))
	if f.Error == nil || *f.Error != (view.JobError{Code: "report_generation_failed", Message: "the engine failed", Transient: false}) {
		t.Errorf("error = %+v", f.Error)
	}
}

func TestIdempotencyKeyHeader(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	body := `{"latitude": 40, "longitude": -100}`
	tests := []struct {
		name   string
		values []string
		ok     bool
	}{
		{"absent", nil, true},
		{"one character", []string{"a"}, true},
		{"255 characters", []string{strings.Repeat("k", 255)}, true},
		{"all printable ASCII", []string{" !\"#$%&'()*+,-./0123456789:;<=>?@AZ[\\]^_`az{|}~x"}, true},
		{"empty", []string{""}, false},
		{"256 characters", []string{strings.Repeat("k", 256)}, false},
		{"DEL character", []string{"abc\x7f"}, false},
		{"tab", []string{"a\tb"}, false},
		{"non-ASCII", []string{"clé"}, false},
		{"two values", []string{"a", "b"}, false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts []reqOpt
			for _, v := range tc.values {
				// Make each accepted key unique so cases do not replay each other.
				if tc.ok && len(v) < 255 {
					v += fmt.Sprint(i)
				}
				opts = append(opts, withHeader("Idempotency-Key", v))
			}
			rec := e.do("POST", jobsPath, key, body, opts...)
			if tc.ok {
				if rec.Code != 202 {
					t.Fatalf("status %d; %s", rec.Code, rec.Body)
				}
				return
			}
			wantError(t, rec, 400, "invalid_idempotency_key")
		})
	}
}

func TestIdempotentReplayAndConflict(t *testing.T) {
	e := newEnv(t)
	acctA := e.account(1000, 1000)
	keyA := e.allScopesKey(acctA)
	keyA2 := e.allScopesKey(acctA)
	keyB := e.allScopesKey(e.account(1000, 1000))

	first := e.do("POST", jobsPath, keyA, `{"latitude": 10, "longitude": -100}`, withHeader("Idempotency-Key", "order-1"))
	if first.Code != 202 || first.Header().Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d replayed=%q", first.Code, first.Header().Get("Idempotent-Replayed"))
	}
	j1 := decode[view.Job](t, first)

	// The same payload, spelled differently, from another key of the account.
	for _, body := range []string{`{"latitude": 10, "longitude": -100}`, `{"longitude": -1e2, "latitude": 10.0, "extra": 1}`} {
		rec := e.do("POST", jobsPath, keyA2, body, withHeader("Idempotency-Key", "order-1"))
		if rec.Code != 202 {
			t.Fatalf("replay: status %d %s", rec.Code, rec.Body)
		}
		if got := decode[view.Job](t, rec).JobID; got != j1.JobID {
			t.Errorf("replay returned job %s, want %s", got, j1.JobID)
		}
		if rec.Header().Get("Location") != j1.StatusURL || rec.Header().Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay headers: Location %q, Idempotent-Replayed %q", rec.Header().Get("Location"), rec.Header().Get("Idempotent-Replayed"))
		}
	}
	if n := e.notified.Load(); n != 1 {
		t.Errorf("notify called %d times, want 1 (replays queue nothing)", n)
	}
	wantError(t, e.do("POST", jobsPath, keyA, `{"latitude": 10.5, "longitude": -100}`, withHeader("Idempotency-Key", "order-1")), 409, "idempotency_conflict")
	// Keys are per account: B's order-1 is a new job.
	jB := e.createJob(keyB, 10, -100, withHeader("Idempotency-Key", "order-1"))
	if jB.JobID == j1.JobID {
		t.Errorf("another account's idempotency key replayed A's job")
	}
	// After 24 hours the key is forgotten.
	e.clock.Advance(24*time.Hour + time.Second)
	if j := e.createJob(keyA, 10.5, -100, withHeader("Idempotency-Key", "order-1")); j.JobID == j1.JobID {
		t.Errorf("a day-old key still replayed")
	}
	list := decode[view.JobList](t, e.do("GET", jobsPath, keyA, ""))
	if len(list.Jobs) != 2 {
		t.Errorf("account A has %d jobs, want 2", len(list.Jobs))
	}
}

func TestIdempotencyUnderConcurrency(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 1000))
	const n = 20
	var wg sync.WaitGroup
	recs := make([]*view.Job, n)
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := e.do("POST", jobsPath, key, `{"latitude": 35, "longitude": -97}`, withHeader("Idempotency-Key", "same"))
			codes[i] = rec.Code
			var v view.Job
			if json.Unmarshal(rec.Body.Bytes(), &v) == nil {
				recs[i] = &v
			}
		}()
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 202 || recs[i] == nil || recs[i].JobID != recs[0].JobID {
			t.Fatalf("request %d: status %d job %+v, want 202 and job %s", i, codes[i], recs[i], recs[0].JobID)
		}
	}
	list := decode[view.JobList](t, e.do("GET", jobsPath, key, ""))
	if len(list.Jobs) != 1 {
		t.Errorf("%d jobs created, want 1", len(list.Jobs))
	}
	if got := e.notified.Load(); got != 1 {
		t.Errorf("notify called %d times, want 1", got)
	}
}

func TestQuota(t *testing.T) {
	e := newEnv(t)
	e.clock.Set(time.Date(2026, 11, 30, 23, 59, 30, 0, time.UTC))
	key := e.allScopesKey(e.account(2, 1000))
	e.createJob(key, 40, -100, withHeader("Idempotency-Key", "a"))
	second := e.createJob(key, 41, -100)
	rec := e.do("POST", jobsPath, key, `{"latitude": 42, "longitude": -100}`)
	wantError(t, rec, 429, "quota_exceeded")
	if ra := rec.Header().Get("Retry-After"); ra != "30" {
		t.Errorf("Retry-After = %q, want 30 (seconds to 1 December)", ra)
	}
	// A replay uses no quota.
	if rec := e.do("POST", jobsPath, key, `{"latitude": 40, "longitude": -100}`, withHeader("Idempotency-Key", "a")); rec.Code != 202 {
		t.Errorf("replay over quota: status %d", rec.Code)
	}
	// Nor does a retry.
	e.fail(second.JobID, true)
	if rec := e.do("POST", jobsPath+"/"+second.JobID+"/retry", key, ""); rec.Code != 202 {
		t.Errorf("retry over quota: status %d %s", rec.Code, rec.Body)
	}
	// A new month, a new quota.
	e.clock.Set(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	e.createJob(key, 42, -100)
}

// TestConcurrentCreatesKeepQuotaAndIdempotency: sharing commits among
// concurrent requests must not weaken the quota or the idempotency keys.
// Both are checked through the handler, with the requests committed in
// shared groups (docs/operations.md, The database file). 50 concurrent
// creations against a remaining quota of 20 give exactly 20 jobs and 30
// quota_exceeded answers; 20 concurrent creations with one Idempotency-Key
// give one job, created once and replayed 19 times.
func TestConcurrentCreatesKeepQuotaAndIdempotency(t *testing.T) {
	// Room for all 50 at once: the per-account share of the request
	// slots (inflight.go) would turn some away before the store.
	e := newEnvWith(t, Config{MaxInFlight: 1024})
	acct := e.account(25, 100000)
	key := e.allScopesKey(acct)
	for range 5 {
		e.createJob(key, 40.7, -74)
	}
	post := func(idem string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", jobsPath, strings.NewReader(`{"latitude": 40.7, "longitude": -74}`))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		if idem != "" {
			r.Header.Set("Idempotency-Key", idem)
		}
		rec := httptest.NewRecorder()
		e.checkedLater(e.h).ServeHTTP(rec, r)
		return rec
	}

	var mu sync.Mutex
	codes := map[string]int{}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			rec := post("")
			code := fmt.Sprint(rec.Code)
			if rec.Code != http.StatusAccepted {
				var body struct{ Error struct{ Code string } }
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
					t.Error(err)
				}
				code += " " + body.Error.Code
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes["202"] != 20 || codes["429 quota_exceeded"] != 30 || len(codes) != 2 {
		t.Errorf("50 concurrent creations against 20 remaining: %v; want 20 x 202 and 30 x 429 quota_exceeded", codes)
	}
	if n := len(storedJobs(t, e.st, acct.ID, "")); n != 25 {
		t.Errorf("%d jobs stored, want 25", n)
	}

	other := e.account(100, 100000)
	key = e.allScopesKey(other)
	ids := map[string]int{}
	fresh := 0
	for range 20 {
		wg.Go(func() {
			rec := post("one-key")
			if rec.Code != http.StatusAccepted {
				t.Errorf("creation with the key: %d %s", rec.Code, rec.Body)
				return
			}
			j := decode[view.Job](t, rec)
			mu.Lock()
			defer mu.Unlock()
			ids[j.JobID]++
			if rec.Header().Get("Idempotent-Replayed") != "true" {
				fresh++
			}
		})
	}
	wg.Wait()
	if len(ids) != 1 || fresh != 1 {
		t.Errorf("20 concurrent creations with one key: job ids %v, %d not replayed; want one job, created once", ids, fresh)
	}
	if n := len(storedJobs(t, e.st, other.ID, "")); n != 1 {
		t.Errorf("%d jobs stored under the key, want 1", n)
	}
}
