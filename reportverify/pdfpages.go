package reportverify

// The signature of a PDF's pages (docs/verification.md, "What a PDF's
// signature covers"). The JSON a PDF carries is signed on its own; what a
// reader of the PDF sees are the pages, so the service also signs a
// statement of them: the SHA-256 of each page's canonical form, of the
// document's catalog (outline, attachments, actions) and of the attached
// JSON. The canonical form is the object graph as PDF defines it, not the
// file's bytes: streams decoded, dictionary keys sorted, object numbers
// and file layout gone. So a tool that rewrites the file without changing
// what it holds (qpdf, which renumbers objects and recompresses streams)
// leaves the statement true, while any change to a page's text, drawing,
// fonts or links, an added or removed page, an incremental update or a
// stripped attachment makes it false, and the verifier says which.

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strconv"
	"strings"
)

// PagesSignatureTag opens the page signature in a PDF's /Keywords.
const PagesSignatureTag = "locrisk-pages-signature"

// maxKeyIDLen is the longest key id a page signature can name.
const maxKeyIDLen = 64

// pagesFieldWidth is the width of the field after the tag for a document
// of n pages: "v1 ", the key id, the 88 characters of the base64
// signature, then short digests ("d=" the catalog's, "a=" the
// attachment's, "p=" each page's, 8 hex digits each) that let a verifier
// say what changed, padded with spaces. A width fixed before signing lets
// SignPDF fill it in place.
func pagesFieldWidth(n int) int { return 3 + maxKeyIDLen + 1 + 88 + 3 + 8 + 3 + 8 + 3 + 9*n }

// PagesSignaturePlaceholder is the /Keywords text a PDF of n pages is
// rendered with for SignPDF to fill in: the tag and a field of dashes.
func PagesSignaturePlaceholder(n int) string {
	return PagesSignatureTag + " " + strings.Repeat("-", pagesFieldWidth(n))
}

// Errors of VerifyPDF about the pages; test them with errors.Is.
var (
	ErrPagesUnsigned = errors.New("reportverify: the PDF's pages carry no signature")
	ErrPagesChanged  = errors.New("reportverify: the PDF is not the document the service signed")
	ErrUpdated       = errors.New("reportverify: the PDF has an incremental update appended")
)

// PDFResult is what a successful VerifyPDF found.
type PDFResult struct {
	// JSON is the attachment's verification; Attachment its bytes.
	JSON       Result
	Attachment []byte
	// Pages is the number of pages; PagesKeyID the key that signed them.
	Pages      int
	PagesKeyID string
}

// pagesStatement is what the page signature signs: the digests of the
// attachment, the catalog and each page, one per line.
type pagesStatement struct {
	attachment, document [32]byte
	pages                [][32]byte
}

func (s pagesStatement) bytes() []byte {
	var b bytes.Buffer
	b.WriteString("locrisk-pdf-pages v1\n")
	fmt.Fprintf(&b, "attachment sha256 %x\n", s.attachment)
	fmt.Fprintf(&b, "document sha256 %x\n", s.document)
	fmt.Fprintf(&b, "pages %d\n", len(s.pages))
	for i, p := range s.pages {
		fmt.Fprintf(&b, "page %d sha256 %x\n", i+1, p)
	}
	return b.Bytes()
}

// SignPDF fills in the page signature of a PDF rendered with
// PagesSignaturePlaceholder(pages) as its keywords, in place (the file
// keeps its length and layout), signing with keyID's private key.
func SignPDF(pdf []byte, keyID string, priv ed25519.PrivateKey) ([]byte, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, errors.New("reportverify: not an Ed25519 private key")
	}
	if keyID == "" || len(keyID) > maxKeyIDLen || strings.ContainsFunc(keyID, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) {
		return nil, fmt.Errorf("reportverify: key id %q cannot be written in a PDF's keywords", keyID)
	}
	f, err := parsePDF(pdf)
	if err != nil {
		return nil, err
	}
	st, err := f.statement()
	if err != nil {
		return nil, err
	}
	placeholder := []byte(PagesSignaturePlaceholder(len(st.pages)))
	at := bytes.Index(pdf, placeholder)
	if at < 0 || bytes.Count(pdf, placeholder) != 1 {
		return nil, fmt.Errorf("reportverify: the PDF has no single page-signature placeholder for %s in its keywords", plural(len(st.pages), "page"))
	}
	field := "v1 " + keyID + " " + base64.StdEncoding.EncodeToString(ed25519.Sign(priv, st.bytes())) + " " + st.hints()
	width := pagesFieldWidth(len(st.pages))
	out := bytes.Clone(pdf)
	copy(out[at+len(PagesSignatureTag)+1:], field+strings.Repeat(" ", width-len(field)))
	return out, nil
}

