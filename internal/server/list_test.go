package server

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/view"
)

func TestListJobsPaging(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	other := e.allScopesKey(e.account(1000, 100000))
	type made struct {
		at time.Time
		id string
	}
	var created []made
	for i := range 25 {
		created = append(created, made{e.clock.Now(), e.createJob(key, 30+float64(i)/10, -100).JobID})
		e.createJob(other, 30, -100) // interleaved jobs of another account
		if i%3 == 0 {
			// Some jobs share a creation time, so the id tie-break and a
			// cursor inside a group of equal times are exercised.
			e.clock.Advance(time.Second)
		}
	}
	// Newest first; equal times by id, descending (the store's order).
	slices.SortFunc(created, func(a, b made) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	var newestFirst []string
	for _, m := range created {
		newestFirst = append(newestFirst, m.id)
	}

	// Default page size is 20.
	first := decode[view.JobList](t, e.do("GET", jobsPath, key, ""))
	if first.Limit != 20 || len(first.Jobs) != 20 || first.NextCursor == nil {
		t.Fatalf("default page: limit %d, %d jobs, nextCursor %v", first.Limit, len(first.Jobs), first.NextCursor)
	}

	// Walk every page of 7 and compare with the creation order.
	var got []string
	pages := walkPages(t, e, key, jobsPath, 7, 11, func(p view.JobList) *string { return p.NextCursor })
	for i, page := range pages {
		if page.Limit != 7 || len(page.Jobs) > 7 {
			t.Fatalf("page %d: limit %d with %d jobs", i, page.Limit, len(page.Jobs))
		}
		for _, j := range page.Jobs {
			got = append(got, j.JobID)
		}
	}
	if last := pages[len(pages)-1]; len(last.Jobs) != 25%7 {
		t.Errorf("last page has %d jobs, want %d", len(last.Jobs), 25%7)
	}
	if !slices.Equal(got, newestFirst) {
		t.Errorf("paged listing differs from newest-first creation order:\n got %v\nwant %v", got, newestFirst)
	}

	// The last page's nextCursor is JSON null, not absent or "".
	rec := e.do("GET", jobsPath+"?limit=100", key, "")
	if m := decode[map[string]any](t, rec); m["nextCursor"] != nil || len(m["jobs"].([]any)) != 25 {
		t.Errorf("limit=100: nextCursor %v, %d jobs", m["nextCursor"], len(m["jobs"].([]any)))
	} else if _, present := m["nextCursor"]; !present {
		t.Errorf("nextCursor absent, want null")
	}
}

func TestListJobsFilterAndEmpty(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	empty := e.do("GET", jobsPath, key, "")
	if m := decode[map[string]any](t, empty); m["jobs"] == nil || len(m["jobs"].([]any)) != 0 || m["limit"] != float64(20) {
		t.Errorf("empty list = %s, want jobs [] and limit 20", empty.Body)
	}
	a := e.createJob(key, 40, -100)
	b := e.createJob(key, 41, -100)
	c := e.createJob(key, 42, -100)
	e.complete(b.JobID)
	e.fail(c.JobID, true)
	tests := []struct {
		status string
		want   []string
	}{
		{"queued", []string{a.JobID}},
		{"completed", []string{b.JobID}},
		{"failed", []string{c.JobID}},
		{"processing", nil},
	}
	for _, tc := range tests {
		page := decode[view.JobList](t, e.do("GET", jobsPath+"?status="+tc.status, key, ""))
		var got []string
		for _, j := range page.Jobs {
			if j.Status != tc.status {
				t.Errorf("status=%s listed a %s job", tc.status, j.Status)
			}
			got = append(got, j.JobID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("status=%s: %v, want %v", tc.status, got, tc.want)
		}
	}
}

// queryCase is a list's query string and the error code it must get
// ("" for 200).
type queryCase struct{ query, code string }

// pagingCases are the paging parameters every cursor-paged list shares
// (pageParams): foreignCursor is well formed but not this list's.
func pagingCases(foreignCursor string) []queryCase {
	return []queryCase{
		{"limit=1", ""},
		{"limit=100", ""},
		{"unknown=1", ""},
		{"limit=0", "invalid_limit"},
		{"limit=101", "invalid_limit"},
		{"limit=-1", "invalid_limit"},
		{"limit=%2B5", "invalid_limit"},
		{"limit=1.5", "invalid_limit"},
		{"limit=abc", "invalid_limit"},
		{"limit=", "invalid_limit"},
		{"limit=99999999999999999999", "invalid_limit"},
		{"cursor=garbage", "invalid_cursor"},
		{"cursor=", "invalid_cursor"},
		{"cursor=" + url.QueryEscape(foreignCursor), "invalid_cursor"},
		{"limit=%zz", "invalid_request"},
	}
}

// checkQueries requests path with each case's query as key and checks the
// answer: 200, or 400 with the case's code.
func checkQueries(t *testing.T, e *env, path, key string, cases []queryCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			rec := e.do("GET", path+"?"+tc.query, key, "")
			if tc.code == "" {
				if rec.Code != 200 {
					t.Fatalf("status %d %s", rec.Code, rec.Body)
				}
				return
			}
			wantError(t, rec, 400, tc.code)
		})
	}
}

