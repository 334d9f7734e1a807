package validation

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestBuiltinTableParses: the shipped table reads, and holds what
// docs/methodology.md and `locrisk data validate` count.
func TestBuiltinTableParses(t *testing.T) {
	tab, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	checks := len(tab.Orders) + len(tab.Lows) + len(tab.Priorities)
	var gaps []string
	for _, o := range tab.Orders {
		if o.Gap != "" {
			gaps = append(gaps, o.key())
		}
	}
	for _, lo := range tab.Lows {
		if lo.Gap != "" {
			gaps = append(gaps, lo.key())
		}
	}
	for _, p := range tab.Priorities {
		if p.Gap != "" {
			gaps = append(gaps, p.key())
		}
	}
	if len(tab.Places) != 174 || checks-len(gaps) != 223 {
		t.Errorf("%d places and %d checks besides the known gaps, want 174 and 223", len(tab.Places), checks-len(gaps))
	}
	want := []string{
		"landslide/landslide: Pacifica (Esplanade bluffs), CA > Redwood City, CA",
		"landslide/landslide: Emigration Canyon, UT > Salt Lake City, UT",
		"landslide/landslide: Eureka Springs, AR > Jonesboro, AR",
	}
	if !reflect.DeepEqual(gaps, want) {
		t.Errorf("known gaps %q, want %q", gaps, want)
	}
}

