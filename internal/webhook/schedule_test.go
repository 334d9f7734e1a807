package webhook

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseSchedule(t *testing.T) {
	tests := []struct {
		spec    string
		want    []time.Duration
		wantErr string // substring; "" = success
	}{
		{DefaultScheduleSpec, []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 8 * time.Hour, 24 * time.Hour}, ""},
		{"1s", []time.Duration{time.Second}, ""},
		{" 100ms , 1h30m ", []time.Duration{100 * time.Millisecond, 90 * time.Minute}, ""},
		{"", nil, "empty"},
		{"   ", nil, "empty"},
		{"10s,,1m", nil, "item 2 is empty"},
		{"10s,", nil, "item 2 is empty"},
		{",10s", nil, "item 1 is empty"},
		{"10s,0s", nil, `item 2 "0s" must be positive`},
		{"-5m", nil, `item 1 "-5m" must be positive`},
		{"10", nil, `item 1 "10" is not a duration`},
		{"10s,5x", nil, `item 2 "5x" is not a duration`},
		{"1d", nil, `item 1 "1d" is not a duration`},
		{"ten seconds", nil, "not a duration"},
		{strings.Repeat("1s,", 50) + "1s", nil, "at most 50"},
	}
	for _, tc := range tests {
		got, err := ParseSchedule(tc.spec)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("ParseSchedule(%q): %v", tc.spec, err)
			} else if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseSchedule(%q) = %v, want %v", tc.spec, got, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParseSchedule(%q) error = %v, want one containing %q", tc.spec, err, tc.wantErr)
		}
		if got != nil {
			t.Errorf("ParseSchedule(%q) returned %v alongside an error", tc.spec, got)
		}
	}
}

func TestDefaultSchedule(t *testing.T) {
	s := DefaultSchedule()
	if MaxAttempts(s) != 8 {
		t.Errorf("default schedule allows %d attempts, docs/api.md says 8", MaxAttempts(s))
	}
	s[0] = time.Hour
	if DefaultSchedule()[0] != 10*time.Second {
		t.Error("modifying a returned default schedule changed the next one")
	}
}

func TestNextAttempt(t *testing.T) {
	sched := []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute}
	last := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		made   int
		want   time.Time
		wantOK bool
	}{
		{0, last, true},
		{1, last.Add(10 * time.Second), true},
		{2, last.Add(time.Minute), true},
		{3, last.Add(5 * time.Minute), true},
		{4, time.Time{}, false}, // 3 delays, 4 attempts made: failed
		{5, time.Time{}, false},
	}
	for _, tc := range tests {
		got, ok := NextAttempt(sched, tc.made, last)
		if ok != tc.wantOK || !got.Equal(tc.want) {
			t.Errorf("NextAttempt(after %d) = %v, %v; want %v, %v", tc.made, got, ok, tc.want, tc.wantOK)
		}
	}
	// The whole default schedule: 8 attempts, then failed.
	def := DefaultSchedule()
	n := 1
	at := last
	for {
		next, ok := NextAttempt(def, n, at)
		if !ok {
			break
		}
		at = next
		n++
	}
	if n != 8 {
		t.Errorf("default schedule made %d attempts, want 8", n)
	}
	if want := last.Add(10*time.Second + time.Minute + 5*time.Minute + 30*time.Minute + 2*time.Hour + 8*time.Hour + 24*time.Hour); !at.Equal(want) {
		t.Errorf("last attempt at %v, want %v", at, want)
	}
}
