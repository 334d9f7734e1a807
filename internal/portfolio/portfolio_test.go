package portfolio

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/batchcsv"
	"github.com/locrisk/locrisk/internal/risk"
)

// fakeEngine scores a point with its latitude's whole part; a latitude
// below 0 is outside coverage, 13 makes the engine fail and 66 panic. It
// sleeps a little on odd latitudes so that workers finish out of order.
type fakeEngine struct{ calls atomic.Int64 }

func (f *fakeEngine) Assess(ctx context.Context, lat, lon float64) (*risk.Assessment, error) {
	f.calls.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch {
	case lat < 0:
		return nil, risk.ErrUnsupportedLocation
	case lat == 13:
		return nil, errors.New("disk on fire")
	case lat == 66:
		panic("boom")
	}
	if int(lat)%2 == 1 {
		time.Sleep(200 * time.Microsecond)
	}
	score := int(lat)
	level := risk.RiskLevel(score)
	a := &risk.Assessment{Location: risk.Location{Latitude: lat, Longitude: lon, StateCode: "IL", CountyFIPS: "17031", CountyName: "Cook County"}}
	a.Summary.OverallScore, a.Summary.RiskLevel = score, level
	for _, m := range risk.Registry() {
		a.Summary.ModuleScores.Set(m.Key, &score)
		var perils []risk.Peril
		for _, p := range m.Perils {
			perils = append(perils, risk.Peril{Peril: p.Key, Score: &score, RiskLevel: &level})
		}
		a.Summary.Perils.Set(m.Key, perils)
	}
	return a, nil
}

// scoreString runs Open and Score over in and returns the output records.
func scoreString(t *testing.T, in string, opt Options) ([][]string, Summary, string) {
	t.Helper()
	input, err := Open(strings.NewReader(in))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	var out bytes.Buffer
	sum, err := input.Score(context.Background(), &fakeEngine{}, &out, opt)
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	r := csv.NewReader(bytes.NewReader(out.Bytes()))
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("output is not CSV: %v\n%s", err, out.String())
	}
	return recs, sum, out.String()
}

// cells maps the output header to one record's cells.
func cells(header, rec []string) map[string]string {
	m := map[string]string{}
	for i, h := range header {
		if i < len(rec) {
			m[h] = rec[i]
		}
	}
	return m
}

func TestHeaderVariants(t *testing.T) {
	own := ownColumns(Columns{})
	tests := []struct {
		name      string
		in        string
		wantExtra []string // passthrough columns after ours
		wantID    string   // externalId of the first row
		wantLat   string
	}{
		{"plain", "externalId,latitude,longitude\np1,41.5,-87.5\n", nil, "p1", "41.5"},
		{"any order", "longitude,externalId,latitude\n-87.5,p1,41.5\n", nil, "p1", "41.5"},
		{"case and spaces", " EXTERNALID ,Latitude,  longitude\np1,41.5,-87.5\n", nil, "p1", "41.5"},
		{"byte order mark", "\uFEFFexternalId,latitude,longitude\np1,41.5,-87.5\n", nil, "p1", "41.5"},
		{"CRLF", "externalId,latitude,longitude\r\np1,41.5,-87.5\r\n", nil, "p1", "41.5"},
		{"passthrough in input order", "name,latitude,policy,externalId,longitude,notes\nA,41.5,P-9,p1,-87.5,\"x, y\"\n",
			[]string{"name", "policy", "notes"}, "p1", "41.5"},
		{"our own columns dropped", "externalId,latitude,longitude,score,status,county,hydrology.coastal,mine\np1,41.5,-87.5,1,2,3,4,5\n",
			[]string{"mine"}, "p1", "41.5"},
		{"quoted header and cells", "\"externalId\",\"latitude\",\"longitude\",\"a \"\"b\"\"\"\n\"p,1\",\" 41.5 \",\"-87.5\",\"line\nbreak\"\n",
			[]string{`a "b"`}, "p,1", "41.5"},
		{"no final line break", "externalId,latitude,longitude\np1,41.5,-87.5", nil, "p1", "41.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, sum, _ := scoreString(t, tt.in, Options{})
			if want := append(append([]string{}, own...), tt.wantExtra...); strings.Join(recs[0], "|") != strings.Join(want, "|") {
				t.Fatalf("header\n got %q\nwant %q", recs[0], want)
			}
			if len(recs) != 2 || sum.Rows != 1 || sum.Scored != 1 {
				t.Fatalf("records %q, summary %+v", recs, sum)
			}
			c := cells(recs[0], recs[1])
			if c["externalId"] != tt.wantID || c["latitude"] != tt.wantLat || c["status"] != "completed" || c["score"] != "41" {
				t.Errorf("row %v", c)
			}
		})
	}
}

