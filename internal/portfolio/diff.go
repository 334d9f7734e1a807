package portfolio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/batchcsv"
	"github.com/locrisk/locrisk/internal/reportdiff"
	"github.com/locrisk/locrisk/internal/risk"
)

// Change kinds of a row in Diff's output.
const (
	// ChangeMaterial is a row whose report would change materially
	// (reportdiff.Comparison.IsMaterial).
	ChangeMaterial = "material"
	// ChangeCoverage is a row one pack covers and the other does not.
	ChangeCoverage = "coverage"
)

// DiffSummary counts what Diff found.
type DiffSummary struct {
	// Summary counts the rows as Score does; Scored are the rows both
	// packs scored, Failed those either engine failed on, and a row
	// neither pack covers is rejected unsupported_location.
	Summary
	// MinScoreChange is the threshold the material counts were taken at.
	MinScoreChange int
	// Changed are the rows scored by both whose overall or some module's
	// score or level differs; Material those whose report changes
	// materially (docs/api.md, Report changes).
	Changed, Material int
	// Coverage are the rows one pack covers and the other does not.
	Coverage int
	// Overall and Modules (by module key) count, for each, the rows where
	// it changed and where that change is material.
	Overall Count
	Modules map[string]Count
}

// Count is how many rows changed, and how many of them materially.
type Count struct{ Changed, Material int }

func (s *DiffSummary) add(o DiffSummary) {
	s.Summary.add(o.Summary)
	s.Changed += o.Changed
	s.Material += o.Material
	s.Coverage += o.Coverage
	s.Overall.Changed += o.Overall.Changed
	s.Overall.Material += o.Overall.Material
	for k, v := range o.Modules {
		c := s.Modules[k]
		c.Changed += v.Changed
		c.Material += v.Material
		s.Modules[k] = c
	}
}

// DiffHeader is the header row of Diff's output: the row, the kind of
// change (ChangeMaterial or ChangeCoverage), the modules whose change is
// material (space-separated), the overall score and level before and
// after, and each module's score before and after.
func DiffHeader() []string {
	h := []string{"rowNumber", "externalId", "latitude", "longitude", "change", "materialModules",
		"overallScoreBefore", "overallScoreAfter", "riskLevelBefore", "riskLevelAfter"}
	for _, k := range risk.ModuleKeys() {
		h = append(h, k+"Before", k+"After")
	}
	return h
}

// Diff scores every data row with two engines, before (the data served
// now) and after (a new pack), compares each row's two reports as the API
// compares two reports of a coordinate (reportdiff.Compare, material at
// minScoreChange), and writes to out, in input order, DiffHeader and a
// row for every input row that changes materially or that one engine
// covers and the other does not. Rows are checked as Score checks them.
// The error is from reading, writing or ctx.
func (in *Input) Diff(ctx context.Context, before, after Assessor, minScoreChange int, out io.Writer, opt Options) (DiffSummary, error) {
	sum := DiffSummary{Summary: Summary{Rejected: map[string]int{}}, MinScoreChange: minScoreChange, Modules: map[string]Count{}}
	keys := risk.ModuleKeys()
	err := in.run(ctx, DiffHeader(), out, opt,
		func(ctx context.Context, c *chunk) { diffChunk(ctx, before, after, minScoreChange, keys, c) },
		func(c *chunk) int { sum.add(c.diff); return sum.Rows })
	return sum, err
}

// diffChunk compares every row of c and closes c.done.
func diffChunk(ctx context.Context, before, after Assessor, minChange int, keys []string, c *chunk) {
	defer close(c.done)
	d := &c.diff
	d.Rejected, d.Modules = map[string]int{}, map[string]Count{}
	w := batchcsv.NewWriter(&c.out)
	for i := range c.rows {
		r := &c.rows[i]
		d.Rows++
		if r.item.ErrorCode != nil {
			d.Rejected[*r.item.ErrorCode]++
			continue
		}
		a, errA := assessRecovered(ctx, before, r.lat, r.lon)
		b, errB := assessRecovered(ctx, after, r.lat, r.lon)
		outA, outB := errors.Is(errA, risk.ErrUnsupportedLocation), errors.Is(errB, risk.ErrUnsupportedLocation)
		var rec []string
		switch {
		case (errA != nil && !outA) || (errB != nil && !outB):
			d.Failed++
		case outA && outB:
			d.Rejected[CodeUnsupported]++
		case outA || outB:
			d.Coverage++
			rec = diffRecord(r, ChangeCoverage, nil, a, b, keys)
		default:
			comp, err := compare(a, b)
			if err != nil {
				d.Failed++
				continue
			}
			d.Scored++
			rec = tallyRow(d, comp, minChange, r, a, b, keys)
		}
		if rec != nil {
			if err := w.Write(rec); err != nil {
				c.werr = err
				return
			}
		}
	}
	w.Flush()
	c.werr = w.Error()
}

