package portfolio

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk"
)

// FuzzParseRow: whatever the cells, parseRow never panics, a row is
// either rejected with a code and message or carries a coordinate in
// range, and the passthrough cells are the input's.
func FuzzParseRow(f *testing.F) {
	for _, seed := range [][4]string{
		{"p1", "41.8", "-87.6", "note"}, {"", "", "", ""}, {"x", "NaN", "1", ""}, {"x", "90.0000001", "0", ""},
		{"x", " 1e1 ", "-1E2", "=1"}, {"x", "0x10", "1_0", ""}, {"x", "-0", "+180", ""}, {"\uFEFF", "1e400", "-1e-400", ""},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3], 4)
	}
	l, err := newLayout([]string{"note", "latitude", "externalId", "longitude"}, Columns{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id, lat, lon, note string, fields int) {
		rec := []string{note, lat, id, lon}
		if fields >= 0 && fields < len(rec) {
			rec = rec[:fields]
		}
		r := l.parseRow(7, rec)
		if r.item.RowNumber != 7 || len(r.extra) != 1 {
			t.Fatalf("row %+v", r)
		}
		if len(rec) > 0 && r.extra[0] != note {
			t.Errorf("passthrough %q, want %q", r.extra[0], note)
		}
		if r.item.ErrorCode != nil {
			if r.item.ErrorMessage == nil || *r.item.ErrorMessage == "" || r.item.Status != "rejected" {
				t.Errorf("rejected without a message: %+v", r.item)
			}
			return
		}
		if len(rec) != 4 || !(r.lat >= -90 && r.lat <= 90) || !(r.lon >= -180 && r.lon <= 180) ||
			r.item.Latitude == nil || *r.item.Latitude != r.lat || r.item.Longitude == nil || *r.item.Longitude != r.lon || r.item.ExternalID != id {
			t.Errorf("accepted %q as %+v (%v, %v)", rec, r.item, r.lat, r.lon)
		}
		if out := record(nil, &r, nil, risk.Registry(), l); len(out) != len(l.header) {
			t.Errorf("%d cells, header %d", len(out), len(l.header))
		}
	})
}

// FuzzScore: whatever follows a valid header, Score never fails on it and
// writes one well-formed output row, of the header's width, per row read.
func FuzzScore(f *testing.F) {
	for _, seed := range []string{
		"p1,41.8,-87.6,a\n", "\"p,1\",41.8,-87.6,\"x\ny\"\n", "a,b\n", "\"unterminated,1,2,3\n", "x,1,2,3,4,5\r\n\r\n",
		"p\"1,2,3,4\n", ",,,\n,,,\n", "\x00,\xff,1,2\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		input, err := Open(strings.NewReader("externalId,latitude,longitude,note\n" + body))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		sum, err := input.Score(context.Background(), &fakeEngine{}, &out, Options{Workers: 2, ChunkRows: 2})
		if err != nil {
			t.Fatalf("Score: %v", err)
		}
		recs, err := csv.NewReader(&out).ReadAll()
		if err != nil {
			t.Fatalf("output not CSV: %v", err)
		}
		if len(recs) != sum.Rows+1 {
			t.Fatalf("%d output rows for %d read", len(recs)-1, sum.Rows)
		}
		for i, rec := range recs {
			if len(rec) != len(recs[0]) {
				t.Fatalf("row %d has %d cells, header %d", i, len(rec), len(recs[0]))
			}
		}
	})
}
