package portfolio

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk"
)

// shiftedEngine scores every module of a point with its latitude's whole
// part plus the module's shift, and the overall score as the highest
// module; it covers latitudes from 0 to maxLat, and fails at 13.
type shiftedEngine struct {
	shift  map[string]int
	maxLat float64
}

func (e shiftedEngine) Assess(ctx context.Context, lat, lon float64) (*risk.Assessment, error) {
	switch {
	case lat < 0 || lat > e.maxLat:
		return nil, risk.ErrUnsupportedLocation
	case lat == 13:
		return nil, errors.New("disk on fire")
	}
	a := &risk.Assessment{Location: risk.Location{Latitude: lat, Longitude: lon}}
	for _, k := range risk.ModuleKeys() {
		s := int(lat) + e.shift[k]
		lvl := risk.RiskLevel(s)
		a.Summary.ModuleScores.Set(k, &s)
		a.Report.Modules.Set(k, risk.ModuleReport{Score: &s, RiskLevel: &lvl,
			Indicators: []risk.Indicator{{ID: k + "_index", Percentile: func() *float64 { p := float64(s); return &p }()}}})
		a.Summary.OverallScore = max(a.Summary.OverallScore, s)
	}
	a.Summary.RiskLevel = risk.RiskLevel(a.Summary.OverallScore)
	return a, nil
}

// Diff counts, by module, the rows whose reports change and those that
// change materially, and writes the material rows and the rows whose
// coverage differs, in input order; bad rows, rows neither pack covers
// and rows an engine fails on are counted as Score counts them.
func TestDiff(t *testing.T) {
	const in = "externalId,latitude,longitude\r\n" +
		"a,30,-90\r\n" + // wildfire 30 -> 36: material at 5, not at 7
		"b,38,-90\r\n" + // hydrology 38 -> 41 crosses low -> moderate
		"c,50,-90\r\n" + // wildfire 50 -> 56: material at 5, not at 7
		"bad,x,-90\r\n" +
		"out,-5,-90\r\n" +
		"north,70.5,-90\r\n" + // only the old pack covers it
		"fail,13,-90\r\n" +
		"=cmd,20,-90\r\n" // wildfire 20 -> 26 (material at 5)
	before := shiftedEngine{maxLat: 90}
	after := shiftedEngine{shift: map[string]int{"hydrology": 3, "wildfire": 6}, maxLat: 70}
	tests := []struct {
		min      int
		material int
		modules  map[string]Count
		overall  Count
		rows     []string // externalId, change, materialModules of each output row
	}{
		{5, 4, map[string]Count{"hydrology": {4, 1}, "wildfire": {4, 4}}, Count{4, 4},
			[]string{"a material wildfire", "b material hydrology wildfire", "c material wildfire", "north coverage ", "'=cmd material wildfire"}},
		{7, 1, map[string]Count{"hydrology": {4, 1}, "wildfire": {4, 1}}, Count{4, 1},
			[]string{"b material hydrology wildfire", "north coverage "}},
	}
	for _, tt := range tests {
		input, err := Open(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		sum, err := input.Diff(context.Background(), before, after, tt.min, &out, Options{Workers: 3, ChunkRows: 2})
		if err != nil {
			t.Fatal(err)
		}
		want := DiffSummary{
			Summary:        Summary{Rows: 8, Scored: 4, Failed: 1, Rejected: map[string]int{CodeInvalidLatitude: 1, CodeUnsupported: 1}},
			MinScoreChange: tt.min, Changed: 4, Material: tt.material, Coverage: 1,
			Overall: tt.overall, Modules: tt.modules,
		}
		if !reflect.DeepEqual(sum, want) {
			t.Errorf("min %d: summary\n%+v\nwant\n%+v", tt.min, sum, want)
		}
		if !strings.HasSuffix(out.String(), "\r\n") || strings.Count(out.String(), "\r\n") != len(tt.rows)+1 {
			t.Errorf("records do not end in CRLF: %q", out.String())
		}
		recs, err := csv.NewReader(&out).ReadAll()
		if err != nil {
			t.Fatalf("output is not CSV: %v", err)
		}
		if !reflect.DeepEqual(recs[0], DiffHeader()) {
			t.Errorf("header %v", recs[0])
		}
		var rows []string
		for _, r := range recs[1:] {
			c := cells(recs[0], r)
			rows = append(rows, c["externalId"]+" "+c["change"]+" "+c["materialModules"])
		}
		if !reflect.DeepEqual(rows, tt.rows) {
			t.Errorf("min %d: rows %q, want %q", tt.min, rows, tt.rows)
		}
		b := cells(recs[0], recs[2])
		if tt.min == 5 && (b["rowNumber"] != "2" || b["hydrologyBefore"] != "38" || b["hydrologyAfter"] != "41" ||
			b["overallScoreBefore"] != "38" || b["overallScoreAfter"] != "44" || b["riskLevelBefore"] != "low" || b["riskLevelAfter"] != "moderate" ||
			b["earthquakeBefore"] != "38" || b["earthquakeAfter"] != "38" || b["latitude"] != "38") {
			t.Errorf("row b: %v", b)
		}
		north := cells(recs[0], recs[len(recs)-1-map[int]int{5: 1, 7: 0}[tt.min]])
		if north["overallScoreBefore"] != "70" || north["overallScoreAfter"] != "" || north["hydrologyAfter"] != "" {
			t.Errorf("row north: %v", north)
		}
	}
}

// The same pack on both sides changes nothing.
func TestDiffSamePack(t *testing.T) {
	input, err := Open(strings.NewReader("externalId,latitude,longitude\n1,10,-90\n2,55,-90\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	eng := shiftedEngine{maxLat: 90}
	sum, err := input.Diff(context.Background(), eng, eng, 1, &out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Scored != 2 || sum.Changed != 0 || sum.Material != 0 || len(sum.Modules) != 0 {
		t.Errorf("summary %+v", sum)
	}
	if strings.Count(out.String(), "\r\n") != 1 {
		t.Errorf("output %q, want the header alone", out.String())
	}
	counts := sum.ModuleCounts()
	if len(counts) != len(risk.ModuleKeys()) || counts[0].Module != risk.ModuleKeys()[0] {
		t.Errorf("module counts %+v", counts)
	}
}
