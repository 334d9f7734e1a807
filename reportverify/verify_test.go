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
		{"other canonicalization", bytes.Replace(signed, []byte(`"RFC8785"`), []byte(`"none"`), 1), testSet("k1"), ErrUnsupported},
		{"member name in another case", bytes.Replace(signed, []byte(`"keyId"`), []byte(`"keyid"`), 1), testSet("k1"), ErrMalformed},
		{"extra member in the signature", bytes.Replace(signed, []byte(`"keyId"`), []byte(`"note":"x","keyId"`), 1), testSet("k1"), ErrMalformed},
		{"signature not an object", bytes.Replace(signed, []byte(`"signature":{`), []byte(`"signature":[{`), 1), testSet("k1"), ErrMalformed},
		{"two signature members", bytes.Replace(signed, []byte(`{"apiVersion"`), []byte(`{"signature":{},"apiVersion"`), 1), testSet("k1"), ErrMalformed},
		{"signature member escaped", bytes.Replace(signed, []byte(`"signature"`), []byte(`"\u0073ignature"`), 1), testSet("k1"), nil},
		{"a member added", bytes.Replace(signed, []byte(`{"apiVersion"`), []byte(`{"extra":1,"apiVersion"`), 1), testSet("k1"), ErrBadSignature},
	}
	for _, tt := range tests {
		if _, err := Verify(tt.doc, tt.keys); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

// TestSignShape: Sign keeps every byte of the document before its closing
// brace and whatever whitespace follows it, adds the signature member
// last, and refuses what is not an unsigned object.
func TestSignShape(t *testing.T) {
	const sigStart = `"signature":{"algorithm":"Ed25519","keyId":"k1","canonicalization":"RFC8785","value":"`
	tests := []struct {
		name, doc    string
		before, tail string // the kept head, and what follows the signature's brace
		err          error
	}{
		{"compact with newline", `{"b":1,"a":[2]}` + "\n", `{"b":1,"a":[2],`, "}}\n", nil},
		{"no newline", `{"a":1}`, `{"a":1,`, "}}", nil},
		{"empty object", "{}", "{", "}}", nil},
		{"empty with space", "{ }\r\n", "{ ", "}}\r\n", nil},
		{"indented", "{\n  \"a\": 1\n}\n", "{\n  \"a\": 1\n,", "}}\n", nil},
		{"already signed", `{"a":1,"signature":{}}`, "", "", ErrAlreadySigned},
		{"already signed, escaped name", `{"\u0073ignature":{}}`, "", "", ErrAlreadySigned},
		// The value's escaped string reuses the buffer the escaped name
		// was decoded in.
		{"already signed, escaped name and value", `{"\u0073ignature":"\u0041\u0042\u0043\u0044\u0045\u0046\u0047\u0048\u0049"}`, "", "", ErrAlreadySigned},
		{"escaped name like signature", `{"\u0073ignaturE":1}`, `{"\u0073ignaturE":1,`, "}}", nil},
		{"an array", `[{"a":1}]`, "", "", ErrMalformed},
		{"a string", `"{}"`, "", "", ErrMalformed},
		{"not JSON", `{"a":}`, "", "", ErrMalformed},
	}
	for _, tt := range tests {
		got, err := Sign([]byte(tt.doc), "k1", testKey(1))
		if !errors.Is(err, tt.err) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.err)
			continue
		}
		if err != nil {
			continue
		}
		if !bytes.HasPrefix(got, []byte(tt.before+sigStart)) || !bytes.HasSuffix(got, []byte(`"`+tt.tail)) {
			t.Errorf("%s: %q", tt.name, got)
		}
		if _, err := Verify(got, testSet("k1")); err != nil {
			t.Errorf("%s: does not verify: %v", tt.name, err)
		}
	}
	if _, err := Sign([]byte("{}"), "k1", testKey(1)[:10]); err == nil {
		t.Error("signed with a short private key")
	}
}

