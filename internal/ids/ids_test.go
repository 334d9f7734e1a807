package ids

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
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
	if len(id) != 36 || strings.ToLower(id) != id || id[14] != '7' {
		t.Fatalf("bad report id %q", id)
	}
	// Later ids sort after earlier ones once the millisecond has changed.
	time.Sleep(2 * time.Millisecond)
	if next := NewReportID(); next <= id {
		t.Errorf("report id %s made after %s sorts before it", next, id)
	}
}

// TestNewLeadsWithTheTime: the first 8 characters are the creation time,
// so ids sort by it; the random part differs between ids of one instant.
func TestNewLeadsWithTheTime(t *testing.T) {
	for _, tt := range []struct {
		at   time.Time
		want string
	}{
		{time.UnixMilli(0), "00000000"},
		{time.UnixMilli(61), "0000000z"},
		{time.UnixMilli(62), "00000010"},
		{time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), "0VbqOO8G"},
	} {
		id := newAt(Job, tt.at)
		if got := id[len(Job) : len(Job)+8]; got != tt.want {
			t.Errorf("time part at %v: %q, want %q", tt.at, got, tt.want)
		}
	}
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	a, b := newAt(Job, at), newAt(Job, at.Add(time.Millisecond))
	if !(a < b) {
		t.Errorf("%s (later) sorts before %s", b, a)
	}
	if a == newAt(Job, at) {
		t.Error("two ids of one instant are equal")
	}
}

// TestSigningSecretsAreStandardWebhooksKeys: the Standard Webhooks scheme
// keys its HMAC with the base64-decoded part of the secret after "whsec_"
// (docs/webhooks.md, Standard Webhooks). Every secret NewSecret can make
// decodes: each base62 character is in the standard base64 alphabet, and 40
// characters are whole 4-character groups (no padding, no spare bits), so
// any string of them is 30 bytes of base64, at least the 24 bytes the
// specification asks of a key.
func TestSigningSecretsAreStandardWebhooksKeys(t *testing.T) {
	const b64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(base62); i++ {
		if strings.IndexByte(b64Alphabet, base62[i]) < 0 {
			t.Errorf("base62 character %q is not base64", base62[i])
		}
	}
	for i := 0; i < 1000; i++ {
		secret := NewSecret(SigningSecret)
		rest := strings.TrimPrefix(secret, SigningSecret)
		if len(rest)%4 != 0 {
			t.Fatalf("secret %q: %d characters after the prefix, not whole base64 groups", secret, len(rest))
		}
		key, err := base64.StdEncoding.Strict().DecodeString(rest)
		if err != nil || len(key) != 30 {
			t.Fatalf("secret %q decodes to %d bytes, %v; want 30", secret, len(key), err)
		}
	}
}
