package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestRequestCountsAdd(t *testing.T) {
	c := RequestCounts{Total: 1, Succeeded: 1, Latency: []int64{1, 0}}
	c.Add(RequestCounts{Total: 3, ClientErrors: 2, ServerErrors: 1, RateLimited: 1, Latency: []int64{0, 2, 5}})
	c.Add(RequestCounts{Total: 1, Succeeded: 1})
	want := RequestCounts{Total: 5, Succeeded: 2, ClientErrors: 2, ServerErrors: 1, RateLimited: 1, Latency: []int64{1, 2, 5}}
	if fmt.Sprint(c) != fmt.Sprint(want) {
		t.Errorf("Add = %+v, want %+v", c, want)
	}
}

func TestRequestStatsMergeAndRange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stats.db")
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.CreateAccount(ctx, "a", 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateAccount(ctx, "b", 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) } // t0 is on the hour

	err = s.AddRequestStats(ctx, []HourStats{
		{AccountID: a.ID, Hour: h(0).Add(17 * time.Minute), RequestCounts: RequestCounts{Total: 3, Succeeded: 2, ClientErrors: 1, Latency: []int64{2, 1}}},
		{AccountID: a.ID, Hour: h(1), RequestCounts: RequestCounts{Total: 1, ServerErrors: 1, Latency: []int64{0, 0, 1}}},
		{AccountID: b.ID, Hour: h(0), RequestCounts: RequestCounts{Total: 7, Succeeded: 7, Latency: []int64{7}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A second flush into an existing hour merges counters and histogram.
	err = s.AddRequestStats(ctx, []HourStats{
		{AccountID: a.ID, Hour: h(0), RequestCounts: RequestCounts{Total: 2, ClientErrors: 2, RateLimited: 1, Latency: []int64{0, 1, 0, 1}}},
		{AccountID: a.ID, Hour: h(-2), RequestCounts: RequestCounts{Total: 1, Succeeded: 1, Latency: []int64{1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddRequestStats(ctx, nil); err != nil {
		t.Errorf("empty add: %v", err)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM request_stats`); n != 4 {
		t.Errorf("%d rows, want 4 (one per account and hour)", n)
	}

	check := func(s *Store) {
		t.Helper()
		tests := []struct {
			acct     string
			from, to time.Time
			want     RequestCounts
		}{
			{a.ID, h(0), h(1), RequestCounts{Total: 5, Succeeded: 2, ClientErrors: 3, RateLimited: 1, Latency: []int64{2, 2, 0, 1}}},
			{a.ID, h(0), h(2), RequestCounts{Total: 6, Succeeded: 2, ClientErrors: 3, ServerErrors: 1, RateLimited: 1, Latency: []int64{2, 2, 1, 1}}},
			{a.ID, h(-2), h(2), RequestCounts{Total: 7, Succeeded: 3, ClientErrors: 3, ServerErrors: 1, RateLimited: 1, Latency: []int64{3, 2, 1, 1}}},
			{a.ID, h(-1), h(0), RequestCounts{}},
			{b.ID, h(-5), h(5), RequestCounts{Total: 7, Succeeded: 7, Latency: []int64{7}}},
		}
		for i, tc := range tests {
			got, err := s.RequestStats(ctx, tc.acct, tc.from, tc.to)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("case %d: RequestStats = %+v, want %+v", i, got, tc.want)
			}
		}
	}
	check(s)

	// Survives closing and reopening the file.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check(s)

	// A failing batch (unknown account: foreign key) adds nothing at all.
	err = s.AddRequestStats(ctx, []HourStats{
		{AccountID: a.ID, Hour: h(0), RequestCounts: RequestCounts{Total: 100, Latency: []int64{100}}},
		{AccountID: "acct_nope", Hour: h(0), RequestCounts: RequestCounts{Total: 1}},
	})
	if err == nil {
		t.Fatal("stats for an unknown account were accepted")
	}
	check(s)
}

func TestRequestStatsConcurrentAdds(t *testing.T) {
	s := newStore(t, Options{})
	a := newAccount(t, s, 1)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if err := s.AddRequestStats(ctx, []HourStats{{AccountID: a.ID, Hour: t0, RequestCounts: RequestCounts{Total: 1, Succeeded: 1, Latency: []int64{0, 1}}}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := s.RequestStats(ctx, a.ID, t0, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if want := (RequestCounts{Total: 20, Succeeded: 20, Latency: []int64{0, 20}}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after 20 concurrent adds: %+v, want %+v", got, want)
	}
}
