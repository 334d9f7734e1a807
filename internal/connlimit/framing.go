package connlimit

import "bytes"

// Request framing (RFC 9112). net/http reads the requests a
// client sends on a connection one after another, pipelined ones included,
// and answers each in order. Two things it does not do are done here, on
// the bytes of each connection as they arrive and before net/http reads
// them:
//
//   - A request with both Content-Length and Transfer-Encoding, or with
//     Transfer-Encoding in HTTP/1.0 (which RFC 9112 section 6.1 says to
//     treat as faulty framing), is refused. net/http (Go 1.26) drops
//     the Content-Length, reads the body as chunked and keeps the
//     connection for the next request. RFC 9112 section 6.1 lets a server
//     refuse such a request or read it by its Transfer-Encoding, and
//     either way requires it to close the connection after answering:
//     whatever sent the request (a proxy in front, typically) may have
//     framed it by its Content-Length, and then the bytes after the
//     chunked body are, for it, part of this request and, for net/http,
//     the next one (request smuggling). Refusing is the safer choice: the
//     request was meant to be read one way and would be read another, so
//     acting on it (queueing a job, using quota) could act on a request
//     nobody sent; and nothing of it, or after it, is read.
//
//     net/http has already removed Content-Length from the request when a
//     handler sees it, so the refusal is made here: in place of the empty
//     line that ends the request's head, net/http is handed a line that
//     is not a header field (refusedLine). net/http answers every request
//     before it on the connection, then refuses this one as malformed,
//     with its plain-text 400 and Connection: close, like its other
//     framing errors (docs/api.md, Errors), and closes the connection.
//     Close then lets the client read that answer (Listener.closeGently).
//
//   - CR and LF bytes before a request line are dropped: RFC 9112 section
//     2.2 says a server SHOULD ignore at least one empty line there. net/http
//     ignores them only after a POST; after any other request, a client
//     that ends its request with one more CRLF (as hand-written pipelined
//     requests often do) had its next request refused 400 and the
//     connection closed.
//
// To know where each request starts, the bytes are framed as net/http
// frames them: a body of Content-Length bytes, a chunked body (any
// Transfer-Encoding in HTTP/1.1: net/http refuses every one but chunked,
// and closes), or none. The two can differ only on bytes net/http refuses
// (a malformed request line, header, length or chunk, after which it
// closes the connection, or at least never reads another request on it);
// on those the framing here stops following (frameOff) and passes every
// further byte on unchanged. A connection whose first byte cannot start an
// HTTP/1 request (TLS, say) is never followed.

// refusedLine is what net/http reads in place of the empty line that ends
// a refused head: a line without a colon, which it refuses as a malformed
// header line. It starts with a letter, so it is never taken for the
// continuation of the field before it.
const refusedLine = "Refused-Faulty-Framing\r\n"

// frameState is where the framing is in a connection's bytes.
type frameState uint8

const (
	frameStart        frameState = iota // before a request line: CR and LF are dropped
	frameRequestLine                    // in the request line
	frameLineStart                      // at the start of a header line
	frameName                           // in a field name
	frameValue                          // in a field value
	frameHeadCR                         // after a CR at the start of a header line
	frameBody                           // in a body of known length: n bytes left
	frameChunkSize                      // in a chunk size: n so far
	frameChunkLine                      // in the rest of a chunk-size line
	frameChunkData                      // in a chunk's data: n bytes left
	frameChunkEnd                       // in the line end after a chunk's data
	frameTrailerStart                   // at the start of a trailer line
	frameTrailerLine                    // in a trailer line
	frameTrailerCR                      // after a CR at the start of a trailer line
	frameOff                            // not followed: bytes pass unchanged
	frameRefused                        // after a refused head: bytes are dropped
)

// fieldKind is what a header field is to the framing.
type fieldKind uint8

const (
	fieldOther fieldKind = iota
	fieldContentLength
	fieldTransferEncoding
)

// maxInt63 is the largest Content-Length net/http accepts.
const maxInt63 = 1<<63 - 1

// framing follows the requests on one connection (see above). Its zero
// value is at the start of a connection.
type framing struct {
	st     frameState
	n      uint64 // body or chunk bytes left; a chunk size being read
	digits int    // hex digits of the chunk size being read

	// The request line's last bytes, for its HTTP version.
	tail    [len("HTTP/1.1\r")]byte
	tailLen int

	// The head being read.
	http10  bool
	hasTE   bool // a Transfer-Encoding field
	hasCL   bool // a Content-Length field, valid or not
	clSet   bool // length holds the first valid Content-Length
	clBad   bool // a Content-Length net/http refuses
	length  uint64
	field   fieldKind // the field being read (a continuation line extends it)
	name    [len("transfer-encoding")]byte
	nameLen int // may pass len(name): then the name is none of those above
	value   lengthValue
}