// TestEveryByteMatters: changing any one byte of a signed document, at
// every position (the final newline included), to any of several other
// values, makes it fail verification. The one change that may pass is the
// case of a hex letter in a \u escape ("\u003c" to "\u003C"): the escape
// still means "<", so the canonical form, which is what is signed, is the
// same; that is the point of signing the canonical form.
func TestEveryByteMatters(t *testing.T) {
	signed, err := Sign(sampleDoc(t), "k1", testKey(1))
	if err != nil {
		t.Fatal(err)
	}
	keys := testSet("k1")
	inEscape := func(i int) bool { // i is one of the 4 hex digits of a \u escape
		for k := i - 1; k >= 0 && k >= i-5; k-- {
			if signed[k] == 'u' && k > 0 && signed[k-1] == '\\' && i-k <= 4 {
				return true
			}
		}
		return false
	}
	excused := 0
	for i := range signed {
		for _, flip := range []byte{0x01, 0x02, 0x20, 0x40, 0x80} {
			bad := bytes.Clone(signed)
			bad[i] ^= flip
			if _, err := Verify(bad, keys); err == nil {
				caseOfHexLetter := flip == 0x20 && strings.ContainsRune("abcdefABCDEF", rune(signed[i])) && inEscape(i)
				if !caseOfHexLetter {
					t.Fatalf("byte %d changed from %q to %q and the document still verifies", i, signed[i], bad[i])
				}
				excused++
			}
		}
	}
	if excused == 0 {
		t.Log("no \\u escape with a hex letter in the sample")
	}
}

