package reportverify

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestCanonicalize: each rule of RFC 8785, one case at a time.
func TestCanonicalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"whitespace goes", " { \"a\" : [ 1 , 2 ] ,\n\t\"b\" : { } } ", `{"a":[1,2],"b":{}}`},
		{"members sorted", `{"b":1,"a":2,"B":3,"aa":4}`, `{"B":3,"a":2,"aa":4,"b":1}`},
		{"nested members sorted", `{"z":{"y":1,"x":[{"d":1,"c":2}]}}`, `{"z":{"x":[{"c":2,"d":1}],"y":1}}`},
		// Code point order would put U+FB33 before U+1F600; UTF-16 puts the
		// surrogate D83D first.
		{"UTF-16 order", `{"\ufb33":1,"😀":2,"€":3}`, `{"€":3,"😀":2,"דּ":1}`},
		{"array order kept", `[3,1,2]`, `[3,1,2]`},
		{"literals", `[true,false,null]`, `[true,false,null]`},
		{"escapes resolved", `"\u0041\/\u00e9"`, `"A/é"`},
		{"required escapes", "\"q\\\" b\\\\ \\b\\f\\n\\r\\t\\u0001\\u001f\"", `"q\" b\\ \b\f\n\r\t\u0001\u001f"`},
		{"no HTML escapes", `"<a&b>"`, `"<a&b>"`},
		{"line separators literal", `"\u2028\u2029"`, "\"\u2028\u2029\""},
		{"surrogate pair", `"\ud83d\ude00"`, `"😀"`},
		{"empty containers", `{"a":[],"b":{}}`, `{"a":[],"b":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonicalize([]byte(tt.in))
			if err != nil {
				t.Fatalf("Canonicalize(%s): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Errorf("Canonicalize(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// TestNumbers: numbers as ECMAScript's Number.prototype.toString writes
// the double nearest the literal.
func TestNumbers(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0", "0"},
		{"-0", "0"},
		{"0.0", "0"},
		{"1", "1"},
		{"-1", "-1"},
		{"1.0", "1"},
		{"10", "10"},
		{"0.1", "0.1"},
		{"1234.5", "1234.5"},
		{"4.35", "4.35"},
		{"0.30000000000000004", "0.30000000000000004"},
		{"1E2", "100"},
		{"1e20", "100000000000000000000"},
		{"123e18", "123000000000000000000"},
		{"1e21", "1e+21"},
		{"1.23e21", "1.23e+21"},
		{"1e23", "1e+23"},
		{"0.000001", "0.000001"},
		{"0.000001234", "0.000001234"},
		{"1e-7", "1e-7"},
		{"1.5e-7", "1.5e-7"},
		{"-2e-7", "-2e-7"},
		{"9007199254740993", "9007199254740992"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
		{"5e-324", "5e-324"},
		{"1e-400", "0"},
	}
	for _, tt := range tests {
		got, err := Canonicalize([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s: %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestNumbersRoundTrip: whatever the double, its canonical text reads back
// as the same double.
func TestNumbersRoundTrip(t *testing.T) {
	for _, x := range []float64{math.Pi, -math.E, 1 / 3.0, 2.5e-8, 6.02214076e23, math.MaxFloat64, math.SmallestNonzeroFloat64,
		1e-6, 9.999999999999999e-7, 1e21 - 65536, 123456.789, 0.5, 1 << 53} {
		got := appendNumber(nil, x)
		back, err := strconv.ParseFloat(string(got), 64)
		if err != nil || back != x {
			t.Errorf("%v: %s reads back as %v (%v)", x, got, back, err)
		}
	}
}

// TestMalformed: what RFC 8785 or RFC 8259 refuse is ErrMalformed.
func TestMalformed(t *testing.T) {
	tests := []struct{ name, in string }{
		{"duplicate member", `{"a":1,"a":2}`},
		{"duplicate after escape", `{"a":1,"\u0061":2}`},
		{"invalid UTF-8", "\"\xff\""},
		{"lone high surrogate", `"\ud800"`},
		{"lone low surrogate", `"\udc00"`},
		{"high then not low", `"\ud800\u0041"`},
		{"data after", `{} x`},
		{"two documents", `{}{}`},
		{"overflow", `1e400`},
		{"leading zero", `01`},
		{"bare point", `1.`},
		{"bare exponent", `1e`},
		{"plus sign", `+1`},
		{"control in string", "\"a\nb\""},
		{"unknown escape", `"\x"`},
		{"unterminated", `{"a":"b`},
		{"trailing comma", `[1,]`},
		{"empty", ``},
		{"too deep", strings.Repeat("[", 65) + strings.Repeat("]", 65)},
		{"NaN", `NaN`},
	}
	for _, tt := range tests {
		if got, err := Canonicalize([]byte(tt.in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %q, %v; want ErrMalformed", tt.name, got, err)
		}
	}
	if _, err := Canonicalize([]byte(strings.Repeat("[", 64) + strings.Repeat("]", 64))); err != nil {
		t.Errorf("64 levels: %v", err)
	}
}

// FuzzCanonicalize: the canonical form is a fixed point, means what the
// input means to encoding/json, and nothing panics.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{"b":[1,2.5,"x"],"a":null}`, `"\u00e9\ud83d\ude00"`, `1e21`, `-0.000001`, `[{},[]]`, `{"€":1,"😀":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Canonicalize(in)
		if err != nil {
			return
		}
		if !json.Valid(in) {
			t.Fatalf("accepted what encoding/json refuses: %q", in)
		}
		again, err := Canonicalize(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not a fixed point: %q -> %q -> %q (%v)", in, out, again, err)
		}
		var a, b any
		if json.Unmarshal(in, &a) != nil || json.Unmarshal(out, &b) != nil {
			t.Fatalf("does not parse: %q -> %q", in, out)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("meaning changed: %q -> %q", in, out)
		}
	})
}
