package risk

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/futurerisk"
)

// outlookModules are the modules the outlook's hazards map to
// (docs/methodology.md, "Outlook"): drought and extreme heat map to none.
var outlookModules = map[string]string{"coastalFlooding": "hydrology", "hurricane": "severeWeather", "wildfire": "wildfire"}

// checkOutlook asserts what every new assessment's outlook keeps: recorded
// in the summary and the full report, null in both exactly where a reason
// is given, and where present five hazards, each with four scenarios or a
// reason, never a 0 standing for a missing number.
func checkOutlook(t *testing.T, a *Assessment) {
	t.Helper()
	s, f := a.Summary, a.Report
	if !s.Outlook.Set || !f.Outlook.Set {
		t.Fatalf("outlook not recorded: summary %v, report %v", s.Outlook.Set, f.Outlook.Set)
	}
	if (s.Outlook.Value == nil) != (f.Outlook.Value == nil) || (f.Outlook.Value == nil) != (f.OutlookUnavailable != nil) ||
		!reflect.DeepEqual(s.OutlookUnavailable, f.OutlookUnavailable) {
		t.Fatalf("outlook null in one place and not another: summary %v, report %v, why %v / %v",
			s.Outlook.Value, f.Outlook.Value, s.OutlookUnavailable, f.OutlookUnavailable)
	}
	o, b := f.Outlook.Value, s.Outlook.Value
	if o == nil {
		if f.OutlookUnavailable.Code != "county_not_in_data" || f.OutlookUnavailable.Message == "" {
			t.Errorf("outlook unavailable as %+v", f.OutlookUnavailable)
		}
		return
	}
	if o.Source != futurerisk.SourceID || o.Resolution != "county" || o.Vintage == "" || o.Withdrawal == "" || o.Note == "" || len(o.CountyFIPS) != 5 {
		t.Errorf("outlook header %+v", o)
	}
	if b.Source != o.Source || b.Resolution != "county" || b.Scenario != "lateCenturyHigherWarming" {
		t.Errorf("brief outlook %+v", b)
	}
	brief := []*float64{b.HazardMultipliers.CoastalFlooding, b.HazardMultipliers.Drought, b.HazardMultipliers.ExtremeHeat, b.HazardMultipliers.Hurricane, b.HazardMultipliers.Wildfire}
	for i, h := range o.Hazards.All() {
		z := h.Hazard
		if want, ok := outlookModules[h.Key]; (z.Module == nil) == ok || (ok && *z.Module != want) {
			t.Errorf("%s: module %v, want %q", h.Key, z.Module, want)
		}
		if (z.Projection != nil) != (h.Key == "extremeHeat") {
			t.Errorf("%s: projection %v", h.Key, z.Projection)
		}
		if (z.Scenarios == nil) == (z.Reason == nil) {
			t.Errorf("%s: scenarios %v with reason %v", h.Key, z.Scenarios, z.Reason)
		}
		if z.Scenarios == nil {
			if brief[i] != nil {
				t.Errorf("%s: no scenarios but a brief multiplier %v", h.Key, *brief[i])
			}
			continue
		}
		given := false
		for _, sc := range z.Scenarios.All() {
			p := sc.Scenario
			if p.HazardMultiplier != nil && *p.HazardMultiplier <= 0 {
				t.Errorf("%s %s: multiplier %v", h.Key, sc.Key, *p.HazardMultiplier)
			}
			if p.RiskScore != nil && (*p.RiskScore < 0 || *p.RiskScore > 100) {
				t.Errorf("%s %s: risk score %v", h.Key, sc.Key, *p.RiskScore)
			}
			if p.MultiplierRating == "" || p.RiskRating == "" || p.AnnualLossRating == "" {
				t.Errorf("%s %s: a rating missing: %+v", h.Key, sc.Key, p)
			}
			given = given || p.HazardMultiplier != nil || p.RiskScore != nil
		}
		if !given {
			t.Errorf("%s: four scenarios without a number", h.Key)
		}
		if late := z.Scenarios.LateCenturyHigherWarming.HazardMultiplier; !reflect.DeepEqual(late, brief[i]) {
			t.Errorf("%s: brief multiplier %v, full report's %v", h.Key, brief[i], late)
		}
	}
}

