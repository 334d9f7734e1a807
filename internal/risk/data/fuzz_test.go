package data

import (
	"bytes"
	"encoding/csv"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// FuzzTable reads arbitrary bytes as a table. It must never panic, must
// accept exactly the headers that hold the required column, must see as many
// rows as encoding/csv does on its own, with strictly increasing line numbers
// inside the input, and OptFloat/Float must agree with strconv and with each
// other, every error naming the file and the line.
func FuzzTable(f *testing.F) {
	seeds := []struct {
		doc      string
		tab      bool
		required string
	}{
		{"fips,value\n06075,1.5\n17031,NA\n", false, "fips"},
		{"\ufefffips,value\r\n06075,-9999\r\n\r\n12086,\"1,5\"\r\n", false, "value"},
		{"GEOID\tINTPTLAT\tINTPTLONG\n06075\t37.7\t-122.4\n", true, "INTPTLAT"},
		{"a,b\n\"multi\nline\",2\n\"un\"closed,3\nx,\"y\n", false, "b"},
		{"a,b\n1\n1,2,3\n,,\n", false, "c"},
		{"", false, ""},
		{"\"\"\"\n", false, ""},
		{"x\n1e400\n-0\n0x10\nInf\nNaN\n  7  \n-\n-9999.0\n", false, "x"},
	}
	for _, s := range seeds {
		f.Add([]byte(s.doc), s.tab, s.required)
	}
	f.Fuzz(func(t *testing.T, doc []byte, tab bool, required string) {
		sep := ','
		if tab {
			sep = '\t'
		}
		var req []string
		if required != "" {
			req = []string{required}
		}
		tb, err := NewTable("f.csv", bytes.NewReader(doc), sep, req...)

		// The reference: encoding/csv with the same settings.
		ref := csv.NewReader(bytes.NewReader(doc))
		ref.Comma = sep
		ref.FieldsPerRecord = -1
		ref.LazyQuotes = true
		header, herr := ref.Read()
		if herr != nil {
			if err == nil {
				t.Fatalf("NewTable accepted a header encoding/csv cannot read (%v)", herr)
			}
			if !strings.HasPrefix(err.Error(), "f.csv line 1: ") {
				t.Fatalf("header error %q does not name the file and line 1", err)
			}
			return
		}
		names := map[string]bool{}
		for _, h := range header {
			names[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = true
		}
		if required != "" && !names[required] {
			if err == nil {
				t.Fatalf("NewTable accepted a header %q without required column %q", header, required)
			}
			if !strings.HasPrefix(err.Error(), "f.csv line 1: ") || !strings.Contains(err.Error(), strconv.Quote(required)) {
				t.Fatalf("missing-column error %q does not name the file, line 1 and the column", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("NewTable refused header %q: %v", header, err)
		}
		for n := range names {
			if !tb.Has(n) {
				t.Fatalf("Has(%q) = false for a header column", n)
			}
		}

		maxLine := 1 + bytes.Count(doc, []byte{'\n'})
		prevLine := 1
		for {
			ok, err := scan(tb)
			_, rerr := ref.Read()
			if err != nil {
				if !strings.HasPrefix(err.Error(), "f.csv line ") {
					t.Fatalf("Scan error %q does not name the file and line", err)
				}
				if rerr == nil || rerr == io.EOF {
					t.Fatalf("Scan failed (%v) where encoding/csv read a row", err)
				}
				return
			}
			if !ok {
				if rerr != io.EOF {
					t.Fatalf("Next ended after %d rows where encoding/csv gave %v", tb.Rows(), rerr)
				}
				return
			}
			if rerr != nil {
				t.Fatalf("Next read row %d where encoding/csv gave %v", tb.Rows(), rerr)
			}
			line := tb.lineNumber()
			if line <= prevLine || line > maxLine {
				t.Fatalf("row %d: Line() = %d after line %d; input has %d lines", tb.Rows(), line, prevLine, maxLine)
			}
			prevLine = line
			where := "f.csv line " + strconv.Itoa(line) + ": "
			for col := range names {
				checkCell(t, tb, col, where)
			}
			checkCell(t, tb, "not a column \x00", where)
		}
	})
}

func checkCell(t *testing.T, tb *Table, col, where string) {
	t.Helper()
	s := tb.String(col)
	if s != strings.TrimSpace(s) {
		t.Fatalf("String(%q) = %q is not trimmed", col, s)
	}
	v, ok, err := tb.OptFloat(col)
	switch {
	case err != nil:
		if ok || !strings.HasPrefix(err.Error(), where) || !strings.Contains(err.Error(), strconv.Quote(col)) {
			t.Fatalf("OptFloat(%q) on %q: error %q (ok=%v) must name %q and the column", col, s, err, ok, where)
		}
		if _, perr := strconv.ParseFloat(s, 64); perr == nil {
			t.Fatalf("OptFloat(%q) refused %q, which strconv parses", col, s)
		}
	case !ok:
		switch s {
		case "", "NA", "-9999", "-9999.0", "-":
		default:
			t.Fatalf("OptFloat(%q) treated %q as missing", col, s)
		}
	default:
		want, perr := strconv.ParseFloat(s, 64)
		if perr != nil || !(v == want || math.IsNaN(v) && math.IsNaN(want)) {
			t.Fatalf("OptFloat(%q) on %q = %v; strconv gives %v, %v", col, s, v, want, perr)
		}
	}
	fv, ferr := tb.Float(col)
	if (ferr == nil) != (ok && err == nil) {
		t.Fatalf("Float(%q) on %q: error %v, OptFloat ok=%v err=%v", col, s, ferr, ok, err)
	}
	if ferr == nil && !(fv == v || math.IsNaN(fv) && math.IsNaN(v)) {
		t.Fatalf("Float(%q) = %v, OptFloat %v", col, fv, v)
	}
	if ferr != nil && (!strings.HasPrefix(ferr.Error(), where) || !strings.Contains(ferr.Error(), strconv.Quote(col))) {
		t.Fatalf("Float(%q) error %q must name %q and the column", col, ferr, where)
	}
}
