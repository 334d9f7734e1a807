package population

import (
	"sync/atomic"
	"testing"
)

func TestParallelVisitsEveryIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		seen := make([]atomic.Int32, n)
		Parallel(n, func(i int) { seen[i].Add(1) })
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Errorf("n=%d: index %d visited %d times", n, i, c)
			}
		}
	}
}
