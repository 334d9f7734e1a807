package view

import (
	"fmt"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/pdf"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

// Outliner gives the state and county boundary rings the PDF's locator map
// draws (nil when the county is unknown). *risk.Engine implements it.
type Outliner interface {
	Outlines(countyFIPS string) (state, county [][]geo.Point)
}

// PDF renders the stored report as a PDF document without its provenance
// and signature (SignedPDF adds them). The same stored report always
// renders to the same bytes.
func PDF(rep locrisk.Report, outlines Outliner) ([]byte, error) {
	return renderPDF(rep, outlines, nil)
}

// renderPDF renders the stored report, with v's section and attachment
// when v is not nil.
func renderPDF(rep locrisk.Report, outlines Outliner, v *pdf.Verification) ([]byte, error) {
	a, err := assessment(rep)
	if err != nil {
		return nil, err
	}
	state, county := outlines.Outlines(a.Location.CountyFIPS)
	doc, err := pdf.Render(pdf.Input{
		ReportID:      rep.ID,
		JobID:         rep.JobID,
		Generated:     rep.GeneratedUTC,
		Assessment:    &a,
		StateOutline:  state,
		CountyOutline: county,
		Verification:  v,
	})
	if err != nil {
		return nil, fmt.Errorf("report %s: rendering PDF: %w", rep.ID, err)
	}
	return doc, nil
}
