package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/view"
)

const (
	usageCurrentPath = "/api/v1/usage/current"
	usageHistoryPath = "/api/v1/usage/history"
	opsPath          = "/api/v1/observability/current"
)

// getOK serves a GET that must answer 200 and decodes it.
func usageGet[T any](e *env, path, key string) T {
	e.t.Helper()
	rec := e.do("GET", path, key, "")
	if rec.Code != http.StatusOK {
		e.t.Fatalf("GET %s: status %d, body %s", path, rec.Code, rec.Body)
	}
	return decode[T](e.t, rec)
}

// TestQuotaExactUnderConcurrentCreates: 50 concurrent creates over a real
// listener against a quota of 10 give exactly 10 jobs; the other 40 are 429
// quota_exceeded with Retry-After to the end of the month.
func TestQuotaExactUnderConcurrentCreates(t *testing.T) {
	// 50 POSTs of one account at once: more than its share of requests in
	// flight (inflight.go), which this test is not about.
	e := newEnvWith(t, Config{MaxInFlight: -1}) // 2026-11-22T12:00:10Z
	acct := e.account(10, 1000)
	key := e.allScopesKey(acct)
	ts := httptest.NewServer(e.checkedLater(e.h))
	defer ts.Close()
	client := ts.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 50

	type result struct {
		status     int
		code       string
		retryAfter string
	}
	results := make([]result, 50)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range results {
		wg.Go(func() {
			<-start
			body := fmt.Sprintf(`{"latitude": 30.%02d, "longitude": -100}`, i)
			req, _ := http.NewRequest("POST", ts.URL+jobsPath, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			var eb errorBody
			_ = json.Unmarshal(b, &eb)
			results[i] = result{resp.StatusCode, eb.Error.Code, resp.Header.Get("Retry-After")}
		})
	}
	close(start)
	wg.Wait()

	// Seconds from 2026-11-22T12:00:10Z to 2026-12-01T00:00:00Z.
	wantRetry := fmt.Sprint(int64(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Sub(t0).Seconds()))
	var created, refused int
	for i, r := range results {
		switch {
		case r.status == http.StatusAccepted:
			created++
			if r.retryAfter != "" {
				t.Errorf("request %d: 202 with Retry-After", i)
			}
		case r.status == http.StatusTooManyRequests && r.code == "quota_exceeded":
			refused++
			if r.retryAfter != wantRetry {
				t.Errorf("request %d: Retry-After %q, want %s", i, r.retryAfter, wantRetry)
			}
		default:
			t.Errorf("request %d: %+v", i, r)
		}
	}
	if created != 10 || refused != 40 {
		t.Errorf("%d created, %d refused; want exactly 10 and 40; log:\n%s", created, refused, e.logs)
	}
	if n := len(storedJobs(t, e.st, acct.ID, "")); n != 10 {
		t.Errorf("%d jobs stored, want 10", n)
	}
	u := usageGet[view.UsageCurrent](e, usageCurrentPath, key)
	if q := u.Quotas[0]; q.Used != 10 || q.Remaining != 0 || q.Limit != 10 {
		t.Errorf("report_jobs quota after the race = %+v", q)
	}
}

// TestBatchQuotaAllOrNothing: a batch needs one unit per valid item; when
// fewer remain, nothing at all is created.
func TestBatchQuotaAllOrNothing(t *testing.T) {
	e := newEnv(t)
	acct := e.account(5, 1000)
	key := e.allScopesKey(acct)
	for i := range 3 {
		e.createJob(key, 40+float64(i), -100)
	}
	batch := func(valid int) string {
		var items []string
		for i := range valid {
			items = append(items, fmt.Sprintf(`{"externalId": "v%d", "latitude": 35.%d, "longitude": -90}`, i, i))
		}
		items = append(items, `{"externalId": "bad", "latitude": 95, "longitude": -90}`) // rejected: uses no quota
		return `{"name": "b", "items": [` + strings.Join(items, ",") + `]}`
	}
	rec := e.do("POST", "/api/v1/location-risk/batches", key, batch(3))
	wantError(t, rec, 429, "quota_exceeded")
	if rec.Header().Get("Retry-After") == "" {
		t.Error("batch quota 429 without Retry-After")
	}
	if n := len(storedBatches(t, e.st, acct.ID)); n != 0 {
		t.Errorf("%d batches after a refused batch, want 0", n)
	}
	if n := len(storedJobs(t, e.st, acct.ID, "")); n != 3 {
		t.Errorf("%d jobs after a refused batch, want 3", n)
	}

	// Exactly what is left fits.
	if rec := e.do("POST", "/api/v1/location-risk/batches", key, batch(2)); rec.Code != http.StatusAccepted {
		t.Fatalf("batch of 2 valid items with 2 left: status %d %s", rec.Code, rec.Body)
	}
	u := usageGet[view.UsageCurrent](e, usageCurrentPath, key)
	if q := u.Quotas[0]; q.Used != 5 || q.Remaining != 0 {
		t.Errorf("quota after the batch = %+v, want used 5 remaining 0", q)
	}
	hist := usageGet[view.UsageHistory](e, usageHistoryPath+"?days=1", key)
	if got := fmt.Sprint(hist.Items); got != "[{2026-11-22 api 3 0 0} {2026-11-22 bulk 2 0 0} {2026-11-22 manual 0 0 0}]" {
		t.Errorf("history after the batch = %s", got)
	}
}

// TestUsageCurrent checks the whole response: shape, quota numbers, job
// counts by status, and the request window including the request itself.
func TestUsageCurrent(t *testing.T) {
	e := newEnv(t)
	acct := e.account(50, 10)
	key := e.allScopesKey(acct)
	other := e.allScopesKey(e.account(50, 10))

	// Last month: not counted.
	e.clock.Set(time.Date(2026, 10, 31, 23, 59, 59, 0, time.UTC))
	e.createJob(key, 40, -100)
	e.clock.Set(t0)
	done := e.createJob(key, 41, -100)
	failed := e.createJob(key, 42, -100)
	e.createJob(key, 43, -100)
	// The previous month's job is still queued; claim it out of the way first.
	e.complete(done.JobID)
	e.fail(failed.JobID, false)
	e.createJob(other, 44, -100)
	if _, _, err := e.st.CreateJob(context.Background(), locrisk.NewJob{AccountID: acct.ID, Bucket: locrisk.BucketManual, Latitude: 45, Longitude: -100}, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute) // a fresh rate window at 12:01:10
	e.do("GET", jobsPath, key, "")
	e.do("GET", jobsPath, key, "")

	rec := e.do("GET", usageCurrentPath, key, "")
	if rec.Code != 200 {
		t.Fatalf("status %d %s", rec.Code, rec.Body)
	}
	var raw map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(raw); !slices.Equal(got, []string{"accountId", "apiReportJobs", "apiVersion", "generatedUtc", "quotas"}) {
		t.Errorf("keys = %v", got)
	}
	quotas := raw["quotas"].([]any)
	if got := keysOf(quotas[0].(map[string]any)); !slices.Equal(got, []string{"limit", "name", "periodStartUtc", "remaining", "resetsAtUtc", "used"}) {
		t.Errorf("report_jobs quota keys = %v", got)
	}
	if got := keysOf(quotas[1].(map[string]any)); !slices.Equal(got, []string{"limit", "name", "remaining", "resetsAtUtc", "used", "windowSeconds"}) {
		t.Errorf("requests_per_minute quota keys = %v", got)
	}
	if got := keysOf(raw["apiReportJobs"].(map[string]any)); !slices.Equal(got, []string{"completed", "created", "failed", "periodStartUtc", "processing", "queued"}) {
		t.Errorf("apiReportJobs keys = %v", got)
	}

	u := decode[view.UsageCurrent](t, rec)
	nov, dec := "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z"
	window := 60
	want := view.UsageCurrent{
		APIVersion: "v1", GeneratedUTC: "2026-11-22T12:01:10Z", AccountID: acct.ID,
		Quotas: []view.Quota{
			{Name: "report_jobs", Limit: 50, Used: 4, Remaining: 46, PeriodStartUTC: &nov, ResetsAtUTC: dec},
			{Name: "requests_per_minute", Limit: 10, Used: 3, Remaining: 7, WindowSeconds: &window, ResetsAtUTC: "2026-11-22T12:02:00Z"},
		},
		APIReportJobs: view.APIReportJobs{Created: 4, Queued: 2, Processing: 0, Completed: 1, Failed: 1, PeriodStartUTC: nov},
	}
	gotJSON, _ := json.Marshal(u)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("usage =\n%s\nwant\n%s", gotJSON, wantJSON)
	}
	if rec.Header().Get("RateLimit-Remaining") != "7" {
		t.Errorf("RateLimit-Remaining %q disagrees with the quota's remaining 7", rec.Header().Get("RateLimit-Remaining"))
	}

	// The next request sees itself counted; a new window starts from one.
	u = usageGet[view.UsageCurrent](e, usageCurrentPath, key)
	if q := u.Quotas[1]; q.Used != 4 || q.Remaining != 6 {
		t.Errorf("second read: %+v", q)
	}
	e.clock.Advance(50 * time.Second) // 12:02:00
	u = usageGet[view.UsageCurrent](e, usageCurrentPath, key)
	if q := u.Quotas[1]; q.Used != 1 || q.Remaining != 9 || q.ResetsAtUTC != "2026-11-22T12:03:00Z" {
		t.Errorf("new window: %+v", q)
	}
}

