package ids

import (
	"strings"
	"testing"
)

func TestNewFormAndUniqueness(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 2000; i++ {
		id := New(Job)
		if !strings.HasPrefix(id, Job) || len(id) != len(Job)+24 {
			t.Fatalf("bad id %q", id)
		}
		if !HasPrefix(id, Job) {
			t.Fatalf("HasPrefix(%q) = false", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
	if s := NewSecret(KeySecret); len(s) != len(KeySecret)+40 {
		t.Fatalf("secret length %d", len(s))
	}
}

func TestHasPrefixRejects(t *testing.T) {
	for _, id := range []string{"", "job_", "bat_ABCDEFGHIJKLMNOPQRSTUVWX", "job_short", "job_ABCDEFGHIJKLMNOPQRST-UVW", "job_ABCDEFGHIJKLMNOPQRST/UVW"} {
		if HasPrefix(id, Job) {
			t.Errorf("HasPrefix(%q) = true", id)
		}
	}
}

func TestReportIDLowercaseUUID(t *testing.T) {
	id := NewReportID()
	if len(id) != 36 || strings.ToLower(id) != id || id[14] != '4' {
		t.Fatalf("bad report id %q", id)
	}
}
