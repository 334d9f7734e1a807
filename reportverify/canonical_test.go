package reportverify

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
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
		{"-0.0", "0"},
		{"-0e5", "0"},
		{"100", "100"},
		{"999999999999999", "999999999999999"},
		{"9999999999999999", "10000000000000000"},
		{"123456789012345678901", "123456789012345680000"},
		{"0.0000010", "0.000001"},
		{"0.00000099", "9.9e-7"},
		{"1.5E+3", "1500"},
		{"2.50", "2.5"},
		{"-1e-6", "-0.000001"},
		{"999999999999999999999", "1e+21"},
		{"1e+0", "1"},
		{"4.940656458412e-324", "5e-324"},
		{"0.1e1", "1"},
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

// TestNumbersRandom: for doubles of every magnitude (random bit
// patterns), the canonical text reads back as the same double, uses
// exponent form exactly outside [1e-6, 1e21), and has the digits strconv
// finds shortest; integers of up to 15 digits, which the scanner copies
// without formatting, come out as formatting their double would write.
func TestNumbersRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 8785))
	for range 20000 {
		x := math.Float64frombits(r.Uint64())
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		got := string(appendNumber(nil, x))
		back, err := strconv.ParseFloat(got, 64)
		if err != nil || back != x {
			t.Fatalf("%v: %s reads back as %v (%v)", x, got, back, err)
		}
		abs := math.Abs(x)
		if exp := strings.Contains(got, "e"); x != 0 && exp != (abs < 1e-6 || abs >= 1e21) {
			t.Fatalf("%v: %s", x, got)
		}
		shortest := strconv.FormatFloat(abs, 'e', -1, 64)
		wantDigits := strings.Replace(shortest[:strings.IndexByte(shortest, 'e')], ".", "", 1)
		if gotDigits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(strings.Split(got, "e")[0]), "0"); x != 0 && !strings.HasPrefix(gotDigits, wantDigits) || strings.Trim(strings.TrimPrefix(gotDigits, wantDigits), "0") != "" {
			t.Fatalf("%v: %s, want the digits %s", x, got, wantDigits)
		}
	}
	for range 20000 {
		n := r.Int64N(int64(math.Pow10(1 + r.IntN(15))))
		if r.IntN(2) == 0 {
			n = -n
		}
		lit := strconv.FormatInt(n, 10)
		got, err := Canonicalize([]byte(lit))
		if want := appendNumber(nil, float64(n)); err != nil || string(got) != string(want) {
			t.Fatalf("%s: %s, want %s (%v)", lit, got, want, err)
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

// FuzzCanonicalize: the canonical form is a fixed point, is valid JSON
// that means what the input means to encoding/json (numbers read with
// UseNumber and compared as the doubles they denote), and nothing panics.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{"b":[1,2.5,"x"],"a":null}`, `"\u00e9\ud83d\ude00"`, `1e21`, `-0.000001`, `[{},[]]`,
		`{"€":1,"😀":2}`, `{"\u0062":1,"a":{"d":true,"c":false}}`, `[1E400]`, `{"a":1,"a":2}`, "\"\\u003c\u2028\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Canonicalize(in)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		if !json.Valid(in) || !json.Valid(out) {
			t.Fatalf("accepted %q or wrote %q, which encoding/json refuses", in, out)
		}
		again, err := Canonicalize(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not a fixed point: %q -> %q -> %q (%v)", in, out, again, err)
		}
		a, b := decodeNumbers(t, in), decodeNumbers(t, out)
		if !sameValue(a, b) {
			t.Fatalf("meaning changed: %q -> %q", in, out)
		}
	})
}

func decodeNumbers(t *testing.T, doc []byte) any {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("encoding/json cannot read %q: %v", doc, err)
	}
	return v
}

// sameValue compares values decoded with UseNumber, numbers as doubles
// (RFC 8785 keeps the double, not the digits).
func sameValue(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		x, errx := strconv.ParseFloat(string(a), 64)
		y, erry := strconv.ParseFloat(string(b), 64)
		return errx == nil && erry == nil && x == y
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameValue(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(a, b)
	}
}
