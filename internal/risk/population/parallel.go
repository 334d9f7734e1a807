package population

import (
	"runtime"
	"sync"
)

// Parallel calls fn(i) for every i in [0, n) on up to eight goroutines
// and returns when all calls are done. The loaders measure something at
// each of the ~242,000 block-group centres (density, relief, shelter), and
// each measure is independent of the others. fn must be safe to call
// concurrently for different i, and write only to slots of its own i.
func Parallel(n int, fn func(i int)) {
	workers := max(1, min(runtime.GOMAXPROCS(0), 8, n))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += workers {
				fn(i)
			}
		}(w)
	}
	wg.Wait()
}
