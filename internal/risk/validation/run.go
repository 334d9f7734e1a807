package validation

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/locrisk/locrisk/internal/risk"
)

// Result is the outcome of a validation table on an engine.
type Result struct {
	Places   int
	Checks   int
	Failures []string // checks that fail
	Gaps     []string // known gaps, with whether they hold now
}

// record counts one check: a known gap (gap, why the data cannot support
// it) is reported with whether it holds now; any other check that does
// not hold is a failure.
func (res *Result) record(key, line string, holds bool, why, gap string) {
	if gap != "" {
		state := "still open"
		if holds {
			state = "now holds"
		}
		res.Gaps = append(res.Gaps, line+": "+state+"; "+gap)
		return
	}
	res.Checks++
	if !holds {
		res.Failures = append(res.Failures, line+": "+why)
	}
}

// Run checks the built-in table (table.tsv) on e, as Table.Run does:
// `locrisk data validate` prints it.
func Run(ctx context.Context, e *risk.Engine, w io.Writer) (Result, error) {
	t, err := Builtin()
	if err != nil {
		return Result{}, err
	}
	return t.Run(ctx, e, w)
}

// Run assesses every place of the table on e, checks its orderings, lows
// and priorities, and writes the table of results to w (nil for none).
func (t *Table) Run(ctx context.Context, e *risk.Engine, w io.Writer) (Result, error) {
	res := Result{Places: len(t.Places)}
	byName := map[string]*risk.Assessment{}
	for _, p := range t.Places {
		if byName[p.Name] != nil {
			return res, fmt.Errorf("validation place %s is listed twice", p.Name)
		}
		a, err := e.Assess(ctx, p.Lat, p.Lon)
		if err != nil {
			return res, fmt.Errorf("%s (%v, %v): %w", p.Name, p.Lat, p.Lon, err)
		}
		if a.Location.CountyFIPS != p.County {
			res.Failures = append(res.Failures, fmt.Sprintf("%s located in county %s, want %s", p.Name, a.Location.CountyFIPS, p.County))
		}
		byName[p.Name] = a
	}
	for _, o := range t.Orders {
		h, l := byName[o.Higher], byName[o.Lower]
		if h == nil || l == nil {
			return res, fmt.Errorf("validation order %s names an unknown place", o.key())
		}
		hs, ls := placeScore(h, o.Module, o.Peril), placeScore(l, o.Module, o.Peril)
		holds := hs != nil && (ls == nil || *hs > *ls)
		key := o.key()
		res.record(key, fmt.Sprintf("%s (%s vs %s)", key, scoreText(hs), scoreText(ls)), holds, o.Why, o.Gap)
	}
	for _, lo := range t.Lows {
		a := byName[lo.Place]
		if a == nil {
			return res, fmt.Errorf("validation low for %s names an unknown place", lo.Place)
		}
		s := placeScore(a, lo.Module, lo.Peril)
		holds := s == nil || *s < lo.Max
		key := lo.key()
		res.record(key, fmt.Sprintf("%s (%s)", key, scoreText(s)), holds, lo.Why, lo.Gap)
	}
	for _, pr := range t.Priorities {
		a := byName[pr.Place]
		if a == nil {
			return res, fmt.Errorf("validation priority for %s names an unknown place", pr.Place)
		}
		high := false
		for _, r := range a.Summary.Recommendations {
			high = high || (r.Module == pr.Module && r.Priority == "high")
		}
		got := "not high"
		if high {
			got = "high"
		}
		key := pr.key()
		res.record(key, fmt.Sprintf("%s (%s)", key, got), high == pr.High, pr.Why, pr.Gap)
	}
	if w != nil {
		writeTable(w, t.Places, byName, res)
	}
	return res, nil
}

// placeScore is a place's score on a module, or on one of its perils.
func placeScore(a *risk.Assessment, module, peril string) *int {
	if peril == "" {
		s, _ := a.Summary.ModuleScores.Get(module)
		return s
	}
	perils, _ := a.Summary.Perils.Get(module)
	for _, p := range perils {
		if p.Peril == peril {
			return p.Score
		}
	}
	return nil
}

func scoreText(s *int) string {
	if s == nil {
		return "null"
	}
	return strconv.Itoa(*s)
}

// writeTable writes every place's overall, module and peril scores, then
// the count of checks and every failure and gap.
func writeTable(w io.Writer, places []Place, byName map[string]*risk.Assessment, res Result) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	keys := risk.ModuleKeys()
	header := []string{"PLACE", "COUNTY", "OVERALL"}
	for _, k := range keys {
		header = append(header, strings.ToUpper(k))
	}
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, p := range places {
		a := byName[p.Name]
		row := []string{p.Name, p.County, strconv.Itoa(a.Summary.OverallScore)}
		for _, k := range keys {
			s, _ := a.Summary.ModuleScores.Get(k)
			cell := scoreText(s)
			if perils, _ := a.Summary.Perils.Get(k); len(perils) > 1 {
				var ps []string
				for _, pr := range perils {
					ps = append(ps, scoreText(pr.Score))
				}
				cell += " (" + strings.Join(ps, "/") + ")"
			}
			row = append(row, cell)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintln(w, "\nPeril scores in brackets follow each module's perils in registry order.")
	fmt.Fprintf(w, "\n%d places, %d checks, %d failing, %d known gaps\n", res.Places, res.Checks, len(res.Failures), len(res.Gaps))
	for _, f := range res.Failures {
		fmt.Fprintln(w, "FAIL", f)
	}
	for _, g := range res.Gaps {
		fmt.Fprintln(w, "GAP ", g)
	}
}
