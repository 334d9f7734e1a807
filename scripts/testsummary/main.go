// Command testsummary turns `go test -json` on its standard input into
// what `go test` prints without -json or -v, and ends with one line that
// says how many tests skipped and why. scripts/test runs it; it is a
// development tool, not part of locrisk.
//
// It prints, as each package ends: the package's "ok", "FAIL" or "?" line;
// for a failing package, the output of its failing tests (subtests
// indented under their parents), whatever the package printed outside its
// tests, and the output of tests that never ended (a panic, a timeout, an
// os.Exit); build errors as they come; lines that are not JSON unchanged.
// Then "FAIL" if anything failed, and last the summary, for example
//
//	skipped: 3 tests (2 need LOCRISK_TEST_POSTGRES; 1 need openssl)
//
// A skipped test's reason is the first line of its last log entry (the
// t.Skip message) up to the first ": ", so "need qpdf: pdfinfo not
// installed" and "need qpdf: qpdf not installed" count as one reason,
// "need qpdf". Skip messages are written with that in mind.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
)

func main() {
	if err := summarize(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
}

// event is one line of `go test -json` (go doc test2json), the fields used.
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // of build-output events
}

// pkgState is a package between its start and its end.
type pkgState struct {
	// segs is what a failing package prints, in order: its own output
	// lines and the blocks of its failed top-level tests.
	segs []string
	// tests holds the output of each test that has not ended.
	tests map[string]*testState
	order []string // test names in the order they started
}

type testState struct {
	out strings.Builder
	pos int // len(segs) when the test started: where it prints if it never ends
}

type summary struct {
	w        io.Writer
	pkgs     map[string]*pkgState
	started  []string // package names in order of their start
	skips    map[string]int
	failed   bool
	writeErr error
}

func summarize(r io.Reader, w io.Writer) error {
	s := &summary{w: w, pkgs: map[string]*pkgState{}, skips: map[string]int{}}
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			s.line(line)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	// Packages that never ended (go test was killed, say) failed.
	for _, name := range s.started {
		if _, ok := s.pkgs[name]; ok {
			s.endPackage(name, "fail")
		}
	}
	if s.failed {
		s.print("FAIL\n")
	}
	s.print(s.skipLine() + "\n")
	return s.writeErr
}

func (s *summary) print(text string) {
	if s.writeErr == nil && text != "" {
		_, s.writeErr = io.WriteString(s.w, text)
	}
}

func (s *summary) line(raw []byte) {
	var e event
	trimmed := bytes.TrimSpace(raw)
	if !bytes.HasPrefix(trimmed, []byte("{")) || json.Unmarshal(trimmed, &e) != nil || e.Action == "" {
		s.print(string(raw))
		return
	}
	switch e.Action {
	case "build-output":
		s.print(e.Output)
		return
	case "build-fail":
		return
	}
	if e.Package == "" {
		return
	}
	p := s.pkg(e.Package)
	if e.Test == "" {
		switch e.Action {
		case "output":
			p.segs = append(p.segs, e.Output)
		case "pass", "fail", "skip":
			s.endPackage(e.Package, e.Action)
		}
		return
	}
	switch e.Action {
	case "run":
		if _, ok := p.tests[e.Test]; !ok {
			p.tests[e.Test] = &testState{pos: len(p.segs)}
			p.order = append(p.order, e.Test)
		}
	case "output":
		if framing(e.Output) {
			return
		}
		p.test(e.Test).out.WriteString(e.Output)
	case "pass":
		delete(p.tests, e.Test)
	case "skip":
		s.skips[skipReason(p.test(e.Test).out.String())]++
		delete(p.tests, e.Test)
	case "fail":
		block := failBlock(e.Test, p.test(e.Test).out.String())
		delete(p.tests, e.Test)
		if parent := p.parent(e.Test); parent != nil {
			parent.out.WriteString(indent(block))
		} else {
			p.segs = append(p.segs, block)
		}
	}
}

func (s *summary) pkg(name string) *pkgState {
	p, ok := s.pkgs[name]
	if !ok {
		p = &pkgState{tests: map[string]*testState{}}
		s.pkgs[name] = p
		s.started = append(s.started, name)
	}
	return p
}

func (p *pkgState) test(name string) *testState {
	t, ok := p.tests[name]
	if !ok {
		t = &testState{pos: len(p.segs)}
		p.tests[name] = t
		p.order = append(p.order, name)
	}
	return t
}