func TestListJobsValidation(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	checkQueries(t, e, jobsPath, key, append(pagingCases(ids.New(ids.Job)),
		queryCase{"status=queued", ""},
		queryCase{"status=done", "invalid_status"},
		queryCase{"status=QUEUED", "invalid_status"},
		queryCase{"status=", "invalid_status"},
		queryCase{"limit=0&status=bogus", "invalid_limit"},
	))
}

func TestGetAndRetryJob(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	queued := e.createJob(key, 40, -100)
	completed := e.createJob(key, 41, -100)
	permanent := e.createJob(key, 42, -100)
	transient := e.createJob(key, 43, -100)
	e.complete(completed.JobID)
	e.fail(permanent.JobID, false)
	e.fail(transient.JobID, true)

	for _, id := range []string{ids.New(ids.Job), "job_short", "bat_" + ids.New("")[:24], "nonsense", "job_" + ids.New("")[:24] + "!"} {
		wantError(t, e.do("GET", jobsPath+"/"+url.PathEscape(id), key, ""), 404, "report_job_not_found")
		wantError(t, e.do("POST", jobsPath+"/"+url.PathEscape(id)+"/retry", key, ""), 404, "report_job_not_found")
	}
	for _, id := range []string{queued.JobID, completed.JobID, permanent.JobID} {
		wantError(t, e.do("POST", jobsPath+"/"+id+"/retry", key, ""), 409, "job_not_retryable")
	}

	before := e.notified.Load()
	e.clock.Advance(5 * time.Second)
	rec := e.do("POST", jobsPath+"/"+transient.JobID+"/retry", key, "")
	if rec.Code != 202 {
		t.Fatalf("retry: status %d %s", rec.Code, rec.Body)
	}
	v := decode[view.Job](t, rec)
	if v.JobID != transient.JobID || v.Status != "queued" || v.Error != nil || v.CompletedUTC != nil || v.PollAfterSeconds < 1 || v.Attempts != 1 {
		t.Errorf("retried job = %+v", v)
	}
	if v.UpdatedUTC != "2026-11-22T12:00:15Z" {
		t.Errorf("updatedUtc = %s", v.UpdatedUTC)
	}
	if rec.Header().Get("Location") != v.StatusURL {
		t.Errorf("Location = %q", rec.Header().Get("Location"))
	}
	if e.notified.Load() != before+1 {
		t.Errorf("retry did not notify the workers")
	}
	// Now queued: a second retry is refused.
	wantError(t, e.do("POST", jobsPath+"/"+transient.JobID+"/retry", key, ""), 409, "job_not_retryable")
}

// TestIsolation: another account's jobs and reports are 404, never 403, on
// every operation, and never listed.
func TestIsolation(t *testing.T) {
	e := newEnv(t)
	keyA := e.allScopesKey(e.account(1000, 100000))
	keyB := e.allScopesKey(e.account(1000, 100000))
	jobA := e.createJob(keyA, 40, -100)
	failedA := e.createJob(keyA, 41, -100)
	reportJobA := e.createJob(keyA, 42, -100)
	e.fail(failedA.JobID, true)
	reportA := e.complete(reportJobA.JobID)
	e.createJob(keyB, 43, -100)

	for _, id := range []string{jobA.JobID, failedA.JobID, reportJobA.JobID} {
		wantError(t, e.do("GET", jobsPath+"/"+id, keyB, ""), 404, "report_job_not_found")
		wantError(t, e.do("POST", jobsPath+"/"+id+"/retry", keyB, ""), 404, "report_job_not_found")
	}
	for _, q := range []string{"", "?detail=summary", "?detail=full"} {
		wantError(t, e.do("GET", "/api/v1/location-risk/reports/"+reportA+q, keyB, ""), 404, "report_not_found")
	}
	listB := decode[view.JobList](t, e.do("GET", jobsPath+"?limit=100", keyB, ""))
	if len(listB.Jobs) != 1 {
		t.Errorf("B lists %d jobs, want only its own 1", len(listB.Jobs))
	}
	// The failed job was not retried by B's attempt.
	if v := decode[view.Job](t, e.do("GET", jobsPath+"/"+failedA.JobID, keyA, "")); v.Status != "failed" {
		t.Errorf("A's job changed to %s after B's retry", v.Status)
	}
	if rec := e.do("GET", "/api/v1/location-risk/reports/"+reportA, keyA, ""); rec.Code != 200 {
		t.Errorf("owner reading its report: %d", rec.Code)
	}
}

