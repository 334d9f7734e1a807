// Package reportcodec keeps stored report bodies compact: a report's JSON
// (about 40 kB, most of it the same labels, sources and units in every
// report) is compressed with S2 against a dictionary trained on real
// reports, to about 7 kB (docs/operations.md, The database; docs/
// performance.md, The whole path). A stored body names its codec, so the
// bodies written before compression (plain JSON) and those written with
// any dictionary this package has ever shipped read back byte for byte:
// a dictionary, once released, is never changed or removed, only joined by
// a newer one.
package reportcodec

import (
	_ "embed"
	"fmt"

	"github.com/klauspost/compress/s2"
)

// Codec names, as stored beside each body (reports.body_codec).
const (
	// Plain is a body stored as it is: JSON text, as every report was
	// before compression (an empty or NULL codec).
	Plain = ""
	// S2Dict1 is S2 (the "better" encoder) against dictionary 1
	// (dict1.s2), trained on 2,000 reports of random places in the
	// contiguous United States (TestTrainDictionary).
	S2Dict1 = "s2d1"
	// S2Dict2 is S2 against dictionary 2 (dict2.s2), trained the same way
	// on reports of methodology 4, whose terrain indicators and wording
	// dictionary 1 does not know.
	S2Dict2 = "s2d2"
	// S2Dict3 is S2 against dictionary 3 (dict3.s2), trained the same way
	// on reports of methodology 4.1, whose outlook dictionary 2 does not
	// know.
	S2Dict3 = "s2d3"
)

// Current is the codec new bodies are written with.
const Current = S2Dict3

var (
	//go:embed dict1.s2
	dict1 []byte
	//go:embed dict2.s2
	dict2 []byte
	//go:embed dict3.s2
	dict3 []byte
)

// Codec encodes and decodes report bodies. It is safe for concurrent use.
type Codec struct {
	dicts map[string]*s2.Dict
}

// New returns a Codec with every dictionary this package has shipped.
func New() (*Codec, error) {
	c := &Codec{dicts: map[string]*s2.Dict{}}
	for _, d := range []struct {
		codec string
		body  []byte
	}{{S2Dict1, dict1}, {S2Dict2, dict2}, {S2Dict3, dict3}} {
		sd := s2.NewDict(d.body)
		if sd == nil {
			return nil, fmt.Errorf("reportcodec: %s: not an S2 dictionary", d.codec)
		}
		c.dicts[d.codec] = sd
	}
	return c, nil
}

// Encode appends body compressed with the Current codec to dst and returns
// the codec's name with it.
func (c *Codec) Encode(dst, body []byte) (codec string, stored []byte) {
	return Current, c.dicts[Current].EncodeBetter(dst, body)
}

// Decode returns the body stored with codec: stored itself for Plain,
// else the decompressed bytes. An unknown codec is an error (a database
// written by a newer release).
func (c *Codec) Decode(codec string, stored []byte) ([]byte, error) {
	if codec == Plain {
		return stored, nil
	}
	d, ok := c.dicts[codec]
	if !ok {
		return nil, fmt.Errorf("reportcodec: unknown codec %q (written by a newer release?)", codec)
	}
	body, err := d.Decode(nil, stored)
	if err != nil {
		return nil, fmt.Errorf("reportcodec: %s: %w", codec, err)
	}
	return body, nil
}
