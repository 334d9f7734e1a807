package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	fixture := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct {
		name, in, want string
	}{
		{
			// testdata/run.json: a build failure, a failing package (a
			// failing subtest under its parent, a passing subtest's log
			// hidden, a parallel test skipped without a reason), a package
			// with no test files, a passing package with three skips (a
			// two-line message after a log line, two variants of one
			// reason), a test that exits the binary, a line not JSON.
			name: "whole run",
			in:   fixture("run.json"),
			want: fixture("run.txt"),
		},
		{
			name: "nothing",
			in:   "",
			want: "skipped: no tests\n",
		},
		{
			name: "one skip",
			in: `{"Action":"start","Package":"m/a"}
{"Action":"run","Package":"m/a","Test":"TestX"}
{"Action":"output","Package":"m/a","Test":"TestX","Output":"    a_test.go:3: need openssl\n"}
{"Action":"output","Package":"m/a","Test":"TestX","Output":"--- SKIP: TestX (0.00s)\n"}
{"Action":"skip","Package":"m/a","Test":"TestX"}
{"Action":"output","Package":"m/a","Output":"ok  \tm/a\t(cached)\n"}
{"Action":"pass","Package":"m/a"}
`,
			want: "ok  \tm/a\t(cached)\nskipped: 1 test (1 need openssl)\n",
		},
		{
			// go test killed mid-package: what the package printed so far,
			// its unfinished tests included, then FAIL.
			name: "cut short",
			in: `{"Action":"start","Package":"m/a"}
{"Action":"run","Package":"m/a","Test":"TestHang"}
{"Action":"output","Package":"m/a","Test":"TestHang","Output":"    a_test.go:5: started\n"}
{"Action":"run","Package":"m/a","Test":"TestHang/inner"}
{"Action":"output","Package":"m/a","Test":"TestHang/inner","Output":"panic: test timed out after 2s\n"}
{"Action":"output","Package":"m/a","Test":"TestHang/inner","Output":"\trunning tests:\n"}
`,
			want: "    a_test.go:5: started\npanic: test timed out after 2s\n\trunning tests:\nFAIL\nskipped: no tests\n",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out strings.Builder
			if err := summarize(strings.NewReader(c.in), &out); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestSkipReason(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"    x_test.go:9: need LOCRISK_LOAD=1: the scale measurement\n--- SKIP: TestScale (0.00s)\n", "need LOCRISK_LOAD=1"},
		{"    x_test.go:9: need   LOCRISK_LOAD=1.\n", "need LOCRISK_LOAD=1"},
		{"    x_test.go:9: first\n    x_test.go:10: in -short mode\n        more\n", "in -short mode"},
		{"    x_test.go:9: \n--- SKIP: TestX (0.00s)\n", "no reason given"},
		{"--- SKIP: TestX (0.00s)\n", "no reason given"},
		{"", "no reason given"},
		{"printed, not logged\n--- SKIP: TestX (0.00s)\n", "printed, not logged"},
		// A continuation line that quotes a file:line is not a new entry.
		{"    x_test.go:9: need the mirror: stat failed\n        y.go:3: detail\n", "need the mirror"},
	} {
		if got := skipReason(c.out); got != c.want {
			t.Errorf("skipReason(%q) = %q, want %q", c.out, got, c.want)
		}
	}
}