// TestPassthroughValues: passthrough cells come out exactly as read, with
// no formula guard (they are the caller's own data); our text cells are
// guarded as in the batch CSV.
func TestPassthroughValues(t *testing.T) {
	recs, _, _ := scoreString(t, "externalId,latitude,longitude,a,b\n=id,41,-87,=SUM(A1),\"multi\nline\"\n", Options{})
	c := cells(recs[0], recs[1])
	if c["externalId"] != "'=id" || c["a"] != "=SUM(A1)" || c["b"] != "multi\nline" {
		t.Errorf("cells %q", c)
	}
}

func TestHeaderErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty file", "", "empty"},
		{"blank lines only", "\n\n", "empty"},
		{"missing latitude", "externalId,lat,longitude\n1,2,3\n", "latitude"},
		{"missing all", "a,b,c\n", "externalId, latitude, longitude"},
		{"column twice", "externalId,latitude,longitude,Latitude\n", `"Latitude" twice`},
		{"header not CSV", "externalId,lat\"itude,longitude\n", "not valid CSV"},
		{"data row as header", "p1,41.8,-87.6\n", "lacks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(strings.NewReader(tt.in))
			var he *HeaderError
			if !errors.As(err, &he) || !strings.Contains(he.Msg, tt.want) {
				t.Errorf("Open(%q) = %v, want a HeaderError mentioning %q", tt.in, err, tt.want)
			}
		})
	}
}

// TestBadRows: every kind of bad row is reported in its own output row,
// with the code and message, and the run goes on.
func TestBadRows(t *testing.T) {
	in := "externalId,latitude,longitude,note\n" +
		"ok,41,-87,a\n" + // 1
		"lat-text,north,-87,b\n" + // 2
		"lat-range,90.5,-87,c\n" + // 3
		"lon-range,41,-180.01,d\n" + // 4
		"lat-empty,,-87,e\n" + // 5
		"lon-empty,41,,f\n" + // 6
		"nan,NaN,-87,g\n" + // 7
		"inf,41,-Inf,h\n" + // 8
		"hex,0x10,-87,i\n" + // 9
		"outside,-10,-87,j\n" + // 10
		"short,41\n" + // 11
		"long,41,-87,k,extra\n" + // 12
		"stray,4\"1,-87,l\n" + // 13
		"engine,13,-87,m\n" + // 14
		"panic,66,-87,n\n" + // 15
		"both-bad,x,y,o\n" + // 16
		"exp,4.1e1,-8.7e1,p\n" // 17
	recs, sum, _ := scoreString(t, in, Options{Workers: 3, ChunkRows: 2})
	want := []struct{ status, code, msg, lat, lon, note string }{
		{"completed", "", "", "41", "-87", "a"},
		{"rejected", "invalid_latitude", `latitude "north" is not a number`, "", "-87", "b"},
		{"rejected", "invalid_latitude", `latitude "90.5" is not a number from -90 to 90`, "90.5", "-87", "c"},
		{"rejected", "invalid_longitude", `longitude "-180.01" is not a number from -180 to 180`, "41", "-180.01", "d"},
		{"rejected", "invalid_latitude", "latitude is required", "", "-87", "e"},
		{"rejected", "invalid_longitude", "longitude is required", "41", "", "f"},
		{"rejected", "invalid_latitude", `latitude "NaN"`, "", "-87", "g"},
		{"rejected", "invalid_longitude", `longitude "-Inf"`, "41", "", "h"},
		{"rejected", "invalid_latitude", `latitude "0x10"`, "", "-87", "i"},
		{"rejected", "unsupported_location", "outside the supported United States coverage", "-10", "-87", "j"},
		{"rejected", "invalid_row", "row 11 has 2 fields; the header has 4", "", "", ""},
		{"rejected", "invalid_row", "row 12 has 5 fields", "", "", "k"},
		{"rejected", "invalid_row", "row 13 is not valid CSV", "", "", ""},
		{"failed", "generation_error", "disk on fire", "13", "-87", "m"},
		{"failed", "generation_error", "internal error: boom", "66", "-87", "n"},
		{"rejected", "invalid_latitude", `latitude "x"`, "", "", "o"},
		{"completed", "", "", "41", "-87", "p"},
	}
	if len(recs) != len(want)+1 {
		t.Fatalf("%d output rows, want %d", len(recs)-1, len(want))
	}
	for i, w := range want {
		c := cells(recs[0], recs[i+1])
		if c["rowNumber"] != strconv.Itoa(i+1) || c["status"] != w.status || c["errorCode"] != w.code ||
			!strings.Contains(c["errorMessage"], w.msg) || c["latitude"] != w.lat || c["longitude"] != w.lon || c["note"] != w.note {
			t.Errorf("row %d: %v\nwant %+v", i+1, c, w)
		}
		if len(recs[i+1]) != len(recs[0]) {
			t.Errorf("row %d has %d cells, header %d", i+1, len(recs[i+1]), len(recs[0]))
		}
		if w.status != "completed" && (c["score"] != "" || c["state"] != "" || c["severeWeather.tornado"] != "") {
			t.Errorf("row %d: a row not scored has scores: %v", i+1, c)
		}
	}
	wantRejected := map[string]int{"invalid_latitude": 6, "invalid_longitude": 3, "unsupported_location": 1, "invalid_row": 3}
	if sum.Rows != 17 || sum.Scored != 2 || sum.Failed != 2 || fmt.Sprint(sum.Rejected) != fmt.Sprint(wantRejected) {
		t.Errorf("summary %+v, want rejected %v", sum, wantRejected)
	}
}

