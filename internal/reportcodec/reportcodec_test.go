package reportcodec

import (
	"bytes"
	"strings"
	"testing"
)

// TestRoundTripAndSize: bodies of real reports (other places than the
// dictionary was trained on) come back byte for byte, at most 9 kB on
// average (the target: with it the database grows by about 11 kB per
// completed job, where plain bodies made it 51 kB; 8 kB before the
// outlook of methodology 4.1 added 4.7 kB of JSON to a report); a plain
// body is itself, an unknown codec and a damaged body are errors.
func TestRoundTripAndSize(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	bodies := realReports(t, 300, 99)
	var raw, stored int
	for _, b := range bodies {
		codec, s := c.Encode(nil, b)
		if codec != Current {
			t.Fatalf("codec %q, want %q", codec, Current)
		}
		back, err := c.Decode(codec, s)
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("round trip: %v, equal %v", err, bytes.Equal(back, b))
		}
		raw += len(b)
		stored += len(s)
	}
	avg := stored / len(bodies)
	t.Logf("%d reports: %d bytes of JSON on average, %d stored (%.1f×)", len(bodies), raw/len(bodies), avg, float64(raw)/float64(stored))
	if avg > 9000 {
		t.Errorf("stored bodies average %d bytes, want at most 9000", avg)
	}
	if b, err := c.Decode(Plain, []byte(`{"a":1}`)); err != nil || string(b) != `{"a":1}` {
		t.Errorf("plain: %q %v", b, err)
	}
	if _, err := c.Decode("zz9", []byte("x")); err == nil || !strings.Contains(err.Error(), "unknown codec") {
		t.Errorf("unknown codec: %v", err)
	}
	_, s := c.Encode(nil, bodies[0])
	if _, err := c.Decode(Current, s[:len(s)/2]); err == nil {
		t.Error("a body cut in half decoded")
	}
}

// BenchmarkCodec: encoding and decoding one real report.
func BenchmarkCodec(b *testing.B) {
	c, err := New()
	if err != nil {
		b.Fatal(err)
	}
	body := realReports(b, 1, 7)[0]
	_, stored := c.Encode(nil, body)
	b.Run("Encode", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		var dst []byte
		for b.Loop() {
			_, dst = c.Encode(dst[:0], body)
		}
	})
	b.Run("Decode", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := c.Decode(Current, stored); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestEveryDictionaryStillDecodes checks that bodies written with any
// dictionary this package has shipped read back byte for byte, the
// retired ones included.
func TestEveryDictionaryStillDecodes(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"detail":"summary","location":{"stateCode":"CA"},"summary":{"overallScore":72}}`)
	for _, codec := range []string{S2Dict1, S2Dict2, S2Dict3} {
		stored := c.dicts[codec].EncodeBetter(nil, body)
		got, err := c.Decode(codec, stored)
		if err != nil || string(got) != string(body) {
			t.Errorf("%s: %q, %v", codec, got, err)
		}
	}
	if codec, _ := c.Encode(nil, body); codec != Current || Current != S2Dict3 {
		t.Errorf("new bodies are written with %q, want %q", codec, S2Dict3)
	}
}
