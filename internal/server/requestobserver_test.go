package server

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// observed is one request as a RequestObserver heard of it.
type observed struct {
	route, method string
	status        int
}

// recordingRequests is a RequestObserver that keeps what it hears.
type recordingRequests struct {
	mu   sync.Mutex
	seen []observed
}

func (r *recordingRequests) ObserveRequest(route, method string, status int, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d <= 0 {
		status = -1 // a duration must be measured; make the test fail
	}
	r.seen = append(r.seen, observed{route, method, status})
}

// TestRequestObserver: every request is reported once, under the path
// pattern of the operation that took it (never the raw path), or "" when
// none did.
func TestRequestObserver(t *testing.T) {
	obs := &recordingRequests{}
	e := newEnvWith(t, Config{Requests: obs})
	key := e.allScopesKey(e.account(100, 600))
	e.createJob(key, 41.88, -87.63)
	e.do("GET", jobsPath+"/job_doesnotexist", key, "")
	e.do("GET", jobsPath, "", "")
	e.do("GET", "/api/v1/no/such/path", key, "")
	e.do("PATCH", jobsPath, key, "")
	want := []observed{
		{"/api/v1/location-risk/report-jobs", "POST", http.StatusAccepted},
		{"/api/v1/location-risk/report-jobs/{jobId}", "GET", http.StatusNotFound},
		{"/api/v1/location-risk/report-jobs", "GET", http.StatusUnauthorized},
		{"", "GET", http.StatusNotFound},
		{"", "PATCH", http.StatusMethodNotAllowed},
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if !slices.Equal(obs.seen, want) {
		t.Errorf("observed\n%v\nwant\n%v", obs.seen, want)
	}
}
