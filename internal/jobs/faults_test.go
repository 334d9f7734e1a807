package jobs

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseFaults(t *testing.T) {
	tests := []struct {
		spec    string
		wantErr string // substring; "" = valid
		rules   int
	}{
		{"", "", 0},
		{"  ", "", 0},
		{"report.generate=transient:first=1", "", 1},
		{"report.generate=permanent:rate=0.5", "", 1},
		{"report.generate=transient", "", 1},
		{"report.generate=permanent:rate=0", "", 1},
		{"report.generate=transient:first=1,report.generate=permanent:rate=1", "", 2},
		{"report.generate=transient:first=1; report.generate=permanent:rate=0.25 ;", "", 2},
		{"report.generate", "missing '='", 0},
		{"report.render=transient", "unknown fault point", 0},
		{"report.generate=flaky", "unknown fault kind", 0},
		{"report.generate=transient:first=0", "first=0", 0},
		{"report.generate=transient:first=x", "first=x", 0},
		{"report.generate=transient:rate=1.5", "rate=1.5", 0},
		{"report.generate=transient:rate=NaN", "rate=NaN", 0},
		{"report.generate=transient:rate", "NAME=VALUE", 0},
		{"report.generate=transient:every=2", "unknown parameter", 0},
		{"report.generate=transient:first=1:rate=0.5", "at most one", 0},
		{"report.generate=transient:first=1,bogus", "bogus", 0},
		{"report.generate=delay:ms=300", "", 1},
		{"report.generate=delay:ms=300,report.generate=transient:first=1", "", 2},
		{"report.generate=delay", "delay needs ms=N", 0},
		{"report.generate=delay:ms=0", "ms=N", 0},
		{"report.generate=delay:seconds=3", "ms=N", 0},
		{"report.generate=delay:ms=x", "ms=N", 0},
	}
	for _, tt := range tests {
		f, err := ParseFaults(tt.spec)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseFaults(%q) err = %v, want it to mention %q", tt.spec, err, tt.wantErr)
			} else if !strings.Contains(err.Error(), "e.g. report.generate=transient:first=1") {
				t.Errorf("ParseFaults(%q) error lacks an example: %v", tt.spec, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseFaults(%q): %v", tt.spec, err)
			continue
		}
		if len(f.rules) != tt.rules || f.Enabled() != (tt.rules > 0) {
			t.Errorf("ParseFaults(%q): %d rules, enabled %v; want %d", tt.spec, len(f.rules), f.Enabled(), tt.rules)
		}
	}
}

func TestFaultCheck(t *testing.T) {
	must := func(spec string) Faults {
		f, err := ParseFaults(spec)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	type want struct {
		fires     bool
		transient bool
	}
	tests := []struct {
		spec    string
		op      string
		attempt int
		want    want
	}{
		{"", OpGenerate, 1, want{}},
		{"report.generate=transient:first=1", OpGenerate, 1, want{true, true}},
		{"report.generate=transient:first=1", OpGenerate, 2, want{}},
		{"report.generate=transient:first=1", "other.op", 1, want{}},
		{"report.generate=permanent:first=2", OpGenerate, 2, want{true, false}},
		{"report.generate=permanent:first=2", OpGenerate, 3, want{}},
		{"report.generate=transient", OpGenerate, 99, want{true, true}},
		{"report.generate=permanent:rate=1", OpGenerate, 7, want{true, false}},
		{"report.generate=permanent:rate=0", OpGenerate, 1, want{}},
		// First matching rule wins.
		{"report.generate=transient:first=1,report.generate=permanent", OpGenerate, 1, want{true, true}},
		{"report.generate=transient:first=1,report.generate=permanent", OpGenerate, 2, want{true, false}},
	}
	for _, tt := range tests {
		err := must(tt.spec).Check(tt.op, "job_x", tt.attempt)
		var e *Error
		if got := errors.As(err, &e); got != tt.want.fires {
			t.Errorf("%q attempt %d: fired %v (%v), want %v", tt.spec, tt.attempt, got, err, tt.want.fires)
			continue
		}
		if e == nil {
			continue
		}
		wantCode := CodePermanent
		if tt.want.transient {
			wantCode = CodeTransient
		}
		if e.Transient != tt.want.transient || e.Code != wantCode || !strings.Contains(e.Message, fmt.Sprintf("attempt %d", tt.attempt)) {
			t.Errorf("%q attempt %d: error %+v", tt.spec, tt.attempt, e)
		}
	}
}

// rate=P fires for about P of all (job, attempt) pairs, the same ones on
// every run.
func TestFaultRateDeterministic(t *testing.T) {
	for _, p := range []float64{0.1, 0.5, 0.9} {
		f, err := ParseFaults(fmt.Sprintf("report.generate=permanent:rate=%g", p))
		if err != nil {
			t.Fatal(err)
		}
		const jobs, attempts = 1000, 3
		fired := 0
		for j := range jobs {
			id := fmt.Sprintf("job_%024d", j)
			for a := 1; a <= attempts; a++ {
				first := f.Check(OpGenerate, id, a) != nil
				if again := f.Check(OpGenerate, id, a) != nil; again != first {
					t.Fatalf("rate %g: %s attempt %d not deterministic", p, id, a)
				}
				if first {
					fired++
				}
			}
		}
		got := float64(fired) / (jobs * attempts)
		if got < p-0.03 || got > p+0.03 {
			t.Errorf("rate %g fired for %.3f of attempts", p, got)
		}
	}
}

func TestDelayFault(t *testing.T) {
	f, err := ParseFaults("report.generate=delay:ms=250,report.generate=transient:first=1")
	if err != nil {
		t.Fatal(err)
	}
	if d := f.Delay(OpGenerate); d != 250*time.Millisecond {
		t.Fatalf("Delay = %v, want 250ms", d)
	}
	// The delay rule never fails an attempt; the transient rule still does.
	if err := f.Check(OpGenerate, "job_x", 1); err == nil {
		t.Fatal("attempt 1 should fail by the transient rule")
	}
	if err := f.Check(OpGenerate, "job_x", 2); err != nil {
		t.Fatalf("attempt 2 failed: %v", err)
	}
	if d := (Faults{}).Delay(OpGenerate); d != 0 {
		t.Fatalf("zero Faults delay %v", d)
	}
}
