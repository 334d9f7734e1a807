package reportverify

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
)

// ErrNoAttachment: the PDF carries no embedded file named *.json.
var ErrNoAttachment = errors.New("reportverify: the PDF carries no embedded JSON report")

// maxAttachment bounds what FromPDF inflates: a report's JSON is about
// 50 kB, and a hostile PDF must not make it inflate gigabytes.
const maxAttachment = 16 << 20

// FromPDF returns the signed JSON report a locrisk PDF carries: the
// first document-level embedded file whose name ends in ".json", inflated
// if it is stored with /FlateDecode.
//
// This reads the PDF as locrisk writes it (codeberg.org/go-pdf/fpdf's
// SetAttachments: a /Filespec dictionary with the name and an /EF
// reference to a stream object with a direct /Length), not any PDF: a
// general PDF parser would be far larger than the rest of this package,
// and a file rewritten by another tool (with object streams, say) may
// need extracting with that tool (qpdf --show-attachment, for one).
func FromPDF(pdf []byte) ([]byte, error) {
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		return nil, errors.New("reportverify: not a PDF file")
	}
	for rest := pdf; ; {
		i := bytes.Index(rest, []byte("/Type /Filespec"))
		if i < 0 {
			return nil, ErrNoAttachment
		}
		rest = rest[i+len("/Type /Filespec"):]
		dict := rest
		if end := bytes.Index(dict, []byte("endobj")); end >= 0 {
			dict = dict[:end]
		}
		name, ok := dictString(dict, "/UF")
		if !ok {
			name, ok = dictString(dict, "/F")
		}
		if !ok || !strings.HasSuffix(strings.ToLower(name), ".json") {
			continue
		}
		ef := bytes.Index(dict, []byte("/EF"))
		if ef < 0 {
			continue
		}
		obj, ok := dictRef(dict[ef+len("/EF"):], "/F")
		if !ok {
			continue
		}
		data, err := embeddedStream(pdf, obj)
		if err != nil {
			return nil, fmt.Errorf("reportverify: attachment %q: %w", name, err)
		}
		return data, nil
	}
}

// embeddedStream reads the content of stream object obj, an
// /EmbeddedFile, inflating it when it is flate-compressed.
func embeddedStream(pdf []byte, obj int) ([]byte, error) {
	head := []byte("\n" + strconv.Itoa(obj) + " 0 obj")
	at := bytes.Index(pdf, head)
	if at < 0 {
		return nil, fmt.Errorf("object %d not found", obj)
	}
	rest := pdf[at+len(head):]
	s := bytes.Index(rest, []byte("stream"))
	if s < 0 {
		return nil, fmt.Errorf("object %d is not a stream", obj)
	}
	dict, body := rest[:s], rest[s+len("stream"):]
	if !bytes.Contains(dict, []byte("/Type /EmbeddedFile")) {
		return nil, fmt.Errorf("object %d is not an embedded file", obj)
	}
	// The keyword is followed by CRLF or LF (ISO 32000-1, 7.3.8.1).
	if bytes.HasPrefix(body, []byte("\r\n")) {
		body = body[2:]
	} else if bytes.HasPrefix(body, []byte("\n")) {
		body = body[1:]
	}
	n, ok := dictLength(dict)
	if !ok || n > len(body) {
		return nil, fmt.Errorf("object %d has no direct /Length within the file", obj)
	}
	data := body[:n]
	if !bytes.Contains(dict, []byte("/FlateDecode")) {
		return data, nil
	}
	zr, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	inflated, err := io.ReadAll(io.LimitReader(zr, maxAttachment+1))
	if err != nil {
		return nil, err
	}
	if len(inflated) > maxAttachment {
		return nil, fmt.Errorf("larger than %d bytes inflated", maxAttachment)
	}
	return inflated, nil
}

// dictLength reads the direct /Length of a stream dictionary.
func dictLength(dict []byte) (int, bool) {
	i := bytes.Index(dict, []byte("/Length "))
	if i < 0 {
		return 0, false
	}
	s := dict[i+len("/Length "):]
	j := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	// An indirect length ("12 0 R") is not what locrisk writes.
	if j == 0 || bytes.HasPrefix(bytes.TrimLeft(s[j:], " "), []byte("0 R")) {
		return 0, false
	}
	n, err := strconv.Atoi(string(s[:j]))
	return n, err == nil
}

// dictRef reads "key N 0 R" in dict and returns N.
func dictRef(dict []byte, key string) (int, bool) {
	i := bytes.Index(dict, []byte(key+" "))
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(dict[i+len(key):])
	if len(f) < 3 || string(f[1]) != "0" || !bytes.HasPrefix(f[2], []byte("R")) {
		return 0, false
	}
	n, err := strconv.Atoi(string(f[0]))
	return n, err == nil && n > 0
}

// dictString reads the literal string value of key in dict, "(...)", as
// a PDF text string: UTF-16BE after a byte order mark, else one byte a
// character (PDFDocEncoding agrees with ASCII, all a name check needs).
func dictString(dict []byte, key string) (string, bool) {
	i := bytes.Index(dict, []byte(key+" ("))
	if i < 0 {
		return "", false
	}
	raw, ok := literalString(dict[i+len(key)+1:])
	if !ok {
		return "", false
	}
	if len(raw) >= 2 && raw[0] == 0xFE && raw[1] == 0xFF {
		units := make([]uint16, 0, len(raw)/2)
		for k := 2; k+1 < len(raw); k += 2 {
			units = append(units, uint16(raw[k])<<8|uint16(raw[k+1]))
		}
		return string(utf16.Decode(units)), true
	}
	return string(raw), true
}

// literalString decodes the PDF literal string at the start of b (its
// opening parenthesis): backslash escapes, octal codes and balanced
// parentheses (ISO 32000-1, 7.3.4.2).
func literalString(b []byte) ([]byte, bool) {
	var out []byte
	depth := 0
	for i := 1; i < len(b); i++ {
		c := b[i]
		switch c {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return out, true
			}
			depth--
		case '\\':
			i++
			if i >= len(b) {
				return nil, false
			}
			switch e := b[i]; e {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\n': // a line continued
				continue
			default:
				if e >= '0' && e <= '7' {
					v := 0
					for k := 0; k < 3 && i < len(b) && b[i] >= '0' && b[i] <= '7'; k++ {
						v = v*8 + int(b[i]-'0')
						i++
					}
					i--
					c = byte(v)
				} else {
					c = e // \( \) \\ and unknown escapes stand for the character
				}
			}
		}
		out = append(out, c)
	}
	return nil, false
}