// hints are the short digests written beside the signature.
func (s pagesStatement) hints() string {
	short := func(d [32]byte) string { return hex.EncodeToString(d[:4]) }
	p := make([]string, len(s.pages))
	for i, d := range s.pages {
		p[i] = short(d)
	}
	return "d=" + short(s.document) + " a=" + short(s.attachment) + " p=" + strings.Join(p, ",")
}

// VerifyPDF checks a locrisk PDF whole: the signature of the JSON it
// carries (Verify), and the signature of its pages, which binds every
// page, the catalog and that JSON. It fails with ErrUpdated when an
// incremental update was appended, ErrPagesUnsigned when the pages carry
// no signature (a PDF served before pages were signed, or one whose
// keywords a tool dropped), and ErrPagesChanged naming what differs.
func VerifyPDF(pdf []byte, keys KeySet) (PDFResult, error) {
	f, err := parsePDF(pdf)
	if err != nil {
		return PDFResult{}, err
	}
	_, doc, err := f.jsonAttachment()
	if err != nil {
		return PDFResult{}, err
	}
	res := PDFResult{Attachment: doc}
	if res.JSON, err = Verify(doc, keys); err != nil {
		return res, fmt.Errorf("the attached JSON: %w", err)
	}
	if n := f.updates(); n > 0 {
		return res, fmt.Errorf("%w (%s after the document was made); its pages may differ from those signed",
			ErrUpdated, plural(n, "update"))
	}
	keyID, sig, hints, err := f.pagesSignature()
	if err != nil {
		return res, err
	}
	k, ok := keys.lookup(keyID)
	if !ok {
		return res, fmt.Errorf("the pages: %w: %q", ErrUnknownKey, keyID)
	}
	st, err := f.statement()
	if err != nil {
		return res, fmt.Errorf("%w: %v", ErrPagesChanged, err)
	}
	res.Pages, res.PagesKeyID = len(st.pages), keyID
	msg := st.bytes()
	if ed25519.Verify(k.PublicKey, msg, sig) {
		return res, nil
	}
	return res, fmt.Errorf("%w: %s", ErrPagesChanged, whatDiffers(st, hints))
}

// whatDiffers explains a page signature that does not hold, from the
// short digests written beside it (which the signature does not cover:
// they only point to what changed, and a forged hint changes no verdict).
func whatDiffers(st pagesStatement, hints string) string {
	got := map[string]string{}
	for _, f := range strings.Fields(hints) {
		if k, v, ok := strings.Cut(f, "="); ok {
			got[k] = v
		}
	}
	short := func(d [32]byte) string { return hex.EncodeToString(d[:4]) }
	var what []string
	if v, ok := got["p"]; ok {
		was := strings.Split(v, ",")
		if len(was) != len(st.pages) {
			what = append(what, fmt.Sprintf("it has %d pages where %d were signed", len(st.pages), len(was)))
		}
		for i, d := range st.pages {
			if i < len(was) && was[i] != short(d) {
				what = append(what, fmt.Sprintf("page %d differs", i+1))
			}
		}
	}
	if v, ok := got["d"]; ok && v != short(st.document) {
		what = append(what, "the catalog (outline, attachments, actions) differs")
	}
	if v, ok := got["a"]; ok && v != short(st.attachment) {
		what = append(what, "the attached JSON is not the one signed with the pages")
	}
	if len(what) == 0 {
		return "its pages, catalog or attached JSON were changed since it was served (the page signature does not hold)"
	}
	return strings.Join(what, "; ")
}

