package main

import (
	"math"
	"testing"
)

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"512MiB", 512 << 20, true},
		{"2GiB", 2 << 30, true},
		{"64KiB", 64 << 10, true},
		{"1000000", 1000000, true},
		{"100B", 100, true},
		{"off", math.MaxInt64, true},
		{"0", 0, false},
		{"-1MiB", 0, false},
		{"512MB", 0, false},
		{"MiB", 0, false},
		{"99999999999TiB", 0, false},
	}
	for _, tt := range tests {
		got, err := parseByteSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		if tt.ok && tt.in != "100B" && tt.in != "1000000" {
			if back := formatByteSize(got); back != tt.in && !(tt.in == "64KiB" && back == "65536B") {
				t.Errorf("formatByteSize(%d) = %q, want %q", got, back, tt.in)
			}
		}
	}
}

func TestChooseMemoryLimit(t *testing.T) {
	withGo := func(k string) (string, bool) { return "1GiB", k == "GOMEMLIMIT" }
	without := func(string) (string, bool) { return "", false }
	tests := []struct {
		name      string
		given     bool
		env       env
		wantApply bool
		wantFrom  string
	}{
		{"default", false, without, true, "--memory-limit"},
		{"flag given", true, without, true, "--memory-limit"},
		{"GOMEMLIMIT set", false, withGo, false, "GOMEMLIMIT"},
		{"flag wins over GOMEMLIMIT", true, withGo, true, "--memory-limit"},
	}
	for _, tt := range tests {
		limit, apply, from := chooseMemoryLimit(tt.given, 512<<20, tt.env)
		if apply != tt.wantApply || from != tt.wantFrom || apply && limit != 512<<20 {
			t.Errorf("%s: got %d, %v, %q; want apply %v from %q", tt.name, limit, apply, from, tt.wantApply, tt.wantFrom)
		}
	}
}
