package reportverify

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"strconv"
)

// ErrNoAttachment: the PDF carries no signed JSON.
var ErrNoAttachment = errors.New("reportverify: the PDF carries no embedded JSON report")

// maxAttachment bounds what FromPDF inflates: a report's JSON is about
// 50 kB.
const maxAttachment = 16 << 20

// FromPDF returns the JSON report a locrisk PDF carries as an embedded
// file: the first embedded file stream (/Type /EmbeddedFile, stored plain
// or with /FlateDecode) whose content is a JSON object.
func FromPDF(pdf []byte) ([]byte, error) {
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		return nil, errors.New("reportverify: not a PDF file")
	}
	rest := pdf
	for {
		i := bytes.Index(rest, []byte("/Type /EmbeddedFile"))
		if i < 0 {
			return nil, ErrNoAttachment
		}
		dictStart := bytes.LastIndex(rest[:i], []byte("<<"))
		streamAt := bytes.Index(rest[i:], []byte("stream"))
		if dictStart < 0 || streamAt < 0 {
			return nil, ErrNoAttachment
		}
		dict := rest[dictStart : i+streamAt]
		body := rest[i+streamAt+len("stream"):]
		// The keyword is followed by CRLF or LF (ISO 32000-1, 7.3.8.1).
		if bytes.HasPrefix(body, []byte("\r\n")) {
			body = body[2:]
		} else if bytes.HasPrefix(body, []byte("\n")) {
			body = body[1:]
		}
		rest = body
		n, ok := dictLength(dict)
		if !ok || n > len(body) {
			continue
		}
		data := body[:n]
		if bytes.Contains(dict, []byte("/FlateDecode")) {
			zr, err := zlib.NewReader(bytes.NewReader(data))
			if err != nil {
				continue
			}
			inflated, err := io.ReadAll(io.LimitReader(zr, maxAttachment+1))
			if err != nil || len(inflated) > maxAttachment {
				continue
			}
			data = inflated
		}
		if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
			return data, nil
		}
	}
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