// TestListWebhooksPaging: the endpoint list pages like the job list, with
// many disabled endpoints among the active ones, and the active-endpoint
// limit counts only the active ones.
func TestListWebhooksPaging(t *testing.T) {
	e := newWebhookEnv(t, whOptions{allowPrivate: true})
	key := e.allScopesKey(e.account(1000, 100000))
	other := e.allScopesKey(e.account(1000, 100000))
	type made struct {
		at time.Time
		id string
	}
	var created []made
	create := func(name string) (id, otherID string) {
		id = e.createEndpoint(key, name, "https://hooks.example.com/", "report.job.completed").Endpoint.ID
		created = append(created, made{e.clock.Now(), id})
		otherID = e.createEndpoint(other, name, "https://hooks.example.com/", "report.job.completed").Endpoint.ID
		if len(created)%3 == 0 {
			e.clock.Advance(time.Second) // some share a creation time
		}
		return id, otherID
	}
	// 60 create/delete cycles, then a full set of active endpoints.
	for i := range 60 {
		id, otherID := create(fmt.Sprint("cycled ", i))
		if rec := e.do("DELETE", webhooksPath+"/"+id, key, ""); rec.Code != 204 {
			t.Fatalf("delete: %d", rec.Code)
		}
		if rec := e.do("DELETE", webhooksPath+"/"+otherID, other, ""); rec.Code != 204 {
			t.Fatalf("delete other: %d", rec.Code)
		}
	}
	for i := range locrisk.MaxActiveEndpoints {
		create(fmt.Sprint("active ", i))
	}
	body := `{"name": "one too many", "url": "https://hooks.example.com/", "events": ["report.job.completed"]}`
	wantError(t, e.do("POST", webhooksPath, key, body), 400, "endpoint_limit_reached")

	slices.SortFunc(created, func(a, b made) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	var newestFirst []string
	for _, m := range created {
		newestFirst = append(newestFirst, m.id)
	}

	first := decode[view.WebhookEndpointList](t, e.do("GET", webhooksPath, key, ""))
	if first.Limit != 20 || len(first.Endpoints) != 20 || first.NextCursor == nil {
		t.Fatalf("default page: limit %d, %d endpoints, nextCursor %v", first.Limit, len(first.Endpoints), first.NextCursor)
	}
	var got []string
	active := 0
	for i, page := range walkPages(t, e, key, webhooksPath, 7, 21, func(p view.WebhookEndpointList) *string { return p.NextCursor }) {
		if page.Limit != 7 || len(page.Endpoints) > 7 {
			t.Fatalf("page %d: limit %d with %d endpoints", i, page.Limit, len(page.Endpoints))
		}
		for _, ep := range page.Endpoints {
			got = append(got, ep.ID)
			if ep.IsActive {
				active++
			}
		}
	}
	if !slices.Equal(got, newestFirst) {
		t.Errorf("paged listing differs from newest-first creation order:\n got %v\nwant %v", got, newestFirst)
	}
	if active != locrisk.MaxActiveEndpoints {
		t.Errorf("%d active endpoints listed, want %d", active, locrisk.MaxActiveEndpoints)
	}

	// The job list's rules for bad parameters; a job list cursor is not an
	// endpoint list cursor.
	e.createJob(key, 40, -100)
	e.createJob(key, 41, -100)
	jobCursor := decode[view.JobList](t, e.do("GET", jobsPath+"?limit=1", key, "")).NextCursor
	if jobCursor == nil {
		t.Fatal("no job cursor")
	}
	checkQueries(t, e, webhooksPath, key, pagingCases(*jobCursor))
}