// TestPEMKey: a PEM public key (as openssl writes it) verifies what its
// key signed; without an id it answers for any key id the document names,
// with one only for that id; another key's document never verifies.
func TestPEMKey(t *testing.T) {
	der, _ := x509.MarshalPKIXPublicKey(testKey(1).Public())
	p := append([]byte("# lrs-1 (current)\n"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...)
	mine, _ := Sign(sampleDoc(t), "lrs-1", testKey(1))
	renamed, _ := Sign(sampleDoc(t), "lrs-9", testKey(1))
	other, _ := Sign(sampleDoc(t), "lrs-2", testKey(2))
	tests := []struct {
		name, keyID string
		doc         []byte
		want        error
	}{
		{"no id, its document", "", mine, nil},
		{"no id, any id named", "", renamed, nil},
		{"no id, another key", "", other, ErrBadSignature},
		{"with id, its document", "lrs-1", mine, nil},
		{"with id, another id named", "lrs-1", renamed, ErrUnknownKey},
		{"with id, another key", "lrs-1", other, ErrUnknownKey},
	}
	for _, tt := range tests {
		keys, err := ParsePublicKeyPEM(p, tt.keyID)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Verify(tt.doc, keys)
		if !errors.Is(err, tt.want) || (err == nil && res.KeyID == "") {
			t.Errorf("%s: %+v, %v; want %v", tt.name, res, err, tt.want)
		}
	}
	if _, err := ParsePublicKeyPEM([]byte("no key here"), ""); err == nil {
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

// FuzzSignVerify: whatever Sign accepts verifies, also re-canonicalized;
// Verify never panics and fails only with its own errors.
func FuzzSignVerify(f *testing.F) {
	for _, s := range []string{`{"a":1}`, "{}\n", `{"\u0073ignature":1}`, `{"b":{"a":[1,"\u00e9"]},"a":-0}`, `[1]`} {
		f.Add([]byte(s))
	}
	keys := testSet("k1")
	f.Fuzz(func(t *testing.T, doc []byte) {
		if _, err := Verify(doc, keys); err == nil {
			t.Fatalf("an unsigned fuzz input verified: %q", doc)
		} else if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrNoSignature) && !errors.Is(err, ErrUnsupported) &&
			!errors.Is(err, ErrUnknownKey) && !errors.Is(err, ErrBadSignature) {
			t.Fatalf("Verify(%q): %v", doc, err)
		}
		signed, err := Sign(doc, "k1", testKey(1))
		if err != nil {
			return
		}
		if _, err := Verify(signed, keys); err != nil {
			t.Fatalf("Sign(%q) = %q does not verify: %v", doc, signed, err)
		}
		canonical, err := Canonicalize(signed)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(canonical, keys); err != nil {
			t.Fatalf("canonical form %q does not verify: %v", canonical, err)
		}
	})
}

// pdfWith writes a one-page PDF with fpdf carrying atts.
func pdfWith(t *testing.T, compress bool, atts ...fpdf.Attachment) []byte {
	t.Helper()
	f := fpdf.New("P", "mm", "Letter", "")
	f.SetCompression(compress)
	f.AddPage()
	f.SetAttachments(atts)
	var buf bytes.Buffer
	if err := f.Output(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFromPDF: the .json file a PDF made with fpdf carries comes back
// whole and verifies; another attachment, even one holding JSON, is not
// taken for it; a PDF without a .json attachment is ErrNoAttachment.
func TestFromPDF(t *testing.T) {
	signed, _ := Sign(sampleDoc(t), "k1", testKey(1))
	decoy := fpdf.Attachment{Content: []byte(`{"not":"the report"}`), Filename: "notes.txt"}
	tests := []struct {
		name     string
		compress bool
		atts     []fpdf.Attachment
		want     []byte
		err      error
	}{
		{"compressed", true, []fpdf.Attachment{decoy, {Content: signed, Filename: "report.json"}}, signed, nil},
		{"uncompressed", false, []fpdf.Attachment{decoy, {Content: signed, Filename: "report.json"}}, signed, nil},
		// Parentheses and a backslash are escaped in the PDF string,
		// and the name is UTF-16 there.
		{"name with escapes", true, []fpdf.Attachment{{Content: signed, Filename: `relatório (1)\x.JSON`}}, signed, nil},
		{"no .json attachment", true, []fpdf.Attachment{decoy}, nil, ErrNoAttachment},
		{"no attachment", true, nil, nil, ErrNoAttachment},
	}
	for _, tt := range tests {
		got, err := FromPDF(pdfWith(t, tt.compress, tt.atts...))
		if !errors.Is(err, tt.err) || !bytes.Equal(got, tt.want) {
			t.Errorf("%s: %d bytes, %v; want %d bytes, %v", tt.name, len(got), err, len(tt.want), tt.err)
			continue
		}
		if tt.want != nil {
			if _, err := Verify(got, testSet("k1")); err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
		}
	}
	if _, err := FromPDF([]byte("{}")); err == nil {
		t.Error("read a PDF out of JSON")
	}
}

// bigDoc is a document shaped like a full report, about 45 kB: the
// summary, then per-module indicators, each object's members in the order
// of a Go struct (not sorted, so the canonicalizer has to reorder them),
// numbers with fractions, strings with HTML escapes as json.Marshal writes.
func bigDoc(b *testing.B) []byte {
	doc := bytes.TrimSuffix(sampleDoc(b), []byte("}\n"))
	doc = append(doc, `,"modules":[`...)
	for i := 0; len(doc) < 45<<10; i++ {
		if i > 0 {
			doc = append(doc, ',')
		}
		doc = fmt.Appendf(doc, `{"module":"m%d","score":%d,"weight":%.4f,"indicators":[`, i, i%100, float64(i)/97)
		for j := range 4 {
			if j > 0 {
				doc = append(doc, ',')
			}
			doc = fmt.Appendf(doc, `{"name":"indicator %d.%d","value":%g,"percentile":%.3f,"unit":"per 100k","source":"FEMA NRI \u003cv1.20\u003e","missing":false}`,
				i, j, float64(i*j)*1.37e-3, float64(j)/7)
		}
		doc = append(doc, `]}`...)
	}
	return append(doc, "]}\n"...)
}

// BenchmarkSign signs a document of the size of a full report, as the
// server does on every request.
func BenchmarkSign(b *testing.B) {
	doc := bigDoc(b)
	key := testKey(1)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Sign(doc, "k1", key); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonicalize is the canonicalizer alone on that document.
func BenchmarkCanonicalize(b *testing.B) {
	doc := bigDoc(b)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Canonicalize(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeAny is what a canonicalizer built on encoding/json would
// spend before writing a byte: decoding the document into map[string]any
// (numbers kept as text). It is the floor of that design, to compare with
// BenchmarkCanonicalize.
func BenchmarkDecodeAny(b *testing.B) {
	doc := bigDoc(b)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		d := json.NewDecoder(bytes.NewReader(doc))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			b.Fatal(err)
		}
	}
}
