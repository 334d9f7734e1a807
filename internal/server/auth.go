package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// access is what an operation demands of a key.
type access struct {
	scope string
	// legacyRead also admits reports:read on keys of scopeVersion 1, which
	// predate usage:read (docs/api.md, Authentication, scopes and check order).
	legacyRead bool
}

func needs(scope string) access { return access{scope: scope} }

// usageAccess is the rule of the usage and observability endpoints.
func usageAccess() access { return access{scope: locrisk.ScopeUsageRead, legacyRead: true} }

func (a access) allows(k locrisk.APIKey) bool {
	if k.HasScope(a.scope) {
		return true
	}
	return a.legacyRead && k.ScopeVersion == locrisk.ScopeVersionLegacy && k.HasScope(locrisk.ScopeReportsRead)
}

// principal is the authenticated caller.
type principal struct {
	key     locrisk.APIKey
	account locrisk.Account
}

// handlerFunc is an operation's handler after authentication, rate limiting
// and the scope check. A returned error is written by writeError, so
// handlers only write successful responses themselves.
type handlerFunc func(w http.ResponseWriter, r *http.Request, p *principal) error

// maxSecretLen bounds what is hashed and looked up; real secrets are 44
// characters.
const maxSecretLen = 256

// errInvalidKey is the one answer for every kind of bad key, so a caller
// cannot tell a revoked key from a mistyped one.
var errInvalidKey = &Error{Code: codeInvalidAPIKey, Message: "the API key is missing, invalid, expired, revoked, of a disabled account or not allowed from this address"}

