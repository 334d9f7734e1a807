package reportverify

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrMalformed: the document is not JSON as RFC 8785 accepts it (a syntax
// error, a duplicate member name, invalid UTF-8, a lone surrogate, a
// number a double cannot hold, data after the value).
var ErrMalformed = errors.New("reportverify: malformed JSON")

// maxDepth bounds nesting, so that a hostile document cannot exhaust the
// stack; a report is a few levels deep.
const maxDepth = 64

// Canonicalize returns the RFC 8785 (JSON Canonicalization Scheme) form of
// doc: no whitespace; object members sorted by their names compared as
// UTF-16 code units; strings with only the escapes the scheme requires;
// numbers as ECMAScript writes the nearest IEEE 754 double.
func Canonicalize(doc []byte) ([]byte, error) {
	s := scanner{src: doc}
	if err := s.document(); err != nil {
		return nil, err
	}
	return s.out, nil
}

// scanner writes the canonical form of src in one pass, without building
// a tree: each value is written to out as it is read, and an object's
// members, once all are written, are put in order by moving their bytes.
// A report of 45 kB is signed on every request, so this is measured
// (BenchmarkCanonicalize, on 2 busy cores): about twice as fast as the
// tree of values it replaced, with 14 allocations instead of about 2,000,
// and faster than decoding into map[string]any alone (BenchmarkDecodeAny).
type scanner struct {
	src   []byte
	i     int
	depth int
	out   []byte
	// members holds the spans of the members of every object being read,
	// innermost last; an object uses the part from where it began.
	members []span
	// scratch is where members are copied while being reordered.
	scratch []byte
	// tmp is where a string with escapes is decoded; names keeps the
	// member names that had escapes (rare), which must outlive the next
	// string.
	tmp, names []byte

	// cut, when set, is a member of the top-level object to leave out of
	// out; its canonical value goes to cutValue, and cutFound says it was
	// there. This is how the signature member is set apart.
	cut      string
	cutFound bool
	cutValue []byte
}

// span is one member written to out: where its decoded name is (in src,
// or in names when it had escapes), and where its bytes ("name":value, no
// comma) begin and end in out. Offsets rather than slices: spans are
// sorted, and moving values without pointers is cheaper for the runtime.
type span struct {
	nameStart, nameEnd int
	inNames            bool
	start, end         int
}

func (s *scanner) name(m span) []byte {
	if m.inNames {
		return s.names[m.nameStart:m.nameEnd]
	}
	return s.src[m.nameStart:m.nameEnd]
}

func (s *scanner) fail(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrMalformed, s.i, fmt.Sprintf(format, args...))
}

func (s *scanner) document() error {
	// Checked once up front, so that strings can be copied through as
	// bytes; utf8.Valid also refuses encoded surrogates.
	if !utf8.Valid(s.src) {
		return fmt.Errorf("%w: not valid UTF-8", ErrMalformed)
	}
	if s.out == nil {
		// The canonical form is rarely longer than the source.
		s.out = make([]byte, 0, len(s.src)+16)
	}
	if err := s.value(); err != nil {
		return err
	}
	s.space()
	if s.i != len(s.src) {
		return s.fail("data after the document")
	}
	return nil
}

