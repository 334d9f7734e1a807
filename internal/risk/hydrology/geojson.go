package hydrology

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/geo"
)

// parseLines reads a GeoJSON FeatureCollection of LineStrings with a
// numeric "level" property. It is a small hand-written parser rather than
// encoding/json because the shoreline file holds 230,000 positions and
// reflection-based decoding of them took most of the module's load time.
// It accepts any valid JSON layout (members in any order, unknown members
// skipped) and reports errors with the file name and line.
func parseLines(name string, b []byte) ([]lineFeature, error) {
	return (&lineParser{name: name, b: b}).parse()
}

// parse reads the whole FeatureCollection and nothing after it.
func (p *lineParser) parse() ([]lineFeature, error) {
	fs, err := p.collection()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.b) {
		return nil, p.errf("unexpected %s after the FeatureCollection", p.what())
	}
	return fs, nil
}

type lineParser struct {
	name string
	b    []byte
	i    int
	pts  []geo.Point // shared backing store for every feature's positions
	nth  int         // current feature number, 1-based, for messages
	// ne reads Natural Earth river properties (parseNELines) instead of
	// the GSHHG "level".
	ne bool
}

// parseNELines reads a GeoJSON FeatureCollection of LineStrings with the
// Natural Earth river properties "featurecla" (a string), "scalerank" (a
// small integer, kept as the feature's level) and "name" (a string or
// null), as the data pack's clip of the Natural Earth North American
// rivers has them (cmd/neclip). Other properties are skipped.
func parseNELines(name string, b []byte) ([]lineFeature, error) {
	return (&lineParser{name: name, b: b, ne: true}).parse()
}

// Natural Earth feature classes (lineFeature.kind).
const (
	kindNone           = iota // GSHHG, or a class the module does not use
	kindRiver                 // "River"
	kindLakeCenterline        // "Lake Centerline": a line drawn through a lake
	kindIntermittent          // "River (Intermittent)", "Lake Centerline (Intermittent)"
)

// neKind classifies a Natural Earth "featurecla".
func neKind(cla string) uint8 {
	switch {
	case strings.Contains(cla, "Intermittent"):
		return kindIntermittent
	case cla == "River":
		return kindRiver
	case cla == "Lake Centerline":
		return kindLakeCenterline
	}
	return kindNone
}

func (p *lineParser) errf(format string, args ...any) error {
	line := 1 + bytes.Count(p.b[:min(p.i, len(p.b))], []byte{'\n'})
	msg := fmt.Sprintf(format, args...)
	if p.nth > 0 {
		msg = fmt.Sprintf("feature %d: %s", p.nth, msg)
	}
	return fmt.Errorf("%s line %d: %s", p.name, line, msg)
}

// what describes the next byte for error messages.
func (p *lineParser) what() string {
	if p.i >= len(p.b) {
		return "end of file"
	}
	return strconv.QuoteRune(rune(p.b[p.i]))
}

func (p *lineParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *lineParser) consume(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *lineParser) expect(c byte) error {
	if !p.consume(c) {
		return p.errf("expected %q, found %s", c, p.what())
	}
	return nil
}

// object calls member for every key of a JSON object; member must consume
// the value.
func (p *lineParser) object(member func(key []byte) error) error {
	if err := p.expect('{'); err != nil {
		return err
	}
	if p.consume('}') {
		return nil
	}
	for {
		key, err := p.str()
		if err != nil {
			return err
		}
		if err := p.expect(':'); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		if p.consume(',') {
			continue
		}
		return p.expect('}')
	}
}

// array calls elem for every element of a JSON array.
func (p *lineParser) array(elem func() error) error {
	if err := p.expect('['); err != nil {
		return err
	}
	if p.consume(']') {
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if p.consume(',') {
			continue
		}
		return p.expect(']')
	}
}

// str reads a string and returns its decoded bytes.
func (p *lineParser) str() ([]byte, error) {
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, p.errf("expected a string, found %s", p.what())
	}
	start := p.i
	p.i++
	escaped := false
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '\\':
			escaped = true
			p.i += 2
			continue
		case c == '"':
			p.i++
			if !escaped {
				return p.b[start+1 : p.i-1], nil
			}
			var s string
			if err := json.Unmarshal(p.b[start:p.i], &s); err != nil {
				return nil, p.errf("bad string: %v", err)
			}
			return []byte(s), nil
		case c < 0x20:
			return nil, p.errf("control character in string")
		}
		p.i++
	}
	return nil, p.errf("unterminated string")
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// number reads a JSON number. Plain decimals with up to 15 digits, which is
// every coordinate in the GSHHG exports, are converted directly: the digits
// and the power of ten are both exact in float64, so one division gives the
// correctly rounded value. Anything else goes through strconv.
func (p *lineParser) number() (float64, error) {
	p.ws()
	start := p.i
	i := p.i
	neg := false
	if i < len(p.b) && p.b[i] == '-' {
		neg = true
		i++
	}
	var mant uint64
	digits, frac := 0, 0
	seenDot := false
	for ; i < len(p.b); i++ {
		c := p.b[i]
		if c >= '0' && c <= '9' {
			mant = mant*10 + uint64(c-'0')
			digits++
			if seenDot {
				frac++
			}
			continue
		}
		if c == '.' && !seenDot {
			seenDot = true
			continue
		}
		break
	}
	intStart := start + boolInt(neg)
	if digits > 0 && digits <= 15 && intStart < len(p.b) && p.b[intStart] != '.' && (i >= len(p.b) || (p.b[i] != 'e' && p.b[i] != 'E')) &&
		!(seenDot && frac == 0) && !(digits-frac > 1 && p.b[intStart] == '0') {
		p.i = i
		v := float64(mant) / pow10[frac]
		if neg {
			v = -v
		}
		return v, nil
	}
	// General path: find the token's end and let strconv judge it.
	for i = start; i < len(p.b); i++ {
		c := p.b[i]
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			break
		}
	}
	tok := string(p.b[start:i])
	v, err := strconv.ParseFloat(tok, 64)
	if err != nil || tok == "" || !validJSONNumber(tok) {
		return 0, p.errf("expected a number, found %s", p.what())
	}
	p.i = i
	return v, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func validJSONNumber(s string) bool { return json.Valid([]byte(s)) }

