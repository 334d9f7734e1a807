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
	p := parser{src: doc}
	v, err := p.document()
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(doc))
	return v.appendCanonical(out), nil
}

// value is a parsed JSON value: one of the kinds below.
type value struct {
	kind    byte   // 'o' object, 'a' array, 's' string, 'n' number, 't' true, 'f' false, 'z' null
	str     []byte // a string's content, escapes resolved (often a slice of the source)
	num     float64
	members []member // objects, in source order until sorted
	items   []value
}

type member struct {
	name []byte
	val  value
}

// appendCanonical writes v in canonical form.
func (v *value) appendCanonical(b []byte) []byte {
	switch v.kind {
	case 'o': // members sorted by the parser
		b = append(b, '{')
		for i := range v.members {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, v.members[i].name)
			b = append(b, ':')
			b = v.members[i].val.appendCanonical(b)
		}
		return append(b, '}')
	case 'a':
		b = append(b, '[')
		for i := range v.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = v.items[i].appendCanonical(b)
		}
		return append(b, ']')
	case 's':
		return appendString(b, v.str)
	case 'n':
		return appendNumber(b, v.num)
	case 't':
		return append(b, "true"...)
	case 'f':
		return append(b, "false"...)
	default:
		return append(b, "null"...)
	}
}

// compareUTF16 orders member names as RFC 8785 section 3.2.3 does: by
// their UTF-16 code units, which differs from byte (code point) order only
// where a name holds characters beyond U+FFFF beside ones from U+E000.
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
	// Back up to the start of the runes that differ and compare those
	// runes' code units.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	ua, ub := utf16Units(ra), utf16Units(rb)
	for k := 0; k < len(ua) && k < len(ub); k++ {
		if ua[k] != ub[k] {
			return int(ua[k]) - int(ub[k])
		}
	}
	return len(ua) - len(ub)
}

func utf16Units(r rune) []uint16 {
	if r >= 0x10000 {
		hi, lo := utf16.EncodeRune(r)
		return []uint16{uint16(hi), uint16(lo)}
	}
	return []uint16{uint16(r)}
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
	// Shortest round-trip digits and the decimal exponent: "d.ddde±XX".
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], x, 'e', -1, 64)
	mark := bytes.IndexByte(e, 'e')
	digits := make([]byte, 0, 17)
	digits = append(digits, e[0])
	if mark > 1 {
		digits = append(digits, e[2:mark]...)
	}
	exp, _ := strconv.Atoi(string(e[mark+1:]))
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

// parser reads one JSON document (RFC 8259) strictly.
type parser struct {
	src   []byte
	i     int
	depth int
}

func (p *parser) fail(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrMalformed, p.i, fmt.Sprintf(format, args...))
}

func (p *parser) document() (value, error) {
	if !utf8.Valid(p.src) {
		return value{}, fmt.Errorf("%w: not valid UTF-8", ErrMalformed)
	}
	v, err := p.value()
	if err != nil {
		return value{}, err
	}
	p.space()
	if p.i != len(p.src) {
		return value{}, p.fail("data after the document")
	}
	return v, nil
}

func (p *parser) space() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value() (value, error) {
	p.space()
	if p.i >= len(p.src) {
		return value{}, p.fail("unexpected end")
	}
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.string()
		return value{kind: 's', str: s}, err
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case bytes.HasPrefix(p.src[p.i:], []byte("true")):
		p.i += 4
		return value{kind: 't'}, nil
	case bytes.HasPrefix(p.src[p.i:], []byte("false")):
		p.i += 5
		return value{kind: 'f'}, nil
	case bytes.HasPrefix(p.src[p.i:], []byte("null")):
		p.i += 4
		return value{kind: 'z'}, nil
	default:
		return value{}, p.fail("unexpected %q", c)
	}
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.fail("nested deeper than %d", maxDepth)
	}
	return nil
}

