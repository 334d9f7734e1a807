// Package reportverify signs and verifies locrisk reports
// (docs/verification.md in the locrisk repository). It imports the
// standard library only, so an auditor's program can use it without
// taking anything else in; the locrisk service signs with it, so there is
// one implementation of the format.
//
// # Format
//
// A signed report is a JSON object, the report document as the API serves
// it (summary or full detail), with a top-level member
//
//	"signature": {"algorithm": "Ed25519", "keyId": "<key id>",
//	              "canonicalization": "RFC8785", "value": "<base64>"}
//
// value is the standard base64 (with padding) of the 64-byte Ed25519
// signature of the RFC 8785 (JSON Canonicalization Scheme) form of the
// document with its top-level "signature" member removed. The service
// writes the member last, but where it stands does not matter.
//
// Signing the canonical form rather than the file's bytes means a report
// still verifies after it is re-indented or its members reordered
// (stored in a jsonb column, say), while any change of a name or a value
// breaks it. The canonical form: no whitespace; object members sorted by
// their names as UTF-16 code units; strings with only the escapes \" \\
// \b \f \n \r \t and \u00xx (lowercase hex) for the other controls,
// everything else as UTF-8; numbers as ECMAScript's Number.prototype.toString
// writes the nearest IEEE 754 double ("1e+21", "1e-7", -0 as 0). A document
// with a duplicate member name, invalid UTF-8, a lone surrogate escape, a
// number beyond a double or data after the value has no canonical form
// (ErrMalformed).
//
// The service publishes its public keys, current and retired, at
// /.well-known/locrisk-signing-keys:
//
//	{"keys": [{"keyId": "...", "algorithm": "Ed25519", "publicKey": "<base64 of the 32 raw bytes>",
//	           "createdUtc": "2026-11-28T07:00:00Z", "retiredUtc": null}]}
//
// retiredUtc is a time once the key was rotated out; a retired key still
// verifies what it signed. A single key may also come as a PEM "PUBLIC
// KEY" block (PKIX), as `openssl pkey -pubout` writes for Ed25519.
//
// A PDF report carries the signed full JSON as a document-level embedded
// file whose name ends in ".json"; FromPDF returns it. Its pages are signed
// too: its /Keywords hold a signature of the SHA-256 of each page's
// canonical form, of the catalog's and of the attached JSON (SignPDF,
// VerifyPDF; docs/verification.md, "What a PDF's signature covers"), so a
// changed page, an incremental update or a stripped attachment fails,
// while a rewrite that keeps what the file holds (qpdf) still verifies.
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
	// Strict: the last character before "==" carries four bits that a
	// lenient decoder ignores, so a changed value would still decode to
	// the same signature.
	raw, err := base64.StdEncoding.Strict().DecodeString(sig.Value)
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
	sc := scanner{src: doc, cut: SignatureMember}
	if err := sc.document(); err != nil {
		return Signature{}, nil, err
	}
	if sc.out[0] != '{' {
		return Signature{}, nil, fmt.Errorf("%w: a report is a JSON object", ErrMalformed)
	}
	if !sc.cutFound {
		return Signature{}, nil, ErrNoSignature
	}
	sig, err := parseSignature(sc.cutValue)
	return sig, sc.out, err
}

// parseSignature reads the signature member's value (canonical JSON):
// an object of exactly the four members, all strings, names matched
// exactly. The member is not itself signed, so this strictness guards
// nothing cryptographic; it keeps a mangled member from passing
// (encoding/json alone would take "KEYID" for "keyId").
func parseSignature(canonical []byte) (Signature, error) {
	var m map[string]string
	bad := fmt.Errorf("%w: the signature member is not an object of the four strings algorithm, keyId, canonicalization, value", ErrMalformed)
	if json.Unmarshal(canonical, &m) != nil || m == nil || len(m) != 4 {
		return Signature{}, bad
	}
	sig := Signature{Algorithm: m["algorithm"], KeyID: m["keyId"], Canonicalization: m["canonicalization"], Value: m["value"]}
	for _, name := range []string{"algorithm", "keyId", "canonicalization", "value"} {
		if _, ok := m[name]; !ok {
			return Signature{}, bad
		}
	}
	return sig, nil
}
