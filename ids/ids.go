// Package ids makes the prefixed random identifiers of docs/api.md
// (Identifiers): a prefix such as "job_" followed by 24 base62 characters
// (about 142 random bits, from crypto/rand), and the report UUIDs.
package ids

import (
	"crypto/rand"
	"strings"

	"github.com/google/uuid"
)

// Prefixes of every kind of identifier.
const (
	Job             = "job_"
	Batch           = "bat_"
	WebhookEndpoint = "we_"
	Delivery        = "wd_"
	Event           = "evt_"
	Request         = "req_"
	Account         = "acct_"
	Key             = "key_"
	KeySecret       = "lrk_"
	SigningSecret   = "whsec_"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randomLen is the length of the random part of identifiers; 24 base62
// characters carry log2(62)*24 = 142.9 bits.
const randomLen = 24

// New returns prefix followed by 24 random base62 characters.
func New(prefix string) string { return prefix + random(randomLen) }

// NewSecret returns prefix followed by 40 random base62 characters (238
// bits), for API key secrets and webhook signing secrets.
func NewSecret(prefix string) string { return prefix + random(40) }

// NewReportID returns a random (version 4) UUID in lowercase.
func NewReportID() string { return uuid.NewString() }

// random draws n base62 characters without modulo bias by rejecting bytes
// >= 248 (the largest multiple of 62 below 256).
func random(n int) string {
	var b strings.Builder
	b.Grow(n)
	buf := make([]byte, n+n/4+8)
	for b.Len() < n {
		if _, err := rand.Read(buf); err != nil {
			panic("ids: crypto/rand failed: " + err.Error())
		}
		for _, c := range buf {
			if c < 248 && b.Len() < n {
				b.WriteByte(base62[c%62])
			}
		}
	}
	return b.String()
}

// HasPrefix reports whether id has the given prefix and a well-formed random
// part, so handlers can reject obviously foreign ids cheaply.
func HasPrefix(id, prefix string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || len(rest) < 20 || len(rest) > 64 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if strings.IndexByte(base62, rest[i]) < 0 {
			return false
		}
	}
	return true
}