// parent is the closest enclosing test of a subtest that has not ended, or
// nil for a top-level test.
func (p *pkgState) parent(name string) *testState {
	for i := strings.LastIndexByte(name, '/'); i > 0; i = strings.LastIndexByte(name[:i], '/') {
		if t, ok := p.tests[name[:i]]; ok {
			return t
		}
	}
	return nil
}

// endPackage prints a package as go test would, and forgets it.
func (s *summary) endPackage(name, action string) {
	p := s.pkgs[name]
	delete(s.pkgs, name)
	switch action {
	case "pass":
		// Only the "ok" line, as go test prints a passing package.
		var oks []string
		for _, seg := range p.segs {
			if strings.HasPrefix(seg, "ok ") || strings.HasPrefix(seg, "ok\t") {
				oks = append(oks, seg)
			}
		}
		if len(oks) == 0 {
			oks = p.segs
		}
		s.print(withNewline(strings.Join(oks, "")))
	case "skip": // no test files
		s.print(withNewline(strings.Join(p.segs, "")))
	default:
		s.failed = true
		// Tests that never ended print where they started, in order.
		var out strings.Builder
		for i := 0; i <= len(p.segs); i++ {
			for _, t := range p.order {
				if st, ok := p.tests[t]; ok && st.pos == i {
					out.WriteString(withNewline(st.out.String()))
				}
			}
			if i < len(p.segs) {
				out.WriteString(p.segs[i])
			}
		}
		s.print(withNewline(out.String()))
	}
}

// framing reports whether a test's output line is one of the lines -json
// adds and go test does not print: === RUN, PAUSE, CONT, NAME.
func framing(out string) bool {
	for _, f := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(out, f) {
			return true
		}
	}
	return false
}

// failBlock puts the test's "--- FAIL: name" line first, as go test does
// (-json streams it after the test's output).
func failBlock(name, out string) string {
	lines := strings.SplitAfter(withNewline(out), "\n")
	lines = lines[:len(lines)-1] // the empty string after the last "\n"
	head := "--- FAIL: " + name + " ("
	for i, l := range lines {
		if strings.HasPrefix(l, head) {
			return l + strings.Join(slices.Delete(lines, i, i+1), "")
		}
	}
	return strings.Join(lines, "")
}

// indent shifts a subtest's block under its parent's, by four spaces.
func indent(block string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(block, "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString("    ")
		}
		b.WriteString(l)
	}
	return b.String()
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// logStart matches the first line of a log entry in a test's output,
// "    file_test.go:12: message" (further lines are indented deeper).
var logStart = regexp.MustCompile(`^ {0,4}[\w.+-]+\.go:\d+: ?(.*)$`)

// skipReason is why a test skipped, from its output: the first line of its
// last log entry (the t.Skip message), normalised by reason.
func skipReason(out string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if m := logStart.FindStringSubmatch(lines[i]); m != nil {
			return reason(m[1])
		}
	}
	// No log entry in the usual form: the last line that is not go
	// test's own.
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && !strings.HasPrefix(l, "--- SKIP: ") {
			return reason(l)
		}
	}
	return reason("")
}

// reason normalises a skip message: its first line up to the first ": ",
// with runs of spaces made one and trailing punctuation dropped.
func reason(msg string) string {
	msg, _, _ = strings.Cut(msg, "\n")
	msg, _, _ = strings.Cut(msg, ": ")
	msg = strings.Join(strings.Fields(msg), " ")
	msg = strings.TrimRight(msg, ".,;: ")
	if msg == "" {
		return "no reason given"
	}
	return msg
}

// skipLine is the last line: the skipped tests, by reason, the commonest
// reason first.
func (s *summary) skipLine() string {
	total := 0
	reasons := make([]string, 0, len(s.skips))
	for r, n := range s.skips {
		total += n
		reasons = append(reasons, r)
	}
	if total == 0 {
		return "skipped: no tests"
	}
	slices.SortFunc(reasons, func(a, b string) int {
		return cmp.Or(cmp.Compare(s.skips[b], s.skips[a]), strings.Compare(a, b))
	})
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%d %s", s.skips[r], r)
	}
	noun := "tests"
	if total == 1 {
		noun = "test"
	}
	return fmt.Sprintf("skipped: %d %s (%s)", total, noun, strings.Join(parts, "; "))
}
