package risk_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/validation"
)

// builtinTable is the validation table locrisk ships.
func builtinTable(tb testing.TB) *validation.Table {
	tb.Helper()
	t, err := validation.Builtin()
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func TestRealPlacesResolveAndKeepInvariants(t *testing.T) {
	e := risk.LoadReal(t)
	for _, p := range builtinTable(t).Places {
		a, err := e.Assess(context.Background(), p.Lat, p.Lon)
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		if a.Location.CountyFIPS != p.County {
			t.Errorf("%s: county %s, want %s", p.Name, a.Location.CountyFIPS, p.County)
		}
		risk.CheckInvariants(t, a)
	}
}

// TestRealValidationTable is the validation table of docs/methodology.md:
// every ordering and low must hold on the real data, except the known gaps
// it lists. `locrisk data validate` prints the same table.
func TestRealValidationTable(t *testing.T) {
	e := risk.LoadReal(t)
	var b strings.Builder
	res, err := validation.Run(context.Background(), e, &b)
	if err != nil {
		t.Fatal(err)
	}
	if res.Checks < 60 || res.Places < 40 {
		t.Errorf("only %d places and %d checks", res.Places, res.Checks)
	}
	for _, f := range res.Failures {
		t.Error(f)
	}
	if t.Failed() || testing.Verbose() {
		t.Log("\n" + b.String())
	}
}

// BenchmarkAssess reports the median time of one assessment ("p50-us"),
// the figure the 200 microsecond budget is about, beside the mean.
func BenchmarkAssess(b *testing.B) {
	e := risk.LoadReal(b)
	pts := builtinTable(b).Places
	ctx := context.Background()
	var took []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		p := pts[i%len(pts)]
		start := time.Now()
		if _, err := e.Assess(ctx, p.Lat, p.Lon); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-us")
}
