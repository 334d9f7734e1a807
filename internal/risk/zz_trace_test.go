package risk

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

func TestZZTrace(t *testing.T) {
	var mu sync.Mutex
	var tb, ts, ti int
	geo.ZZTrace = func(cell float64, blocks, starts, items int) {
		mu.Lock()
		defer mu.Unlock()
		tb += blocks; ts += starts; ti += items
		if starts+items > 100000 {
			fmt.Printf("cell %.3f blocks %d starts %d items %d (%.2f MB)\n", cell, blocks, starts, items, float64(4*(blocks+starts+items))/1e6)
		}
	}
	if _, err := Load(context.Background(), datatest.Real(t), nil, &memoryCache{}); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("TOTAL blocks %.2f MB starts %.2f MB items %.2f MB\n", float64(4*tb)/1e6, float64(4*ts)/1e6, float64(4*ti)/1e6)
}
