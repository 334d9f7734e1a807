package batchcsv

import (
	"bytes"
	"strings"
	"testing"

	"github.com/locrisk/locrisk"
)

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "plain": "plain", "=1+1": "'=1+1", "+1": "'+1", "-1": "'-1", "@SUM(A1)": "'@SUM(A1)",
		"\tx": "'\tx", "\rx": "'\rx", " =x": " =x", "a=b": "a=b", "'=x": "'=x",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHeader: the header docs/api.md (Batches, operation 10) shows, and a
// fresh slice on every call.
func TestHeader(t *testing.T) {
	const want = "rowNumber,externalId,latitude,longitude,status,reportJobId,reportId,score,riskLevel," +
		"hydrology,severeWeather,wildfire,earthquake,landslide,environmentalExposure,errorCode,errorMessage"
	h := Header()
	if got := strings.Join(h, ","); got != want {
		t.Fatalf("Header() = %s\nwant        %s", got, want)
	}
	h[0] = "changed"
	if Header()[0] != "rowNumber" {
		t.Error("Header() shares its storage between calls")
	}
}

func TestRecord(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	s := func(v string) *string { return &v }
	tests := []struct {
		name string
		it   locrisk.BatchItem
		want string
	}{
		{"completed", locrisk.BatchItem{RowNumber: 2, ExternalID: "-p1", Latitude: f(41.8781), Longitude: f(-87.6298),
			Status: "completed", JobID: s("job_1"), ReportID: s("rpt_1"), Score: i(64), RiskLevel: s("high"),
			ModuleScores: map[string]*int{"hydrology": i(20), "wildfire": i(0), "landslide": nil}},
			"2,'-p1,41.8781,-87.6298,completed,job_1,rpt_1,64,high,20,,0,,,,,"},
		{"rejected", locrisk.BatchItem{RowNumber: 1, Latitude: f(1e-7), Status: "rejected",
			ErrorCode: s("invalid_longitude"), ErrorMessage: s("=bad")},
			"1,,0.0000001,,rejected,,,,,,,,,,,invalid_longitude,'=bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := Record(tt.it, make([]string, 3))
			if len(rec) != len(Header()) {
				t.Errorf("%d cells, header has %d", len(rec), len(Header()))
			}
			if got := strings.Join(rec, ","); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestWriterCRLF: records end in CRLF; a line break inside a cell is kept
// exactly, CR and LF alike.
func TestWriterCRLF(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, rec := range [][]string{{"a", "b"}, {"line\nbreak", "cr\rlf\r\n", `q"uote`}, {"", "z"}} {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	const want = "a,b\r\n\"line\nbreak\",\"cr\rlf\r\n\",\"q\"\"uote\"\r\n,z\r\n"
	if got := b.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