// refused reports whether a head has been refused on the connection.
func (f *framing) refused() bool { return f.st == frameRefused }

// filter frames p, the bytes just read, in place: it drops what net/http is
// not to read and returns how many bytes are left at the start of p. When
// it refuses a head (refuse is true), the bytes left end just before the
// line that ended it; refusedLine is to follow them, and every later byte
// of the connection is dropped.
func (f *framing) filter(p []byte) (n int, refuse bool) {
	w := 0 // bytes kept so far, at the start of p
	for i := 0; i < len(p); {
		switch f.st {
		case frameOff:
			w += copy(p[w:], p[i:])
			return w, false
		case frameRefused:
			return w, false
		case frameBody, frameChunkData:
			k := min(f.n, uint64(len(p)-i))
			w += copy(p[w:], p[i:i+int(k)])
			i += int(k)
			if f.n -= k; f.n == 0 {
				if f.st == frameBody {
					f.st = frameStart
				} else {
					f.st = frameChunkEnd
				}
			}
			continue
		case frameRequestLine, frameValue, frameChunkLine, frameChunkEnd, frameTrailerLine:
			// Only the line's end matters here (and, of a request line,
			// its last bytes; of a Content-Length, each byte).
			if f.st == frameValue && f.field == fieldContentLength {
				break
			}
			k := bytes.IndexByte(p[i:], '\n')
			if k < 0 {
				k = len(p) - i
			}
			if f.st == frameRequestLine {
				for _, b := range p[i+max(k-len(f.tail), 0) : i+k] {
					f.addTail(b)
				}
			}
			w += copy(p[w:], p[i:i+k])
			if i += k; i == len(p) {
				continue
			}
		}
		b := p[i]
		i++
		keep, refuse := f.step(b)
		if refuse {
			f.st = frameRefused
			return w, true
		}
		if keep {
			p[w] = b
			w++
		}
	}
	return w, false
}

// step moves the framing over the byte b, outside a body or chunk's
// data. keep is false for a byte to drop; refuse is true when b ends the
// head of a request to refuse.
func (f *framing) step(b byte) (keep, refuse bool) {
	switch f.st {
	case frameStart:
		if b == '\r' || b == '\n' {
			return false, false
		}
		if !isTokenByte(b) { // no method starts so: not HTTP/1 (TLS, say)
			f.st = frameOff
			return true, false
		}
		*f = framing{st: frameRequestLine}
		f.addTail(b)
	case frameRequestLine:
		if b != '\n' {
			f.addTail(b)
			break
		}
		version := f.tail[:f.tailLen]
		if len(version) > 0 && version[len(version)-1] == '\r' {
			version = version[:len(version)-1]
		}
		version = version[max(len(version)-len("HTTP/1.1"), 0):]
		// HTTP/1.0 and HTTP/0.x ignore Transfer-Encoding; net/http reads
		// other versions as HTTP/1.1 (it refuses all but HTTP/1.x and
		// the "PRI * HTTP/2.0" a handler may take for HTTP/2), and
		// refuses what is not a version.
		if len(version) != len("HTTP/1.1") || string(version[:len("HTTP/")]) != "HTTP/" ||
			!isDigit(version[5]) || version[6] != '.' || !isDigit(version[7]) {
			f.st = frameOff
			return true, false
		}
		f.http10 = version[5] == '0' || string(version) == "HTTP/1.0"
		f.st = frameLineStart
	case frameLineStart:
		switch b {
		case '\r', '\n':
			f.endField()
			if f.hasTE && (f.hasCL || f.http10) {
				return false, true
			}
			if b == '\r' {
				f.st = frameHeadCR
			} else {
				f.endHead()
			}
		case ' ', '\t': // a continuation of the field before
			if f.nameLen == 0 { // there is none: net/http refuses the head
				f.st = frameOff
				break
			}
			f.value.add(' ')
			f.st = frameValue
		default:
			f.endField()
			f.nameLen = 0
			f.addName(b)
			f.st = frameName
		}
	case frameName:
		switch b {
		case ':':
			f.field = f.fieldKind()
			f.value = lengthValue{}
			if f.field == fieldTransferEncoding {
				f.hasTE = true
			}
			f.st = frameValue
		case '\n': // a line without a colon: net/http refuses the head
			f.st = frameOff
		default:
			f.addName(b)
		}
	case frameValue:
		if b == '\n' {
			f.st = frameLineStart
		} else if f.field == fieldContentLength {
			f.value.add(b)
		}
	case frameHeadCR:
		if b != '\n' { // a line starting with CR: net/http refuses the head
			f.st = frameOff
			break
		}
		f.endHead()
	case frameChunkSize:
		switch d := hexDigit(b); {
		case d >= 0 && f.digits < 16:
			f.n = f.n<<4 | uint64(d)
			f.digits++
		case d >= 0 || f.digits == 0: // too long, or no size: net/http refuses it
			f.st = frameOff
		case b == '\n':
			f.endChunkSize()
		default: // extensions and the CR: net/http ignores the one, needs the other
			f.st = frameChunkLine
		}
	case frameChunkLine:
		if b == '\n' {
			f.endChunkSize()
		}
	case frameChunkEnd:
		if b == '\n' {
			f.st, f.n, f.digits = frameChunkSize, 0, 0
		}
	case frameTrailerStart:
		switch b {
		case '\r':
			f.st = frameTrailerCR
		case '\n':
			f.st = frameStart
		default:
			f.st = frameTrailerLine
		}
	case frameTrailerLine:
		if b == '\n' {
			f.st = frameTrailerStart
		}
	case frameTrailerCR:
		if b != '\n' { // a trailer line starting with CR: net/http refuses it
			f.st = frameOff
			break
		}
		f.st = frameStart
	}
	return true, false
}

