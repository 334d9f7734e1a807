package reportverify

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
)

// ErrNoAttachment: the PDF carries no embedded file named *.json.
var ErrNoAttachment = errors.New("reportverify: the PDF carries no embedded JSON report")

// maxAttachment bounds what FromPDF inflates: a report's JSON is about
// 50 kB, and a hostile PDF must not make it inflate gigabytes.
const maxAttachment = 16 << 20

// FromPDF returns the signed JSON report a locrisk PDF carries: the
// first document-level embedded file (the catalog's /EmbeddedFiles name
// tree) whose name ends in ".json", decoded.
//
// It reads the PDF's objects as they are, not the bytes fpdf happens to
// write, so a file rewritten by another tool (qpdf, a viewer's "save as":
// keys reordered, indirect lengths, object streams) still gives its
// attachment up, as long as the tool kept it and its streams use no
// filter but /FlateDecode.
func FromPDF(pdf []byte) ([]byte, error) {
	f, err := parsePDF(pdf)
	if err != nil {
		return nil, err
	}
	_, data, err := f.jsonAttachment()
	return data, err
}

// jsonAttachment finds the first embedded file whose name ends in ".json"
// and returns its name and data.
func (f *pdfFile) jsonAttachment() (string, []byte, error) {
	cat, _, ok := f.catalog()
	if !ok {
		return "", nil, ErrNoAttachment
	}
	names, _ := f.resolve(cat["Names"]).(pdfDict)
	var found []pdfDict
	f.nameTree(names["EmbeddedFiles"], 0, map[int]bool{}, &found)
	for _, spec := range found {
		name, ok := textString(f.resolve(spec["UF"]))
		if !ok {
			name, ok = textString(f.resolve(spec["F"]))
		}
		if !ok || !strings.HasSuffix(strings.ToLower(name), ".json") {
			continue
		}
		ef, _ := f.resolve(spec["EF"]).(pdfDict)
		stream, ok := f.resolve(ef["F"]).(*pdfStream)
		if !ok {
			if stream, ok = f.resolve(ef["UF"]).(*pdfStream); !ok {
				return name, nil, fmt.Errorf("reportverify: attachment %q: its file stream is missing", name)
			}
		}
		data, err := f.decode(stream)
		if err != nil {
			return name, nil, fmt.Errorf("reportverify: attachment %q: %w", name, err)
		}
		if len(data) > maxAttachment {
			return name, nil, fmt.Errorf("reportverify: attachment %q: larger than %d bytes", name, maxAttachment)
		}
		return name, data, nil
	}
	return "", nil, ErrNoAttachment
}

// nameTree collects the file specifications of a name tree's leaves
// (ISO 32000-1, 7.9.6), in key order as the tree gives them.
// Each node is read once, so a tree whose kids repeat cannot make the
// walk exponential.
func (f *pdfFile) nameTree(node any, depth int, seen map[int]bool, out *[]pdfDict) {
	if r, ok := node.(pdfRef); ok {
		if seen[r.num] {
			return
		}
		seen[r.num] = true
	}
	d, ok := f.resolve(node).(pdfDict)
	if !ok || depth > maxPDFDepth {
		return
	}
	if arr, ok := f.resolve(d["Names"]).([]any); ok {
		for i := 1; i < len(arr); i += 2 {
			if spec, ok := f.resolve(arr[i]).(pdfDict); ok {
				*out = append(*out, spec)
			}
		}
	}
	if kids, ok := f.resolve(d["Kids"]).([]any); ok {
		for _, k := range kids {
			f.nameTree(k, depth+1, seen, out)
		}
	}
}

// textString reads a PDF text string: UTF-16BE after a byte order mark,
// else one byte a character (PDFDocEncoding agrees with ASCII, all a name
// check needs).
func textString(v any) (string, bool) {
	raw, ok := v.(pdfString)
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

// literalStringAt decodes the PDF literal string at the start of b (its
// opening parenthesis): backslash escapes, octal codes and balanced
// parentheses (ISO 32000-1, 7.3.4.2). n is the bytes it took, the closing
// parenthesis included.
func literalStringAt(b []byte) (out []byte, n int, ok bool) {
	depth := 0
	for i := 1; i < len(b); i++ {
		c := b[i]
		switch c {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return out, i + 1, true
			}
			depth--
		case '\\':
			i++
			if i >= len(b) {
				return nil, 0, false
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
			case '\r':
				if i+1 < len(b) && b[i+1] == '\n' {
					i++
				}
				continue // a line continued
			case '\n':
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
	return nil, 0, false
}