// pagesSignature reads the key id, the signature and the short digests
// from the document's /Keywords (its information dictionary).
func (f *pdfFile) pagesSignature() (keyID string, sig []byte, hints string, err error) {
	info, _ := f.resolve(f.trailerEntry("Info")).(pdfDict)
	kw, _ := textString(f.resolve(info["Keywords"]))
	i := strings.Index(kw, PagesSignatureTag+" ")
	if i < 0 {
		return "", nil, "", fmt.Errorf("%w (no %q in its keywords): it was served before locrisk signed pages, or a tool dropped its keywords",
			ErrPagesUnsigned, PagesSignatureTag)
	}
	fields := strings.Fields(kw[i+len(PagesSignatureTag):])
	if len(fields) > 0 && strings.Trim(fields[0], "-") == "" {
		return "", nil, "", fmt.Errorf("%w (its placeholder was never filled in)", ErrPagesUnsigned)
	}
	if len(fields) < 3 || fields[0] != "v1" {
		return "", nil, "", fmt.Errorf("%w: the page signature in its keywords is not \"v1 <key id> <signature> ...\"", ErrPagesChanged)
	}
	sig, err = base64.StdEncoding.Strict().DecodeString(fields[2])
	if err != nil || len(sig) != ed25519.SignatureSize {
		return "", nil, "", fmt.Errorf("%w: the page signature is not a base64 Ed25519 signature", ErrPagesChanged)
	}
	return fields[1], sig, strings.Join(fields[3:], " "), nil
}

// statement computes the digests the page signature covers.
func (f *pdfFile) statement() (pagesStatement, error) {
	var st pagesStatement
	_, doc, err := f.jsonAttachment()
	if err != nil {
		return st, err
	}
	st.attachment = sha256.Sum256(doc)
	cat, catRef, ok := f.catalog()
	if !ok {
		return st, errors.New("the PDF has no catalog")
	}
	pages, nodes, err := f.pageList(cat)
	if err != nil {
		return st, err
	}
	index := make(map[int]int, len(pages))
	for i, p := range pages {
		index[p.num] = i
	}
	c := &canon{f: f, pages: index, nodes: nodes, self: -1}
	if st.document, err = c.digest(catRef, nil); err != nil {
		return st, fmt.Errorf("the catalog: %w", err)
	}
	for i, p := range pages {
		c.self = i
		d, err := c.digest(p, f.inherited(p))
		if err != nil {
			return st, fmt.Errorf("page %d: %w", i+1, err)
		}
		st.pages = append(st.pages, d)
	}
	return st, nil
}

