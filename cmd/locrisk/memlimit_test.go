package main

import (
	"math"
	"strings"
	"testing"
)

func TestParseMemoryLimit(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		mention string // in the error; "" = accepted
	}{
		{"512MiB", 512 << 20, ""},
		{"2GiB", 2 << 30, ""},
		{"1TiB", 1 << 40, ""},
		{"64MiB", 64 << 20, ""},
		{"65536KiB", 64 << 20, ""},
		{"67108864B", 64 << 20, ""},
		{"off", math.MaxInt64, ""},
		{"10", 0, "no unit"},
		{"1000000", 0, "no unit"},
		{"536870912", 0, "no unit"},
		{"1KiB", 0, "smallest"},
		{"64KiB", 0, "smallest"},
		{"100B", 0, "smallest"},
		{"63MiB", 0, "smallest"},
		{"67108863B", 0, "smallest"},
		{"0", 0, "positive"},
		{"0MiB", 0, "positive"},
		{"-1MiB", 0, "positive"},
		{"512MB", 0, "positive"},
		{"MiB", 0, "positive"},
		{"", 0, "positive"},
		{"99999999999TiB", 0, "positive"},
	}
	for _, tt := range tests {
		got, err := parseMemoryLimit(tt.in)
		switch {
		case tt.mention == "" && (err != nil || got != tt.want):
			t.Errorf("parseMemoryLimit(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		case tt.mention != "" && (err == nil || !strings.Contains(err.Error(), tt.mention)):
			t.Errorf("parseMemoryLimit(%q) = %d, %v; want an error mentioning %q", tt.in, got, err, tt.mention)
		}
	}
}

func TestFormatByteSize(t *testing.T) {
	for n, want := range map[int64]string{512 << 20: "512MiB", 2 << 30: "2GiB", math.MaxInt64: "off", 65<<20 + 1: "68157441B"} {
		if got := formatByteSize(n); got != want {
			t.Errorf("formatByteSize(%d) = %q, want %q", n, got, want)
		}
		if back, err := parseMemoryLimit(want); err != nil || back != n {
			t.Errorf("parseMemoryLimit(%q) = %d, %v; want %d", want, back, err, n)
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
