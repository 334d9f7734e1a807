// Package ids makes the identifiers of docs/api.md (Identifiers): a
// prefix such as "job_" followed by 24 base62 characters, the first 8 the
// creation time in milliseconds and the other 16 random (about 95 bits,
// from crypto/rand), and the report UUIDs (version 7: the time, a
// sub-millisecond sequence, then 62 random bits).
//
// Both lead with the time so that a new row's primary key lands at the
// end of its B-tree, beside the rows created just before it, rather than
// on a random page of an index far larger than the page cache: at
// millions of jobs the random keys made every creation read and rewrite
// pages all over the file (docs/performance.md, Job creation). The random part alone
// keeps them unguessable.
package ids

import (
	"crypto/rand"
	"strings"
	"time"

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
	Watchlist       = "wl_"
	WatchItem       = "wli_"
	RescoreRequest  = "rsr_" // an on-demand re-score, kept in its plans only
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// timeLen and randomLen are the lengths of the two parts of identifiers.
// 62^8 milliseconds reach the year 8888; 16 base62 characters carry
// log2(62)*16 = 95.3 bits.
const (
	timeLen   = 8
	randomLen = 16
)

// New returns prefix followed by the time (8 base62 characters, most
// significant first, so identifiers sort by creation to the millisecond)
// and 16 random base62 characters.
func New(prefix string) string { return newAt(prefix, time.Now()) }

// newAt is New at the time t.
func newAt(prefix string, t time.Time) string {
	var b [timeLen]byte
	ms := max(t.UnixMilli(), 0)
	for i := timeLen - 1; i >= 0; i-- {
		b[i] = base62[ms%62]
		ms /= 62
	}
	return prefix + string(b[:]) + random(randomLen)
}

// NewSecret returns prefix followed by 40 random base62 characters (238
// bits), for API key secrets and webhook signing secrets.
func NewSecret(prefix string) string { return prefix + random(40) }

// NewReportID returns a version 7 UUID (the time in milliseconds, then
// random bits) in lowercase.
func NewReportID() string {
	u, err := uuid.NewV7()
	if err != nil {
		panic("ids: crypto/rand failed: " + err.Error())
	}
	return u.String()
}

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

// HasPrefix reports whether id has the given prefix and a well-formed
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
