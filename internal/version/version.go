// Package version is the one source of the version locrisk reports: the
// `locrisk version` command, GET /readyz and the Server header of every
// response (docs/operations.md, Health and version).
//
// A release build sets it at link time:
//
//	go build -ldflags "-X github.com/locrisk/locrisk/internal/version.release=1.4.0" ./cmd/locrisk
//
// Without that, the build information the Go toolchain records is used: the
// module version when the binary was installed from a tagged module, else
// the VCS revision of the work tree it was built from (12 hex digits, with
// "-dirty" when there were uncommitted changes), else "dev".
package version

import (
	"runtime/debug"
	"strings"
)

// release is set by -ldflags -X at link time only; nothing assigns it at
// run time.
var release string

// Dev is the version of a binary that carries no version information.
const Dev = "dev"

// String returns the version: a short token without spaces, safe in an
// HTTP header (Server: locrisk/<version>). It reads the build information
// on each call; callers on a hot path keep the result.
func String() string {
	info, _ := debug.ReadBuildInfo()
	return resolve(release, info)
}

// resolve picks the version from the link-time value and the build
// information (nil when the binary has none).
func resolve(linked string, info *debug.BuildInfo) string {
	if v := clean(linked); v != "" {
		return v
	}
	if info == nil {
		return Dev
	}
	if v := clean(info.Main.Version); v != "" && v != "(devel)" {
		return v
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = clean(s.Value)
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return Dev
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

// clean keeps a value usable as an HTTP header token: printable ASCII
// without spaces, at most 64 bytes; anything else gives "".
func clean(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > 64 {
		return ""
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return ""
		}
	}
	return v
}
