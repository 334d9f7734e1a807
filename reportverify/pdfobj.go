package reportverify

// A small reader of PDF objects (ISO 32000-1, 7.2-7.5): enough to find a
// report's attachment and to walk its pages however a tool rewrote the
// file (keys reordered, indirect lengths, object streams, incremental
// updates), with the standard library only. It does not render anything
// and reads no cross-reference table: objects are found by scanning the
// file, a later definition of an object replacing an earlier one as an
// incremental update does.

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// PDF object kinds: nil is null; bool; float64 for every number;
// pdfName; pdfString; []any for arrays; pdfDict; pdfRef; *pdfStream.
type (
	pdfName   string
	pdfString []byte
	pdfDict   map[pdfName]any
	pdfRef    struct{ num, gen int }
	pdfStream struct {
		dict pdfDict
		raw  []byte // the bytes between "stream" and "endstream", still encoded
	}
)

// Limits on what a hostile file can make the reader do.
const (
	maxPDFObjects = 1 << 20
	maxPDFDepth   = 64
	maxInflated   = 16 << 20 // any one stream, decoded
)

// pdfFile is a parsed PDF: its objects by number, and its trailers in file
// order (a "trailer" dictionary or a cross-reference stream's).
type pdfFile struct {
	src      []byte
	objects  map[int]any
	trailers []pdfDict
	// linearized: the first object is a linearization dictionary, whose
	// file has two trailers without being an update.
	linearized bool
	// decoded keeps each stream's data once decoded: every page's digest
	// reads the same fonts.
	decoded map[*pdfStream][]byte
}

var errNotPDF = errors.New("reportverify: not a PDF file")

// parsePDF reads every indirect object of src.
func parsePDF(src []byte) (*pdfFile, error) {
	if !bytes.HasPrefix(src, []byte("%PDF-")) {
		return nil, errNotPDF
	}
	f := &pdfFile{src: src, objects: map[int]any{}}
	first := true
	// next finds the next keyword at or after i; the positions found are
	// kept while they lie ahead, so the scan stays linear.
	nextAt, nextTr := -1, -1
	next := func(cached *int, i int, kw string) int {
		if *cached >= i || *cached == len(src) {
			return *cached
		}
		if k := bytes.Index(src[i:], []byte(kw)); k >= 0 {
			*cached = i + k
		} else {
			*cached = len(src)
		}
		return *cached
	}
	for i := 0; i < len(src); {
		at, tr := next(&nextAt, i, "obj"), next(&nextTr, i, "trailer")
		if at == len(src) && tr == len(src) {
			break
		}
		if tr < at {
			p := &lexer{src: src, pos: tr + len("trailer")}
			if d, ok := p.object(0).(pdfDict); ok && p.err == nil {
				f.trailers = append(f.trailers, d)
				i = p.pos
			} else {
				i = tr + len("trailer")
			}
			continue
		}
		// The generation number does not matter: a later definition of
		// an object number replaces an earlier one, whatever its
		// generation, as the last cross-reference section would.
		num, _, ok := objectHeader(src, at)
		if !ok || (at+3 < len(src) && !isDelimOrSpace(src[at+3])) {
			i = at + 3
			continue
		}
		p := &lexer{src: src, pos: at + 3}
		v := p.object(0)
		if p.err != nil {
			i = at + 3
			continue
		}
		if len(f.objects) >= maxPDFObjects {
			return nil, errors.New("reportverify: the PDF has too many objects")
		}
		f.objects[num] = v
		if s, ok := v.(*pdfStream); ok {
			switch s.dict["Type"] {
			case pdfName("ObjStm"):
				f.readObjectStream(s)
			case pdfName("XRef"):
				f.trailers = append(f.trailers, s.dict)
			}
		}
		if d, ok := v.(pdfDict); ok && first {
			_, f.linearized = d["Linearized"]
		}
		first = false
		i = p.pos
	}
	if len(f.objects) == 0 {
		return nil, errors.New("reportverify: the PDF has no objects")
	}
	return f, nil
}

// objectHeader reads "num gen" before the "obj" keyword at at.
func objectHeader(src []byte, at int) (num, gen int, ok bool) {
	j := at
	field := func() (int, bool) {
		for j > 0 && isSpace(src[j-1]) {
			j--
		}
		end := j
		for j > 0 && src[j-1] >= '0' && src[j-1] <= '9' {
			j--
		}
		if j == end || end-j > 10 {
			return 0, false
		}
		n, err := strconv.Atoi(string(src[j:end]))
		return n, err == nil
	}
	if j == 0 || !isSpace(src[j-1]) {
		return 0, 0, false
	}
	if gen, ok = field(); !ok {
		return 0, 0, false
	}
	if num, ok = field(); !ok || num <= 0 {
		return 0, 0, false
	}
	return num, gen, j == 0 || isSpace(src[j-1])
}