// pageList is the document's pages in order, the leaves of the page
// tree, and the tree's inner nodes.
func (f *pdfFile) pageList(cat pdfDict) ([]pdfRef, map[int]bool, error) {
	root, ok := cat["Pages"].(pdfRef)
	if !ok {
		return nil, nil, errors.New("the catalog names no page tree")
	}
	var out []pdfRef
	seen := map[int]bool{}
	nodes := map[int]bool{}
	var walk func(r pdfRef, depth int) error
	walk = func(r pdfRef, depth int) error {
		if seen[r.num] || depth > maxPDFDepth {
			return errors.New("the page tree has a cycle")
		}
		seen[r.num] = true
		d, ok := f.objects[r.num].(pdfDict)
		if !ok {
			return fmt.Errorf("page tree object %d is missing", r.num)
		}
		kids, isNode := f.resolve(d["Kids"]).([]any)
		if !isNode || d["Type"] == pdfName("Page") {
			out = append(out, r)
			return nil
		}
		nodes[r.num] = true
		for _, k := range kids {
			kr, ok := k.(pdfRef)
			if !ok {
				return errors.New("the page tree has a direct kid")
			}
			if err := walk(kr, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return nil, nil, err
	}
	if len(out) == 0 {
		return nil, nil, errors.New("the PDF has no pages")
	}
	return out, nodes, nil
}

// inherited gives the attributes a page takes from its ancestors when it
// does not set them itself (ISO 32000-1, 7.7.3.4).
func (f *pdfFile) inherited(page pdfRef) pdfDict {
	d, _ := f.objects[page.num].(pdfDict)
	out := pdfDict{}
	for depth := 0; d != nil && depth < maxPDFDepth; depth++ {
		parent, ok := f.resolve(d["Parent"]).(pdfDict)
		if !ok {
			break
		}
		for _, k := range []pdfName{"Resources", "MediaBox", "CropBox", "Rotate"} {
			if _, own := f.objects[page.num].(pdfDict)[k]; own {
				continue
			}
			if _, got := out[k]; got {
				continue
			}
			if v, ok := parent[k]; ok {
				out[k] = v
			}
		}
		d = parent
	}
	return out
}

// canon writes the canonical form of an object graph into a hash: a
// tagged, length-prefixed encoding of each value, dictionaries with their
// keys sorted, streams decoded and without the keys that only say how
// they are stored, references followed (a repeated object as a back
// reference, a page other than the one digested as its page number, an
// inner node of the page tree as a mark: the tree is digested as its
// pages, with what they inherit from it), and no /Parent, which would
// pull in the whole tree.
type canon struct {
	f     *pdfFile
	pages map[int]int  // page object number -> page index
	nodes map[int]bool // the page tree's inner nodes
	self  int          // the page being digested; -1 for the catalog
	h     hash.Hash
	seen  map[int]int
	err   error
	buf   []byte
}

// storageKeys say how a stream is stored, not what it holds.
var storageKeys = map[pdfName]bool{"Length": true, "Filter": true, "DecodeParms": true, "DL": true}

func (c *canon) digest(root pdfRef, extra pdfDict) ([32]byte, error) {
	c.h, c.seen, c.err = sha256.New(), map[int]int{}, nil
	c.seen[root.num] = 0
	v := c.f.objects[root.num]
	if d, ok := v.(pdfDict); ok && len(extra) > 0 {
		merged := make(pdfDict, len(d)+len(extra))
		for k, x := range extra {
			merged[k] = x
		}
		for k, x := range d {
			merged[k] = x
		}
		v = merged
	}
	if d, ok := v.(pdfDict); ok && c.self < 0 {
		// The catalog: the page tree is digested page by page.
		v = withoutKey(d, "Pages")
	}
	c.value(v, 0)
	var out [32]byte
	copy(out[:], c.h.Sum(nil))
	return out, c.err
}

func withoutKey(d pdfDict, k pdfName) pdfDict {
	out := make(pdfDict, len(d))
	for key, v := range d {
		if key != k {
			out[key] = v
		}
	}
	return out
}

func (c *canon) tag(t byte, b []byte) {
	c.buf = append(c.buf[:0], t)
	c.buf = binary.AppendUvarint(c.buf, uint64(len(b)))
	c.h.Write(c.buf)
	c.h.Write(b)
}

func (c *canon) value(v any, depth int) {
	if c.err != nil {
		return
	}
	if depth > 4*maxPDFDepth {
		c.err = errors.New("objects nested too deep")
		return
	}
	switch x := v.(type) {
	case nil:
		c.tag('n', nil)
	case bool:
		c.tag('b', []byte(strconv.FormatBool(x)))
	case float64:
		c.tag('d', []byte(strconv.FormatFloat(x, 'f', -1, 64)))
	case pdfName:
		c.tag('/', []byte(x))
	case pdfString:
		c.tag('s', x)
	case []any:
		c.tag('[', []byte(strconv.Itoa(len(x))))
		for _, e := range x {
			c.value(e, depth+1)
		}
	case pdfDict:
		c.dict(x, nil, depth)
	case *pdfStream:
		data, err := c.f.decode(x)
		if err != nil {
			c.err = fmt.Errorf("a stream cannot be decoded: %w", err)
			return
		}
		c.dict(x.dict, storageKeys, depth)
		c.tag('S', data)
	case pdfRef:
		if i, ok := c.pages[x.num]; ok && i != c.self {
			c.tag('P', []byte(strconv.Itoa(i)))
			return
		}
		if c.nodes[x.num] {
			c.tag('T', nil)
			return
		}
		if i, ok := c.seen[x.num]; ok {
			c.tag('@', []byte(strconv.Itoa(i)))
			return
		}
		c.seen[x.num] = len(c.seen)
		c.value(c.f.objects[x.num], depth+1)
	default:
		c.err = fmt.Errorf("an object of unknown kind %T", v)
	}
}

func (c *canon) dict(d pdfDict, skip map[pdfName]bool, depth int) {
	keys := make([]pdfName, 0, len(d))
	for k := range d {
		if k != "Parent" && !skip[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	c.tag('<', []byte(strconv.Itoa(len(keys))))
	for _, k := range keys {
		c.tag('/', []byte(k))
		c.value(d[k], depth+1)
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