// endField ends the header field before a new line that does not continue
// it (or before the end of the head).
func (f *framing) endField() {
	if f.field != fieldContentLength {
		f.field = fieldOther
		return
	}
	f.field = fieldOther
	f.hasCL = true
	v, ok := f.value.get()
	switch {
	case !ok:
		f.clBad = true
	case !f.clSet:
		f.length, f.clSet = v, true
	case v != f.length: // net/http refuses two different lengths
		f.clBad = true
	}
}

// endHead frames the body of a head that is not refused.
func (f *framing) endHead() {
	switch {
	case f.hasTE && !f.http10:
		f.st, f.n, f.digits = frameChunkSize, 0, 0
	case f.clBad: // net/http refuses the request
		f.st = frameOff
	case f.clSet && f.length > 0:
		f.st, f.n = frameBody, f.length
	default:
		f.st = frameStart
	}
}

// endChunkSize ends a chunk-size line: the last chunk is followed by the
// trailer section.
func (f *framing) endChunkSize() {
	if f.n == 0 {
		f.st = frameTrailerStart
	} else {
		f.st = frameChunkData
	}
}

func (f *framing) addTail(b byte) {
	if f.tailLen == len(f.tail) {
		copy(f.tail[:], f.tail[1:])
		f.tailLen--
	}
	f.tail[f.tailLen] = b
	f.tailLen++
}

func (f *framing) addName(b byte) {
	if f.nameLen < len(f.name) {
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		f.name[f.nameLen] = b
	}
	f.nameLen++
}

// fieldKind is the kind of the field whose name has just been read; net/http
// compares names without regard to ASCII case.
func (f *framing) fieldKind() fieldKind {
	if f.nameLen > len(f.name) {
		return fieldOther
	}
	switch string(f.name[:f.nameLen]) {
	case "content-length":
		return fieldContentLength
	case "transfer-encoding":
		return fieldTransferEncoding
	}
	return fieldOther
}

// lengthValue reads a Content-Length value as net/http does: decimal
// digits, at most maxInt63, with white space around them.
type lengthValue struct {
	n  uint64
	st uint8 // 0 before the digits, 1 in them, 2 after them, 3 refused
}

func (v *lengthValue) add(b byte) {
	switch {
	case b == ' ' || b == '\t' || b == '\r':
		if v.st == 1 {
			v.st = 2
		}
	case '0' <= b && b <= '9' && v.st <= 1:
		d := uint64(b - '0')
		if v.n > (maxInt63-d)/10 {
			v.st = 3
			return
		}
		v.n, v.st = v.n*10+d, 1
	default:
		v.st = 3
	}
}

func (v *lengthValue) get() (uint64, bool) { return v.n, v.st == 1 || v.st == 2 }

// isTokenByte reports whether b may appear in an HTTP token (a method).
func isTokenByte(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	switch b {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

func hexDigit(b byte) int {
	switch {
	case '0' <= b && b <= '9':
		return int(b - '0')
	case 'a' <= b && b <= 'f':
		return int(b-'a') + 10
	case 'A' <= b && b <= 'F':
		return int(b-'A') + 10
	}
	return -1
}