// readObjectStream adds the objects an object stream holds (7.5.7).
func (f *pdfFile) readObjectStream(s *pdfStream) {
	data, err := f.decode(s)
	if err != nil {
		return
	}
	n, _ := f.resolve(s.dict["N"]).(float64)
	first, _ := f.resolve(s.dict["First"]).(float64)
	if n <= 0 || first <= 0 || int(first) > len(data) {
		return
	}
	head := &lexer{src: data[:int(first)]}
	for k := 0; k < int(n); k++ {
		num, ok1 := head.object(0).(float64)
		off, ok2 := head.object(0).(float64)
		if !ok1 || !ok2 || head.err != nil {
			return
		}
		p := &lexer{src: data, pos: int(first) + int(off), noStreams: true}
		if v := p.object(0); p.err == nil && len(f.objects) < maxPDFObjects {
			f.objects[int(num)] = v
		}
	}
}

// resolve follows references (a missing object is null).
func (f *pdfFile) resolve(v any) any {
	for k := 0; k < 32; k++ {
		r, ok := v.(pdfRef)
		if !ok {
			return v
		}
		v = f.objects[r.num]
	}
	return nil
}

// trailerEntry is key of the file's last trailer that has it: a reader
// starts from the last one, and a linearized file's last trailer leaves
// /Root and /Info to the first-page trailer at its start.
func (f *pdfFile) trailerEntry(key pdfName) any {
	for i := len(f.trailers) - 1; i >= 0; i-- {
		if v, ok := f.trailers[i][key]; ok {
			return v
		}
	}
	return nil
}

// catalog is the document catalog: the last trailer's /Root, or else the
// last object of /Type /Catalog.
func (f *pdfFile) catalog() (pdfDict, pdfRef, bool) {
	if r, ok := f.trailerEntry("Root").(pdfRef); ok {
		if d, ok := f.objects[r.num].(pdfDict); ok {
			return d, r, true
		}
	}
	best := -1
	for num, v := range f.objects {
		if d, ok := v.(pdfDict); ok && d["Type"] == pdfName("Catalog") && num > best {
			best = num
		}
	}
	if best < 0 {
		return nil, pdfRef{}, false
	}
	return f.objects[best].(pdfDict), pdfRef{num: best}, true
}

// updates counts the incremental updates appended to the file: trailers
// that point to an earlier one (/Prev), less the one a linearized file
// has by construction.
func (f *pdfFile) updates() int {
	n := 0
	for _, t := range f.trailers {
		if _, ok := t["Prev"]; ok {
			n++
		}
	}
	if f.linearized && n > 0 {
		n--
	}
	return n
}

// decode returns a stream's data with its filters undone. Only
// /FlateDecode without a predictor is supported: what fpdf writes and what
// rewriting tools keep or produce for such content.
func (f *pdfFile) decode(s *pdfStream) ([]byte, error) {
	if data, ok := f.decoded[s]; ok {
		return data, nil
	}
	data, err := f.decodeStream(s)
	if err == nil {
		if f.decoded == nil {
			f.decoded = map[*pdfStream][]byte{}
		}
		f.decoded[s] = data
	}
	return data, err
}

func (f *pdfFile) decodeStream(s *pdfStream) ([]byte, error) {
	data := s.raw
	if n, ok := f.resolve(s.dict["Length"]).(float64); ok && n >= 0 && int(n) <= len(data) {
		data = data[:int(n)]
	} else {
		// A wrong or missing length: up to "endstream", less the end of
		// line before it.
		data = bytes.TrimRight(data, "\r\n")
	}
	var filters []any
	switch fl := f.resolve(s.dict["Filter"]).(type) {
	case nil:
	case pdfName:
		filters = []any{fl}
	case []any:
		filters = fl
	default:
		return nil, errors.New("a malformed /Filter")
	}
	if parms := f.resolve(s.dict["DecodeParms"]); parms != nil {
		if d, ok := parms.(pdfDict); !ok || len(d) > 0 {
			return nil, errors.New("stream decode parameters (a predictor) are not supported")
		}
	}
	for _, fl := range filters {
		if f.resolve(fl) != pdfName("FlateDecode") {
			return nil, fmt.Errorf("stream filter %v is not supported", fl)
		}
		zr, err := zlib.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		out, err := io.ReadAll(io.LimitReader(zr, maxInflated+1))
		if err != nil {
			return nil, err
		}
		if len(out) > maxInflated {
			return nil, fmt.Errorf("a stream larger than %d bytes decoded", maxInflated)
		}
		data = out
	}
	return data, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func isDelimOrSpace(c byte) bool { return isSpace(c) || isDelim(c) }

// lexer reads objects from src at pos; err is the first error met.
type lexer struct {
	src       []byte
	pos       int
	err       error
	noStreams bool // inside an object stream, which holds no streams
}

func (p *lexer) fail(format string, args ...any) any {
	if p.err == nil {
		p.err = fmt.Errorf("offset %d: "+format, append([]any{p.pos}, args...)...)
	}
	return nil
}

// skip passes white space and comments.
func (p *lexer) skip() {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case isSpace(c):
			p.pos++
		case c == '%':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' && p.src[p.pos] != '\r' {
				p.pos++
			}
		default:
			return
		}
	}
}

