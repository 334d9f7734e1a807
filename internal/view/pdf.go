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

// PDF renders the stored report as the PDF document that
// GET /location-risk/reports/{reportId}/pdf serves and `locrisk report
// --pdf` writes. The same stored report always renders to the same bytes.
func PDF(rep locrisk.Report, outlines Outliner) ([]byte, error) {
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
	})
	if err != nil {
		return nil, fmt.Errorf("report %s: rendering PDF: %w", rep.ID, err)
	}
	return doc, nil
}
