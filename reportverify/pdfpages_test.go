package reportverify

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"codeberg.org/go-pdf/fpdf"
)

// unsignedPDF makes a three-page PDF the way the service renders one:
// doc attached, the keywords holding the placeholder. Each page says its
// number and a score, so a test can change one.
func unsignedPDF(t *testing.T, compress bool, doc []byte) []byte {
	t.Helper()
	f := fpdf.New("P", "mm", "Letter", "")
	f.SetCompression(compress)
	f.SetFont("Helvetica", "", 12)
	for i := 1; i <= 3; i++ {
		f.AddPage()
		f.Text(20, 20, fmt.Sprintf("Page %d: overall score 72 / High", i))
		f.Link(20, 30, 40, 10, f.AddLink())
		f.Bookmark(fmt.Sprintf("Section %d", i), 0, 0)
	}
	f.SetAttachments([]fpdf.Attachment{{Content: doc, Filename: "report.json"}})
	f.SetKeywords(PagesSignaturePlaceholder(f.PageCount()), false)
	var buf bytes.Buffer
	if err := f.Output(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// signedPDF is unsignedPDF of a signed sample report, then SignPDF, as
// the service serves it.
func signedPDF(t *testing.T, compress bool) (pdf, doc []byte) {
	t.Helper()
	doc, err := Sign(sampleDoc(t), "k1", testKey(1))
	if err != nil {
		t.Fatal(err)
	}
	raw := unsignedPDF(t, compress, doc)
	out, err := SignPDF(raw, "k1", testKey(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(raw) {
		t.Fatalf("SignPDF changed the length: %d -> %d", len(raw), len(out))
	}
	return out, doc
}

// incrementalUpdate appends an update (ISO 32000-1, 7.5.6) that redefines
// object num as a new uncompressed stream with content, with its own
// cross-reference section and a trailer pointing to the previous one.
func incrementalUpdate(t *testing.T, pdf []byte, num int, content string) []byte {
	t.Helper()
	prev := bytes.LastIndex(pdf, []byte("startxref"))
	start := strings.Fields(string(pdf[prev+len("startxref"):]))[0]
	trailer := pdf[bytes.LastIndex(pdf, []byte("trailer")):prev]
	root := strings.Fields(string(trailer[bytes.Index(trailer, []byte("/Root")):]))[1]
	info := strings.Fields(string(trailer[bytes.Index(trailer, []byte("/Info")):]))[1]
	size := strings.Fields(string(trailer[bytes.Index(trailer, []byte("/Size")):]))[1]
	out := append(bytes.Clone(pdf), '\n')
	at := len(out)
	out = fmt.Appendf(out, "%d 0 obj\n<< /Length %d >>\nstream\n%s\nendstream\nendobj\n", num, len(content), content)
	xref := len(out)
	out = fmt.Appendf(out, "xref\n%d 1\n%010d 00000 n \ntrailer\n<< /Size %s /Root %s 0 R /Info %s 0 R /Prev %s >>\nstartxref\n%d\n%%%%EOF\n",
		num, at, size, root, info, start, xref)
	return out
}

// pageContentObject is the object number of page n's content stream.
func pageContentObject(t *testing.T, pdf []byte, n int) int {
	t.Helper()
	f, err := parsePDF(pdf)
	if err != nil {
		t.Fatal(err)
	}
	cat, _, _ := f.catalog()
	pages, _, err := f.pageList(cat)
	if err != nil {
		t.Fatal(err)
	}
	ref, ok := f.objects[pages[n-1].num].(pdfDict)["Contents"].(pdfRef)
	if !ok {
		t.Fatal("page has no content reference")
	}
	return ref.num
}

// TestVerifyPDF: a PDF as signed verifies whole; a changed page, an
// incremental update, a removed attachment, a swapped attachment and a
// PDF without a page signature each fail with their reason.
func TestVerifyPDF(t *testing.T) {
	keys := testSet("k1")
	for _, compress := range []bool{true, false} {
		pdf, doc := signedPDF(t, compress)
		res, err := VerifyPDF(pdf, keys)
		if err != nil {
			t.Fatalf("compress %v: %v", compress, err)
		}
		if res.Pages != 3 || res.PagesKeyID != "k1" || res.JSON.KeyID != "k1" || !bytes.Equal(res.Attachment, doc) {
			t.Errorf("compress %v: %+v", compress, res)
		}
	}

	pdf, _ := signedPDF(t, false)
	other, err := Sign(bytes.Replace(sampleDoc(t), []byte(`"overallScore":72`), []byte(`"overallScore":12`), 1), "k1", testKey(1))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func([]byte) []byte
		err  error
		says string
	}{
		{"a page's text changed", func(b []byte) []byte {
			return bytes.Replace(b, []byte("Page 2: overall score 72 / High"), []byte("Page 2: overall score 12 / Low!"), 1)
		}, ErrPagesChanged, "page 2 differs"},
		{"an incremental update changes page 1", func(b []byte) []byte {
			return incrementalUpdate(t, b, pageContentObject(t, b, 1), "BT /F1 12 Tf 56 735 Td (12 / Very low) Tj ET")
		}, ErrUpdated, "1 update"},
		{"the attachment removed", func(b []byte) []byte {
			return bytes.Replace(b, []byte("/EmbeddedFiles"), []byte("/EmbeddedFilez"), 1)
		}, ErrNoAttachment, ""},
		{"the keywords removed", func(b []byte) []byte {
			return bytes.Replace(b, []byte("/Keywords"), []byte("/Keyworxs"), 1)
		}, ErrPagesUnsigned, "keywords"},
		{"a hint forged", func(b []byte) []byte {
			i := bytes.Index(b, []byte(" p="))
			out := bytes.Clone(b)
			out[i+3] ^= 1
			return bytes.Replace(out, []byte("Page 3: overall score 72"), []byte("Page 3: overall score 73"), 1)
		}, ErrPagesChanged, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := VerifyPDF(tt.edit(pdf), keys)
			if !errors.Is(err, tt.err) || !strings.Contains(fmt.Sprint(err), tt.says) {
				t.Fatalf("got %v, want %v saying %q", err, tt.err, tt.says)
			}
		})
	}

	// Another report's signed JSON in place of the attachment: the JSON
	// verifies on its own, the pages are not its pages.
	swapped := func() []byte {
		b := unsignedPDF(t, false, other)
		// The signature of the first PDF's pages, copied across.
		kw := func(b []byte) []byte {
			i := bytes.Index(b, []byte(PagesSignatureTag))
			return b[i : i+len(PagesSignaturePlaceholder(3))]
		}
		return bytes.Replace(b, kw(b), kw(pdf), 1)
	}()
	if _, err := VerifyPDF(swapped, keys); !errors.Is(err, ErrPagesChanged) || !strings.Contains(err.Error(), "attached JSON") {
		t.Errorf("swapped attachment: %v", err)
	}
	if _, err := VerifyPDF(pdf, testSet("k2")); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown key: %v", err)
	}
}

// TestVerifyPDFAfterQpdf: qpdf's rewrites that keep what the file holds
// (objects renumbered, streams recompressed or stored, object streams,
// linearized) keep verifying; dropping a page does not.
func TestVerifyPDFAfterQpdf(t *testing.T) {
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("needs qpdf")
	}
	keys := testSet("k1")
	pdf, _ := signedPDF(t, true)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pdf")
	if err := os.WriteFile(in, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		err  error
		says string
	}{
		{"rewritten", nil, nil, ""},
		{"object streams", []string{"--object-streams=generate"}, nil, ""},
		{"streams stored", []string{"--stream-data=uncompress"}, nil, ""},
		{"linearized", []string{"--linearize"}, nil, ""},
		{"qdf", []string{"--qdf"}, nil, ""},
		{"a page dropped", []string{"--pages", in, "1,3", "--"}, ErrPagesChanged, "2 pages where 3"},
		{"a page rotated", []string{"--rotate=+90:2"}, ErrPagesChanged, "page 2 differs"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprintf("out%d.pdf", i))
			args := append(append([]string{in}, tt.args...), out)
			if b, err := exec.Command("qpdf", args...).CombinedOutput(); err != nil {
				// Exit status 3 is success with warnings.
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
					t.Fatalf("qpdf %v: %v\n%s", args, err, b)
				}
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			_, err = VerifyPDF(b, keys)
			if tt.err == nil && err != nil || tt.err != nil && (!errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.says)) {
				t.Fatalf("got %v, want %v saying %q", err, tt.err, tt.says)
			}
			if doc, err := FromPDF(b); err != nil {
				t.Errorf("the attachment after qpdf: %v", err)
			} else if _, err := Verify(doc, keys); err != nil {
				t.Errorf("the attachment after qpdf: %v", err)
			}
		})
	}
}

// FuzzVerifyPDF: whatever the bytes, reading a PDF, its attachment and
// its pages' digests returns or fails; it never panics or hangs.
func FuzzVerifyPDF(f *testing.F) {
	t := &testing.T{}
	pdf, _ := signedPDF(t, false)
	f.Add(pdf)
	compressed, _ := signedPDF(t, true)
	f.Add(compressed)
	f.Add([]byte("%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [2 0 R] >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n"))
	keys := testSet("k1")
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = VerifyPDF(b, keys)
		_, _ = FromPDF(b)
	})
}

// BenchmarkSignPDF is what signing a PDF's pages adds to serving one.
func BenchmarkSignPDF(b *testing.B) {
	t := &testing.T{}
	pdf, _ := signedPDF(t, true)
	// Back to the placeholder, as the renderer leaves it.
	i := bytes.Index(pdf, []byte(PagesSignatureTag))
	copy(pdf[i:], PagesSignaturePlaceholder(3))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SignPDF(pdf, "k1", testKey(1)); err != nil {
			b.Fatal(err)
		}
	}
}