// TestScoredCells: a scored row carries the batch CSV's cells, the
// location and every peril's score and level.
func TestScoredCells(t *testing.T) {
	recs, _, raw := scoreString(t, "externalId,latitude,longitude\np1,61.25,-149.9\n", Options{})
	c := cells(recs[0], recs[1])
	want := map[string]string{
		"rowNumber": "1", "externalId": "p1", "latitude": "61.25", "longitude": "-149.9", "status": "completed",
		"reportJobId": "", "reportId": "", "score": "61", "riskLevel": "high", "hydrology": "61", "environmentalExposure": "61",
		"errorCode": "", "errorMessage": "", "state": "IL", "countyFips": "17031", "county": "Cook County",
		"severeWeather.tornado": "61", "severeWeather.tornado.riskLevel": "high", "earthquake.groundShaking": "61",
	}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("%s = %q, want %q", k, c[k], v)
		}
	}
	if !strings.HasSuffix(raw, "\r\n") || strings.Count(raw, "\r\n") != 2 {
		t.Errorf("records do not end in CRLF: %q", raw)
	}
}

// TestOrder: with many workers, small chunks and engine calls finishing
// out of order, the output keeps the input order.
func TestOrder(t *testing.T) {
	var b strings.Builder
	b.WriteString("externalId,latitude,longitude\n")
	const n = 2000
	for i := range n {
		fmt.Fprintf(&b, "r%d,%d,-87\n", i, i%60)
	}
	for _, opt := range []Options{{Workers: 1}, {Workers: 8, ChunkRows: 1}, {Workers: 4, ChunkRows: 7}} {
		t.Run(fmt.Sprintf("%d workers, chunks of %d", opt.Workers, opt.ChunkRows), func(t *testing.T) {
			var calls []int
			opt.Progress = func(rows int, _ int64) { calls = append(calls, rows) }
			recs, sum, _ := scoreString(t, b.String(), opt)
			if sum.Rows != n || len(recs) != n+1 {
				t.Fatalf("%d rows, summary %+v", len(recs)-1, sum)
			}
			for i, rec := range recs[1:] {
				if rec[1] != fmt.Sprintf("r%d", i) || rec[0] != strconv.Itoa(i+1) {
					t.Fatalf("row %d is %q", i+1, rec[:2])
				}
			}
			if len(calls) == 0 || calls[len(calls)-1] != n {
				t.Errorf("progress calls end at %v, want %d", calls[max(0, len(calls)-3):], n)
			}
		})
	}
}