func (p *parser) object() (value, error) {
	if err := p.enter(); err != nil {
		return value{}, err
	}
	defer func() { p.depth-- }()
	p.i++ // {
	v := value{kind: 'o'}
	p.space()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		return v, nil
	}
	for {
		p.space()
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			return value{}, p.fail("want a member name")
		}
		name, err := p.string()
		if err != nil {
			return value{}, err
		}
		p.space()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return value{}, p.fail("want ':'")
		}
		p.i++
		val, err := p.value()
		if err != nil {
			return value{}, err
		}
		v.members = append(v.members, member{name, val})
		p.space()
		if p.i >= len(p.src) {
			return value{}, p.fail("unexpected end in an object")
		}
		switch p.src[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			// Sorted once here, so a duplicate name is found beside its
			// twin and the document is written in order later.
			slices.SortFunc(v.members, func(x, y member) int { return compareUTF16(x.name, y.name) })
			for k := 1; k < len(v.members); k++ {
				if bytes.Equal(v.members[k-1].name, v.members[k].name) {
					return value{}, p.fail("duplicate member %q", v.members[k].name)
				}
			}
			return v, nil
		default:
			return value{}, p.fail("want ',' or '}'")
		}
	}
}

func (p *parser) array() (value, error) {
	if err := p.enter(); err != nil {
		return value{}, err
	}
	defer func() { p.depth-- }()
	p.i++ // [
	v := value{kind: 'a', items: []value{}}
	p.space()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		return v, nil
	}
	for {
		item, err := p.value()
		if err != nil {
			return value{}, err
		}
		v.items = append(v.items, item)
		p.space()
		if p.i >= len(p.src) {
			return value{}, p.fail("unexpected end in an array")
		}
		switch p.src[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return v, nil
		default:
			return value{}, p.fail("want ',' or ']'")
		}
	}
}

// string reads a string, p.i at its opening quote, and returns its
// content with the escapes resolved.
func (p *parser) string() ([]byte, error) {
	p.i++ // "
	start := p.i
	// The common case: no escapes.
	for p.i < len(p.src) {
		c := p.src[p.i]
		if c == '"' {
			s := p.src[start:p.i:p.i]
			p.i++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return nil, p.fail("control character in a string")
		}
		p.i++
	}
	out := append([]byte(nil), p.src[start:p.i]...)
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '"':
			p.i++
			return out, nil
		case c < 0x20:
			return nil, p.fail("control character in a string")
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.src) {
			break
		}
		e := p.src[p.i+1]
		p.i += 2
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
			r, err := p.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				// A high surrogate must be followed by an escaped low one.
				if r >= 0xDC00 || p.i+1 >= len(p.src) || p.src[p.i] != '\\' || p.src[p.i+1] != 'u' {
					return nil, p.fail("lone surrogate \\u%04x", r)
				}
				p.i += 2
				lo, err := p.hex4()
				if err != nil {
					return nil, err
				}
				if lo < 0xDC00 || lo > 0xDFFF {
					return nil, p.fail("lone surrogate \\u%04x", r)
				}
				r = utf16.DecodeRune(r, lo)
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, p.fail("unknown escape \\%c", e)
		}
	}
	return nil, p.fail("unterminated string")
}

func (p *parser) hex4() (rune, error) {
	if p.i+4 > len(p.src) {
		return 0, p.fail("short \\u escape")
	}
	var r rune
	for _, c := range p.src[p.i : p.i+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, p.fail("bad \\u escape")
		}
		r = r<<4 | rune(d)
	}
	p.i += 4
	return r, nil
}

// number reads a number with RFC 8259's grammar and keeps the nearest
// double, as RFC 8785 requires.
func (p *parser) number() (value, error) {
	start := p.i
	if p.src[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	if n := digits(); n == 0 || (n > 1 && p.src[intStart] == '0') {
		return value{}, p.fail("bad number")
	}
	if p.i < len(p.src) && p.src[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return value{}, p.fail("bad number")
		}
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		p.i++
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return value{}, p.fail("bad number")
		}
	}
	x, err := strconv.ParseFloat(string(p.src[start:p.i]), 64)
	if err != nil || math.IsInf(x, 0) {
		return value{}, p.fail("number %s does not fit a double", p.src[start:p.i])
	}
	return value{kind: 'n', num: x}, nil
}
