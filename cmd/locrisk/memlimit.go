package main

// The Go runtime's soft memory limit (docs/operations.md, Limits and defaults).

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// defaultMemoryLimit is --memory-limit's default. A warm server holds
// about 120 MB (docs/performance.md) and a cold start peaks near 330 MB
// of live heap while it builds the reference distributions, so 512 MiB
// leaves room for requests without making the collector run constantly.
const defaultMemoryLimit = "512MiB"

// minMemoryLimit is the smallest limit --memory-limit takes: a warm
// server holds about 120 MB (docs/performance.md), so below 64 MiB the
// collector would run almost without pause and the limit is a typo (10
// for 10GiB, 1KiB for 1GiB) rather than a choice.
const minMemoryLimit = 64 << 20

// parseMemoryLimit reads --memory-limit: a whole number with one of the
// units GOMEMLIMIT takes (B, KiB, MiB, GiB or TiB), at least
// minMemoryLimit, or "off" for no limit (math.MaxInt64, what the runtime
// uses for none). A bare number is refused: the unit is easy to forget
// and a number of bytes is almost never meant.
func parseMemoryLimit(s string) (int64, error) {
	if s == "off" {
		return math.MaxInt64, nil
	}
	num, mult := s, int64(0)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	switch {
	case err == nil && n > 0 && mult == 0:
		return 0, fmt.Errorf("%q has no unit: give a size such as 512MiB or 2GiB (units B, KiB, MiB, GiB, TiB), or off", s)
	case err != nil || n <= 0 || mult == 0 || n > math.MaxInt64/mult:
		return 0, fmt.Errorf("%q is not a positive size such as 512MiB, 2GiB or off", s)
	case n*mult < minMemoryLimit:
		return 0, fmt.Errorf("%q is below the smallest limit, %s", s, formatByteSize(minMemoryLimit))
	}
	return n * mult, nil
}

// formatByteSize writes n the way parseMemoryLimit reads it, for the log.
func formatByteSize(n int64) string {
	switch {
	case n == math.MaxInt64:
		return "off"
	case n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GiB"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

// chooseMemoryLimit decides the soft memory limit: --memory-limit (or
// LOCRISK_MEMORY_LIMIT) when given; otherwise an operator's GOMEMLIMIT,
// which the runtime has already applied, so apply is false; otherwise the
// flag's default.
func chooseMemoryLimit(flagGiven bool, flagLimit int64, env env) (limit int64, apply bool, source string) {
	if _, ok := env("GOMEMLIMIT"); ok && !flagGiven {
		return 0, false, "GOMEMLIMIT"
	}
	return flagLimit, true, "--memory-limit"
}