func TestParseReadsEveryKind(t *testing.T) {
	const in = "# a comment\n" +
		"\n" +
		"place\tMoore, OK\t35.3395\t-97.4867\t40027\n" +
		// Runs of tabs align columns; spaces around a field are dropped.
		"place\t\tNewark, NJ \t40.7357\t\t-74.1724\t34013\n" +
		"order\tsevereWeather/tornado\tMoore, OK\tNewark, NJ\tMoore is in tornado alley.\n" +
		"order\tsevereWeather\tNewark, NJ\tMoore, OK\tNot so.\tgap: A gap, and why.\n" +
		"low\thydrology/coastal\tMoore, OK\t30\tMoore is far from the sea.\n" +
		"priority\tsevereWeather\tMoore, OK\thigh\tMoore is the archetype.\n" +
		"priority\tlandslide\tNewark, NJ\tnot high\tNewark is flat.\n"
	got, err := Parse(strings.NewReader(in), "t.tsv")
	if err != nil {
		t.Fatal(err)
	}
	want := &Table{
		Places: []Place{
			{Name: "Moore, OK", Lat: 35.3395, Lon: -97.4867, County: "40027"},
			{Name: "Newark, NJ", Lat: 40.7357, Lon: -74.1724, County: "34013"},
		},
		Orders: []Order{
			{Module: "severeWeather", Peril: "tornado", Higher: "Moore, OK", Lower: "Newark, NJ", Why: "Moore is in tornado alley."},
			{Module: "severeWeather", Higher: "Newark, NJ", Lower: "Moore, OK", Why: "Not so.", Gap: "A gap, and why."},
		},
		Lows:       []Low{{Module: "hydrology", Peril: "coastal", Place: "Moore, OK", Max: 30, Why: "Moore is far from the sea."}},
		Priorities: []Priority{{Module: "severeWeather", Place: "Moore, OK", High: true, Why: "Moore is the archetype."}, {Module: "landslide", Place: "Newark, NJ", Why: "Newark is flat."}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if k := got.Orders[0].key(); k != "severeWeather/tornado: Moore, OK > Newark, NJ" {
		t.Errorf("order key %q", k)
	}
	if k := got.Lows[0].key(); k != "hydrology/coastal: Moore, OK < 30" {
		t.Errorf("low key %q", k)
	}
	if k := got.Priorities[1].key(); k != "landslide priority: Newark, NJ not high" {
		t.Errorf("priority key %q", k)
	}
}

// TestParseErrorsNameTheLine: a line that cannot be read, or a check that
// names an unlisted place, stops the parse with the file, the line number
// and what is wrong.
func TestParseErrorsNameTheLine(t *testing.T) {
	const head = "# places\n" +
		"place\tMoore, OK\t35.3395\t-97.4867\t40027\n" +
		"place\tNewark, NJ\t40.7357\t-74.1724\t34013\n"
	tests := []struct {
		name, line string
		want       string
	}{
		{"latitude not a number", "place\tTulsa, OK\t36.15x\t-95.99\t40143", `t.tsv:4: place: Tulsa, OK: latitude "36.15x" is not a number of degrees within ±90`},
		{"longitude out of range", "place\tTulsa, OK\t36.15\t-195.99\t40143", `t.tsv:4: place: Tulsa, OK: longitude "-195.99" is not a number`},
		{"county not FIPS", "place\tTulsa, OK\t36.15\t-95.99\t4014", `t.tsv:4: place: Tulsa, OK: county "4014" is not a 5-digit FIPS code`},
		{"missing field", "place\tTulsa, OK\t36.15\t-95.99", "t.tsv:4: place: 3 fields after the kind, want NAME, LAT, LON and COUNTY"},
		{"place twice", "place\tMoore, OK\t35.3\t-97.5\t40027", `t.tsv:4: place "Moore, OK" is listed twice (first on line 2)`},
		{"unknown kind", "ordre\tearthquake\tMoore, OK\tNewark, NJ\twhy", `t.tsv:4: unknown line kind "ordre": want place, order, low or priority`},
		{"spaces for tabs", "low earthquake Moore, OK 50 why", "t.tsv:4: low: fields are separated by tabs, not spaces"},
		{"unknown module", "order\tquake\tMoore, OK\tNewark, NJ\twhy", `t.tsv:4: order: unknown module "quake"`},
		{"unknown peril", "order\tearthquake/tsunami\tMoore, OK\tNewark, NJ\twhy", `t.tsv:4: order: module earthquake has no peril "tsunami" (want one of groundShaking)`},
		{"no why", "order\tearthquake\tMoore, OK\tNewark, NJ", "t.tsv:4: order: 3 fields after the kind"},
		{"too many fields", "order\tearthquake\tMoore, OK\tNewark, NJ\twhy\tgap: why\tmore", "t.tsv:4: order: 6 fields after the kind"},
		{"gap unmarked", "low\tearthquake\tMoore, OK\t50\twhy\tthe grid is coarse", `t.tsv:4: low: "the grid is coarse" after WHY: only a known gap may follow, written "gap: " and why`},
		{"gap empty", "priority\tearthquake\tMoore, OK\thigh\twhy\tgap:", `t.tsv:4: priority: "gap:" after WHY`},
		{"ordered against itself", "order\tearthquake\tMoore, OK\tMoore, OK\twhy", "t.tsv:4: order: Moore, OK is ordered against itself"},
		{"max not a score", "low\tearthquake\tMoore, OK\t0\twhy", `t.tsv:4: low: Moore, OK: MAX "0" is not a whole score from 1 to 100`},
		{"priority of a peril", "priority\tearthquake/groundShaking\tMoore, OK\thigh\twhy", `t.tsv:4: priority: "earthquake/groundShaking": a priority is a module's, not a peril's`},
		{"priority word", "priority\tearthquake\tMoore, OK\tHigh\twhy", `t.tsv:4: priority: Moore, OK: "High" is neither high nor not high`},
		{"unlisted place", "low\tearthquake\tTulsa, OK\t50\twhy", `t.tsv:4: low: place "Tulsa, OK" is not listed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A comment after the bad line: the line number is the bad
			// line's, not the last one read.
			_, err := Parse(strings.NewReader(head+tt.line+"\n# end\n"), "t.tsv")
			if err == nil {
				t.Fatalf("no error for %q", tt.line)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to start %q", err, tt.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != 4 || pe.File != "t.tsv" {
				t.Errorf("error %#v is not a ParseError for t.tsv line 4", err)
			}
		})
	}
}

// TestParseUnlistedPlaceNamesTheCheck: a check may come before or after
// the places; an unlisted one is reported at the check's line.
func TestParseUnlistedPlaceNamesTheCheck(t *testing.T) {
	const in = "order\tearthquake\tMoore, OK\tTulsa, OK\twhy\n" +
		"place\tMoore, OK\t35.3395\t-97.4867\t40027\n"
	_, err := Parse(strings.NewReader(in), "t.tsv")
	if err == nil || err.Error() != `t.tsv:1: order: place "Tulsa, OK" is not listed` {
		t.Fatalf("error %v", err)
	}
}
