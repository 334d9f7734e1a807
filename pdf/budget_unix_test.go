//go:build unix

package pdf

import (
	"slices"
	"syscall"
	"testing"
	"time"
)

func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestRenderTimeBudget holds the renderer to its budget of 30 ms at the
// median. It measures process CPU time rather than wall time so that other
// work on a shared machine does not decide the result (BenchmarkRender
// gives wall time); GC work on other threads is included, as it should be.
func TestRenderTimeBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test skipped in -short mode")
	}
	in := sampleInput()
	if _, err := Render(in); err != nil { // builds the font coverage table once
		t.Fatal(err)
	}
	times := make([]time.Duration, 21)
	for i := range times {
		start := cpuTime(t)
		if _, err := Render(in); err != nil {
			t.Fatal(err)
		}
		times[i] = cpuTime(t) - start
	}
	slices.Sort(times)
	med := times[len(times)/2]
	t.Logf("median CPU time per render: %v", med)
	if med > 30*time.Millisecond {
		t.Errorf("median render CPU time %v, budget 30ms (all: %v)", med, times)
	}
}
