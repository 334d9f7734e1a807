// Package replay recomputes a saved report from its inputs with this
// binary's engine and data, and says whether the result is the same report
// or exactly which fields differ and why (docs/verification.md, Replay).
//
// A report document (the JSON GET /location-risk/reports/{id} serves,
// signed or not) records its inputs and what made it in its provenance
// member. Replay runs the engine on the recorded coordinate, builds the
// report the way the service does when a job completes (jobs.ReportOf)
// and when it is served (view.NewReport, with the document's own report
// and job ids, generation time and detail), and compares. With the same
// binary and data the result is byte for byte the document as served,
// signature aside; the engine is deterministic, which the property test
// holds over a thousand places.
package replay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/locrisk/locrisk/internal/jobs"
	"github.com/locrisk/locrisk/internal/view"
)

// Result is the outcome of a replay.
type Result struct {
	// Identical: the recomputed report is the document, byte for byte
	// (signature aside) when ByteForByte, else member for member.
	Identical   bool
	ByteForByte bool
	// Differences are the fields that differ, in document order, at most
	// MaxDifferences of them (Truncated tells that there were more).
	Differences []Difference
	Truncated   bool
	// Reasons say why the report may differ: a different data version,
	// methodology version or engine version than the document records.
	Reasons []string
	// ReportSHA256 is the SHA-256 of the recomputed engine output;
	// RecordedSHA256 is the one the document's provenance.reportSha256
	// records for the original.
	ReportSHA256, RecordedSHA256 string
}

// Difference is one field that differs: its JSON path and both values
// (JSON text; "" where the field is absent).
type Difference struct {
	Path             string
	Document, Replay string
}

// MaxDifferences bounds Result.Differences.
const MaxDifferences = 200

// ErrNotAReport: the document is not a report as the API serves it.
var ErrNotAReport = errors.New("not a locrisk report document")

// document is what replay reads of a report document.
type document struct {
	ReportID     string           `json:"reportId"`
	JobID        string           `json:"jobId"`
	GeneratedUTC string           `json:"generatedUtc"`
	Detail       string           `json:"detail"`
	Provenance   *view.Provenance `json:"provenance"`
	Signature    json.RawMessage  `json:"signature"`
}

// Run replays doc (a report document's JSON) with eng.
func Run(ctx context.Context, eng jobs.Assessor, doc []byte) (Result, error) {
	var d document
	if err := json.Unmarshal(doc, &d); err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrNotAReport, err)
	}
	if d.ReportID == "" || d.Provenance == nil || (d.Detail != view.DetailSummary && d.Detail != view.DetailFull) {
		return Result{}, fmt.Errorf("%w: it needs reportId, detail and provenance (reports served before provenance was recorded cannot be replayed)", ErrNotAReport)
	}
	generated, err := time.Parse(view.TimeLayout, d.GeneratedUTC)
	if err != nil {
		return Result{}, fmt.Errorf("%w: generatedUtc %q: %v", ErrNotAReport, d.GeneratedUTC, err)
	}
	in := d.Provenance.Inputs
	a, err := eng.Assess(ctx, in.Latitude, in.Longitude)
	if err != nil {
		return Result{}, fmt.Errorf("assess %v, %v: %w", in.Latitude, in.Longitude, err)
	}
	rep, err := jobs.ReportOf(a)
	if err != nil {
		return Result{}, err
	}
	rep.ID, rep.JobID, rep.GeneratedUTC = d.ReportID, d.JobID, generated
	v, err := view.NewReport(rep, d.Detail)
	if err != nil {
		return Result{}, err
	}
	again, err := json.Marshal(v)
	if err != nil {
		return Result{}, err
	}
	sum := sha256.Sum256(rep.Body)
	res := Result{ReportSHA256: hex.EncodeToString(sum[:]), RecordedSHA256: d.Provenance.ReportSHA256,
		Reasons: reasons(*d.Provenance, v.Provenance)}
	if bytes.Equal(again, unsigned(doc, d.Signature)) {
		res.Identical, res.ByteForByte = true, true
		return res, nil
	}
	res.Differences, res.Truncated, err = diff(doc, again)
	if err != nil {
		return Result{}, err
	}
	res.Identical = len(res.Differences) == 0
	return res, nil
}

