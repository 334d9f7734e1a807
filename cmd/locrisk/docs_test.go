package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// apiExamples is the file whose curl examples ("# 1. ...") show every API
// operation; README.md sends newcomers there.
const apiExamples = "../../docs/api-examples.md"

// TestAPIExamplesNumbered: the API examples ("# 1. ...") of
// docs/api-examples.md are numbered as docs/api.md numbers the
// operations, each operation once. They are grouped by topic (a batch
// listing, 18, sits with the batches), so the numbers rise within each
// example block and together are 1 to the last operation with none
// missing.
func TestAPIExamplesNumbered(t *testing.T) {
	b, err := os.ReadFile(apiExamples)
	if err != nil {
		t.Fatal(err)
	}
	var all []int
	for _, block := range regexp.MustCompile("(?s)```sh\n.*?```").FindAllString(string(b), -1) {
		prev := 0
		for _, m := range regexp.MustCompile(`(?m)^# (\d+)\. `).FindAllStringSubmatch(block, -1) {
			n, _ := strconv.Atoi(m[1])
			if n <= prev {
				t.Errorf("%s: example %d follows example %d in one block", apiExamples, n, prev)
			}
			prev = n
			all = append(all, n)
		}
	}
	slices.Sort(all)
	for i, n := range all {
		if n != i+1 {
			t.Fatalf("%s: examples are numbered %v, want 1 to %d each once", apiExamples, all, len(all))
		}
	}
	if len(all) < 20 {
		t.Errorf("%s numbers %d examples, want the 20 operations at least", apiExamples, len(all))
	}
}

// docFiles are the documentation files the tests read: README.md and
// every docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("docs/*.md: %v %v", files, err)
	}
	return append([]string{"../../README.md"}, files...)
}

// TestReadmeCommands: the README gives the run command and the test
// command, and .ci/run runs that test command (uncached).
func TestReadmeCommands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"scripts/demo", "go test -race ./..."} {
		if !strings.Contains(string(readme), "```sh\n"+c+"\n```") {
			t.Errorf("README.md has no sh block holding just %q", c)
		}
	}
	if !regexp.MustCompile(`(?m)^go test -race -count=1 \./\.\.\.$`).Match(ci) {
		t.Errorf(".ci/run does not run the README's test command as go test -race -count=1 ./...")
	}
	if fi, err := os.Stat("../../scripts/demo"); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("scripts/demo is not an executable file (%v)", err)
	}
}

// TestDocLinks: every relative link of the documentation names a file
// that exists and, into a Markdown file, a heading or anchor it has.
func TestDocLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = headingAnchors(string(b))
		return anchors[path]
	}
	for _, doc := range docFiles(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(string(b), "")
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %s: %v", doc, target, err)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[frag] {
				t.Errorf("%s: link %s: %s has no such heading or anchor", doc, target, path)
			}
		}
	}
}

// headingAnchors are the anchors a Markdown file offers: GitHub's ids of
// its headings and its <a id="..."> tags.
func headingAnchors(md string) map[string]bool {
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([^"]+)">`).FindAllStringSubmatch(md, -1) {
		out[m[1]] = true
	}
	md = regexp.MustCompile("(?ms)^```.*?^```").ReplaceAllString(md, "")
	seen := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^#{1,6} (.+)$`).FindAllStringSubmatch(md, -1) {
		h := regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(m[1], "$1") // a link counts as its text
		h = strings.ToLower(h)
		var id strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				id.WriteRune('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
				id.WriteRune(r)
			}
		}
		s := id.String()
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}
