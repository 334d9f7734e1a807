package pdf

import (
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/risk"
)

// sampleOutlook is a hand-made outlook in the engine's shape: coastal
// flooding given, drought without a multiplier in one scenario, extreme
// heat with its projection, hurricane not applicable, wildfire with
// multipliers and no scores (as in a territory), and an older county
// standing in.
func sampleOutlook() *risk.Outlook {
	sc := func(m, s *float64) risk.OutlookScenario {
		return risk.OutlookScenario{HazardMultiplier: m, MultiplierRating: "Very Low (<1.32x)", RiskScore: s, RiskRating: "Relatively Low", AnnualLossRating: "Relatively Low (21.9K - 292K)"}
	}
	four := func(a, b, c, d risk.OutlookScenario) *risk.OutlookScenarios {
		return &risk.OutlookScenarios{MidCenturyLowerWarming: a, MidCenturyHigherWarming: b, LateCenturyLowerWarming: c, LateCenturyHigherWarming: d}
	}
	na := "not_applicable"
	o := &risk.Outlook{Source: "fema-nri-future-2024", Name: "National Risk Index Future Risk master datasheet", Publisher: "FEMA",
		Vintage: "2024-12-05 (data dictionary 1.0.0)", Withdrawal: "FEMA took the product off its website in February 2025.",
		Resolution: "county", CountyFIPS: "09003", CountyName: "Hartford", CountyNote: sp("The row shown is the former Hartford County (09003)."),
		Note: "Context, not a score."}
	o.Hazards.CoastalFlooding = risk.OutlookHazard{Title: "Coastal flooding", NRICode: "CFLD", Module: sp("hydrology"),
		Scenarios: four(sc(fp(2.5), fp(62.1)), sc(fp(4.25), fp(63.4)), sc(fp(9), fp(70.2)), sc(fp(135.5), fp(75.5)))}
	o.Hazards.Drought = risk.OutlookHazard{Title: "Drought", NRICode: "DRGT",
		Scenarios: four(sc(nil, fp(58.5)), sc(fp(1.5), fp(60)), sc(fp(1.25), fp(59)), sc(fp(2.75), fp(66.25)))}
	o.Hazards.ExtremeHeat = risk.OutlookHazard{Title: "Extreme heat", NRICode: "EXHT", Projection: sp("LOCA 95th"),
		Scenarios: four(sc(fp(1.418), fp(86.73)), sc(fp(1.995), fp(88.83)), sc(fp(1.949), fp(88.2)), sc(fp(4.645), fp(90.26)))}
	o.Hazards.Hurricane = risk.OutlookHazard{Title: "Hurricane", NRICode: "HRCN", Module: sp("severeWeather"), Reason: &na}
	o.Hazards.Wildfire = risk.OutlookHazard{Title: "Wildfire", NRICode: "WFIR", Module: sp("wildfire"),
		Scenarios: four(sc(fp(1.13), nil), sc(fp(1.352), nil), sc(fp(1.299), nil), sc(fp(2.08), nil))}
	return o
}

// TestRenderOutlook: the outlook table reads row by row as the report
// says (hazard, module, then each scenario's multiplier and score, a dash
// for what FEMA does not give), with the source, county, resolution,
// vintage and withdrawal above it; a null outlook says why; a report made
// before the outlook has no section.
func TestRenderOutlook(t *testing.T) {
	needTools(t)
	in := sampleInput()
	in.Assessment.Report.Outlook = risk.Record(sampleOutlook())
	b := render(t, in)
	keep(t, "outlook", b)
	path := writeTemp(t, b)
	qpdfCheck(t, path)
	checkInside(t, path)
	ls := lines(t, path, 0, 0)
	for _, want := range []string{
		"Hazard (module) Mid-century, lower warming Mid-century, higher warming Late century, lower warming Late century, higher warming",
		"Coastal flooding · Hydrology 2.5× · score 62.1 4.25× · score 63.4 9× · score 70.2 135.5× · score 75.5",
		"Drought · outlook only – · score 58.5",
		"Extreme heat (LOCA 95th) · outlook only 1.42× · score 86.73 2× · score 88.83 1.95× · score 88.2 4.64× · score 90.26",
		"Hurricane · Severe weather not applicable not applicable not applicable not applicable",
		"Wildfire · Wildfire 1.13× · score – 1.35× · score – 1.3× · score – 2.08× · score –",
	} {
		found := false
		for _, l := range ls {
			found = found || strings.HasPrefix(l, want)
		}
		if !found {
			t.Errorf("no line starts %q", want)
		}
	}
	all := strings.Join(strings.Fields(text(t, path, 0, 0)), " ")
	for _, want := range []string{"Climate outlook", "FEMA National Risk Index Future Risk master datasheet, 2024-12-05 (data dictionary 1.0.0)",
		"at county resolution: Hartford (09003).", "The row shown is the former Hartford County (09003).", "February 2025", "Context, not a score."} {
		if !strings.Contains(all, want) {
			t.Errorf("the text lacks %q", want)
		}
	}

	// Null, with the reason.
	in = sampleInput()
	in.Assessment.Report.Outlook = risk.Record[risk.Outlook](nil)
	in.Assessment.Report.OutlookUnavailable = &risk.OutlookUnavailable{Code: "county_not_in_data", Message: "FEMA's NRI Future Risk table has no row for Northern Islands (69085), so this report has no outlook."}
	path = writeTemp(t, render(t, in))
	all = strings.Join(strings.Fields(text(t, path, 0, 0)), " ")
	if !strings.Contains(all, "Climate outlook FEMA's NRI Future Risk table has no row for Northern Islands (69085)") || strings.Contains(all, "Hazard (module)") {
		t.Errorf("a null outlook reads %q", all)
	}

	// Not recorded: no section (the golden sample holds its bytes).
	path = writeTemp(t, render(t, sampleInput()))
	if strings.Contains(text(t, path, 0, 0), "Climate outlook") {
		t.Error("a report made before the outlook shows one")
	}
}
