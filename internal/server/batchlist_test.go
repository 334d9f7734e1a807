package server

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/view"
)

// GET /location-risk/batches (operation 18): the account's batches newest
// first, each exactly as operation 8 shows it, paged like the job list.
func TestListBatches(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 100000)
	key := e.allScopesKey(acct)
	other := e.allScopesKey(e.account(1000, 100000))
	var newestFirst []string
	for range 9 {
		b := e.createBatch(key, batchBody(t, nil, validItems(2)...))
		newestFirst = append([]string{b.BatchID}, newestFirst...)
		e.createBatch(other, batchBody(t, nil, validItems(1)...))
		e.clock.Advance(time.Second)
	}
	// One batch moves on, so the list carries counts other than the
	// creation's.
	e.complete(*e.getItems(key, newestFirst[0])[0].ReportJobID)

	empty := decode[map[string]any](t, e.do("GET", batchesPath, e.allScopesKey(e.account(10, 1000)), ""))
	if bs, ok := empty["batches"].([]any); !ok || len(bs) != 0 || empty["limit"] != float64(20) || empty["nextCursor"] != nil {
		t.Errorf("empty list = %v, want batches [], limit 20, nextCursor null", empty)
	}

	var got []string
	for i, page := range walkPages(t, e, key, batchesPath, 4, 6, func(p view.BatchList) *string { return p.NextCursor }) {
		if page.Limit != 4 || len(page.Batches) > 4 {
			t.Fatalf("page %d: limit %d with %d batches", i, page.Limit, len(page.Batches))
		}
		for _, b := range page.Batches {
			if one := e.getBatch(key, b.BatchID); !reflect.DeepEqual(one, b) {
				t.Errorf("listed %+v, operation 8 shows %+v", b, one)
			}
			got = append(got, b.BatchID)
		}
	}
	if !slices.Equal(got, newestFirst) {
		t.Errorf("listed %v, want newest first %v", got, newestFirst)
	}
	// Each listed batch has the same members as operation 8's object.
	var raw struct{ Batches []map[string]json.RawMessage }
	if err := json.Unmarshal(e.do("GET", batchesPath+"?limit=1", key, "").Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	var one map[string]json.RawMessage
	if err := json.Unmarshal(e.do("GET", batchesPath+"/"+newestFirst[0], key, "").Body.Bytes(), &one); err != nil {
		t.Fatal(err)
	}
	if len(raw.Batches) != 1 || !slices.Equal(keysOfRaw(raw.Batches[0]), keysOfRaw(one)) {
		t.Errorf("listed members differ from operation 8's")
	}
}

func keysOfRaw(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The job list's parameter rules and errors, and the bulk:read scope.
func TestListBatchesValidation(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 100000)
	key := e.allScopesKey(acct)
	e.createJob(key, 40, -100)
	e.createJob(key, 41, -100)
	jobCursor := decode[view.JobList](t, e.do("GET", jobsPath+"?limit=1", key, "")).NextCursor
	if jobCursor == nil {
		t.Fatal("no job cursor")
	}
	checkQueries(t, e, batchesPath, key, pagingCases(*jobCursor))
	readOnly, _ := e.key(acct, locrisk.NewKey{Scopes: []string{locrisk.ScopeReportsRead}})
	wantError(t, e.do("GET", batchesPath, readOnly, ""), 403, "insufficient_scope")
	bulkRead, _ := e.key(acct, locrisk.NewKey{Scopes: []string{locrisk.ScopeBulkRead}})
	if rec := e.do("GET", batchesPath, bulkRead, ""); rec.Code != 200 {
		t.Errorf("bulk:read key: %d %s", rec.Code, rec.Body)
	}
}
