//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package filelock

import "os"

// Supported reports whether Acquire really excludes other processes here. On
// systems without flock(2) Acquire creates the file but excludes no one: a
// marker file would survive a crash and refuse every later start, which is
// worse than the doubled rate limit it would prevent.
const Supported = false

func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }
