package jobs

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// OpGenerate is the fault point around report generation (the engine call).
const OpGenerate = "report.generate"

// Faults injects failures for resilience tests (the --faults flag). The zero
// value injects nothing.
//
// Syntax: rules separated by "," or ";", each OP=KIND[:first=N | :rate=P]:
//
//	report.generate=transient:first=1   attempts 1..N of every job fail (transient)
//	report.generate=permanent:rate=0.5  each attempt fails with probability P
//	report.generate=transient           every attempt fails
//	report.generate=delay:ms=300        every attempt takes 300 ms longer (no failure)
//
// A job's attempt count keeps growing across retries, so after a manual
// retry of a job that failed attempts 1..3, its next attempt is 4.
// rate is deterministic: the decision hashes (rule, job id, attempt), so a
// test run is reproducible. The first matching rule wins.
type Faults struct {
	rules []faultRule
}

type faultRule struct {
	text      string
	op        string
	delay     time.Duration // > 0: a delay rule, which slows attempts and never fails them
	transient bool
	first     int     // > 0: attempts 1..first fail
	rate      float64 // used when first == 0; 1 means always
}

// ParseFaults parses a fault specification; "" means no faults.
func ParseFaults(spec string) (Faults, error) {
	var f Faults
	for _, text := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == ';' }) {
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		r, err := parseRule(text)
		if err != nil {
			return Faults{}, fmt.Errorf("faults: rule %q: %w (want OP=transient|permanent[:first=N|:rate=P] or OP=delay:ms=N, e.g. %s=transient:first=1)", text, err, OpGenerate)
		}
		f.rules = append(f.rules, r)
	}
	return f, nil
}

func parseRule(text string) (faultRule, error) {
	op, rest, ok := strings.Cut(text, "=")
	if !ok {
		return faultRule{}, fmt.Errorf("missing '='")
	}
	r := faultRule{text: text, op: strings.TrimSpace(op), rate: 1}
	if r.op != OpGenerate {
		return faultRule{}, fmt.Errorf("unknown fault point %q (known: %s)", r.op, OpGenerate)
	}
	parts := strings.Split(rest, ":")
	switch strings.TrimSpace(parts[0]) {
	case "transient":
		r.transient = true
	case "permanent":
	case "delay":
		if len(parts) != 2 {
			return faultRule{}, fmt.Errorf("delay needs ms=N")
		}
		k, v, _ := strings.Cut(strings.TrimSpace(parts[1]), "=")
		ms, err := strconv.Atoi(v)
		if k != "ms" || err != nil || ms < 1 || ms > 600000 {
			return faultRule{}, fmt.Errorf("delay: want ms=N with N from 1 to 600000")
		}
		r.delay = time.Duration(ms) * time.Millisecond
		return r, nil
	default:
		return faultRule{}, fmt.Errorf("unknown fault kind %q", parts[0])
	}
	if len(parts) > 2 {
		return faultRule{}, fmt.Errorf("at most one of first=N or rate=P")
	}
	if len(parts) == 2 {
		k, v, ok := strings.Cut(strings.TrimSpace(parts[1]), "=")
		if !ok {
			return faultRule{}, fmt.Errorf("parameter %q is not NAME=VALUE", parts[1])
		}
		switch k {
		case "first":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return faultRule{}, fmt.Errorf("first=%s: want a whole number >= 1", v)
			}
			r.first = n
		case "rate":
			p, err := strconv.ParseFloat(v, 64)
			if err != nil || !(p >= 0 && p <= 1) {
				return faultRule{}, fmt.Errorf("rate=%s: want a number from 0 to 1", v)
			}
			r.rate = p
		default:
			return faultRule{}, fmt.Errorf("unknown parameter %q", k)
		}
	}
	return r, nil
}

// Enabled reports whether any rule is set.
func (f Faults) Enabled() bool { return len(f.rules) > 0 }

// String renders the rules as parsed, for the start-up log.
func (f Faults) String() string {
	parts := make([]string, len(f.rules))
	for i, r := range f.rules {
		parts[i] = r.text
	}
	return strings.Join(parts, ",")
}

// Check returns an injected *Error when a rule fires for this attempt of
// this job at op, else nil.
func (f Faults) Check(op, jobID string, attempt int) error {
	for i, r := range f.rules {
		if r.op != op || r.delay > 0 || !r.fires(i, jobID, attempt) {
			continue
		}
		kind := "permanent"
		e := &Error{Code: CodePermanent, Transient: r.transient}
		if r.transient {
			kind, e.Code = "transient", CodeTransient
		}
		e.Message = fmt.Sprintf("report generation failed (injected %s fault on attempt %d)", kind, attempt)
		return e
	}
	return nil
}

// Delay is the total injected delay for every attempt at op.
func (f Faults) Delay(op string) time.Duration {
	var d time.Duration
	for _, r := range f.rules {
		if r.op == op {
			d += r.delay
		}
	}
	return d
}

func (r faultRule) fires(index int, jobID string, attempt int) bool {
	if r.first > 0 {
		return attempt <= r.first
	}
	if r.rate >= 1 {
		return true
	}
	// SHA-256 rather than a fast hash: job ids differ in few characters
	// and the decision must still be evenly spread.
	sum := sha256.Sum256(fmt.Appendf(nil, "%d\x00%s\x00%d", index, jobID, attempt))
	u := float64(binary.BigEndian.Uint64(sum[:8])>>11) / (1 << 53) // uniform in [0, 1)
	return u < r.rate
}