// token reads a run of regular characters.
func (p *lexer) token() []byte {
	start := p.pos
	for p.pos < len(p.src) && !isDelimOrSpace(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// object reads one object; a dictionary followed by "stream" is a
// stream, and an integer followed by "gen R" a reference.
func (p *lexer) object(depth int) any {
	if depth > maxPDFDepth {
		return p.fail("objects nested too deep")
	}
	p.skip()
	if p.pos >= len(p.src) {
		return p.fail("unexpected end")
	}
	switch c := p.src[p.pos]; {
	case c == '/':
		p.pos++
		return pdfName(decodeName(p.token()))
	case c == '(':
		s, n, ok := literalStringAt(p.src[p.pos:])
		if !ok {
			return p.fail("an unterminated string")
		}
		p.pos += n
		return pdfString(s)
	case c == '<' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '<':
		p.pos += 2
		d := pdfDict{}
		for {
			p.skip()
			if p.pos+1 < len(p.src) && p.src[p.pos] == '>' && p.src[p.pos+1] == '>' {
				p.pos += 2
				break
			}
			k, ok := p.object(depth + 1).(pdfName)
			if !ok || p.err != nil {
				return p.fail("a dictionary key that is not a name")
			}
			v := p.object(depth + 1)
			if p.err != nil {
				return nil
			}
			d[k] = v
		}
		return p.streamAfter(d)
	case c == '<':
		end := bytes.IndexByte(p.src[p.pos:], '>')
		if end < 0 {
			return p.fail("an unterminated hex string")
		}
		s := decodeHex(p.src[p.pos+1 : p.pos+end])
		p.pos += end + 1
		return pdfString(s)
	case c == '[':
		p.pos++
		var a []any
		for {
			p.skip()
			if p.pos < len(p.src) && p.src[p.pos] == ']' {
				p.pos++
				return a
			}
			v := p.object(depth + 1)
			if p.err != nil {
				return nil
			}
			a = append(a, v)
		}
	case isDelim(c):
		return p.fail("unexpected %q", c)
	}
	tok := p.token()
	switch string(tok) {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	x, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return p.fail("unexpected %q", tok)
	}
	// "num gen R"?
	if isInteger(tok) {
		save := p.pos
		p.skip()
		gen := p.token()
		p.skip()
		if isInteger(gen) && p.pos < len(p.src) && p.src[p.pos] == 'R' &&
			(p.pos+1 == len(p.src) || isDelimOrSpace(p.src[p.pos+1])) {
			p.pos++
			g, _ := strconv.Atoi(string(gen))
			return pdfRef{num: int(x), gen: g}
		}
		p.pos = save
	}
	return x
}

// streamAfter reads the stream data after dictionary d, if the keyword
// "stream" follows it (7.3.8).
func (p *lexer) streamAfter(d pdfDict) any {
	if p.noStreams {
		return d
	}
	save := p.pos
	p.skip()
	if !bytes.HasPrefix(p.src[p.pos:], []byte("stream")) {
		p.pos = save
		return d
	}
	p.pos += len("stream")
	if bytes.HasPrefix(p.src[p.pos:], []byte("\r\n")) {
		p.pos += 2
	} else if p.pos < len(p.src) && (p.src[p.pos] == '\n' || p.src[p.pos] == '\r') {
		p.pos++
	}
	start := p.pos
	// A direct length, where it lands on "endstream", bounds the data;
	// otherwise the next "endstream" does.
	if n, ok := d["Length"].(float64); ok && n >= 0 && start+int(n) <= len(p.src) {
		q := &lexer{src: p.src, pos: start + int(n)}
		q.skip()
		if bytes.HasPrefix(p.src[q.pos:], []byte("endstream")) {
			p.pos = q.pos + len("endstream")
			return &pdfStream{dict: d, raw: p.src[start : start+int(n)]}
		}
	}
	end := bytes.Index(p.src[start:], []byte("endstream"))
	if end < 0 {
		return p.fail("a stream without endstream")
	}
	p.pos = start + end + len("endstream")
	return &pdfStream{dict: d, raw: p.src[start : start+end]}
}

func isInteger(tok []byte) bool {
	if len(tok) == 0 {
		return false
	}
	for _, c := range tok {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// decodeName undoes a name's #xx escapes (7.3.5).
func decodeName(b []byte) string {
	if bytes.IndexByte(b, '#') < 0 {
		return string(b)
	}
	var out []byte
	for i := 0; i < len(b); i++ {
		if b[i] == '#' && i+2 < len(b) {
			if v, err := strconv.ParseUint(string(b[i+1:i+3]), 16, 8); err == nil {
				out = append(out, byte(v))
				i += 2
				continue
			}
		}
		out = append(out, b[i])
	}
	return string(out)
}

// decodeHex reads a hex string's digits, white space ignored and an odd
// last digit followed by 0 (7.3.4.3).
func decodeHex(b []byte) []byte {
	var out []byte
	var hi byte
	half := false
	for _, c := range b {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			continue
		}
		if half {
			out = append(out, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		out = append(out, hi<<4)
	}
	return out
}
