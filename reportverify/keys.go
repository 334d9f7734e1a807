package reportverify

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"time"
)

// Key is one public key of a KeySet.
type Key struct {
	ID        string
	PublicKey ed25519.PublicKey
	// CreatedUTC and RetiredUTC are the key's validity as published; a
	// key current when published has a zero RetiredUTC. Both are zero for
	// a key read from a PEM file.
	CreatedUTC, RetiredUTC time.Time
}

// KeySet is the public keys a verifier trusts.
type KeySet struct {
	keys map[string]Key
	// any, when set, is a key given without an id (a PEM file): it is
	// tried for whatever key id a document names.
	any *Key
}

// NewKeySet makes a key set of keys, each under its ID.
func NewKeySet(keys ...Key) KeySet {
	s := KeySet{keys: map[string]Key{}}
	for _, k := range keys {
		s.keys[k.ID] = k
	}
	return s
}

// Keys lists the set's keys.
func (s KeySet) Keys() []Key {
	out := make([]Key, 0, len(s.keys)+1)
	for _, k := range s.keys {
		out = append(out, k)
	}
	if s.any != nil {
		out = append(out, *s.any)
	}
	return out
}

func (s KeySet) lookup(id string) (Key, bool) {
	if k, ok := s.keys[id]; ok {
		return k, true
	}
	if s.any != nil {
		k := *s.any
		k.ID = id
		return k, true
	}
	return Key{}, false
}

// ParseKeySet reads the keys a server publishes at
// /.well-known/locrisk-signing-keys (or `locrisk signing-keys list
// --json` prints).
func ParseKeySet(data []byte) (KeySet, error) {
	var doc struct {
		Keys []struct {
			KeyID      string  `json:"keyId"`
			Algorithm  string  `json:"algorithm"`
			PublicKey  string  `json:"publicKey"`
			CreatedUTC string  `json:"createdUtc"`
			RetiredUTC *string `json:"retiredUtc"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return KeySet{}, fmt.Errorf("reportverify: key set: %w", err)
	}
	if doc.Keys == nil {
		return KeySet{}, errors.New(`reportverify: key set: no "keys" list`)
	}
	s := NewKeySet()
	for i, k := range doc.Keys {
		if k.Algorithm != Algorithm {
			return KeySet{}, fmt.Errorf("%w: key %d (%s) is %q", ErrUnsupported, i, k.KeyID, k.Algorithm)
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(k.PublicKey)
		if err != nil || len(raw) != ed25519.PublicKeySize || k.KeyID == "" {
			return KeySet{}, fmt.Errorf("reportverify: key set: key %d (%s) is not a 32-byte Ed25519 public key with an id", i, k.KeyID)
		}
		key := Key{ID: k.KeyID, PublicKey: raw}
		if key.CreatedUTC, err = parseTime(k.CreatedUTC); err != nil {
			return KeySet{}, fmt.Errorf("reportverify: key set: key %s: createdUtc: %w", k.KeyID, err)
		}
		if k.RetiredUTC != nil {
			if key.RetiredUTC, err = parseTime(*k.RetiredUTC); err != nil {
				return KeySet{}, fmt.Errorf("reportverify: key set: key %s: retiredUtc: %w", k.KeyID, err)
			}
		}
		s.keys[key.ID] = key
	}
	return s, nil
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339, s)
}

// ParsePublicKeyPEM reads one Ed25519 public key in a PEM "PUBLIC KEY"
// block (PKIX, as `openssl pkey -pubout` writes it and `locrisk
// signing-keys list --pem` prints it) as the key keyID. A PEM file does
// not name its key: with keyID empty, the set tries the key for whatever
// key id a document names (Result.KeyID is then the document's claim,
// proven only in that this key made the signature), so a document signed
// by another key fails with ErrBadSignature rather than ErrUnknownKey.
func ParsePublicKeyPEM(data []byte, keyID string) (KeySet, error) {
	var block *pem.Block
	for rest := data; ; {
		if block, rest = pem.Decode(rest); block == nil || block.Type == "PUBLIC KEY" {
			break
		}
	}
	if block == nil {
		return KeySet{}, errors.New("reportverify: no PEM PUBLIC KEY block")
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return KeySet{}, fmt.Errorf("reportverify: PEM public key: %w", err)
	}
	k, ok := pub.(ed25519.PublicKey)
	if !ok {
		return KeySet{}, fmt.Errorf("%w: the PEM key is %T, not Ed25519", ErrUnsupported, pub)
	}
	if keyID != "" {
		return NewKeySet(Key{ID: keyID, PublicKey: k}), nil
	}
	s := NewKeySet()
	s.any = &Key{PublicKey: k}
	return s, nil
}