// tallyRow counts one row's comparison and returns its output record, nil
// when the change is not material.
func tallyRow(d *DiffSummary, comp reportdiff.Comparison, minChange int, r *row, a, b *risk.Assessment, keys []string) []string {
	o := comp.Overall
	if o.ScoreBefore != o.ScoreAfter || o.LevelBefore != o.LevelAfter {
		d.Overall.Changed++
		if o.Material(minChange) {
			d.Overall.Material++
		}
	}
	if len(comp.Changes) > 0 || o.ScoreBefore != o.ScoreAfter || o.LevelBefore != o.LevelAfter {
		d.Changed++
	}
	var material []string
	for _, m := range comp.Changes {
		n := d.Modules[m.Module]
		n.Changed++
		if m.Material(minChange) {
			n.Material++
			material = append(material, m.Module)
		}
		d.Modules[m.Module] = n
	}
	if !comp.IsMaterial(minChange) {
		return nil
	}
	d.Material++
	return diffRecord(r, ChangeMaterial, material, a, b, keys)
}

// compare is reportdiff's comparison of two assessments of one point, as
// the engine stores them.
func compare(a, b *risk.Assessment) (reportdiff.Comparison, error) {
	ja, err := a.AppendJSON(nil)
	if err != nil {
		return reportdiff.Comparison{}, err
	}
	jb, err := b.AppendJSON(nil)
	if err != nil {
		return reportdiff.Comparison{}, err
	}
	return reportdiff.Compare(ja, jb)
}

// diffRecord is the output record of a row; a or b is nil where that
// engine does not cover the point.
func diffRecord(r *row, change string, material []string, a, b *risk.Assessment, keys []string) []string {
	rec := []string{strconv.Itoa(r.item.RowNumber), batchcsv.Text(r.item.ExternalID),
		batchcsv.Float(r.item.Latitude), batchcsv.Float(r.item.Longitude), change, strings.Join(material, " ")}
	overall := func(x *risk.Assessment) (string, string) {
		if x == nil {
			return "", ""
		}
		return strconv.Itoa(x.Summary.OverallScore), x.Summary.RiskLevel
	}
	sa, la := overall(a)
	sb, lb := overall(b)
	rec = append(rec, sa, sb, la, lb)
	score := func(x *risk.Assessment, k string) string {
		if x == nil {
			return ""
		}
		v, _ := x.Summary.ModuleScores.Get(k)
		return batchcsv.Int(v)
	}
	for _, k := range keys {
		rec = append(rec, score(a, k), score(b, k))
	}
	return rec
}

// assessRecovered is eng.Assess with a panic turned into an error, as a
// job fails rather than the server.
func assessRecovered(ctx context.Context, eng Assessor, lat, lon float64) (a *risk.Assessment, err error) {
	defer func() {
		if p := recover(); p != nil {
			a, err = nil, fmt.Errorf("internal error: %v", p)
		}
	}()
	a, err = eng.Assess(ctx, lat, lon)
	if err == nil && a == nil {
		err = errors.New("the engine returned no assessment")
	}
	return a, err
}

// ModuleCounts returns the module counts in registry order, with the
// modules that did not change.
func (s *DiffSummary) ModuleCounts() []ModuleCount {
	out := make([]ModuleCount, 0, len(s.Modules))
	seen := map[string]bool{}
	for _, k := range risk.ModuleKeys() {
		out = append(out, ModuleCount{k, s.Modules[k]})
		seen[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(s.Modules)) {
		if !seen[k] {
			out = append(out, ModuleCount{k, s.Modules[k]})
		}
	}
	return out
}

// ModuleCount is one module's Count.
type ModuleCount struct {
	Module string
	Count
}
