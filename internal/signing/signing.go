// Package signing signs report documents with the service's current
// Ed25519 key (docs/verification.md), in the format package reportverify
// states and checks: an RFC 8785 canonical form of the document without
// its "signature" member, signed, and the signature appended as the
// document's last member.
//
// Reports are signed when they are served, not when their job completes:
// what is signed is then exactly what is served (the links, the detail, the
// provenance), the job path costs no more, and a document served again
// with the same key is the same bytes (Ed25519 signatures are
// deterministic), so the PDF's ETag holds.
package signing

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/reportverify"
)

// Refresh is how long the signer uses the current key it last read before
// it reads it again: a key rotated with `locrisk signing-keys rotate`
// signs within this time on every server of the database.
const Refresh = 2 * time.Second

// Signer signs documents with the store's current key, creating the first
// key when the store has none. It is safe for concurrent use.
type Signer struct {
	keys locrisk.SigningKeys
	now  func() time.Time

	mu     sync.Mutex
	key    locrisk.SigningKey
	loaded time.Time // when key was read; zero: never
}

// New returns a signer over keys; now is the clock (nil: time.Now).
func New(keys locrisk.SigningKeys, now func() time.Time) *Signer {
	if now == nil {
		now = time.Now
	}
	return &Signer{keys: keys, now: now}
}

// Key returns the current key, read from the store at most Refresh ago.
// With no key in the store, it stores a new one (created tells).
func (s *Signer) Key(ctx context.Context) (k locrisk.SigningKey, created bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if !s.loaded.IsZero() && now.Sub(s.loaded) < Refresh && now.Sub(s.loaded) >= 0 {
		return s.key, false, nil
	}
	k, err = s.keys.CurrentSigningKey(ctx)
	if errors.Is(err, locrisk.ErrNotFound) {
		var fresh locrisk.SigningKey
		if fresh, err = locrisk.NewSigningKey(now); err != nil {
			return locrisk.SigningKey{}, false, fmt.Errorf("make a signing key: %w", err)
		}
		k, created, err = s.keys.EnsureSigningKey(ctx, fresh)
	}
	if err != nil {
		return locrisk.SigningKey{}, false, fmt.Errorf("signing key: %w", err)
	}
	if k.PrivateKey == nil {
		return locrisk.SigningKey{}, false, fmt.Errorf("signing key %s: the store gave no private key", k.ID)
	}
	s.key, s.loaded = k, now
	return k, created, nil
}

// Sign returns doc, a compact JSON object, with its signature appended.
func (s *Signer) Sign(ctx context.Context, doc []byte) ([]byte, error) {
	k, _, err := s.Key(ctx)
	if err != nil {
		return nil, err
	}
	signed, err := reportverify.Sign(doc, k.ID, k.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("sign report: %w", err)
	}
	return signed, nil
}

// SignPDF fills in the signature of a PDF's pages with the current key
// (reportverify.SignPDF).
func (s *Signer) SignPDF(ctx context.Context, pdf []byte) ([]byte, error) {
	k, _, err := s.Key(ctx)
	if err != nil {
		return nil, err
	}
	signed, err := reportverify.SignPDF(pdf, k.ID, k.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("sign PDF pages: %w", err)
	}
	return signed, nil
}

// PublicKeys lists every key, newest first, for the well-known path.
func (s *Signer) PublicKeys(ctx context.Context) ([]locrisk.SigningKey, error) {
	return s.keys.ListSigningKeys(ctx)
}
