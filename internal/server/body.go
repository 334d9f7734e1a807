package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// Request bodies (docs/operations.md, Limits and defaults). A body is read once,
// up to maxBodyBytes, checked with json.Valid, and then walked in place:
// the handlers pick the members they know by name and never build a map of
// the others, so a 1 MiB body of 90,000 unknown keys costs its own bytes
// and no more. Members and array elements are sub-slices of the body.

// maxBodyBytes is the largest request body accepted (docs/api.md, Report
// jobs).
const maxBodyBytes = 1 << 20

// A body must arrive within DefaultBodyTime plus its length at
// minBodyRate, counted from its request's authentication (docs/operations.md,
// Limits and defaults): 5 s for a small body, 21 s for 1 MiB or a body of
// undeclared length. A slow body holds a slot of the requests in flight
// and its account's share of them; without this only the server's 30 s
// ReadTimeout, counted from the first byte of the request, ended it.
const (
	DefaultBodyTime = 5 * time.Second
	minBodyRate     = 64 << 10 // bytes per second
)

// limitBodyTime sets the connection's read deadline for r's body and
// returns it (zero for a request without a body); a large body's wait for
// its turn to be parsed ends there too (bodyTurn). The deadline is lifted
// again once the body is read (readBody): an expired read deadline while
// the handler still works would cancel r's context.
func (s *Server) limitBodyTime(w http.ResponseWriter, r *http.Request) time.Time {
	if r.ContentLength == 0 {
		return time.Time{}
	}
	n := r.ContentLength
	if n < 0 || n > maxBodyBytes {
		n = maxBodyBytes
	}
	deadline := time.Now().Add(s.bodyTime + time.Duration(n)*time.Second/minBodyRate)
	// Not every ResponseWriter has a connection (httptest's recorder); the
	// server's ReadTimeout still bounds the body then.
	_ = http.NewResponseController(w).SetReadDeadline(deadline)
	return deadline
}

// A body the handler leaves unread (every GET's, and a body refused before
// it is read: a bad key, a bad path id) is read and dropped before the
// answer goes out (drainBody). Otherwise net/http answers and then closes
// the connection with the body still coming, unread (it discards at most
// 256 KiB itself, and nothing after Connection: close), and the client's
// kernel, reset by the server's, throws away the part of the answer not
// yet read: a GET with a large body and Connection: close lost the end of
// a 195 KB report after about 120 KB.

// countingBody is a request body that counts what has been read of it and
// remembers how reading it ended.
type countingBody struct {
	io.ReadCloser
	n   int64
	err error // io.EOF once read to the end; the error that stopped it
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if err != nil && b.err == nil {
		b.err = err
	}
	return n, err
}

// drainBody reads and drops the rest of r's body (body is r's body, as
// the middleware wrapped it) before the answer's status line, within the
// body's time (limitBodyTime) and up to maxBodyBytes in all. A body it
// cannot drain (declared or found longer than that, too slow, broken) is
// left, and the answer says Connection: close; so does an answer that
// refuses a body unread on purpose (429 too_many_requests_in_flight), and
// a client waiting for 100 Continue has not sent its body at all.
func (s *Server) drainBody(w http.ResponseWriter, r *http.Request, body *countingBody) {
	h := w.Header()
	switch {
	case body.err == io.EOF || h.Get("Connection") == "close":
		return
	case body.n == 0 && r.Header.Get("Expect") != "":
		return
	case body.err != nil || r.ContentLength > maxBodyBytes || body.n > maxBodyBytes:
		h.Set("Connection", "close")
		return
	}
	s.limitBodyTime(w, r)
	_, err := io.CopyN(io.Discard, body, maxBodyBytes+1-body.n)
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	if err != io.EOF {
		h.Set("Connection", "close")
	}
}