// unsigned is doc as it was before its signature member was appended
// (reportverify.Sign adds it last), without the final newline; doc itself
// when it carries no signature or was re-encoded since. It never writes
// into doc's array: the caller still reads doc.
func unsigned(doc []byte, sig json.RawMessage) []byte {
	doc = bytes.TrimRight(doc, " \t\r\n")
	if sig == nil {
		return doc
	}
	tail := append(append([]byte(`,"signature":`), sig...), '}')
	if cut, ok := bytes.CutSuffix(doc, tail); ok {
		return append(cut[:len(cut):len(cut)], '}')
	}
	return doc
}

// reasons says what of the document's making differs from the replay's.
func reasons(was, now view.Provenance) []string {
	var out []string
	str := func(p *string) string {
		if p == nil {
			return "not recorded"
		}
		return *p
	}
	if was.DataVersion != now.DataVersion {
		out = append(out, fmt.Sprintf("different data version: the document's is %s, this binary's %s", was.DataVersion, now.DataVersion))
	}
	if str(was.MethodologyVersion) != str(now.MethodologyVersion) {
		out = append(out, fmt.Sprintf("different methodology version: the document's is %s, this binary's %s", str(was.MethodologyVersion), str(now.MethodologyVersion)))
	}
	if str(was.EngineVersion) != str(now.EngineVersion) {
		out = append(out, fmt.Sprintf("different engine version: the document was made by %s, this is %s", str(was.EngineVersion), str(now.EngineVersion)))
	}
	return out
}

// diff compares two JSON documents member by member, the signature aside,
// and lists the paths whose values differ (numbers compared as numbers).
func diff(doc, again []byte) ([]Difference, bool, error) {
	var a, b any
	if err := decode(doc, &a); err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrNotAReport, err)
	}
	if err := decode(again, &b); err != nil {
		return nil, false, err
	}
	if m, ok := a.(map[string]any); ok {
		delete(m, "signature")
	}
	var out []Difference
	truncated := false
	var walk func(path string, x, y any)
	walk = func(path string, x, y any) {
		if len(out) >= MaxDifferences {
			truncated = true
			return
		}
		switch xv := x.(type) {
		case map[string]any:
			if yv, ok := y.(map[string]any); ok {
				keys := make([]string, 0, len(xv)+len(yv))
				for k := range xv {
					keys = append(keys, k)
				}
				for k := range yv {
					if _, ok := xv[k]; !ok {
						keys = append(keys, k)
					}
				}
				slices.Sort(keys)
				for _, k := range keys {
					xk, inX := xv[k]
					yk, inY := yv[k]
					switch {
					case !inX:
						out = append(out, Difference{Path: path + "." + k, Replay: text(yk)})
					case !inY:
						out = append(out, Difference{Path: path + "." + k, Document: text(xk)})
					default:
						walk(path+"."+k, xk, yk)
					}
				}
				return
			}
		case []any:
			if yv, ok := y.([]any); ok && len(yv) == len(xv) {
				for i := range xv {
					walk(path+"["+strconv.Itoa(i)+"]", xv[i], yv[i])
				}
				return
			}
		case json.Number:
			if yv, ok := y.(json.Number); ok && sameNumber(xv, yv) {
				return
			}
		default:
			if fmt.Sprint(x) == fmt.Sprint(y) && sameKind(x, y) {
				return
			}
		}
		out = append(out, Difference{Path: path, Document: text(x), Replay: text(y)})
	}
	walk("$", a, b)
	return out, truncated, nil
}

func decode(b []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

func sameNumber(x, y json.Number) bool {
	if x == y {
		return true
	}
	fx, err1 := x.Float64()
	fy, err2 := y.Float64()
	return err1 == nil && err2 == nil && (fx == fy || (math.IsNaN(fx) && math.IsNaN(fy)))
}

func sameKind(x, y any) bool { return fmt.Sprintf("%T", x) == fmt.Sprintf("%T", y) }

// text is v as short JSON text for a difference line.
func text(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 120 {
		return string(b[:117]) + "..."
	}
	return string(b)
}
