//go:build unix

package sqlite

import (
	"syscall"
	"time"
)

// userCPU is the process's user CPU time so far, for benchmarks whose wall
// time the shared machine makes noisy (BenchmarkJobWritesCounters).
func userCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano()), true
}
