package locrisk

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// SigningKey is an Ed25519 key the service signs reports with
// (docs/verification.md). One key is current at a time; rotating retires
// it, which erases its private half and keeps its public half, so reports
// signed with it still verify.
type SigningKey struct {
	ID         string
	PublicKey  ed25519.PublicKey
	PrivateKey ed25519.PrivateKey // nil for a retired key, and in lists
	CreatedUTC time.Time
	RetiredUTC time.Time // zero while the key is current
}

// Current says whether the key is the one reports are signed with now.
func (k SigningKey) Current() bool { return k.RetiredUTC.IsZero() }

// NewSigningKey makes a fresh key, created at now. Its id names the day
// and the first 8 hex digits of the SHA-256 of its public key
// ("lrs-20261128-1a2b3c4d"), so that an auditor can tell keys apart at a
// glance and check that an id belongs to a key.
func NewSigningKey(now time.Time) (SigningKey, error) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		return SigningKey{}, err
	}
	return SigningKey{ID: SigningKeyID(pub, now), PublicKey: pub, PrivateKey: priv, CreatedUTC: now.UTC()}, nil
}

// SigningKeyID is the id NewSigningKey gives the public key pub created at now.
func SigningKeyID(pub ed25519.PublicKey, now time.Time) string {
	sum := sha256.Sum256(pub)
	return "lrs-" + now.UTC().Format("20060102") + "-" + hex.EncodeToString(sum[:4])
}
