package reportverify

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"codeberg.org/go-pdf/fpdf"
)

func testKey(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
}

func testSet(ids ...string) KeySet {
	var keys []Key
	for i, id := range ids {
		keys = append(keys, Key{ID: id, PublicKey: testKey(byte(i + 1)).Public().(ed25519.PublicKey)})
	}
	return NewKeySet(keys...)
}

// sampleDoc is a report-like document of about 2 kB, as json.Marshal
// writes the API's (compact, HTML escaped, a final newline).
func sampleDoc(t testing.TB) []byte {
	t.Helper()
	doc := map[string]any{
		"apiVersion": "v1", "detail": "summary", "reportId": "01a220fe-c8f1-70b0-bf93-5594394bf4c6",
		"generatedUtc": "2026-11-28T07:30:00Z",
		"location":     map[string]any{"latitude": 37.7749, "longitude": -122.4194, "countyName": "San Francisco"},
		"summary": map[string]any{"overallScore": 72, "riskLevel": "high", "confidence": map[string]any{"level": "medium", "score": 0.61},
			"moduleScores": map[string]any{"hydrology": 71, "wildfire": 0, "earthquake": 92, "environmentalExposure": nil},
			"topRisks": []any{map[string]any{"module": "earthquake", "score": 92,
				"reason": "annual chance of an M5+ earthquake within 50 km: 5.088% (about 1 in 20 years) <USGS & NRI>"}},
			"reviewFlags": []any{}},
		"provenance": map[string]any{"engineVersion": "0123456789ab", "dataVersion": "data-a37c6ecf9c73",
			"inputs":       map[string]any{"latitude": 37.7749, "longitude": -122.4194, "detail": "summary"},
			"reportSha256": strings.Repeat("ab", 32)},
		"notes": strings.Repeat("Scores are population-weighted percentiles among US residents. ", 16),
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestSignVerify: a signed document verifies with its key; the signature
// is its last member and the rest of the bytes are kept; it still
// verifies re-indented and reordered; another key's document does not.
func TestSignVerify(t *testing.T) {
	doc := sampleDoc(t)
	signed, err := Sign(doc, "k1", testKey(1))
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.TrimSuffix(doc, []byte("}\n"))
	if !bytes.HasPrefix(signed, body) || !bytes.HasSuffix(signed, []byte("}}\n")) ||
		!bytes.Contains(signed, []byte(`,"signature":{"algorithm":"Ed25519","keyId":"k1","canonicalization":"RFC8785","value":"`)) {
		t.Fatalf("signed document:\n%s", signed[len(body)-20:])
	}
	res, err := Verify(signed, testSet("k1", "k2"))
	if err != nil || res.KeyID != "k1" || len(res.SignedSHA256) != 64 {
		t.Fatalf("verify: %+v %v", res, err)
	}
	covered, err := SignedBytes(signed)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Canonicalize(doc)
	if !bytes.Equal(covered, want) {
		t.Error("the signature does not cover the canonical form of the unsigned document")
	}

	var generic map[string]any
	json.Unmarshal(signed, &generic)
	indented, _ := json.MarshalIndent(generic, "", "    ") // keys sorted, indented
	if _, err := Verify(indented, testSet("k1")); err != nil {
		t.Errorf("re-indented and reordered: %v", err)
	}

	tests := []struct {
		name string
		doc  []byte
		keys KeySet
		want error
	}{
		{"unsigned", doc, testSet("k1"), ErrNoSignature},
		{"unknown key", signed, testSet("k2"), ErrUnknownKey},
		{"another key under the id", signed, NewKeySet(Key{ID: "k1", PublicKey: testKey(9).Public().(ed25519.PublicKey)}), ErrBadSignature},
		{"not JSON", []byte("{"), testSet("k1"), ErrMalformed},
		{"not an object", []byte(`[1]`), testSet("k1"), ErrMalformed},
		{"other algorithm", bytes.Replace(signed, []byte(`"Ed25519"`), []byte(`"RS256"`), 1), testSet("k1"), ErrUnsupported},
		{"value not base64", bytes.Replace(signed, []byte(`"value":"`), []byte(`"value":"!`), 1), testSet("k1"), ErrBadSignature},
	}
	for _, tt := range tests {
		if _, err := Verify(tt.doc, tt.keys); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if _, err := Sign(signed, "k1", testKey(1)); err == nil {
		t.Error("signed a signed document again")
	}
	if empty, err := Sign([]byte("{}"), "k1", testKey(1)); err != nil || !bytes.HasPrefix(empty, []byte(`{"signature":`)) {
		t.Errorf("sign {}: %s %v", empty, err)
	}
}

// TestEveryByteMatters: changing any one byte of a signed document, at
// every position, makes it fail verification, unless the change keeps
// its meaning (the case of a hex digit in a \u escape: the canonical
// form, which is what is signed, is then the same).
func TestEveryByteMatters(t *testing.T) {
	signed, err := Sign(sampleDoc(t), "k1", testKey(1))
	if err != nil {
		t.Fatal(err)
	}
	keys := testSet("k1")
	end := len(bytes.TrimRight(signed, "\n"))
	for i := 0; i < end; i++ {
		for _, flip := range []byte{0x01, 0x20} {
			bad := bytes.Clone(signed)
			bad[i] ^= flip
			if _, err := Verify(bad, keys); err == nil {
				a, _ := SignedBytes(signed)
				b, _ := SignedBytes(bad)
				if !bytes.Equal(a, b) {
					t.Fatalf("byte %d changed from %q to %q and the document still verifies", i, signed[i], bad[i])
				}
			}
		}
	}
}

// TestPEMKey: a PEM public key (as openssl writes it) verifies what its
// key signed, whatever id the document names, and not another key's.
func TestPEMKey(t *testing.T) {
	der, _ := x509.MarshalPKIXPublicKey(testKey(1).Public())
	p := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	keys, err := ParsePublicKeyPEM(append([]byte("# lrs-1 (current)\n"), p...))
	if err != nil {
		t.Fatal(err)
	}
	signed, _ := Sign(sampleDoc(t), "lrs-1", testKey(1))
	if res, err := Verify(signed, keys); err != nil || res.KeyID != "lrs-1" {
		t.Errorf("verify with the PEM key: %+v %v", res, err)
	}
	other, _ := Sign(sampleDoc(t), "lrs-2", testKey(2))
	if _, err := Verify(other, keys); !errors.Is(err, ErrBadSignature) {
		t.Errorf("another key's document: %v", err)
	}
	if _, err := ParsePublicKeyPEM([]byte("no key here")); err == nil {
		t.Error("parsed a PEM key out of nothing")
	}
}

// TestParseKeySet reads the published form, with times and retirement.
func TestParseKeySet(t *testing.T) {
	pub := func(seed byte) string {
		b, _ := json.Marshal([]byte(testKey(seed).Public().(ed25519.PublicKey)))
		return string(b)
	}
	doc := `{"keys":[{"keyId":"new","algorithm":"Ed25519","publicKey":` + pub(2) + `,"createdUtc":"2026-11-28T08:00:00Z","retiredUtc":null},
		{"keyId":"old","algorithm":"Ed25519","publicKey":` + pub(1) + `,"createdUtc":"2026-11-01T08:00:00Z","retiredUtc":"2026-11-28T08:00:00Z"}]}`
	keys, err := ParseKeySet([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	signed, _ := Sign(sampleDoc(t), "old", testKey(1))
	res, err := Verify(signed, keys)
	if err != nil || !res.Key.RetiredUTC.Equal(time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("old key: %+v %v", res, err)
	}
	for _, bad := range []string{`{}`, `{"keys":[{"keyId":"a","algorithm":"Ed25519","publicKey":"AAAA"}]}`,
		`{"keys":[{"keyId":"a","algorithm":"RSA","publicKey":` + pub(1) + `}]}`, `[`} {
		if _, err := ParseKeySet([]byte(bad)); err == nil {
			t.Errorf("parsed %s", bad)
		}
	}
}

// TestFromPDF: the JSON a PDF made with fpdf carries as an attachment
// comes back whole, compressed or not; a PDF without one is
// ErrNoAttachment.
func TestFromPDF(t *testing.T) {
	signed, _ := Sign(sampleDoc(t), "k1", testKey(1))
	for _, compress := range []bool{true, false} {
		f := fpdf.New("P", "mm", "Letter", "")
		f.SetCompression(compress)
		f.AddPage()
		f.SetAttachments([]fpdf.Attachment{{Content: []byte("not json"), Filename: "notes.txt"}, {Content: signed, Filename: "report.json"}})
		var buf bytes.Buffer
		if err := f.Output(&buf); err != nil {
			t.Fatal(err)
		}
		got, err := FromPDF(buf.Bytes())
		if err != nil || !bytes.Equal(got, signed) {
			t.Fatalf("compress %v: %v, %d bytes", compress, err, len(got))
		}
		if _, err := Verify(got, testSet("k1")); err != nil {
			t.Error(err)
		}
	}
	f := fpdf.New("P", "mm", "Letter", "")
	f.AddPage()
	var buf bytes.Buffer
	f.Output(&buf)
	if _, err := FromPDF(buf.Bytes()); !errors.Is(err, ErrNoAttachment) {
		t.Errorf("a PDF without attachment: %v", err)
	}
	if _, err := FromPDF([]byte("{}")); err == nil {
		t.Error("read a PDF out of JSON")
	}
}

// BenchmarkSign signs a document of the size of a full report.
func BenchmarkSign(b *testing.B) {
	doc := sampleDoc(b)
	for len(doc) < 45<<10 {
		doc = append(bytes.TrimSuffix(doc, []byte("}\n")), []byte(fmt.Sprintf(`,"pad%d":[1.5,"text <&> text",{"a":null,"b":true}]}`+"\n", len(doc)))...)
	}
	key := testKey(1)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Sign(doc, "k1", key); err != nil {
			b.Fatal(err)
		}
	}
}
