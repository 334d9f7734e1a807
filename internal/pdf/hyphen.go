package pdf

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The Go fonts draw U+002D HYPHEN-MINUS as a minus sign, wider than their
// en dash (583 against 500 units of advance), because they were drawn for
// code. In report text ("2026-11-24", "usgs-nshm-2018-pga", "M5+ within
// 50 km, 1996-2018") every hyphen then reads as a long dash. Replacing the
// character in the text (with U+2010) would make a reader's copy and
// search find a different character, so the fix is in the font instead:
// each document's copy of a font draws U+002D with the glyph the font has
// for the soft hyphen U+00AD, a true hyphen. The text stays ASCII '-'.

// shortHyphen rewrites ttf in place so that the glyph of U+002D has the
// outline and horizontal metrics of the glyph of U+00AD.
func shortHyphen(ttf []byte) error {
	glyphOf := map[int]int{}
	if err := cmapEach(ttf, func(r, g int) {
		if r == '-' || r == 0xAD {
			glyphOf[r] = g
		}
	}); err != nil {
		return err
	}
	hyphen, soft := glyphOf['-'], glyphOf[0xAD]
	if hyphen == 0 || soft == 0 {
		return errors.New("no glyph for U+002D or U+00AD")
	}
	tables, err := tableOffsets(ttf)
	if err != nil {
		return err
	}
	for _, tag := range []string{"head", "hhea", "loca", "glyf", "hmtx"} {
		if _, ok := tables[tag]; !ok {
			return fmt.Errorf("no %s table", tag)
		}
	}
	be := binary.BigEndian
	head, hhea, loca, glyf, hmtx := tables["head"], tables["hhea"], tables["loca"], tables["glyf"], tables["hmtx"]
	if head[0]+52 > len(ttf) || hhea[0]+36 > len(ttf) {
		return errors.New("truncated head or hhea")
	}
	longLoca := be.Uint16(ttf[head[0]+50:]) == 1
	glyphAt := func(g int) (start, end int, err error) {
		at := func(i int) (int, bool) {
			if longLoca {
				o := loca[0] + 4*i
				if o+4 > loca[0]+loca[1] {
					return 0, false
				}
				return int(be.Uint32(ttf[o:])), true
			}
			o := loca[0] + 2*i
			if o+2 > loca[0]+loca[1] {
				return 0, false
			}
			return 2 * int(be.Uint16(ttf[o:])), true
		}
		s, ok1 := at(g)
		e, ok2 := at(g + 1)
		if !ok1 || !ok2 || s > e || glyf[0]+e > glyf[0]+glyf[1] {
			return 0, 0, fmt.Errorf("glyph %d outside the glyf table", g)
		}
		return glyf[0] + s, glyf[0] + e, nil
	}
	hs, he, err := glyphAt(hyphen)
	if err != nil {
		return err
	}
	ss, se, err := glyphAt(soft)
	if err != nil {
		return err
	}
	if se-ss > he-hs {
		return fmt.Errorf("the soft hyphen's outline (%d bytes) does not fit in the hyphen's (%d)", se-ss, he-hs)
	}
	// A glyph's description says its own length, so the bytes left over
	// after the copy are never read; zero them all the same.
	n := copy(ttf[hs:he], ttf[ss:se])
	clear(ttf[hs+n : he])

	metrics := int(be.Uint16(ttf[hhea[0]+34:]))
	if hyphen >= metrics || soft >= metrics || hmtx[0]+4*metrics > len(ttf) {
		return errors.New("hyphen metrics outside the hmtx table's full entries")
	}
	copy(ttf[hmtx[0]+4*hyphen:hmtx[0]+4*hyphen+4], ttf[hmtx[0]+4*soft:hmtx[0]+4*soft+4])
	return nil
}

// tableOffsets is the font's table directory: tag to offset and length.
func tableOffsets(ttf []byte) (map[string][2]int, error) {
	if len(ttf) < 12 {
		return nil, errFont
	}
	n := int(binary.BigEndian.Uint16(ttf[4:]))
	out := make(map[string][2]int, n)
	for i := range n {
		rec := 12 + 16*i
		if rec+16 > len(ttf) {
			return nil, errFont
		}
		off, length := int(binary.BigEndian.Uint32(ttf[rec+8:])), int(binary.BigEndian.Uint32(ttf[rec+12:]))
		if off < 0 || length < 0 || off+length > len(ttf) {
			return nil, errFont
		}
		out[string(ttf[rec:rec+4])] = [2]int{off, length}
	}
	return out, nil
}