func (s *scanner) space() {
	for s.i < len(s.src) {
		switch s.src[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) value() error {
	s.space()
	if s.i >= len(s.src) {
		return s.fail("unexpected end")
	}
	switch c := s.src[s.i]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		str, _, err := s.string()
		if err != nil {
			return err
		}
		s.out = appendString(s.out, str)
		return nil
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(s.src[s.i:], []byte(lit)) {
			s.i += len(lit)
			s.out = append(s.out, lit...)
			return nil
		}
	}
	return s.fail("unexpected %q", s.src[s.i])
}

func (s *scanner) enter() error {
	s.depth++
	if s.depth > maxDepth {
		return s.fail("nested deeper than %d", maxDepth)
	}
	return nil
}

func (s *scanner) object() error {
	if err := s.enter(); err != nil {
		return err
	}
	top := s.depth == 1
	defer func() { s.depth-- }()
	s.i++ // {
	s.out = append(s.out, '{')
	first := len(s.out) // where the first member begins
	base := len(s.members)
	defer func() { s.members = s.members[:base] }()
	s.space()
	if s.i < len(s.src) && s.src[s.i] == '}' {
		s.i++
		s.out = append(s.out, '}')
		return nil
	}
	cutAt := -1 // the cut member's index among this object's, if here
	for {
		s.space()
		if s.i >= len(s.src) || s.src[s.i] != '"' {
			return s.fail("want a member name")
		}
		if len(s.members) > base {
			s.out = append(s.out, ',')
		}
		start := len(s.out)
		name, decoded, err := s.string()
		if err != nil {
			return err
		}
		m := span{start: start, nameStart: s.i - 1 - len(name), nameEnd: s.i - 1}
		if decoded {
			// Decoded into the reused buffer: keep a copy until the
			// object is sorted.
			m.inNames, m.nameStart = true, len(s.names)
			s.names = append(s.names, name...)
			m.nameEnd = len(s.names)
		}
		s.out = appendString(s.out, name)
		s.space()
		if s.i >= len(s.src) || s.src[s.i] != ':' {
			return s.fail("want ':'")
		}
		s.i++
		s.out = append(s.out, ':')
		valueAt := len(s.out)
		if err := s.value(); err != nil {
			return err
		}
		// name may be gone (s.tmp is reused by the strings of the
		// value); s.name(m) is where it was kept.
		if top && s.cut != "" && string(s.name(m)) == s.cut {
			cutAt = len(s.members) - base
			s.cutFound = true
			s.cutValue = append([]byte(nil), s.out[valueAt:]...)
		}
		m.end = len(s.out)
		s.members = append(s.members, m)
		s.space()
		if s.i >= len(s.src) {
			return s.fail("unexpected end in an object")
		}
		switch s.src[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return s.closeObject(first, base, cutAt)
		default:
			return s.fail("want ',' or '}'")
		}
	}
}

// closeObject puts the members written since first in RFC 8785's order
// (leaving out the cut member, if cutAt says where it is), refuses a
// duplicate name, and writes the closing brace.
func (s *scanner) closeObject(first, base, cutAt int) error {
	ms := s.members[base:]
	cmp := func(x, y span) int { return compareUTF16(s.name(x), s.name(y)) }
	if cutAt < 0 && slices.IsSortedFunc(ms, cmp) {
		// The usual case for a document written with sorted members:
		// nothing moves.
		for k := 1; k < len(ms); k++ {
			if bytes.Equal(s.name(ms[k-1]), s.name(ms[k])) {
				return s.fail("duplicate member %q", s.name(ms[k]))
			}
		}
		s.out = append(s.out, '}')
		return nil
	}
	// The members' bytes go to scratch, and back to out in order.
	s.scratch = append(s.scratch[:0], s.out[first:]...)
	if cutAt >= 0 {
		ms = slices.Delete(ms, cutAt, cutAt+1)
	}
	slices.SortFunc(ms, cmp)
	s.out = s.out[:first]
	for k, m := range ms {
		if k > 0 {
			if bytes.Equal(s.name(ms[k-1]), s.name(m)) {
				return s.fail("duplicate member %q", s.name(m))
			}
			s.out = append(s.out, ',')
		}
		s.out = append(s.out, s.scratch[m.start-first:m.end-first]...)
	}
	if cutAt >= 0 && slices.ContainsFunc(ms, func(m span) bool { return string(s.name(m)) == s.cut }) {
		return s.fail("duplicate member %q", s.cut)
	}
	s.out = append(s.out, '}')
	return nil
}

func (s *scanner) array() error {
	if err := s.enter(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	s.i++ // [
	s.out = append(s.out, '[')
	s.space()
	if s.i < len(s.src) && s.src[s.i] == ']' {
		s.i++
		s.out = append(s.out, ']')
		return nil
	}
	for {
		if err := s.value(); err != nil {
			return err
		}
		s.space()
		if s.i >= len(s.src) {
			return s.fail("unexpected end in an array")
		}
		switch s.src[s.i] {
		case ',':
			s.i++
			s.out = append(s.out, ',')
		case ']':
			s.i++
			s.out = append(s.out, ']')
			return nil
		default:
			return s.fail("want ',' or ']'")
		}
	}
}

// string reads a string, s.i at its opening quote, and returns its
// content with the escapes resolved: a slice of src when it has none, else
// (decoded true) the text in s.tmp, valid until the next string.
func (s *scanner) string() (str []byte, decoded bool, err error) {
	s.i++ // "
	start := s.i
	// The common case: no escapes.
	for s.i < len(s.src) {
		c := s.src[s.i]
		if c == '"' {
			str := s.src[start:s.i:s.i]
			s.i++
			return str, false, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return nil, false, s.fail("control character in a string")
		}
		s.i++
	}
	out := append(s.tmp[:0], s.src[start:s.i]...)
	defer func() { s.tmp = out[:0] }()
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == '"':
			s.i++
			return out, true, nil
		case c < 0x20:
			return nil, false, s.fail("control character in a string")
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.src) {
			break
		}
		e := s.src[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, err := s.hex4()
			if err != nil {
				return nil, false, err
			}
			if utf16.IsSurrogate(r) {
				// A high surrogate must be followed by an escaped low one.
				if r >= 0xDC00 || s.i+1 >= len(s.src) || s.src[s.i] != '\\' || s.src[s.i+1] != 'u' {
					return nil, false, s.fail("lone surrogate \\u%04x", r)
				}
				s.i += 2
				lo, err := s.hex4()
				if err != nil {
					return nil, false, err
				}
				if lo < 0xDC00 || lo > 0xDFFF {
					return nil, false, s.fail("lone surrogate \\u%04x", r)
				}
				r = utf16.DecodeRune(r, lo)
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, false, s.fail("unknown escape \\%c", e)
		}
	}
	return nil, false, s.fail("unterminated string")
}

func (s *scanner) hex4() (rune, error) {
	if s.i+4 > len(s.src) {
		return 0, s.fail("short \\u escape")
	}
	var r rune
	for _, c := range s.src[s.i : s.i+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, s.fail("bad \\u escape")
		}
		r = r<<4 | rune(d)
	}
	s.i += 4
	return r, nil
}