// TestUsageMonthRollover: the quota period is the calendar month in UTC;
// on the 1st the count starts again and the period fields move.
func TestUsageMonthRollover(t *testing.T) {
	e := newEnv(t)
	acct := e.account(2, 1000)
	key := e.allScopesKey(acct)
	quota := func() view.Quota {
		t.Helper()
		return usageGet[view.UsageCurrent](e, usageCurrentPath, key).Quotas[0]
	}
	steps := []struct {
		at                           time.Time
		creates                      int // jobs to create successfully first
		used, remaining              int
		periodStart, resetsAt, retry string
	}{
		{time.Date(2026, 11, 30, 23, 59, 58, 0, time.UTC), 2, 2, 0, "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z", "2"},
		{time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 0, 0, 2, "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z", ""},
		{time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC), 2, 2, 0, "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z", "3600"},
		{time.Date(2027, 1, 1, 0, 0, 0, 1e6, time.UTC), 1, 1, 1, "2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z", ""},
	}
	for i, s := range steps {
		e.clock.Set(s.at)
		for j := range s.creates {
			e.createJob(key, 40+float64(j), -100)
		}
		q := quota()
		if q.Used != s.used || q.Remaining != s.remaining || *q.PeriodStartUTC != s.periodStart || q.ResetsAtUTC != s.resetsAt {
			t.Errorf("step %d at %s: %+v (period %s)", i, s.at, q, *q.PeriodStartUTC)
		}
		if s.retry != "" {
			rec := e.do("POST", jobsPath, key, `{"latitude": 40, "longitude": -100}`)
			wantError(t, rec, 429, "quota_exceeded")
			if got := rec.Header().Get("Retry-After"); got != s.retry {
				t.Errorf("step %d: Retry-After %q, want %s", i, got, s.retry)
			}
		}
	}
}