// skip consumes any JSON value.
func (p *lineParser) skip() error {
	p.ws()
	if p.i >= len(p.b) {
		return p.errf("unexpected end of file")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(func([]byte) error { return p.skip() })
	case c == '[':
		return p.array(p.skip)
	case c == '"':
		_, err := p.str()
		return err
	case c == '-' || c >= '0' && c <= '9':
		_, err := p.number()
		return err
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(p.b[p.i:], []byte(lit)) {
			p.i += len(lit)
			return nil
		}
	}
	return p.errf("unexpected %s", p.what())
}

func (p *lineParser) null() bool {
	p.ws()
	if bytes.HasPrefix(p.b[p.i:], []byte("null")) {
		p.i += 4
		return true
	}
	return false
}

func (p *lineParser) collection() ([]lineFeature, error) {
	type span struct {
		meta     lineFeature // level, kind and name; no positions
		from, to int
	}
	var spans []span
	var typ []byte
	err := p.object(func(key []byte) error {
		switch string(key) {
		case "type":
			s, err := p.str()
			typ = s
			return err
		case "features":
			return p.array(func() error {
				p.nth++
				meta, from, err := p.feature()
				if err != nil {
					return err
				}
				spans = append(spans, span{meta, from, len(p.pts)})
				return nil
			})
		}
		return p.skip()
	})
	if err != nil {
		return nil, err
	}
	p.nth = 0
	if string(typ) != "FeatureCollection" {
		return nil, fmt.Errorf("%s line 1: expected a GeoJSON FeatureCollection, found type %q", p.name, typ)
	}
	out := make([]lineFeature, len(spans))
	for i, s := range spans {
		out[i] = s.meta
		out[i].pts = p.pts[s.from:s.to:s.to]
	}
	return out, nil
}

// feature parses one Feature, appending its positions to p.pts; meta has
// the feature's properties and no positions.
func (p *lineParser) feature() (meta lineFeature, from int, err error) {
	from = len(p.pts)
	hasLevel, hasGeom, hasClass := false, false, false
	var gtype []byte
	level := 0
	err = p.object(func(key []byte) error {
		switch string(key) {
		case "properties":
			if p.null() {
				return nil
			}
			levelKey := "level"
			if p.ne {
				levelKey = "scalerank"
			}
			return p.object(func(k []byte) error {
				switch {
				case p.ne && string(k) == "featurecla":
					s, err := p.str()
					meta.kind, hasClass = neKind(string(s)), true
					return err
				case p.ne && string(k) == "name":
					if p.null() {
						meta.name = ""
						return nil
					}
					s, err := p.str()
					meta.name = string(s)
					return err
				case string(k) != levelKey:
					return p.skip()
				}
				v, err := p.number()
				if err != nil {
					return err
				}
				if v != math.Trunc(v) || v < 0 || v > 100 {
					return p.errf(`property %q is %g, expected a small integer`, levelKey, v)
				}
				level, hasLevel = int(v), true
				return nil
			})
		case "geometry":
			if p.null() {
				return nil
			}
			hasGeom = true
			return p.object(func(k []byte) error {
				switch string(k) {
				case "type":
					s, err := p.str()
					gtype = s
					return err
				case "coordinates":
					if gtype != nil && string(gtype) != "LineString" {
						return p.errf("geometry is %s, expected LineString", gtype)
					}
					return p.array(p.position)
				}
				return p.skip()
			})
		}
		return p.skip()
	})
	if err != nil {
		return lineFeature{}, 0, err
	}
	switch {
	case !hasGeom || string(gtype) != "LineString":
		if !hasGeom {
			gtype = []byte("null")
		}
		return lineFeature{}, 0, p.errf("geometry is %s, expected LineString", gtype)
	case !hasLevel && p.ne:
		return lineFeature{}, 0, p.errf(`property "scalerank" is missing`)
	case !hasLevel:
		return lineFeature{}, 0, p.errf(`property "level" is missing`)
	case p.ne && !hasClass:
		return lineFeature{}, 0, p.errf(`property "featurecla" is missing`)
	case len(p.pts)-from < 2:
		return lineFeature{}, 0, p.errf("LineString has %d position(s), needs at least 2", len(p.pts)-from)
	}
	meta.level = level
	return meta, from, nil
}

// position parses [lon, lat(, z...)].
func (p *lineParser) position() error {
	var xy [2]float64
	n := 0
	err := p.array(func() error {
		v, err := p.number()
		if err != nil {
			return err
		}
		if n < 2 {
			xy[n] = v
		}
		n++
		return nil
	})
	if err != nil {
		return err
	}
	lon, lat := xy[0], xy[1]
	if n < 2 {
		return p.errf("a position has %d number(s), needs longitude and latitude", n)
	}
	if lat < -90 || lat > 90 || lon < -180 || lon > 360 {
		return p.errf("position [%g, %g] is not a longitude/latitude pair", lon, lat)
	}
	p.pts = append(p.pts, geo.Point{Lat: lat, Lon: geo.NormalizeLon(lon)})
	return nil
}
