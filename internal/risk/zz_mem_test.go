package risk

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data/datatest"
)

// Temporary (zz_): live heap of the loaded engine, warm.
func TestZZHeap(t *testing.T) {
	runtime.MemProfileRate = 4096
	dir := datatest.Real(t)
	cache := &memoryCache{}
	if _, err := Load(context.Background(), dir, nil, cache); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	e, err := Load(context.Background(), dir, nil, cache)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("HeapAlloc %.1f MB HeapInuse %.1f MB Sys %.1f MB rss %.1f MB\n", float64(ms.HeapAlloc)/1e6, float64(ms.HeapInuse)/1e6, float64(ms.Sys)/1e6, residentMB())
	if out := os.Getenv("ZZ_HEAP"); out != "" {
		f, _ := os.Create(out)
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
	runtime.KeepAlive(e)
}
