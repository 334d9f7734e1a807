// Package reportverify signs and verifies locrisk reports
// (docs/verification.md in the locrisk repository). It imports the
// standard library only, so an auditor's program can use it without
// taking anything else in; the locrisk service signs with it.
//
// The format. A signed report is a JSON object, the report document as
// the API serves it, whose last member is
//
//	"signature": {"algorithm": "Ed25519", "keyId": "<key id>",
//	              "canonicalization": "RFC8785", "value": "<base64>"}
//
// value is the standard base64 of the 64-byte Ed25519 signature of the
// RFC 8785 (JSON Canonicalization Scheme) form of the document without its
// "signature" member. Signing the canonical form rather than the file's
// bytes means a report still verifies after it is re-indented or its
// members reordered (stored in a database, say), while any change of a
// name or a value breaks it.
//
// The service publishes its public keys, current and retired, at
// /.well-known/locrisk-signing-keys:
//
//	{"keys": [{"keyId": "...", "algorithm": "Ed25519", "publicKey": "<base64 of 32 bytes>",
//	           "createdUtc": "2026-11-28T07:00:00Z", "retiredUtc": null}]}
//
// A PDF report carries its signed JSON (full detail, in canonical form
// with its signature member) as an embedded file; FromPDF returns it.
package reportverify

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// The names the format fixes.
const (
	SignatureMember  = "signature"
	Algorithm        = "Ed25519"
	Canonicalization = "RFC8785"
)

// Errors of Verify; test them with errors.Is.
var (
	ErrNoSignature  = errors.New("reportverify: the document has no signature member")
	ErrUnsupported  = errors.New("reportverify: unsupported signature algorithm or canonicalization")
	ErrUnknownKey   = errors.New("reportverify: the signing key is not among the keys given")
	ErrBadSignature = errors.New("reportverify: the signature does not match the document")
)

// Signature is the document's signature member.
type Signature struct {
	Algorithm        string `json:"algorithm"`
	KeyID            string `json:"keyId"`
	Canonicalization string `json:"canonicalization"`
	Value            string `json:"value"`
}

// Result is what a successful Verify found.
type Result struct {
	// KeyID names the key that signed; Key is that key as the key set
	// gave it (its times are zero for a key read from a PEM file).
	KeyID string
	Key   Key
	// SignedSHA256 is the SHA-256 (hex) of the bytes the signature covers.
	SignedSHA256 string
}

// Verify checks doc's signature with the key it names in keys.
func Verify(doc []byte, keys KeySet) (Result, error) {
	sig, signed, err := split(doc)
	if err != nil {
		return Result{}, err
	}
	if sig.Algorithm != Algorithm || sig.Canonicalization != Canonicalization {
		return Result{}, fmt.Errorf("%w: %q over %q", ErrUnsupported, sig.Algorithm, sig.Canonicalization)
	}
	raw, err := base64.StdEncoding.DecodeString(sig.Value)
	if err != nil || len(raw) != ed25519.SignatureSize {
		return Result{}, fmt.Errorf("%w: the value is not a base64 Ed25519 signature", ErrBadSignature)
	}
	k, ok := keys.lookup(sig.KeyID)
	if !ok {
		return Result{}, fmt.Errorf("%w: %q", ErrUnknownKey, sig.KeyID)
	}
	if !ed25519.Verify(k.PublicKey, signed, raw) {
		return Result{}, fmt.Errorf("%w (key %s)", ErrBadSignature, sig.KeyID)
	}
	sum := sha256.Sum256(signed)
	return Result{KeyID: sig.KeyID, Key: k, SignedSHA256: hex.EncodeToString(sum[:])}, nil
}

// SignedBytes returns the bytes doc's signature covers: the canonical form
// of doc without its signature member. It checks nothing; with it,
// another tool (openssl) can check the signature.
func SignedBytes(doc []byte) ([]byte, error) {
	_, signed, err := split(doc)
	return signed, err
}

// split parses doc and returns its signature member and the canonical
// form of the rest.
func split(doc []byte) (Signature, []byte, error) {
	p := parser{src: doc}
	v, err := p.document()
	if err != nil {
		return Signature{}, nil, err
	}
	if v.kind != 'o' {
		return Signature{}, nil, fmt.Errorf("%w: a report is a JSON object", ErrMalformed)
	}
	var sigVal *value
	rest := v.members[:0:0]
	for i := range v.members {
		if string(v.members[i].name) == SignatureMember {
			sigVal = &v.members[i].val
			continue
		}
		rest = append(rest, v.members[i])
	}
	if sigVal == nil {
		return Signature{}, nil, ErrNoSignature
	}
	var sig Signature
	if err := json.Unmarshal(sigVal.appendCanonical(nil), &sig); err != nil || sigVal.kind != 'o' {
		return Signature{}, nil, fmt.Errorf("%w: the signature member is not an object of strings", ErrMalformed)
	}
	v.members = rest
	return sig, v.appendCanonical(make([]byte, 0, len(doc))), nil
}