func TestUsageHistory(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 1000)
	key := e.allScopesKey(acct)
	other := e.allScopesKey(e.account(1000, 1000))
	at := func(day, hour int) time.Time { return time.Date(2026, 11, day, hour, 0, 0, 0, time.UTC) }
	manual := func(tm time.Time) {
		if _, _, err := e.st.CreateJob(context.Background(), locrisk.NewJob{AccountID: acct.ID, Bucket: locrisk.BucketManual, Latitude: 40, Longitude: -100}, tm); err != nil {
			t.Fatal(err)
		}
	}

	e.clock.Set(at(19, 10)) // outside a 3-day range ending on the 22nd
	old := e.createJob(key, 40, -100)
	e.clock.Set(at(20, 9))
	a1 := e.createJob(key, 41, -100)
	a2 := e.createJob(key, 42, -100)
	e.createJob(other, 43, -100)
	e.complete(old.JobID) // created on the 19th, completed on the 20th
	e.complete(a1.JobID)
	e.clock.Set(at(22, 8))
	e.fail(a2.JobID, false) // created on the 20th, failed on the 22nd
	manual(at(22, 9))
	manual(at(22, 10))
	e.clock.Set(at(22, 12).Add(34 * time.Minute))

	type item = view.UsageHistoryItem
	z := func(date, bucket string) item { return item{DateUTC: date, Bucket: bucket} }
	all := []item{
		{DateUTC: "2026-11-20", Bucket: "api", ReportJobs: 2, Completed: 2}, z("2026-11-20", "bulk"), z("2026-11-20", "manual"),
		z("2026-11-21", "api"), z("2026-11-21", "bulk"), z("2026-11-21", "manual"),
		{DateUTC: "2026-11-22", Bucket: "api", Failed: 1}, z("2026-11-22", "bulk"), {DateUTC: "2026-11-22", Bucket: "manual", ReportJobs: 2},
	}
	tests := []struct {
		query  string
		bucket *string
		items  []item
	}{
		{"?days=3", nil, all},
		{"?days=3&bucket=api", usagePtrTo("api"), []item{all[0], all[3], all[6]}},
		{"?bucket=manual&days=3", usagePtrTo("manual"), []item{all[2], all[5], all[8]}},
		{"?days=3&bucket=bulk", usagePtrTo("bulk"), []item{all[1], all[4], all[7]}},
		{"?days=1", nil, all[6:]},
		{"?days=3&unknown=1", nil, all},
	}
	for _, tc := range tests {
		h := usageGet[view.UsageHistory](e, usageHistoryPath+tc.query, key)
		days := len(tc.items)
		if tc.bucket == nil {
			days /= 3
		}
		from := at(22, 0).AddDate(0, 0, -(days - 1)).Format(view.TimeLayout)
		if h.APIVersion != "v1" || h.FromUTC != from || h.ToUTC != "2026-11-22T12:34:00Z" || h.Days != days || h.AccountID != acct.ID {
			t.Errorf("%s: header fields %+v", tc.query, h)
		}
		if (h.Bucket == nil) != (tc.bucket == nil) || (h.Bucket != nil && *h.Bucket != *tc.bucket) {
			t.Errorf("%s: bucket %v, want %v", tc.query, h.Bucket, tc.bucket)
		}
		if !slices.Equal(h.Items, tc.items) {
			t.Errorf("%s: items =\n%v\nwant\n%v", tc.query, h.Items, tc.items)
		}
	}

	// The default is 30 days of all three buckets, zeros included, oldest
	// first.
	h := usageGet[view.UsageHistory](e, usageHistoryPath, key)
	if len(h.Items) != 90 || h.FromUTC != "2026-10-24T00:00:00Z" || h.Items[0].DateUTC != "2026-10-24" || h.Items[89].DateUTC != "2026-11-22" {
		t.Fatalf("default history: %d items from %s (%v .. %v)", len(h.Items), h.FromUTC, h.Items[0], h.Items[len(h.Items)-1])
	}
	if !slices.Equal(h.Items[81:], all) {
		t.Errorf("last 3 days of the default history = %v", h.Items[81:])
	}
	var total int
	for i, it := range h.Items {
		if it.Bucket != locrisk.Buckets()[i%3] {
			t.Errorf("item %d bucket %s out of order", i, it.Bucket)
		}
		total += it.ReportJobs
	}
	if total != 5 { // the 19th, two on the 20th, two manual on the 22nd
		t.Errorf("jobs over 30 days = %d, want 5", total)
	}
	if h := usageGet[view.UsageHistory](e, usageHistoryPath+"?days=90", key); len(h.Items) != 270 {
		t.Errorf("days=90: %d items", len(h.Items))
	}

	// The raw JSON: bucket is null when absent, items are objects with
	// exactly the fields docs/api.md (Usage history) lists.
	var raw map[string]any
	if err := json.Unmarshal(e.do("GET", usageHistoryPath+"?days=1", key, "").Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if b, ok := raw["bucket"]; !ok || b != nil {
		t.Errorf("bucket = %v (present %v), want null", b, ok)
	}
	if got := keysOf(raw["items"].([]any)[0].(map[string]any)); !slices.Equal(got, []string{"bucket", "completed", "dateUtc", "failed", "reportJobs"}) {
		t.Errorf("item keys = %v", got)
	}
}