// number reads a number with RFC 8259's grammar and writes the nearest
// double as ECMAScript would, as RFC 8785 requires.
func (s *scanner) number() error {
	start := s.i
	if s.src[s.i] == '-' {
		s.i++
	}
	digits := func() int {
		n := 0
		for s.i < len(s.src) && s.src[s.i] >= '0' && s.src[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	intStart := s.i
	n := digits()
	if n == 0 || (n > 1 && s.src[intStart] == '0') {
		return s.fail("bad number")
	}
	plain := true // an integer, no fraction or exponent
	if s.i < len(s.src) && s.src[s.i] == '.' {
		plain = false
		s.i++
		if digits() == 0 {
			return s.fail("bad number")
		}
	}
	if s.i < len(s.src) && (s.src[s.i] == 'e' || s.src[s.i] == 'E') {
		plain = false
		s.i++
		if s.i < len(s.src) && (s.src[s.i] == '+' || s.src[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return s.fail("bad number")
		}
	}
	lit := s.src[start:s.i]
	// An integer of up to 15 digits is a double exactly, and ECMAScript
	// writes it with its own digits (no leading zeros, which the grammar
	// already refuses): copied as it is, but for -0, which is 0.
	if plain && n <= 15 {
		if n == 1 && s.src[intStart] == '0' {
			s.out = append(s.out, '0')
		} else {
			s.out = append(s.out, lit...)
		}
		return nil
	}
	x, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || math.IsInf(x, 0) {
		return s.fail("number %s does not fit a double", lit)
	}
	s.out = appendNumber(s.out, x)
	return nil
}

// compareUTF16 orders member names as RFC 8785 section 3.2.3 does: by
// their UTF-16 code units. That is byte (code point) order except where
// a character beyond U+FFFF (a surrogate pair, D800..DFFF) meets one from
// U+E000 to U+FFFF, which UTF-16 puts after it.
func compareUTF16(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return len(a) - len(b)
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		return int(a[i]) - int(b[i])
	}
	// Back up to the start of the characters that differ (the same place
	// in both, as the bytes before are equal) and compare their first
	// code units; they differ, or the characters would be equal.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	return int(firstUnit(ra)) - int(firstUnit(rb))
}

// firstUnit is the first UTF-16 code unit of r.
func firstUnit(r rune) uint16 {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return uint16(hi)
	}
	return uint16(r)
}

// appendString writes s as RFC 8785 section 3.2.2.2 does: quotation mark
// and reverse solidus escaped, the controls U+0000..U+001F as \b \t \n \f
// \r or \u00xx (lowercase hex), everything else as it is.
func appendString(b []byte, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendNumber writes x as ECMAScript's Number::toString does (RFC 8785
// section 3.2.2.3): the shortest digits that read back as x, in plain
// notation from 1e-6 up to 1e21, else in exponent notation ("1e+21",
// "1.5e-7"); negative zero as 0.
func appendNumber(b []byte, x float64) []byte {
	if x == 0 {
		return append(b, '0')
	}
	if x < 0 {
		b = append(b, '-')
		x = -x
	}
	// strconv's shortest round-trip digits, "d.ddde±XX", are the digits
	// ECMAScript chooses (the shortest; of equals, the nearest to x).
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], x, 'e', -1, 64)
	mark := bytes.IndexByte(e, 'e')
	var dbuf [17]byte
	digits := append(dbuf[:0], e[0])
	if mark > 1 {
		digits = append(digits, e[2:mark]...)
	}
	exp := 0
	for _, c := range e[mark+2:] {
		exp = exp*10 + int(c-'0')
	}
	if e[mark+1] == '-' {
		exp = -exp
	}
	k, n := len(digits), exp+1 // x = 0.digits × 10^n
	switch {
	case k <= n && n <= 21:
		b = append(b, digits...)
		for range n - k {
			b = append(b, '0')
		}
	case 0 < n && n <= 21:
		b = append(b, digits[:n]...)
		b = append(b, '.')
		b = append(b, digits[n:]...)
	case -6 < n && n <= 0:
		b = append(b, '0', '.')
		for range -n {
			b = append(b, '0')
		}
		b = append(b, digits...)
	default:
		b = append(b, digits[0])
		if k > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if n-1 >= 0 {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(n-1), 10)
	}
	return b
}
