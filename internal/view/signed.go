package view

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/pdf"
	"github.com/locrisk/locrisk/reportverify"
)

// Signer signs a report document and a PDF's pages (internal/signing).
type Signer interface {
	Sign(ctx context.Context, doc []byte) ([]byte, error)
	// SignPDF fills in the signature of a PDF's pages
	// (reportverify.SignPDF).
	SignPDF(ctx context.Context, pdf []byte) ([]byte, error)
}

// SignedReport is the JSON document GET /location-risk/reports/{reportId}
// serves at detail: NewReport's view, signed (docs/verification.md), with
// a final newline.
func SignedReport(ctx context.Context, rep locrisk.Report, detail string, s Signer) ([]byte, error) {
	_, signed, err := signedView(ctx, rep, detail, s)
	return signed, err
}

// signedView is SignedReport with the view it signed.
func signedView(ctx context.Context, rep locrisk.Report, detail string, s Signer) (Report, []byte, error) {
	v, err := NewReport(rep, detail)
	if err != nil {
		return Report{}, nil, err
	}
	doc, err := json.Marshal(v)
	if err != nil {
		return Report{}, nil, fmt.Errorf("report %s: %w", rep.ID, err)
	}
	signed, err := s.Sign(ctx, doc)
	if err != nil {
		return Report{}, nil, fmt.Errorf("report %s: %w", rep.ID, err)
	}
	return v, append(signed, '\n'), nil
}

// signatureOf reads the signature member of a document reportverify.Sign
// signed, which is its last member, without decoding the rest.
func signatureOf(signed []byte) (reportverify.Signature, error) {
	var sig reportverify.Signature
	const member = `,"` + reportverify.SignatureMember + `":`
	i := bytes.LastIndex(signed, []byte(member))
	if i < 0 {
		return sig, reportverify.ErrNoSignature
	}
	tail := bytes.TrimRight(signed[i+len(member):], " \t\r\n")
	return sig, json.Unmarshal(bytes.TrimSuffix(tail, []byte("}")), &sig)
}

// SignedPDF renders the report as PDF (the document GET .../pdf serves and
// `locrisk report --pdf` writes) with its provenance and the check of its
// signature on the last page, carrying the signed full JSON as an
// attached file. With the same signing key, the same stored report always
// renders to the same bytes.
func SignedPDF(ctx context.Context, rep locrisk.Report, outlines Outliner, s Signer) ([]byte, error) {
	v, signed, err := signedView(ctx, rep, DetailFull, s)
	if err != nil {
		return nil, err
	}
	sig, err := signatureOf(signed)
	if err != nil {
		return nil, fmt.Errorf("report %s: the signed JSON: %w", rep.ID, err)
	}
	// The page quotes the digest of the bytes the signature covers, as a
	// verifier computes it.
	covered, err := reportverify.SignedBytes(signed)
	if err != nil {
		return nil, fmt.Errorf("report %s: the signed JSON: %w", rep.ID, err)
	}
	digest := sha256.Sum256(covered)
	// The attachment is the signed JSON in canonical form, signature
	// member included: without that member (a sed away) it is exactly
	// the signed bytes, so openssl alone can check it
	// (docs/verification.md).
	attached, err := reportverify.Canonicalize(signed)
	if err != nil {
		return nil, fmt.Errorf("report %s: the signed JSON: %w", rep.ID, err)
	}
	p := v.Provenance
	facts := [][2]string{
		{"Engine version", deref(p.EngineVersion)},
		{"Methodology", deref(p.MethodologyVersion)},
		{"Data version", p.DataVersion},
		{"Data manifest", deref(p.DataManifestSHA256)},
		{"Coordinate", fmt.Sprintf("%v, %v", p.Inputs.Latitude, p.Inputs.Longitude)},
		{"Engine output", "SHA-256 " + p.ReportSHA256},
	}
	doc, err := renderPDF(rep, outlines, &pdf.Verification{Facts: facts, KeyID: sig.KeyID, SignedSHA256: hex.EncodeToString(digest[:]),
		AttachmentName: "location-risk-" + rep.ID + ".json", Attachment: attached})
	if err != nil {
		return nil, err
	}
	// The pages are signed too: a reader reads them, not the attachment
	// (docs/verification.md, "What a PDF's signature covers").
	signedPDF, err := s.SignPDF(ctx, doc)
	if err != nil {
		return nil, fmt.Errorf("report %s: signing the PDF's pages: %w", rep.ID, err)
	}
	return signedPDF, nil
}

func deref(s *string) string {
	if s == nil {
		return "not recorded"
	}
	return *s
}

// SigningKeys is the body of GET /.well-known/locrisk-signing-keys
// (docs/verification.md): every key reports were signed with, newest
// first.
type SigningKeys struct {
	Keys []SigningKey `json:"keys"`
}

// SigningKey is one public key of SigningKeys.
type SigningKey struct {
	KeyID        string  `json:"keyId"`
	Algorithm    string  `json:"algorithm"`
	PublicKey    string  `json:"publicKey"`
	PublicKeyPEM string  `json:"publicKeyPem"`
	CreatedUTC   string  `json:"createdUtc"`
	RetiredUTC   *string `json:"retiredUtc"`
}

// NewSigningKeys is the public view of keys.
func NewSigningKeys(keys []locrisk.SigningKey) (SigningKeys, error) {
	out := SigningKeys{Keys: make([]SigningKey, 0, len(keys))}
	for _, k := range keys {
		pemText, err := PublicKeyPEM(k.PublicKey)
		if err != nil {
			return SigningKeys{}, fmt.Errorf("signing key %s: %w", k.ID, err)
		}
		v := SigningKey{KeyID: k.ID, Algorithm: "Ed25519", PublicKey: base64.StdEncoding.EncodeToString(k.PublicKey),
			PublicKeyPEM: pemText, CreatedUTC: Time(k.CreatedUTC)}
		if !k.Current() {
			r := Time(k.RetiredUTC)
			v.RetiredUTC = &r
		}
		out.Keys = append(out.Keys, v)
	}
	return out, nil
}

// PublicKeyPEM is pub as a PEM "PUBLIC KEY" block (PKIX), as openssl
// reads it.
func PublicKeyPEM(pub ed25519.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), nil
}