func usagePtrTo[T any](v T) *T { return &v }

// TestUsageValidation covers every 400 of the usage history and the
// operations summary, and the valid edges.
func TestUsageValidation(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(10, 100000))
	tests := []struct {
		path string
		code string // "" = 200
	}{
		{usageHistoryPath + "?days=0", "invalid_days"},
		{usageHistoryPath + "?days=91", "invalid_days"},
		{usageHistoryPath + "?days=x", "invalid_days"},
		{usageHistoryPath + "?days=", "invalid_days"},
		{usageHistoryPath + "?days=-1", "invalid_days"},
		{usageHistoryPath + "?days=1.5", "invalid_days"},
		{usageHistoryPath + "?days=+3", "invalid_days"},
		{usageHistoryPath + "?days=%203", "invalid_days"},
		{usageHistoryPath + "?days=99999999999999999999", "invalid_days"},
		{usageHistoryPath + "?days=1", ""},
		{usageHistoryPath + "?days=90", ""},
		{usageHistoryPath + "?days=007", ""},
		{usageHistoryPath + "?bucket=", "invalid_bucket"},
		{usageHistoryPath + "?bucket=API", "invalid_bucket"},
		{usageHistoryPath + "?bucket=all", "invalid_bucket"},
		{usageHistoryPath + "?bucket=api,bulk", "invalid_bucket"},
		{usageHistoryPath + "?days=0&bucket=x", "invalid_days"},
		{usageHistoryPath + "?bucket=bulk", ""},
		{usageHistoryPath + "?days=1;x", "invalid_request"},
		{opsPath + "?hours=0", "invalid_hours"},
		{opsPath + "?hours=169", "invalid_hours"},
		{opsPath + "?hours=x", "invalid_hours"},
		{opsPath + "?hours=", "invalid_hours"},
		{opsPath + "?hours=-5", "invalid_hours"},
		{opsPath + "?hours=2.5", "invalid_hours"},
		{opsPath + "?hours=1", ""},
		{opsPath + "?hours=168", ""},
		{opsPath, ""},
		{usageCurrentPath + "?anything=1", ""},
	}
	for _, tc := range tests {
		rec := e.do("GET", tc.path, key, "")
		if tc.code == "" {
			if rec.Code != 200 {
				t.Errorf("%s: status %d, body %s", tc.path, rec.Code, rec.Body)
			}
			continue
		}
		t.Run(tc.path, func(t *testing.T) { wantError(t, rec, 400, tc.code) })
	}
}

