package pdf

import (
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
)

// The Go fonts cover WGL4 (Latin with all European accents, Greek,
// Cyrillic, common punctuation and symbols). Report text is free-form, so a
// rune the fonts lack is replaced by a close stand-in instead of printing
// an empty box; the fpdf width tables also only index the BMP.
var (
	glyphsOnce sync.Once
	glyphs     []bool // by rune, BMP only; true when every font has a glyph
)

func loadGlyphs() {
	glyphs = make([]bool, 0x10000)
	for i := range glyphs {
		glyphs[i] = true
	}
	for _, ttf := range [][]byte{goregular.TTF, gobold.TTF} {
		has := make([]bool, 0x10000)
		if err := bmpCoverage(ttf, has); err != nil {
			// The fonts are compiled in; a parse failure is a broken build.
			panic("pdf: reading embedded Go font: " + err.Error())
		}
		for r, ok := range has {
			glyphs[r] = glyphs[r] && ok
		}
	}
}

var errFont = errors.New("truncated or unsupported cmap")

// bmpCoverage marks the BMP runes that the font's Unicode cmap (format 4)
// maps to a real glyph.
func bmpCoverage(ttf []byte, has []bool) error {
	return cmapEach(ttf, func(r, _ int) { has[r] = true })
}

// cmapEach calls fn with every BMP rune that the font's Unicode cmap
// (format 4) maps to a real glyph, and that glyph's index.
// golang.org/x/image/font/sfnt could do this too; the module carries
// golang.org/x/text now (through golang.org/x/net/idna), so moving to it
// is open, but it must leave the glyph mapping, and so the PDF's golden
// hash, unchanged.
func cmapEach(ttf []byte, fn func(r, glyph int)) error {
	u16 := func(b []byte, off int) (int, bool) {
		if off < 0 || off+2 > len(b) {
			return 0, false
		}
		return int(binary.BigEndian.Uint16(b[off:])), true
	}
	u32 := func(b []byte, off int) (int, bool) {
		if off < 0 || off+4 > len(b) {
			return 0, false
		}
		return int(binary.BigEndian.Uint32(b[off:])), true
	}
	n, ok := u16(ttf, 4)
	if !ok {
		return errFont
	}
	cmap := -1
	for i := 0; i < n; i++ {
		rec := 12 + 16*i
		if rec+16 > len(ttf) {
			return errFont
		}
		if string(ttf[rec:rec+4]) == "cmap" {
			cmap, _ = u32(ttf, rec+8)
		}
	}
	if cmap < 0 {
		return errFont
	}
	nsub, ok := u16(ttf, cmap+2)
	if !ok {
		return errFont
	}
	sub := -1
	for i := 0; i < nsub; i++ {
		rec := cmap + 4 + 8*i
		plat, _ := u16(ttf, rec)
		enc, _ := u16(ttf, rec+2)
		off, ok := u32(ttf, rec+4)
		if !ok {
			return errFont
		}
		if format, _ := u16(ttf, cmap+off); format == 4 && (plat == 0 || (plat == 3 && enc == 1)) {
			sub = cmap + off
			break
		}
	}
	if sub < 0 {
		return errFont
	}
	segX2, ok := u16(ttf, sub+6)
	if !ok {
		return errFont
	}
	ends := sub + 14
	starts := ends + segX2 + 2
	deltas := starts + segX2
	ranges := deltas + segX2
	for i := 0; i < segX2; i += 2 {
		end, ok1 := u16(ttf, ends+i)
		start, ok2 := u16(ttf, starts+i)
		delta, ok3 := u16(ttf, deltas+i)
		ro, ok4 := u16(ttf, ranges+i)
		if !(ok1 && ok2 && ok3 && ok4) {
			return errFont
		}
		for c := start; c <= end && c < 0xFFFF; c++ {
			g := 0
			if ro == 0 {
				g = (c + delta) & 0xFFFF
			} else {
				v, ok := u16(ttf, ranges+i+ro+2*(c-start))
				if !ok {
					return errFont
				}
				if v != 0 {
					g = (v + delta) & 0xFFFF
				}
			}
			if g != 0 {
				fn(c, g)
			}
		}
	}
	return nil
}

// substitutes are stand-ins for runes the Go fonts lack that show up in
// place names and typed text.
var substitutes = map[rune]string{
	'ʻ': "‘", // Hawaiian ʻokina, Samoan
	'ʼ': "’",
	'ˈ': "’",
	'‐': "-", '‑': "-", '‒': "–",
	'⇒': "=>",
	'✓': "yes", '✔': "yes", '✗': "no", '✘': "no",
	'⚠': "!", '⚑': "!",
	'\u2007': " ", '\u2009': " ", '\u202f': " ",
}

// clean makes report text safe to draw: control characters go, line breaks
// become \n (only multi-line fields keep them), and runes the fonts cannot
// draw become a stand-in or "?".
func clean(s string, multiline bool) string {
	glyphsOnce.Do(loadGlyphs)
	if isPlainASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == '\r':
			if i < len(s) && s[i] == '\n' {
				continue
			}
			r = '\n'
		case r == '\u2028' || r == '\u2029':
			r = '\n'
		}
		switch {
		case r == '\n':
			if multiline {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		case r == '\t':
			b.WriteByte(' ')
		case r == utf8.RuneError && n == 1:
			b.WriteByte('?')
		case r == '\u00ad' || r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\ufeff' || r == '\u2060':
			// invisible: soft hyphen, zero-width characters, BOM
		case unicode.IsControl(r):
		case r < 0x10000 && glyphs[r]:
			b.WriteRune(r)
		case unicode.Is(unicode.Mn, r):
			// A combining mark we cannot place properly; the base letter
			// alone reads better than a box.
		default:
			if sub, ok := substitutes[r]; ok {
				b.WriteString(sub)
			} else {
				b.WriteByte('?')
			}
		}
	}
	return b.String()
}

// isPlainASCII is the fast path: printable ASCII needs no work.
func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