// readObject reads the request body, which must be declared as JSON
// (checkJSONContentType) and be exactly one JSON object of at most
// maxBodyBytes, and returns it without surrounding whitespace.
func readObject(w http.ResponseWriter, r *http.Request) (json.RawMessage, error) {
	if err := checkJSONContentType(r); err != nil {
		return nil, err
	}
	body, err := readBody(w, r)
	if err != nil {
		return nil, err
	}
	return readObjectFrom(body)
}

// maxShownContentType is how much of a refused Content-Type the message
// repeats.
const maxShownContentType = 100

// checkJSONContentType refuses, with 415 unsupported_media_type, a body
// declared as something other than JSON (docs/api.md, Errors): a form
// (what curl -d sends unless told otherwise), plain text, multipart. JSON
// is application/json or any application/...+json, with any parameters
// (charset=utf-8), in any case. A request without a Content-Type (or with
// an empty one) declares nothing and is read as JSON: many clients leave
// it out. A Content-Type given twice must say JSON both times. The check
// comes before the body is read, so the body's own faults (413, 400) are
// answered only for a body declared as JSON.
func checkJSONContentType(r *http.Request) error {
	for _, ct := range r.Header.Values("Content-Type") {
		ct = strings.TrimSpace(ct)
		if ct == "" {
			continue
		}
		// A malformed parameter still leaves the media type: a JSON body
		// declared with a broken charset is read like any other.
		mt, _, err := mime.ParseMediaType(ct)
		if (err == nil || errors.Is(err, mime.ErrInvalidMediaParameter)) && isJSONMediaType(mt) {
			continue
		}
		shown := ct
		if len(shown) > maxShownContentType {
			shown = shown[:maxShownContentType] + "..."
		}
		msg := fmt.Sprintf("the request body was sent as Content-Type: %q, which is not JSON; send a JSON object with Content-Type: application/json", shown)
		if mt == "application/x-www-form-urlencoded" {
			msg += " (curl -d sends a form unless told otherwise: add -H 'Content-Type: application/json')"
		}
		return &Error{Code: codeUnsupportedMediaType, Message: msg}
	}
	return nil
}

// isJSONMediaType reports whether mt, a media type as mime.ParseMediaType
// returns it (lower case, no parameters), is JSON: application/json or a
// structured syntax suffix +json (application/merge-patch+json).
func isJSONMediaType(mt string) bool {
	sub, ok := strings.CutPrefix(mt, "application/")
	return ok && (sub == "json" || (strings.HasSuffix(sub, "+json") && len(sub) > len("+json")))
}

// readObjectFrom is readObject over a body already read.
func readObjectFrom(body []byte) (json.RawMessage, error) {
	body = bytes.Trim(body, " \t\r\n")
	if len(body) == 0 || body[0] != '{' {
		return nil, errorf(codeInvalidRequest, "the request body must be a JSON object")
	}
	// encoding/json would read invalid UTF-8 as U+FFFD, so a string (an
	// externalId above all) would not come back exactly as it was sent
	// (docs/api.md, Create a batch).
	if !utf8.Valid(body) {
		return nil, errorf(codeInvalidRequest, "the request body is not valid UTF-8")
	}
	if !json.Valid(body) {
		// Only a refused body pays for the decoder's description of the
		// fault; an empty struct keeps no member of it.
		var detail struct{}
		err := json.Unmarshal(body, &detail)
		return nil, errorf(codeInvalidRequest, "the request body is not valid JSON: %v", err)
	}
	return body, nil
}

