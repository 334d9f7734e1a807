package pdf

import (
	"strings"

	"github.com/locrisk/locrisk/internal/risk"
)

// outlookSection is the short table of the report's outlook
// (docs/methodology.md, "Outlook"): one row per hazard, one column per
// scenario, each cell FEMA's hazard multiplier and projected risk score,
// with the county, the resolution, the vintage and the withdrawal of the
// source above it. A report made before the outlook existed has none and
// gets no section; one whose county the source lacks says why.
func (r *renderer) outlookSection() {
	full := r.a.Report.Outlook
	if !full.Set {
		return
	}
	r.y += 3
	r.cont = ""
	r.ensure(14 + 3*proseLineH + tableHeadH + 2*tableLineH + 3)
	r.f.Bookmark("Climate outlook", 0, r.y)
	r.h1("Climate outlook")
	r.setFont(fProse)
	r.setInk(colMuted)
	o := full.Value
	if o == nil {
		why := "The outlook's data set has no row for this county."
		if u := r.a.Report.OutlookUnavailable; u != nil && u.Message != "" {
			why = u.Message
		}
		r.paragraph(marginL, contentW, proseLineH, clean(why, false))
		return
	}
	r.paragraph(marginL, contentW, proseLineH, clean(outlookIntro(o), false))
	r.y += 1.5

	cell := fontSpec{"go", "", 7}
	scenarioW := (contentW - 52) / 4
	cols := []column{{w: contentW - 4*scenarioW, head: "Hazard (module)", align: "L", font: cell}}
	hazards := o.Hazards.All()
	var sc risk.OutlookScenarios
	for _, s := range sc.All() {
		cols = append(cols, column{w: scenarioW, head: s.Title, align: "L", font: cell})
	}
	rows := make([][]tableCell, 0, len(hazards))
	for _, h := range hazards {
		z := h.Hazard
		name := clean(z.Title, false)
		if z.Projection != nil {
			name += " (" + clean(*z.Projection, false) + ")"
		}
		if z.Module != nil {
			name += " · " + moduleTitle(*z.Module)
		} else {
			name += " · outlook only"
		}
		row := []tableCell{{text: name}}
		if z.Scenarios == nil {
			reason := "no projection"
			if z.Reason != nil {
				reason = strings.ReplaceAll(clean(*z.Reason, false), "_", " ")
			}
			// Every scenario cell says why, so none reads as a value.
			for range sc.All() {
				row = append(row, tableCell{text: reason})
			}
		} else {
			for _, s := range z.Scenarios.All() {
				row = append(row, tableCell{text: outlookCell(s.Scenario)})
			}
		}
		rows = append(rows, row)
	}
	r.table(cols, rows)
}

// outlookIntro says what the table is: the source, its county and
// resolution, its vintage and withdrawal, and how to read a cell.
func outlookIntro(o *risk.Outlook) string {
	s := o.Publisher + " " + o.Name + ", " + o.Vintage + ", at " + o.Resolution + " resolution: " +
		o.CountyName + " (" + o.CountyFIPS + ")."
	if o.CountyNote != nil {
		s += " " + *o.CountyNote
	}
	return s + " " + o.Withdrawal + " Each cell gives FEMA's hazard multiplier, the factor on the county's current expected " +
		"annual loss from the hazard, and its projected risk score (0–100, a rank among counties in the same scenario); " +
		"– where FEMA gives none. " + o.Note
}

// outlookCell is one scenario's multiplier and score: "2.4× · score 61.3".
func outlookCell(s *risk.OutlookScenario) string {
	m, score := "–", "–"
	if s.HazardMultiplier != nil {
		m = formatNumber(*s.HazardMultiplier) + "×"
	}
	if s.RiskScore != nil {
		score = formatNumber(*s.RiskScore)
	}
	return m + " · score " + score
}