// TestUsageLegacyScope: a scopeVersion 1 key with reports:read reads all
// three usage endpoints; the same scope on a current key does not, and
// usage:read works on both versions.
func TestUsageLegacyScope(t *testing.T) {
	e := newEnv(t)
	acct := e.account(10, 100000)
	legacyRead, _ := e.key(acct, locrisk.NewKey{Scopes: []string{"reports:read"}, ScopeVersion: 1})
	currentRead, _ := e.key(acct, locrisk.NewKey{Scopes: []string{"reports:read"}, ScopeVersion: 2})
	legacyCreate, _ := e.key(acct, locrisk.NewKey{Scopes: []string{"reports:create"}, ScopeVersion: 1})
	usage1, _ := e.key(acct, locrisk.NewKey{Scopes: []string{"usage:read"}, ScopeVersion: 1})
	usage2, _ := e.key(acct, locrisk.NewKey{Scopes: []string{"usage:read"}, ScopeVersion: 2})
	for _, path := range []string{usageCurrentPath, usageHistoryPath, opsPath} {
		for _, k := range []struct {
			name, key string
			ok        bool
		}{{"v1 reports:read", legacyRead, true}, {"v2 reports:read", currentRead, false}, {"v1 reports:create", legacyCreate, false},
			{"v1 usage:read", usage1, true}, {"v2 usage:read", usage2, true}} {
			rec := e.do("GET", path, k.key, "")
			if k.ok && rec.Code != 200 {
				t.Errorf("%s with %s: status %d, want 200", path, k.name, rec.Code)
			}
			if !k.ok {
				t.Run(path+" "+k.name, func(t *testing.T) { wantError(t, rec, 403, "insufficient_scope") })
			}
		}
	}
}