// TestOutlookRealCounties builds the outlook of every county of the
// coverage on the real data and holds it to the table: four scenarios for
// each hazard the table gives a number for, null with a reason for the
// others, null as a whole only for the county the table lacks.
func TestOutlookRealCounties(t *testing.T) {
	e := loadReal(t)
	hazards := futurerisk.Hazards()
	withScenarios := map[string]int{}
	var missing []string
	for _, c := range e.coverage.Counties() {
		a := &Assessment{}
		o := e.outlook(c)
		a.Summary.Outlook, a.Summary.OutlookUnavailable = o.brief, o.unavailable
		a.Report.Outlook, a.Report.OutlookUnavailable = o.full, o.unavailable
		checkOutlook(t, a)
		row, _, ok := e.future.ForCounty(c.FIPS)
		if !ok {
			missing = append(missing, c.FIPS)
			continue
		}
		out := a.Report.Outlook.Value
		if out.CountyFIPS != row.FIPS {
			t.Errorf("%s: outlook of row %s, want %s", c.FIPS, out.CountyFIPS, row.FIPS)
		}
		for i, h := range out.Hazards.All() {
			given := false
			for _, p := range row.Hazards[i].Scenarios {
				given = given || p.HasMultiplier || p.HasScore
			}
			if given != (h.Hazard.Scenarios != nil) {
				t.Errorf("%s %s: the table gives numbers %v, the outlook scenarios %v", c.FIPS, hazards[i].Key, given, h.Hazard.Scenarios)
			}
			if given {
				withScenarios[h.Key]++
			}
		}
	}
	t.Logf("counties with scenarios, by hazard: %v", withScenarios)
	if !reflect.DeepEqual(missing, []string{"69085"}) {
		t.Errorf("counties without an outlook %v, want only 69085 (Northern Islands, not in the table)", missing)
	}
	// Every state county has drought, extreme heat and wildfire figures.
	for _, k := range []string{"drought", "extremeHeat", "wildfire"} {
		if withScenarios[k] < 3143 {
			t.Errorf("%s: %d counties with scenarios, want every one of the 3,143 state counties", k, withScenarios[k])
		}
	}
}

