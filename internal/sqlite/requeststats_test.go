package sqlite

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

func TestRequestCountsAdd(t *testing.T) {
	c := locrisk.RequestCounts{Total: 1, Succeeded: 1, Latency: []int64{1, 0}}
	c.Add(locrisk.RequestCounts{Total: 3, ClientErrors: 2, ServerErrors: 1, RateLimited: 1, Latency: []int64{0, 2, 5}})
	c.Add(locrisk.RequestCounts{Total: 1, Succeeded: 1})
	want := locrisk.RequestCounts{Total: 5, Succeeded: 2, ClientErrors: 2, ServerErrors: 1, RateLimited: 1, Latency: []int64{1, 2, 5}}
	if fmt.Sprint(c) != fmt.Sprint(want) {
		t.Errorf("Add = %+v, want %+v", c, want)
	}
}

func TestRequestStatsConcurrentAdds(t *testing.T) {
	s := newStore(t, Options{})
	a := newAccount(t, s, 1)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if err := s.AddRequestStats(ctx, []locrisk.HourStats{{AccountID: a.ID, Hour: t0, RequestCounts: locrisk.RequestCounts{Total: 1, Succeeded: 1, Latency: []int64{0, 1}}}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := s.RequestStats(ctx, a.ID, t0, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if want := (locrisk.RequestCounts{Total: 20, Succeeded: 20, Latency: []int64{0, 20}}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after 20 concurrent adds: %+v, want %+v", got, want)
	}
}
