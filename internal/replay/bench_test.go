package replay

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/jobs"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/view"
)

// BenchmarkServeReport: what serving a real report costs with its
// signature (view.SignedReport, as GET .../reports/{id} runs it) beside
// the same document unsigned, at both details (docs/performance.md,
// Signing).
func BenchmarkServeReport(b *testing.B) {
	eng, err := risk.Load(context.Background(), datatest.Real(b), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	a, err := eng.Assess(context.Background(), 39.7392, -104.9903)
	if err != nil {
		b.Fatal(err)
	}
	rep, err := jobs.ReportOf(a)
	if err != nil {
		b.Fatal(err)
	}
	rep.ID, rep.JobID, rep.GeneratedUTC = ids.NewReportID(), "job_0VcFX9n40uv9EKYxhiv3yOlt", time.Now()
	for _, detail := range []string{view.DetailSummary, view.DetailFull} {
		b.Run(detail+"/unsigned", func(b *testing.B) {
			for b.Loop() {
				v, err := view.NewReport(rep, detail)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(detail+"/signed", func(b *testing.B) {
			s := newSigner()
			for b.Loop() {
				if _, err := view.SignedReport(context.Background(), rep, detail, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