// TestOutlookRealPlaces: what a caller sees at well-known places.
func TestOutlookRealPlaces(t *testing.T) {
	e := loadReal(t)
	ctx := context.Background()
	assess := func(lat, lon float64) *Assessment {
		t.Helper()
		a, err := e.Assess(ctx, lat, lon)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, a)
		return a
	}
	// Miami: every hazard projected, coastal flooding and hurricane among
	// them.
	miami := assess(25.7617, -80.1918).Report.Outlook.Value
	for _, h := range miami.Hazards.All() {
		if h.Hazard.Scenarios == nil {
			t.Errorf("Miami %s: no scenarios (%v)", h.Key, *h.Hazard.Reason)
		}
	}
	// Denver: no coast, so coastal flooding is not applicable.
	denver := assess(39.7392, -104.9903).Report.Outlook.Value
	if r := denver.Hazards.CoastalFlooding.Reason; r == nil || *r != reasonNotApplicable {
		t.Errorf("Denver coastal flooding reason %v, want not_applicable", r)
	}
	// San Juan: FEMA gives multipliers but no projected score, and no
	// hurricane projection at all.
	sj := assess(18.4655, -66.1057)
	pr := sj.Report.Outlook.Value
	if r := pr.Hazards.Hurricane.Reason; pr.Hazards.Hurricane.Scenarios != nil || r == nil || *r != reasonInsufficientData {
		t.Errorf("San Juan hurricane %+v", pr.Hazards.Hurricane)
	}
	if w := pr.Hazards.Wildfire.Scenarios; w == nil || w.MidCenturyLowerWarming.HazardMultiplier == nil || w.MidCenturyLowerWarming.RiskScore != nil {
		t.Errorf("San Juan wildfire %+v, want a multiplier and no score", w)
	}
	if sj.Summary.Outlook.Value.HazardMultipliers.Hurricane != nil {
		t.Error("San Juan: a brief hurricane multiplier where FEMA gives none")
	}
	// Hartford, in Connecticut's Capitol planning region: the legacy
	// county stands in, and the report says so.
	hf := assess(41.7658, -72.6734).Report.Outlook.Value
	if hf.CountyFIPS != "09003" || hf.CountyNote == nil {
		t.Errorf("Hartford outlook county %s, note %v", hf.CountyFIPS, hf.CountyNote)
	}
	// Pagan, in the Northern Islands: no row at all.
	pagan := assess(18.12, 145.76)
	if pagan.Summary.Outlook.Value != nil || pagan.Report.OutlookUnavailable == nil {
		t.Errorf("Pagan outlook %v, why %v", pagan.Report.Outlook.Value, pagan.Report.OutlookUnavailable)
	}
	b, err := json.Marshal(pagan.Summary)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"outlook":null,"outlookUnavailable":{"code":"county_not_in_data"`)) {
		t.Errorf("Pagan summary JSON: %s", b)
	}
}

// TestOutlookChangesNothingElse: with the outlook's table emptied, every
// assessment is the same in all but its outlook, byte for byte: the
// outlook is context beside the scores, levels, recommendations and
// flags, and none of them reads it.
func TestOutlookChangesNothingElse(t *testing.T) {
	e := loadReal(t)
	blind := *e
	blind.future = &futurerisk.Table{}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(40, 7))
	points := [][2]float64{{25.7617, -80.1918}, {29.9511, -90.0715}, {18.4655, -66.1057}, {41.7658, -72.6734}, {18.12, 145.76}, {34.05, -118.25}, {61.2181, -149.9003}}
	for len(points) < 300 {
		lat, lon := 24.5+r.Float64()*24.9, -124.8+r.Float64()*57.9
		if _, err := e.Locate(lat, lon); err == nil {
			points = append(points, [2]float64{lat, lon})
		}
	}
	withOutlook := 0
	for _, p := range points {
		a, err := e.Assess(ctx, p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		b, err := blind.Assess(ctx, p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		if a.Report.Outlook.Value != nil {
			withOutlook++
		}
		if b.Report.Outlook.Value != nil || b.Report.OutlookUnavailable == nil {
			t.Fatalf("%v: the emptied table gave an outlook", p)
		}
		for _, x := range []*Assessment{a, b} {
			x.Summary.Outlook, x.Summary.OutlookUnavailable = Recorded[OutlookBrief]{}, nil
			x.Report.Outlook, x.Report.OutlookUnavailable = Recorded[Outlook]{}, nil
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) || !reflect.DeepEqual(a, b) {
			t.Errorf("%v: the outlook changed the rest of the report", p)
		}
	}
	if withOutlook < len(points)-1 {
		t.Errorf("only %d of %d points had an outlook", withOutlook, len(points))
	}
}

// TestOutlookMembersRoundTrip: a stored body reads back and is written
// again byte for byte, whether it was made before the outlook existed (no
// member: served as it was), with a null outlook or with one.
func TestOutlookMembersRoundTrip(t *testing.T) {
	e := loadReal(t)
	ctx := context.Background()
	var bodies []string
	for _, p := range [][2]float64{{25.7617, -80.1918}, {18.12, 145.76}} {
		a, err := e.Assess(ctx, p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, string(b))
		// The same body as a report made before methodology 4.1 wrote it.
		a.Summary.Outlook, a.Summary.OutlookUnavailable = Recorded[OutlookBrief]{}, nil
		a.Report.Outlook, a.Report.OutlookUnavailable = Recorded[Outlook]{}, nil
		old, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(old, []byte("outlook")) {
			t.Fatalf("a body without the outlook writes it: %s", old)
		}
		bodies = append(bodies, string(old))
	}
	for _, body := range bodies {
		var a Assessment
		if err := json.Unmarshal([]byte(body), &a); err != nil {
			t.Fatal(err)
		}
		again, err := a.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != body {
			t.Errorf("read and written again, a body changed:\n got %.400s\nwant %.400s", again, body)
		}
	}
}
