package reportverify

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrAlreadySigned: Sign was given a document with a signature member.
var ErrAlreadySigned = errors.New("reportverify: the document is already signed")

// Sign returns doc, a JSON object, with the signature member of keyID's
// private key appended as its last member (before the closing brace; the
// rest of doc is kept byte for byte, a final newline included). A document
// that already has a signature member is an error.
func Sign(doc []byte, keyID string, priv ed25519.PrivateKey) ([]byte, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, errors.New("reportverify: not an Ed25519 private key")
	}
	sc := scanner{src: doc, cut: SignatureMember}
	if err := sc.document(); err != nil {
		return nil, err
	}
	if sc.out[0] != '{' {
		return nil, fmt.Errorf("%w: a report is a JSON object", ErrMalformed)
	}
	if sc.cutFound {
		return nil, ErrAlreadySigned
	}
	signed := sc.out
	sig := Signature{Algorithm: Algorithm, KeyID: keyID, Canonicalization: Canonicalization,
		Value: base64.StdEncoding.EncodeToString(ed25519.Sign(priv, signed))}
	member, err := json.Marshal(sig)
	if err != nil {
		return nil, err
	}
	// Whitespace is all that can follow the closing brace of a document
	// the scanner accepted.
	body := bytes.TrimRight(doc, " \t\r\n")
	tail := doc[len(body):]
	out := make([]byte, 0, len(doc)+len(member)+16)
	out = append(out, body[:len(body)-1]...) // up to the closing brace
	if len(signed) > len("{}") {
		out = append(out, ',')
	}
	out = append(out, `"`+SignatureMember+`":`...)
	out = append(out, member...)
	out = append(out, '}')
	return append(out, tail...), nil
}
