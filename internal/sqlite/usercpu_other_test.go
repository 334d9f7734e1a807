//go:build !unix

package sqlite

import "time"

// userCPU is not measured here.
func userCPU() (time.Duration, bool) { return 0, false }
