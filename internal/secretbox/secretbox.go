// Package secretbox seals short secrets for storage at rest: the webhook
// signing secrets the store keeps, which the server needs in clear to sign
// deliveries and so cannot hash (docs/operations.md, Limits and defaults).
//
// A sealed value is text: the version prefix "sb1:" and the base64 of a
// random 12-byte nonce followed by the AES-256-GCM ciphertext and tag. The
// caller names what the secret belongs to (the endpoint id), which is
// authenticated with it, so a sealed value copied onto another row does
// not open there. A value without the prefix is not sealed (rows written
// before sealing existed); IsSealed tells them apart.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// KeySize is the key length in bytes (AES-256).
const KeySize = 32

// prefix marks a sealed value and its format; a later format gets the
// next number, and Open keeps reading this one.
const prefix = "sb1:"

// ErrWrongKey is returned by Open when the value does not authenticate
// under the key: it was sealed with another key, for another owner, or
// has been changed.
var ErrWrongKey = errors.New("secret does not open with this key (another key, or a changed value)")

// Box seals and opens secrets with one key. It is safe for concurrent use.
type Box struct {
	aead cipher.AEAD
}

// New makes a Box from a KeySize-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	return &Box{aead: aead}, nil
}

// IsSealed reports whether v is a sealed value rather than a clear one.
func IsSealed(v string) bool { return strings.HasPrefix(v, prefix) }

// Seal seals plain for owner.
func (b *Box) Seal(plain, owner string) string {
	nonce := make([]byte, b.aead.NonceSize())
	// crypto/rand.Read does not fail (it panics rather than return
	// short) on the systems Go supports.
	_, _ = rand.Read(nonce)
	out := b.aead.Seal(nonce, nonce, []byte(plain), []byte(owner))
	return prefix + base64.RawStdEncoding.EncodeToString(out)
}

// Open opens a value Seal made for owner. A value that does not
// authenticate is ErrWrongKey; one that is not sealed at all is an error
// too, so a caller never mistakes a clear value for an opened one.
func (b *Box) Open(sealed, owner string) (string, error) {
	if !IsSealed(sealed) {
		return "", errors.New("secret is not sealed")
	}
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(sealed, prefix))
	if err != nil || len(raw) < b.aead.NonceSize()+b.aead.Overhead() {
		return "", fmt.Errorf("sealed secret is malformed: %w", ErrWrongKey)
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(owner))
	if err != nil {
		return "", ErrWrongKey
	}
	return string(plain), nil
}

// ParseKey reads a key written as text: KeySize bytes in base64 (standard
// or URL alphabet, padded or not) or in hex, surrounding white space
// ignored.
func ParseKey(text []byte) ([]byte, error) {
	s := strings.TrimSpace(string(text))
	if len(s) == 2*KeySize {
		if k, err := hex.DecodeString(s); err == nil {
			return k, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			if len(k) != KeySize {
				return nil, fmt.Errorf("secret key decodes to %d bytes, want %d", len(k), KeySize)
			}
			return k, nil
		}
	}
	return nil, fmt.Errorf("secret key is neither base64 nor hex of %d bytes", KeySize)
}

// LoadKeyFile reads and parses the key file at path.
func LoadKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secret key file: %w", err)
	}
	k, err := ParseKey(b)
	if err != nil {
		return nil, fmt.Errorf("secret key file %s: %w", path, err)
	}
	return k, nil
}

// CreateKeyFile writes a new random key, in base64, to path with mode
// 0600 and returns it. It never replaces a file: a key that sealed
// secrets must not be lost, so an existing path is an error
// (os.ErrExist).
func CreateKeyFile(path string) ([]byte, error) {
	k := make([]byte, KeySize)
	_, _ = rand.Read(k)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create secret key file: %w", err)
	}
	_, err = f.WriteString(base64.StdEncoding.EncodeToString(k) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("write secret key file %s: %w", path, err)
	}
	return k, nil
}
