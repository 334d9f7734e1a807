package jobs

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzParseFaults: ParseFaults must never panic; a refused spec yields the
// zero Faults; an accepted one renders (String) to a spec that parses again
// to the same rules and the same String, and both behave the same.
func FuzzParseFaults(f *testing.F) {
	for _, s := range []string{
		"",
		" ; , ",
		"report.generate=transient:first=1",
		"report.generate=permanent:rate=0.5",
		"report.generate=transient:first=1; report.generate=permanent:rate=0.25 ;",
		" report.generate = transient : first=+3 ",
		"report.generate=delay:ms=300,report.generate=transient",
		"report.generate=delay:ms=600001",
		"report.generate=transient:rate=1e-3",
		"report.generate=transient:rate=NaN",
		"report.generate=transient:first=1:rate=0.5",
		"report.generate=permanent:rate=0x1p-2",
		"report.render=transient",
		"report.generate\u00a0=transient",
		"=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		fs, err := ParseFaults(spec)
		if err != nil {
			if fs.Enabled() || fs.String() != "" || fs.Delay(OpGenerate) != 0 {
				t.Fatalf("ParseFaults(%q) failed (%v) but returned rules %q", spec, err, fs.String())
			}
			if !strings.HasPrefix(err.Error(), "faults: rule ") {
				t.Fatalf("error %q does not say which rule", err)
			}
			return
		}
		pieces := 0
		for _, p := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == ';' }) {
			if strings.TrimSpace(p) != "" {
				pieces++
			}
		}
		if len(fs.rules) != pieces || fs.Enabled() != (pieces > 0) {
			t.Fatalf("ParseFaults(%q): %d rules, enabled %v; the spec has %d rules", spec, len(fs.rules), fs.Enabled(), pieces)
		}

		s := fs.String()
		again, err := ParseFaults(s)
		if err != nil {
			t.Fatalf("ParseFaults(%q) renders as %q, which does not parse: %v", spec, s, err)
		}
		if again.String() != s {
			t.Fatalf("round trip: %q -> %q -> %q", spec, s, again.String())
		}
		if !reflect.DeepEqual(fs.rules, again.rules) {
			t.Fatalf("round trip changed the rules: %+v -> %+v", fs.rules, again.rules)
		}

		d := fs.Delay(OpGenerate)
		if d < 0 || d > time.Duration(len(fs.rules))*10*time.Minute || d != again.Delay(OpGenerate) {
			t.Fatalf("Delay = %v (after the round trip %v) for %d rules", d, again.Delay(OpGenerate), len(fs.rules))
		}
		if fs.Delay("other.op") != 0 || fs.Check("other.op", "rj_1", 1) != nil {
			t.Fatalf("rules fire for an unknown fault point")
		}
		for _, job := range []string{"rj_a", "rj_b"} {
			for attempt := 1; attempt <= 4; attempt++ {
				e1, e2 := fs.Check(OpGenerate, job, attempt), again.Check(OpGenerate, job, attempt)
				if (e1 == nil) != (e2 == nil) {
					t.Fatalf("Check(%s, %d) = %v before and %v after the round trip", job, attempt, e1, e2)
				}
				if e1 == nil {
					continue
				}
				var je *Error
				if !errors.As(e1, &je) {
					t.Fatalf("Check returned %T, want *Error", e1)
				}
				if (je.Code == CodeTransient) != je.Transient || (je.Code != CodeTransient && je.Code != CodePermanent) {
					t.Fatalf("Check returned code %q transient %v", je.Code, je.Transient)
				}
				if !reflect.DeepEqual(e1, e2) {
					t.Fatalf("Check differs after the round trip: %v vs %v", e1, e2)
				}
			}
		}
	})
}
