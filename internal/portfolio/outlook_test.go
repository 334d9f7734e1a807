package portfolio

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk"
)

// outlookEngine is fakeEngine with an outlook: latitude 41 has one (the
// multiplier of each hazard is its index + 1.5, a score 50 except where
// FEMA gives none), latitude 42 has a null one.
type outlookEngine struct{ fakeEngine }

func (f *outlookEngine) Assess(ctx context.Context, lat, lon float64) (*risk.Assessment, error) {
	a, err := f.fakeEngine.Assess(ctx, lat, lon)
	if err != nil {
		return nil, err
	}
	switch int(lat) {
	case 41:
		o := &risk.Outlook{CountyFIPS: "17031"}
		for i, h := range o.Hazards.All() {
			if h.Key == "hurricane" {
				continue // not applicable: no scenarios
			}
			m, score := float64(i)+1.5, 50.25
			var sc risk.OutlookScenarios
			for _, s := range sc.All() {
				s.Scenario.HazardMultiplier, s.Scenario.RiskScore = &m, &score
				if h.Key == "wildfire" {
					s.Scenario.RiskScore = nil // a territory's: no score
				}
			}
			h.Hazard.Scenarios = &sc
		}
		a.Report.Outlook = risk.Record(o)
	case 42:
		a.Report.Outlook = risk.Record[risk.Outlook](nil)
	}
	return a, nil
}

// TestOutlookColumns: with Columns.Outlook the output has the outlook's
// county and, per hazard and scenario, the multiplier and the projected
// score, after the peril columns; empty where the outlook or FEMA gives
// none (never 0), and for rows not scored.
func TestOutlookColumns(t *testing.T) {
	in := "externalId,latitude,longitude,note\na,41,-87,x\nb,42,-87,y\nc,-5,-87,z\nd,91,-87,w\n"
	input, err := OpenWith(strings.NewReader(in), Columns{Outlook: true})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := input.Score(context.Background(), &outlookEngine{}, &out, Options{}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := recs[0]
	plain := ownColumns(Columns{})
	cols := outlookColumns()
	if len(cols) != 1+5*4*2 || !slices.Equal(head[:len(plain)], plain) || !slices.Equal(head[len(plain):len(plain)+len(cols)], cols) || head[len(head)-1] != "note" {
		t.Fatalf("header %q", head)
	}
	for _, c := range []string{"outlook.countyFips", "outlook.coastalFlooding.midCenturyLowerWarming.hazardMultiplier",
		"outlook.drought.lateCenturyHigherWarming.riskScore", "outlook.wildfire.lateCenturyHigherWarming.hazardMultiplier"} {
		if !slices.Contains(head, c) {
			t.Errorf("no column %s", c)
		}
	}
	a := cells(head, recs[1])
	if a["outlook.countyFips"] != "17031" || a["outlook.coastalFlooding.midCenturyLowerWarming.hazardMultiplier"] != "1.5" ||
		a["outlook.drought.lateCenturyHigherWarming.hazardMultiplier"] != "2.5" || a["outlook.drought.lateCenturyHigherWarming.riskScore"] != "50.25" ||
		a["outlook.hurricane.midCenturyHigherWarming.hazardMultiplier"] != "" || a["outlook.hurricane.midCenturyHigherWarming.riskScore"] != "" ||
		a["outlook.wildfire.lateCenturyLowerWarming.hazardMultiplier"] != "5.5" || a["outlook.wildfire.lateCenturyLowerWarming.riskScore"] != "" || a["note"] != "x" {
		t.Errorf("row with an outlook: %v", a)
	}
	// A null outlook, a row outside coverage and a rejected row: every
	// outlook cell empty.
	for i, r := range recs[2:] {
		c := cells(head, r)
		for _, col := range cols {
			if c[col] != "" {
				t.Errorf("row %d: %s = %q, want empty", i+2, col, c[col])
			}
		}
		if len(r) != len(head) {
			t.Errorf("row %d has %d cells, the header %d", i+2, len(r), len(head))
		}
	}

	// Scored again with the outlook, the old outlook columns are dropped;
	// without it, they pass through.
	again := strings.Join(head, ",") + "\n"
	with, err := OpenWith(strings.NewReader(again), Columns{Outlook: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(with.Dropped(), "outlook.countyFips") {
		t.Errorf("dropped %v, want the outlook columns among them", with.Dropped())
	}
	without, err := Open(strings.NewReader(again))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(without.Dropped(), "outlook.countyFips") || !slices.Contains(without.l.header, "outlook.countyFips") {
		t.Errorf("without the outlook, its columns are not passed through: %v", without.l.header)
	}
}