// authed wraps h with the checks every operation shares, in the order of
// docs/api.md (Authentication, scopes and check order): 401 for the key,
// 429 for the rate limit (every authenticated request counts, those refused
// with 403 too), then 403 for the scope, then, for a request with a body,
// 429 when its account holds its share of the requests in flight
// (inflight.go). The RateLimit-* headers go on every authenticated
// response. The body is read by h, after all of these, within its time
// (body.go); a large one then waits its turn to be parsed (inflight.go,
// bodyTurns).
func (s *Server) authed(a access, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := s.now()
		p, err := s.authenticate(r, now)
		if err != nil {
			if errors.Is(err, errInvalidKey) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="locrisk"`)
			}
			s.writeError(w, r, err)
			return
		}
		info := infoOf(r)
		if info != nil {
			info.accountID = p.account.ID
		}
		s.stats.noteKeyUse(p.key.ID, now)
		d := s.limiter.Allow(p.account.ID, p.account.RateLimitPerMinute, now)
		hdr := w.Header()
		hdr.Set("RateLimit-Limit", strconv.Itoa(d.Limit))
		hdr.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
		hdr.Set("RateLimit-Reset", strconv.FormatInt(ceilSeconds(d.Reset), 10))
		if !d.Allowed {
			if info != nil {
				info.rateLimited = true
			}
			s.writeError(w, r, &Error{
				Code:       codeRateLimitExceeded,
				Message:    "too many requests for this account in the current one-minute window",
				RetryAfter: d.Reset,
			})
			return
		}
		if !a.allows(p.key) {
			s.writeError(w, r, errorf(codeInsufficientScope, "this API key lacks the %s scope", a.scope))
			return
		}
		if hasBody(r) {
			release, ok := s.busy.acquireAccount(p.account.ID)
			if !ok {
				// The body is not read, so the connection is not reused:
				// net/http would otherwise wait for the rest of the body
				// before sending the answer.
				w.Header().Set("Connection", "close")
				s.writeError(w, r, accountBusyError(s.busy.perAccount))
				return
			}
			defer release()
			deadline := s.limitBodyTime(w, r)
			if info != nil {
				info.turn = &bodyTurn{turns: s.turns, deadline: deadline}
				defer info.turn.release()
			}
		}
		if err := h(w, r, p); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// authenticate finds the key of r and checks expiry, revocation, its
// account's status and the IP allowlist. A disabled account's keys get the
// answer of a revoked key (docs/api.md, Authentication, scopes and check
// order); the key cache holds accounts too, so disabling takes effect
// within its lifetime (one second) in a server that is already running. Every failure is errInvalidKey; store failures other than "no
// such key" are returned as they are (500).
func (s *Server) authenticate(r *http.Request, now time.Time) (*principal, error) {
	secret := presentedKey(r)
	if secret == "" || len(secret) > maxSecretLen || !strings.HasPrefix(secret, ids.KeySecret) {
		return nil, errInvalidKey
	}
	key, acct, found, err := s.keys.get(r.Context(), secret, now)
	if err != nil {
		return nil, err
	}
	if !found || !key.Usable(now) || acct.Disabled() {
		return nil, errInvalidKey
	}
	if len(key.AllowedCIDRs) > 0 {
		addr, ok := clientAddr(r)
		if !ok || !key.AllowsIP(addr) {
			return nil, errInvalidKey
		}
	}
	return &principal{key: key, account: acct}, nil
}

// presentedKey is the secret from "Authorization: Bearer <key>" (scheme
// case-insensitive, RFC 9110) or, failing that, from X-API-Key.
func presentedKey(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, cred, ok := strings.Cut(h, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(cred)
		}
	}
	return strings.TrimSpace(r.Header.Get("X-API-Key"))
}

// clientAddr is the address the connection comes from. Proxy headers such
// as X-Forwarded-For are deliberately ignored: anyone can send them.
// IPv4-mapped IPv6 addresses are unmapped so IPv4 allowlists match them.
func clientAddr(r *http.Request) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().WithZone("").Unmap(), true
}

// keyCache remembers key lookups, found or not, for at most ttl, so that a
// burst of requests costs one database read while a new or revoked key still
// takes effect within ttl. Entries are keyed by the SHA-256 of the secret so
// the secret itself is not kept in memory longer than the request.
type keyCache struct {
	ttl    time.Duration
	lookup func(ctx context.Context, secret string) (locrisk.APIKey, locrisk.Account, error)

	mu      sync.Mutex
	entries map[[sha256.Size]byte]keyEntry
}

type keyEntry struct {
	key     locrisk.APIKey
	account locrisk.Account
	found   bool
	fetched time.Time
}

// maxKeyCacheEntries bounds the cache against callers presenting endless
// made-up keys (misses are cached too).
const maxKeyCacheEntries = 10000

func newKeyCache(ttl time.Duration, lookup func(context.Context, string) (locrisk.APIKey, locrisk.Account, error)) *keyCache {
	return &keyCache{ttl: ttl, lookup: lookup, entries: make(map[[sha256.Size]byte]keyEntry)}
}

func (c *keyCache) fresh(e keyEntry, now time.Time) bool {
	age := now.Sub(e.fetched)
	return age >= 0 && age < c.ttl
}

func (c *keyCache) get(ctx context.Context, secret string, now time.Time) (locrisk.APIKey, locrisk.Account, bool, error) {
	h := sha256.Sum256([]byte(secret))
	if c.ttl > 0 {
		c.mu.Lock()
		e, ok := c.entries[h]
		c.mu.Unlock()
		if ok && c.fresh(e, now) {
			return e.key, e.account, e.found, nil
		}
	}
	key, acct, err := c.lookup(ctx, secret)
	found := true
	if errors.Is(err, locrisk.ErrNotFound) {
		found, err = false, nil
	}
	if err != nil {
		return locrisk.APIKey{}, locrisk.Account{}, false, err
	}
	if c.ttl > 0 {
		c.mu.Lock()
		if len(c.entries) >= maxKeyCacheEntries {
			for k, e := range c.entries {
				if !c.fresh(e, now) {
					delete(c.entries, k)
				}
			}
			if len(c.entries) >= maxKeyCacheEntries {
				clear(c.entries)
			}
		}
		c.entries[h] = keyEntry{key: key, account: acct, found: found, fetched: now}
		c.mu.Unlock()
	}
	return key, acct, found, nil
}