// readBody reads at most maxBodyBytes of r's body. A declared length over
// the limit is refused before anything is read; a declared length within
// it sizes the buffer exactly. A body longer than bigBody then waits for
// its turn to be parsed (inflight.go, bodyTurns), held until the handler
// has picked its fields out (bodyParsed).
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	tooLarge := errorf(codePayloadTooLarge, "the request body is larger than %d bytes", maxBodyBytes)
	if r.ContentLength > maxBodyBytes {
		return nil, tooLarge
	}
	size := 512
	if r.ContentLength >= 0 {
		size = int(r.ContentLength) + 1 // +1: room to see EOF without growing
	}
	rd := http.MaxBytesReader(w, r.Body, maxBodyBytes)
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			_ = http.NewResponseController(w).SetReadDeadline(time.Time{}) // see limitBodyTime
			if in := infoOf(r); in != nil && len(buf) > bigBody {
				if err := in.turn.take(r.Context()); err != nil {
					return nil, err
				}
			}
			return buf, nil
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, tooLarge
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, errorf(codeInvalidRequest, "the request body did not arrive in time (%s, plus a second per %d KiB)",
					DefaultBodyTime, minBodyRate>>10)
			}
			return nil, errorf(codeInvalidRequest, "the request body could not be read")
		}
	}
}

// bodyParsed gives back r's turn to parse a large body (inflight.go,
// bodyTurns) once its handler has picked what it needs out of the body,
// before it waits for anything else (the database, a name lookup). The
// handler's end gives it back otherwise.
func bodyParsed(r *http.Request) {
	if in := infoOf(r); in != nil {
		in.turn.release()
	}
}

// field names a member to pick out of an object and where to put its raw
// value.
type field struct {
	name string
	dst  *json.RawMessage
}

// pickFields sets each field's dst to the value of the member of that name
// in obj, a JSON object that passed json.Valid; a name given twice takes
// its last value (as encoding/json does), an absent one leaves dst nil.
// Names match exactly, after JSON unescaping ("l\u0061titude" is latitude,
// "Latitude" is not).
func pickFields(obj json.RawMessage, fields ...field) {
	for key, val := range members(obj) {
		for _, f := range fields {
			if keyIs(key, f.name) {
				*f.dst = val
			}
		}
	}
}

// keyIs reports whether the raw (still escaped) key spells name. Only a
// key with an escape that could still be name is unescaped.
func keyIs(raw []byte, name string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == name
	}
	if len(raw) > 6*len(name) { // \uXXXX is the longest spelling of a character
		return false
	}
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	var key string
	return json.Unmarshal(quoted, &key) == nil && key == name
}

// members yields the raw key (without quotes, still escaped) and the raw
// value of every member of obj, a JSON object that passed json.Valid, in
// order.
func members(obj []byte) iter.Seq2[[]byte, json.RawMessage] {
	return func(yield func([]byte, json.RawMessage) bool) {
		i := skipSpace(obj, 1)
		for i < len(obj) && obj[i] == '"' {
			ke := stringEnd(obj, i)
			key := obj[i+1 : max(i+1, ke-1)]
			i = skipSpace(obj, ke)
			i = skipSpace(obj, i+1) // the colon
			ve := valueEnd(obj, i)
			if !yield(key, obj[i:ve]) {
				return
			}
			i = skipSpace(obj, ve)
			if i < len(obj) && obj[i] == ',' {
				i = skipSpace(obj, i+1)
			}
		}
	}
}

// elements yields every element of arr, a JSON array that passed
// json.Valid, in order.
func elements(arr []byte) iter.Seq[json.RawMessage] {
	return func(yield func(json.RawMessage) bool) {
		i := skipSpace(arr, 1)
		for i < len(arr) && arr[i] != ']' {
			ve := valueEnd(arr, i)
			if ve == i || !yield(arr[i:ve]) {
				return
			}
			i = skipSpace(arr, ve)
			if i < len(arr) && arr[i] == ',' {
				i = skipSpace(arr, i+1)
			}
		}
	}
}

// countElements is the number of elements of arr (as for elements).
func countElements(arr []byte) int {
	n := 0
	for range elements(arr) {
		n++
	}
	return n
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// stringEnd is the index just past the string that starts at b[i] == '"'.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd is the index just past the JSON value that starts at b[i]. The
// input is valid JSON, so brackets balance and strings end; the bounds
// checks only keep a misuse from panicking.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	// A number or a literal runs to the next delimiter.
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}
