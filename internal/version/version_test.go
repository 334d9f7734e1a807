package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	settings := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	tests := []struct {
		name   string
		linked string
		info   *debug.BuildInfo
		want   string
	}{
		{"linked wins", "1.4.0", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, "1.4.0"},
		{"linked trimmed", " 1.4.0\n", nil, "1.4.0"},
		{"linked with a space is ignored", "1.4 beta", nil, Dev},
		{"no build info", "", nil, Dev},
		{"module version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, "v0.3.0"},
		{"devel falls to the revision", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs.revision", rev)}, "0123456789ab"},
		{"dirty tree", "", &debug.BuildInfo{Settings: settings("vcs.revision", rev, "vcs.modified", "true")}, "0123456789ab-dirty"},
		{"clean tree", "", &debug.BuildInfo{Settings: settings("vcs.revision", rev, "vcs.modified", "false")}, "0123456789ab"},
		{"nothing known", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Dev},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolve(tt.linked, tt.info); got != tt.want {
				t.Errorf("resolve = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStringIsAHeaderToken(t *testing.T) {
	v := String()
	if v == "" || strings.ContainsAny(v, " \t\r\n\"") {
		t.Fatalf("String() = %q, not a header token", v)
	}
	if String() != v {
		t.Fatal("String() changed between calls")
	}
}