// endlessRows yields an endless stream of rows, so a test can show memory
// stays bounded and cancellation stops the run.
type endlessRows struct{ buf []byte }

func (e *endlessRows) Read(p []byte) (int, error) {
	if len(e.buf) == 0 {
		e.buf = []byte("x,41,-87\n")
	}
	n := copy(p, e.buf)
	e.buf = e.buf[n:]
	return n, nil
}

// TestCancel: an endless input stops with the context's error, and the
// reader runs only a bounded distance ahead of the writer.
func TestCancel(t *testing.T) {
	input, err := Open(io.MultiReader(strings.NewReader("externalId,latitude,longitude\n"), &endlessRows{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	eng := &fakeEngine{}
	var written int
	opt := Options{Workers: 2, ChunkRows: 10, Progress: func(rows int, _ int64) {
		written = rows
		if rows >= 1000 {
			// The writer stops here: the reader and the workers must
			// stall within the bound of chunks in flight.
			time.Sleep(100 * time.Millisecond)
			if calls := eng.calls.Load(); calls > int64(rows)+2*4*10+2*10 {
				t.Errorf("%d rows scored with %d written: more in flight than the bound", calls, rows)
			}
			cancel()
		}
	}}
	done := make(chan error)
	go func() {
		_, err := input.Score(ctx, eng, io.Discard, opt)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Score = %v after cancel, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Score did not stop after cancel")
	}
	if written < 1000 {
		t.Errorf("only %d rows written", written)
	}
}

// failingWriter fails after n bytes.
type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriteError(t *testing.T) {
	input, err := Open(strings.NewReader("externalId,latitude,longitude\n" + strings.Repeat("x,41,-87\n", 5000)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = input.Score(context.Background(), &fakeEngine{}, &failingWriter{n: 20000}, Options{Workers: 2})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Score = %v, want the write error", err)
	}
}

func TestCoordinate(t *testing.T) {
	tests := []struct {
		in    string
		v     float64
		isNum bool
		ok    bool
	}{
		{"41.5", 41.5, true, true}, {" -87.25 ", -87.25, true, true}, {"-0", 0, true, true}, {"90", 90, true, true},
		{"90.0000001", 90.0000001, true, false}, {"4.1e1", 41, true, true}, {"1e400", 0, false, false},
		{"", 0, false, false}, {"NaN", 0, false, false}, {"inf", 0, false, false}, {"0x1p4", 0, false, false},
		{"1_0", 0, false, false}, {"41,5", 0, false, false}, {"41.5N", 0, false, false},
	}
	for _, tt := range tests {
		v, num, ok := coordinate(tt.in, 90)
		if ok != tt.ok || (num != nil) != tt.isNum || (ok && v != tt.v) || (num != nil && *num != tt.v) || math.Signbit(v) && v == 0 {
			t.Errorf("coordinate(%q) = %v, %v, %v; want %v, num %v, %v", tt.in, v, num, ok, tt.v, tt.isNum, tt.ok)
		}
	}
}

// TestColumnsUnique: no two output columns share a name, and ours start
// with the batch CSV's, so a tool reading results.csv reads these too.
func TestColumnsUnique(t *testing.T) {
	own := ownColumns(Columns{})
	seen := map[string]bool{}
	for _, c := range own {
		if seen[c] {
			t.Errorf("column %q twice", c)
		}
		seen[c] = true
	}
	if b := batchcsv.Header(); strings.Join(own[:len(b)], ",") != strings.Join(b, ",") {
		t.Errorf("output columns do not start with the batch CSV's: %q", own)
	}
}

// TestCancelIdleInput: cancelling while the input has nothing to read (a
// terminal, an idle pipe) returns at once, without waiting for the read.
func TestCancelIdleInput(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go io.WriteString(pw, "externalId,latitude,longitude\nx,41,-87\n")
	input, err := Open(pr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := input.Score(ctx, &fakeEngine{}, io.Discard, Options{Workers: 2})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Score = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Score waits for an idle input after cancel")
	}
}
